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

import re
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.ir import Operation

from pypto.ptoas.dialect import isa_misc_ops as IM
from pypto.ptoas.dialect import isa_tile_ops as IT
from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.dialect.base import tile_of
from pypto.ptoas.dialect.types import DYNAMIC
from pypto.ptoas.dialect.vector_ops import UNARY_OPS

from .core import CoreState, Pushed
from .memory import DeviceError, GmPtr, PartitionView, PeerGmPtr, TensorView, TileRef, to_compute, to_storage
from .numerics import CMP
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


MASK_PATTERNS: dict[str, tuple[int, int]] = {
    "P0101": (2, 0),
    "P1010": (2, 1),
    "P0001": (4, 0),
    "P0010": (4, 1),
    "P0100": (4, 2),
    "P1000": (4, 3),
    "P1111": (1, 0),
}
"""tgather mask patterns as (period, phase): element ``j`` of a row is kept when ``j % period == phase``
(the pattern's bits read from the right, bit 0 = element 0, as Ascend's GatherMask src1Pattern 1..7)."""


def tgather(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Index form: ``dst[i, j]`` = ``src`` storage element ``indices[i, j]``. Mask-pattern and
    compare forms: :func:`tgather_mask`, :func:`tgather_cmp`."""
    if op.maskPattern is not None:
        return tgather_mask(core, interp, op, args)
    if op.indices is None:
        return tgather_cmp(core, interp, op, args)
    s, ix, d = args[0], args[1], args[-1]
    raw = core.memory.raw(s)
    idx = _rd(core, ix, d.valid)
    out = np.empty(idx.shape, dtype=raw.dtype)
    for (i, j), k in np.ndenumerate(idx):
        out[i, j] = raw[_flat_index(s, int(k))]
    core.memory.raw(d)[: out.shape[0], : out.shape[1]] = out.astype(d.dtype.storage)
    return ()


def tgather_mask(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Each row of src's valid region keeps the elements its pattern selects (:data:`MASK_PATTERNS`),
    packed to the left of dst's row, bit for bit (src and dst elements have the same size); at most
    dst's valid columns; the rest of dst is left as it was."""
    s, d = args[0], args[-1]
    period, phase = MASK_PATTERNS[op.maskPattern.data.value]
    vr, vc = s.valid
    kept = core.memory.raw(s)[:vr, phase:vc:period]
    r, c = min(vr, d.valid[0]), min(kept.shape[1], d.valid[1])
    core.memory.raw(d)[:r, :c] = np.ascontiguousarray(kept[:r, :c]).view(d.dtype.storage)
    return ()


def tgather_cmp(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Compare form ``(dst, src, kValue, cdst, tmp)``: for each row ``i`` of src's valid region, the
    column indices ``j`` (ascending) with ``src[i, j] <cmpMode> kValue`` (default ``eq``), plus
    ``offset``, packed to the left of dst's row ``i`` (at most its valid columns); ``cdst[i, 0]`` = how
    many matched. The rest of dst is left as it was; ``tmp`` is scratch the simulator does not use."""
    s, _tmp, k, c, d = args
    mode = op.cmpMode.data.value if op.cmpMode is not None else "eq"
    offset = op.offset.value.data if op.offset is not None else 0
    x = _rd(core, s)
    hits = CMP[mode](x, _scalar(k, s))
    rows = min(x.shape[0], d.valid[0], c.valid[0])
    draw, craw = core.memory.raw(d), core.memory.raw(c)
    for i in range(rows):
        cols = np.flatnonzero(hits[i])
        n = min(cols.size, d.valid[1])
        draw[i, :n] = to_storage(cols[:n] + offset, d.dtype)
        craw[i, 0] = to_storage(np.asarray(cols.size), c.dtype)
    return ()


def tgatherb(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Block gather (PTO-ISA's vgatherb): dst row ``i`` in 32-byte blocks, block ``j`` (bytes
    ``32j..32j+32`` of the row's valid bytes; the last block may be shorter) = the 32 bytes of src's
    storage at byte offset ``offsets[i, j]`` (a multiple of 32, inside src)."""
    s, offs, d = args
    src = core.memory.raw(s).view(np.uint8).reshape(-1)
    off = _rd(core, offs)
    row_bytes = d.valid[1] * d.dtype.itemsize
    blocks = -(-row_bytes // 32)
    if off.shape[1] < blocks:
        raise DeviceError(f"tgatherb: dst rows need {blocks} block offsets, offsets has {off.shape[1]} valid columns")
    draw = core.memory.raw(d).view(np.uint8)
    for i in range(min(d.valid[0], off.shape[0])):
        for j in range(blocks):
            o, n = int(off[i, j]), min(32, row_bytes - 32 * j)
            if o % 32 or o < 0 or o + n > src.size:
                raise DeviceError(f"tgatherb: byte offset {o} is not a 32-byte block inside the {src.size}-byte src")
            draw[i, 32 * j : 32 * j + n] = src[o : o + n]
    return ()


def tquant(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """The inverse of tdequant, per row ``i`` (``fp`` = 1 / scale): INT8_SYM ``dst = sat_i8(rint(src *
    fp[i, 0]))``; INT8_ASYM ``dst = sat_u8(rint(src * fp[i, 0] + offset[i, 0]))``. The product and sum
    in double (one rounding, whatever FMA does), rint ties to even, NaN -> 0."""
    s, fp, d = args[0], args[1], args[-1]
    off = args[2] if len(args) == 4 else None
    x = _rd(core, s, d.valid).astype(np.float64)
    v = x * _rd(core, fp)[: x.shape[0], :1].astype(np.float64)
    if off is not None:
        v = v + _rd(core, off)[: x.shape[0], :1].astype(np.float64)
    lo, hi = (0, 255) if off is not None else (-128, 127)
    q = np.clip(np.nan_to_num(np.rint(v), nan=0.0), lo, hi)
    _wr(core, d, q.astype(np.int64))
    return ()


def tdequant(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """``dst[i, j] = (f32(src[i, j]) - offset[i, 0]) * scale[i, 0]`` in float32 (PTOAS's formula)."""
    s, scale, off, d = args
    x = _rd(core, s, d.valid).astype(np.float32)
    sc = _rd(core, scale)[: x.shape[0], :1].astype(np.float32)
    of = _rd(core, off)[: x.shape[0], :1].astype(np.float32)
    _wr(core, d, (x - of) * sc)
    return ()


# -- sorting: (value, index) pairs, 8 bytes each ----------------------------------------------------

PAIR_BYTES = 8
"""A sorted pair in a tile row (PTO-ISA's region-proposal layout): the value in bytes 0.., zero padding
up to byte 4 (f16), the u32 index in bytes 4..8."""


def _pack_pairs(values: np.ndarray, index: np.ndarray, storage: Any) -> np.ndarray:
    """Rows of (value, u32 index) pairs as bytes: (rows, pairs * 8)."""
    rows, n = values.shape
    out = np.zeros((rows, n, PAIR_BYTES), np.uint8)
    vb = np.ascontiguousarray(values.astype(storage)).view(np.uint8).reshape(rows, n, -1)
    out[:, :, : vb.shape[2]] = vb
    out[:, :, 4:] = np.ascontiguousarray(index.astype(np.uint32)).view(np.uint8).reshape(rows, n, 4)
    return out.reshape(rows, n * PAIR_BYTES)


def _unpack_pairs(raw: np.ndarray, pairs: int, storage: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values, u32 indices) of the first ``pairs`` pairs of each row of a tile's raw view."""
    b = np.ascontiguousarray(raw).view(np.uint8)[:, : pairs * PAIR_BYTES].reshape(raw.shape[0], pairs, PAIR_BYTES)
    size = np.dtype(storage).itemsize
    values = np.ascontiguousarray(b[:, :, :size]).view(storage).reshape(raw.shape[0], pairs)
    index = np.ascontiguousarray(b[:, :, 4:]).view(np.uint32).reshape(raw.shape[0], pairs)
    return values, index


def _store_pairs(core: CoreState, d: TileRef, packed: np.ndarray, what: str) -> None:
    """Write packed pair rows into the first bytes of ``d``'s rows."""
    row_bytes = d.cols * d.dtype.itemsize
    if packed.shape[1] > row_bytes:
        raise DeviceError(
            f"{what}: {packed.shape[1] // PAIR_BYTES} (value, index) pairs need {packed.shape[1]} bytes a row; "
            f"dst has {row_bytes}"
        )
    raw = core.memory.raw(d)
    rows = min(packed.shape[0], d.rows)
    raw.view(np.uint8)[:rows, : packed.shape[1]] = packed[:rows]


def _merge_desc(lists: list[list[tuple[float, int, Any, int]]], limit: int, stop_on_empty: bool) -> tuple[list, list[int]]:
    """Merge descending lists of (key, pos, value, index): ties go to the earlier list; at most ``limit``
    items; with ``stop_on_empty`` it stops as soon as one list is used up. Returns (merged, taken per list)."""
    heads = [0] * len(lists)
    out: list = []
    while len(out) < limit:
        live = [k for k in range(len(lists)) if heads[k] < len(lists[k])]
        if not live or (stop_on_empty and len(live) < len(lists)):
            break
        best = live[0]
        for k in live[1:]:
            if lists[k][heads[k]][0] > lists[best][heads[best]][0]:
                best = k
        out.append(lists[best][heads[best]])
        heads[best] += 1
    return out, heads


def tsort32(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Each row's valid values in blocks of 32 (the last one may be shorter), each block sorted
    descending (ties keep their order), written as (value, ``idx`` entry) pairs of 8 bytes: pair ``k``
    of a row at bytes ``8k..8k+8`` of dst's row (f32: 2 elements a pair, f16: 4). NaNs: unspecified."""
    s, ix, d = args[0], args[1], args[-1]
    vr, vc = s.valid
    x = core.memory.raw(s)[:vr, :vc]
    idx = core.memory.raw(ix)[:vr, :vc].astype(np.uint32)
    order = np.empty((vr, vc), np.int64)
    for b in range(0, vc, 32):
        blk = x[:, b : b + 32].astype(np.float64)
        order[:, b : b + 32] = b + np.argsort(-blk, axis=1, kind="stable")
    vals = np.take_along_axis(x, order, axis=1)
    _store_pairs(core, d, _pack_pairs(vals, np.take_along_axis(idx, order, axis=1), s.dtype.storage), "tsort32")
    return ()


def tmrgsort(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Format 1 ``(dst, src, blockLen)``: src's row holds sorted (descending) lists of ``blockLen``
    elements each (``blockLen * sizeof(T) / 8`` pairs); every 4 consecutive lists merge into one
    (ties: the earlier list first). Format 2: :func:`tmrgsort2`."""
    if not op.format1():
        return tmrgsort2(core, interp, op, args)
    s, block_len, d = args
    size = s.dtype.itemsize
    block = int(block_len) * size // PAIR_BYTES
    n = s.valid[1] * size // PAIR_BYTES
    if block <= 0 or n % (4 * block):
        raise DeviceError(f"tmrgsort: src's {s.valid[1]} valid columns are not a multiple of 4 x blockLen ({block_len})")
    vals, idx = _unpack_pairs(core.memory.raw(s), n, s.dtype.storage)
    out_v, out_i = vals.copy(), idx.copy()
    for r in range(vals.shape[0]):
        for g in range(0, n, 4 * block):
            lists = [
                [(float(vals[r, p]), p, vals[r, p], idx[r, p]) for p in range(g + k * block, g + (k + 1) * block)]
                for k in range(4)
            ]
            merged, _ = _merge_desc(lists, 4 * block, False)
            out_v[r, g : g + 4 * block] = [m[2] for m in merged]
            out_i[r, g : g + 4 * block] = [m[3] for m in merged]
    _store_pairs(core, d, _pack_pairs(out_v, out_i, s.dtype.storage), "tmrgsort")
    return ()


def tmrgsort2(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Format 2 ``(dst, executed, tmp, src0, src1[, src2[, src3]])``: merge the sources' sorted pair
    lists (each its valid row) into dst's valid row, largest first (ties: the earlier source), until dst
    is full or every list is used up; ``{exhausted = true}`` stops as soon as one list is used up. The
    executed counts (pairs taken from each list, 0 for absent lists) are written into the ``executed``
    list when its value is one the caller can see (a writable array: a kernel argument), as pto_cpu.hpp
    writes its ``MrgSortExecutedNumList``; a constant list (PTOAS's usual ``dense<0>``) stays as it is
    (an SSA constant: no op reads it back); ``tmp`` is scratch it does not use."""
    n = len(op.srcs)
    srcs, d = args[:n], args[n]
    size = d.dtype.itemsize
    lists = []
    for s in srcs:
        pairs = s.valid[1] * size // PAIR_BYTES
        vals, idx = _unpack_pairs(core.memory.raw(s)[:1], pairs, s.dtype.storage)
        lists.append([(float(vals[0, p]), p, vals[0, p], idx[0, p]) for p in range(pairs)])
    exhausted = op.exhausted is not None and bool(op.exhausted.value.data)
    merged, taken = _merge_desc(lists, d.valid[1] * size // PAIR_BYTES, exhausted)
    executed = args[-1] if op.excuted is not None else None
    if isinstance(executed, np.ndarray) and executed.size == 4 and executed.flags.writeable:
        executed.reshape(-1)[:] = np.array(taken + [0] * (4 - n), dtype=np.int64).astype(executed.dtype)
    vals = np.array([[m[2] for m in merged]], dtype=d.dtype.storage).reshape(1, len(merged))
    idx = np.array([[m[3] for m in merged]], dtype=np.uint32).reshape(1, len(merged))
    _store_pairs(core, d, _pack_pairs(vals, idx, d.dtype.storage), "tmrgsort")
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


def _mx_scaled(core: CoreState, op: Any, x: TileRef, scale: TileRef, k: int, lhs: bool) -> np.ndarray:
    """An mx operand's valid values (k columns of a, k rows of b) times their per-block scales."""
    block = op.MX_BLOCK
    v = _rd(core, x)
    v = v[:, :k] if lhs else v[:k, :]
    s = _rd(core, scale)
    blocks = -(-k // block)
    need = (v.shape[0], blocks) if lhs else (blocks, v.shape[1])
    if s.shape[0] < need[0] or s.shape[1] < need[1]:
        raise DeviceError(
            f"{op.name}: the {'a' if lhs else 'b'}_scale tile's valid {s.shape[0]}x{s.shape[1]} holds fewer than the "
            f"{need[0]}x{need[1]} scales of k={k} in blocks of {block}"
        )
    s = s[: need[0], : need[1]].astype(np.float32)
    return v * (np.repeat(s, block, axis=1)[:, :k] if lhs else np.repeat(s, block, axis=0)[:k, :])


def mx(mode: str) -> Handler:
    """tmatmul.mx[.acc|.bias], tgemv.mx*: the scaled f8 operands (``_MxOp``), fp32 sums in k order."""

    def h(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
        a, sa, b, sb = args[1:5] if mode == "acc" else args[0:4]  # mode: "mx" (plain), "acc" or "bias"
        d = args[-1]
        k = a.valid[1]
        if b.valid[0] != k:
            raise DeviceError(
                f"{op.name}: a's valid {a.valid[0]}x{k} and b's valid {b.valid[0]}x{b.valid[1]} do not chain (k)"
            )
        x = _mx_scaled(core, op, a, sa, k, True)
        y = _mx_scaled(core, op, b, sb, k, False)
        m, n = x.shape[0], y.shape[1]
        if mode == "acc":
            out = _rd(core, args[0], (m, n)).astype(np.float32)
        elif mode == "bias":
            out = np.broadcast_to(_rd(core, args[4])[:1, :n].astype(np.float32), (m, n)).copy()
        else:
            out = np.zeros((m, n), np.float32)
        for p in range(k):  # one rounding per multiply and per add, in k order (as pto_cpu.hpp)
            out += x[:, p : p + 1] * y[p : p + 1, :]
        _wr(core, d, out)
        return ()

    return h


# -- A5-only ops (run whatever the target arch; timed by the a2a3 fallback rows) -------------------


def thistogram(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """PTO-ISA's THISTOGRAM on ui16 (the radix-sort byte count): for each valid src row ``r``,
    ``dst[r, b]`` (b in 0..255) = how many of the row's valid elements have the selected byte equal to
    ``b``. ``isMSB`` (default true) counts the high byte of every element (``HistByte::BYTE_1``);
    ``isMSB = false`` counts the low byte of the elements whose high byte equals ``idx[r, 0]``
    (``BYTE_0``). Columns past 256 are left as they are."""
    s, ix, d = args
    vr, vc = s.valid
    x = core.memory.raw(s)[:vr, :vc].astype(np.uint32)
    hi, lo = x >> 8, x & 0xFF
    msb = op.isMSB is None or bool(op.isMSB.value.data)
    sel = core.memory.raw(ix)[:vr, :1].astype(np.uint32)
    out = np.zeros((vr, 256), np.uint32)
    for r in range(vr):
        vals = hi[r] if msb else lo[r][hi[r] == sel[r, 0]]
        out[r] = np.bincount(vals, minlength=256)[:256]
    core.memory.raw(d)[: min(vr, d.rows), :256] = out[: d.rows]
    return ()


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def tpack(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Narrow each valid element to dst's width by keeping the low-order bytes of its bit pattern
    (b32 -> b16, b32 -> b8, b16 -> b8: two's-complement truncation for integers)."""
    s, d = args
    vr, vc = d.valid
    x = np.ascontiguousarray(core.memory.raw(s)[:vr, :vc]).view(_UINT[s.dtype.itemsize])
    y = x.astype(_UINT[d.dtype.itemsize]).view(core.memory.raw(d).dtype)
    core.memory.raw(d)[:vr, :vc] = y
    return ()


def _gm_table(pv: Any, t: Any) -> np.ndarray:
    """A GM operand (of type ``t``) as its (rows, cols) window: a writable view of the caller's array,
    dims before the last folded into rows (as tload's views and pto_cpu.hpp's GlobalTensor do)."""
    if isinstance(pv, PartitionView):
        w = pv.window()
    elif isinstance(pv, GmPtr):
        shape = tuple(t.get_shape()) if isinstance(t, MemRefType) and DYNAMIC not in t.get_shape() else (-1,)
        n = int(np.prod(shape)) if -1 not in shape else pv.flat.size - pv.offset
        if pv.offset + n > pv.flat.size:
            raise DeviceError(f"GM memref of {n} elements at {pv.offset} exceeds the {pv.flat.size}-element argument")
        w = pv.flat[pv.offset : pv.offset + n].reshape(shape if -1 not in shape else (n,))
    else:
        raise DeviceError(f"expects a GM view or pointer, got {type(pv).__name__}")
    if w.ndim == 2:
        return w
    table = w.reshape(int(np.prod(w.shape[:-1])) if w.ndim > 1 else 1, w.shape[-1])
    if not np.shares_memory(table, w):
        raise DeviceError("a strided N-D GM view cannot be indexed as one table (give a 2-D view)")
    return table


def _remap(k: np.ndarray, cap: int, mode: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Indices after the out-of-bounds mode, and which are in bounds (``zero`` / ``skip`` drop the rest)."""
    k = k.astype(np.int64)
    if mode == "clamp":
        k = np.clip(k, 0, cap - 1)
    elif mode == "wrap":
        k = np.mod(k, cap)
    ok = (k >= 0) & (k < cap)
    if mode in ("undefined", "none") and not ok.all():
        bad = int(k[~ok].reshape(-1)[0])
        raise DeviceError(f"{what}: index {bad} is outside the GM table of {cap} entries (no out-of-bounds mode)")
    return np.where(ok, k, 0), ok


def _gm_mode(table: np.ndarray, idx: np.ndarray, vc: int, what: str) -> bool:
    """True for PTO-ISA's row form (``idx`` one column, rows of ``vc`` elements), False for the element form."""
    if idx.shape[1] == vc:
        return False
    if table.shape[1] < vc:
        raise DeviceError(f"{what}: GM table rows of {table.shape[1]} elements are shorter than the tile's {vc} columns")
    return True


def mgather(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """GM gather (PTO-ISA MGATHER): element form (``idx`` has dst's valid columns) ``dst[i, j] =
    table[idx[i, j]]`` over the GM view's elements in row-major order; row form (``idx`` one column)
    ``dst[i, :] = table row idx[i, 0]``. ``gatherOob``: clamp / wrap the index, zero fills, undefined
    (default) stops with an error on the simulator."""
    mem, ix, d = args
    vr, vc = d.valid
    table = _gm_table(mem, op.mem.type)
    idx = core.memory.raw(ix)[:vr, : ix.valid[1]]
    mode = op.gatherOob.data.value if op.gatherOob is not None else "undefined"
    out = np.zeros((vr, vc), table.dtype)
    if _gm_mode(table, idx, vc, "mgather"):
        k, ok = _remap(idx[:, :1], table.shape[0], mode, "mgather")
        out[:] = np.where(ok, table[k[:, 0], :vc], out)
    else:
        flat = table.reshape(-1)
        k, ok = _remap(idx[:, :vc], flat.size, mode, "mgather")
        out[:] = np.where(ok, flat[k], out)
    core.memory.raw(d)[:vr, :vc] = out
    return ()


def mscatter(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """GM scatter (PTO-ISA MSCATTER), the inverse of :func:`mgather`'s two forms, element by element in
    row-major order (a later write to the same place wins). ``scatterAtomicOp`` add / max / min combine
    with what GM holds (add in the element type, wrapping for integers); ``scatterOob``: skip drops,
    clamp / wrap remap, undefined (default) stops with an error on the simulator."""
    s, ix, mem = args
    vr, vc = s.valid
    table = _gm_table(mem, op.mem.type)
    idx = core.memory.raw(ix)[:vr, : ix.valid[1]]
    x = core.memory.raw(s)[:vr, :vc]
    mode = op.scatterOob.data.value if op.scatterOob is not None else "undefined"
    atomic = op.scatterAtomicOp.data.value if op.scatterAtomicOp is not None else "none"
    row = _gm_mode(table, idx, vc, "mscatter")
    k, ok = _remap(idx[:, :1] if row else idx[:, :vc], table.shape[0] if row else table.size, mode, "mscatter")
    for i in range(vr):
        for j in range(vc):
            if not ok[i, 0 if row else j]:
                continue
            if row:
                at: tuple[int, int] = (int(k[i, 0]), j)
            else:
                at = divmod(int(k[i, j]), table.shape[1])
            v = x[i, j]
            if atomic == "add":
                with np.errstate(over="ignore"):
                    v = (table[at] + v).astype(table.dtype)
            elif atomic == "max":
                v = max(table[at], v)
            elif atomic == "min":
                v = min(table[at], v)
            table[at] = v
    return ()


_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)
_M32 = 0xFFFFFFFF


def philox4x32(counter: int, key: tuple[int, int], rounds: int) -> tuple[int, int, int, int]:
    """Philox-4x32-``rounds`` (Salmon et al., SC'11) of a 128-bit counter (word 0 lowest): PTO-ISA's
    TRANDOM generator (multipliers 0xD2511F53 / 0xCD9E8D57, key bumps 0x9E3779B9 / 0xBB67AE85)."""
    c = [(counter >> (32 * w)) & _M32 for w in range(4)]
    k0, k1 = key[0] & _M32, key[1] & _M32
    for _ in range(rounds):
        p0, p1 = c[0] * _PHILOX_M[0], c[2] * _PHILOX_M[1]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & _M32, (p0 >> 32) ^ c[3] ^ k1, p0 & _M32]
        k0, k1 = (k0 + _PHILOX_W[0]) & _M32, (k1 + _PHILOX_W[1]) & _M32
    return c[0], c[1], c[2], c[3]


TRANDOM_LANES = 64
"""32-bit lanes of one 256-byte vector repeat: one Philox counter each, 4 words out."""


def trandom(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """PTO-ISA's A5 TRANDOM: row by row, chunks of ``4 * 64`` columns; lane ``L`` of a chunk runs
    :func:`philox4x32` on ``counter + L`` (128-bit) and its 4 words fill columns ``4L .. 4L + 3`` of the
    chunk (valid columns only). After each chunk the counter advances by 64, after a row's last chunk by
    ``(valid_cols - 1) % 64 + 1``; it carries on into the next row."""
    k0, k1, *cs, d = args
    key = (int(k0), int(k1))
    ctr = sum((int(c) & _M32) << (32 * w) for w, c in enumerate(cs))
    rounds = op.rounds.value.data if op.rounds is not None else 10
    vr, vc = d.valid
    chunk = 4 * TRANDOM_LANES
    loops = -(-vc // chunk)
    out = np.zeros((vr, loops * chunk), np.uint32)
    for r in range(vr):
        for j in range(loops):
            words = [philox4x32((ctr + lane) & ((1 << 128) - 1), key, rounds) for lane in range(TRANDOM_LANES)]
            out[r, j * chunk : (j + 1) * chunk] = np.array(words, np.uint32).reshape(-1)
            step = TRANDOM_LANES if j != loops - 1 else (vc - 1) % TRANDOM_LANES + 1
            ctr = (ctr + step) & ((1 << 128) - 1)
    core.memory.raw(d)[:vr, :vc] = out[:, :vc].view(core.memory.raw(d).dtype)
    return ()


SHIFT_MX_ADDR = 4
"""PTO-ISA's A5 scale-address shift (``include/pto/npu/a5/utils.hpp``)."""


def tget_scale_addr(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """PTO-ISA's TGET_SCALE_ADDR: ``dst`` (a scaling tile) is rebound to byte ``addr(src) >> 4`` of the
    scaling buffer, where the mx ops find ``src``'s scales. No data moves, so the race detector sees
    no access: one scalar-pipe instruction. Later uses of ``dst`` see the new place."""
    s, d = args
    d.addr = s.addr >> SHIFT_MX_ADDR
    d.raw_view = None
    core.memory.raw(d)  # bounds-checked now
    cycles = core.costs.compute("TGET_SCALE_ADDR", s.dtype.name, 1, 1)
    core.account(op, "TGET_SCALE_ADDR", Pipe.PIPE_S, cycles, "compute", [], [], f"{s.space}@{s.addr} -> scaling@{d.addr}")
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
    IT.TGatherBOp: tgatherb,
    IT.TPrefetchOp: nothing,
    IT.TDequantOp: tdequant,
    IT.TQuantOp: tquant,
    IT.TSort32Op: tsort32,
    IT.TMrgSortOp: tmrgsort,
    IT.TMovFPOp: tmov,
    IT.TStoreFPOp: tstore_fp,
    IT.TExtractFPOp: textract_fp,
    IT.TInsertFPOp: tinsert_fp,
    **{cls: mx(cls.name.rsplit(".", 1)[1]) for cls in IT.MX_OPS},  # mx / acc / bias
    IT.THistogramOp: thistogram,
    IT.TPackOp: tpack,
    IT.MGatherOp: mgather,
    IT.MScatterOp: mscatter,
    IT.TRandomOp: trandom,
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


_C_LENGTH = re.compile(r"(%[-+ #0]*\d*(?:\.\d+)?)(?:hh|h|ll|l|j|z|t|L)")
"""A printf length modifier after a conversion's flags, width and precision (Python's % takes none)."""


def c_format(fmt: str, value: Any) -> str:
    """``printf(fmt, value)`` as C writes it (the C++ engine's ``cce::printf``): an empty format is ``%f``
    (PTOAS's), length modifiers are dropped, a format without a conversion ignores the value."""
    fmt = fmt or "%f"
    spec = _C_LENGTH.sub(r"\1", fmt)
    if "%" not in spec.replace("%%", ""):
        return spec.replace("%%", "%")
    try:
        return spec % (value,)
    except (TypeError, ValueError):
        return f"{fmt} {value}"


def pto_print(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """printf of one scalar (:func:`c_format`), kept in ``core.prints`` (as tprint's tiles)."""
    core.prints.append(c_format(op.format.data, args[0]))
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


def _async_operand(v: Any, what: str, op: Any) -> tuple[np.ndarray, int | None]:
    """The GM elements a ``tput_async`` / ``tget_async`` operand names (a writable view) and the rank they
    lie on when it is another one's window (None: this chip's GM)."""
    if isinstance(v, np.ndarray):
        return v, None
    if isinstance(v, PartitionView):
        return v.window(), (v.ptr.peer if isinstance(v.ptr, PeerGmPtr) else None)
    if isinstance(v, TensorView):
        arr = v.array()
        if arr is None:
            raise DeviceError(f"'{op.name}': {what} view does not lie inside its GM argument")
        return arr, (v.ptr.peer if isinstance(v.ptr, PeerGmPtr) else None)
    if isinstance(v, GmPtr):
        n = int(np.prod(op.dst.type.get_shape()))
        return v.flat[v.offset : v.offset + n], (v.peer if isinstance(v, PeerGmPtr) else None)
    raise DeviceError(f"'{op.name}': {what} is not a GM memref or view (got {type(v).__name__})")


def async_copy(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """One GM -> GM copy of the flat view, done when issued; timed as a transfer on the op's pipe through the
    session's UB scratch (a get as a GM->UB load, a put as a UB->GM store), or, when one side is another
    rank's window (``pto.comm.peer_view``), over the rank link (:func:`.comm_impls.link_transfer`: a put lands
    ``hop(bytes)`` after it starts, a get ``latency + hop(bytes)``; back-to-back ones overlap their latency)."""
    dst, dpeer = _async_operand(args[0], "dst", op)
    src, speer = _async_operand(args[1], "src", op)
    if dst.size != src.size:
        raise DeviceError(f"'{op.name}': dst has {dst.size} elements, src {src.size}")
    if speer is not None:
        from .comm_impls import remote_fetch

        remote_fetch(op, src)
    dst[...] = src.reshape(dst.shape)
    if dpeer is not None:
        from .comm_impls import remote_commit

        remote_commit(op, dst)
    nbytes = int(src.size * src.itemsize)
    session = args[2]
    scratch = [session[1]] if isinstance(session, tuple) and isinstance(session[1], TileRef) else []
    put = op.pipe() == Pipe.PIPE_MTE3
    peer = dpeer if dpeer is not None else speer
    pipe, instr = op.pipe(), op.name[4:].upper()
    if peer is None:
        cycles = (
            core.costs.transfer("TSTORE", "vec", None, nbytes) if put else core.costs.transfer("TLOAD", None, "vec", nbytes)
        )
        core.account(op, instr, pipe, cycles, "transfer", scratch, scratch, f"gm->gm {nbytes}B")
    else:
        from .comm_impls import _link, link_transfer

        link = _link(op)
        name = f"{instr.lower()} {'->' if put else '<-'} r{peer}"
        link_transfer(core, op, pipe, instr, f"{nbytes}B {'->' if put else '<-'} r{peer}", nbytes,
                      lambda start: link.transfer(name, peer, nbytes, put, start), drain=False, tiles=scratch)
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
        IT.TGetScaleAddrOp: tget_scale_addr,
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
