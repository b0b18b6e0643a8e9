"""``pl.cast(scalar, pl.FP32)``: a scalar conversion as one ``arith`` cast (upstream's scalar ``pl.cast``).

The printer writes every ``arith`` cast back as ``pl.cast(x, pl.<DTYPE>)``, so the two text forms
round-trip. Integer widths convert with ``extsi``/``trunci``, ``index`` with ``index_cast``,
int <-> float with ``sitofp``/``fptosi`` and float widths with ``extf``/``truncf``.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue


def is_scalar(t: Attribute) -> bool:
    """Whether ``t`` is a scalar type (integer, index or float)."""
    return isinstance(t, IntegerType | IndexType | AnyFloat)


def scalar_cast_op(v: SSAValue, target: Attribute) -> Operation | None:
    """The ``arith`` op converting ``v`` to ``target`` (None: the types are equal, nothing to do)."""
    src = v.type
    if src == target:
        return None
    if isinstance(src, IndexType) or isinstance(target, IndexType):
        if isinstance(src, AnyFloat) or isinstance(target, AnyFloat):
            raise TypeError("an index converts to and from integers only")
        return arith.IndexCastOp(v, target)
    if isinstance(src, IntegerType) and isinstance(target, IntegerType):
        return arith.ExtSIOp(v, target) if target.width.data > src.width.data else arith.TruncIOp(v, target)
    if isinstance(src, IntegerType) and isinstance(target, AnyFloat):
        return arith.SIToFPOp(v, target)
    if isinstance(src, AnyFloat) and isinstance(target, IntegerType):
        return arith.FPToSIOp(v, target)
    if isinstance(src, AnyFloat) and isinstance(target, AnyFloat):
        return arith.ExtFOp(v, target) if target.bitwidth > src.bitwidth else arith.TruncFOp(v, target)
    raise TypeError(f"{src} -> {target}")

