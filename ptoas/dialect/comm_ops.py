"""PTOAS's cross-rank communication ops (``pto.comm.*``, the PTO-ISA TNOTIFY / TWAIT / TPUT / TGET),
in the text form upstream PyPTO's codegen emits them, plus the rank queries and the peer view.

::

    %r = pto.comm.get_rank : i64                 %n = pto.comm.get_nranks : i64
    %pv = pto.comm.peer_view %view, %peer : !pto.tensor_view<1x64xf32>
    pto.comm.tnotify(%sig_pv, %v : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op atomic_add>}
    pto.comm.twait(%sig_pv, %e : !pto.partition_tensor_view<1x1xi32>, i32) {cmp = #pto<wait_cmp ge>}
    pto.comm.twait(%sig_pv, %e : ...) {cmp = #pto<wait_cmp ge>, deferred}      (pld.system.defer_wait)
    pto.comm.tput(%dst_pv, %src_pv : T, T) {atomicType = #pto<atomic_type atomic_none>}
    pto.comm.tget(%dst_pv, %src_pv : T, T)
    pto.comm.tput(%dst_pv, %src_pv, buf(%stage : !pto.tile_buf<...>) : T, T)      (pld.tile.put / get)

Differences from upstream's emission, on purpose:

- upstream computes a peer's address from the CommContext table (``pto.load_scalar`` of the
  rank's window base, ``pto.addptr``, ``pto.make_tensor_view``); here ``pto.comm.peer_view`` stands
  for that arithmetic: the same view on ``peer``'s region of the same window buffer. ``get_rank`` /
  ``get_nranks`` stand for the two CommContext scalar loads;
- upstream's TPUT / TGET always take a ``buf(%stage)`` UB staging tile (its ConvertTensorToTileOps makes one
  for ``pld.tensor.put``); here only ``pld.tile.put`` / ``get`` carry one (``buf(%stage : type)``, the
  stage's type beside it), and the simulator moves GM to GM and prices the link the same either way;
- upstream lowers ``pld.system.defer_wait`` to no PTOAS op (an adapter registers a counter
  ``CompletionToken`` with the Simpler runtime's ``AsyncCtx``); here it is ``twait`` marked ``deferred``:
  the kernel registers the condition and goes on, and the chip's scheduler completes the task (releases
  its consumers) only once the condition holds (:mod:`pypto.runtime.scheduler`).

On the simulator (``pypto/device/interpreter/comm_impls.py``) these run against the rank's window
buffers (``/dev/shm``) and signals (``torch.distributed``), timed on their pipe from the target's
link line. In the C++ of ``pto_cpu.hpp`` each is a documented trap (one process holds one rank).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IndexType, IntegerType, UnitAttr, i64
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.str_enum import StrEnum

from .attrs import AtomicTypeAttr, Pipe
from .base import PTOOp
from .types import PartitionTensorViewType, TensorViewType, TileBufType


class NotifyOp(StrEnum):
    """``set`` or ``atomic_add`` the peer's signal cell."""

    set = "set"
    atomic_add = "atomic_add"


class WaitCmp(StrEnum):
    """How ``twait`` compares the local cell with the expected value (upstream: eq, ge; the rest: ours)."""

    eq = "eq"
    ne = "ne"
    gt = "gt"
    ge = "ge"
    lt = "lt"
    le = "le"


@irdl_attr_definition
class NotifyOpAttr(EnumAttribute[NotifyOp], SpacedOpaqueSyntaxAttribute):
    """``#pto<notify_op atomic_add>`` (tnotify ``notifyOp``)."""

    name = "pto.notify_op"


@irdl_attr_definition
class WaitCmpAttr(EnumAttribute[WaitCmp], SpacedOpaqueSyntaxAttribute):
    """``#pto<wait_cmp ge>`` (twait ``cmp``)."""

    name = "pto.wait_cmp"


class _RankQueryOp(PTOOp):
    """A CommContext scalar: i64."""

    OUTSIDE_RUN: ClassVar[bool] = True

    result = result_def(i64)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `:` type($result)"


@irdl_op_definition
class GetRankOp(_RankQueryOp):
    """This rank's id (upstream: the low half of the CommContext's (rankId, rankNum) slot)."""

    name = "pto.comm.get_rank"


@irdl_op_definition
class GetNranksOp(_RankQueryOp):
    """The world size (the high half of that slot)."""

    name = "pto.comm.get_nranks"


@irdl_op_definition
class PeerViewOp(PTOOp):
    """``view`` as it lies on ``peer``'s region of the same window buffer (upstream: addptr by the
    CommContext's peer offset + make_tensor_view)."""

    OUTSIDE_RUN: ClassVar[bool] = True

    name = "pto.comm.peer_view"
    view = operand_def(TensorViewType)
    peer = operand_def(IndexType)
    result = result_def(TensorViewType)
    traits = traits_def(Pure())
    assembly_format = "$view `,` $peer attr-dict `:` type($view) `->` type($result)"

    def verify_(self) -> None:
        """The peer's view has the local view's type."""
        if self.result.type != self.view.type:
            raise self.fail("expects the peer view to have the type of the local view")


class _CommOp(PTOOp):
    """A pipe op of the comm family (``PIPE`` is the pipe the simulator times it on)."""

    OUTSIDE_RUN: ClassVar[bool] = True

    PIPE: ClassVar[Pipe] = Pipe.PIPE_MTE3
    INSTR: ClassVar[str] = ""

    def pipe(self) -> Pipe | None:
        """The op's pipe."""
        return self.PIPE


class _SignalOp(_CommOp):
    cell = operand_def(PartitionTensorViewType)
    value = operand_def(IntegerType)
    assembly_format = "`(` $cell `,` $value `:` type($cell) `,` type($value) `)` attr-dict"

    def verify_(self) -> None:
        """One i32 cell."""
        t = self.cell.type
        assert isinstance(t, PartitionTensorViewType)
        if not (isinstance(t.element_type, IntegerType) and t.element_type.width.data == 32):
            raise self.fail("expects the signal cell to be i32")
        if any(d != 1 for d in t.get_shape()):
            raise self.fail("expects the signal view to be one cell (every size 1)")


@irdl_op_definition
class TNotifyOp(_SignalOp):
    """TNOTIFY: set or atomically add ``value`` into a (peer's) signal cell."""

    name = "pto.comm.tnotify"
    notifyOp = opt_attr_def(NotifyOpAttr)  # noqa: N815
    PIPE: ClassVar[Pipe] = Pipe.PIPE_MTE3
    INSTR: ClassVar[str] = "TNOTIFY"


@irdl_op_definition
class TWaitOp(_SignalOp):
    """TWAIT: block until the local signal cell compares true with ``value``; with ``deferred``
    (``pld.system.defer_wait``) register that as a completion condition of the task instead and go on."""

    name = "pto.comm.twait"
    cmp = opt_attr_def(WaitCmpAttr)
    deferred = opt_attr_def(UnitAttr)
    PIPE: ClassVar[Pipe] = Pipe.PIPE_S
    INSTR: ClassVar[str] = "TWAIT"


class _CopyOp(_CommOp):
    """GM to GM, optionally through ``buf(%stage[, %stage2])``: the UB staging tile(s) of ``pld.tile.put`` /
    ``get`` (upstream's emission; the ISA slides the transfer through a stage in stage-sized chunks)."""

    dst = operand_def(PartitionTensorViewType)
    src = operand_def(PartitionTensorViewType)
    stage = var_operand_def(TileBufType)
    assembly_format = ("`(` $dst `,` $src (`,` `buf` `(` $stage^ `:` type($stage) `)`)? `:` type($dst) `,` "
                       "type($src) `)` attr-dict")

    def verify_(self) -> None:
        """One element type and one shape; at most two stages, each of that element type."""
        d, s = self.dst.type, self.src.type
        assert isinstance(d, PartitionTensorViewType) and isinstance(s, PartitionTensorViewType)
        if d.element_type != s.element_type:
            raise self.fail("expects src and dst to have the same element type")
        if list(d.get_shape()) != list(s.get_shape()):
            raise self.fail("expects src and dst to have the same shape")
        if len(self.stage) > 2:
            raise self.fail("expects at most two staging tiles (ping, pong)")
        for st in self.stage:
            if st.type.dtype != d.element_type:  # type: ignore[attr-defined]
                raise self.fail("expects the staging tile to have the element type of src and dst")


@irdl_op_definition
class TPutOp(_CopyOp):
    """TPUT: copy (or atomically add) a local GM region into a peer's (synchronous)."""

    name = "pto.comm.tput"
    atomicType = opt_attr_def(AtomicTypeAttr)  # noqa: N815
    PIPE: ClassVar[Pipe] = Pipe.PIPE_MTE3
    INSTR: ClassVar[str] = "TPUT"


@irdl_op_definition
class TGetOp(_CopyOp):
    """TGET: copy a peer's GM region into a local one (synchronous)."""

    name = "pto.comm.tget"
    PIPE: ClassVar[Pipe] = Pipe.PIPE_MTE2
    INSTR: ClassVar[str] = "TGET"


COMM_OPS: tuple[type[PTOOp], ...] = (GetRankOp, GetNranksOp, PeerViewOp, TNotifyOp, TWaitOp, TPutOp, TGetOp)
COMM_ATTRS = (NotifyOpAttr, WaitCmpAttr)
