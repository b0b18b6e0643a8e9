"""Numerics and handlers of the ISA ops beyond PyPTO's own subset (``pto`` dialect ``isa_*`` modules).

:data:`ISA_DATA` maps destination-passing ops to plain handlers (accounted like every data op by
:mod:`.pto_impls`: pipe, cycles, record, race check); :data:`ISA_MISC` maps the other ops to
:data:`~.pto_impls.Prepare` functions. The C++ side of every data op here is in
``ptoas/include/pto_cpu.hpp`` ("ISA additions") and agrees with these numerics (test_isa_ops.py).

Simulator-only facts: ``tprefetch``, ``tsync``, ``set_ffts``, ``get_buf`` / ``rls_buf`` are no-ops;
``trap`` raises a :class:`~.memory.DeviceError`; async DMA completes at once (``wait_async_event`` /
``test_async_event`` return true).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation

from pypto.ptoas.dialect import isa_misc_ops as IM
from pypto.ptoas.dialect import isa_tile_ops as IT
from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.dialect.base import tile_of
from pypto.ptoas.dialect.types import DYNAMIC, element_bits
from pypto.ptoas.dialect.vector_ops import UNARY_OPS

from .core import CoreState, Pushed
from .memory import DeviceError, GmPtr, PartitionView, TileRef, to_compute, to_storage
from .pto_impls import fixpipe_quant, fp_scales, tile_ref, tmov

Handler = Callable[[CoreState, Interpreter, Any, PythonValues], PythonValues]
Run = Callable[[CoreState, Interpreter, PythonValues], PythonValues]


def _rd(core: CoreState, t: TileRef, shape: tuple[int, int] | None = None) -> np.ndarray:
    x = core.memory.read(t, copy=True)
    return x if shape is None else x[: shape[0], : shape[1]]


def _wr(core: CoreState, t: TileRef, values: np.ndarray) -> None:
    values = np.asarray(values)
    r, c = min(values.shape[0], t.rows), min(values.shape[1], t.cols)
    core.memory.write(t, values[:r, :c], r, c)


def _scalar(s: Any, t: TileRef) -> Any:
    return np.float32(s) if t.dtype.is_float and t.dtype.compute == np.float32 else s


def _flat_index(t: TileRef, k: int) -> tuple[int, int]:
    """Row-major storage element ``k`` of a tile as (row, col)."""
    if not 0 <= k < t.rows * t.cols:
        raise DeviceError(f"element offset {k} is outside the {t.rows}x{t.cols} tile")
    return k // t.cols, k % t.cols


# -- data ops -----------------------------------------------------------------------------------


def tfmod(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """C ``fmod`` (the sign of the dividend); integers truncate like C ``%``."""
    a, b, d = args[0], args[1], args[-1]
    _wr(core, d, np.fmod(_rd(core, a, d.valid), _rd(core, b, d.valid)))
    return ()


def tfmods(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``fmod(src, scalar)``."""
    a, s, d = args[0], args[1], args[-1]
    _wr(core, d, np.fmod(_rd(core, a, d.valid), _scalar(s, a)))
    return ()


def tcolprod(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Column products, multiplied top to bottom in the compute dtype (as the C++)."""
    x = _rd(core, args[0])
    acc = x[0].copy()
    for r in range(1, x.shape[0]):
        acc = acc * x[r]
    _wr(core, args[-1], acc[None, :])
    return ()


def col_arg(kind: str) -> Handler:
    """tcolargmax / tcolargmin: the first row index of each column's extreme."""
    pick = np.argmax if kind == "argmax" else np.argmin

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        x = _rd(core, args[0])
        _wr(core, args[-1], pick(x, axis=0)[None, :].astype(np.int64))
        return ()

    return h


def tconcat(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``[src0 | src1]``: src0's valid columns, then src1's."""
    a, b, d = args
    x, y = _rd(core, a), _rd(core, b)
    if x.shape[1] + y.shape[1] > d.cols:
        raise DeviceError(f"tconcat: {x.shape[1]} + {y.shape[1]} columns exceed the destination's {d.cols}")
    _wr(core, d, np.concatenate([x, y], axis=1))
    return ()


def tci(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``S + k`` (or ``S - k``) for the k-th valid element in row-major order."""
    s, d = args
    vr, vc = d.valid
    k = np.arange(vr * vc, dtype=np.int64).reshape(vr, vc)
    desc = op.descending is not None and bool(op.descending.value.data)
    _wr(core, d, (int(s) - k) if desc else (int(s) + k))
    return ()


def ttri(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """1 where ``j <= i + diagonal`` (lower; upper: ``j >= i + diagonal``), else 0."""
    diag, d = args
    vr, vc = d.valid
    i, j = np.meshgrid(np.arange(vr), np.arange(vc), indexing="ij")
    keep = (j <= i + int(diag)) if op.lower() else (j >= i + int(diag))
    _wr(core, d, keep.astype(np.int64))
    return ()


def tsels(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``src`` where the mask is set, else the scalar."""
    mask, src, _tmp, s, d = args
    x = _rd(core, src, d.valid)
    m = _rd(core, mask)[: x.shape[0], : x.shape[1]]
    _wr(core, d, np.where(m != 0, x, _scalar(s, src)))
    return ()


_TFILLPAD = next(c for c in UNARY_OPS if c.name == "pto.tfillpad")


def pad_fill(dtype: Any, pad: int) -> Any:
    """The value of a tile_buf ``pad`` (1 zero, 2 max, 3 min) in ``dtype``'s compute type: +-inf for
    floats, the integer range's ends otherwise (as pto_cpu.hpp's ``pad_value``)."""
    compute = np.dtype(dtype.compute)
    if pad == 1:
        return compute.type(0)
    if compute.kind == "f":
        return compute.type(np.inf if pad == 2 else -np.inf)
    info = np.iinfo(compute)
    return compute.type(info.max if pad == 2 else info.min)


def tfillpad(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """dst = src's valid region, and dst's pad value (its tile_buf ``pad``) everywhere else in dst's
    valid shape; ``pad=0`` (null) leaves the rest of dst as it was."""
    s, d = args
    pad = getattr(getattr(op.dst.type, "pad", None), "data", 0)
    r, c = min(s.valid[0], d.valid[0]), min(s.valid[1], d.valid[1])
    src = _rd(core, s)[:r, :c]
    out = _rd(core, d).copy() if pad == 0 else np.full(d.valid, pad_fill(d.dtype, pad), dtype=src.dtype)
    out[:r, :c] = src
    _wr(core, d, out)
    return ()


def tsetval(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``dst`` storage element ``offset`` = val."""
    off, val, d = args
    r, c = _flat_index(d, int(off))
    core.memory.raw(d)[r, c] = to_storage(np.asarray(val), d.dtype)
    return ()


def tscatter(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``dst`` storage element ``indexes[i, j]`` = ``src[i, j]`` (row-major order, later wins)."""
    s, idx, d = args
    x, ix = _rd(core, s), _rd(core, idx)
    raw = core.memory.raw(d)
    vals = to_storage(x, d.dtype)
    for (i, j), k in np.ndenumerate(ix[: x.shape[0], : x.shape[1]]):
        r, c = _flat_index(d, int(k))
        raw[r, c] = vals[i, j]
    return ()


def tgather(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Index form: ``dst[i, j]`` = ``src`` storage element ``indices[i, j]``."""
    if op.indices is None:
        form = "mask-pattern" if op.maskPattern is not None else "compare"
        raise DeviceError(f"tgather's {form} form is not modelled by the simulator (only the index form)")
    s, ix, d = args[0], args[1], args[-1]
    raw = core.memory.raw(s)
    idx = _rd(core, ix, d.valid)
    out = np.empty(idx.shape, dtype=raw.dtype)
    for (i, j), k in np.ndenumerate(idx):
        out[i, j] = raw[_flat_index(s, int(k))]
    core.memory.raw(d)[: out.shape[0], : out.shape[1]] = out.astype(d.dtype.storage)
    return ()


def tdequant(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``dst[i, j] = (f32(src[i, j]) - offset[i, 0]) * scale[i, 0]`` in float32 (PTOAS's formula)."""
    s, scale, off, d = args
    x = _rd(core, s, d.valid).astype(np.float32)
    sc = _rd(core, scale)[: x.shape[0], :1].astype(np.float32)
    of = _rd(core, off)[: x.shape[0], :1].astype(np.float32)
    _wr(core, d, (x - of) * sc)
    return ()


def _relu(op: Any) -> bool:
    relu = getattr(op, "reluPreMode", None)
    return relu is not None and relu.data.value == "normal_relu"


def tstore_fp(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """acc valid region -> GM window through :func:`.pto_impls.fixpipe_quant`, one scale per column."""
    s, fp, pv = args
    window = pv.view if pv.view is not None else pv.window()
    vr, vc = s.valid
    if window.size != vr * vc:
        raise DeviceError(f"tstore_fp moves a tile with valid {vr}x{vc} into {window.size} GM elements")
    x = _rd(core, s)
    y = fixpipe_quant(x, fp_scales(core, fp, vc), _relu(op), pv.ptr.dtype)
    window[...] = to_storage(y, pv.ptr.dtype).reshape(window.shape)
    return ()


def textract_fp(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``dst = quant(src[r:r+vr, c:c+vc])``: the window, then :func:`.pto_impls.fixpipe_quant` by dst column."""
    s, fp, r, c, d = args
    vr, vc = d.valid
    if r < 0 or c < 0 or r + vr > s.rows or c + vc > s.cols:
        raise DeviceError(f"textract_fp window {vr}x{vc} at ({r}, {c}) exceeds the {s.rows}x{s.cols} source")
    x = to_compute(core.memory.raw(s)[r : r + vr, c : c + vc], s.dtype)
    _wr(core, d, fixpipe_quant(x, fp_scales(core, fp, vc), _relu(op), d.dtype))
    return ()


def tinsert_fp(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``dst[r:r+vr, c:c+vc] = quant(src)``, by src column."""
    s, fp, r, c, d = args
    vr, vc = s.valid
    if r < 0 or c < 0 or r + vr > d.rows or c + vc > d.cols:
        raise DeviceError(f"tinsert_fp window {vr}x{vc} at ({r}, {c}) exceeds the {d.rows}x{d.cols} destination")
    y = fixpipe_quant(_rd(core, s), fp_scales(core, fp, vc), _relu(op), d.dtype)
    core.memory.raw(d)[r : r + vr, c : c + vc] = to_storage(y, d.dtype)
    return ()


def nothing(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A hint the simulator has no use for (timed on its pipe, no data changes)."""
    return ()


ISA_DATA: dict[type[Operation], Handler] = {
    IT.TFModOp: tfmod,
    IT.TFModSOp: tfmods,
    IT.TColProdOp: tcolprod,
    IT.TColArgMaxOp: col_arg("argmax"),
    IT.TColArgMinOp: col_arg("argmin"),
    IT.TConcatOp: tconcat,
    IT.TCIOp: tci,
    IT.TTriOp: ttri,
    IT.TSelSOp: tsels,
    _TFILLPAD: tfillpad,
    IT.TFillPadExpandOp: tfillpad,
    IT.TFillPadInplaceOp: tfillpad,
    IT.TSetValOp: tsetval,
    IT.TScatterOp: tscatter,
    IT.TGatherOp: tgather,
    IT.TPrefetchOp: nothing,
    IT.TDequantOp: tdequant,
    IT.TMovFPOp: tmov,
    IT.TStoreFPOp: tstore_fp,
    IT.TExtractFPOp: textract_fp,
    IT.TInsertFPOp: tinsert_fp,
}
"""Destination-passing ISA ops: numerics (accounted by pto_impls._dps)."""


# -- other ops ----------------------------------------------------------------------------------


def _per_call(fn: Handler) -> Callable[[Any], Run]:
    return lambda op: lambda core, interp, args: fn(core, interp, op, args)


def tgetval(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Storage element ``offset`` of a vec tile, on the scalar pipe."""
    s, off = args
    r, c = _flat_index(s, int(off))
    v = core.memory.raw(s)[r, c]
    core.account(op, "TGETVAL", Pipe.PIPE_S, core.costs.compute("TGETVAL", s.dtype.name, 1, 1), "compute", [s], [])
    return (v.item(),)


def _gm(ptr: Any) -> tuple[np.ndarray, int]:
    if isinstance(ptr, GmPtr):
        return ptr.flat, ptr.offset
    if isinstance(ptr, PartitionView):
        return ptr.ptr.flat, ptr.offset
    raise DeviceError(f"expects a GM pointer, got {type(ptr).__name__}")


def load_scalar(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """One GM element."""
    flat, base = _gm(args[0])
    return (flat[base + int(args[1])].item(),)


def store_scalar(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Write one GM element."""
    flat, base = _gm(args[0])
    flat[base + int(args[1])] = args[2]
    return ()


def trap(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """The kernel traps: a located device error."""
    raise DeviceError("pto.trap: the kernel trapped")


def pto_print(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """printf of one scalar, kept in ``core.prints`` (as tprint's tiles)."""
    fmt = op.format.data
    try:
        text = fmt % (args[0],) if "%" in fmt else f"{fmt}{args[0]}"
    except (TypeError, ValueError):
        text = f"{fmt} {args[0]}"
    core.prints.append(text)
    return ()


def noop(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Hardware configuration the simulator does not need."""
    return ()


def declare_eventid_array(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """N event ids, initially 0..N-1."""
    return (list(range(op.array.type.size.data)),)


def eventid_array_get(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """One entry."""
    arr, i = args
    if not 0 <= int(i) < len(arr):
        raise DeviceError(f"eventid_array index {i} is outside 0..{len(arr) - 1}")
    return (arr[int(i)],)


def eventid_array_set(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Set one entry."""
    arr, i, v = args
    if not 0 <= int(i) < len(arr):
        raise DeviceError(f"eventid_array index {i} is outside 0..{len(arr) - 1}")
    arr[int(i)] = int(v)
    return ()


def build_async_session(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A session handle: its UB scratch tile (the DMA's staging buffer, seen by the race detector)."""
    return (("async_session", args[0]),)


def async_copy(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """GM -> GM copy of a flat 1-D memref, complete at once; timed as a transfer on the op's pipe."""
    dst, src = args[0], args[1]
    if not (isinstance(dst, np.ndarray) and isinstance(src, np.ndarray)):
        dflat, doff = _gm(dst)
        sflat, soff = _gm(src)
        n = int(np.prod(op.dst.type.get_shape()))
        dflat[doff : doff + n] = sflat[soff : soff + n]
    else:
        dst[...] = src
    nbytes = int(np.prod(op.dst.type.get_shape())) * (element_bits(op.dst.type.element_type) // 8)
    # through the session's UB scratch: a get costs a GM->UB load, a put a UB->GM store
    cycles = (
        core.costs.transfer("TLOAD", None, "vec", nbytes)
        if op.pipe() == Pipe.PIPE_MTE2
        else core.costs.transfer("TSTORE", "vec", None, nbytes)
    )
    session = args[2]
    scratch = [session[1]] if isinstance(session, tuple) and isinstance(session[1], TileRef) else []
    core.account(op, op.name[4:].upper(), op.pipe(), cycles, "transfer", [], scratch, f"gm->gm {nbytes}B")
    return (("async_event", id(op)),)


def async_done(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """DMA completes at once on the simulator."""
    return (1,)


# -- the frontend FIFO over !pto.pipe (initialize_*_pipe, declare_tile, tpush / tpop / tfree) -------


def _direction(pipe: Any, t: TileRef, pushing: bool) -> str:
    """``c2v`` or ``v2c``: the pipe's dir_mask (1: c2v, 2: v2c, 3: by the tile's space)."""
    mask = pipe[1] if isinstance(pipe, tuple) and pipe and pipe[0] == "pipe" else 3
    if mask in (1, 2):
        return "c2v" if mask == 1 else "v2c"
    cube_side = t.space in ("acc", "mat")
    return ("c2v" if cube_side else "v2c") if pushing else ("v2c" if cube_side else "c2v")


def _split(op: Any) -> None:
    split = op.attributes.get("split")
    if split is not None and split.value.data != 0:
        raise DeviceError(
            f"{{split = {split.value.data}}}: a split pipe feeds two vector cores, which the device model does not "
            "run (only split = 0)"
        )


def init_fifo(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A pipe handle: its direction mask (the slots are the interpreter's channels)."""
    return (("pipe", op.attributes["dir_mask"].value.data),)


def declare_tile(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A tile the interpreter places (a FIFO slot in the real hardware)."""
    t = tile_ref(op.tile.type, 0)
    t.addr = core.memory.place(op, t.space, t.nbytes)
    return (t,)


def _view(src: TileRef, t: Any, addr: int, valid: tuple[int, int] | None = None) -> TileRef:
    """A tile of type ``t`` over ``src``'s bytes from ``addr`` (no copy: the same buffer)."""
    out = tile_ref(t, addr, valid)
    out.space = src.space
    return out


def bitcast(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``pto.bitcast``: the source's bytes seen with the result's element type (no instruction, no data
    moved; a ``?`` valid dim keeps the source's)."""
    src = args[0]
    t = tile_of(op.result.type)
    assert t is not None
    valid = (
        src.valid[0] if t.valid[0] == DYNAMIC else t.valid[0],
        src.valid[1] if t.valid[1] == DYNAMIC else t.valid[1],
    )
    return (_view(src, op.result.type, src.addr, valid),)


def subset_valid(parent: int, offset: int, size: int) -> int:
    """PTOAS's valid dim of a subset: ``min(size, pv - off % pv)`` (0 for an empty parent)."""
    return min(size, parent - offset % parent) if parent > 0 else 0


def subset(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``pto.subset %t[%i, %j] sizes [r, c]``: the ``r x c`` tile at the byte offset of element ``(i, j)``
    of the source (row-major ``i * cols + j``; col-major ``j * rows + i``), as PTOAS's C++ does (the
    hardware tile has no row stride of its own, so this is the window of the source only when the
    subset keeps its full cols, row-major). Valid dims: :func:`subset_valid` of the source's."""
    src, i, j = args[0], int(args[1]), int(args[2])
    r, c = (a.value.data for a in op.sizes.data)
    elem = j * src.rows + i if src.col_major else i * src.cols + j
    valid = (subset_valid(src.valid[0], i, r), subset_valid(src.valid[1], j, c))
    return (_view(src, op.result.type, src.addr + elem * src.dtype.itemsize, valid),)


def bind_tile(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``pto.bind_tile``: the memref's bytes as a tile of its config's layout and (runtime) valid dims."""
    src = args[0]
    valid = (int(args[1]), int(args[2])) if len(args) == 3 else None
    out = _view(src, op.result.type, src.addr, valid)
    out.col_major = op.config.blayout.data == 1
    return (out,)


def declare_tile_memref(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """The memref form of :func:`declare_tile`: storage the interpreter places."""
    t = tile_ref(op.result.type, 0)
    t.addr = core.memory.place(op, t.space, t.nbytes)
    return (t,)


def fifo_push(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """The tile's values go into the pipe's channel, ready when the push ends."""
    _split(op)
    t, pipe = args
    direction, p = _direction(pipe, t, True), op.pipe()
    values = core.memory.read(t)
    nbytes = values.size * t.dtype.itemsize
    cycles = core.costs.transfer("TSTORE", t.space, None, nbytes)
    core.account(op, "TPUSH", p, cycles, "transfer", [t], [], f"{t.space}->{direction} {nbytes}B")
    core.channel(direction).append(Pushed(values, t.dtype, core.timeline.free[p]))
    return ()


def fifo_pop(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """The oldest pushed tile, into the given tile (no earlier than its push ended)."""
    _split(op)
    t, pipe = args
    direction, p = _direction(pipe, t, False), op.pipe()
    queue = core.channel(direction)
    if not queue:
        raise DeviceError(f"nothing to pop: no (more) tiles were pushed {direction} (run the pushing kernel first)")
    item = queue.popleft()
    if item.values.shape != tuple(t.valid):
        raise DeviceError(
            f"pops a {t.valid[0]}x{t.valid[1]} tile but {item.values.shape[0]}x{item.values.shape[1]} was pushed"
        )
    core.memory.write(t, item.values)
    nbytes = item.values.size * t.dtype.itemsize
    cycles = core.costs.transfer("TLOAD", None, t.space, nbytes)
    core.account(op, "TPOP", p, cycles, "transfer", [], [t], f"{direction}->{t.space} {nbytes}B", not_before=item.ready)
    return ()


def buffer_addr(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """A reserved buffer's address (the interpreter places FIFO slots itself)."""
    base = op.attributes.get("base")
    return (base.value.data if base is not None else 0,)


ISA_MISC: dict[type[Operation], Callable[[Any], Run]] = {
    cls: _per_call(fn)
    for cls, fn in {
        IT.TGetValOp: tgetval,
        IT.TSyncOp: noop,
        IM.LoadScalarOp: load_scalar,
        IM.StoreScalarOp: store_scalar,
        IM.TrapOp: trap,
        IM.PrintOp: pto_print,
        IM.SetFFTsOp: noop,
        IM.GetBufOp: noop,
        IM.RlsBufOp: noop,
        IM.DeclareEventIdArrayOp: declare_eventid_array,
        IM.EventIdArrayGetOp: eventid_array_get,
        IM.EventIdArraySetOp: eventid_array_set,
        IM.BuildAsyncSessionOp: build_async_session,
        IM.TPutAsyncOp: async_copy,
        IM.TGetAsyncOp: async_copy,
        IM.WaitAsyncEventOp: async_done,
        IM.TestAsyncEventOp: async_done,
        IM.InitializeL2LPipeOp: init_fifo,
        IM.InitializeL2G2LPipeOp: init_fifo,
        IM.AicInitializePipeOp: noop,
        IM.AivInitializePipeOp: noop,
        IM.ReserveBufferOp: buffer_addr,
        IM.ImportReservedBufferOp: buffer_addr,
        IM.DeclareTileOp: declare_tile,
        IM.DeclareTileMemRefOp: declare_tile_memref,
        IM.BindTileOp: bind_tile,
        IM.SubsetOp: subset,
        IM.BitcastOp: bitcast,
        IM.TPushOp: fifo_push,
        IM.TPopOp: fifo_pop,
        IM.TFreeOp: noop,
    }.items()
}
"""Non-data ISA ops by class."""
