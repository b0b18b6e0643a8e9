"""PyPTO on xDSL.

Top-level names (pl-dsl.md §6): the error classes :class:`Error`,
:class:`InternalError`, :class:`PartialCodegenError`, and the log level
(:class:`LogLevel`, :func:`set_log_level`, :func:`get_log_level`).
"""

from __future__ import annotations

import os

from .errors import Error, InternalError
from .log import LogLevel, get_log_level, set_log_level


class PartialCodegenError(RuntimeError):
    """Codegen failed part way; ``files`` (path -> text) were written before
    the error was re-raised."""

    def __init__(self, message: str, files: dict[str, str] | None = None):
        super().__init__(message)
        self.files: dict[str, str] = dict(files or {})

    def write(self, root: str | os.PathLike[str]) -> None:
        """Write :attr:`files` under ``root`` (atomically, creating folders)."""
        from .utils.atomic import atomic_write_text

        for rel, text in sorted(self.files.items()):
            path = os.path.join(os.fspath(root), rel)
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            atomic_write_text(path, text)


__all__ = ["Error", "InternalError", "LogLevel", "PartialCodegenError", "get_log_level", "set_log_level"]
