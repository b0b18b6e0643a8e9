"""Sync and runtime queries.

- ``set_flag[<P>, <Q>, <E>]`` -> ``set_flag(P, Q, E);`` (``_dyn`` forms, as PTOAS:
  ``event_t v = (event_t) e; set_flag(P, Q, v);``), same for ``wait_flag``;
- event-id arrays (PTOAS's shape): ``PTOAS_EventIdArray<N> a;``, ``a[i] = v;``, ``int32_t e = a[i];``;
- ``barrier <P>`` -> ``pipe_barrier(P);``;
- ``record_event`` / ``wait_event`` / ``barrier_sync`` -> the same calls on the pipes of their
  op types (pto-dialect.md §5);
- ``sync.set`` / ``sync.wait`` (cross-core) -> ``ffts_cross_core_sync(P, id);`` / ``wait_flag_dev(id);``;
- ``get_block_idx`` & co -> ``int64_t v = get_block_idx();``;
- ``section.cube`` / ``section.vector`` -> ``#if defined(__DAV_CUBE__)`` ... ``#endif``.
"""

from __future__ import annotations

from xdsl.ir import Operation

from pypto.ptoas.dialect.attrs import SYNC_OP_PIPE, SyncOpType
from pypto.ptoas.dialect.isa_misc_ops import DeclareEventIdArrayOp, EventIdArrayGetOp, EventIdArraySetOp
from pypto.ptoas.dialect.misc_ops import (
    GetBlockIdxOp,
    GetBlockNumOp,
    GetSubBlockIdxOp,
    GetSubBlockNumOp,
    SectionCubeOp,
    SectionVectorOp,
)
from pypto.ptoas.dialect.sync_ops import (
    BarrierOp,
    BarrierSyncOp,
    RecordEventOp,
    SetFlagDynOp,
    SetFlagOp,
    SyncSetOp,
    SyncWaitOp,
    WaitEventOp,
    WaitFlagDynOp,
    WaitFlagOp,
)

from .context import FuncContext, handles


@handles(SetFlagOp, WaitFlagOp)
def _flag(ctx: FuncContext, op: Operation) -> None:
    src, dst, ev = (op.properties[k].data.value for k in ("src_pipe", "dst_pipe", "event_id"))  # type: ignore[attr-defined]
    ctx.line(f"{op.name[4:]}({src}, {dst}, {ev});")


@handles(SetFlagDynOp, WaitFlagDynOp)
def _flag_dyn(ctx: FuncContext, op: Operation) -> None:
    src, dst = (op.properties[k].data.value for k in ("src_pipe", "dst_pipe"))  # type: ignore[attr-defined]
    ev = ctx.fresh()
    ctx.line(f"event_t {ev} = (event_t) {ctx.name(op.operands[0], op)};")
    ctx.line(f"{op.name[4:].removesuffix('_dyn')}({src}, {dst}, {ev});")


@handles(DeclareEventIdArrayOp)
def _eventid_array(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, DeclareEventIdArrayOp)
    ctx.comment(op.array)
    ctx.line(f"PTOAS_EventIdArray<{op.array.type.size.data}> {ctx.define(op.array)};")


@handles(EventIdArraySetOp)
def _eventid_array_set(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, EventIdArraySetOp)
    ctx.line(f"{ctx.name(op.array, op)}[{ctx.name(op.index, op)}] = {ctx.name(op.value, op)};")


@handles(EventIdArrayGetOp)
def _eventid_array_get(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, EventIdArrayGetOp)
    array, index = ctx.name(op.array, op), ctx.name(op.index, op)
    ctx.line(f"int32_t {ctx.define(op.result)} = {array}[{index}];")


@handles(BarrierOp)
def _barrier(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, BarrierOp)
    ctx.line(f"pipe_barrier({op.pipe_attr.data.value});")


@handles(RecordEventOp, WaitEventOp)
def _event(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, RecordEventOp | WaitEventOp)
    src, dst = op.pipes()
    call = "set_flag" if isinstance(op, RecordEventOp) else "wait_flag"
    ctx.line(f"{call}({src.value}, {dst.value}, {op.event_id.data.value});")


@handles(BarrierSyncOp)
def _barrier_sync(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, BarrierSyncOp)
    ctx.line(f"pipe_barrier({SYNC_OP_PIPE[SyncOpType(op.op_type.data)].value});")


@handles(SyncSetOp, SyncWaitOp)
def _cross_core(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, SyncSetOp | SyncWaitOp)
    event = op.event_id.value.data
    if isinstance(op, SyncSetOp):
        ctx.line(f"ffts_cross_core_sync({op.pipe_attr.data.value}, {event});")
    else:
        ctx.line(f"wait_flag_dev({event});")


QUERIES = {
    GetBlockIdxOp: "get_block_idx",
    GetBlockNumOp: "get_block_num",
    GetSubBlockIdxOp: "get_subblockid",
    GetSubBlockNumOp: "get_subblockdim",
}


@handles(*QUERIES)
def _query(ctx: FuncContext, op: Operation) -> None:
    name = ctx.define(op.results[0])
    ctx.line(f"int64_t {name} = {QUERIES[type(op)]}();")


@handles(SectionCubeOp, SectionVectorOp)
def _section(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, SectionCubeOp | SectionVectorOp)
    macro = "__DAV_CUBE__" if isinstance(op, SectionCubeOp) else "__DAV_VEC__"
    ctx.line(f"#if defined({macro})")
    ctx.emit_block(op.body.block)
    ctx.line(f"#endif // {macro}")
