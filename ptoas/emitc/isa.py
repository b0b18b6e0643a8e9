"""C++ of the ISA ops beyond PyPTO's subset (``pto`` dialect ``isa_*`` modules): pto-isa calls
with the destination first, then the ``ins`` in order, then attribute arguments.

::

    pto.tfmod ins(%a, %b) outs(%d)                 ->  TFMOD(d, a, b);
    pto.tci ins(%s {descending = true}) outs(%d)   ->  TCI(d, s, true);
    pto.ttri ins(%k {upperOrLower = 1}) outs(%d)   ->  TTRI(d, k, 1);
    %v = pto.tgetval ins(%t, %i) outs : f32        ->  const float v = TGETVAL(t, i);
    pto.tprefetch / pto.tsync                      ->  TPREFETCH(d, s); / TSYNC(a, b);   (no-ops on the CPU)
    pto.trap                                       ->  trap();
"""

from __future__ import annotations

from xdsl.ir import Operation

from pypto.ptoas.dialect import isa_misc_ops as IM
from pypto.ptoas.dialect import isa_tile_ops as IT
from pypto.ptoas.dialect.base import DpsOp

from .context import FuncContext, handles
from .cxx_types import element_ctype


def _trailing(op: Operation) -> list[str]:
    """Attribute arguments after the operands."""
    if isinstance(op, IT.TCIOp):
        return ["true" if op.descending is not None and op.descending.value.data else "false"]
    if isinstance(op, IT.TTriOp):
        return ["0" if op.lower() else "1"]
    return []


def _call(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, DpsOp)
    args = [ctx.name(v, op) for v in op.outs() + op.ins()]
    ctx.line(f"{op.name[4:].upper().replace('.', '_')}({', '.join(args + _trailing(op))});")


for _cls in (
    IT.TFModOp,
    IT.TFModSOp,
    IT.TColProdOp,
    IT.TColArgMaxOp,
    IT.TColArgMinOp,
    IT.TConcatOp,
    IT.TCIOp,
    IT.TTriOp,
    IT.TSelSOp,
    IT.TFillPadExpandOp,
    IT.TFillPadInplaceOp,
    IT.TScatterOp,
    IT.TGatherOp,
    IT.TPrefetchOp,
    IT.TSyncOp,
):
    handles(_cls)(_call)


@handles(IT.TSetValOp)
def _tsetval(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, IT.TSetValOp)
    ctx.line(f"TSETVAL({ctx.name(op.dst, op)}, {ctx.name(op.offset, op)}, {ctx.name(op.val, op)});")


@handles(IT.TGetValOp)
def _tgetval(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, IT.TGetValOp)
    src, off = ctx.name(op.src, op), ctx.name(op.offset, op)
    name = ctx.define(op.result)
    ctx.line(f"const {element_ctype(op.result.type)} {name} = TGETVAL({src}, {off});")


@handles(IM.TrapOp)
def _trap(ctx: FuncContext, op: Operation) -> None:
    ctx.line("trap();")
