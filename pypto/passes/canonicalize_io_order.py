"""CanonicalizeIOOrder: inside lowered pipeline loops, loads first, stores last.

As upstream PyPTO's pass 30: the body of every loop still marked
``pl.for_kind = Pipeline`` (LowerPipelineLoops leaves its replicated main loop
marked with ``stage=1``) is reordered by a stable, priority-aware topological
sort over a hardware-unit ladder -- scalar code (address arithmetic), then
loads (``pl.tile.load``, ``pl.tile.read``, Mat -> Left/Right
``pl.tile.extract``), then tile compute, then stores -- so the replicated
stages' loads are issued together ahead of their computes (the MTE engine runs
ahead of the vector/cube engine) and each buffer lives across the overlap.
Then the loop is demoted to a plain sequential loop (kind and stage removed):
no Pipeline loop survives this pass.

Only reorderings that keep the program's meaning are made: SSA def-use edges,
and memory edges between loads and stores of tensors that may alias (the same
tensor, or any tensor that is not a distinct function parameter). Ops with
regions, calls and cross-core pushes/pops are barriers nothing moves across.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from pypto.dialects.enums import ForKind, MemorySpace
from pypto.dialects.program import for_kind, set_for_kind
from pypto.dialects.tile_ops import (
    TileExtractOp,
    TileLoadOp,
    TileReadOp,
    TileStoreOp,
    TileTpopFromAicOp,
    TileTpopFromAivOp,
    TileTpushToAicOp,
    TileTpushToAivOp,
)
from pypto.dialects.types import TensorType, TileType

from .base import PyPTOPass
from .registry import register_pass

SCALAR, LOAD, COMPUTE, STORE = range(4)

_BARRIERS = (func.CallOp, TileTpushToAivOp, TileTpushToAicOp, TileTpopFromAicOp, TileTpopFromAivOp)


def category(op: Operation) -> int:
    """The op's rung on the scalar -> load -> compute -> store ladder."""
    if isinstance(op, (TileLoadOp, TileReadOp)):
        return LOAD
    if isinstance(op, TileExtractOp):
        src, dst = op.input.type, op.result.type
        if (
            isinstance(src, TileType)
            and isinstance(dst, TileType)
            and src.memory_space is MemorySpace.Mat
            and dst.memory_space in (MemorySpace.Left, MemorySpace.Right)
        ):
            return LOAD
        return COMPUTE
    if isinstance(op, TileStoreOp):
        return STORE
    if not op.name.startswith("pl.") and all(not isinstance(r.type, (TileType, TensorType)) for r in op.results):
        return SCALAR
    return COMPUTE


def _is_barrier(op: Operation) -> bool:
    return bool(op.regions) or isinstance(op, _BARRIERS) or not (op.name.startswith("pl.") or op.dialect_name() == "arith")


def tensor_root(value: SSAValue) -> SSAValue:
    """The tensor a value names: through store results and loop carries."""
    for _ in range(64):
        if isinstance(value.owner, TileStoreOp):
            value = value.owner.output
        elif isinstance(value, BlockArgument) and isinstance(value.block.parent_op(), scf.ForOp) and value.index > 0:
            loop = value.block.parent_op()
            assert isinstance(loop, scf.ForOp)
            value = loop.iter_args[value.index - 1]
        else:
            break
    return value


def _is_param(value: SSAValue) -> bool:
    return isinstance(value, BlockArgument) and isinstance(value.block.parent_op(), func.FuncOp)


def may_alias(a: SSAValue, b: SSAValue) -> bool:
    return a is b or not (_is_param(a) and _is_param(b))


def _memory(op: Operation) -> tuple[list[SSAValue], list[SSAValue]]:
    """(tensors read, tensors written) by ``op``, as roots."""
    if isinstance(op, TileLoadOp):
        return [tensor_root(op.tensor)], []
    if isinstance(op, TileStoreOp):
        return [], [tensor_root(op.output)]
    return [], []


def _schedule(ops: list[Operation]) -> list[Operation]:
    """A stable topological order of one barrier-free segment by (rung, position)."""
    index = {id(op): i for i, op in enumerate(ops)}
    preds: list[set[int]] = [set() for _ in ops]
    mem = [_memory(op) for op in ops]
    for i, op in enumerate(ops):
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and id(owner) in index:
                preds[i].add(index[id(owner)])
        reads, writes = mem[i]
        for j in range(i):
            r2, w2 = mem[j]
            conflict = any(may_alias(w, x) for w in w2 for x in reads + writes) or any(
                may_alias(x, w) for x in r2 for w in writes
            )
            if conflict:
                preds[i].add(j)
    succs: list[list[int]] = [[] for _ in ops]
    indeg = [len(p) for p in preds]
    for i, p in enumerate(preds):
        for j in p:
            succs[j].append(i)
    ready = [(category(ops[i]), i) for i in range(len(ops)) if indeg[i] == 0]
    heapq.heapify(ready)
    order: list[Operation] = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(ops[i])
        for s in succs[i]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, (category(ops[s]), s))
    assert len(order) == len(ops)
    return order


def reorder_block(block: Block) -> None:
    """Reorder the ops of one block (its terminator stays last)."""
    ops = list(block.ops)
    term = ops[-1] if ops and ops[-1].has_trait(_terminator_trait()) else None
    body = ops[:-1] if term is not None else ops
    for op in body:
        for region in op.regions:
            for inner in region.blocks:
                reorder_block(inner)
    segments: list[list[Operation]] = [[]]
    for op in body:
        if _is_barrier(op):
            segments.append([op])
            segments.append([])
        else:
            segments[-1].append(op)
    order = [op for seg in segments for op in (_schedule(seg) if len(seg) > 1 else seg)]
    if order == body:
        return
    for op in body:
        op.detach()
    if term is not None:
        block.insert_ops_before(order, term)
    else:
        block.add_ops(order)


def _terminator_trait() -> type:
    from xdsl.traits import IsTerminator

    return IsTerminator


@register_pass
@dataclass(frozen=True)
class CanonicalizeIOOrder(PyPTOPass):
    """Loads first / stores last in pipeline loop bodies; pipeline loops demoted."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp) and for_kind(o) is ForKind.Pipeline]
        for loop in loops:
            reorder_block(loop.body.block)
        for loop in loops:
            set_for_kind(loop, ForKind.Sequential)
