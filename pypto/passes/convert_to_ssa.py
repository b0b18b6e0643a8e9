"""ConvertToSSA: every value gets upstream PyPTO's versioned SSA name.

Our IR is SSA from the front end on (docs/ir.md: rebinding a name makes a new
value; loops carry rebound names as ``scf.for`` iter_args; value-producing
``if``s have results), so what upstream's pass 04 does to its statement IR is,
here, naming. Walking each function in program order with one version counter
per *base* name (``acc`` for ``acc``, ``acc__ssa_v3``, ``acc__iter_v1``...):

- parameters and named op results become ``<base>__ssa_v<N>``;
- an ``scf.for``: before its body, each carried value's iter arg becomes
  ``<base>__iter_v<N>`` and the matching loop result ``<base>__rv_v<N+1>``
  (upstream creates both before visiting the body), then the induction
  variable ``<base>__idx_v<N>``; then the body;
- an ``scf.if``: both arms first, then each result ``<base>__phi_v<N>``;
- a ``pl.at`` result is the variable the scope yields, so it takes the name of
  the yielded value (the printer shows one variable);
- unnamed values stay unnamed (FlattenCallExpr names the nested calls),
  compiler temporaries (``t__tmp_v0``) and ``pl.tile.alloc`` bases keep their
  names.

This is what the upstream ``04_after_ConvertToSSA`` dumps show (matmul_k:
``acc__ssa_v0``, ``acc__iter_v1``, ``acc__rv_v2``, ``k__idx_v0``,
``acc__ssa_v3``). Counters restart per function and only depend on the IR,
so the pass is deterministic, and running it twice gives the same names
(a versioned hint keeps its base: ``acc__iter_v1`` -> ``acc``).

Known difference from upstream: upstream orders the carried variables of a
loop by name and carries every outer variable the body assigns; our front end
carries, in first-assignment order, only those read in or after the loop. The
pass keeps the loop's iter_args as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation, SSAValue

from pypto.dialects.program import AtOp
from pypto.dialects.tile_ops import TileAllocOp

from .base import FunctionPass, base_name
from .registry import register_pass

_TEMPORARY = re.compile(r"__tmp_v\d+$")


class _Versions:
    """Per-function SSA version counters, one per base name."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = {}

    def name(self, value: SSAValue, kind: str, fallback: SSAValue | None = None) -> None:
        """Give ``value`` the next version of its base name (or ``fallback``'s):
        ``<base>__<kind>_v<N>``. Unnamed values and temporaries are left alone."""
        hint = value.name_hint or (fallback.name_hint if fallback is not None else None)
        if not hint or _TEMPORARY.search(hint):
            return
        base = base_name(hint)
        n = self.counters.get(base, 0)
        self.counters[base] = n + 1
        value.name_hint = f"{base}__{kind}_v{n}"


def _rename_block(block: Block, versions: _Versions) -> None:
    for op in block.ops:
        _rename_op(op, versions)


def _rename_op(op: Operation, versions: _Versions) -> None:
    if isinstance(op, scf.ForOp):
        body = op.body.block
        for iter_arg, result, init in zip(body.args[1:], op.res, op.iter_args, strict=True):
            versions.name(iter_arg, "iter", fallback=result if result.name_hint else init)
            versions.name(result, "rv", fallback=iter_arg)
        versions.name(body.args[0], "idx")
        _rename_block(body, versions)
        return
    if isinstance(op, scf.IfOp):
        for region in (op.true_region, op.false_region):
            for block in region.blocks:
                _rename_block(block, versions)
        for result in op.results:
            versions.name(result, "phi")
        return
    if isinstance(op, AtOp):
        _rename_block(op.block, versions)
        term = op.block.last_op
        if term is not None:
            for result, yielded in zip(op.res, term.operands, strict=False):
                if yielded.name_hint:
                    result.name_hint = yielded.name_hint
                else:
                    versions.name(result, "ssa")
        return
    for region in op.regions:
        for block in region.blocks:
            for arg in block.args:
                versions.name(arg, "ssa")
            _rename_block(block, versions)
    if isinstance(op, TileAllocOp):
        return
    for result in op.results:
        versions.name(result, "ssa")


def convert_function(f: func.FuncOp) -> None:
    """Rename the values of one function (see the module docstring)."""
    if not f.body.blocks:
        return
    versions = _Versions()
    entry = f.body.blocks.first
    assert entry is not None
    for arg in entry.args:
        versions.name(arg, "ssa")
    for block in f.body.blocks:
        _rename_block(block, versions)


@register_pass
@dataclass(frozen=True)
class ConvertToSSA(FunctionPass):
    """Upstream's SSA names: ``x__ssa_v0``, ``i__idx_v0``, ``acc__iter_v1``,
    ``acc__rv_v2``, ``r__phi_v0``."""

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        convert_function(f)
