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

The in-kernel ``pld.tensor.*`` collectives (allreduce in mesh and ring modes, broadcast, allgather,
reduce_scatter, all_to_all, all_to_all_v) whose ``pto_blocker()`` is None become point-to-point ``pld`` ops:
:mod:`.collectives` says how, per collective.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from pypto.core.analysis.functions import INCORE_KINDS
from pypto.dialects import op_families as F
from pypto.dialects.enums import enum_attr
from pypto.dialects.tile_ops import TileAssembleOp, TileConcatOp, TileCreateOp
from pypto.dialects.types import TileType

from ..base import FunctionPass, index_constant
from ..registry import register_pass

PLD_MODULE = "pypto.dialects.distributed_ops"
"""The multi-chip dialect, loaded on the first ``pld.`` name: a program without one has no collective."""


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


@register_pass
@dataclass(frozen=True)
class LowerCompositeOps(FunctionPass):
    """Composite tile ops (concat) and the in-kernel collectives -> primitive tile / ``pld`` ops."""

    FUNCTION_TYPES = INCORE_KINDS

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        for c in [o for o in f.body.walk() if isinstance(o, TileConcatOp)]:
            lower_concat(c)
        pld = sys.modules.get(PLD_MODULE)
        if pld is None:
            return
        from .collectives import LOWERINGS

        for c in [o for o in f.body.walk() if type(o) in LOWERINGS and o.pto_blocker() is None]:
            LOWERINGS[type(c)](c)
