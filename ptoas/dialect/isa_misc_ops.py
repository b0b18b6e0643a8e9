"""PTOAS's non-tile ops: scalars, tile views, buffers, FIFO pipes, async DMA sessions, event-id arrays,
and the hardware-only ops (PTOOps.td).

::

    %v = pto.load_scalar %p[%i] : !pto.ptr<f32> -> f32
    pto.store_scalar %v, %p[%i] : !pto.ptr<f32>, f32
    %m = pto.bind_tile %src, %r, %c {config = #pto.tile_buf_config<...>} : memref<..> -> memref<..>
    %s = pto.subset %t[%i, %j] sizes [32, 32] : !pto.tile_buf<...>
    %b = pto.bitcast %t : !pto.tile_buf<...> -> !pto.tile_buf<...>
    %t = pto.declare_tile -> !pto.tile_buf<...>            %m = pto.declare_tile_memref -> memref<...>
    %a = pto.declare_eventid_array -> !pto.eventid_array<4>
    %e = pto.eventid_array_get %a[%i] : !pto.eventid_array<4>
    pto.eventid_array_set %a[%i], %v : !pto.eventid_array<4>
    pto.aic_initialize_pipe {dir_mask = 1, slot_size = 1024[, nosplit = true]} ([gm_slot_buffer = %g : T,] c2v_consumer_buf = %a : i32, v2c_consumer_buf = %b : i32)
    %a = pto.reserve_buffer {name = "f", size = 8192, location = #pto.address_space<vec>, auto = true[, base = 0]} -> i32
    %a = pto.import_reserved_buffer {name = "f", peer_func = @k} -> i32
    %p = pto.initialize_l2g2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, ...}(%gm : T, %local : i32[, %peer : i32]) -> !pto.pipe
    %p = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, ...}(%local : i32[, %peer : i32]) -> !pto.pipe
    pto.tpush(%t, %p : T, !pto.pipe) {split = 0}     pto.tpop(%t, %p : T, !pto.pipe) {split = 1}
    pto.tfree(%p : !pto.pipe) {split = 2}
    %s = pto.build_async_session(%scratch, %ws : T, memref<..>) {sync_id = 0 : i32} -> !pto.async_session
    %e = pto.tput_async(%dst, %src, %s : T, T, !pto.async_session) -> !pto.async_event     (also tget_async)
    %ok = pto.wait_async_event(%e, %s : !pto.async_event, !pto.async_session) -> i1   (also test_async_event)
    pto.get_buf [#pto.pipe_event_type<TLOAD>, 0]     pto.rls_buf [...]
    pto.set_ffts %ffts : memref<256xi64>     pto.print ins("fmt %d", %x : i32)     pto.trap

On the simulator: the FIFO ops move tiles through an in-order queue per pipe, async
DMA is one GM -> GM copy done when issued (wait/test return true; both engines), ``set_ffts`` and ``get_buf``/``rls_buf``
are no-ops, ``trap`` stops the kernel with an error (see docs/ptoas.md, "The whole ISA").
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i1,
    i8,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure

from .attrs import AddressSpace, AddressSpaceAttr, Pipe, PipeEventTypeAttr, SyncOpTypeAttr, parse_short_enum
from .base import A2A3, DpsOp, PTOOp, target_arch, tile_of
from .isa_attrs import AsyncEventType, AsyncSessionType, EventIdArrayType, PipeType, TileBufConfigAttr
from .types import PartitionTensorViewType, PtrType, TensorViewType, TileBufType, element_bits

Dps = TileBufType | MemRefType | PartitionTensorViewType
GmView = MemRefType | PartitionTensorViewType | TensorViewType
S = AddressSpace


# --- scalars -----------------------------------------------------------------------------------


@irdl_op_definition
class LoadScalarOp(PTOOp):
    """Read one GM element: ``%v = pto.load_scalar %p[%i] : !pto.ptr<f32> -> f32``."""

    name = "pto.load_scalar"
    ptr = operand_def(PtrType | MemRefType)
    offset = operand_def(IndexType)
    value = result_def(AnyAttr())
    assembly_format = "$ptr `[` $offset `]` attr-dict `:` type($ptr) `->` type($value)"

    def pipe(self) -> Pipe:
        """Scalar pipe."""
        return Pipe.PIPE_S

    def verify_(self) -> None:
        """Result has the pointer's element type."""
        if self.value.type != self.ptr.type.element_type:  # type: ignore[union-attr]
            raise self.fail("expects result type to match ptr element type")


@irdl_op_definition
class StoreScalarOp(PTOOp):
    """Write one GM element: ``pto.store_scalar %v, %p[%i] : !pto.ptr<f32>, f32``."""

    name = "pto.store_scalar"
    ptr = operand_def(PtrType | MemRefType)
    offset = operand_def(IndexType)
    value = operand_def(AnyAttr())
    assembly_format = "$value `,` $ptr `[` $offset `]` attr-dict `:` type($ptr) `,` type($value)"

    def pipe(self) -> Pipe:
        """Scalar pipe."""
        return Pipe.PIPE_S

    def verify_(self) -> None:
        """Value has the pointer's element type."""
        if self.value.type != self.ptr.type.element_type:  # type: ignore[union-attr]
            raise self.fail("expects value type to match ptr element type")


@irdl_op_definition
class PrintOp(PTOOp):
    """``pto.print ins("fmt", %x : i32)``: printf of one scalar (the interpreter writes it to its log)."""

    name = "pto.print"
    scalar = operand_def(AnyAttr())
    format = prop_def(StringAttr)

    @classmethod
    def parse(cls, parser: Parser) -> PrintOp:
        """``ins("fmt", %x : T)`` [attrs]."""
        start = parser.pos
        parser.parse_keyword("ins")
        parser.parse_punctuation("(")
        fmt = parser.parse_str_literal()
        parser.parse_punctuation(",")
        x = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        (v,) = parser.resolve_operands([x], [t], start)
        return cls.build(operands=[v], properties={"format": StringAttr(fmt)}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """``ins("fmt", %x : T)``."""
        printer.print_string(" ins(")
        printer.print_string_literal(self.format.data)
        printer.print_string(", ")
        printer.print_operand(self.scalar)
        printer.print_string(" : ")
        printer.print_attribute(self.scalar.type)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)


@irdl_op_definition
class TrapOp(PTOOp):
    """Abort the kernel (``trap()``); the simulator raises a located error."""

    name = "pto.trap"
    assembly_format = "attr-dict"


@irdl_op_definition
class SetFFTsOp(PTOOp):
    """Set the FFTS base address (hardware only: a no-op on the simulator)."""

    name = "pto.set_ffts"
    ffts = operand_def(MemRefType)
    assembly_format = "$ffts attr-dict `:` type($ffts)"

    def verify_(self) -> None:
        """i64 (or i8) elements."""
        e = self.ffts.type.element_type  # type: ignore[union-attr]
        if not (isinstance(e, IntegerType) and e.width.data in (8, 64)):
            raise self.fail("expects element type i64 (or i8)")


# --- tile views ----------------------------------------------------------------------------------


@irdl_op_definition
class BindTileOp(PTOOp):
    """Give a memref a tile config and runtime valid dims (an alias of the source)."""

    name = "pto.bind_tile"
    source = operand_def(MemRefType)
    valid_row = opt_operand_def(IndexType)
    valid_col = opt_operand_def(IndexType)
    result = result_def(MemRefType)
    config = prop_def(TileBufConfigAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> BindTileOp:
        """``%src[, %r, %c] {config = ...} : T -> T2``."""
        start = parser.pos
        src = parser.parse_unresolved_operand()
        dims = []
        if parser.parse_optional_punctuation(",") is not None:
            dims.append(parser.parse_unresolved_operand())
            parser.parse_punctuation(",")
            dims.append(parser.parse_unresolved_operand())
        attrs = dict(parser.parse_optional_attr_dict())
        parser.parse_punctuation(":")
        src_t = parser.parse_type()
        parser.parse_punctuation("->")
        res_t = parser.parse_type()
        config = attrs.pop("config", None)
        if not isinstance(config, TileBufConfigAttr):
            parser.raise_error("'pto.bind_tile' expects {config = #pto.tile_buf_config<...>}", start, parser.pos)
        (s,) = parser.resolve_operands([src], [src_t], start)
        d = parser.resolve_operands(dims, [IndexType()] * len(dims), start)
        row, col = ([d[0]], [d[1]]) if d else ([], [])
        return cls.build(operands=[s, row, col], result_types=[res_t], properties={"config": config}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        printer.print_string(" ")
        printer.print_list([self.source, *self.operands[1:]], printer.print_operand)
        printer.print_string(" {config = ")
        printer.print_attribute(self.config)
        printer.print_string("}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)


@irdl_op_definition
class SubsetOp(PTOOp):
    """A ``sizes`` tile at runtime offsets of its source (aliases the source's bytes).

    As PTOAS's C++: the tile at element ``(i, j)``'s byte offset with its own row stride (the window
    of the source when it keeps the full cols); valid dims ``min(size, pv - off % pv)``."""

    name = "pto.subset"
    source = operand_def(TileBufType)
    offsets = var_operand_def(IndexType)
    result = result_def(TileBufType)
    sizes = prop_def(ArrayAttr)
    traits = traits_def(Pure())

    @classmethod
    def parse(cls, parser: Parser) -> SubsetOp:
        """``%t[%i, %j] sizes [32, 32] : T`` (the result type is inferred)."""
        start = parser.pos
        src = parser.parse_unresolved_operand()
        offs = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)
        parser.parse_keyword("sizes")
        sizes = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        if not isinstance(t, TileBufType) or len(sizes) != 2:
            parser.raise_error("'pto.subset' expects a !pto.tile_buf source and 2 sizes", start, parser.pos)
        (s,) = parser.resolve_operands([src], [t], start)
        o = parser.resolve_operands(offs, [IndexType()] * len(offs), start)
        spec = t.spec()
        res = TileBufType.from_spec(
            type(spec)(**{**spec.__dict__, "rows": sizes[0], "cols": sizes[1], "v_row": sizes[0], "v_col": sizes[1]})
        )
        return cls.build(
            operands=[s, list(o)],
            result_types=[res],
            properties={"sizes": ArrayAttr(IntegerAttr(n, i64) for n in sizes)},
            attributes=attrs,
        )

    def print(self, printer: Printer) -> None:
        """``%t[%i, %j] sizes [32, 32] : T``."""
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string("[")
        printer.print_list(self.offsets, printer.print_operand)
        printer.print_string("] sizes [" + ", ".join(str(a.value.data) for a in self.sizes.data) + "]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)

    def verify_(self) -> None:
        """Positive sizes, 2 offsets."""
        if any(a.value.data <= 0 for a in self.sizes.data):
            raise self.fail("subset sizes must be positive")
        if len(self.offsets) != 2:
            raise self.fail("expects rank-2 tilebuf for src/dst")


@irdl_op_definition
class BitcastOp(PTOOp):
    """Reinterpret a tile's bytes as another element type (aliases the source)."""

    name = "pto.bitcast"
    src = operand_def(TileBufType)
    result = result_def(TileBufType)
    traits = traits_def(Pure())
    assembly_format = "$src attr-dict `:` type($src) `->` type($result)"

    def verify_(self) -> None:
        """Same space and valid shape; no more bytes than the source."""
        s, r = tile_of(self.src.type), tile_of(self.result.type)
        assert s is not None and r is not None
        if s.space != r.space:
            raise self.fail("expects src/result to have the same memorySpace")
        if s.valid != r.valid:
            raise self.fail("expects src/result to have the same validShape")
        if r.shape[0] * r.shape[1] * element_bits(r.dtype) > s.shape[0] * s.shape[1] * element_bits(s.dtype):
            raise self.fail("bitcast result requires more bytes than source storage")


@irdl_op_definition
class DeclareTileOp(PTOOp):
    """A tile without storage yet (filled by ``tpop``)."""

    name = "pto.declare_tile"
    tile = result_def(Dps)  # type: ignore[assignment]
    traits = traits_def(Pure())
    assembly_format = "attr-dict `->` type($tile)"


@irdl_op_definition
class DeclareTileMemRefOp(PTOOp):
    """The memref form of ``declare_tile``."""

    name = "pto.declare_tile_memref"
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict `->` type($result)"


# --- event-id arrays -----------------------------------------------------------------------------


@irdl_op_definition
class DeclareEventIdArrayOp(PTOOp):
    """N event ids used with a runtime index (``set_flag_dyn`` / ``wait_flag_dyn``)."""

    name = "pto.declare_eventid_array"
    array = result_def(EventIdArrayType)
    assembly_format = "attr-dict `->` type($array)"


@irdl_op_definition
class EventIdArrayGetOp(PTOOp):
    """``%e = pto.eventid_array_get %a[%i]``."""

    name = "pto.eventid_array_get"
    array = operand_def(EventIdArrayType)
    index = operand_def(IndexType)
    result = result_def(IndexType)
    assembly_format = "$array `[` $index `]` attr-dict `:` type($array)"


@irdl_op_definition
class EventIdArraySetOp(PTOOp):
    """``pto.eventid_array_set %a[%i], %v``."""

    name = "pto.eventid_array_set"
    OUTSIDE_RUN: ClassVar[bool] = True
    array = operand_def(EventIdArrayType)
    index = operand_def(IndexType)
    value = operand_def(IndexType)
    assembly_format = "$array `[` $index `]` `,` $value attr-dict `:` type($array)"


# --- `{key = value, ...}` configured ops --------------------------------------------------------


def _parse_config(parser: Parser) -> dict[str, Attribute]:
    """``{key = value, ...}``; ``location = <vec>`` is the short address space."""
    parser.parse_punctuation("{")
    out: dict[str, Attribute] = {}
    while True:
        key = parser.parse_identifier("key")
        parser.parse_punctuation("=")
        if key == "location":
            out[key] = parse_short_enum(parser, AddressSpaceAttr)
        else:
            out[key] = parser.parse_attribute()
        if parser.parse_optional_punctuation(",") is None:
            break
    parser.parse_punctuation("}")
    return out


def _print_config(printer: Printer, attrs: dict[str, Attribute], keys: tuple[str, ...], space: str = " ") -> None:
    """``{key = value, ...}`` as PTOAS prints it (``location = <vec>``)."""
    parts = []
    for k in keys:
        v = attrs.get(k)
        if v is None:
            continue
        if isinstance(v, IntegerAttr) and v.type == i1:
            parts.append(f"{k} = {'true' if v.value.data else 'false'}")
        elif isinstance(v, IntegerAttr):
            parts.append(f"{k} = {v.value.data}")
        elif isinstance(v, AddressSpaceAttr):
            parts.append(f"{k} = <{v.data.value}>")
        else:
            parts.append(f"{k} = {v}")
    printer.print_string(space + "{" + ", ".join(parts) + "}")


_WIDTHS = {"dir_mask": i8, "slot_size": i32, "slot_num": i32, "local_slot_num": i32, "flag_base": i32, "size": i32}
_WIDTHS.update(base=i32)


def _typed(attrs: dict[str, Attribute]) -> dict[str, Attribute]:
    """Integer config values at PTOAS's widths (i8 dir_mask, i32 sizes)."""
    out = dict(attrs)
    for k, t in _WIDTHS.items():
        v = out.get(k)
        if isinstance(v, IntegerAttr) and v.type != i1:
            out[k] = IntegerAttr(v.value.data, t)
    return out


def _req(op: PTOOp, *keys: str) -> None:
    for k in keys:
        if k not in op.attributes:
            raise op.fail(f"requires attribute '{k}'")


class _InitPipeOp(PTOOp):
    """``aic/aiv_initialize_pipe {dir_mask, slot_size[, nosplit]} ([gm_slot_buffer = %g : T,] c2v_consumer_buf = .., v2c_consumer_buf = ..)``."""

    gm_slot_buffer = opt_operand_def(AnyAttr())
    c2v_consumer_buf = operand_def(i32)
    v2c_consumer_buf = operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    KEYS: ClassVar[tuple[str, ...]] = ("dir_mask", "slot_size", "nosplit")

    @classmethod
    def parse(cls, parser: Parser) -> _InitPipeOp:
        """The braces, then the keyword operand list."""
        start = parser.pos
        attrs = _typed(_parse_config(parser))
        parser.parse_punctuation("(")
        named: dict[str, SSAValue] = {}
        while True:
            key = parser.parse_identifier("operand name")
            parser.parse_punctuation("=")
            name = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            t = parser.parse_type()
            named[key] = parser.resolve_operand(name, t)
            if parser.parse_optional_punctuation(",") is None:
                break
        parser.parse_punctuation(")")
        attrs.update(parser.parse_optional_attr_dict())
        for k in ("c2v_consumer_buf", "v2c_consumer_buf"):
            if k not in named:
                parser.raise_error(f"'{cls.name}' expects '{k} = %value : i32'", start, parser.pos)
        gm = [named["gm_slot_buffer"]] if "gm_slot_buffer" in named else []
        return cls.build(operands=[gm, named["c2v_consumer_buf"], named["v2c_consumer_buf"]], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        _print_config(printer, dict(self.attributes), self.KEYS)
        printer.print_string("(")
        parts: list[tuple[str, SSAValue]] = []
        if self.gm_slot_buffer is not None:
            parts.append(("gm_slot_buffer", self.gm_slot_buffer))
        parts += [("c2v_consumer_buf", self.c2v_consumer_buf), ("v2c_consumer_buf", self.v2c_consumer_buf)]

        def one(p: tuple[str, SSAValue]) -> None:
            printer.print_string(f"{p[0]} = ")
            printer.print_operand(p[1])
            printer.print_string(" : ")
            printer.print_attribute(p[1].type)

        printer.print_list(parts, one)
        printer.print_string(")")
        rest = {k: v for k, v in self.attributes.items() if k not in self.KEYS}
        if rest:
            printer.print_string(" ")
            printer.print_attr_dict(rest)

    def verify_(self) -> None:
        """dir_mask and slot_size given; dir_mask in 1..3."""
        _req(self, "dir_mask", "slot_size")
        mask = self.attributes["dir_mask"]
        if isinstance(mask, IntegerAttr) and mask.value.data not in (1, 2, 3):
            raise self.fail("expects dir_mask to be 1 (c2v), 2 (v2c) or 3 (both)")


@irdl_op_definition
class AicInitializePipeOp(_InitPipeOp):
    """Cube side of the frontend cube<->vector FIFO."""

    name = "pto.aic_initialize_pipe"
    OUTSIDE_RUN: ClassVar[bool] = True


@irdl_op_definition
class AivInitializePipeOp(_InitPipeOp):
    """Vector side of the frontend cube<->vector FIFO."""

    name = "pto.aiv_initialize_pipe"
    OUTSIDE_RUN: ClassVar[bool] = True


class _ConfigResultOp(PTOOp):
    """``{...} [attrs] -> i32``."""

    addr = result_def(i32)
    KEYS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def parse(cls, parser: Parser) -> _ConfigResultOp:
        """Braces, attrs, ``-> i32``."""
        attrs = _typed(_parse_config(parser))
        if "auto" in attrs:
            attrs["autoAlloc"] = attrs.pop("auto")
        attrs.update(parser.parse_optional_attr_dict())
        parser.parse_punctuation("->")
        t = parser.parse_type()
        return cls.build(result_types=[t], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        shown = {("auto" if k == "autoAlloc" else k): v for k, v in self.attributes.items()}
        _print_config(printer, shown, self.KEYS, space="")  # PTOAS: ``pto.reserve_buffer{...}``
        rest = {k: v for k, v in shown.items() if k not in self.KEYS}
        if rest:
            printer.print_string(" ")
            printer.print_attr_dict(rest)
        printer.print_string(" -> ")
        printer.print_attribute(self.addr.type)


@irdl_op_definition
class ReserveBufferOp(_ConfigResultOp):
    """Reserve a named local buffer for a FIFO (its address, an i32)."""

    name = "pto.reserve_buffer"
    OUTSIDE_RUN: ClassVar[bool] = True
    KEYS: ClassVar[tuple[str, ...]] = ("name", "size", "location", "auto", "base")

    def verify_(self) -> None:
        """PTOAS's rules on size, location and base."""
        _req(self, "name", "size", "location", "autoAlloc")
        size = self.attributes["size"]
        if isinstance(size, IntegerAttr) and size.value.data <= 0:
            raise self.fail("expects 'size' to be greater than 0")
        loc = self.attributes["location"]
        if not isinstance(loc, AddressSpaceAttr) or loc.data not in (S.vec, S.mat):
            raise self.fail("expects 'location' to be #pto.address_space<vec> or #pto.address_space<mat>")
        auto = self.attributes["autoAlloc"]
        if isinstance(auto, IntegerAttr) and not auto.value.data and "base" not in self.attributes:
            raise self.fail("expects 'base' when 'auto' is false")
        base = self.attributes.get("base")
        if isinstance(base, IntegerAttr) and base.value.data < 0:
            raise self.fail("expects 'base' to be non-negative when present")


@irdl_op_definition
class ImportReservedBufferOp(_ConfigResultOp):
    """The address of a buffer reserved by the peer function."""

    name = "pto.import_reserved_buffer"
    OUTSIDE_RUN: ClassVar[bool] = True
    KEYS: ClassVar[tuple[str, ...]] = ("name", "peer_func")

    def verify_(self) -> None:
        """name and peer_func given."""
        _req(self, "name", "peer_func")
        if not isinstance(self.attributes["peer_func"], SymbolRefAttr):
            raise self.fail("expects peer_func to be a symbol (@func)")


class _InitFifoOp(PTOOp):
    """``{dir_mask, slot_size, slot_num, ...}(%a : T, ...) -> !pto.pipe``."""

    addrs = var_operand_def(AnyAttr())
    pipe_result = result_def(PipeType)
    KEYS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def parse(cls, parser: Parser) -> _InitFifoOp:
        """Braces, operand list, ``-> !pto.pipe``."""
        start = parser.pos
        attrs = _typed(_parse_config(parser))
        parser.parse_punctuation("(")
        vals: list[SSAValue] = []
        while True:
            name = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            vals.append(parser.resolve_operand(name, parser.parse_type()))
            if parser.parse_optional_punctuation(",") is None:
                break
        parser.parse_punctuation(")")
        attrs.update(parser.parse_optional_attr_dict())
        parser.parse_punctuation("->")
        t = parser.parse_type()
        del start
        return cls.build(operands=[vals], result_types=[t], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        _print_config(printer, dict(self.attributes), self.KEYS)
        printer.print_string("(")

        def one(v: SSAValue) -> None:
            printer.print_operand(v)
            printer.print_string(" : ")
            printer.print_attribute(v.type)

        printer.print_list(self.addrs, one)
        printer.print_string(")")
        rest = {k: v for k, v in self.attributes.items() if k not in self.KEYS}
        if rest:
            printer.print_string(" ")
            printer.print_attr_dict(rest)
        printer.print_string(" -> ")
        printer.print_attribute(self.pipe_result.type)

    def verify_(self) -> None:
        """Required keys; operand count."""
        _req(self, "dir_mask", "slot_size", "slot_num")
        lo, hi = self.ADDRS
        if not lo <= len(self.addrs) <= hi:
            raise self.fail(f"expects {lo} to {hi} address operands, got {len(self.addrs)}")

    ADDRS: ClassVar[tuple[int, int]] = (1, 2)


@irdl_op_definition
class InitializeL2G2LPipeOp(_InitFifoOp):
    """A FIFO from local memory through a GM slot buffer to the peer's local memory."""

    name = "pto.initialize_l2g2l_pipe"
    OUTSIDE_RUN: ClassVar[bool] = True
    KEYS: ClassVar[tuple[str, ...]] = ("dir_mask", "slot_size", "slot_num", "local_slot_num", "flag_base", "nosplit")
    ADDRS: ClassVar[tuple[int, int]] = (2, 3)


@irdl_op_definition
class InitializeL2LPipeOp(_InitFifoOp):
    """A FIFO from local memory directly to the peer's local memory."""

    name = "pto.initialize_l2l_pipe"
    OUTSIDE_RUN: ClassVar[bool] = True
    KEYS: ClassVar[tuple[str, ...]] = ("dir_mask", "slot_size", "slot_num", "flag_base", "nosplit")
    ADDRS: ClassVar[tuple[int, int]] = (1, 2)


# --- FIFO push / pop / free ----------------------------------------------------------------------


class _FifoTileOp(DpsOp):
    """``(%tile, %pipe : T, !pto.pipe) {split = N}``."""

    OUTS: ClassVar[int] = 0
    tile = operand_def(Dps)  # type: ignore[assignment]
    pipe_handle = operand_def(PipeType)

    @classmethod
    def parse(cls, parser: Parser) -> _FifoTileOp:
        """``(%t, %p : T, !pto.pipe) {split = N}``."""
        start = parser.pos
        parser.parse_punctuation("(")
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        b = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        ta = parser.parse_type()
        parser.parse_punctuation(",")
        tb = parser.parse_type()
        parser.parse_punctuation(")")
        attrs = _typed_split(parser.parse_optional_attr_dict())
        va, vb = parser.resolve_operands([a, b], [ta, tb], start)
        return cls.build(operands=[va, vb], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        printer.print_string("(")
        printer.print_list([self.tile, self.pipe_handle], printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([self.tile.type, self.pipe_handle.type], printer.print_attribute)
        printer.print_string(")")
        _print_split(printer, self)

    def verify_(self) -> None:
        """split 0..2; a pipe for the tile's space."""
        _check_split(self)
        if self.pipe() is None:
            raise self.fail(self.NO_PIPE)

    NO_PIPE: ClassVar[str] = ""


def _typed_split(attrs: dict[str, Attribute]) -> dict[str, Attribute]:
    out = dict(attrs)
    s = out.get("split")
    if isinstance(s, IntegerAttr):
        out["split"] = IntegerAttr(s.value.data, i8)
    return out


def _print_split(printer: Printer, op: PTOOp) -> None:
    s = op.attributes.get("split")
    printer.print_string(f" {{split = {s.value.data if isinstance(s, IntegerAttr) else 0}}}")
    rest = {k: v for k, v in op.attributes.items() if k != "split"}
    if rest:
        printer.print_string(" ")
        printer.print_attr_dict(rest)


def _check_split(op: PTOOp) -> None:
    s = op.attributes.get("split")
    if not isinstance(s, IntegerAttr):
        raise op.fail("requires attribute 'split'")
    if s.value.data not in (0, 1, 2):
        raise op.fail(f"split must be 0, 1 or 2, got {s.value.data}")


@irdl_op_definition
class TPushOp(_FifoTileOp):
    """Push a tile into a FIFO: PIPE_FIX from acc, PIPE_MTE3 from vec."""

    name = "pto.tpush"
    OUTSIDE_RUN: ClassVar[bool] = True
    NO_PIPE: ClassVar[str] = "tile type must map to a supported producer pipe"

    def pipe(self) -> Pipe | None:
        """FIX (acc), MTE3 (vec), else none."""
        t = tile_of(self.tile.type)
        if t is None or t.space is None:
            return None
        return {S.acc: Pipe.PIPE_FIX, S.vec: Pipe.PIPE_MTE3}.get(t.space)

    def ins(self) -> list[SSAValue]:
        """The pushed tile is read."""
        return [self.tile]


@irdl_op_definition
class TPopOp(_FifoTileOp):
    """Pop a tile from a FIFO: PIPE_MTE2 into vec/mat (PIPE_S on A5)."""

    name = "pto.tpop"
    OUTSIDE_RUN: ClassVar[bool] = True
    NO_PIPE: ClassVar[str] = "tile type and target arch must map to a supported consumer pipe"

    def pipe(self) -> Pipe | None:
        """MTE2 on a2a3 (S on A5) for vec/mat tiles."""
        t = tile_of(self.tile.type)
        if t is None or t.space not in (S.vec, S.mat):
            return None
        return Pipe.PIPE_MTE2 if target_arch(self) == A2A3 else Pipe.PIPE_S

    def ins(self) -> list[SSAValue]:
        """Nothing local is read."""
        return []

    def outs(self) -> list[SSAValue]:
        """The popped tile is written."""
        return [self.tile]


@irdl_op_definition
class TFreeOp(DpsOp):
    """Release the FIFO slot of the last pop (PIPE_S)."""

    name = "pto.tfree"
    OUTSIDE_RUN: ClassVar[bool] = True
    OUTS: ClassVar[int] = 0
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_S
    pipe_handle = operand_def(PipeType)

    @classmethod
    def parse(cls, parser: Parser) -> TFreeOp:
        """``(%p : !pto.pipe) {split = N}``."""
        start = parser.pos
        parser.parse_punctuation("(")
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        t = parser.parse_type()
        parser.parse_punctuation(")")
        attrs = _typed_split(parser.parse_optional_attr_dict())
        (v,) = parser.resolve_operands([a], [t], start)
        return cls.build(operands=[v], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        printer.print_string("(")
        printer.print_operand(self.pipe_handle)
        printer.print_string(" : ")
        printer.print_attribute(self.pipe_handle.type)
        printer.print_string(")")
        _print_split(printer, self)

    def verify_(self) -> None:
        """split 0..2."""
        _check_split(self)

    def ins(self) -> list[SSAValue]:
        """No buffer operands."""
        return []


# --- async DMA sessions ---------------------------------------------------------------------


@irdl_op_definition
class BuildAsyncSessionOp(PTOOp):
    """A DMA session over a vec scratch tile and a GM workspace."""

    name = "pto.build_async_session"
    OUTSIDE_RUN: ClassVar[bool] = True
    scratch = operand_def(TileBufType | MemRefType)
    workspace = operand_def(PtrType | MemRefType)
    session = result_def(AsyncSessionType)

    @classmethod
    def parse(cls, parser: Parser) -> BuildAsyncSessionOp:
        """``(%scratch, %ws : T, T2) [attrs] -> !pto.async_session``."""
        start = parser.pos
        parser.parse_punctuation("(")
        a = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        b = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        ta = parser.parse_type()
        parser.parse_punctuation(",")
        tb = parser.parse_type()
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation("->")
        t = parser.parse_type()
        va, vb = parser.resolve_operands([a, b], [ta, tb], start)
        return cls.build(operands=[va, vb], result_types=[t], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        printer.print_string("(")
        printer.print_list([self.scratch, self.workspace], printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([self.scratch.type, self.workspace.type], printer.print_attribute)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" -> ")
        printer.print_attribute(self.session.type)

    def verify_(self) -> None:
        """vec scratch of >= 8 bytes; i8 GM workspace; sync_id 0..7."""
        t = tile_of(self.scratch.type)
        if t is None or (t.space is not None and t.space != S.vec):
            raise self.fail("expects scratch to be in vec address space")
        if -1 not in t.shape and t.shape[0] * t.shape[1] * element_bits(t.dtype) < 64:
            raise self.fail("expects scratch to provide at least 8 bytes")
        ws = self.workspace.type
        if (
            isinstance(ws, MemRefType)
            and isinstance(ws.memory_space, AddressSpaceAttr)
            and ws.memory_space.data != S.gm
        ):
            raise self.fail("expects workspace to be in GM address space")
        if element_bits(ws.element_type) != 8:  # type: ignore[union-attr]
            raise self.fail("expects workspace element type to be an 8-bit integer")
        sid = self.attributes.get("sync_id")
        if isinstance(sid, IntegerAttr) and not 0 <= sid.value.data <= 7:
            raise self.fail("expects sync_id in range [0, 7]")


class _AsyncCopyOp(DpsOp):
    """``(%dst, %src, %session : T, T, !pto.async_session) -> !pto.async_event``: a GM<->GM DMA."""

    OUTS: ClassVar[int] = 0
    dst = operand_def(GmView)
    src = operand_def(GmView)
    session = operand_def(AsyncSessionType)
    event = result_def(AsyncEventType)

    @classmethod
    def parse(cls, parser: Parser) -> _AsyncCopyOp:
        """PTOAS's form."""
        start = parser.pos
        parser.parse_punctuation("(")
        names = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_unresolved_operand)
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        parser.parse_punctuation(")")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation("->")
        t = parser.parse_type()
        if len(names) != 3 or len(types) != 3:
            parser.raise_error(f"'{cls.name}' expects (%dst, %src, %session : T, T, !pto.async_session)", start)
        vals = parser.resolve_operands(names, types, start)
        return cls.build(operands=list(vals), result_types=[t], attributes=attrs)

    def print(self, printer: Printer) -> None:
        """PTOAS's form."""
        vals = [self.dst, self.src, self.session]
        printer.print_string("(")
        printer.print_list(vals, printer.print_operand)
        printer.print_string(" : ")
        printer.print_list([v.type for v in vals], printer.print_attribute)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" -> ")
        printer.print_attribute(self.event.type)

    def scratch(self) -> list[SSAValue]:
        """The session's UB scratch tile the DMA goes through (when the session is built here)."""
        owner = self.session.owner
        return [owner.scratch] if isinstance(owner, BuildAsyncSessionOp) else []

    def ins(self) -> list[SSAValue]:
        """src is read."""
        return [self.src]

    def outs(self) -> list[SSAValue]:
        """dst and the session's scratch tile are written (sync insertion orders other pipes' uses of it)."""
        return [self.dst, *self.scratch()]

    def verify_(self) -> None:
        """PTOAS's rules: static flat contiguous 1-D GM memrefs, or static tensor / partition views whose dims
        but the last are 1 (logical 1-D), of one element type and one shape."""
        for name, v in (("dst", self.dst), ("src", self.src)):
            t = v.type
            if isinstance(t, MemRefType):
                if not (len(t.get_shape()) == 1 and t.get_shape()[0] > 0):
                    raise self.fail(f"expects {name} to be a static flat contiguous logical 1D GM memref")
            elif isinstance(t, PartitionTensorViewType | TensorViewType):
                shape = list(t.get_shape())
                if not shape:
                    raise self.fail(f"expects {name} to have rank >= 1")
                if any(d < 0 for d in shape):
                    raise self.fail(f"expects {name} to have a static shape")
                if any(d != 1 for d in shape[:-1]):
                    raise self.fail(f"expects {name} to be a static flat contiguous logical 1D GM view")
            else:
                raise self.fail(f"expects {name} to be a memref/tensor_view/partition_view")
        if self.dst.type.element_type != self.src.type.element_type:  # type: ignore[union-attr]
            raise self.fail("expects src and dst to have the same element type")
        if list(self.dst.type.get_shape()) != list(self.src.type.get_shape()):  # type: ignore[union-attr]
            raise self.fail("expects src and dst to have the same static shape")


@irdl_op_definition
class TPutAsyncOp(_AsyncCopyOp):
    """Async put (local GM -> remote GM) through the session's scratch: PIPE_MTE3."""

    name = "pto.tput_async"
    OUTSIDE_RUN: ClassVar[bool] = True
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_MTE3


@irdl_op_definition
class TGetAsyncOp(_AsyncCopyOp):
    """Async get (remote GM -> local GM) through the session's scratch: PIPE_MTE2."""

    name = "pto.tget_async"
    OUTSIDE_RUN: ClassVar[bool] = True
    PIPE: ClassVar[Pipe | None] = Pipe.PIPE_MTE2


class _AsyncWaitOp(PTOOp):
    """``(%e, %s : !pto.async_event, !pto.async_session) -> i1``."""

    event = operand_def(AsyncEventType)
    session = operand_def(AsyncSessionType)
    completed = result_def(i1)
    assembly_format = "`(` $event `,` $session `:` type($event) `,` type($session) `)` attr-dict `->` type($completed)"


@irdl_op_definition
class WaitAsyncEventOp(_AsyncWaitOp):
    """Block until the event's DMA completed (true)."""

    name = "pto.wait_async_event"
    OUTSIDE_RUN: ClassVar[bool] = True


@irdl_op_definition
class TestAsyncEventOp(_AsyncWaitOp):
    """Has the event's DMA completed? (the simulator completes DMA at once: true)."""

    name = "pto.test_async_event"
    OUTSIDE_RUN: ClassVar[bool] = True


# --- buffer-id sync --------------------------------------------------------------------------


class _BufOp(PTOOp):
    """``[#pto.pipe_event_type<TLOAD>, 0] {mode = 0 : i32}``: acquire / release a buffer id."""

    op_type = prop_def(PipeEventTypeAttr | SyncOpTypeAttr)
    buf_id = prop_def(IntegerAttr)

    @classmethod
    def parse(cls, parser: Parser) -> _BufOp:
        """``[<K>, N] [attrs]``."""
        parser.parse_punctuation("[")
        kind = parse_short_enum(parser, (PipeEventTypeAttr, SyncOpTypeAttr))
        parser.parse_punctuation(",")
        n = parser.parse_integer(allow_boolean=False)
        parser.parse_punctuation("]")
        attrs = parser.parse_optional_attr_dict()
        return cls.build(properties={"op_type": kind, "buf_id": IntegerAttr(n, i32)}, attributes=attrs)

    def print(self, printer: Printer) -> None:
        """``[#pto.pipe_event_type<K>, N]``."""
        printer.print_string(" [")
        printer.print_attribute(self.op_type)
        printer.print_string(f", {self.buf_id.value.data}]")
        printer.print_op_attributes(self.attributes)

    def verify_(self) -> None:
        """buf_id >= 0."""
        if self.buf_id.value.data < 0:
            raise self.fail("expects buf_id to be non-negative")


@irdl_op_definition
class GetBufOp(_BufOp):
    """Acquire a buffer id for an op type (hardware buffer handshake: a no-op on the simulator)."""

    name = "pto.get_buf"
    OUTSIDE_RUN: ClassVar[bool] = True


@irdl_op_definition
class RlsBufOp(_BufOp):
    """Release a buffer id (a no-op on the simulator)."""

    name = "pto.rls_buf"
    OUTSIDE_RUN: ClassVar[bool] = True


ISA_MISC_OPS: tuple[type[PTOOp], ...] = (
    LoadScalarOp,
    StoreScalarOp,
    PrintOp,
    TrapOp,
    SetFFTsOp,
    BindTileOp,
    SubsetOp,
    BitcastOp,
    DeclareTileOp,
    DeclareTileMemRefOp,
    DeclareEventIdArrayOp,
    EventIdArrayGetOp,
    EventIdArraySetOp,
    AicInitializePipeOp,
    AivInitializePipeOp,
    ReserveBufferOp,
    ImportReservedBufferOp,
    InitializeL2G2LPipeOp,
    InitializeL2LPipeOp,
    TPushOp,
    TPopOp,
    TFreeOp,
    BuildAsyncSessionOp,
    TPutAsyncOp,
    TGetAsyncOp,
    WaitAsyncEventOp,
    TestAsyncEventOp,
    GetBufOp,
    RlsBufOp,
)


NOT_SIMULATED: dict[type[PTOOp], str] = {}
"""Ops the simulator does not run, and why (none left: the tile views alias their source's bytes)."""

NO_CPP: dict[type[PTOOp], str] = {
    GetBufOp: "buffer-id handshake: a no-op in the interpreter, nothing to emit",
    RlsBufOp: "buffer-id handshake: a no-op in the interpreter, nothing to emit",
}
"""Ops the interpreter runs but the C++ emitter does not, and why."""

for _cls, _why in NOT_SIMULATED.items():
    _cls.NO_INTERPRETER = _why
for _cls, _why in NO_CPP.items():
    _cls.NO_CPP = _why
