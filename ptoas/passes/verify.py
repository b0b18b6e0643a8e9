"""``verify``: the op verifiers and ptoas's module rules, as a pipeline step.

Raises :class:`pypto.ptoas.pto_text.PTOVerifyError` (message names the op
and operand; located through the op's ``loc`` or the source map).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pypto.ptoas.pto_text import verify_pto


@dataclass(frozen=True)
class VerifyPass(ModulePass):
    """``verify``: :func:`pypto.ptoas.pto_text.verify_pto`."""

    name = "verify"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Verify the module."""
        verify_pto(op)
