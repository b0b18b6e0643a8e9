"""The arith ops the pto interpreter needs beyond xDSL's own implementations (and faster index math).

Each is a function ``(interp, op, args) -> results`` in :data:`ARITH_IMPLS`;
:class:`ArithExtraFunctions` registers them with the xDSL interpreter (over
xDSL's constant/addi/subi/muli, which check more than an index loop needs) and
the compiled engine (:mod:`.compiled`) calls them directly.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation
from xdsl.utils.comparisons import to_signed, to_unsigned

from .memory import DeviceError

ArithImpl = Callable[[Interpreter, Any, PythonValues], PythonValues]


def _width(interp: Interpreter, t: Any) -> int:
    return interp.index_bitwidth if not hasattr(t, "width") else t.width.data


def _wrap(interp: Interpreter, op: Operation, value: int) -> int:
    """Two's-complement wrap to the result width (only when out of range)."""
    if -(2**31) <= value < 2**31:
        return value
    return to_signed(value, _width(interp, op.results[0].type))


def run_constant(interp: Interpreter, op: arith.ConstantOp, args: PythonValues) -> PythonValues:
    value = op.value
    if isinstance(value, DenseIntOrFPElementsAttr):  # a small vector constant (tmrgsort's executed list)
        return (tuple(value.get_values()),)
    if not isinstance(value, IntegerAttr | FloatAttr):
        raise DeviceError(f"arith.constant of {type(value).__name__} is not supported")
    return (value.value.data,)


def run_addi(interp: Interpreter, op: arith.AddiOp, args: PythonValues) -> PythonValues:
    return (_wrap(interp, op, args[0] + args[1]),)


def run_subi(interp: Interpreter, op: arith.SubiOp, args: PythonValues) -> PythonValues:
    return (_wrap(interp, op, args[0] - args[1]),)


def run_muli(interp: Interpreter, op: arith.MuliOp, args: PythonValues) -> PythonValues:
    return (_wrap(interp, op, args[0] * args[1]),)


INDEX_BINARY: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
}
"""The integer operation of addi/subi/muli: the compiled engine computes it in one step and calls the op's
:data:`ARITH_IMPLS` entry only when the value leaves the 32-bit range (where :func:`_wrap` may wrap)."""


def run_maxsi(interp: Interpreter, op: arith.MaxSIOp, args: PythonValues) -> PythonValues:
    return (max(args),)


def run_minsi(interp: Interpreter, op: arith.MinSIOp, args: PythonValues) -> PythonValues:
    return (min(args),)


def run_maxui(interp: Interpreter, op: arith.MaxUIOp, args: PythonValues) -> PythonValues:
    w = _width(interp, op.result.type)
    return (to_signed(max(to_unsigned(a, w) for a in args), w),)


def run_minui(interp: Interpreter, op: arith.MinUIOp, args: PythonValues) -> PythonValues:
    w = _width(interp, op.result.type)
    return (to_signed(min(to_unsigned(a, w) for a in args), w),)


def run_divui(interp: Interpreter, op: arith.DivUIOp, args: PythonValues) -> PythonValues:
    w = _width(interp, op.result.type)
    return (to_signed(to_unsigned(args[0], w) // to_unsigned(args[1], w), w),)


def run_remui(interp: Interpreter, op: arith.RemUIOp, args: PythonValues) -> PythonValues:
    w = _width(interp, op.result.type)
    return (to_signed(to_unsigned(args[0], w) % to_unsigned(args[1], w), w),)


def run_ceildivsi(interp: Interpreter, op: arith.CeilDivSIOp, args: PythonValues) -> PythonValues:
    return (-((-args[0]) // args[1]),)


def run_ceildivui(interp: Interpreter, op: arith.CeilDivUIOp, args: PythonValues) -> PythonValues:
    return (-((-args[0]) // args[1]),)


def run_divf(interp: Interpreter, op: arith.DivfOp, args: PythonValues) -> PythonValues:
    with np.errstate(all="ignore"):
        return (float(np.float64(args[0]) / np.float64(args[1])),)


def run_negf(interp: Interpreter, op: arith.NegfOp, args: PythonValues) -> PythonValues:
    return (-args[0],)


def run_sitofp(interp: Interpreter, op: arith.SIToFPOp, args: PythonValues) -> PythonValues:
    return (float(args[0]),)


def run_fptosi(interp: Interpreter, op: arith.FPToSIOp, args: PythonValues) -> PythonValues:
    return (int(args[0]),)


def run_extf(interp: Interpreter, op: arith.ExtFOp, args: PythonValues) -> PythonValues:
    return (args[0],)


def run_truncf(interp: Interpreter, op: arith.TruncFOp, args: PythonValues) -> PythonValues:
    return (float(np.float32(args[0])),)


def run_extsi(interp: Interpreter, op: arith.ExtSIOp, args: PythonValues) -> PythonValues:
    return (args[0],)


def run_extui(interp: Interpreter, op: arith.ExtUIOp, args: PythonValues) -> PythonValues:
    return (to_unsigned(args[0], _width(interp, op.operands[0].type)),)


def run_trunci(interp: Interpreter, op: arith.TruncIOp, args: PythonValues) -> PythonValues:
    w = _width(interp, op.result.type)
    return (to_signed(to_unsigned(args[0], w), w),)


ARITH_IMPLS: dict[type[Operation], ArithImpl] = {
    arith.ConstantOp: run_constant,
    arith.AddiOp: run_addi,
    arith.SubiOp: run_subi,
    arith.MuliOp: run_muli,
    arith.MaxSIOp: run_maxsi,
    arith.MinSIOp: run_minsi,
    arith.MaxUIOp: run_maxui,
    arith.MinUIOp: run_minui,
    arith.DivUIOp: run_divui,
    arith.RemUIOp: run_remui,
    arith.CeilDivSIOp: run_ceildivsi,
    arith.CeilDivUIOp: run_ceildivui,
    arith.DivfOp: run_divf,
    arith.NegfOp: run_negf,
    arith.SIToFPOp: run_sitofp,
    arith.FPToSIOp: run_fptosi,
    arith.ExtFOp: run_extf,
    arith.TruncFOp: run_truncf,
    arith.ExtSIOp: run_extsi,
    arith.ExtUIOp: run_extui,
    arith.TruncIOp: run_trunci,
}
"""Implementations by op class."""


class ArithExtraFunctions(InterpreterFunctions):
    """:data:`ARITH_IMPLS` as xDSL interpreter functions (register with ``override=True``)."""


def _attach(op_cls: type[Operation], fn: ArithImpl) -> None:
    def run(self: ArithExtraFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return fn(interp, op, args)

    setattr(ArithExtraFunctions, "run_" + op_cls.name.replace(".", "_"), impl(op_cls)(run))


for _op_cls, _fn in ARITH_IMPLS.items():
    _attach(_op_cls, _fn)
register_impls(ArithExtraFunctions)
