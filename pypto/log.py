"""PyPTO's log level (pl-dsl.md §6): ``pypto.set_log_level(pypto.LogLevel.X)``.

The level starts from the environment variable ``PYPTO_LOG_LEVEL`` (a name such
as ``debug``/``WARN`` or a number; default ``info``) and is mirrored onto the
standard :mod:`logging` logger ``"pypto"``, which PyPTO's modules log through.
"""

from __future__ import annotations

import logging
import os
from enum import IntEnum


class LogLevel(IntEnum):
    """Upstream's levels, lowest first; ``NONE`` silences everything."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


_TO_LOGGING: dict[LogLevel, int] = {
    LogLevel.DEBUG: logging.DEBUG,
    LogLevel.INFO: logging.INFO,
    LogLevel.WARN: logging.WARNING,
    LogLevel.ERROR: logging.ERROR,
    LogLevel.FATAL: logging.CRITICAL,
    LogLevel.EVENT: logging.CRITICAL + 5,
    LogLevel.NONE: logging.CRITICAL + 10,
}

ENV_VAR = "PYPTO_LOG_LEVEL"
logger = logging.getLogger("pypto")


def parse_level(text: str | int | LogLevel) -> LogLevel:
    """``"warn"``, ``"WARNING"``, ``"2"``, ``2`` or a LogLevel -> LogLevel."""
    if isinstance(text, LogLevel):
        return text
    if isinstance(text, int) or str(text).strip().isdigit():
        return LogLevel(int(text))
    name = str(text).strip().upper()
    name = {"WARNING": "WARN", "CRITICAL": "FATAL", "OFF": "NONE"}.get(name, name)
    try:
        return LogLevel[name]
    except KeyError:
        raise ValueError(f"unknown log level {text!r}; expected one of {', '.join(LogLevel.__members__)}") from None


def _initial_level() -> LogLevel:
    try:
        return parse_level(os.environ.get(ENV_VAR, "info"))
    except ValueError:
        return LogLevel.INFO


_level: LogLevel = _initial_level()
logger.setLevel(_TO_LOGGING[_level])


def set_log_level(level: LogLevel | int | str) -> None:
    """Set PyPTO's log level (also the ``pypto`` logging logger's level)."""
    global _level
    _level = parse_level(level)
    logger.setLevel(_TO_LOGGING[_level])


def get_log_level() -> LogLevel:
    """The current log level."""
    return _level


def enabled(level: LogLevel) -> bool:
    """Whether messages at ``level`` are shown."""
    return _level is not LogLevel.NONE and level >= _level
