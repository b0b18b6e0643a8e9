"""PyPTO on xDSL.

Top-level names (pl-dsl.md §6): the error classes :class:`Error`,
:class:`InternalError`, :class:`PartialCodegenError`, and the log level
(:class:`LogLevel`, :func:`set_log_level`, :func:`get_log_level`).
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import Error, InternalError, PartialCodegenError
from .log import LogLevel, get_log_level, set_log_level
from .utils.gc_policy import collect_then_freeze_at_exit

collect_then_freeze_at_exit()  # a process's exit skips the full collections of everything alive (gc_policy)

_SUBMODULES = ("backend", "debug", "ir", "language", "runtime")


def __getattr__(name: str) -> Any:
    """``import pypto`` then ``pypto.ir`` / ``pypto.language`` ...: the facades load on first use (as upstream)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Error", "InternalError", "LogLevel", "PartialCodegenError", "get_log_level", "set_log_level"]
