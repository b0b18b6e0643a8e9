"""Simplify: constant folding, trivial identities and scalar dead-code removal.

Upstream runs Simplify twice (pass 05, right after ConvertToSSA, and pass 45,
before the runtime-scope passes); it is one pass class registered once. On
each function, until nothing changes:

- **folding**: an ``arith`` integer op (``addi subi muli divsi floordivsi remsi
  minsi maxsi andi ori xori shli shrsi``), float op (``addf subf mulf divf``) or
  comparison (``cmpi``) whose operands are all constants becomes one
  ``arith.constant`` (wrapped to the type's width; division by zero is left
  alone). The constant takes the folded op's location and, when the result was
  a named variable (``k0__ssa_v0 = 2 * 128``), its name;
- **identities**: ``x + 0``, ``0 + x``, ``x - 0``, ``x * 1``, ``1 * x``,
  ``x // 1`` -> ``x``; ``x * 0``, ``0 * x`` -> ``0`` (integers);
- **structured control flow**: an ``scf.if`` on a constant condition is
  replaced by the taken arm; an ``scf.for`` with literal bounds and no
  iteration is replaced by its initial values;
- **dead code**: an op without side effects whose results are unused is
  erased: ``arith`` ops (constants included) and the ``pl`` ops with scalar
  results that xDSL's dead-code rule (``would_be_trivially_dead``, from the op
  classes' memory-effect traits) may drop: the scalar reads
  (``pl.tensor.read``, ``pl.tile.read``). Tensor and tile ops are kept, as
  upstream's scalar DCE keeps them (``pl.tile.store``, ``pl.tensor.assemble``,
  calls, allocations and yields always stay). The ``arith`` rule stays by
  dialect: xDSL 0.74 gives ``arith.remui`` and ``arith.extsi`` no effect traits.

On the three upstream reference kernels both Simplify dumps equal their
inputs; the pass changes nothing there either.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType, i1
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.transforms.dead_code_elimination import would_be_trivially_dead

from pypto.dialects.op_base import PLOp
from pypto.dialects.types import TensorType, TileType

from .base import FunctionPass
from .registry import register_pass


def _floordiv(a: int, b: int) -> int | None:
    return None if b == 0 else a // b


def _truncdiv(a: int, b: int) -> int | None:
    if b == 0:
        return None
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _truncrem(a: int, b: int) -> int | None:
    q = _truncdiv(a, b)
    return None if q is None else a - q * b


def _shift(a: int, b: int, left: bool) -> int | None:
    if b < 0 or b > 64:
        return None
    return a << b if left else a >> b


_INT_FOLDS: dict[type[Operation], Callable[[int, int], int | None]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivSIOp: _truncdiv,
    arith.FloorDivSIOp: _floordiv,
    arith.RemSIOp: _truncrem,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
    arith.AndIOp: lambda a, b: a & b,
    arith.OrIOp: lambda a, b: a | b,
    arith.XOrIOp: lambda a, b: a ^ b,
    arith.ShLIOp: lambda a, b: _shift(a, b, True),
    arith.ShRSIOp: lambda a, b: _shift(a, b, False),
}

_FLOAT_FOLDS: dict[type[Operation], Callable[[float, float], float | None]] = {
    arith.AddfOp: lambda a, b: a + b,
    arith.SubfOp: lambda a, b: a - b,
    arith.MulfOp: lambda a, b: a * b,
    arith.DivfOp: lambda a, b: None if b == 0 else a / b,
}

# arith.cmpi predicate number -> comparison (signed and unsigned alike on our values)
_CMPI: dict[int, Callable[[int, int], bool]] = {
    0: lambda a, b: a == b,
    1: lambda a, b: a != b,
    2: lambda a, b: a < b,
    3: lambda a, b: a <= b,
    4: lambda a, b: a > b,
    5: lambda a, b: a >= b,
    6: lambda a, b: a < b,
    7: lambda a, b: a <= b,
    8: lambda a, b: a > b,
    9: lambda a, b: a >= b,
}

def const_value(v: SSAValue) -> int | float | None:
    """The value of an ``arith.constant`` integer / float, else None."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        if isinstance(owner.value, IntegerAttr):
            return owner.value.value.data
        if isinstance(owner.value, FloatAttr):
            return owner.value.value.data
    return None


def _wrap(value: int, t: Attribute) -> int:
    """``value`` wrapped to a signed integer type's width (index is unbounded here)."""
    if isinstance(t, IntegerType):
        width = t.width.data
        if width == 1:
            return value & 1
        value &= (1 << width) - 1
        if value >= 1 << (width - 1):
            value -= 1 << width
    return value


def _constant(value: int | float, t: Attribute, like: Operation) -> arith.ConstantOp:
    attr: Attribute
    if isinstance(t, IndexType | IntegerType):
        attr = IntegerAttr(_wrap(int(value), t), t)
    else:
        attr = FloatAttr(float(value), t)  # type: ignore[arg-type]
    c = arith.ConstantOp(attr)
    c.location = like.location
    return c


def _replace_with_constant(op: Operation, value: int | float) -> None:
    result = op.results[0]
    c = _constant(value, result.type, op)
    block = op.parent_block()
    assert block is not None
    block.insert_op_before(c, op)
    result.replace_all_uses_with(c.result)  # the constant inherits a named result's name
    op.detach()
    op.erase()


def _fold(op: Operation) -> bool:
    """Fold one op; True when the IR changed."""
    if isinstance(op, arith.CmpiOp):
        a, b = (const_value(v) for v in op.operands)
        pred = _CMPI.get(op.predicate.value.data)
        if isinstance(a, int) and isinstance(b, int) and pred is not None:
            c = _constant(int(pred(a, b)), i1, op)
            block = op.parent_block()
            assert block is not None
            block.insert_op_before(c, op)
            op.results[0].replace_all_uses_with(c.result)
            op.detach()
            op.erase()
            return True
        return False
    int_fold = _INT_FOLDS.get(type(op))
    if int_fold is not None:
        lhs, rhs = op.operands
        a, b = const_value(lhs), const_value(rhs)
        if isinstance(a, int) and isinstance(b, int):
            folded = int_fold(a, b)
            if folded is not None:
                _replace_with_constant(op, folded)
                return True
            return False
        return _identity(op, lhs, rhs, a, b)
    float_fold = _FLOAT_FOLDS.get(type(op))
    if float_fold is not None:
        a, b = (const_value(v) for v in op.operands)
        if isinstance(a, float) and isinstance(b, float):
            folded_f = float_fold(a, b)
            if folded_f is not None:
                _replace_with_constant(op, folded_f)
                return True
    return False


def _forward(op: Operation, value: SSAValue) -> bool:
    result = op.results[0]
    if result.type != value.type:
        return False
    if result.name_hint and not value.name_hint and isinstance(value.owner, arith.ConstantOp):
        return False  # would name a shared literal
    result.replace_all_uses_with(value)
    op.detach()
    op.erase()
    return True


def _identity(op: Operation, lhs: SSAValue, rhs: SSAValue, a: object, b: object) -> bool:
    if isinstance(op, arith.AddiOp):
        if b == 0:
            return _forward(op, lhs)
        if a == 0:
            return _forward(op, rhs)
    elif isinstance(op, arith.SubiOp):
        if b == 0:
            return _forward(op, lhs)
    elif isinstance(op, arith.MuliOp):
        if b == 1:
            return _forward(op, lhs)
        if a == 1:
            return _forward(op, rhs)
        if a == 0 or b == 0:
            _replace_with_constant(op, 0)
            return True
    elif isinstance(op, arith.DivSIOp | arith.FloorDivSIOp):
        if b == 1:
            return _forward(op, lhs)
    return False


def _splice(region_block: Block, op: Operation) -> None:
    """Move ``region_block``'s ops (but its terminator) before ``op`` and replace
    ``op``'s results by the terminator's operands."""
    block = op.parent_block()
    assert block is not None
    term = region_block.last_op
    for inner in list(region_block.ops):
        if inner is term:
            break
        inner.detach()
        block.insert_op_before(inner, op)
    values = list(term.operands) if term is not None else []
    for result, value in zip(op.results, values, strict=False):
        result.replace_all_uses_with(value)


def _fold_control(op: Operation) -> bool:
    if isinstance(op, scf.IfOp):
        cond = const_value(op.cond)
        if not isinstance(cond, int):
            return False
        region = op.true_region if cond else op.false_region
        if not region.blocks:
            if op.results:
                return False
        else:
            _splice(region.block, op)
        op.detach()
        op.erase(safe_erase=False)
        return True
    if isinstance(op, scf.ForOp):
        lb, ub = const_value(op.lb), const_value(op.ub)
        if isinstance(lb, int) and isinstance(ub, int) and lb >= ub:
            for result, init in zip(op.res, op.iter_args, strict=True):
                result.replace_all_uses_with(init)
            op.detach()
            op.erase(safe_erase=False)
            return True
    return False


def _is_pure(op: Operation) -> bool:
    """May ``op`` be erased when its results are unused?"""
    if op.regions:
        return False
    if op.dialect_name() == "arith":
        return True
    scalar = not any(isinstance(r.type, TileType | TensorType) for r in op.results)
    return isinstance(op, PLOp) and scalar and would_be_trivially_dead(op)


def simplify_function(f: func.FuncOp) -> bool:
    """Simplify one function to a fixed point; True when anything changed."""
    changed_any = False
    changed = True
    while changed:
        changed = False
        for op in list(f.body.walk()):
            if op.parent is None:  # erased by an earlier fold
                continue
            if _fold_control(op):
                changed = True
                break  # regions moved or erased: walk again
            if _fold(op):
                changed = True
        for op in reversed(list(f.body.walk())):
            if op.parent is not None and _is_pure(op) and all(not r.uses for r in op.results):
                op.detach()
                op.erase()
                changed = True
        changed_any |= changed
    return changed_any


@register_pass
@dataclass(frozen=True)
class Simplify(FunctionPass):
    """Fold constants and identities, drop dead scalar code (passes 05 and 45)."""

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        simplify_function(f)
