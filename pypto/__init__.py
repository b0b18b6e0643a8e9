"""PyPTO on xDSL.

Top-level names (pl-dsl.md §6): the error classes :class:`Error`,
:class:`InternalError`, :class:`PartialCodegenError`, and the log level
(:class:`LogLevel`, :func:`set_log_level`, :func:`get_log_level`).
"""

from __future__ import annotations

from .errors import Error, InternalError, PartialCodegenError
from .log import LogLevel, get_log_level, set_log_level

__all__ = ["Error", "InternalError", "LogLevel", "PartialCodegenError", "get_log_level", "set_log_level"]
