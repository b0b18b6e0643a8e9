"""Lowering of the kernel-body ``pld`` ops to PTOAS's cross-rank ops (``pto.comm.*``, :mod:`..dialect.comm_ops`).

As upstream PyPTO lowers them (``src/backend/common/pto_ops_distributed.cpp``), with the peer address
arithmetic as one ``pto.comm.peer_view``::

    pld.get_comm_ctx(t)               -> (nothing: the context is implicit)
    pld.rank / pld.nranks             -> pto.comm.get_rank / get_nranks : i64, index_cast to index
    pld.tile.remote_load(t, p, o, s)  -> peer_view + partition_view + alloc_tile + tload
    pld.tile.remote_store(x, t, p, o) -> peer_view + partition_view + tstore [atomicType]
    pld.tensor.put(dst, p, src, ...)  -> peer_view(dst) + two partition_views + pto.comm.tput [atomicType]
    pld.tensor.get(dst, p, src, ...)  -> peer_view(src) + two partition_views + pto.comm.tget
    pld.tile.put / get(..., stage)    -> as pld.tensor.put / get, with buf(%stage[, %stage2]) on the tput / tget
    pld.system.notify(s, p, o, v)     -> peer_view + one-cell partition_view + pto.comm.tnotify {notifyOp}
    pld.system.wait / defer_wait      -> one-cell partition_view + pto.comm.twait {cmp} (defer_wait: {deferred})

    pld.tensor.remote_store(x, t, p, o) -> peer_view(t) + two partition_views + pto.comm.tput [atomicType]
    pld.tensor.barrier(sig)           -> per rank p: tnotify(peer_view(sig, p)[me], +1); per rank q:
                                         twait(sig[q] >= 1) + tnotify(sig[q], -1) (a credit barrier)

The in-kernel collectives (allreduce, broadcast, allgather, reduce_scatter, all_to_all, all_to_all_v) arrive here
already expanded into the ops above (LowerCompositeOps, ``pypto/passes/lower_composite_ops/collectives.py``). Not
lowered (their ``pto_blocker()`` says why): the collectives of dynamic shapes, no
signal, ``core_num > 1`` or a mesh over 64 KiB; a per-rank program with them runs as its torch form
(:mod:`pypto.driver.comm_program`).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IndexType, IntegerType, UnitAttr, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue

from pypto.diagnostics import error_at
from pypto.dialects import distributed_ops as D
from pypto.dialects.distributed_enums import NotifyOp, WaitCmp
from pypto.dialects.enums import AtomicType, AtomicTypeAttr
from pypto.dialects.types import TensorType
from pypto.ptoas.dialect import comm_ops as C
from pypto.ptoas.dialect.attrs import AtomicType as PtoAtomicType
from pypto.ptoas.dialect.attrs import AtomicTypeAttr as PtoAtomicTypeAttr
from pypto.ptoas.dialect.tile_ops import TLoadOp, TStoreOp
from pypto.ptoas.dialect.view_ops import PartitionViewOp

from .state import LoweringState, TileRef, check
from .tile_ops import _dps, _result
from .types import partition_view_type


def _index(st: LoweringState, v: SSAValue, at: Operation) -> SSAValue:
    """A pl scalar as an ``index`` (a rank computed in INT32 is cast)."""
    s = st.scalar(v, at)
    if isinstance(s.type, IndexType):
        return s
    return st.emit(arith.IndexCastOp(s, IndexType()), at).results[0]


def _i32(st: LoweringState, v: SSAValue | None, at: Operation) -> SSAValue:
    """A signal value as ``i32`` (absent: 1)."""
    if v is None:
        return st.const(1, i32)
    s = st.scalar(v, at)
    if isinstance(s.type, IndexType):
        return st.emit(arith.IndexCastOp(s, i32), at).results[0]
    if isinstance(s.type, IntegerType) and s.type.width.data != 32:
        cls = arith.TruncIOp if s.type.width.data > 32 else arith.ExtSIOp
        return st.emit(cls(s, i32), at).results[0]
    return s


def _peer_view(st: LoweringState, tensor: SSAValue, peer: SSAValue, at: Operation) -> SSAValue:
    return _peer_view_at(st, tensor, _index(st, peer, at), at)


def _peer_view_at(st: LoweringState, tensor: SSAValue, peer: SSAValue, at: Operation) -> SSAValue:
    """``pto.comm.peer_view`` of ``tensor``'s view on rank ``peer`` (an ``index``)."""
    view = st.view(tensor, at)
    op = C.PeerViewOp.build(operands=[view, peer], result_types=[view.type])
    op.result.name_hint = f"{tensor.name_hint}_peer" if tensor.name_hint else None
    st.emit(op, at)
    return op.result


def _partition(st: LoweringState, at: Operation, view: SSAValue, t: Attribute, offsets: list[SSAValue],
               sizes: list[int]) -> SSAValue:
    """``pto.partition_view`` of ``view`` (of pl tensor type ``t``) at ``offsets`` (none: origin) with ``sizes``."""
    return _partition_at(st, at, view, t, [_index(st, o, at) for o in offsets], sizes)


def _partition_at(st: LoweringState, at: Operation, view: SSAValue, t: Attribute, offs: list[SSAValue],
                  sizes: list[int]) -> SSAValue:
    """:func:`_partition` with the offsets already ``index`` values."""
    assert isinstance(t, TensorType)
    rank = len(t.get_shape())
    offs = offs or [st.const(0)] * rank
    if len(offs) != rank or len(sizes) != rank:
        raise error_at(at, f"ptoas codegen: '{at.name}' window rank differs from the tensor's {rank}")
    pv_type = partition_view_type(list(sizes), t.element_type)
    op = PartitionViewOp.build(operands=[view, offs, [st.const(s) for s in sizes]], result_types=[pv_type])
    st.emit(op, at)
    return op.result


def _atomic_attrs(src: Operation) -> dict[str, Attribute]:
    atomic = src.properties.get("atomic")
    if isinstance(atomic, AtomicTypeAttr) and atomic.data is AtomicType.Add:
        return {"atomicType": PtoAtomicTypeAttr(PtoAtomicType.atomic_add)}
    return {}


def _emit(st: LoweringState, op: Operation, src: Operation) -> None:
    check(op, src)
    st.emit(op, src)


def lower_comm_ctx(st: LoweringState, src: Operation) -> None:
    """The context is implicit in the ``pto.comm`` ops: a placeholder index."""
    st.scalars[src.results[0]] = st.const(0)


def lower_rank_query(st: LoweringState, src: Operation) -> None:
    cls = C.GetRankOp if isinstance(src, D.RankOp) else C.GetNranksOp
    q = st.emit(cls.build(result_types=[i64]), src)
    cast = st.emit(arith.IndexCastOp(q.results[0], IndexType()), src)
    cast.results[0].name_hint = src.results[0].name_hint
    st.scalars[src.results[0]] = cast.results[0]


def lower_remote_load(st: LoweringState, src: Operation) -> None:
    assert isinstance(src, D.TileRemoteLoadOp)
    shape = [int(d) for d in src.shape.get_values()]  # type: ignore[union-attr]
    rows, cols = ([1, *shape] if len(shape) == 1 else shape)[-2:]
    dst: TileRef = _result(st, src, (st.const(rows), st.const(cols)))
    pv = _partition(st, src, _peer_view(st, src.target, src.peer, src), src.target.type, list(src.offsets), shape)
    _dps(st, src, TLoadOp, [pv], dst)


def lower_remote_store(st: LoweringState, src: Operation) -> None:
    assert isinstance(src, D.TileRemoteStoreOp)
    tile = st.tile(src.tile, src)
    t = src.target.type
    assert isinstance(t, TensorType)
    ts = src.tile.type.get_shape()  # type: ignore[union-attr]
    sizes = [1] * (len(t.get_shape()) - len(ts)) + [int(d) for d in ts]
    pv = _partition(st, src, _peer_view(st, src.target, src.peer, src), t, list(src.offsets), sizes)
    _dps(st, src, TStoreOp, [tile.value, []], pv, **_atomic_attrs(src))
    st.views[src.results[0]] = st.view(src.target, src)


def lower_tensor_remote_store(st: LoweringState, src: Operation) -> None:
    """A local tensor pushed into ``peer``'s window: one ``pto.comm.tput`` (as ``pld.tensor.put``)."""
    assert isinstance(src, D.TensorRemoteStoreOp)
    t, s = src.target.type, src.src.type
    assert isinstance(t, TensorType) and isinstance(s, TensorType)
    shape = [int(d) for d in s.get_shape()]
    sizes = [1] * (len(t.get_shape()) - len(shape)) + shape
    if len(sizes) != len(shape):  # a lower-rank source: one partition of the target's rank
        raise error_at(src, "ptoas codegen: 'pld.tensor.remote_store' needs 'src' of the rank of 'target'")
    dst = _partition(st, src, _peer_view(st, src.target, src.peer, src), t, list(src.offsets), sizes)
    source = _partition(st, src, st.view(src.src, src), s, [], shape)
    _emit(st, C.TPutOp.build(operands=[dst, source, []], attributes=_atomic_attrs(src)), src)
    st.views[src.results[0]] = st.view(src.target, src)


def lower_barrier(st: LoweringState, src: Operation) -> None:
    """A credit barrier on the ``[world_size(, lanes)]`` signal, unrolled over the ``world_size`` ranks::

        for p in ranks: tnotify(peer_view(sig, p)[me, 0..], 1, atomic_add)   # "I arrived", to everyone
        for q in ranks: twait(sig[q, 0..] >= 1); tnotify(sig[q, 0..], -1)     # consume q's credit

    Each cell counts the barriers its rank entered that this rank has not passed yet, so the barrier
    clears itself and may run again (a fast rank's next arrival is a credit kept for the next one).
    """
    assert isinstance(src, D.BarrierOp)
    t = src.signal.type
    assert isinstance(t, TensorType)
    shape = list(t.get_shape())
    world = int(shape[0])
    if world < 1:
        raise error_at(src, "ptoas codegen: 'pld.tensor.barrier' needs a signal of static shape [world_size(, lanes)]")
    q = st.emit(C.GetRankOp.build(result_types=[i64]), src)
    me = st.emit(arith.IndexCastOp(q.results[0], IndexType()), src).results[0]
    ones, rest = [1] * len(shape), [st.const(0)] * (len(shape) - 1)
    add = {"notifyOp": C.NotifyOpAttr(C.NotifyOp.atomic_add)}
    for p in range(world):
        cell = _partition_at(st, src, _peer_view_at(st, src.signal, st.const(p), src), t, [me, *rest], ones)
        _emit(st, C.TNotifyOp.build(operands=[cell, st.const(1, i32)], attributes=add), src)
    own = st.view(src.signal, src)
    for p in range(world):
        cell = _partition_at(st, src, own, t, [st.const(p), *rest], ones)
        _emit(st, C.TWaitOp.build(operands=[cell, st.const(1, i32)],
                                  attributes={"cmp": C.WaitCmpAttr(C.WaitCmp.ge)}), src)
        _emit(st, C.TNotifyOp.build(operands=[cell, st.const(-1, i32)], attributes=add), src)
    st.views[src.results[0]] = own


def _transfer_shape(src: D.TensorPutOp | D.TensorGetOp | D.TilePutOp | D.TileGetOp) -> list[int]:
    shape = src.properties.get("shape")
    if shape is not None:
        return [int(d) for d in shape.get_values()]  # type: ignore[attr-defined]
    return [int(d) for d in src.src.type.get_shape()]  # type: ignore[union-attr]


def lower_put_get(st: LoweringState, src: Operation) -> None:
    """``pld.tensor.put`` / ``get`` and their tile forms ``pld.tile.put`` / ``get``, whose staging tile(s) go
    into ``buf(...)``."""
    assert isinstance(src, D.TensorPutOp | D.TensorGetOp | D.TilePutOp | D.TileGetOp)
    shape = _transfer_shape(src)
    put = isinstance(src, D.TensorPutOp | D.TilePutOp)
    stages = ([st.tile(v, src).value for v in (src.stage, src.stage2) if v is not None]
              if isinstance(src, D.TilePutOp | D.TileGetOp) else [])
    dst_view = _peer_view(st, src.dst, src.peer, src) if put else st.view(src.dst, src)
    src_view = st.view(src.src, src) if put else _peer_view(st, src.src, src.peer, src)
    dst = _partition(st, src, dst_view, src.dst.type, list(src.dst_offsets), shape)
    source = _partition(st, src, src_view, src.src.type, list(src.src_offsets), shape)
    cls = C.TPutOp if put else C.TGetOp
    _emit(st, cls.build(operands=[dst, source, stages], attributes=_atomic_attrs(src) if put else {}), src)
    st.views[src.results[0]] = st.view(src.dst, src)


_NOTIFY = {NotifyOp.AtomicAdd: C.NotifyOp.atomic_add, NotifyOp.Set: C.NotifyOp.set}


def lower_notify(st: LoweringState, src: Operation) -> None:
    assert isinstance(src, D.SystemNotifyOp)
    t = src.target.type
    assert isinstance(t, TensorType)
    cell = _partition(st, src, _peer_view(st, src.target, src.peer, src), t, list(src.offsets), [1] * len(t.get_shape()))
    kind = NotifyOp(src.op.data) if src.op is not None else NotifyOp.AtomicAdd
    attrs = {"notifyOp": C.NotifyOpAttr(_NOTIFY[kind])}
    _emit(st, C.TNotifyOp.build(operands=[cell, _i32(st, src.value, src)], attributes=attrs), src)
    st.views[src.results[0]] = st.view(src.target, src)


def check_deferred_tail(src: D.SystemDeferWaitOp) -> None:
    """Upstream's deferred-wait contract: the kernel is never resumed once the condition holds, so after
    ``pld.system.defer_wait`` it may only do scalar work and register more conditions; reading the
    payload, storing and other communication belong to a consumer task (``deps=[wait_tid]``)."""
    op: Operation | None = src
    while op is not None and not isinstance(op, func.FuncOp):
        nxt = op.next_op
        while nxt is not None:
            for inner in nxt.walk():
                if src.may_follow(inner):  # scalar work, more defer_waits (the op class's facts)
                    continue
                raise error_at(inner, f"'{inner.name}' after 'pld.system.defer_wait' in the same kernel: the kernel "
                               "is not resumed when the condition holds, so only scalar work and further "
                               "defer_waits may follow it", hint="move the work into a task with deps=[<the waiter's "
                               "task handle>] (with pl.at(...) as wait_tid: ...), or use the blocking "
                               "pld.system.wait")
            nxt = nxt.next_op
        op = op.parent_op()


def lower_wait(st: LoweringState, src: Operation) -> None:
    assert isinstance(src, D.SystemWaitOp | D.SystemDeferWaitOp)
    if isinstance(src, D.SystemDeferWaitOp):
        check_deferred_tail(src)
    t = src.signal.type
    assert isinstance(t, TensorType)
    cell = _partition(st, src, st.view(src.signal, src), t, list(src.offsets), [1] * len(t.get_shape()))
    cmp = WaitCmp(src.cmp.data) if src.cmp is not None else WaitCmp.Ge
    attrs: dict[str, Any] = {"cmp": C.WaitCmpAttr(C.WaitCmp(cmp.value.lower()))}
    if isinstance(src, D.SystemDeferWaitOp):
        attrs["deferred"] = UnitAttr()
    _emit(st, C.TWaitOp.build(operands=[cell, _i32(st, src.expected, src)], attributes=attrs), src)
    st.views[src.results[0]] = st.view(src.signal, src)


COMM_HANDLERS = {
    D.GetCommCtxOp: lower_comm_ctx,
    D.RankOp: lower_rank_query,
    D.NranksOp: lower_rank_query,
    D.TileRemoteLoadOp: lower_remote_load,
    D.TileRemoteStoreOp: lower_remote_store,
    D.TensorPutOp: lower_put_get,
    D.TensorGetOp: lower_put_get,
    D.TilePutOp: lower_put_get,
    D.TileGetOp: lower_put_get,
    D.SystemNotifyOp: lower_notify,
    D.SystemWaitOp: lower_wait,
    D.SystemDeferWaitOp: lower_wait,
    D.TensorRemoteStoreOp: lower_tensor_remote_store,
    D.BarrierOp: lower_barrier,
}
"""pld op class -> handler."""
