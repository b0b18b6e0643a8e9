"""pl types -> pto types: DDR tensors become ``!pto.ptr`` / views, tiles ``!pto.tile_buf``.

A ``pl`` tile (``!pl.tile<16x128xf32, Vec, memref<"mem_vec_2", 0, 8192>, view<...>>``)
becomes, as upstream PyPTO prints it,
``!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=128, v_row=?, v_col=?, blayout=row_major,
slayout=none_box, fractal=512, pad=0>``: the valid shape is always dynamic and passed to
``pto.alloc_tile`` as ``valid_row``/``valid_col`` operands; the MemRef's byte offset is the
``addr`` operand.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute

from pypto.dialects.dtypes import dtype_name, is_dtype
from pypto.dialects.enums import MemorySpace
from pypto.dialects.types import TensorType, TileType
from pypto.ptoas.dialect.attrs import AddressSpace, BLayout, SLayout
from pypto.ptoas.dialect.types import (
    DYNAMIC,
    PartitionTensorViewType,
    PtrType,
    TensorViewType,
    TileBufType,
    TileSpec,
    is_element_type,
)

SPACE_OF: dict[MemorySpace, AddressSpace] = {
    MemorySpace.Vec: AddressSpace.vec,
    MemorySpace.Mat: AddressSpace.mat,
    MemorySpace.Left: AddressSpace.left,
    MemorySpace.Right: AddressSpace.right,
    MemorySpace.Acc: AddressSpace.acc,
    MemorySpace.Bias: AddressSpace.bias,
    MemorySpace.LeftScale: AddressSpace.scaling,
    MemorySpace.RightScale: AddressSpace.scaling,
}
"""On-chip pl memory spaces and their pto tile locations (ScalarLocal has none)."""


class UnsupportedType(Exception):
    """A pl type with no pto counterpart (the caller reports it at the op)."""


def address_space(space: MemorySpace) -> AddressSpace:
    """The pto location of an on-chip pl memory space."""
    if space not in SPACE_OF:
        raise UnsupportedType(f"memory space {space.value} has no pto tile location")
    return SPACE_OF[space]


def tile_buf_type(t: TileType, valid: tuple[int, int] = (DYNAMIC, DYNAMIC), pad: int = 0) -> TileBufType:
    """The ``!pto.tile_buf`` of a 2-D pl tile (``valid``: static valid dims, ``-1`` = ``?``; ``pad``: the
    tile_buf pad value, 0 null, 1 zero, 2 max, 3 min)."""
    shape = t.get_shape()
    if len(shape) != 2 or DYNAMIC in shape:
        raise UnsupportedType(f"tile shape {list(shape)} is not static 2-D (run FlattenTileNdTo2D first)")
    if not is_element_type(t.element_type):
        name = f"pl.{dtype_name(t.element_type)}" if is_dtype(t.element_type) else str(t.element_type)
        raise UnsupportedType(
            f"no on-chip tile holds {name} elements (expected FP32, FP16, BF16, an 8-bit float, BOOL or an integer type)"
        )
    view = t.effective_view()
    return TileBufType.from_spec(
        TileSpec(
            loc=address_space(t.memory_space),
            dtype=t.element_type,
            rows=shape[0],
            cols=shape[1],
            v_row=valid[0],
            v_col=valid[1],
            blayout=BLayout(view.blayout.data.value) if view.blayout.data.value != "none_box" else BLayout.row_major,
            slayout=SLayout(view.slayout.data.value),
            fractal=view.fractal.data,
            pad=pad,
        )
    )


def ptr_type(t: TensorType) -> PtrType:
    """The GM pointer a tensor parameter becomes."""
    return PtrType(t.element_type)


def tensor_view_type(t: TensorType) -> TensorViewType:
    """``!pto.tensor_view<?x?xT>`` (upstream keeps every dim dynamic; shape comes as operands)."""
    return TensorViewType.get([DYNAMIC] * len(t.get_shape()), t.element_type)


def partition_view_type(sizes: list[int], element_type: Attribute) -> PartitionTensorViewType:
    """``!pto.partition_tensor_view<16x128xT>`` (``-1`` prints ``?``)."""
    return PartitionTensorViewType.get(sizes, element_type)


def is_scalar(t: Attribute) -> bool:
    """Index, integer or float scalars pass through unchanged."""
    from xdsl.dialects.builtin import AnyFloat, IntegerType

    return isinstance(t, IndexType | IntegerType | AnyFloat)
