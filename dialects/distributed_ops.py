"""The ``pld`` dialect: the multi-chip ops of ``pypto.language.distributed`` (issue 19).

MLIR op names mirror upstream's DSL names (``pld.tensor.allreduce`` <->
``pld.tensor.allreduce(...)``); each op keeps the ``pl`` op shape (``DSL_ARGS``,
``infer_type``, the verifier), so both text forms print from the same table.

- ``pld.tensor.allreduce(data, signal=None, op=, mode=, core_num=)``,
  ``pld.tensor.broadcast(data, signal, root=)``, ``pld.tensor.barrier(signal)``,
  ``pld.tensor.allgather(local_data, target, signal)``, ``pld.tensor.reduce_scatter(target, signal, op=)``,
  ``pld.tensor.all_to_all(input, target, signal)``:
  the host-level collectives (in place: the result is ``data`` / ``target`` / ``signal``);
- ``pld.system.notify(signal, peer, offsets, value=, op=)`` and
  ``pld.system.wait(signal, offsets, expected=, cmp=)``: cross-rank signals.
  Upstream writes them as statements; here they return the signal they touch
  (written in place), which orders them in SSA.

Signals are ``INT32`` tensors (a window-bound ``pld.DistributedTensor`` is a
tensor here; the window binding is not modelled yet). The simulated ranks run
these semantics in :mod:`pypto.runtime.distributed`; lowering through the pass
pipeline into ``.pto`` is not done yet (``NO_PTO``).
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Dialect, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    var_operand_def,
)

from .distributed_enums import AllreduceMode, NotifyOp, ReduceOp, WaitCmp
from .dtypes import dtype_name
from .enums import DSL_PATH, ENUM_ATTRS
from .op_base import INT, Arg, ArgView, EnumCodec, PLOp, attr, opt_value, value_list
from .op_base import value as arg
from .op_families import WRITES
from .types import TensorType


@irdl_attr_definition
class ReduceOpAttr(EnumAttribute[ReduceOp], SpacedOpaqueSyntaxAttribute):
    name = "pld.reduce_op"


@irdl_attr_definition
class NotifyOpAttr(EnumAttribute[NotifyOp], SpacedOpaqueSyntaxAttribute):
    name = "pld.notify_op"


@irdl_attr_definition
class WaitCmpAttr(EnumAttribute[WaitCmp], SpacedOpaqueSyntaxAttribute):
    name = "pld.wait_cmp"


@irdl_attr_definition
class AllreduceModeAttr(EnumAttribute[AllreduceMode], SpacedOpaqueSyntaxAttribute):
    name = "pld.mode"


PLD_ENUM_ATTRS: dict[type, type[EnumAttribute]] = {
    ReduceOp: ReduceOpAttr, NotifyOp: NotifyOpAttr, WaitCmp: WaitCmpAttr, AllreduceMode: AllreduceModeAttr,
}  # fmt: skip
ENUM_ATTRS.update(PLD_ENUM_ATTRS)
DSL_PATH.update({ReduceOp: "pld.ReduceOp", NotifyOp: "pld.NotifyOp", WaitCmp: "pld.WaitCmp",
                 AllreduceMode: "pld.AllreduceMode"})

_NO_TORCH = "a multi-chip op: the simulated ranks run it (pypto.runtime.distributed), not a torch expression"
_NO_PTO = "not lowered to .pto yet (issue 19: PTOAS's comm ops)"


def _tensor(a: ArgView, name: str) -> TensorType:
    return a.tensor(name)


def _signal(a: ArgView, name: str = "signal") -> TensorType:
    t = a.tensor(name)
    if dtype_name(t.element_type) != "INT32":
        raise a.fail(f"operand '{name}' must be an INT32 signal tensor, got pl.{dtype_name(t.element_type)}")
    if len(t.get_shape()) not in (1, 2):
        raise a.fail(f"operand '{name}' must have rank 1 or 2 ([world_size] or [world_size, lanes]), "
                     f"got rank {len(t.get_shape())}")
    return t


def _offsets(a: ArgView, t: TensorType, name: str = "offsets") -> None:
    n = len(a.values(name))
    if n != len(t.get_shape()):
        raise a.fail(f"'{name}' has {n} indices, expected {len(t.get_shape())} (the signal's rank)")


class _PldOp(PLOp):
    NO_TORCH: ClassVar[str | None] = _NO_TORCH
    NO_PTO: ClassVar[str | None] = _NO_PTO
    traits = WRITES


@irdl_op_definition
class AllreduceOp(_PldOp):
    """``pld.tensor.allreduce(data, signal=None, op=pld.ReduceOp.Sum, mode=pld.AllreduceMode.mesh, core_num=1)``."""

    name = "pld.tensor.allreduce"
    data = operand_def(TensorType)
    signal = opt_operand_def(TensorType)
    op = opt_prop_def(ReduceOpAttr)
    mode = opt_prop_def(AllreduceModeAttr)
    core_num = opt_prop_def()
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "data"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        arg("data"), opt_value("signal"), attr("op", EnumCodec(ReduceOp), ReduceOp.Sum),
        attr("mode", EnumCodec(AllreduceMode), AllreduceMode.mesh), attr("core_num", INT, 1),
    )  # fmt: skip

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        data = _tensor(a, "data")
        if dtype_name(data.element_type) not in ("FP16", "FP32", "BF16", "INT32"):
            raise a.fail(f"operand 'data' must be FP16, BF16, FP32 or INT32, got pl.{dtype_name(data.element_type)}")
        if a.opt_value("signal") is not None:
            _signal(a)
        core_num, mode = a.attr("core_num"), AllreduceMode(a.attr("mode"))
        if core_num < 1:
            raise a.fail(f"core_num must be at least 1, got {core_num}")
        if mode is AllreduceMode.ring and core_num != 1:
            raise a.fail(f"mode=ring requires core_num == 1, got {core_num}")
        return data.with_memref(None)


@irdl_op_definition
class BroadcastOp(_PldOp):
    """``pld.tensor.broadcast(data, signal, root=0)``: every rank ends with ``root``'s data."""

    name = "pld.tensor.broadcast"
    data = operand_def(TensorType)
    signal = operand_def(TensorType)
    root = opt_prop_def()
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "data"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("data"), arg("signal"), attr("root", INT, 0))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        data = _tensor(a, "data")
        _signal(a)
        if a.attr("root") < 0:
            raise a.fail(f"root must be a rank (>= 0), got {a.attr('root')}")
        return data.with_memref(None)


@irdl_op_definition
class BarrierOp(_PldOp):
    """``pld.tensor.barrier(signal)``: every rank waits for all of them (a self-clearing credit barrier)."""

    name = "pld.tensor.barrier"
    signal = operand_def(TensorType)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "signal"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("signal"),)

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        return _signal(a).with_memref(None)


@irdl_op_definition
class SystemNotifyOp(_PldOp):
    """``pld.system.notify(signal, peer, offsets, value=1, op=pld.NotifyOp.AtomicAdd)``: change cell
    ``offsets`` of ``peer``'s signal."""

    name = "pld.system.notify"
    signal = operand_def(TensorType)
    peer = operand_def()
    offsets = var_operand_def()
    value = opt_prop_def()
    op = opt_prop_def(NotifyOpAttr)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "signal"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        arg("signal"), arg("peer"), value_list("offsets"), attr("value", INT, 1),
        attr("op", EnumCodec(NotifyOp), NotifyOp.AtomicAdd),
    )  # fmt: skip

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        sig = _signal(a)
        _offsets(a, sig)
        return sig.with_memref(None)


@irdl_op_definition
class SystemWaitOp(_PldOp):
    """``pld.system.wait(signal, offsets, expected=1, cmp=pld.WaitCmp.Ge)``: block until this rank's
    cell ``offsets`` compares ``cmp`` with ``expected``."""

    name = "pld.system.wait"
    signal = operand_def(TensorType)
    offsets = var_operand_def()
    expected = opt_prop_def()
    cmp = opt_prop_def(WaitCmpAttr)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "signal"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        arg("signal"), value_list("offsets"), attr("expected", INT, 1), attr("cmp", EnumCodec(WaitCmp), WaitCmp.Ge),
    )  # fmt: skip

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        sig = _signal(a)
        _offsets(a, sig)
        return sig.with_memref(None)


def _window_rows(a: ArgView, name: str) -> TensorType:
    t = a.tensor(name)
    if len(t.get_shape()) != 2:
        raise a.fail(f"operand '{name}' must be a [world_size, size] window, got rank {len(t.get_shape())}")
    return t


def _same_dtype(a: ArgView, x: TensorType, y: TensorType, xn: str, yn: str) -> None:
    if x.element_type != y.element_type:
        raise a.fail(f"operands '{xn}' (pl.{dtype_name(x.element_type)}) and '{yn}' "
                     f"(pl.{dtype_name(y.element_type)}) must have one dtype")


@irdl_op_definition
class AllgatherOp(_PldOp):
    """``pld.tensor.allgather(local_data, target, signal)``: row ``r`` of every rank's ``target``
    ([world_size, size]) ends with rank ``r``'s ``local_data`` ([1, size] or [size])."""

    name = "pld.tensor.allgather"
    local_data = operand_def(TensorType)
    target = operand_def(TensorType)
    signal = operand_def(TensorType)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("local_data"), arg("target"), arg("signal"))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        local, target = _tensor(a, "local_data"), _window_rows(a, "target")
        _signal(a)
        _same_dtype(a, local, target, "local_data", "target")
        if math.prod(local.get_shape()) != target.get_shape()[-1]:
            raise a.fail(f"operand 'local_data' {list(local.get_shape())} must be one row of 'target' "
                         f"{list(target.get_shape())}")
        return target.with_memref(None)


@irdl_op_definition
class ReduceScatterOp(_PldOp):
    """``pld.tensor.reduce_scatter(target, signal, op=pld.ReduceOp.Sum)``: row ``r`` of rank ``r``'s
    ``target`` ([world_size, size]) ends with row ``r`` reduced over all ranks."""

    name = "pld.tensor.reduce_scatter"
    target = operand_def(TensorType)
    signal = operand_def(TensorType)
    op = opt_prop_def(ReduceOpAttr)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("target"), arg("signal"), attr("op", EnumCodec(ReduceOp), ReduceOp.Sum))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        target = _window_rows(a, "target")
        _signal(a)
        return target.with_memref(None)


@irdl_op_definition
class AllToAllOp(_PldOp):
    """``pld.tensor.all_to_all(input, target, signal)``: row ``q`` of rank ``r``'s ``target`` ends with
    row ``r`` of rank ``q``'s ``input`` (both [world_size, size], distinct buffers)."""

    name = "pld.tensor.all_to_all"
    input = operand_def(TensorType)
    target = operand_def(TensorType)
    signal = operand_def(TensorType)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("input"), arg("target"), arg("signal"))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        x, target = _window_rows(a, "input"), _window_rows(a, "target")
        _signal(a)
        _same_dtype(a, x, target, "input", "target")
        if x.get_shape() != target.get_shape():
            raise a.fail(f"operands 'input' {list(x.get_shape())} and 'target' {list(target.get_shape())} "
                         f"must have one shape")
        if a.value("input") is a.value("target"):
            raise a.fail("operand 'input' must be a different buffer from 'target'")
        return target.with_memref(None)


PLD_OPS: list[type[PLOp]] = [
    AllreduceOp, BroadcastOp, BarrierOp, AllgatherOp, ReduceScatterOp, AllToAllOp, SystemNotifyOp, SystemWaitOp,
]

PLD = Dialect("pld", list(PLD_OPS), list(PLD_ENUM_ATTRS.values()))
"""The ``pld`` dialect (load it beside ``pl``: :func:`pypto.core.context.make_context`)."""
