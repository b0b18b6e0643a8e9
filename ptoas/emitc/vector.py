"""Vector (PIPE_V) ops: ``T<OP>(dst, ins...)``.

Every vector op of the dialect is a destination-passing op whose C++ call puts the
destination first and then the ``ins`` in order (``pto.trowsum ins(%s, %tmp) outs(%d)`` ->
``TROWSUM(d, s, tmp)``; ``pto.tdivs ins(%s, %a)`` -> ``TDIVS(d, s, a)``). Attributes become a
trailing enum: ``TCVT(d, s, RoundMode::CAST_RINT)``, ``TCMP(m, a, b, CmpMode::LT)``;
``tcolsum``'s ``isBinary`` a trailing bool. ``tprint`` has no destination.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from pypto.ptoas.dialect.attrs import CmpModeAttr, RoundModeAttr
from pypto.ptoas.dialect.base import DpsOp
from pypto.ptoas.dialect.vector_ops import VECTOR_OPS, TCmpOp, TCmpSOp, TColSumOp, TCvtOp

from .context import FuncContext, handles
from .cxx_types import round_mode


def _trailing(ctx: FuncContext, op: Operation) -> list[str]:
    """Enum / flag arguments after the operands."""
    if isinstance(op, TCvtOp):  # PTOAS's EmitC constants: in the prologue, saturation (if given) first
        sat = ctx.hoist("SaturationMode", f"SaturationMode::{op.sat_mode.data.value}") if op.sat_mode else None
        rmode = op.attributes.get("rmode") or op.properties.get("rmode")
        mode = round_mode(rmode.data.value if isinstance(rmode, RoundModeAttr) else "CAST_RINT")
        return [ctx.hoist("RoundMode", mode), *([sat] if sat else [])]
    if isinstance(op, TCmpOp | TCmpSOp):
        mode = op.attributes.get("cmpMode") or op.properties.get("cmpMode")
        return [f"CmpMode::{(mode.data.value if isinstance(mode, CmpModeAttr) else 'eq').upper()}"]
    if isinstance(op, TColSumOp):
        flag = op.attributes.get("isBinary")
        if isinstance(flag, IntegerAttr) and len(op.operands) == 3:  # BoolAttr is an IntegerAttr
            return ["true" if flag.value.data else "false"]
    return []


def _vector(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, DpsOp)
    args = [ctx.name(v, op) for v in op.outs() + op.ins()]
    ctx.line(f"{op.name[4:].upper()}({', '.join(args + _trailing(ctx, op))});")


for _cls in VECTOR_OPS:
    handles(_cls)(_vector)
