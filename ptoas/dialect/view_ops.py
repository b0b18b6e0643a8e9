"""GM pointer and view ops: make_tensor_view, partition_view, get_tensor_view_dim, addptr.

::

    %tv = pto.make_tensor_view %ptr, shape = [%m, %n], strides = [%s0, %s1] {layout = #pto.layout<nd>} : !pto.tensor_view<?x?xf32>
    %pv = pto.partition_view %tv, offsets = [%i, %j], sizes = [%c16, %c64] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x64xf32>
    %d  = pto.get_tensor_view_dim %tv, %c0 : !pto.tensor_view<?x?xf32> -> index
    %p2 = pto.addptr %p, %off : !pto.ptr<f32> -> !pto.ptr<f32>
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_attr_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure

from .attrs import LayoutAttr
from .base import PTOOp, dims_text
from .types import DYNAMIC, PartitionTensorViewType, PtrType, TensorViewType


def _parse_bracket_operands(parser: Parser, keyword: str) -> list[UnresolvedOperand]:
    """``keyword = [%a, %b]``."""
    parser.parse_keyword(keyword)
    parser.parse_punctuation("=")
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)


def _print_bracket_operands(printer: Printer, keyword: str, values: tuple[SSAValue, ...]) -> None:
    printer.print_string(f"{keyword} = [")
    printer.print_list(values, printer.print_operand)
    printer.print_string("]")


def _constant_index(value: SSAValue) -> int | None:
    """The value of an ``arith.constant`` index/integer, else None."""
    owner = value.owner
    if isinstance(owner, ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


@irdl_op_definition
class MakeTensorViewOp(PTOOp):
    """Wrap a GM pointer as a tensor_view (no copy); #shape = #strides = view rank."""

    name = "pto.make_tensor_view"
    VALUE_OF_OPERANDS: ClassVar[bool] = True
    ptr = operand_def(PtrType | MemRefType)
    shape = var_operand_def(IndexType)
    strides = var_operand_def(IndexType)
    layout = opt_attr_def(LayoutAttr)
    result = result_def(TensorViewType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def parse(cls, parser: Parser) -> MakeTensorViewOp:
        """Parse the PTOAS form (the pointer's type follows from the view's element type)."""
        start = parser.pos
        ptr = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        shape = _parse_bracket_operands(parser, "shape")
        parser.parse_punctuation(",")
        strides = _parse_bracket_operands(parser, "strides")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        view = parser.parse_type()
        if not isinstance(view, TensorViewType):
            parser.raise_error(f"'pto.make_tensor_view' result must be !pto.tensor_view, got {view}", pos, parser.pos)
        index = IndexType()
        return cls.build(
            operands=[
                parser.resolve_operand(ptr, PtrType(view.element_type)),
                parser.resolve_operands(shape, [index] * len(shape), start),
                parser.resolve_operands(strides, [index] * len(strides), start),
            ],
            result_types=[view],
            attributes=attrs,
        )

    def print(self, printer: Printer) -> None:
        """Print the PTOAS form."""
        printer.print_string(" ")
        printer.print_operand(self.ptr)
        printer.print_string(", ")
        _print_bracket_operands(printer, "shape", self.shape)
        printer.print_string(", ")
        _print_bracket_operands(printer, "strides", self.strides)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        """#shape = #strides = rank; pointer element = view element; static dims match constants."""
        view = self.result.type
        assert isinstance(view, TensorViewType)
        rank = view.rank()
        for field, values in (("shape", self.shape), ("strides", self.strides)):
            if len(values) != rank:
                raise self.fail(f"expects {rank} {field} operands for {view}, got {len(values)}")
        ptr_t = self.ptr.type
        elem = ptr_t.element_type if isinstance(ptr_t, PtrType | MemRefType) else None
        if elem != view.element_type:
            raise self.fail(f"element type {elem} differs from the view's {view.element_type}", self.ptr)
        for i, (d, v) in enumerate(zip(view.get_shape(), self.shape, strict=True)):
            c = _constant_index(v)
            if d != DYNAMIC and c is not None and c != d:
                raise self.fail(f"is the constant {c} but the view's dim {i} is {d}", v)


@irdl_op_definition
class PartitionViewOp(PTOOp):
    """A window (offsets, sizes) of a tensor_view; #offsets = #sizes = rank."""

    name = "pto.partition_view"
    VALUE_OF_OPERANDS: ClassVar[bool] = True
    source = operand_def(TensorViewType)
    offsets = var_operand_def(IndexType)
    sizes = var_operand_def(IndexType)
    result = result_def(PartitionTensorViewType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def parse(cls, parser: Parser) -> PartitionViewOp:
        """Parse ``%tv, offsets = [..], sizes = [..] : TV -> PV``."""
        start = parser.pos
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        offsets = _parse_bracket_operands(parser, "offsets")
        parser.parse_punctuation(",")
        sizes = _parse_bracket_operands(parser, "sizes")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        src_t = parser.parse_type()
        parser.parse_punctuation("->")
        res_t = parser.parse_type()
        index = IndexType()
        return cls.build(
            operands=[
                parser.resolve_operand(source, src_t),
                parser.resolve_operands(offsets, [index] * len(offsets), start),
                parser.resolve_operands(sizes, [index] * len(sizes), start),
            ],
            result_types=[res_t],
            attributes=attrs,
        )

    def print(self, printer: Printer) -> None:
        """Print the PTOAS form."""
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(", ")
        _print_bracket_operands(printer, "offsets", self.offsets)
        printer.print_string(", ")
        _print_bracket_operands(printer, "sizes", self.sizes)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        """Ranks, element types, constant sizes = result dims, window inside static source dims."""
        src, res = self.source.type, self.result.type
        assert isinstance(src, TensorViewType) and isinstance(res, PartitionTensorViewType)
        rank = src.rank()
        for field, values in (("offsets", self.offsets), ("sizes", self.sizes)):
            if len(values) != rank:
                raise self.fail(f"expects {rank} {field} operands for {src}, got {len(values)}")
        if res.rank() != rank:
            raise self.fail(f"result {res} has rank {res.rank()}, expected the source's rank {rank}")
        if res.element_type != src.element_type:
            raise self.fail(f"result element type {res.element_type} differs from {src.element_type}", self.source)
        for i, (d, size, off, full) in enumerate(
            zip(res.get_shape(), self.sizes, self.offsets, src.get_shape(), strict=True)
        ):
            c = _constant_index(size)
            if d != DYNAMIC and c is not None and c != d:
                raise self.fail(f"is the constant {c} but result dim {i} is {d} ({dims_text(res.get_shape())})", size)
            o = _constant_index(off)
            if full != DYNAMIC and d != DYNAMIC and o is not None and o + d > full:
                raise self.fail(f"window {o}+{d} exceeds source dim {i} of size {full}", off)


@irdl_op_definition
class GetTensorViewDimOp(PTOOp):
    """The size of one dim of a tensor_view."""

    name = "pto.get_tensor_view_dim"
    VALUE_OF_OPERANDS: ClassVar[bool] = True
    tensor_view = operand_def(TensorViewType | MemRefType)
    dim_index = operand_def(IndexType)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "$tensor_view `,` $dim_index `:` type($tensor_view) `->` type($result) attr-dict"


@irdl_op_definition
class AddPtrOp(PTOOp):
    """A GM pointer advanced by an element offset."""

    name = "pto.addptr"
    VALUE_OF_OPERANDS: ClassVar[bool] = True
    ptr = operand_def(PtrType)
    offset = operand_def(IndexType)
    result = result_def(PtrType)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> AddPtrOp:
        """``%p, %off [attrs] : T -> T``; ``T`` is ``!pto.ptr<f32>`` or PTOAS's short ``<f32>``."""
        start = parser.pos
        ptr = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        off = parser.parse_unresolved_operand()
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ptr_t = _parse_ptr_type(parser)
        parser.parse_punctuation("->")
        res_t = _parse_ptr_type(parser)
        p, o = parser.resolve_operands([ptr, off], [ptr_t, IndexType()], start)
        return cls.build(operands=[p, o], result_types=[res_t], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """``%p, %off : !pto.ptr<T> -> !pto.ptr<T>``."""
        printer.print_string(" ")
        printer.print_list([self.ptr, self.offset], printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.ptr.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    def verify_(self) -> None:
        """Result type = pointer type."""
        if self.result.type != self.ptr.type:
            raise self.fail(f"result type {self.result.type} differs from {self.ptr.type}", self.ptr)


def _parse_ptr_type(parser: Parser) -> PtrType:
    """``!pto.ptr<T>`` or the short ``<T>`` PTOAS accepts where the op fixes the type kind."""
    if parser.parse_optional_punctuation("<") is not None:
        elem = parser.parse_type()
        parser.parse_punctuation(">")
        return PtrType(elem)
    pos = parser.pos
    t = parser.parse_type()
    if not isinstance(t, PtrType):
        parser.raise_error(f"expected !pto.ptr<...>, got {t}", pos, parser.pos)
    return t


VIEW_OPS: tuple[type[PTOOp], ...] = (MakeTensorViewOp, PartitionViewOp, GetTensorViewDimOp, AddPtrOp)

