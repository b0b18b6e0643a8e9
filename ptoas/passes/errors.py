"""Pass failures as :class:`~pypto.ptoas.pto_text.PTOVerifyError` (they carry the failing op)."""

from __future__ import annotations

from xdsl.ir import Operation

from pypto.ptoas.pto_text import PTOVerifyError


def pass_error(op: Operation, message: str) -> PTOVerifyError:
    """An error located at ``op`` (its ``loc``, or where the CLI parsed it)."""
    return PTOVerifyError(message, op)
