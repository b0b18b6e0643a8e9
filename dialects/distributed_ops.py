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
these semantics in :mod:`pypto.runtime.distributed`. The point-to-point ops (rank queries,
remote load/store of a tile or tensor, put/get and their tile forms staged through a Vec tile, notify/wait) and the barrier lower into ``.pto`` as
PTOAS's ``pto.comm.*`` ops (``pypto/ptoas/codegen/comm_ops.py``), the other collectives via their
expansions into those (``pypto/passes/lower_composite_ops/collectives.py``, run by LowerCompositeOps) when their
shapes are static; ``all_to_all_v`` does not (``pto_blocker()``: a program with it runs as its torch
form).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IndexType
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)

from .distributed_enums import AllreduceMode, NotifyOp, ReduceOp, WaitCmp
from .dtypes import dtype_bits, dtype_name
from .enums import DSL_PATH, ENUM_ATTRS, AtomicType, MemorySpace
from .op_base import BOOL, INT, INTS, Arg, ArgView, EnumCodec, PLOp, attr, opt_value, value_list
from .op_base import value as arg
from .op_families import PURE, READS, WRITES
from .types import DYNAMIC, TensorType, TileType


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
_NO_PTO = "not lowered to .pto (a program with it runs as its torch form on the ranks)"


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


def _static_blocker(signal: object, *tensors: object, rows_are_world: bool = False) -> str | None:
    """Why a collective on ``tensors`` (SSA values) with ``signal`` does not expand into point-to-point
    ops: the signal's world size and the tensors' 2-D shapes must be static (``rows_are_world``: the
    first tensor has ``world_size`` rows)."""
    sig = getattr(signal, "type", None)
    if not isinstance(sig, TensorType) or sig.get_shape()[0] < 1:
        return _NO_PTO + "; lowered with a signal of static shape [world_size(, lanes)]"
    for v in tensors:
        t = getattr(v, "type", None)
        if not isinstance(t, TensorType) or len(t.get_shape()) != 2 or min(t.get_shape()) < 1:
            return _NO_PTO + "; lowered for static 2-D windows"
    first = getattr(tensors[0], "type", None) if tensors else None
    if rows_are_world and isinstance(first, TensorType) and first.get_shape()[0] != sig.get_shape()[0]:
        return _NO_PTO + f"; lowered for a [world_size, size] window ({sig.get_shape()[0]} rows, the signal's extent)"
    return None


def launch_block_counts(op: Operation) -> set[int]:
    """The SPMD block counts (``pl.block_num``, 1 when unset) of every launch of the kernel holding ``op``: its
    enclosing ``pl.at`` scope's (not outlined yet), else those of every ``func.call`` of its function in the module."""
    from xdsl.dialects import func

    from .program import AtOp

    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        if isinstance(parent, AtOp):  # a device scope, not outlined yet: it is the launch
            return {_block_num(parent)}
        parent = parent.parent_op()
    if parent is None:
        return set()
    top = parent.parent_op()
    if top is None:
        return set()
    name = parent.sym_name.data
    return {_block_num(c) for c in top.walk() if isinstance(c, func.CallOp) and c.callee.root_reference.data == name}


def _block_num(op: Operation) -> int:
    n = op.attributes.get("pl.block_num")
    return int(n.value.data) if n is not None else 1  # type: ignore[attr-defined]


class _PldOp(PLOp):
    NO_TORCH: ClassVar[str | None] = _NO_TORCH
    NO_PTO: ClassVar[str | None] = _NO_PTO
    TORCH_CALL: ClassVar[str | None] = None
    """The method of the rank's comm context (``_pld`` in a torch_codegen script) that runs the op
    (its DSL arguments in order, enums as their names); None: no torch form."""
    traits = WRITES

    def pto_blocker(self) -> str | None:
        """Why this op does not lower to ``.pto`` (its class's ``NO_PTO``), None if it does."""
        return self.NO_PTO


@irdl_op_definition
class AllreduceOp(_PldOp):
    """``pld.tensor.allreduce(data, signal=None, op=pld.ReduceOp.Sum, mode=pld.AllreduceMode.mesh, core_num=1)``."""

    name = "pld.tensor.allreduce"
    TORCH_CALL: ClassVar[str | None] = "_pld.allreduce"
    data = operand_def(TensorType)
    signal = opt_operand_def(TensorType)
    op = opt_prop_def(ReduceOpAttr)
    mode = opt_prop_def(AllreduceModeAttr)
    core_num = opt_prop_def()
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "data"
    ALSO_WRITES: ClassVar[tuple[str, ...]] = ("signal",)  # its notifies update the signal
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

    def pto_blocker(self) -> str | None:
        """LowerCompositeOps expands it (``pypto/passes/lower_composite_ops/collectives.py``) when it has a signal of a
        static world size, a static 2-D ``data`` and ``core_num == 1``; otherwise it runs as torch."""
        if self.signal is None:
            return _NO_PTO + "; lowered with a signal of static shape [world_size(, lanes)] (a kernel has no window " \
                             "to synthesize one in)"
        why = _static_blocker(self.signal, self.data)
        if why is None and self.core_count() != 1:
            why = self._blocks_blocker()
        return why

    def core_count(self) -> int:
        """``core_num``: how many SPMD blocks share the collective (each reduces ``1 / core_num`` of the columns)."""
        return int(self.arg_view().attr("core_num"))

    def _blocks_blocker(self) -> str | None:
        """Why a ``core_num > 1`` mesh does not expand: it needs ``[world_size, lanes >= core_num]`` signal
        (lane ``b`` is block ``b``'s barrier), columns that ``core_num`` divides and a kernel launched as
        exactly ``core_num`` blocks (``with pl.spmd(core_num)``) wherever it is called."""
        n = self.core_count()
        sig, cols = self.signal.type.get_shape(), self.data.type.get_shape()[-1]  # type: ignore[union-attr]
        if len(sig) != 2 or sig[1] < n:
            return _NO_PTO + (f"; core_num={n} is lowered with a [world_size, lanes] signal of at least {n} lanes "
                              f"(one per block), got {list(sig)}")
        if cols % n:
            return _NO_PTO + f"; core_num={n} is lowered when it divides the {cols} columns (each block takes 1/{n})"
        launches = launch_block_counts(self)
        if launches != {n}:
            got = "no launch in this program" if not launches else f"launched as {sorted(launches)} block(s)"
            return _NO_PTO + (f"; core_num={n} is lowered in a kernel launched as {n} blocks (with pl.spmd({n}), "
                              f"each block reducing its share), {got}")
        return None

    MESH_UB_BYTES: ClassVar[int] = 64 * 1024
    """The largest ``data`` the mesh expansion reads in one piece (every rank's whole window, then one
    store); a larger one goes in 16 KiB chunks with a barrier per chunk (:meth:`mesh_is_chunked`)."""

    def mesh_is_chunked(self) -> bool:
        """Whether the mesh expansion splits a block's share of ``data`` (all of it when ``core_num == 1``) into
        chunks: it has more than :attr:`MESH_UB_BYTES`."""
        t = self.data.type
        assert isinstance(t, TensorType)
        nbytes = math.prod(t.get_shape()) * max(1, dtype_bits(t.element_type) // 8)
        return nbytes // self.core_count() > self.MESH_UB_BYTES

    def is_ring(self) -> bool:
        """``mode=ring`` with a signal."""
        return self.mode is not None and AllreduceMode(self.mode.data) is AllreduceMode.ring and self.signal is not None

    def ring_shaped_signal(self) -> bool:
        """``mode=ring`` on upstream's ring signal ``[2 * (NR - 1)(+ 1), NR]`` (one row per round, one cell
        per rank; ``NR >= 2``), whose world size is its last extent, not its first."""
        if not self.is_ring():
            return False
        shape = self.signal.type.get_shape()  # type: ignore[union-attr]
        return len(shape) == 2 and shape[1] >= 2 and shape[0] in (2 * (shape[1] - 1), 2 * (shape[1] - 1) + 1)

    def world(self) -> int:
        """The static world size: the ranks of a ring-shaped signal, else the signal's first extent."""
        assert self.signal is not None
        shape = self.signal.type.get_shape()  # type: ignore[union-attr]
        return int(shape[1] if self.ring_shaped_signal() else shape[0])

    def lowers_as_ring(self) -> bool:
        """``mode=ring`` on a signal of at least 2 ranks that divides ``data``'s columns (else: the mesh)."""
        if not self.is_ring():
            return False
        cols = self.data.type.get_shape()[-1]  # type: ignore[union-attr]
        return self.world() >= 2 and cols % self.world() == 0


@irdl_op_definition
class BroadcastOp(_PldOp):
    """``pld.tensor.broadcast(data, signal, root=0)``: every rank ends with ``root``'s data."""

    name = "pld.tensor.broadcast"
    TORCH_CALL: ClassVar[str | None] = "_pld.broadcast"
    data = operand_def(TensorType)
    signal = operand_def(TensorType)
    root = opt_prop_def()
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "data"
    ALSO_WRITES: ClassVar[tuple[str, ...]] = ("signal",)  # its notifies update the signal
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("data"), arg("signal"), attr("root", INT, 0))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        data = _tensor(a, "data")
        _signal(a)
        if a.attr("root") < 0:
            raise a.fail(f"root must be a rank (>= 0), got {a.attr('root')}")
        return data.with_memref(None)

    def pto_blocker(self) -> str | None:
        """Expanded by LowerCompositeOps (``pypto/passes/lower_composite_ops/collectives.py``) for a static signal and 2-D
        ``data`` and a ``root`` below the world size."""
        why = _static_blocker(self.signal, self.data)
        if why is None and self.arg_view().attr("root") >= self.signal.type.get_shape()[0]:  # type: ignore[union-attr]
            why = _NO_PTO + "; root is not a rank of the signal's world size"
        return why


@irdl_op_definition
class BarrierOp(_PldOp):
    """``pld.tensor.barrier(signal)``: every rank waits for all of them (a self-clearing credit barrier)."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    name = "pld.tensor.barrier"
    TORCH_CALL: ClassVar[str | None] = "_pld.barrier"
    signal = operand_def(TensorType)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "signal"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("signal"),)

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        return _signal(a).with_memref(None)


@irdl_op_definition
class SystemNotifyOp(_PldOp):
    """``pld.system.notify(target, peer, offsets, value=1, op=pld.NotifyOp.AtomicAdd)``: change cell
    ``offsets`` of ``peer``'s signal window ``target`` (upstream's parameter name)."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    name = "pld.system.notify"
    TORCH_CALL: ClassVar[str | None] = "_pld.notify"
    target = operand_def(TensorType)
    peer = operand_def()
    offsets = var_operand_def()
    value = opt_operand_def()
    op = opt_prop_def(NotifyOpAttr)
    result = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        arg("target"), arg("peer"), value_list("offsets"), opt_value("value", keyword=True),
        attr("op", EnumCodec(NotifyOp), NotifyOp.AtomicAdd),
    )  # fmt: skip
    """``value`` is a scalar (a run-time value too: an epoch, a tag); absent: 1."""

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        sig = _signal(a, "target")
        _offsets(a, sig)
        return sig.with_memref(None)


class _WaitOp(_PldOp):
    """A wait on this rank's signal cell ``offsets``: ``(signal, offsets, expected=1, cmp=pld.WaitCmp.Ge)``."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    TORCH_CALL: ClassVar[str | None] = "_pld.wait"
    signal = operand_def(TensorType)
    offsets = var_operand_def()
    expected = opt_operand_def()
    cmp = opt_prop_def(WaitCmpAttr)
    result = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    ALIAS_OPERAND: ClassVar[str | None] = "signal"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        arg("signal"), value_list("offsets"), opt_value("expected", keyword=True),
        attr("cmp", EnumCodec(WaitCmp), WaitCmp.Ge),
    )  # fmt: skip

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        sig = _signal(a)
        _offsets(a, sig)
        return sig.with_memref(None)


@irdl_op_definition
class SystemWaitOp(_WaitOp):
    """``pld.system.wait(signal, offsets, expected=1, cmp=pld.WaitCmp.Ge)``: block until this rank's
    cell ``offsets`` compares ``cmp`` with ``expected``."""

    name = "pld.system.wait"


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
    TORCH_CALL: ClassVar[str | None] = "_pld.allgather"
    local_data = operand_def(TensorType)
    target = operand_def(TensorType)
    signal = operand_def(TensorType)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    ALSO_WRITES: ClassVar[tuple[str, ...]] = ("signal",)  # its notifies update the signal
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

    def pto_blocker(self) -> str | None:
        """Expanded by LowerCompositeOps (``pypto/passes/lower_composite_ops/collectives.py``) for a static signal, a
        ``[world_size, size]`` target and a 2-D ``[1, size]`` local_data."""
        why = _static_blocker(self.signal, self.target, self.local_data, rows_are_world=True)
        if why is None and self.local_data.type.get_shape()[0] != 1:  # type: ignore[union-attr]
            why = _NO_PTO + "; lowered for a [1, size] local_data"
        return why


@irdl_op_definition
class ReduceScatterOp(_PldOp):
    """``pld.tensor.reduce_scatter(target, signal, op=pld.ReduceOp.Sum)``: row ``r`` of rank ``r``'s
    ``target`` ([world_size, size]) ends with row ``r`` reduced over all ranks."""

    name = "pld.tensor.reduce_scatter"
    TORCH_CALL: ClassVar[str | None] = "_pld.reduce_scatter"
    target = operand_def(TensorType)
    signal = operand_def(TensorType)
    op = opt_prop_def(ReduceOpAttr)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    ALSO_WRITES: ClassVar[tuple[str, ...]] = ("signal",)  # its notifies update the signal
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("target"), arg("signal"), attr("op", EnumCodec(ReduceOp), ReduceOp.Sum))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        target = _window_rows(a, "target")
        _signal(a)
        return target.with_memref(None)

    def pto_blocker(self) -> str | None:
        """Expanded by LowerCompositeOps (``pypto/passes/lower_composite_ops/collectives.py``) for a static signal and a
        ``[world_size, size]`` target."""
        return _static_blocker(self.signal, self.target, rows_are_world=True)


def _exchange_type(a: ArgView) -> TensorType:
    """The all-to-all forms' shared checks: ``input`` and ``target`` are distinct windows of one shape
    and dtype, with a signal; the result is ``target``'s type."""
    x, target = _window_rows(a, "input"), _window_rows(a, "target")
    _signal(a)
    _same_dtype(a, x, target, "input", "target")
    if x.get_shape() != target.get_shape():
        raise a.fail(f"operands 'input' {list(x.get_shape())} and 'target' {list(target.get_shape())} "
                 f"must have one shape")
    if a.value("input") is a.value("target"):
        raise a.fail("operand 'input' must be a different buffer from 'target'")
    return target.with_memref(None)


@irdl_op_definition
class AllToAllOp(_PldOp):
    """``pld.tensor.all_to_all(input, target, signal)``: row ``q`` of rank ``r``'s ``target`` ends with
    row ``r`` of rank ``q``'s ``input`` (both [world_size, size], distinct buffers)."""

    name = "pld.tensor.all_to_all"
    TORCH_CALL: ClassVar[str | None] = "_pld.all_to_all"
    input = operand_def(TensorType)
    target = operand_def(TensorType)
    signal = operand_def(TensorType)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    ALSO_WRITES: ClassVar[tuple[str, ...]] = ("signal",)  # its notifies update the signal
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("input"), arg("target"), arg("signal"))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        return _exchange_type(a)

    def pto_blocker(self) -> str | None:
        """Expanded by LowerCompositeOps (``pypto/passes/lower_composite_ops/collectives.py``) for a static signal and
        ``[world_size, size]`` windows."""
        return _static_blocker(self.signal, self.target, self.input, rows_are_world=True)


@irdl_op_definition
class AllToAllVOp(_PldOp):
    """``pld.tensor.all_to_all_v(input, target, signal, send_counts, recv_counts)``: the variable-size
    all-to-all (upstream's push form). ``input`` and ``target`` are flat [NR * MAX_RECV, SIZE]
    (``MAX_RECV = target rows // NR``): rank ``r``'s rows ``q * MAX_RECV ..`` (a full ``MAX_RECV`` block)
    land in rank ``q``'s ``target`` rows ``r * MAX_RECV ..``, and ``min(send_counts[q], MAX_RECV)`` lands in
    rank ``q``'s ``recv_counts[r, 0]`` (how many of those rows are valid; the rest are stale)."""

    name = "pld.tensor.all_to_all_v"
    TORCH_CALL: ClassVar[str | None] = "_pld.all_to_all_v"
    input = operand_def(TensorType)
    target = operand_def(TensorType)
    signal = operand_def(TensorType)
    send_counts = operand_def(TensorType)
    recv_counts = operand_def(TensorType)
    result = result_def(TensorType)
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    ALSO_WRITES: ClassVar[tuple[str, ...]] = ("signal",)  # its notifies update the signal
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("input"), arg("target"), arg("signal"), arg("send_counts"),
                                           arg("recv_counts"))  # fmt: skip

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        result = _exchange_type(a)
        for name in ("send_counts", "recv_counts"):
            t = a.tensor(name)
            if dtype_name(t.element_type) != "INT32" or len(t.get_shape()) not in (1, 2) or (
                len(t.get_shape()) == 2 and t.get_shape()[1] != 1
            ):
                raise a.fail(f"operand '{name}' must be INT32 [world_size] or [world_size, 1], got "
                             f"pl.{dtype_name(t.element_type)} {list(t.get_shape())}")
        return result

    def pto_blocker(self) -> str | None:
        """Expanded by LowerCompositeOps (``pypto/passes/lower_composite_ops/collectives.py``) for a static signal,
        static 2-D windows whose rows are a multiple of its world size and static counts."""
        why = _static_blocker(self.signal, self.target, self.input)
        if why is not None:
            return why
        world = self.signal.type.get_shape()[0]  # type: ignore[union-attr]
        shape = list(self.target.type.get_shape())  # type: ignore[union-attr]
        if shape[0] % world or list(self.input.type.get_shape()) != shape:  # type: ignore[union-attr]
            return _NO_PTO + "; lowered for input and target of one shape, [world_size * MAX_RECV, size]"
        for t in (self.send_counts.type, self.recv_counts.type):
            if not isinstance(t, TensorType) or t.get_shape()[0] != world:
                return _NO_PTO + "; lowered for static [world_size(, 1)] counts"
        return None


# ---- kernel-body RMA: the communication context, remote tile load/store, tensor put/get ------------------


class _RankQueryOp(_PldOp):
    """A query of the run's communication context: an ``index`` scalar, the same for the whole kernel."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    result = result_def(IndexType)
    traits = PURE
    FULL_PATH: ClassVar[str]
    """Upstream's three-segment spelling (``pld.system.<query>``), accepted as well as the short name."""

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        return IndexType()


@irdl_op_definition
class GetCommCtxOp(_RankQueryOp):
    """``pld.get_comm_ctx(window)``: the communication context of a ``pld.DistributedTensor`` (a handle)."""

    name = "pld.get_comm_ctx"
    FULL_PATH: ClassVar[str] = "pld.system.get_comm_ctx"
    tensor = operand_def(TensorType)
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("tensor"),)
    TORCH_CALL: ClassVar[str | None] = "_pld.comm_ctx"


@irdl_op_definition
class RankOp(_RankQueryOp):
    """``pld.rank(ctx)``: this rank's number (0 .. nranks-1)."""

    name = "pld.rank"
    FULL_PATH: ClassVar[str] = "pld.system.rank"
    ctx = operand_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("ctx"),)
    TORCH_CALL: ClassVar[str | None] = "_pld.rank"


@irdl_op_definition
class NranksOp(_RankQueryOp):
    """``pld.nranks(ctx)``: the number of ranks."""

    name = "pld.nranks"
    FULL_PATH: ClassVar[str] = "pld.system.nranks"
    ctx = operand_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("ctx"),)
    TORCH_CALL: ClassVar[str | None] = "_pld.nranks"


def _fits(inner: Sequence[int], outer: Sequence[int]) -> bool:
    """``inner`` has ``outer``'s rank and fits in it (a ``pl.dynamic`` extent fits anything)."""
    return len(inner) == len(outer) and all(d == DYNAMIC or x == DYNAMIC or x <= d
                                            for x, d in zip(inner, outer, strict=True))


def _window_offsets(a: ArgView, t: TensorType, shape: tuple[int, ...]) -> None:
    n = len(a.values("offsets"))
    if n != len(t.get_shape()):
        raise a.fail(f"'offsets' has {n} indices, expected {len(t.get_shape())} (the rank of 'target')")
    if any(s <= 0 for s in shape) or not _fits(shape, t.get_shape()):
        raise a.fail(f"shape {list(shape)} must have the rank of 'target' {list(t.get_shape())} and fit in it")


@irdl_op_definition
class TileRemoteLoadOp(_PldOp):
    """``pld.tile.remote_load(target, peer, offsets, shape)``: a Vec tile read from ``peer``'s window
    ``target`` at ``offsets`` (one-sided)."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    name = "pld.tile.remote_load"
    target = operand_def(TensorType)
    peer = operand_def()
    offsets = var_operand_def()
    shape = prop_def()
    result = result_def(TileType)
    traits = READS
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("target"), arg("peer"), value_list("offsets"), attr("shape", INTS))
    TORCH_CALL: ClassVar[str | None] = "_pld.remote_load"

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        t = a.tensor("target")
        shape = tuple(a.attr("shape"))
        _window_offsets(a, t, shape)
        return TileType.get(shape, t.element_type, MemorySpace.Vec)


class _RemoteStoreOp(_PldOp):
    """A one-sided write of operand ``SOURCE`` (a ``SOURCE_KIND``: ``tile`` or ``tensor``) into ``peer``'s
    window ``target`` at ``offsets``, stored or atomically added (returns ``target``)."""

    SOURCE: ClassVar[str]
    SOURCE_KIND: ClassVar[str]
    ALIAS_OPERAND: ClassVar[str | None] = "target"
    TORCH_CALL: ClassVar[str | None] = "_pld.remote_store"

    @staticmethod
    def dsl_args(source: str) -> tuple[Arg, ...]:
        """``(source, target, peer, offsets, atomic=pld.AtomicType.None_)``."""
        return (arg(source), arg("target"), arg("peer"), value_list("offsets"),
                attr("atomic", EnumCodec(AtomicType), AtomicType.None_))  # fmt: skip

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        t, src = a.tensor("target"), getattr(a, cls.SOURCE_KIND)(cls.SOURCE)
        _same_dtype(a, src, t, cls.SOURCE, "target")
        _window_offsets(a, t, tuple(src.get_shape()))
        return t.with_memref(None)


@irdl_op_definition
class TileRemoteStoreOp(_RemoteStoreOp):
    """``pld.tile.remote_store(tile, target, peer, offsets)``: write ``tile`` into ``peer``'s window
    ``target`` at ``offsets`` (one-sided; returns ``target``)."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    name = "pld.tile.remote_store"
    tile = operand_def(TileType)
    target = operand_def(TensorType)
    peer = operand_def()
    offsets = var_operand_def()
    atomic = opt_prop_def()
    result = result_def(TensorType)
    SOURCE: ClassVar[str] = "tile"
    SOURCE_KIND: ClassVar[str] = "tile"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = _RemoteStoreOp.dsl_args("tile")


class _PutGetOp(_PldOp):
    """``dst``/``src`` with optional ``dst_offsets``, ``src_offsets`` and a region ``shape`` (none: the
    whole of ``src``, which then has ``dst``'s shape); ``chunk_rows``/``chunk_cols``/``pipeline`` tune the
    staging (recorded; they do not change the result)."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    dst = operand_def(TensorType)
    peer = operand_def()
    src = operand_def(TensorType)
    dst_offsets = var_operand_def()
    src_offsets = var_operand_def()
    shape = opt_prop_def()
    chunk_rows = opt_prop_def()
    chunk_cols = opt_prop_def()
    pipeline = opt_prop_def()
    result = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    ALIAS_OPERAND: ClassVar[str | None] = "dst"
    _TAIL: ClassVar[tuple[Arg, ...]] = (
        value_list("dst_offsets", optional=True), value_list("src_offsets", optional=True),
        attr("shape", INTS, None),
    )  # fmt: skip
    _TUNING: ClassVar[tuple[Arg, ...]] = (attr("chunk_rows", INT, 0), attr("chunk_cols", INT, 0),
                                          attr("pipeline", BOOL, False))  # fmt: skip

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        dst, src = a.tensor("dst"), a.tensor("src")
        _same_dtype(a, dst, src, "dst", "src")
        shape = a.attr("shape")
        if shape is None:
            if not (_fits(src.get_shape(), dst.get_shape()) and _fits(dst.get_shape(), src.get_shape())):
                raise a.fail(f"operands 'dst' {list(dst.get_shape())} and 'src' {list(src.get_shape())} must "
                             "have one shape (or give shape=)")
            shape = list(src.get_shape())
        for name, t in (("dst_offsets", dst), ("src_offsets", src)):
            n = len(a.values(name))
            if n and n != len(t.get_shape()):
                raise a.fail(f"'{name}' has {n} indices, expected {len(t.get_shape())}")
            if not _fits(shape, t.get_shape()):
                raise a.fail(f"shape {list(shape)} does not fit in {name[:3]} {list(t.get_shape())}")
        if any(a.has(n) and a.attr(n) < 0 for n in ("chunk_rows", "chunk_cols")):
            raise a.fail("chunk_rows / chunk_cols must be >= 0 (0: the full extent)")
        return dst.with_memref(None)


@irdl_op_definition
class TensorPutOp(_PutGetOp):
    """``pld.tensor.put(dst, peer, src, dst_offsets=, src_offsets=, shape=, atomic=pld.AtomicType.None_,
    chunk_rows=0, chunk_cols=0, pipeline=False)``: copy (or atomically add) this rank's ``src`` into
    ``peer``'s window ``dst``."""

    name = "pld.tensor.put"
    atomic = opt_prop_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        arg("dst"), arg("peer"), arg("src"), *_PutGetOp._TAIL, attr("atomic", EnumCodec(AtomicType), AtomicType.None_),
        *_PutGetOp._TUNING,
    )  # fmt: skip
    TORCH_CALL: ClassVar[str | None] = "_pld.put"


@irdl_op_definition
class TensorGetOp(_PutGetOp):
    """``pld.tensor.get(dst, peer, src, dst_offsets=, src_offsets=, shape=, chunk_rows=0, chunk_cols=0,
    pipeline=False)``: copy ``peer``'s window ``src`` into this rank's ``dst``."""

    name = "pld.tensor.get"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (arg("dst"), arg("peer"), arg("src"), *_PutGetOp._TAIL, *_PutGetOp._TUNING)
    TORCH_CALL: ClassVar[str | None] = "_pld.get"


class _TilePutGetOp(_PutGetOp):
    """The tile-level form of ``pld.tensor.put`` / ``get`` (upstream's ``pld.tile.put`` / ``get``): the same
    transfer, staged through an explicit Vec tile ``stage`` (and an optional ``stage2`` of its shape, the
    ping-pong buffer). The stage is 2-D, of ``dst``'s dtype, and fits in the transfer flattened to
    ``[rows, cols]`` (PTO-ISA's TPUT / TGET slide the transfer through it in stage-sized chunks)."""

    stage = operand_def(TileType)
    stage2 = opt_operand_def(TileType)
    chunk_rows = opt_prop_def()  # upstream's tile form has no tuning arguments (its stage is the chunk)
    chunk_cols = opt_prop_def()
    pipeline = opt_prop_def()
    _STAGES: ClassVar[tuple[Arg, ...]] = (arg("dst"), arg("peer"), arg("src"), arg("stage"), opt_value("stage2"))

    @classmethod
    def infer_type(cls, a: ArgView) -> Attribute:
        result = super().infer_type(a)
        dst = a.tensor("dst")
        shape = a.attr("shape") or list(a.tensor("src").get_shape())
        rows = math.prod(shape[:-1]) if all(d > 0 for d in shape[:-1]) else DYNAMIC
        cols = shape[-1]
        first: TileType | None = None
        for name in ("stage", "stage2"):
            if a.opt_value(name) is None:
                continue
            t = a.tile(name)
            where = f"the staging tile '{name}'"
            if t.element_type != dst.element_type:
                raise a.fail(f"{where} (pl.{dtype_name(t.element_type)}) must have the dtype of 'dst' "
                             f"(pl.{dtype_name(dst.element_type)})")
            if t.memory_space is not MemorySpace.Vec:
                raise a.fail(f"{where} must be a Vec tile (UB), got pl.Mem.{t.memory_space.name}")
            st = list(t.get_shape())
            if len(st) != 2 or min(st) <= 0:
                raise a.fail(f"{where} must be a static 2-D tile, got shape {st}")
            if (rows != DYNAMIC and st[0] > rows) or (cols != DYNAMIC and st[1] > cols):
                raise a.fail(f"{where} {st} must fit in the transfer flattened to [rows, cols] = "
                             f"[{'?' if rows == DYNAMIC else rows}, {'?' if cols == DYNAMIC else cols}]")
            if first is not None and list(first.get_shape()) != st:
                raise a.fail(f"the ping-pong staging tiles must have one shape, got {list(first.get_shape())} "
                             f"and {st}")
            first = t
        return result


@irdl_op_definition
class TilePutOp(_TilePutGetOp):
    """``pld.tile.put(dst, peer, src, stage, stage2=None, dst_offsets=, src_offsets=, shape=,
    atomic=pld.AtomicType.None_)``: ``pld.tensor.put`` staged through the Vec tile ``stage``."""

    name = "pld.tile.put"
    atomic = opt_prop_def()
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (
        *_TilePutGetOp._STAGES, *_PutGetOp._TAIL, attr("atomic", EnumCodec(AtomicType), AtomicType.None_),
    )  # fmt: skip
    TORCH_CALL: ClassVar[str | None] = "_pld.put"
    TORCH_SKIP: ClassVar[tuple[str, ...]] = ("stage", "stage2")


@irdl_op_definition
class TileGetOp(_TilePutGetOp):
    """``pld.tile.get(dst, peer, src, stage, stage2=None, dst_offsets=, src_offsets=, shape=)``:
    ``pld.tensor.get`` staged through the Vec tile ``stage``."""

    name = "pld.tile.get"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = (*_TilePutGetOp._STAGES, *_PutGetOp._TAIL)
    TORCH_CALL: ClassVar[str | None] = "_pld.get"
    TORCH_SKIP: ClassVar[tuple[str, ...]] = ("stage", "stage2")


@irdl_op_definition
class TensorRemoteStoreOp(_RemoteStoreOp):
    """``pld.tensor.remote_store(src, target, peer, offsets, atomic=)``: the tensor-level form of
    ``pld.tile.remote_store`` (a computed tensor pushed into ``peer``'s window ``target``)."""

    NO_PTO: ClassVar[str | None] = None  # lowered to pto.comm.* (ptoas/codegen/comm_ops.py)

    name = "pld.tensor.remote_store"
    src = operand_def(TensorType)
    target = operand_def(TensorType)
    peer = operand_def()
    offsets = var_operand_def()
    atomic = opt_prop_def()
    result = result_def(TensorType)
    SOURCE: ClassVar[str] = "src"
    SOURCE_KIND: ClassVar[str] = "tensor"
    DSL_ARGS: ClassVar[tuple[Arg, ...]] = _RemoteStoreOp.dsl_args("src")


@irdl_op_definition
class SystemDeferWaitOp(_WaitOp):
    """``pld.system.defer_wait(signal, offsets, expected=1, cmp=pld.WaitCmp.Ge)``: a completion condition
    of the enclosing task. The kernel registers it and goes on (its core is released when it ends); the
    task's completion (its consumers, its "done") waits until the condition holds (``pto.comm.twait
    {deferred}`` in ``.pto``; the chip's scheduler defers the task, :mod:`pypto.runtime.scheduler`)."""

    name = "pld.system.defer_wait"

    TORCH_CALL: ClassVar[str | None] = "_pld.defer_wait"
    TORCH_TASKS: ClassVar[bool] = True
    """A torch form with this op marks its task boundaries (``_pld.task(label, deps, manual)``), so the rank
    completes a deferred task before the tasks that depend on it (:mod:`pypto.runtime.distributed.deferred`)."""
    MAY_FOLLOW_DIALECTS: ClassVar[frozenset[str]] = frozenset({"arith", "scf", "func", "index", "math", "builtin"})
    """Scalar work and control flow: these may follow the op in its kernel (upstream's contract)."""
    MAY_FOLLOW_OPS: ClassVar[frozenset[str]] = frozenset({"pld.system.defer_wait", "pld.rank", "pld.nranks",
                                                          "pld.get_comm_ctx", "pl.yield"})

    def may_follow(self, op: Operation) -> bool:
        """Whether ``op`` may come after this op in its kernel (the kernel is never resumed)."""
        return op.name in self.MAY_FOLLOW_OPS or op.name.split(".", 1)[0] in self.MAY_FOLLOW_DIALECTS

    def torch_call(self) -> str:
        """``_pld.defer_wait`` (the torch form defers the task's completion), or the blocking ``_pld.wait``
        when work that is not scalar follows it in its task (upstream forbids it; the codegen names it), so that
        work still reads what the signal announced."""
        op: Operation | None = self
        while op is not None and op.name not in ("func.func", "pl.at"):
            nxt = op.next_op
            while nxt is not None:
                if any(not self.may_follow(inner) for inner in nxt.walk()):
                    return "_pld.wait"
                nxt = nxt.next_op
            op = op.parent_op()
        return "_pld.defer_wait"


PLD_OPS: list[type[PLOp]] = [
    AllreduceOp, BroadcastOp, BarrierOp, AllgatherOp, ReduceScatterOp, AllToAllOp, AllToAllVOp, SystemNotifyOp,
    SystemWaitOp,
    GetCommCtxOp, RankOp, NranksOp, TileRemoteLoadOp, TileRemoteStoreOp, TensorPutOp, TensorGetOp,
    TensorRemoteStoreOp, SystemDeferWaitOp, TilePutOp, TileGetOp,
]

PLD = Dialect("pld", list(PLD_OPS), list(PLD_ENUM_ATTRS.values()))
"""The ``pld`` dialect (load it beside ``pl``: :func:`pypto.core.context.make_context`)."""
PldOp = _PldOp
"""The base of every ``pld`` op (:meth:`_PldOp.pto_blocker`: whether it lowers to ``.pto``)."""
