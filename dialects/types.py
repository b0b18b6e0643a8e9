"""Types of the ``pl`` dialect: DDR tensors, on-chip tiles, and what they carry.

Text forms::

    !pl.tensor<128x128xf32>
    !pl.tensor<128x128xf32, memref<"mem_ddr_0", 0, 65536>>
    !pl.tile<16x128xf32, Vec>
    !pl.tile<16x128xf32, Vec, memref<"mem_vec_2", 0, 8192>, view<row_major, none_box, 512>>
    !pl.ptr

A tile's MemRef names its allocation (the ``pl.tile.alloc`` whose ``base`` it is),
the byte offset inside its memory space and its size. A TileView is stored only
when it differs from the implicit view of the tile's space and shape, so the
CONCISE and EXPLICIT printed forms parse to identical IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import prod

from xdsl.dialects.builtin import ArrayAttr, IntAttr, NoneAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from .dtypes import dtype_bits, is_dtype
from .enums import MemorySpace, MemorySpaceAttr, TileLayout, TileLayoutAttr

DYNAMIC = -1


def flat_shape(shape: Sequence[int]) -> tuple[int, ...]:
    """The 2-D shape of an N-D tile (unchanged for rank 2): ``[n]`` -> ``[1, n]``, ``[d0, ..., dk]`` ->
    ``[d0 * ... * dk-1, dk]`` (DYNAMIC rows when a leading extent is): FlattenTileNdTo2D's and the ptoas
    codegen's N-D loads and stores."""
    if len(shape) == 1:
        return (1, shape[0])
    if len(shape) > 2:
        lead = shape[:-1]
        return (DYNAMIC if DYNAMIC in lead else prod(lead), shape[-1])
    return tuple(shape)


@irdl_attr_definition
class MemRefAttr(ParametrizedAttribute):
    """Where a buffer lives: allocation name, byte offset, byte size."""

    name = "pl.memref"
    base: StringAttr = param_def()
    offset: IntAttr = param_def()
    size: IntAttr = param_def()

    @staticmethod
    def get(base: str, offset: int, size: int) -> MemRefAttr:
        return MemRefAttr(StringAttr(base), IntAttr(offset), IntAttr(size))

    def print_body(self, printer: Printer) -> None:
        printer.print_string(f'<"{self.base.data}", {self.offset.data}, {self.size.data}>')

    def print_parameters(self, printer: Printer) -> None:
        self.print_body(printer)

    @classmethod
    def parse_body(cls, parser: AttrParser) -> tuple[StringAttr, IntAttr, IntAttr]:
        with parser.in_angle_brackets():
            base = parser.parse_str_literal("the memref's base name")
            parser.parse_punctuation(",")
            offset = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            size = parser.parse_integer(allow_boolean=False)
        return StringAttr(base), IntAttr(offset), IntAttr(size)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[StringAttr, IntAttr, IntAttr]:
        return cls.parse_body(parser)


@irdl_attr_definition
class TileViewAttr(ParametrizedAttribute):
    """A tile's layout: block layout, scatter layout, fractal size in bytes."""

    name = "pl.tile_view"
    blayout: TileLayoutAttr = param_def()
    slayout: TileLayoutAttr = param_def()
    fractal: IntAttr = param_def()

    @staticmethod
    def get(blayout: TileLayout, slayout: TileLayout, fractal: int) -> TileViewAttr:
        return TileViewAttr(TileLayoutAttr(blayout), TileLayoutAttr(slayout), IntAttr(fractal))

    def print_body(self, printer: Printer) -> None:
        printer.print_string(f"<{self.blayout.data.value}, {self.slayout.data.value}, {self.fractal.data}>")

    def print_parameters(self, printer: Printer) -> None:
        self.print_body(printer)

    @classmethod
    def parse_body(cls, parser: AttrParser) -> tuple[TileLayoutAttr, TileLayoutAttr, IntAttr]:
        with parser.in_angle_brackets():
            blayout = parser.parse_str_enum(TileLayout)
            parser.parse_punctuation(",")
            slayout = parser.parse_str_enum(TileLayout)
            parser.parse_punctuation(",")
            fractal = parser.parse_integer(allow_boolean=False)
        return TileLayoutAttr(blayout), TileLayoutAttr(slayout), IntAttr(fractal)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[TileLayoutAttr, TileLayoutAttr, IntAttr]:
        return cls.parse_body(parser)


def implicit_view(space: MemorySpace, shape: Sequence[int]) -> TileViewAttr:
    """The view a tile of this space and shape has when none is written."""
    L = TileLayout
    if space == MemorySpace.Acc:
        return TileViewAttr.get(L.col_major, L.row_major, 1024)
    if space in (MemorySpace.Mat, MemorySpace.Left):
        return TileViewAttr.get(L.col_major, L.row_major, 512)
    if space == MemorySpace.Right:
        return TileViewAttr.get(L.row_major, L.col_major, 512)
    if len(shape) == 2 and shape[1] == 1 and shape[0] != 1:
        return TileViewAttr.get(L.col_major, L.none_box, 512)
    return TileViewAttr.get(L.row_major, L.none_box, 512)


def _print_shape(printer: Printer, shape: ArrayAttr[IntAttr], element_type: Attribute) -> None:
    for d in shape.data:
        printer.print_string("?" if d.data == DYNAMIC else str(d.data))
        printer.print_string("x")
    printer.print_attribute(element_type)


MAX_DIM = 2**63 - 1
"""The largest dimension a shape may have: an extent is an ``i64`` (as MLIR's shaped types require)."""


def _parse_shape(parser: AttrParser) -> tuple[ArrayAttr[IntAttr], Attribute]:
    """``16x?xf32``: the dims (``?`` is DYNAMIC) and a PyPTO dtype; a dim over :data:`MAX_DIM` is a parse
    error at the shape (a pass would fail on it building an ``i64`` constant)."""
    start = parser.pos
    dims, element_type = parser.parse_ranked_shape()
    if any(d > MAX_DIM for d in dims):
        parser.raise_error(f"dimension {max(dims)} is too large: a dimension is at most {MAX_DIM} (i64)", start)
    if not is_dtype(element_type):
        parser.raise_error(f"element type {element_type} is not a PyPTO dtype")
    return ArrayAttr(IntAttr(DYNAMIC if d < 0 else d) for d in dims), element_type


class _ShapedMixin:
    shape: ArrayAttr[IntAttr]
    element_type: Attribute

    def get_shape(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def num_bytes(self) -> int:
        """Byte size of a static shape (rounded up to whole bytes)."""
        shape = self.get_shape()
        if DYNAMIC in shape:
            raise ValueError("a dynamic shape has no static byte size")
        return (prod(shape) * dtype_bits(self.element_type) + 7) // 8


@irdl_attr_definition
class TensorType(_ShapedMixin, ParametrizedAttribute, TypeAttribute):
    """A tensor in DDR: ``pl.Tensor[[128, 128], pl.FP32]``."""

    name = "pl.tensor"
    shape: ArrayAttr[IntAttr] = param_def()
    element_type: Attribute = param_def()
    memref: MemRefAttr | NoneAttr = param_def()

    @staticmethod
    def get(shape: Sequence[int], element_type: Attribute, memref: MemRefAttr | None = None) -> TensorType:
        return TensorType(ArrayAttr(IntAttr(d) for d in shape), element_type, memref or NoneAttr())

    def with_memref(self, memref: MemRefAttr | None) -> TensorType:
        """This type with ``memref`` (None: none); itself when that is its MemRef already (the shape's
        attribute is reused, not built again)."""
        new = memref or NoneAttr()
        if new == self.memref:
            return self
        return TensorType(self.shape, self.element_type, new)

    def get_memref(self) -> MemRefAttr | None:
        return self.memref if isinstance(self.memref, MemRefAttr) else None

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        _print_shape(printer, self.shape, self.element_type)
        if isinstance(self.memref, MemRefAttr):
            printer.print_string(", memref")
            self.memref.print_body(printer)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, ...]:
        with parser.in_angle_brackets():
            shape, element_type = _parse_shape(parser)
            memref: Attribute = NoneAttr()
            if parser.parse_optional_punctuation(","):
                parser.parse_keyword("memref")
                memref = MemRefAttr(*MemRefAttr.parse_body(parser))
        return shape, element_type, memref


@irdl_attr_definition
class TileType(_ShapedMixin, ParametrizedAttribute, TypeAttribute):
    """An on-chip tile: ``pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec]``."""

    name = "pl.tile"
    shape: ArrayAttr[IntAttr] = param_def()
    element_type: Attribute = param_def()
    space: MemorySpaceAttr = param_def()
    memref: MemRefAttr | NoneAttr = param_def()
    view: TileViewAttr | NoneAttr = param_def()

    @staticmethod
    def get(
        shape: Sequence[int],
        element_type: Attribute,
        space: MemorySpace = MemorySpace.Vec,
        memref: MemRefAttr | None = None,
        view: TileViewAttr | None = None,
    ) -> TileType:
        if view is not None and view == implicit_view(space, tuple(shape)):
            view = None
        return TileType(
            ArrayAttr(IntAttr(d) for d in shape),
            element_type,
            MemorySpaceAttr(space),
            memref or NoneAttr(),
            view or NoneAttr(),
        )

    @property
    def memory_space(self) -> MemorySpace:
        return self.space.data

    def get_memref(self) -> MemRefAttr | None:
        return self.memref if isinstance(self.memref, MemRefAttr) else None

    def get_view(self) -> TileViewAttr | None:
        return self.view if isinstance(self.view, TileViewAttr) else None

    def effective_view(self) -> TileViewAttr:
        """The stored view, or the implicit one of this space and shape."""
        return self.get_view() or implicit_view(self.memory_space, self.get_shape())

    def with_(
        self,
        *,
        shape: Sequence[int] | None = None,
        element_type: Attribute | None = None,
        space: MemorySpace | None = None,
        memref: MemRefAttr | None | bool = True,
        view: TileViewAttr | None | bool = True,
    ) -> TileType:
        """A copy with some fields replaced (``True`` keeps memref/view)."""
        return TileType.get(
            self.get_shape() if shape is None else shape,
            self.element_type if element_type is None else element_type,
            self.memory_space if space is None else space,
            self.get_memref() if memref is True else memref or None,
            self.get_view() if view is True else view or None,
        )

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        _print_shape(printer, self.shape, self.element_type)
        printer.print_string(f", {self.space.data.value}")
        if isinstance(self.memref, MemRefAttr):
            printer.print_string(", memref")
            self.memref.print_body(printer)
        if isinstance(self.view, TileViewAttr):
            printer.print_string(", view")
            self.view.print_body(printer)
        printer.print_string(">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[Attribute, ...]:
        with parser.in_angle_brackets():
            shape, element_type = _parse_shape(parser)
            parser.parse_punctuation(",")
            space = MemorySpaceAttr(parser.parse_str_enum(MemorySpace))
            memref: Attribute = NoneAttr()
            view: Attribute = NoneAttr()
            while parser.parse_optional_punctuation(","):
                key = parser.parse_keyword_in(("memref", "view"))
                if key == "memref":
                    memref = MemRefAttr(*MemRefAttr.parse_body(parser))
                else:
                    view = TileViewAttr(*TileViewAttr.parse_body(parser))
        return shape, element_type, space, memref, view

    def verify(self) -> None:
        if self.memory_space == MemorySpace.DDR:
            from xdsl.utils.exceptions import VerifyException

            raise VerifyException("a tile cannot live in DDR; use a tensor")


@irdl_attr_definition
class PtrType(ParametrizedAttribute, TypeAttribute):
    """The base address of an on-chip allocation (``pl.Ptr``)."""

    name = "pl.ptr"


ShapedType = TensorType | TileType
