"""LowerCompositeOps: tile ops with no single PTO instruction become primitive ones.

Upstream PyPTO's pass 13 expands composite ops into primitive tile ops. Of the
subset's tile ops, the one without a PTO instruction is the column concat:

``c = pl.tile.concat(a, b)`` (``a: [M, N1]``, ``b: [M, N2]``) becomes::

    c__concat = pl.tile.create([M, N1 + N2], dtype=..., target_memory=pl.Mem.Vec)
    c__concat = pl.tile.assemble(c__concat, a, [0, 0])
    c = pl.tile.assemble(c__concat, b, [0, N1])

(``pto.tinsert`` writes each part). Every element of the result is written, so
the result equals the concat exactly. The other subset ops map one to one onto
PTO instructions and are left unchanged.

The in-kernel ``pld.tensor.allreduce`` (when its ``pto_blocker()`` is None) also becomes primitive ops:

``data = pld.tensor.allreduce(data, sig, op=Sum)`` on a ``[R, C]`` window ``data`` and a
``[W(, lanes)]`` signal (``W``: the static world size) becomes::

    sig = pld.tensor.barrier(sig)                                 # every rank's data is in place
    acc = pld.tile.remote_load(data, 0, [0, 0], [R, C])
    acc = pl.tile.add(acc, pld.tile.remote_load(data, 1, ...))    # ... up to rank W - 1, in rank order
    sig = pld.tensor.barrier(sig)                                 # nobody overwrites before all read
    data = pl.tile.store(acc, [0, 0], data)

(``maximum`` / ``minimum`` for Max / Min.) Every rank combines the ranks in the same order, so all
end with the same bits; ``mode`` (mesh / ring) does not change the result and is not modelled.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from pypto.core.analysis.functions import INCORE_KINDS
from pypto.dialects import op_families as F
from pypto.dialects.distributed_enums import ReduceOp
from pypto.dialects.enums import enum_attr
from pypto.dialects.tile_ops import (
    TileAddOp,
    TileAssembleOp,
    TileConcatOp,
    TileCreateOp,
    TileMaximumOp,
    TileMinimumOp,
    TileStoreOp,
)
from pypto.dialects.types import TileType

from .base import FunctionPass, index_constant
from .registry import register_pass

if TYPE_CHECKING:
    from pypto.dialects import distributed_ops as D

PLD_MODULE = "pypto.dialects.distributed_ops"
"""The multi-chip dialect, loaded on the first ``pld.`` name: a program without one has no allreduce."""


def lower_concat(op: TileConcatOp) -> None:
    """``concat(a, b)`` -> ``create`` + two ``assemble``s."""
    a, b = op.lhs, op.rhs
    t = op.result.type
    at = a.type
    assert isinstance(t, TileType) and isinstance(at, TileType)
    name = op.result.name_hint
    scratch = f"{name or 't'}__concat"
    create = TileCreateOp.build_from_args(
        {},
        {"shape": F.INTS.to_attr(list(t.get_shape())), "dtype": t.element_type, "target_memory": enum_attr(t.memory_space)},
    )
    create.results[0].name_hint = scratch
    zero = index_constant(0)
    n1 = index_constant(at.get_shape()[1])
    first = TileAssembleOp.build_from_args({"target": create.results[0], "source": a, "offset": [zero.result, zero.result]}, {})
    first.results[0].name_hint = scratch
    second = TileAssembleOp.build_from_args({"target": first.results[0], "source": b, "offset": [zero.result, n1.result]}, {})
    second.results[0].name_hint = name
    new: list[Operation] = [create, zero, n1, first, second]
    for o in new:
        o.location = op.location
    block = op.parent_block()
    assert block is not None
    block.insert_ops_before(new, op)
    op.result.replace_all_uses_with(second.results[0])
    Rewriter.erase_op(op)


COMBINE = {ReduceOp.Sum: TileAddOp, ReduceOp.Max: TileMaximumOp, ReduceOp.Min: TileMinimumOp}


def lower_allreduce(op: D.AllreduceOp) -> None:
    """Replace ``op`` (:meth:`~D.AllreduceOp.pto_blocker` is None) by its expansion above."""
    from pypto.dialects import distributed_ops as D

    assert op.pto_blocker() is None and op.signal is not None
    rows, cols = (int(d) for d in op.data.type.get_shape())  # type: ignore[union-attr]
    world = int(op.signal.type.get_shape()[0])  # type: ignore[union-attr]
    combine = COMBINE[ReduceOp(op.op.data) if op.op is not None else ReduceOp.Sum]
    new: list[Operation] = []

    def add(o: Operation) -> Operation:
        o.location = op.location
        new.append(o)
        return o

    zero = add(index_constant(0)).results[0]
    sig = add(D.BarrierOp.build_from_args({"signal": op.signal}, {})).results[0]
    acc = None
    for p in range(world):
        peer = add(index_constant(p)).results[0]
        load = add(D.TileRemoteLoadOp.build_from_args(
            {"target": op.data, "peer": peer, "offsets": [zero, zero]}, {"shape": F.INTS.to_attr([rows, cols])}))
        acc = load.results[0] if acc is None else add(combine.build_from_args({"lhs": acc, "rhs": load.results[0]},
                                                                              {})).results[0]
    add(D.BarrierOp.build_from_args({"signal": sig}, {}))
    store = add(TileStoreOp.build_from_args({"tile": acc, "offsets": [zero, zero], "output": op.data}, {}))
    store.results[0].name_hint = op.result.name_hint
    block = op.parent_block()
    assert block is not None
    block.insert_ops_before(new, op)
    op.result.replace_all_uses_with(store.results[0])
    Rewriter.erase_op(op)


@register_pass
@dataclass(frozen=True)
class LowerCompositeOps(FunctionPass):
    """Composite tile ops (concat) and the in-kernel allreduce -> primitive tile / ``pld`` ops."""

    FUNCTION_TYPES = INCORE_KINDS

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        for c in [o for o in f.body.walk() if isinstance(o, TileConcatOp)]:
            lower_concat(c)
        pld = sys.modules.get(PLD_MODULE)
        if pld is None:
            return
        for a in [o for o in f.body.walk() if isinstance(o, pld.AllreduceOp) and o.pto_blocker() is None]:
            lower_allreduce(a)
