"""UnrollLoops: ``pl.unroll`` loops are replaced by copies of their body.

Upstream's pass 02 fully unrolls every ``ForStmt`` of kind ``Unroll``
(``for i in pl.unroll(4):``); its bounds must be literals. Here that is an
``scf.for`` whose ``pl.for_kind`` is ``Unroll``: for each iteration value
``v`` of ``range(lb, ub, step)`` (literal ``arith.constant`` bounds) the body
is cloned before the loop with the induction variable replaced by an unnamed
``arith.constant v : index`` (printed as the literal) and the carried values
by the previous copy's yielded values; the loop's results become the last
copy's yields (the inits for a zero-trip loop). Cloned ops keep their
locations and name hints (the printers number repeated names). Nested unroll
loops are unrolled inner first. Non-literal bounds are a user error, as in
upstream.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import SSAValue

from pypto.diagnostics import error_at
from pypto.dialects.enums import ForKind
from pypto.dialects.program import for_kind

from .base import PyPTOPass, index_constant
from .registry import register_pass


def literal_int(value: SSAValue) -> int | None:
    """The integer of an ``arith.constant`` value, else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def unroll(loop: scf.ForOp) -> None:
    """Replace ``loop`` by one copy of its body per iteration."""
    bounds = [literal_int(v) for v in (loop.lb, loop.ub, loop.step)]
    if any(b is None for b in bounds):
        raise error_at(loop, "pl.unroll needs literal bounds", hint="use pl.range for a loop with computed bounds")
    lb, ub, step = bounds
    assert lb is not None and ub is not None and step is not None
    if step <= 0:
        raise error_at(loop, f"pl.unroll step must be positive, got {step}")
    block = loop.parent_block()
    assert block is not None
    body = loop.body.block
    term = body.last_op
    assert isinstance(term, scf.YieldOp)
    carried: list[SSAValue] = list(loop.iter_args)
    for v in range(lb, ub, step):
        index = index_constant(v)
        index.location = loop.location
        block.insert_op_before(index, loop)
        mapping: dict[SSAValue, SSAValue] = {body.args[0]: index.result}
        mapping.update(zip(body.args[1:], carried, strict=True))
        for op in body.ops:
            if op is term:
                break
            block.insert_op_before(op.clone(mapping), loop)
        carried = [mapping.get(y, y) for y in term.operands]
    for result, value in zip(loop.res, carried, strict=True):
        result.replace_all_uses_with(value)
    loop.detach()
    loop.erase()


@register_pass
@dataclass(frozen=True)
class UnrollLoops(PyPTOPass):
    """Fully unroll ``pl.unroll`` loops (literal bounds)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        loops = [o for o in op.walk() if isinstance(o, scf.ForOp) and for_kind(o) is ForKind.Unroll]
        # walk() is pre-order: unroll inner loops first so outer copies clone unrolled bodies.
        for loop in reversed(loops):
            unroll(loop)
