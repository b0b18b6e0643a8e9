"""Lowering of blocks and control flow: ``scf.for``, ``scf.if``, ``scf.yield``, ``arith``.

Only scalars stay SSA values through pto control flow: a loop-carried or
branch-produced *tile* is a buffer. A tile ``iter_arg`` reuses its init's tile
when both have the same MemRef (else a tile is allocated before the loop and
the init copied in with ``pto.tmov``); a yielded tile in a different buffer is
copied back with ``pto.tmov`` before ``scf.yield``; the loop's tile result is
that buffer. Tile results of ``scf.if`` get a tile allocated before the ``if``
which each branch fills (``pto.tmov`` unless the yielded tile already lives
there). Tensors (views) are carried the same way without any copy.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Block, Operation, Region, SSAValue

from pypto.diagnostics import error_at
from pypto.dialects.op_facts import defined_inside
from pypto.dialects.types import TensorType, TileType
from pypto.ptoas.dialect.tile_ops import AllocTileOp

from .state import LoweringState, TileRef, mem_key
from .tile_ops import HANDLERS, Handler
from .types import is_scalar


def lower_block(st: LoweringState, block: Block, into: Block) -> list[SSAValue] | None:
    """Lower the ops of a pl block into ``into``; returns the mapped scalar yields (None: no yield)."""
    saved, st.block = st.block, into
    try:
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                return list(op.operands)
            lower_op(st, op)
        return None
    finally:
        st.block = saved


def _comm_handler(op: Operation) -> Handler | None:
    """The handler of a pld (cross-rank) op: :mod:`.comm_ops` is imported with the first one (it
    builds the pto.comm op classes, which a single-chip kernel never uses)."""
    from .comm_ops import COMM_HANDLERS

    return COMM_HANDLERS.get(type(op))


def lower_op(st: LoweringState, op: Operation) -> None:
    """Dispatch one pl op."""
    handler = HANDLERS.get(type(op)) or (_comm_handler(op) if op.name.startswith("pld.") else None)
    if handler is not None:
        handler(st, op)
    elif isinstance(op, arith.ConstantOp):
        if is_scalar(op.result.type):
            st.scalar(op.result, op)
    elif isinstance(op, scf.ForOp):
        lower_for(st, op)
    elif isinstance(op, scf.IfOp):
        lower_if(st, op)
    elif op.dialect_name() == "arith":
        _clone_scalar_op(st, op)
    elif op.name == "func.return":
        return
    else:
        raise error_at(op, f"ptoas codegen: '{op.name}' has no pto lowering")


def _clone_scalar_op(st: LoweringState, op: Operation) -> None:
    """An ``arith`` op on scalars, cloned with mapped operands."""
    mapping = {v: st.scalar(v, op) for v in op.operands}
    new = op.clone(value_mapper=mapping)
    loc = st.loc_of(op)
    new.location = loc if loc is not None else UnknownLoc()  # type: ignore[assignment]
    assert st.block is not None
    st.block.add_op(new)
    for old, res in zip(op.results, new.results, strict=True):
        st.scalars[old] = res


def _carry(st: LoweringState, at: Operation, inits: Sequence[SSAValue], args: Sequence[SSAValue]) -> list[int]:
    """Map non-scalar loop-carried values; returns the indices of the scalar ones."""
    scalar_idx: list[int] = []
    for i, (init, arg) in enumerate(zip(inits, args, strict=True)):
        t = arg.type
        if is_scalar(t):
            scalar_idx.append(i)
        elif isinstance(t, TensorType):
            st.views[arg] = st.view(init, at)
        elif isinstance(t, TileType):
            ref = st.tile(init, at)
            key = mem_key(t)
            if key is not None and ref.key is not None and key != ref.key:
                buf = st.alloc(t, (ref.valid_row, ref.valid_col), at, arg.name_hint)
                st.move(ref, buf, at)
                ref = buf
            st.tiles[arg] = ref
        else:
            raise error_at(at, f"ptoas codegen: cannot carry a value of type {t} through '{at.name}'")
    return scalar_idx


def _yield_tiles(st: LoweringState, at: Operation, yielded: Sequence[SSAValue], targets: Sequence[TileRef | None]) -> None:
    """Copy yielded tiles into their loop / branch buffers where they differ."""
    for v, target in zip(yielded, targets, strict=True):
        if target is None:
            continue
        ref = st.tile(v, at)
        if not ref.same_buffer(target):
            st.move(ref, target, at)


def lower_for(st: LoweringState, op: scf.ForOp) -> None:
    """``scf.for`` with only scalar iter_args; tiles/tensors carried as buffers."""
    body = op.body.block
    iv, args = body.args[0], body.args[1:]
    inits = list(op.iter_args)
    scalar_idx = _carry(st, op, inits, args)
    new_body = Block(arg_types=[iv.type, *(args[i].type for i in scalar_idx)])
    new_body.args[0].name_hint = iv.name_hint
    st.scalars[iv] = new_body.args[0]
    for j, i in enumerate(scalar_idx):
        new_body.args[j + 1].name_hint = args[i].name_hint
        st.scalars[args[i]] = new_body.args[j + 1]
    lb, ub, step = (st.scalar(v, op) for v in (op.lb, op.ub, op.step))
    new = scf.ForOp(lb, ub, step, [st.scalar(inits[i], op) for i in scalar_idx], Region(new_body))
    yielded = lower_block(st, body, new_body) or []
    targets = [st.tiles.get(a) if isinstance(a.type, TileType) else None for a in args]
    saved, st.block = st.block, new_body
    _yield_tiles(st, op, yielded, targets)
    st.emit(scf.YieldOp(*(st.scalar(yielded[i], op) for i in scalar_idx)), None)
    st.block = saved
    st.emit(new, op)
    for j, i in enumerate(scalar_idx):
        st.scalars[op.results[i]] = new.results[j]
    for i, (res, arg) in enumerate(zip(op.results, args, strict=True)):
        if i in scalar_idx:
            continue
        if isinstance(res.type, TileType):
            st.tiles[res] = st.tiles[arg]
        else:
            st.views[res] = st.views[arg]


def lower_if(st: LoweringState, op: scf.IfOp) -> None:
    """``scf.if`` with only scalar results; tile results land in a tile allocated before it."""
    results = list(op.results)
    scalar_idx = [i for i, r in enumerate(results) if is_scalar(r.type)]
    targets: list[TileRef | None] = []
    for r in results:
        targets.append(st.alloc(r.type, None, op, r.name_hint) if isinstance(r.type, TileType) else None)
    branches: list[Region] = []
    yielded_refs: list[list[TileRef]] = []  # per branch, the tile each result takes
    for region in (op.true_region, op.false_region):
        if not region.blocks:
            if scalar_idx or any(t is not None for t in targets):
                raise error_at(op, "ptoas codegen: an 'scf.if' with results needs an else branch")
            branches.append(Region())
            continue
        new_block = Block()
        yielded = lower_block(st, region.block, new_block) or []
        saved, st.block = st.block, new_block
        yielded_refs.append([st.tile(v, op) for v, t in zip(yielded, targets, strict=True) if t is not None])
        _yield_tiles(st, op, yielded, targets)
        for i, r in enumerate(results):
            if isinstance(r.type, TensorType) and region is op.true_region:
                st.views[r] = st.view(yielded[i], op)
        st.emit(scf.YieldOp(*(st.scalar(yielded[i], op) for i in scalar_idx)), None)
        st.block = saved
        branches.append(Region(new_block))
    new = scf.IfOp(st.scalar(op.cond, op), [results[i].type for i in scalar_idx], branches[0], branches[1])
    st.emit(new, op)
    for j, i in enumerate(scalar_idx):
        st.scalars[results[i]] = new.results[j]
    tiles = [(r, t) for r, t in zip(results, targets, strict=True) if t is not None]
    for k, (r, t) in enumerate(tiles):
        st.tiles[r] = _branch_valid(op, t, [refs[k] for refs in yielded_refs], new)


def _branch_valid(op: scf.IfOp, target: TileRef, refs: list[TileRef], new_if: scf.IfOp) -> TileRef:
    """The if result's tile ``target`` (allocated before the if, valid everywhere) with the valid shape both
    branches yield (``refs``): the same index values, defined before the if, become its alloc's valid dims. A
    valid shape the branches do not share, or compute inside themselves (``new_if``: the lowered if), is a located
    error: the result's valid region would be neither (the device keeps one tile_buf per result)."""
    first = refs[0]
    same = all(r.valid_row is first.valid_row and r.valid_col is first.valid_col for r in refs)
    if same and first.valid_row is target.valid_row and first.valid_col is target.valid_col:
        return target
    inside = any(defined_inside(v, new_if) for v in (first.valid_row, first.valid_col))
    if not same or inside:
        raise error_at(
            op,
            "ptoas codegen: the branches of this if yield tiles whose valid shapes differ or are computed inside "
            "a branch; its result is one tile with one valid shape: give both branches the same valid shape, "
            "computed before the if (or pl.tile.fillpad the tiles so they are valid everywhere)",
        )
    alloc = target.value.owner
    assert isinstance(alloc, AllocTileOp) and alloc.valid_row is not None and alloc.valid_col is not None
    operands = list(alloc.operands)
    operands[operands.index(alloc.valid_row)] = first.valid_row
    operands[len(operands) - 1] = first.valid_col  # valid_col is the last operand (the assembly format)
    alloc.operands = operands
    return TileRef(target.value, first.valid_row, first.valid_col, target.key)
