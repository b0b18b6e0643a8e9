"""Read the facts a ``pl`` op class states (:class:`~pypto.dialects.op_base.PLOp`) from any op.

Passes walk ops of several dialects (``arith``, ``scf``, ``func``, ``pl``); these
accessors answer "no fact" for ops that are not ``pl`` ops.
"""

from __future__ import annotations

import threading

from xdsl.dialects import scf
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from .op_base import PLOp
from .op_families import constant_index
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
    defines it states it (:meth:`~pypto.dialects.op_base.PLOp.result_valid_shape`); a tile carried through an
    ``scf.for`` (its block argument, its result) has its initial value's when the body keeps it, an ``scf.if``
    result the one both branches yield (computed before the ``if``). None when that is not known here (an op
    that states no rule)."""
    if not isinstance(value.type, TileType):
        return None
    assumed = _assumed()
    if value in assumed:
        return assumed[value]
    owner = value.owner
    if isinstance(value, BlockArgument) and isinstance(loop := value.block.parent_op(), scf.ForOp) and value.index > 0:
        return _carried_valid_shape(loop, value.index - 1)
    if isinstance(value, OpResult) and isinstance(owner, scf.ForOp):
        return _carried_valid_shape(owner, value.index)
    if isinstance(value, OpResult) and isinstance(owner, scf.IfOp):
        return _branch_valid_shape(owner, value.index)
    if not isinstance(owner, PLOp):
        return None
    return owner.result_valid_shape()


_LOCAL = threading.local()


def _assumed() -> dict[SSAValue, list[SSAValue | int] | None]:
    """The valid shapes assumed of loop block arguments while their loop's yield is followed (an induction), per
    thread: two compiles in two threads follow their own loops."""
    if not hasattr(_LOCAL, "assumed"):
        _LOCAL.assumed = {}
    return _LOCAL.assumed


def _carried_valid_shape(loop: scf.ForOp, i: int) -> list[SSAValue | int] | None:
    """The valid shape of the tile ``loop`` carries as its ``i``-th iter_arg: the initial value's, when the value
    the body yields has it too given that the block argument has it (the device's loop keeps the tile's buffer
    and its valid shape: ptoas ``lower_for``), else None."""
    arg = loop.body.block.args[i + 1]
    start = valid_shape(loop.iter_args[i])
    term = loop.body.block.last_op
    if start is None or not isinstance(term, scf.YieldOp) or len(term.operands) <= i:
        return None
    assumed = _assumed()
    assumed[arg] = start
    try:
        after = valid_shape(term.operands[i])
    finally:
        del assumed[arg]
    return start if after is not None and same_valid_shape(start, after) else None


def _branch_valid_shape(op: scf.IfOp, i: int) -> list[SSAValue | int] | None:
    """The valid shape of ``op``'s ``i``-th result: the one both branches yield, when its extents are computed
    before the ``if`` (ptoas ``lower_if`` gives the result's tile_buf those dims), else None."""
    shapes = []
    for region in (op.true_region, op.false_region):
        term = region.block.last_op if region.blocks else None
        if not isinstance(term, scf.YieldOp) or len(term.operands) <= i:
            return None
        shapes.append(valid_shape(term.operands[i]))
    first = shapes[0]
    if first is None or any(v is None or not same_valid_shape(first, v) for v in shapes[1:]):
        return None
    folded = [static_extent(v) for v in first]
    if any(isinstance(v, SSAValue) and defined_inside(v, op) for v in folded):
        return None
    return folded


def defined_inside(value: SSAValue, op: Operation) -> bool:
    """``value`` is defined inside ``op``'s regions (an op's result there, or a block argument of a block there)."""
    owner = value.owner
    defining = owner if isinstance(owner, Operation) else owner.parent_op()
    return defining is not None and defining is not op and op.is_ancestor(defining)


def static_extent(v: SSAValue | int) -> SSAValue | int:
    """A valid-shape extent with an integer ``arith.constant`` folded to its value."""
    if isinstance(v, int):
        return v
    c = constant_index(v)
    return v if c is None else c


def same_valid_shape(x: list[SSAValue | int], y: list[SSAValue | int]) -> bool:
    """``x`` and ``y`` are the same valid shape: per dim the same value or equal constants."""

    def same(a: SSAValue | int, b: SSAValue | int) -> bool:
        return a == b if isinstance(a, int) and isinstance(b, int) else a is b

    return len(x) == len(y) and all(same(static_extent(a), static_extent(b)) for a, b in zip(x, y, strict=True))
