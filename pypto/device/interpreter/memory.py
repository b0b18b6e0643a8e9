"""Device memory of one simulated core: byte-addressed on-chip buffers and GM tensors.

Every on-chip address space (``vec`` = UB, ``mat`` = L1, ``left`` = L0A,
``right`` = L0B, ``acc`` = L0C, ``bias``, ``scaling``) is one ``uint8`` array
sized from the target's capacity. A tile is a typed numpy *view* of its bytes
at ``(address, dtype, shape)``, so two tiles at overlapping addresses really
share bytes (aliasing and address bugs show up as wrong numbers), and a tile
that does not fit is an error naming the op.

Layout: a ``blayout=col_major`` tile is stored column-major, a row-major one
row-major; fractal (NZ box) layouts are not modelled. ``bf16`` is stored as
its ``uint16`` bit pattern and computed in ``float32``; ``f16`` is computed in
``float32`` and rounded to ``float16`` on every store.

GM tensors are the caller's numpy arrays: a ``!pto.ptr<T>`` is a flat view
plus an element offset, views are strided windows (bounds-checked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float8E4M3Type,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from pypto.errors import Error
from pypto.target import load_target

from .float8 import E4M3FN, E5M2, E8M0, Float8Format


class DeviceError(Error):
    """A kernel did something the device cannot do (out-of-bounds address, bad argument, deadlock): the
    program's fault, a user error to a tool (exit 1, one located line), not an internal error."""


@dataclass(frozen=True)
class DType:
    """An element type: its name in the cost tables, storage and compute numpy dtypes."""

    name: str  # fp32 fp16 bf16 int8 int16 int32 int64 uint8 ... bool
    storage: np.dtype
    compute: np.dtype
    f8: Float8Format | None = field(default=None, compare=False)
    """The 8-bit float format of an f8 element type (stored as its codes)."""
    itemsize: int = field(init=False, repr=False, compare=False)
    """Bytes per element (``storage.itemsize``, kept: read on every tile copy)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "itemsize", self.storage.itemsize)

    @property
    def is_float(self) -> bool:
        """Floating-point element type."""
        return self.name in ("fp32", "fp16", "bf16", "fp64") or self.f8 is not None

    @property
    def bits_stored(self) -> bool:
        """A float kept as its bit pattern in an unsigned integer (bf16, the f8 formats): GM arrays hold bits."""
        return self.is_float and self.storage.kind == "u"


F32 = DType("fp32", np.dtype(np.float32), np.dtype(np.float32))
F16 = DType("fp16", np.dtype(np.float16), np.dtype(np.float32))
BF16 = DType("bf16", np.dtype(np.uint16), np.dtype(np.float32))
F64 = DType("fp64", np.dtype(np.float64), np.dtype(np.float64))
F8E4M3 = DType("fp8e4m3fn", np.dtype(np.uint8), np.dtype(np.float32), E4M3FN)
F8E5M2 = DType("fp8e5m2", np.dtype(np.uint8), np.dtype(np.float32), E5M2)
F8E8M0 = DType("fp8e8m0", np.dtype(np.uint8), np.dtype(np.float32), E8M0)
"""The 8-bit float DTypes: stored as their codes, computed in float32 (:mod:`.float8`)."""


def _int_dtype(width: int, unsigned: bool) -> DType:
    if width == 1:
        return DType("bool", np.dtype(np.uint8), np.dtype(np.uint8))
    np_t = np.dtype(f"{'u' if unsigned else ''}int{width}")
    return DType(f"{'uint' if unsigned else 'int'}{width}", np_t, np_t)


def dtype_named(name: str) -> DType:
    """The DType called ``name`` (``fp32``, ``bf16``, ``int32``, ``uint8``, ...): a DType's ``name`` back."""
    for dt in (F32, F16, BF16, F64, F8E4M3, F8E5M2, F8E8M0):
        if dt.name == name:
            return dt
    if name == "bool":
        return _int_dtype(1, False)
    unsigned = name.startswith("u")
    return _int_dtype(int(name.removeprefix("uint" if unsigned else "int")), unsigned)


def dtype_of(t: Attribute) -> DType:
    """The DType of an xDSL element type."""
    if isinstance(t, Float32Type):
        return F32
    if isinstance(t, Float16Type):
        return F16
    if isinstance(t, BFloat16Type):
        return BF16
    if isinstance(t, Float64Type):
        return F64
    if isinstance(t, IntegerType):
        return _int_dtype(t.width.data, t.signedness.data == Signedness.UNSIGNED)
    if isinstance(t, Float8E4M3FNType | Float8E4M3Type):  # both e4m3fn, as PTOAS's C++ type
        return F8E4M3
    if isinstance(t, Float8E5M2Type):
        return F8E5M2
    if isinstance(t, Float8E8M0FNUType):
        return F8E8M0
    if isinstance(t, IndexType):
        return _int_dtype(64, False)
    raise DeviceError(f"unsupported element type {t}")


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    """Widen bf16 bit patterns (uint16) to float32."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(values: np.ndarray) -> np.ndarray:
    """Round float32 to bf16 (nearest, ties to even) and return the uint16 bit patterns."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = (bits + (((bits >> 16) & 1) + 0x7FFF)) >> 16
    nan = np.isnan(values)
    out = rounded.astype(np.uint16)
    if nan.any():
        out[nan] = 0x7FC0
    return out


def to_compute(raw: np.ndarray, dt: DType, copy: bool = True) -> np.ndarray:
    """Stored elements -> compute-dtype values (a copy unless ``copy=False`` and the dtypes agree)."""
    if dt is BF16:
        return bf16_to_f32(raw)
    if dt.f8 is not None:
        return dt.f8.decode(raw)
    return raw.astype(dt.compute, copy=copy)


def to_storage(values: np.ndarray | float | int, dt: DType) -> np.ndarray:
    """Compute values -> stored elements (bf16 rounded to nearest even, floats cast)."""
    arr = np.asarray(values)
    if dt is BF16:
        return f32_to_bf16(arr.astype(np.float32))
    if dt.f8 is not None:
        return dt.f8.encode(arr)
    return arr.astype(dt.storage, copy=False)


@dataclass(eq=False)
class TileRef:
    """The runtime value of a ``!pto.tile_buf`` (or address-space memref): where a tile lives."""

    space: str
    addr: int
    dtype: DType
    rows: int
    cols: int
    valid: tuple[int, int]
    col_major: bool = False
    raw_view: np.ndarray | None = field(default=None, repr=False)
    """Its (rows, cols) view of a core's buffer, kept by :meth:`CoreMemory.raw` on first use."""
    nbytes: int = field(init=False, repr=False)
    """Physical size in bytes (rows, cols and dtype never change)."""

    def __post_init__(self) -> None:
        self.nbytes = self.rows * self.cols * self.dtype.itemsize

    def byte_range(self) -> tuple[int, int]:
        """``[lo, hi)`` bytes of its space the tile occupies."""
        return self.addr, self.addr + self.nbytes


@dataclass
class GmPtr:
    """A ``!pto.ptr<T>``: the caller's array (flat) and an element offset."""

    flat: np.ndarray
    offset: int
    dtype: DType


@dataclass
class PeerGmPtr(GmPtr):
    """A pointer into another rank's window region (``pto.comm.peer_view``): a ``tload`` / ``tstore``
    through it is a remote access, priced by the rank link (:func:`.comm_impls.remote_tile`)."""

    peer: int = 0


@dataclass
class TensorView:
    """A ``!pto.tensor_view``: a pointer with shape and element strides."""

    ptr: GmPtr
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    _array: np.ndarray | None | bool = field(default=False, repr=False)

    def array(self) -> np.ndarray | None:
        """The whole view as a strided numpy view of the caller's array, or None when it does not lie
        inside the array (its partitions are then checked one by one)."""
        if self._array is False:
            self._array = self._whole()
        return self._array  # type: ignore[return-value]

    def _whole(self) -> np.ndarray | None:
        """:meth:`array`, computed (a 2-D view with non-negative strides of a contiguous array, the common
        case, built directly: what :meth:`PartitionView.window` of the whole view gives)."""
        shape, strides, ptr = self.shape, self.strides, self.ptr
        if min(shape, default=1) <= 0:
            return None
        flat, start = ptr.flat, ptr.offset
        if len(shape) == 2 and start >= 0 and strides[0] >= 0 and strides[1] >= 0 and flat.flags.c_contiguous:
            if start + (shape[0] - 1) * strides[0] + (shape[1] - 1) * strides[1] >= flat.size:
                return None
            item = flat.itemsize
            return np.ndarray(shape, flat.dtype, flat, start * item, (strides[0] * item, strides[1] * item))
        try:
            return PartitionView(ptr, 0, shape, strides).window()
        except DeviceError:
            return None

    def partition_2d(self, o0: int, o1: int, n0: int, n1: int) -> PartitionView:
        """:meth:`partition` of a 2-D view, unrolled (a tile loop's window per iteration)."""
        base = self._array
        if base is False:
            base = self.array()
        (d0, d1), strides = self.shape, self.strides
        pv = PartitionView(self.ptr, o0 * strides[0] + o1 * strides[1], (n0, n1), strides)
        if base is not None and 0 <= o0 and 0 <= o1 and 0 <= n0 and 0 <= n1 and o0 + n0 <= d0 and o1 + n1 <= d1:
            pv.view = base[o0 : o0 + n0, o1 : o1 + n1]  # type: ignore[index]
        return pv

    def partition(self, offsets: Sequence[int], sizes: Sequence[int]) -> PartitionView:
        """The window at ``offsets`` with ``sizes`` (a slice of :meth:`array` when it lies inside the view)."""
        if len(offsets) == 2 and len(self.shape) == 2 and len(sizes) == 2:  # the common case
            return self.partition_2d(offsets[0], offsets[1], sizes[0], sizes[1])
        base = self.array()
        offset = 0
        for o, st in zip(offsets, self.strides, strict=True):
            offset += o * st
        pv = PartitionView(self.ptr, offset, tuple(sizes), self.strides)
        if base is not None and len(sizes) == len(self.shape):
            index = []
            for o, n, d in zip(offsets, sizes, self.shape, strict=True):
                if o < 0 or n < 0 or o + n > d:
                    return pv
                index.append(slice(o, o + n))
            pv.view = base[tuple(index)]
        return pv


@dataclass(slots=True)
class PartitionView:
    """A ``!pto.partition_tensor_view``: a strided window of GM."""

    ptr: GmPtr
    offset: int
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    view: np.ndarray | None = field(default=None, repr=False)
    """The window, when it was sliced from its tensor view's array (:meth:`TensorView.partition`)."""

    def window(self) -> np.ndarray:
        """The window as a writable strided numpy view of the caller's array (bounds-checked)."""
        if self.view is not None:
            return self.view
        flat = self.ptr.flat
        start = self.ptr.offset + self.offset
        first = last = start
        for size, stride in zip(self.sizes, self.strides, strict=True):
            if size <= 0:
                if size < 0:
                    first = -1
                continue
            if stride < 0:
                first += (size - 1) * stride
            else:
                last += (size - 1) * stride
        if start < 0 or first < 0 or last >= flat.size:
            raise DeviceError(
                f"GM window offset {start} sizes {list(self.sizes)} strides {list(self.strides)} is outside the "
                f"argument of {flat.size} elements"
            )
        item = flat.itemsize
        strides = self.strides
        if len(strides) == 2:  # the common case, without a generator (once per tensor view and run)
            byte_strides: tuple[int, ...] = (strides[0] * item, strides[1] * item)
        else:
            byte_strides = tuple([st * item for st in strides])
        if first == start and flat.flags.c_contiguous:
            return np.ndarray(self.sizes, flat.dtype, flat, start * item, byte_strides)
        return as_strided(flat[start:], shape=self.sizes, strides=byte_strides)


def view_2d(shape: tuple[int, ...]) -> tuple[int, int]:
    """Collapse an N-D partition shape to (rows, cols) as tload/tstore do."""
    if not shape:
        return 1, 1
    rows = 1
    for d in shape[:-1]:
        rows *= d
    return rows, shape[-1]


_SPACE_TABLES: dict[tuple[object, ...], tuple[dict[str, int], dict[str, int]]] = {}
"""(capacity, alignment) by pto space per target table contents (:meth:`CoreMemory.for_target` runs once per
kernel run; the packaged target is read and lowered once)."""


@dataclass
class CoreMemory:
    """The on-chip buffers of one core, plus the interpreter's own placement of unaddressed tiles."""

    capacity: dict[str, int]
    alignment: dict[str, int] = field(default_factory=dict)
    buffers: dict[str, np.ndarray] = field(default_factory=dict)
    _next_free: dict[str, int] = field(default_factory=dict)
    _placed: dict[object, int] = field(default_factory=dict)
    _zeroed: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """Per space, the sorted, disjoint, non-adjacent byte ranges zeroed so far (:meth:`_bytes`)."""

    @staticmethod
    def for_target(
        target_capacity: Mapping[str, int] | None, target_alignment: Mapping[str, int] | None = None
    ) -> CoreMemory:
        """Capacities and placement alignments by pto space (``vec`` is the target's ``Vec``)
        from a target's tables; spaces they leave out keep the packaged a2a3 target's."""
        key = (tuple((target_capacity or {}).items()), tuple((target_alignment or {}).items()))
        tables = _SPACE_TABLES.get(key)
        if tables is None:
            a2a3 = load_target("a2a3")

            def by_pto_space(base: Mapping[str, int], table: Mapping[str, int] | None) -> dict[str, int]:
                return {space.lower(): int(n) for space, n in {**base, **(table or {})}.items()}

            tables = _SPACE_TABLES[key] = (
                by_pto_space(a2a3.capacity, target_capacity),
                by_pto_space(a2a3.alignment, target_alignment),
            )
        return CoreMemory(dict(tables[0]), dict(tables[1]))

    def fresh(self) -> CoreMemory:
        """An empty memory with this one's capacities, alignments and reserved ranges (no buffer, nothing
        placed): a run's memory copied from a template (the tables are shared: nothing writes them)."""
        return CoreMemory(self.capacity, self.alignment, _next_free=dict(self._next_free))

    def buffer(self, space: str) -> np.ndarray:
        """The byte array of a space, every byte zero until written."""
        return self._bytes(space, 0, self.capacity.get(space, 0))

    def _bytes(self, space: str, lo: int, hi: int) -> np.ndarray:
        """The byte array of a space with ``[lo, hi)`` zero until written: a space is allocated uninitialised
        and zeroed a range at a time, as tiles first view it (zeroing a whole 192 KB ``vec`` buffer per run
        cost more than a kernel's first tile op; a cube kernel's ``mat`` is 512 KB)."""
        buf = self.buffers.get(space)
        if buf is None:
            if space not in self.capacity:
                raise DeviceError(f"no on-chip address space {space!r}")
            buf = self.buffers[space] = np.empty(self.capacity[space], dtype=np.uint8)
            self._zeroed[space] = []
        lo, hi = max(lo, 0), min(hi, buf.size)  # a tile reaching outside is an error of its caller's
        if lo < hi:
            _zero_new(buf, self._zeroed[space], lo, hi)
        return buf

    def place(self, key: object, space: str, nbytes: int) -> int:
        """An address for an allocation without ``addr`` (bump allocator; same key -> same address)."""
        if key in self._placed:
            return self._placed[key]
        align = self.alignment.get(space, 1)
        start = -(-self._next_free.get(space, 0) // align) * align
        if start + nbytes > self.capacity.get(space, 0):
            raise DeviceError(
                f"{space} is full: {nbytes} more bytes at {start} exceed its {self.capacity.get(space, 0)}"
            )
        self._next_free[space] = start + nbytes
        self._placed[key] = start
        return start

    def reserve(self, space: str, end: int) -> None:
        """Keep the interpreter's own placements above a user-given address range."""
        self._next_free[space] = max(self._next_free.get(space, 0), end)

    def raw(self, tile: TileRef) -> np.ndarray:
        """The tile's stored elements as a writable (rows, cols) view of its bytes."""
        view = tile.raw_view
        if view is not None:
            return view
        lo, hi = tile.byte_range()
        buf = self._bytes(tile.space, lo, hi)
        if lo < 0 or hi > buf.size:
            raise DeviceError(
                f"tile {tile.rows}x{tile.cols}x{tile.dtype.name} at {tile.space}[{lo}:{hi}] exceeds the "
                f"{buf.size}-byte {tile.space} buffer"
            )
        flat = buf[lo:hi].view(tile.dtype.storage)
        view = flat.reshape(tile.cols, tile.rows).T if tile.col_major else flat.reshape(tile.rows, tile.cols)
        tile.raw_view = view
        return view

    def read(self, tile: TileRef, copy: bool = True) -> np.ndarray:
        """The tile's valid region in its compute dtype: a copy, or with ``copy=False`` possibly a view of
        the buffer (for readers that do not write into it)."""
        vr, vc = tile.valid
        return to_compute(self.raw(tile)[:vr, :vc], tile.dtype, copy)

    def write(
        self, tile: TileRef, values: np.ndarray | float | int, rows: int | None = None, cols: int | None = None
    ) -> None:
        """Store compute values into the valid region (or the first ``rows`` x ``cols``)."""
        vr, vc = tile.valid
        r = vr if rows is None else rows
        c = vc if cols is None else cols
        self.raw(tile)[:r, :c] = to_storage(values, tile.dtype)


def _zero_new(buf: np.ndarray, zeroed: list[tuple[int, int]], lo: int, hi: int) -> None:
    """Zero the bytes of ``buf[lo:hi]`` outside the ranges ``zeroed`` (sorted, disjoint, non-adjacent), and
    add ``[lo, hi)`` to them (merged with the ranges it overlaps or touches)."""
    for a, b in zeroed:
        if a <= lo and hi <= b:
            return
    kept: list[tuple[int, int]] = []
    pos, new_lo, new_hi = lo, lo, hi
    for a, b in zeroed:
        if b < lo or a > hi:
            kept.append((a, b))
            continue
        if a > pos:
            buf[pos:a] = 0
        if b > pos:
            pos = b
        new_lo, new_hi = min(new_lo, a), max(new_hi, b)
    if pos < hi:
        buf[pos:hi] = 0
    kept.append((new_lo, new_hi))
    kept.sort()
    zeroed[:] = kept
