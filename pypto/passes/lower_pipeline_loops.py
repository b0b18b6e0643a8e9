"""LowerPipelineLoops: ``pl.pipeline(..., stage=N)`` loops become N-way replicated
loops with a tail.

As upstream PyPTO's pass 29: a ``scf.for`` marked ``pl.for_kind = Pipeline``,
``pl.stage = N`` (N > 1) becomes

- a main loop stepping ``N * step`` whose body is N clones of the original
  body, clone ``k`` seeing the induction variable ``i + k * step`` and the
  values the previous clone yielded (loop carries thread through the clones);
  each clone defines its own tiles, so the stages get distinct buffers and can
  overlap (CanonicalizeIOOrder then hoists the clones' loads together);
- a tail for the trip count not divisible by N: with static bounds, the
  remaining iterations as straight-line clones after the loop; with dynamic
  bounds, a sequential loop over the remaining iterations.

The main loop keeps ``Pipeline`` with ``stage=1`` as the marker
CanonicalizeIOOrder scopes its reordering to (it demotes the loop to
Sequential). Iterations run in the original order, so results are unchanged.

Capacity: at most MAX_STAGE copies (each stage is a copy of the body, so a deeper
pipeline only lengthens the kernel and its compile: stage=2000 took 15 s to compile,
stage=10**6 did not finish); a deeper one is lowered to MAX_STAGE with perf hint
PH-MR-001. And the N copies of one stage's tiles must fit next to the function's
other tiles. Per memory space, the bytes one stage defines (32-byte aligned,
views excluded) are compared with the bytes left by the tiles defined outside
the loop; when N copies do not fit, the depth is lowered to the largest M that
fits and perf hint PH-MR-001 reports N, M, the bytes per stage, the bytes free
and the lever to pull.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import Rewriter

from pypto.core.analysis.constants import constant_int
from pypto.core.target_caps import align, capacity
from pypto.diagnostics import Severity, emit_at
from pypto.dialects.enums import ForKind, MemorySpace
from pypto.dialects.program import for_kind, for_stage, set_for_kind
from pypto.dialects.tile_ops import TileReshapeOp, TileSliceOp, TileTpushToAicOp, TileTpushToAivOp, TileTransposeViewOp
from pypto.dialects.types import DYNAMIC, TileType

from .base import FunctionPass, index_constant
from .registry import register_pass

CHECK = "PipelineStageCapacity"
"""The check name perf hint PH-MR-001 carries."""

MAX_STAGE = 64
"""The deepest replication (upstream replicates any depth; "typically 2-4"): a body with no tiles is not
bounded by the tiles' capacity, and each stage is one more copy of it."""

_NOT_BUFFERS = (TileReshapeOp, TileTransposeViewOp, TileSliceOp, TileTpushToAivOp, TileTpushToAicOp)
"""Tile-typed results that own no buffer (views, push handles)."""


def tile_bytes(ops: list[Operation]) -> dict[MemorySpace, list[tuple[int, str]]]:
    """Per space, the aligned byte size and name of every tile buffer ``ops`` define."""
    out: dict[MemorySpace, list[tuple[int, str]]] = {}
    for op in ops:
        if isinstance(op, _NOT_BUFFERS):
            continue
        for r in op.results:
            t = r.type
            if isinstance(t, TileType) and DYNAMIC not in t.get_shape():
                out.setdefault(t.memory_space, []).append((align(t.num_bytes()), r.name_hint or op.name))
    return out


@dataclass(frozen=True)
class Depth:
    """The depth a pipeline gets and, when lowered, why."""

    depth: int
    space: MemorySpace | None = None
    per_stage: int = 0
    free: int = 0
    largest: tuple[int, str] | None = None


def choose_depth(loop: scf.ForOp, f: func.FuncOp, asked: int) -> Depth:
    """The deepest replication <= ``asked`` whose tiles fit every space."""
    inside = [o for o in loop.body.walk()]
    inside_ids = {id(o) for o in inside}
    outside = [o for o in f.body.walk() if id(o) not in inside_ids and o is not loop]
    per = tile_bytes(inside)
    used = tile_bytes(outside)
    best = Depth(asked)
    for space, tiles in sorted(per.items(), key=lambda kv: kv[0].value):
        stage = sum(b for b, _ in tiles)
        free = capacity(space) - sum(b for b, _ in used.get(space, []))
        fits = max(free // stage, 1) if stage else asked
        if fits < best.depth:
            best = Depth(fits, space, stage, free, max(tiles))
    return best


_FOLDABLE = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.FloorDivSIOp: lambda a, b: a // b if b else None,
}


def _fold(op: Operation) -> Operation:
    """``op`` itself, or an ``arith.constant`` when it is integer arithmetic on
    constants (as the front end folds ``4 * 16``)."""
    fn = _FOLDABLE.get(type(op))  # type: ignore[call-overload]
    if fn is None:
        return op
    a, b = (constant_int(v) for v in op.operands)
    if a is None or b is None:
        return op
    v = fn(a, b)
    if v is None:
        return op
    c = arith.ConstantOp(IntegerAttr(v, op.results[0].type))  # type: ignore[arg-type]
    c.location = op.location
    c.results[0].name_hint = op.results[0].name_hint
    return c


def _clone_body(
    body: Block, iv: SSAValue, carried: list[SSAValue], before: Operation | None, dest: Block
) -> list[SSAValue]:
    """Clone ``body`` (without its yield) into ``dest`` (before ``before`` or at
    the end) with the induction variable ``iv`` and carried values; returns the
    values the clone yields. Integer arithmetic on constants is folded."""
    mapper: dict[SSAValue, SSAValue] = {body.args[0]: iv}
    mapper.update(zip(body.args[1:], carried, strict=True))
    term = body.last_op
    assert isinstance(term, scf.YieldOp)
    for op in body.ops:
        if op is term:
            break
        new = op.clone(mapper)
        folded = _fold(new)
        if folded is not new:
            mapper[op.results[0]] = folded.results[0]
            new.erase(safe_erase=False)
            new = folded
        if before is None:
            dest.add_op(new)
        else:
            dest.insert_op_before(new, before)
    return [mapper.get(v, v) for v in term.operands]


def _insert(block: Block, before: Operation, op: Operation) -> SSAValue:
    op.location = before.location
    block.insert_op_before(op, before)
    return op.results[0]


def lower_pipeline(loop: scf.ForOp, f: func.FuncOp) -> None:
    """Replicate one pipeline loop (see the module docstring)."""
    asked = for_stage(loop) or 1
    if asked <= 1:
        return
    step = constant_int(loop.step)
    if step is None or step <= 0:
        set_for_kind(loop, ForKind.Pipeline, 1)
        return
    d = choose_depth(loop, f, min(asked, MAX_STAGE))
    n = d.depth
    if d.space is not None:
        assert d.largest is not None
        emit_at(
            loop,
            Severity.REMARK,
            f"pl.pipeline asked for stage={asked} but got stage={n}: one stage holds {d.per_stage} B of "
            f"{d.space.value} tiles and {d.free} B of {d.space.value} are free "
            f"({capacity(d.space)} B capacity); lower stage= to {n}, or shrink the largest per-stage tile "
            f"'{d.largest[1]}' ({d.largest[0]} B in {d.space.value})",
            rule=CHECK,
            code="PH-MR-001",
        )
    elif n < asked:
        emit_at(
            loop,
            Severity.REMARK,
            f"pl.pipeline asked for stage={asked} but got stage={n}: a pipeline is at most {MAX_STAGE} copies "
            f"of its body (one per stage); lower stage= to {n}",
            rule=CHECK,
            code="PH-MR-001",
        )
    if n <= 1:
        set_for_kind(loop, ForKind.Pipeline, 1)
        return
    block = loop.parent_block()
    assert block is not None
    body = loop.body.block
    lb, ub = constant_int(loop.lb), constant_int(loop.ub)
    inits = list(loop.iter_args)

    def main_loop(main_lb: SSAValue, main_ub: SSAValue) -> scf.ForOp:
        new_body = Block(arg_types=[IndexType(), *[a.type for a in body.args[1:]]])
        for new_arg, old in zip(new_body.args, body.args, strict=True):
            new_arg.name_hint = old.name_hint
        carried: list[SSAValue] = list(new_body.args[1:])
        for k in range(n):
            iv: SSAValue = new_body.args[0]
            if k:
                c = index_constant(k * step)
                add = arith.AddiOp(iv, c.result)
                add.location = loop.location
                new_body.add_ops([c, add])
                iv = add.result
            carried = _clone_body(body, iv, carried, None, new_body)
        new_body.add_op(scf.YieldOp(*carried))
        c_step = index_constant(n * step)
        here = loop.parent_block()
        assert here is not None
        here.insert_op_before(c_step, loop)
        main = scf.ForOp(main_lb, main_ub, c_step.result, inits, new_body)
        main.attributes.update(loop.attributes)
        set_for_kind(main, ForKind.Pipeline, 1)
        main.location = loop.location
        for r, old in zip(main.results, loop.results, strict=True):
            r.name_hint = old.name_hint
        here.insert_op_before(main, loop)
        return main

    if lb is not None and ub is not None:
        trips = max((ub - lb + step - 1) // step, 0)
        n_main = trips // n
        results: list[SSAValue] = inits
        if n_main:
            main = main_loop(loop.lb, _insert(block, loop, index_constant(lb + n_main * n * step)))
            results = list(main.results)
        for k in range(trips - n_main * n):
            iv = _insert(block, loop, index_constant(lb + (n_main * n + k) * step))
            results = _clone_body(body, iv, results, loop, block)
        for r, v in zip(loop.results, results, strict=True):
            if v.name_hint is None:
                v.name_hint = r.name_hint
            r.replace_all_uses_with(v)
        Rewriter.erase_op(loop)
        return
    # Dynamic bounds, guarded by ``if ub - lb > 0`` (the loop runs at all):
    # trips = ceil((ub - lb) / step); main loop up to lb + (trips // n) * n * step,
    # then the original loop runs the remaining iterations.
    span: SSAValue = loop.ub if lb == 0 else _insert(block, loop, arith.SubiOp(loop.ub, loop.lb))
    cond = _insert(block, loop, arith.CmpiOp(span, _insert(block, loop, index_constant(0)), "sgt"))
    then_block, else_block = Block(), Block()
    guard = scf.IfOp(cond, [r.type for r in loop.results], [then_block], [else_block])
    guard.location = loop.location
    block.insert_op_before(guard, loop)
    loop.detach()
    then_block.add_op(loop)
    yielded = scf.YieldOp(*loop.results)
    then_block.add_op(yielded)
    else_block.add_op(scf.YieldOp(*inits))
    for r in loop.results:
        r.replace_uses_with_if(guard.results[r.index], lambda use: use.operation is not yielded)
    for gr, r in zip(guard.results, loop.results, strict=True):
        gr.name_hint = r.name_hint

    def const(v: int) -> SSAValue:
        return _insert(then_block, loop, index_constant(v))

    trips = span
    if step != 1:
        bumped = _insert(then_block, loop, arith.AddiOp(span, const(step - 1)))
        trips = _insert(then_block, loop, arith.FloorDivSIOp(bumped, const(step)))
    whole = _insert(then_block, loop, arith.FloorDivSIOp(trips, const(n)))
    main_span = _insert(then_block, loop, arith.MuliOp(whole, const(n * step)))
    main_ub = main_span if lb == 0 else _insert(then_block, loop, arith.AddiOp(loop.lb, main_span))
    main = main_loop(loop.lb, main_ub)
    loop.operands[0] = main_ub
    for i, r in enumerate(main.results):
        loop.operands[3 + i] = r
    set_for_kind(loop, ForKind.Sequential)


@register_pass
@dataclass(frozen=True)
class LowerPipelineLoops(FunctionPass):
    """``pl.pipeline(stage=N)`` -> N-way replicated loop + tail (PH-MR-001 when N does not fit)."""

    DIAGNOSTICS = {CHECK: "PH-MR-001"}

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        # Innermost first: walk() is pre-order, so reverse it.
        loops = [o for o in f.body.walk() if isinstance(o, scf.ForOp) and for_kind(o) is ForKind.Pipeline]
        for loop in reversed(loops):
            lower_pipeline(loop, f)
