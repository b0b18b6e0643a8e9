"""Read the facts a ``pl`` op class states (:class:`~pypto.dialects.op_base.PLOp`) from any op.

Passes walk ops of several dialects (``arith``, ``scf``, ``func``, ``pl``); these
accessors answer "no fact" for ops that are not ``pl`` ops.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from .op_base import PLOp
from .types import TileType


def alias_operand(op: Operation) -> str | None:
    """The operand field whose buffer ``op``'s result shares (a view or an in-place write), or None."""
    return op.ALIAS_OPERAND if isinstance(op, PLOp) else None


def written_operands(op: Operation) -> tuple[str, ...]:
    """The operand fields ``op`` writes in place: its non-view :func:`alias_operand` and its ``ALSO_WRITES``."""
    if not isinstance(op, PLOp):
        return ()
    alias = () if op.ALIAS_OPERAND is None or op.IS_VIEW else (op.ALIAS_OPERAND,)
    return alias + op.ALSO_WRITES


def is_view(op: Operation) -> bool:
    """``op``'s result is a zero-copy view of its :func:`alias_operand`."""
    return isinstance(op, PLOp) and op.IS_VIEW


def forbidden_inplace_operands(op: Operation) -> list[SSAValue]:
    """The operands ``op``'s result must not share a buffer with."""
    return op.forbidden_inplace_operands() if isinstance(op, PLOp) else []


def needs_row_major(op: Operation) -> bool:
    """The backend needs ``op``'s tile operands and result row_major."""
    return isinstance(op, PLOp) and op.ROW_MAJOR


def valid_shape(value: SSAValue) -> list[SSAValue | int] | None:
    """The valid shape of the tile ``value``, per dim a run-time index value or a static extent, as the op that
    defines it states it (:meth:`~pypto.dialects.op_base.PLOp.result_valid_shape`); None when that is not
    known here (a block argument, an op that states no rule)."""
    owner = value.owner
    if not isinstance(value.type, TileType) or not isinstance(owner, PLOp):
        return None
    return owner.result_valid_shape()
