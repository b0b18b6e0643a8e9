"""C++ of the ISA ops beyond PyPTO's subset (``pto`` dialect ``isa_*`` modules): pto-isa calls
with the destination first, then the ``ins`` in order, then attribute arguments.

::

    pto.tfmod ins(%a, %b) outs(%d)                 ->  TFMOD(d, a, b);
    pto.tci ins(%s {descending = true}) outs(%d)   ->  TCI<Tile<...>, int32_t, 1>(d, s);
    pto.ttri ins(%k {upperOrLower = 1}) outs(%d)   ->  TTRI<Tile<...>, 1>(d, k);
    pto.tquant / tdequant / thistogram / tsort32 / .mx ... -> TQUANT<pto::QuantType::INT8_SYM>(d, s, fp); ...
        (PTOAS's call shapes; pto_cpu.hpp runs tquant, tdequant, tsort32, tgatherb, thistogram, tpack,
        tget_scale_addr, and fails the mx and fixpipe ones at run time)
    pto.mgather {gatherOob = #pto<gather_oob clamp>}  ->  MGATHER<pto::GatherOOB::Clamp>(d, mem, idx);
    pto.mscatter {scatterAtomicOp = add, ...}       ->  MSCATTER<pto::ScatterAtomicOp::Add[, pto::ScatterOOB::..]>(mem, s, idx);
    %v = pto.tgetval ins(%t, %i) outs : f32        ->  const float v = TGETVAL(t, i);
    pto.tprefetch / pto.tsync                      ->  TPREFETCH(d, s); / TSYNC(a, b);   (no-ops on the CPU)
    pto.trap                                       ->  trap();
    pto.tmrgsort (format 2)                        ->  TMRGSORT<Dst, Tmp, Src.., exhausted>(dst, executed, tmp, src..);
    pto.trandom ins(k0, k1, c0..c3) outs(%d)      ->  PTOAS__TRANDOM<rounds>(d, k0, k1, c0..c3);  (+ its helper)
    %s = pto.build_async_session(%scratch, %ws)     ->  pto::comm::AsyncSession s; pto::comm::sdma::SdmaBaseConfig c = {..};
                                                        pto::comm::BuildAsyncSession<pto::comm::DmaEngine::SDMA>(scratch, ws, s, id, c, grp);
    %e = pto.tput_async(%dst, %src, %s)            ->  pto::comm::AsyncEvent e = pto::comm::TPUT_ASYNC<pto::comm::DmaEngine::SDMA>(gd, gs, s);
    %ok = pto.wait_async_event(%e, %s)             ->  bool ok = e.Wait(s);     (test_async_event: e.Test(s))
    pto.print ins("fmt", %x)                       ->  cce::printf("fmt", x);
"""

from __future__ import annotations

from xdsl.ir import Operation

from pypto.ptoas.dialect import isa_misc_ops as IM
from pypto.ptoas.dialect import isa_tile_ops as IT
from pypto.ptoas.dialect.base import DpsOp

from .context import FuncContext, handles
from .cxx_types import element_ctype, value_ctype
from .errors import EmitError


def _targs(op: Operation) -> str:
    """Template arguments of the call, as PTOAS writes them."""
    if isinstance(op, IT.TCIOp):
        desc = 1 if op.descending is not None and op.descending.value.data else 0
        return f"<{value_ctype(op.dst.type)}, {element_ctype(op.start.type)}, {desc}>"
    if isinstance(op, IT.TTriOp):
        return f"<{value_ctype(op.dst.type)}, {0 if op.lower() else 1}>"
    if isinstance(op, IT.THistogramOp):
        return "<false>" if op.isMSB is not None and not op.isMSB.value.data else "<true>"
    if isinstance(op, IT.MGatherOp) and op.gatherOob is not None and op.gatherOob.data.value != "undefined":
        return f"<pto::GatherOOB::{op.gatherOob.data.value.capitalize()}>"
    if isinstance(op, IT.MScatterOp):
        atomic = op.scatterAtomicOp.data.value if op.scatterAtomicOp is not None else "none"
        oob = op.scatterOob.data.value if op.scatterOob is not None else "undefined"
        if atomic == "none" and oob == "undefined":
            return ""
        extra = f", pto::ScatterOOB::{oob.capitalize()}" if oob != "undefined" else ""
        return f"<pto::ScatterAtomicOp::{atomic.capitalize()}{extra}>"
    if isinstance(op, IT.TQuantOp):
        return f"<pto::QuantType::{op.quant_type.data.value if op.quant_type is not None else 'INT8_SYM'}>"
    if isinstance(op, IT.TDequantOp):
        return f"<{value_ctype(op.dst.type)}, {value_ctype(op.src.type)}>"
    return ""


# The mx families are one pto-isa call each (PTOAS's getIntrinsicName).
_INTRINSIC = {cls: ("TMATMUL_MX" if "matmul" in cls.name else "TGEMV_MX") for cls in IT.MX_OPS}


def _call(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, DpsOp)
    args = [ctx.name(v, op) for v in op.outs() + op.ins()]
    name = _INTRINSIC.get(type(op)) or op.name[4:].upper().replace(".", "_")
    ctx.line(f"{name}{_targs(op)}({', '.join(args)});")


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
    IT.TPrefetchOp,
    IT.TSyncOp,
    IT.TSort32Op,
    IT.TGatherBOp,
    IT.TQuantOp,
    IT.TDequantOp,
    IT.THistogramOp,
    IT.TPackOp,
    IT.MGatherOp,
    IT.MScatterOp,
    IT.TGetScaleAddrOp,
    # emitted as PTOAS does; pto_cpu.hpp fails them at run time (not modelled on the CPU):
    IT.TMovFPOp,
    IT.TStoreFPOp,
    IT.TExtractFPOp,
    IT.TInsertFPOp,
    *IT.MX_OPS,
):
    handles(_cls)(_call)


@handles(IT.TGatherOp)
def _tgather(ctx: FuncContext, op: Operation) -> None:
    assert isinstance(op, IT.TGatherOp)
    dst, src = ctx.name(op.dst, op), ctx.name(op.src, op)
    if op.indices is not None:
        tmp = [ctx.name(op.tmp, op)] if op.tmp is not None else []
        ctx.line(f"TGATHER({', '.join([dst, src, ctx.name(op.indices, op), *tmp])});")
        return
    d_t, s_t = value_ctype(op.dst.type), value_ctype(op.src.type)
    if op.cdst is None or op.tmp is None or op.kValue is None:
        pattern = op.maskPattern.data.value if op.maskPattern is not None else "P1111"
        ctx.line(f"TGATHER<{d_t}, {s_t}, MaskPattern::{pattern}>({dst}, {src});")
        return
    cmp = (op.cmpMode.data.value if op.cmpMode is not None else "eq").upper()
    offset = op.offset.value.data if op.offset is not None else 0
    targs = f"{d_t}, {s_t}, {value_ctype(op.cdst.type)}, {value_ctype(op.tmp.type)}, CmpMode::{cmp}, {offset}"
    args = [dst, src, ctx.name(op.kValue, op), ctx.name(op.cdst, op), ctx.name(op.tmp, op)]
    ctx.line(f"TGATHER<{targs}>({', '.join(args)});")


@handles(IT.TMrgSortOp)
def _tmrgsort(ctx: FuncContext, op: Operation) -> None:
    """Format 1: ``TMRGSORT(dst, src, blockLen)``; format 2 (PTOAS's template form):
    ``TMRGSORT<Dst, Tmp, Src0, Src1[, ..], exhausted>(dst, executed, tmp, src0, src1[, ..])``."""
    assert isinstance(op, IT.TMrgSortOp)
    dst = ctx.name(op.dsts[0], op)
    if op.format1():
        assert op.blockLen is not None
        ctx.line(f"TMRGSORT({dst}, {ctx.name(op.srcs[0], op)}, {ctx.name(op.blockLen, op)});")
        return
    assert op.tmp is not None and op.excuted is not None
    exhausted = "true" if op.exhausted is not None and op.exhausted.value.data else "false"
    types = [value_ctype(v.type) for v in (op.dsts[0], op.tmp, *op.srcs)]
    args = [dst, ctx.name(op.excuted, op), ctx.name(op.tmp, op), *(ctx.name(v, op) for v in op.srcs)]
    ctx.line(f"TMRGSORT<{', '.join(types)}, {exhausted}>({', '.join(args)});")


@handles(IT.TRandomOp)
def _trandom(ctx: FuncContext, op: Operation) -> None:
    """``PTOAS__TRANDOM<rounds>(dst, key0, key1, counter0..3)`` (the helper in :data:`HELPERS`)."""
    assert isinstance(op, IT.TRandomOp)
    rounds = op.rounds.value.data if op.rounds is not None else 10
    args = [ctx.name(v, op) for v in (op.dst, op.key0, op.key1, op.counter0, op.counter1, op.counter2, op.counter3)]
    ctx.line(f"PTOAS__TRANDOM<{rounds}>({', '.join(args)});")


HELPERS: dict[type[Operation], str] = {
    IT.TRandomOp: """\
// PTOAS's trandom helper: the key and counter words as pto-isa's TRandomKey / TRandomCounter.
template <uint16_t Rounds, typename DstTile>
static AICORE inline void PTOAS__TRANDOM(DstTile &dst, uint32_t key0, uint32_t key1, uint32_t c0, uint32_t c1,
                                         uint32_t c2, uint32_t c3) {
    TRandomKey key = {key0, key1};
    TRandomCounter counter = {c0, c1, c2, c3};
    TRANDOM<Rounds>(dst, key, counter);
}
""",
}
"""C++ written once before the functions of a module that uses the op (PTOAS's helpers)."""


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


@handles(IM.SetFFTsOp)
def _set_ffts(ctx: FuncContext, op: Operation) -> None:
    """PTOAS's ``set_ffts_base_addr(reinterpret_cast<uint64_t>(p));`` (a no-op on the CPU)."""
    assert isinstance(op, IM.SetFFTsOp)
    ctx.line(f"set_ffts_base_addr(reinterpret_cast<uint64_t>({ctx.name(op.ffts, op)}));")


@handles(IM.TrapOp)
def _trap(ctx: FuncContext, op: Operation) -> None:
    ctx.line("trap();")


# -- async DMA sessions (PTOAS's pto::comm calls) and print --------------------------------------


def _session_attr(op: IM.BuildAsyncSessionOp, key: str, default: int) -> int:
    a = op.attributes.get(key)
    return a.value.data if a is not None else default  # type: ignore[attr-defined]


@handles(IM.BuildAsyncSessionOp)
def _build_async_session(ctx: FuncContext, op: Operation) -> None:
    """PTOAS's three lines: the session, its SDMA base config ``{block_bytes, comm_block_offset, queue_num}``
    and ``pto::comm::BuildAsyncSession<pto::comm::DmaEngine::SDMA>(scratch, (__gm__ uint8_t*) ws, session,
    sync_id, cfg, channel_group_idx)``."""
    assert isinstance(op, IM.BuildAsyncSessionOp)
    scratch, ws = ctx.name(op.scratch, op), ctx.name(op.workspace, op)
    session = ctx.define(op.session)
    ctx.line(f"pto::comm::AsyncSession {session};")
    cfg = ctx.fresh()
    block = _session_attr(op, "block_bytes", 32 * 1024)
    offset = _session_attr(op, "comm_block_offset", 0)
    queues = _session_attr(op, "queue_num", 1)
    ctx.line(f"pto::comm::sdma::SdmaBaseConfig {cfg} = {{{block}ULL, {offset}ULL, {queues}u}};")
    sync_id = _session_attr(op, "sync_id", 0)
    group = op.attributes.get("channel_group_idx")
    group_s = f"{group.value.data}u" if group is not None else "UINT32_MAX"  # type: ignore[attr-defined]
    ctx.line(
        f"pto::comm::BuildAsyncSession<pto::comm::DmaEngine::SDMA>({scratch}, (__gm__ uint8_t*) {ws}, {session}, "
        f"{sync_id}u, {cfg}, {group_s});"
    )


def _peer_source(value: object) -> bool:
    """Whether a GM operand is (a view of) another rank's window: a ``pto.comm.peer_view`` result."""
    from pypto.ptoas.dialect.comm_ops import PeerViewOp
    from pypto.ptoas.dialect.view_ops import PartitionViewOp

    seen = value
    for _ in range(8):
        owner = getattr(seen, "owner", None)
        if isinstance(owner, PeerViewOp):
            return True
        if isinstance(owner, PartitionViewOp):
            seen = owner.source
            continue
        return False
    return False


def _global_tensor(ctx: FuncContext, op: Operation, value: object) -> str:
    """The ``GlobalTensor`` of a flat (logical) 1-D GM operand: a ``partition_view``'s own, else PTOAS's
    ``Shape<1, 1, 1, 1, N>`` / ``Stride<N, N, N, N, 1>`` over the memref's (tensor view's) pointer."""
    from xdsl.dialects.builtin import MemRefType

    from pypto.ptoas.dialect.types import TensorViewType

    t = value.type  # type: ignore[attr-defined]
    if isinstance(t, MemRefType):
        ptr = ctx.name(value, op)  # type: ignore[arg-type]
    elif isinstance(t, TensorViewType):
        ptr = ctx.views[value].ptr  # type: ignore[index]
    else:
        return ctx.name(value, op)  # type: ignore[arg-type]
    n = t.get_shape()[-1]
    shape_t, stride_t = f"pto::Shape<1, 1, 1, 1, {n}>", f"pto::Stride<{n}, {n}, {n}, {n}, 1>"
    gt_t = f"GlobalTensor<{element_ctype(t.element_type)}, {shape_t}, {stride_t}, pto::Layout::ND>"
    v_shape, v_stride, gt = ctx.fresh(), ctx.fresh(), ctx.fresh()
    ctx.line(f"{shape_t} {v_shape} = {shape_t}();")
    ctx.line(f"{stride_t} {v_stride} = {stride_t}();")
    ctx.line(f"{gt_t} {gt} = {gt_t}({ptr}, {v_shape}, {v_stride});")
    return gt


@handles(IM.TPutAsyncOp, IM.TGetAsyncOp)
def _async_copy(ctx: FuncContext, op: Operation) -> None:
    """``pto::comm::AsyncEvent e = pto::comm::TPUT_ASYNC<pto::comm::DmaEngine::SDMA>(dst, src, session);``
    (TGET_ASYNC alike). An operand on another rank's window is refused: one C++ kernel is one chip."""
    assert isinstance(op, IM.TPutAsyncOp | IM.TGetAsyncOp)
    for what, v in (("dst", op.dst), ("src", op.src)):
        if _peer_source(v):
            raise EmitError(
                f"{what} is another rank's window (pto.comm.peer_view): the C++ engine runs one chip, which cannot "
                "reach a remote rank; run this kernel on the interpreter (a multi-rank launch)",
                op,
            )
    dst, src = _global_tensor(ctx, op, op.dst), _global_tensor(ctx, op, op.src)
    call = "TPUT_ASYNC" if isinstance(op, IM.TPutAsyncOp) else "TGET_ASYNC"
    event = ctx.define(op.event)
    ctx.line(
        f"pto::comm::AsyncEvent {event} = pto::comm::{call}<pto::comm::DmaEngine::SDMA>({dst}, {src}, "
        f"{ctx.name(op.session, op)});"
    )


@handles(IM.WaitAsyncEventOp, IM.TestAsyncEventOp)
def _async_event(ctx: FuncContext, op: Operation) -> None:
    """``bool ok = e.Wait(session);`` / ``e.Test(session)`` (PTOAS's rewrite of PTOAS__ASYNC_EVENT_WAIT/TEST)."""
    assert isinstance(op, IM.WaitAsyncEventOp | IM.TestAsyncEventOp)
    method = "Wait" if isinstance(op, IM.WaitAsyncEventOp) else "Test"
    name = ctx.define(op.completed)
    ctx.line(f"bool {name} = {ctx.name(op.event, op)}.{method}({ctx.name(op.session, op)});")


def _c_string(text: str) -> str:
    """A C string literal, escaped as PTOAS's EmitC does."""
    out = []
    for ch in text:
        out.append("\\" + ch if ch in '"\\' else "\\n" if ch == "\n" else "\\t" if ch == "\t" else ch)
    return '"' + "".join(out) + '"'


@handles(IM.PrintOp)
def _print(ctx: FuncContext, op: Operation) -> None:
    """``cce::printf("fmt", x);`` (an empty format is ``"%f"``, as PTOAS's)."""
    assert isinstance(op, IM.PrintOp)
    ctx.line(f"cce::printf({_c_string(op.format.data or '%f')}, {ctx.name(op.scalar, op)});")
