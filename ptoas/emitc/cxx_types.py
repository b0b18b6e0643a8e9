"""C++ spellings of PTO types and enum values (pto-dialect.md §8).

- element types: f16 -> ``half``, bf16 -> ``bfloat16_t``, f32 -> ``float``, iN -> ``intN_t``,
  uiN -> ``uintN_t``, i1 -> ``bool``, index -> ``int32_t`` (PTOAS's ``kPTOIndexBitWidth``; an
  ``scf.for`` counter over index is ``size_t``: :mod:`.scalar`);
- ``!pto.ptr<T>`` -> ``__gm__ T*``;
- ``!pto.tile_buf<...>`` (and ``memref<..., #pto.address_space<loc>>``) ->
  ``Tile<TileType::Vec, float, R, C, BLayout::RowMajor, VR, VC, SLayout::NoneBox, 512, PadValue::Null, CompactMode::Null>``
  (``-1`` for a dynamic valid dim).
"""

from __future__ import annotations

from xdsl.dialects.builtin import Float64Type, IndexType, IntegerType, MemRefType, VectorType
from xdsl.ir import Attribute

from pypto.ptoas.dialect.attrs import TILE_LOCS, AddressSpace, AddressSpaceAttr, BLayout, SLayout
from pypto.ptoas.dialect.base import A2A3
from pypto.ptoas.dialect.types import DYNAMIC, PtrType, TileBufType, TileSpec, element_bits
from pypto.target import load_target
from pypto.target.dtypes import BY_MLIR

from .errors import EmitError

BLAYOUTS = {BLayout.row_major: "RowMajor", BLayout.col_major: "ColMajor"}
SLAYOUTS = {SLayout.none_box: "NoneBox", SLayout.row_major: "RowMajor", SLayout.col_major: "ColMajor"}
PAD_VALUES = {0: "Null", 1: "Zero", 2: "Max", 3: "Min"}
COMPACT_MODES = {0: "Null", 1: "Normal", 2: "RowPlusOne"}

# Default layouts of a memref-typed tile per location (pto-dialect.md §2 "Usual layouts").
DEFAULT_LAYOUTS: dict[AddressSpace, tuple[BLayout, SLayout, int]] = {
    AddressSpace.vec: (BLayout.row_major, SLayout.none_box, 512),
    AddressSpace.mat: (BLayout.col_major, SLayout.row_major, 512),
    AddressSpace.left: (BLayout.col_major, SLayout.row_major, 512),
    AddressSpace.right: (BLayout.row_major, SLayout.col_major, 512),
    AddressSpace.acc: (BLayout.col_major, SLayout.row_major, 1024),
    AddressSpace.bias: (BLayout.row_major, SLayout.none_box, 512),
    AddressSpace.scaling: (BLayout.row_major, SLayout.none_box, 512),
}


INDEX_CTYPE = "int32_t"
"""PTOAS's C++ type of ``index`` (its EmitC type converter: ``index`` -> ``int32_t``)."""


F8_CTYPES = {"f8E4M3": "float8_e4m3_t", "f8E5M2": "float8_e5m2_t", "f8E8M0": "float8_e8m0_t"}
"""PTOAS's C++ types of the f8 families (``PTOToEmitC.cpp``; f8E4M3FN, f8E4M3FNUZ, ... alike); f8E8M0FNU
(the mx scales) is pto-isa's ``float8_e8m0_t``."""


def element_ctype(t: Attribute) -> str:
    """The C++ type of an element or scalar type (the ``cxx`` column of :mod:`pypto.target.dtypes`)."""
    if isinstance(t, Float64Type):
        return "double"  # not a PyPTO dtype, but a scalar C++ may compute in
    if isinstance(t, IndexType):
        return INDEX_CTYPE
    spelled = str(t)
    for family, cxx in F8_CTYPES.items():  # PTOAS spells every variant of a family alike
        if spelled.startswith(family):
            return cxx
    row = BY_MLIR.get(spelled)
    if row is None or row.cxx is None:
        raise EmitError(f"{'integer ' if isinstance(t, IntegerType) else ''}type {t} has no C++ spelling")
    return row.cxx


def element_bytes(t: Attribute) -> int:
    """Bytes per element in on-chip memory (i1 takes a byte)."""
    bits = element_bits(t)
    if bits == 0 or isinstance(t, IndexType):
        raise EmitError(f"type {t} is not a tile element type")
    return max(1, bits // 8)


def tile_spec(t: Attribute) -> TileSpec | None:
    """The tile parameters of a tile_buf or an address-space memref (None for other types)."""
    if isinstance(t, TileBufType):
        return t.spec()
    if isinstance(t, MemRefType) and isinstance(t.memory_space, AddressSpaceAttr):
        loc = AddressSpace(t.memory_space.data)
        if loc not in TILE_LOCS:
            return None
        dims = list(t.get_shape())
        if not dims or min(dims) < 0:
            raise EmitError(f"memref tile {t} must be static")
        rows = 1
        for d in dims[:-1]:
            rows *= d  # an N-D memref tile: its leading dims are its rows
        dims = [rows, dims[-1]]
        blayout, slayout, fractal = DEFAULT_LAYOUTS[loc]
        return TileSpec(loc, t.element_type, dims[0], dims[1], dims[0], dims[1], blayout, slayout, fractal)
    return None


def tile_type(loc: AddressSpace) -> str:
    """The C++ ``TileType`` of a tile location: the target's name of the space (``vec`` -> ``Vec``)."""
    return load_target(A2A3).space_name(loc.value)


def tile_ctype(spec: TileSpec) -> str:
    """``Tile<...>`` of these parameters."""
    vr = -1 if spec.v_row == DYNAMIC else spec.v_row
    vc = -1 if spec.v_col == DYNAMIC else spec.v_col
    return (
        f"Tile<TileType::{tile_type(spec.loc)}, {element_ctype(spec.dtype)}, {spec.rows}, {spec.cols}, "
        f"BLayout::{BLAYOUTS[spec.blayout]}, {vr}, {vc}, SLayout::{SLAYOUTS[spec.slayout]}, {spec.fractal}, "
        f"PadValue::{PAD_VALUES[spec.pad]}, CompactMode::{COMPACT_MODES[spec.compact]}>"
    )


def tile_bytes(spec: TileSpec) -> int:
    """Physical size of a tile in bytes."""
    return spec.rows * spec.cols * element_bytes(spec.dtype)


MRGSORT_LIST = "pto::MrgSortExecutedNumList"
"""PTOAS's C++ type of ``vector<4xi16>`` (tmrgsort's executed-count list)."""


def is_mrgsort_list(t: Attribute) -> bool:
    """``vector<4xi16>``: tmrgsort's executed-count list."""
    return (
        isinstance(t, VectorType)
        and list(t.get_shape()) == [4]
        and isinstance(t.element_type, IntegerType)
        and t.element_type.width.data == 16
    )


def value_ctype(t: Attribute) -> str:
    """The C++ type of an SSA value of type ``t`` (scalar, GM pointer, tile, tmrgsort list)."""
    if is_mrgsort_list(t):
        return MRGSORT_LIST
    if isinstance(t, PtrType):
        return f"__gm__ {element_ctype(t.element_type)}*"
    spec = tile_spec(t)
    if spec is not None:
        return tile_ctype(spec)
    if isinstance(t, MemRefType):
        return f"__gm__ {element_ctype(t.element_type)}*"
    return element_ctype(t)


def round_mode(name: str) -> str:
    """``RoundMode::CAST_X`` of a ``#pto<round_mode X>`` value."""
    return f"RoundMode::{name if name.startswith('CAST_') else 'CAST_' + name}"


def camel(name: str) -> str:
    """``atomic_add`` -> ``AtomicAdd``."""
    return "".join(part.capitalize() for part in name.split("_"))
