"""Semantic aliases: which values the program's semantics require to be one
buffer, and making them one allocation.

- In-place results share their source's buffer (the op class's ``ALIAS_OPERAND``,
  :func:`pypto.dialects.op_facts.alias_operand`): ``matmul_acc`` writes its ``acc``,
  ``store`` returns its ``output`` tensor, ``assemble`` writes its ``target``; views
  (``IS_VIEW``, ``reshape``) share their input's.
- Loop carries: an ``scf.for``'s init, iter_arg, yielded value and result are
  one buffer. When the yielded value was computed into a buffer of its own,
  :func:`materialize_aliases` retargets that buffer onto the carried one if
  that is safe (the iter_arg is not read after the yielded value is written
  and the producing op may write over its input, see :func:`forbidden_inputs`);
  otherwise it copies the value into the carried buffer with a
  ``pl.tile.move`` just before the ``yield`` (upstream's yield fixup).
- ``scf.if`` results: both arms yield into the then-arm's buffer (same rule).

Used by InitMemRef and MaterializeSemanticAliases (which apply the aliases)
and MemoryReuse (which must not break them).
"""

from __future__ import annotations

from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from pypto.dialects.enums import MemorySpaceAttr
from pypto.dialects.op_facts import alias_operand, forbidden_inplace_operands
from pypto.dialects.tile_ops import TileMoveOp
from pypto.dialects.types import TileType

from .memref import memref_of, remove_unused_allocs, rename_bases, set_type, sync_signature, yield_of


def forbidden_inputs(op: Operation) -> list[SSAValue]:
    """The operands ``op``'s result must not share a buffer with (the op class's in-place facts)."""
    return forbidden_inplace_operands(op)


def _top_ancestor_in(op: Operation, block: Block) -> Operation | None:
    """The op of ``block`` that is or contains ``op``."""
    cur: Operation | None = op
    while cur is not None and cur.parent_block() is not block:
        cur = cur.parent_op()
    return cur


def _retarget_is_safe(carried: SSAValue, y: SSAValue, block: Block) -> bool:
    """Whether ``y`` (yielded from ``block``) may be computed straight into the
    carried value's buffer: ``y`` is produced in ``block``, the carried value
    is not read after that, and the producer may write over it."""
    d = y.owner
    if not isinstance(d, Operation) or d.parent_block() is not block:
        return False
    if any(v is carried for v in forbidden_inputs(d)):
        return False
    order = {id(o): i for i, o in enumerate(block.ops)}
    d_pos = order[id(d)]
    for use in carried.uses:
        top = _top_ancestor_in(use.operation, block)
        if top is None:
            continue
        if isinstance(top, scf.YieldOp):
            continue
        if order.get(id(top), -1) > d_pos:
            return False
    return True


def _copy_into(y: SSAValue, target_type: TileType, before: Operation) -> SSAValue:
    """``pl.tile.move(y)`` typed ``target_type``, inserted before ``before``."""
    move = TileMoveOp.build_from_args({"tile": y}, {"target_memory": MemorySpaceAttr(target_type.memory_space)})
    set_type(move.results[0], target_type)
    move.results[0].name_hint = y.name_hint
    move.location = before.location
    Rewriter.insert_op(move, InsertPoint.before(before))
    return move.results[0]


def _unify(f: func.FuncOp, carried: SSAValue | None, target: SSAValue, y: SSAValue, block: Block, yop: Operation, i: int) -> None:
    """Make yield operand ``i`` (``y``) of ``yop`` live in ``target``'s buffer."""
    tm, ym = memref_of(target.type), memref_of(y.type)
    if tm is None or ym is None or tm == ym:
        return
    safe = carried is None or _retarget_is_safe(carried, y, block)
    owner = y.owner
    defined_here = isinstance(owner, Operation) and owner.parent_block() is block
    if not isinstance(y.type, TileType) or (safe and defined_here and ym.base != tm.base):
        rename_bases(f, {ym.base.data: tm.base.data})
        if memref_of(y.type) != tm:  # same base, other offset/size: set it
            set_type(y, target.type)
        return
    assert isinstance(target.type, TileType)
    yop.operands[i] = _copy_into(y, target.type, yop)


def _materialize_op(f: func.FuncOp, op: Operation) -> None:
    for region in op.regions:
        for block in region.blocks:
            for inner in list(block.ops):
                _materialize_op(f, inner)
    field = alias_operand(op)
    if field is not None and op.results:
        src = getattr(op, field, None)
        r = op.results[0]
        sm, rm = memref_of(src.type) if src is not None else None, memref_of(r.type)
        if sm is not None and rm is not None and sm.base != rm.base:
            rename_bases(f, {rm.base.data: sm.base.data})
    if isinstance(op, scf.ForOp):
        body = op.body.block
        y = yield_of(body)
        for i, (arg, res) in enumerate(zip(body.args[1:], op.results, strict=False)):
            if y is not None and i < len(y.operands):
                _unify(f, arg, arg, y.operands[i], body, y, i)
            if memref_of(arg.type) is not None and res.type != arg.type:
                set_type(res, arg.type)
    elif isinstance(op, scf.IfOp) and op.results:
        blocks = [b for region in op.regions for b in region.blocks]
        ys = [(b, yield_of(b)) for b in blocks]
        for i, res in enumerate(op.results):
            arms = [(b, y) for b, y in ys if y is not None and i < len(y.operands)]
            if not arms:
                continue
            target = arms[0][1].operands[i]
            for b, y in arms[1:]:
                _unify(f, None, target, y.operands[i], b, y, i)
            if memref_of(target.type) is not None and res.type != target.type:
                set_type(res, target.type)


def materialize_aliases(f: func.FuncOp) -> None:
    """Apply the semantic aliases to one function (see module docstring)."""
    entry = f.body.blocks.first
    if entry is None:
        return
    for op in list(entry.ops):
        _materialize_op(f, op)
    remove_unused_allocs(f)
    sync_signature(f)
