"""xDSL ``InterpreterFunctions`` for the ``pto`` dialect (plus the arith ops xDSL lacks).

:class:`PTOFunctions` holds the :class:`~pypto.device.interpreter.core.CoreState`
and has one ``@impl`` per pto op class: GM views and tile allocation return
Python values (:class:`~pypto.device.interpreter.memory.GmPtr`,
:class:`TensorView`, :class:`PartitionView`, :class:`TileRef`); every
destination-passing op computes its result into the core's byte buffers and
is then accounted (pipe, cycles, record, race check) by :func:`_dps`; sync ops
drive the timeline and the race detector's clocks.

The data-op implementations are generated from name tables
(:mod:`.numerics`) and attached to the class before ``register_impls``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation
from xdsl.utils.comparisons import to_signed, to_unsigned

from pypto.ptoas.dialect import PTO_OPS, DpsOp, tile_of
from pypto.ptoas.dialect.attrs import SYNC_OP_PIPE, Pipe, SyncOpType
from pypto.ptoas.dialect.tile_ops import TExtractOp, TInsertOp, TMovOp, _CubeOp
from pypto.ptoas.dialect.types import DYNAMIC, TileBufType

from . import numerics as nm
from .core import CoreState
from .costs import instr_name
from .memory import DeviceError, GmPtr, PartitionView, TensorView, TileRef, dtype_of, to_compute, to_storage

Handler = Callable[[CoreState, Interpreter, Any, PythonValues], PythonValues]


def tile_ref(t: Any, addr: int, valid: tuple[int, int] | None = None) -> TileRef:
    """A TileRef for a tile_buf / address-space memref type at ``addr``."""
    tile = tile_of(t)
    if tile is None or tile.space is None:
        raise DeviceError(f"{t} is not an on-chip tile type")
    rows, cols = tile.shape
    v = valid or tile.valid
    valid = (rows if v[0] == DYNAMIC else v[0], cols if v[1] == DYNAMIC else v[1])
    col_major = tile.blayout is not None and tile.blayout.value == "col_major"
    return TileRef(tile.space.value, addr, dtype_of(tile.dtype), rows, cols, valid, col_major)


def _tiles(values: PythonValues) -> list[TileRef]:
    return [v for v in values if isinstance(v, TileRef)]


# -- accounting of destination-passing ops --------------------------------------------------------


def _cycles(
    core: CoreState, op: DpsOp, instr: str, ins: list[TileRef], outs: list[TileRef], args: PythonValues
) -> tuple[int, str, str]:
    """(cycles, kind, detail) of one data op."""
    if isinstance(op, _CubeOp):
        a, b = (core_arg for core_arg in ins if core_arg.space in ("left", "right"))
        m, k = a.valid
        n = b.valid[1]
        return core.costs.matmul(m, k, n, a.dtype.name), "compute", f"{m}x{k}x{n} {a.dtype.name}"
    if instr == "TLOAD":
        d = outs[0]
        nbytes = d.valid[0] * d.valid[1] * d.dtype.itemsize
        return core.costs.transfer(instr, None, d.space, nbytes), "transfer", f"gm->{d.space} {nbytes}B"
    if instr == "TSTORE":
        s = ins[0]
        pv = args[-1]
        count = int(np.prod(pv.sizes)) if isinstance(pv, PartitionView) else s.valid[0] * s.valid[1]
        nbytes = count * (pv.ptr.dtype.itemsize if isinstance(pv, PartitionView) else s.dtype.itemsize)
        return core.costs.transfer(instr, s.space, None, nbytes), "transfer", f"{s.space}->gm {nbytes}B"
    if isinstance(op, TMovOp | TExtractOp | TInsertOp):
        s, d = ins[0], outs[0]
        moved = s if isinstance(op, TInsertOp) else d
        nbytes = moved.valid[0] * moved.valid[1] * d.dtype.itemsize
        return core.costs.transfer(instr, s.space, d.space, nbytes), "transfer", f"{s.space}->{d.space} {nbytes}B"
    main = ins[0] if ins else outs[0]
    rows, cols = main.valid
    return core.costs.compute(instr, main.dtype.name, rows, cols), "compute", f"{rows}x{cols} {main.dtype.name}"


def _dps(handler: Handler) -> Handler:
    """Run a data op's numerics, then time it and check its accesses."""

    static: dict[Operation, tuple[Pipe, str]] = {}

    def run(core: CoreState, interp: Interpreter, op: DpsOp, args: PythonValues) -> PythonValues:
        n_in = len(args) - op.OUTS
        with np.errstate(all="ignore"):
            handler(core, interp, op, args)
        ins, outs = _tiles(args[:n_in]), _tiles(args[n_in:])
        info = static.get(op)
        if info is None:
            info = static[op] = (op.pipe() or Pipe.PIPE_V, instr_name(op.name))
        pipe, instr = info
        cycles, kind, detail = _cycles(core, op, instr, ins, outs, args)
        core.account(op, instr, pipe, cycles, kind, ins, outs, detail)
        return ()

    return run


# -- data-op numerics ----------------------------------------------------------------------------


def _rd(core: CoreState, t: TileRef, shape: tuple[int, int] | None = None) -> np.ndarray:
    x = core.memory.read(t)
    return x if shape is None else x[: shape[0], : shape[1]]


def _wr(core: CoreState, t: TileRef, values: np.ndarray) -> None:
    values = np.asarray(values)
    if values.ndim < 2:
        core.memory.write(t, values)
        return
    r = min(values.shape[0], t.rows)
    c = min(values.shape[1], t.cols)
    core.memory.write(t, values[:r, :c], r, c)


def _scalar(s: Any, t: TileRef) -> Any:
    return np.float32(s) if t.dtype.is_float and t.dtype.compute == np.float32 else s


def binary(kind: str, partial: bool = False) -> Handler:
    """``tadd``-style ops (``tpart*``: dst = src0 where src1 does not reach)."""
    fn = nm.BINARY[kind]

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, b, d = args
        if partial:
            x, y = _rd(core, a), _rd(core, b)
            r, c = min(x.shape[0], y.shape[0]), min(x.shape[1], y.shape[1])
            x[:r, :c] = fn(x[:r, :c], y[:r, :c])
            _wr(core, d, x)
        else:
            _wr(core, d, fn(_rd(core, a, d.valid), _rd(core, b, d.valid)))
        return ()

    return h


def tile_scalar(kind: str) -> Handler:
    """``tadds``-style ops, ``taxpy`` (dst += src * s)."""
    fn = nm.BINARY.get(kind)

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, s, d = args
        if kind == "axpy":
            _wr(core, d, _rd(core, d) + _rd(core, a, d.valid) * _scalar(s, d))
        else:
            assert fn is not None
            _wr(core, d, fn(_rd(core, a, d.valid), _scalar(s, a)))
        return ()

    return h


def tdivs(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """tile / scalar, or scalar / tile."""
    s0, s1, d = args
    if isinstance(s0, TileRef):
        _wr(core, d, nm.BINARY["div"](_rd(core, s0, d.valid), _scalar(s1, s0)))
    else:
        _wr(core, d, nm.BINARY["div"](np.asarray(_scalar(s0, s1)), _rd(core, s1, d.valid)))
    return ()


def unary(kind: str) -> Handler:
    """``texp``-style ops (``trsqrt`` may carry a tmp)."""
    fn = nm.UNARY[kind]

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, d = args[0], args[-1]
        _wr(core, d, fn(_rd(core, a, d.valid)))
        return ()

    return h


def ternary(sign: int, with_scalar: bool) -> Handler:
    """taddc/tsubc (a ± b + c) and taddsc/tsubsc (a ± s + b)."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, mid, c, d = args
        m = _scalar(mid, a) if with_scalar else _rd(core, mid, d.valid)
        _wr(core, d, _rd(core, a, d.valid) + sign * m + _rd(core, c, d.valid))
        return ()

    return h


def tprelu(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """a if a > 0 else a * b."""
    a, b, _tmp, d = args
    x, y = _rd(core, a, d.valid), _rd(core, b, d.valid)
    _wr(core, d, np.where(x > 0, x, x * y))
    return ()


def row_reduce(kind: str) -> Handler:
    """trowsum/max/min/prod/argmax/argmin (one value per row)."""
    fn = nm.ROW_REDUCE[kind]

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        src, d = args[0], args[-1]
        _wr(core, d, fn(_rd(core, src)))
        return ()

    return h


def col_reduce(kind: str) -> Handler:
    """tcolsum/max/min (one value per column)."""
    fn = nm.COL_REDUCE[kind]

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        src, d = args[0], args[-1]
        _wr(core, d, fn(_rd(core, src)))
        return ()

    return h


def expand(axis: int, kind: str | None) -> Handler:
    """trowexpand/tcolexpand (broadcast) and their binary forms (src0 op broadcast vector)."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        d = args[-1]
        vr, vc = d.valid
        if kind is None:
            v = _rd(core, args[0])
            v = v[:vr, :1] if axis == 0 else v[:1, :vc]
            _wr(core, d, np.broadcast_to(v, (vr, vc)))
            return ()
        x, v = _rd(core, args[0], d.valid), _rd(core, args[1])
        v = v[:vr, :1] if axis == 0 else v[:1, :vc]
        _wr(core, d, nm.BINARY[kind](x, v))
        return ()

    return h


def texpands(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Fill the valid region with a scalar."""
    s, d = args
    core.memory.write(d, np.full(d.valid, s, dtype=d.dtype.compute))
    return ()


def tcvt(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Convert element types with the op's round mode (default CAST_RINT)."""
    src, d = args[0], args[-1]
    x = _rd(core, src, d.valid)
    mode = op.rmode.data.value if op.rmode is not None else "CAST_RINT"
    if src.dtype.is_float and not d.dtype.is_float:
        core.memory.write(d, nm.round_to_int(x, mode, d.dtype.storage), x.shape[0], x.shape[1])
    else:
        _wr(core, d, x.astype(np.float64) if d.dtype.name == "fp64" else x)
    return ()


def tcmp(scalar: bool) -> Handler:
    """tcmp/tcmps: 1 where the comparison holds, else 0 (one element per element, not bit-packed)."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, b, d = args
        x = _rd(core, a)
        y = _scalar(b, a) if scalar else _rd(core, b, x.shape)
        mode = op.cmpMode.data.value if op.cmpMode is not None else "eq"
        _wr(core, d, nm.CMP[mode](x, y).astype(d.dtype.compute))
        return ()

    return h


def tsel(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """a where mask != 0, else b."""
    mask, a, b, _tmp, d = args
    x, y = _rd(core, a, d.valid), _rd(core, b, d.valid)
    m = _rd(core, mask)[: x.shape[0], : x.shape[1]]
    _wr(core, d, np.where(m != 0, x, y))
    return ()


def ttrans(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Transpose the valid region."""
    src, _tmp, d = args
    _wr(core, d, _rd(core, src).T)
    return ()


def tprint(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Keep the tile's values in ``core.prints``."""
    core.prints.append(np.array2string(_rd(core, args[0])))
    return ()


def tload(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """GM window -> tile valid region (a bit copy; the widths agree)."""
    pv, d = args
    vr, vc = d.valid
    w = np.ascontiguousarray(pv.window())
    if w.size != vr * vc:
        raise DeviceError(f"tload moves {w.size} elements into a tile with valid {vr}x{vc}")
    core.memory.raw(d)[:vr, :vc] = w.reshape(vr, vc).view(d.dtype.storage)
    return ()


def tstore(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Tile valid region -> GM window (acc: converted; relu and atomic add honoured)."""
    s, pv = args[0], args[-1]
    window = pv.window()
    gdt = pv.ptr.dtype
    relu = op.reluPreMode is not None and op.reluPreMode.data.value == "normal_relu"
    atomic = op.atomicType is not None and op.atomicType.data.value == "atomic_add"
    vr, vc = s.valid
    if window.size != vr * vc:
        raise DeviceError(f"tstore moves a tile with valid {vr}x{vc} into {window.size} GM elements")
    if s.space != "acc" and not relu and not atomic and gdt.itemsize == s.dtype.itemsize:
        window[...] = np.ascontiguousarray(core.memory.raw(s)[:vr, :vc]).view(gdt.storage).reshape(window.shape)
        return ()
    x = _rd(core, s)
    if relu:
        x = np.maximum(x, 0)
    if atomic:
        x = to_compute(np.ascontiguousarray(window), gdt).reshape(x.shape) + x
    window[...] = to_storage(x, gdt).reshape(window.shape)
    return ()


def tmov(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Tile copy between spaces (acc -> other: converted; relu honoured)."""
    s, d = args
    x = _rd(core, s, d.valid)
    relu = getattr(op, "reluPreMode", None)
    if relu is not None and relu.data.value == "normal_relu":
        x = np.maximum(x, 0)
    _wr(core, d, x)
    return ()


def textract(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """dst = src[r:r+vr, c:c+vc]."""
    s, r, c, d = args
    vr, vc = d.valid
    if r < 0 or c < 0 or r + vr > s.rows or c + vc > s.cols:
        raise DeviceError(f"textract window {vr}x{vc} at ({r}, {c}) exceeds the {s.rows}x{s.cols} source")
    _wr(core, d, to_compute(core.memory.raw(s)[r : r + vr, c : c + vc], s.dtype))
    return ()


def tinsert(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """dst[r:r+vr, c:c+vc] = src (converted)."""
    s, r, c, d = args
    vr, vc = s.valid
    if r < 0 or c < 0 or r + vr > d.rows or c + vc > d.cols:
        raise DeviceError(f"tinsert window {vr}x{vc} at ({r}, {c}) exceeds the {d.rows}x{d.cols} destination")
    core.memory.raw(d)[r : r + vr, c : c + vc] = to_storage(_rd(core, s), d.dtype)
    return ()


def matmul(mode: str) -> Handler:
    """tmatmul[.acc|.bias] and tgemv*: fp32 (int32 for int8) accumulation."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        d = args[-1]
        lhs, rhs = (args[1], args[2]) if mode == "acc" else (args[0], args[1])
        a, b = _rd(core, lhs), _rd(core, rhs)
        k = min(a.shape[1], b.shape[0])
        acc_t = np.int32 if np.issubdtype(a.dtype, np.integer) else np.float32
        out = a[:, :k].astype(acc_t) @ b[:k, :].astype(acc_t)
        if mode == "acc":
            out = out + _rd(core, args[0], out.shape)
        elif mode == "bias":
            out = out + _rd(core, args[2])[:1, : out.shape[1]]
        _wr(core, d, out)
        return ()

    return h


def data_handlers() -> dict[str, Handler]:
    """Numerics by op name."""
    h: dict[str, Handler] = {}
    for k in ("add", "sub", "mul", "div", "max", "min", "rem", "and", "or", "xor", "shl", "shr"):
        h[f"pto.t{k}"] = binary(k)
        h[f"pto.t{k}s"] = tile_scalar(k)
    for k in ("add", "max", "min", "mul"):
        h[f"pto.tpart{k}"] = binary(k, partial=True)
    h["pto.tlrelu"] = tile_scalar("lrelu")
    h["pto.taxpy"] = tile_scalar("axpy")
    h["pto.tdivs"] = tdivs
    for k in nm.UNARY:
        h[f"pto.t{k}"] = unary(k)
    h["pto.taddc"], h["pto.tsubc"] = ternary(1, False), ternary(-1, False)
    h["pto.taddsc"], h["pto.tsubsc"] = ternary(1, True), ternary(-1, True)
    h["pto.tprelu"] = tprelu
    for k in nm.ROW_REDUCE:
        h[f"pto.trow{k}"] = row_reduce(k)
    for k in nm.COL_REDUCE:
        h[f"pto.tcol{k}"] = col_reduce(k)
    h["pto.trowexpand"], h["pto.tcolexpand"] = expand(0, None), expand(1, None)
    for k in ("add", "sub", "mul", "div", "max", "min", "expdif"):
        h[f"pto.trowexpand{k}"] = expand(0, k)
        h[f"pto.tcolexpand{k}"] = expand(1, k)
    h["pto.texpands"], h["pto.tcvt"] = texpands, tcvt
    h["pto.tcmp"], h["pto.tcmps"] = tcmp(False), tcmp(True)
    h["pto.tsel"], h["pto.ttrans"], h["pto.tprint"] = tsel, ttrans, tprint
    h["pto.tload"], h["pto.tstore"] = tload, tstore
    h["pto.tmov"], h["pto.textract"], h["pto.tinsert"] = tmov, textract, tinsert
    h["pto.tmatmul"], h["pto.tmatmul.acc"], h["pto.tmatmul.bias"] = matmul("plain"), matmul("acc"), matmul("bias")
    h["pto.tgemv"], h["pto.tgemv.acc"], h["pto.tgemv.bias"] = matmul("plain"), matmul("acc"), matmul("bias")
    return h


# -- views, buffers, sync, queries ---------------------------------------------------------------


def make_tensor_view(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A pointer with shape and strides."""
    n = len(op.shape)
    ptr = args[0]
    if not isinstance(ptr, GmPtr):
        raise DeviceError(f"make_tensor_view expects a GM pointer argument, got {type(ptr).__name__}")
    return (TensorView(ptr, tuple(args[1 : 1 + n]), tuple(args[1 + n :])),)


def partition_view(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A window at offsets with sizes."""
    tv = args[0]
    n = len(op.offsets)
    offsets, sizes = args[1 : 1 + n], args[1 + n :]
    offset = sum(o * s for o, s in zip(offsets, tv.strides, strict=True))
    return (PartitionView(tv.ptr, offset, tuple(sizes), tv.strides),)


def alloc_tile(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A tile at ``addr`` (or placed by the interpreter), with runtime valid dims."""
    it = iter(args)
    addr = next(it) if op.addr is not None else None
    vr = next(it) if op.valid_row is not None else None
    vc = next(it) if op.valid_col is not None else None
    t = op.result.type
    assert isinstance(t, TileBufType)
    valid = (t.v_row.data if vr is None else vr, t.v_col.data if vc is None else vc)
    tile = tile_ref(t, 0, valid)
    tile.addr = addr if addr is not None else core.memory.place(op, tile.space, tile.nbytes)
    return (tile,)


def set_validshape(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Update a tile's runtime valid dims."""
    tile, r, c = args
    tile.valid = (r, c)
    return ()


def treshape(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """The same bytes seen as another tile type (a scalar-pipe instruction)."""
    src = args[0]
    res = tile_ref(op.result.type, src.addr)
    core.account(op, "TRESHAPE", Pipe.PIPE_S, core.costs.compute("TRESHAPE", src.dtype.name, 1, 1), "compute", [], [])
    return (res,)


def tassign(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Level 3: the tile at a byte address."""
    tile, addr = args
    return (TileRef(tile.space, addr, tile.dtype, tile.rows, tile.cols, tile.valid, tile.col_major),)


def memref_alloc(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """An address-space memref allocation (internal form): placed by the interpreter."""
    tile = tile_ref(op.memref.type, 0)
    tile.addr = core.memory.place(op, tile.space, tile.nbytes)
    return (tile,)


def pointer_cast(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """After plan-memory: the memref tile at its byte address."""
    return (tile_ref(op.result.type, args[0]),)


def _event(attr: Any) -> int:
    return int(attr.data.value.removeprefix("EVENT_ID"))


def sync_handler(name: str) -> Handler:
    """set/wait flag (static or dynamic ids), record/wait event, barriers, cross-core sync."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        if name in ("pto.set_flag", "pto.wait_flag", "pto.set_flag_dyn", "pto.wait_flag_dyn"):
            src, dst = op.src_pipe.data, op.dst_pipe.data
            event = int(args[0]) if args else _event(op.event_id)
        elif name in ("pto.record_event", "pto.wait_event"):
            (src, dst), event = op.pipes(), _event(op.event_id)
        elif name == "pto.barrier":
            core.barrier(op, op.pipe_attr.data)
            return ()
        elif name == "pto.barrier_sync":
            core.barrier(op, SYNC_OP_PIPE[SyncOpType(op.op_type.data)])
            return ()
        else:  # pto.sync.set / pto.sync.wait: cross-core, nothing to order on one core
            core.timeline.issue(op.name, instr_name(name), op.pipe_attr.data, 0, "signal", core.locs(op), "cross-core")
            return ()
        if name in ("pto.set_flag", "pto.set_flag_dyn", "pto.record_event"):
            core.set_flag(op, src, dst, event)
        else:
            core.wait_flag(op, src, dst, event)
        return ()

    return h


def section(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``pto.section.cube/vector``: one core runs both sections in order."""
    interp.run_ssacfg_region(op.body, (), op.name)
    return ()


def misc_handlers() -> dict[str, Handler]:
    """Non-data ops by name."""
    h: dict[str, Handler] = {
        "pto.make_tensor_view": make_tensor_view,
        "pto.partition_view": partition_view,
        "pto.get_tensor_view_dim": lambda c, i, op, a: (a[0].shape[a[1]],),
        "pto.addptr": lambda c, i, op, a: (GmPtr(a[0].flat, a[0].offset + a[1], a[0].dtype),),
        "pto.alloc_tile": alloc_tile,
        "pto.set_validshape": set_validshape,
        "pto.treshape": treshape,
        "pto.tassign": tassign,
        "pto.pointer_cast": pointer_cast,
        "pto.get_block_idx": lambda c, i, op, a: (c.block_idx,),
        "pto.get_block_num": lambda c, i, op, a: (c.block_num,),
        "pto.get_subblock_idx": lambda c, i, op, a: (c.subblock_idx,),
        "pto.get_subblock_num": lambda c, i, op, a: (c.subblock_num,),
        "pto.section.cube": section,
        "pto.section.vector": section,
    }
    for name in (
        "pto.set_flag",
        "pto.wait_flag",
        "pto.set_flag_dyn",
        "pto.wait_flag_dyn",
        "pto.record_event",
        "pto.wait_event",
        "pto.barrier",
        "pto.barrier_sync",
        "pto.sync.set",
        "pto.sync.wait",
    ):
        h[name] = sync_handler(name)
    return h


@dataclass
class PTOFunctions(InterpreterFunctions):
    """Implementations of the pto ops on one core's state."""

    core: CoreState


def _attach(cls: type[InterpreterFunctions], op_cls: type[Operation], handler: Handler) -> None:
    def run(self: PTOFunctions, interpreter: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return handler(self.core, interpreter, op, args)

    setattr(cls, "run_" + op_cls.name.replace(".", "_"), impl(op_cls)(run))


def _register_pto() -> None:
    data, misc = data_handlers(), misc_handlers()
    for op_cls in PTO_OPS:
        if op_cls.name in data:
            _attach(PTOFunctions, op_cls, _dps(data[op_cls.name]))
        elif op_cls.name in misc:
            _attach(PTOFunctions, op_cls, misc[op_cls.name])
    _attach(PTOFunctions, memref.AllocOp, memref_alloc)
    register_impls(PTOFunctions)


_register_pto()

UNSUPPORTED: tuple[str, ...] = tuple(
    sorted(o.name for o in PTO_OPS if o.name not in data_handlers() and o.name not in misc_handlers())
)
"""pto ops the interpreter does not run (an error names the op if one is reached)."""


# -- arith ops the xDSL interpreter lacks ---------------------------------------------------------


def _width(interp: Interpreter, t: Any) -> int:
    return interp.index_bitwidth if not hasattr(t, "width") else t.width.data


_CONSTANTS: dict[Operation, tuple[Any]] = {}


def _wrap(interp: Interpreter, op: Operation, value: int) -> int:
    """Two's-complement wrap to the result width (only when out of range)."""
    if -(2**31) <= value < 2**31:
        return value
    return to_signed(value, _width(interp, op.results[0].type))


@register_impls
class ArithExtraFunctions(InterpreterFunctions):
    """Fast constant/addi/subi/muli (registered over xDSL's), and maxsi/minsi/maxui/minui,
    divui/remui, ceildiv, float div/neg, int<->float casts that xDSL lacks."""

    @impl(arith.ConstantOp)
    def run_constant(self, interp: Interpreter, op: arith.ConstantOp, args: PythonValues) -> PythonValues:
        got = _CONSTANTS.get(op)
        if got is None:
            value = op.value
            if not isinstance(value, IntegerAttr | FloatAttr):
                raise DeviceError(f"arith.constant of {type(value).__name__} is not supported")
            got = _CONSTANTS[op] = (value.value.data,)
        return got

    @impl(arith.AddiOp)
    def run_addi(self, interp: Interpreter, op: arith.AddiOp, args: PythonValues) -> PythonValues:
        return (_wrap(interp, op, args[0] + args[1]),)

    @impl(arith.SubiOp)
    def run_subi(self, interp: Interpreter, op: arith.SubiOp, args: PythonValues) -> PythonValues:
        return (_wrap(interp, op, args[0] - args[1]),)

    @impl(arith.MuliOp)
    def run_muli(self, interp: Interpreter, op: arith.MuliOp, args: PythonValues) -> PythonValues:
        return (_wrap(interp, op, args[0] * args[1]),)

    @impl(arith.MaxSIOp)
    def run_maxsi(self, interp: Interpreter, op: arith.MaxSIOp, args: PythonValues) -> PythonValues:
        return (max(args),)

    @impl(arith.MinSIOp)
    def run_minsi(self, interp: Interpreter, op: arith.MinSIOp, args: PythonValues) -> PythonValues:
        return (min(args),)

    @impl(arith.MaxUIOp)
    def run_maxui(self, interp: Interpreter, op: arith.MaxUIOp, args: PythonValues) -> PythonValues:
        w = _width(interp, op.result.type)
        return (to_signed(max(to_unsigned(a, w) for a in args), w),)

    @impl(arith.MinUIOp)
    def run_minui(self, interp: Interpreter, op: arith.MinUIOp, args: PythonValues) -> PythonValues:
        w = _width(interp, op.result.type)
        return (to_signed(min(to_unsigned(a, w) for a in args), w),)

    @impl(arith.DivUIOp)
    def run_divui(self, interp: Interpreter, op: arith.DivUIOp, args: PythonValues) -> PythonValues:
        w = _width(interp, op.result.type)
        return (to_signed(to_unsigned(args[0], w) // to_unsigned(args[1], w), w),)

    @impl(arith.RemUIOp)
    def run_remui(self, interp: Interpreter, op: arith.RemUIOp, args: PythonValues) -> PythonValues:
        w = _width(interp, op.result.type)
        return (to_signed(to_unsigned(args[0], w) % to_unsigned(args[1], w), w),)

    @impl(arith.CeilDivSIOp)
    def run_ceildivsi(self, interp: Interpreter, op: arith.CeilDivSIOp, args: PythonValues) -> PythonValues:
        return (-((-args[0]) // args[1]),)

    @impl(arith.CeilDivUIOp)
    def run_ceildivui(self, interp: Interpreter, op: arith.CeilDivUIOp, args: PythonValues) -> PythonValues:
        return (-((-args[0]) // args[1]),)

    @impl(arith.DivfOp)
    def run_divf(self, interp: Interpreter, op: arith.DivfOp, args: PythonValues) -> PythonValues:
        with np.errstate(all="ignore"):
            return (float(np.float64(args[0]) / np.float64(args[1])),)

    @impl(arith.NegfOp)
    def run_negf(self, interp: Interpreter, op: arith.NegfOp, args: PythonValues) -> PythonValues:
        return (-args[0],)

    @impl(arith.SIToFPOp)
    def run_sitofp(self, interp: Interpreter, op: arith.SIToFPOp, args: PythonValues) -> PythonValues:
        return (float(args[0]),)

    @impl(arith.FPToSIOp)
    def run_fptosi(self, interp: Interpreter, op: arith.FPToSIOp, args: PythonValues) -> PythonValues:
        return (int(args[0]),)

    @impl(arith.ExtFOp)
    def run_extf(self, interp: Interpreter, op: arith.ExtFOp, args: PythonValues) -> PythonValues:
        return (args[0],)

    @impl(arith.TruncFOp)
    def run_truncf(self, interp: Interpreter, op: arith.TruncFOp, args: PythonValues) -> PythonValues:
        return (float(np.float32(args[0])),)

    @impl(arith.ExtSIOp)
    def run_extsi(self, interp: Interpreter, op: arith.ExtSIOp, args: PythonValues) -> PythonValues:
        return (args[0],)

    @impl(arith.ExtUIOp)
    def run_extui(self, interp: Interpreter, op: arith.ExtUIOp, args: PythonValues) -> PythonValues:
        return (to_unsigned(args[0], _width(interp, op.operands[0].type)),)

    @impl(arith.TruncIOp)
    def run_trunci(self, interp: Interpreter, op: arith.TruncIOp, args: PythonValues) -> PythonValues:
        w = _width(interp, op.result.type)
        return (to_signed(to_unsigned(args[0], w), w),)
