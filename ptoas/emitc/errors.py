"""The error the C++ emitter raises."""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation


class EmitError(Exception):
    """A module the emitter cannot turn into C++ (unsupported op or type, over-full buffer, ...).

    ``op`` is the offending operation when there is one; ``location`` its ``loc(...)``.
    """

    def __init__(self, message: str, op: Operation | None = None) -> None:
        super().__init__(f"'{op.name}' op {message}" if op is not None else message)
        self.message = message
        self.op = op

    @property
    def location(self) -> FileLineColLoc | None:
        """The op's source location, if it carries one."""
        loc = getattr(self.op, "location", None)
        return loc if isinstance(loc, FileLineColLoc) else None
