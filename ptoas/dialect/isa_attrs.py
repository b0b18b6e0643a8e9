"""Types and attributes of the ISA ops beyond PyPTO's own subset (PTOAS's PTOTypeDefs/PTOAttrs).

::

    !pto.pipe  !pto.async_session  !pto.async_event  !pto.eventid_array<4>
    #pto<gather_oob clamp>  #pto<scatter_atomic_op add>  #pto<scatter_oob skip>
    #pto<quant_type INT8_SYM>  #pto.mask_pattern<P0101>
    #pto.tile_buf_config<blayout=#pto.blayout<row_major>, slayout=#pto.slayout<row_major>,
                         s_fractal_size=512, pad=#pto.pad_value<null>, compact=#pto.compact_mode<null>>

``!pto.pipe`` is a type and ``#pto.pipe<...>`` an attribute: xDSL keeps the two name spaces apart.
The tile_buf_config parser also takes the integer spelling ``blayout=1 : i32`` PTOAS accepts.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntAttr
from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute, SpacedOpaqueSyntaxAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition, param_def
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from .attrs import AngleEnum


@irdl_attr_definition
class PipeType(ParametrizedAttribute, TypeAttribute):
    """``!pto.pipe``: a cube<->vector FIFO made by ``initialize_l2l_pipe`` / ``initialize_l2g2l_pipe``."""

    name = "pto.pipe"


@irdl_attr_definition
class AsyncSessionType(ParametrizedAttribute, TypeAttribute):
    """``!pto.async_session``: a DMA session of ``build_async_session``."""

    name = "pto.async_session"


@irdl_attr_definition
class AsyncEventType(ParametrizedAttribute, TypeAttribute):
    """``!pto.async_event``: the completion handle of ``tput_async`` / ``tget_async``."""

    name = "pto.async_event"


@irdl_attr_definition
class EventIdArrayType(ParametrizedAttribute, TypeAttribute):
    """``!pto.eventid_array<N>``: N hardware event ids addressed at run time."""

    name = "pto.eventid_array"
    size: IntAttr = param_def(IntAttr)

    def print_parameters(self, printer: Printer) -> None:
        """Print ``<N>``."""
        printer.print_string(f"<{self.size.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr]:
        """Parse ``<N>``."""
        with parser.in_angle_brackets():
            n = parser.parse_integer(allow_boolean=False, allow_negative=False)
        return (IntAttr(n),)


class GatherOOB(StrEnum):
    undefined = "undefined"
    clamp = "clamp"
    wrap = "wrap"
    zero = "zero"


class ScatterAtomicOp(StrEnum):
    none = "none"
    add = "add"
    max = "max"
    min = "min"


class ScatterOOB(StrEnum):
    undefined = "undefined"
    skip = "skip"
    clamp = "clamp"
    wrap = "wrap"


class QuantType(StrEnum):
    INT8_SYM = "INT8_SYM"
    INT8_ASYM = "INT8_ASYM"


class SaturationMode(StrEnum):
    ON = "ON"
    OFF = "OFF"


class MaskPattern(StrEnum):
    P0101 = "P0101"
    P1010 = "P1010"
    P0001 = "P0001"
    P0010 = "P0010"
    P0100 = "P0100"
    P1000 = "P1000"
    P1111 = "P1111"


@irdl_attr_definition
class GatherOOBAttr(EnumAttribute[GatherOOB], SpacedOpaqueSyntaxAttribute):
    """``#pto<gather_oob clamp>`` (mgather ``gatherOob``)."""

    name = "pto.gather_oob"


@irdl_attr_definition
class ScatterAtomicOpAttr(EnumAttribute[ScatterAtomicOp], SpacedOpaqueSyntaxAttribute):
    """``#pto<scatter_atomic_op add>`` (mscatter ``scatterAtomicOp``)."""

    name = "pto.scatter_atomic_op"


@irdl_attr_definition
class ScatterOOBAttr(EnumAttribute[ScatterOOB], SpacedOpaqueSyntaxAttribute):
    """``#pto<scatter_oob skip>`` (mscatter ``scatterOob``)."""

    name = "pto.scatter_oob"


@irdl_attr_definition
class QuantTypeAttr(EnumAttribute[QuantType], SpacedOpaqueSyntaxAttribute):
    """``#pto<quant_type INT8_SYM>`` (tquant ``quant_type``)."""

    name = "pto.quant_type"


@irdl_attr_definition
class SaturationModeAttr(EnumAttribute[SaturationMode], SpacedOpaqueSyntaxAttribute):
    """``#pto<saturation_mode OFF>`` (tcvt ``sat_mode``)."""

    name = "pto.saturation_mode"


@irdl_attr_definition
class MaskPatternAttr(AngleEnum, EnumAttribute[MaskPattern]):
    """``#pto.mask_pattern<P0101>`` (tgather mask form)."""

    name = "pto.mask_pattern"


_BLAYOUTS = ("row_major", "col_major")
_SLAYOUTS = ("none_box", "row_major", "col_major")
_PADS = ("null", "zero", "max", "min")
_COMPACTS = ("null", "normal", "row_plus_one")
_CONFIG_KEYS = {
    "blayout": ("blayout", _BLAYOUTS),
    "slayout": ("slayout", _SLAYOUTS),
    "pad": ("pad_value", _PADS),
    "compact": ("compact_mode", _COMPACTS),
}


@irdl_attr_definition
class TileBufConfigAttr(ParametrizedAttribute):
    """``#pto.tile_buf_config<...>``: the layout of a tile bound by ``bind_tile`` (enum values as ints)."""

    name = "pto.tile_buf_config"
    blayout: IntAttr = param_def(IntAttr)
    slayout: IntAttr = param_def(IntAttr)
    s_fractal_size: IntAttr = param_def(IntAttr)
    pad: IntAttr = param_def(IntAttr)
    compact: IntAttr = param_def(IntAttr)

    def print_parameters(self, printer: Printer) -> None:
        """Print PTOAS's canonical form."""
        parts = []
        for key in ("blayout", "slayout"):
            kind, names = _CONFIG_KEYS[key]
            parts.append(f"{key}=#pto.{kind}<{names[getattr(self, key).data]}>")
        parts.append(f"s_fractal_size={self.s_fractal_size.data}")
        for key in ("pad", "compact"):
            kind, names = _CONFIG_KEYS[key]
            parts.append(f"{key}=#pto.{kind}<{names[getattr(self, key).data]}>")
        printer.print_string("<" + ", ".join(parts) + ">")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[IntAttr, ...]:
        """Parse ``key=value`` pairs; values are ``N : i32`` or ``#pto.kind<name>``."""
        values = {"blayout": 0, "slayout": 0, "s_fractal_size": 512, "pad": 0, "compact": 0}
        with parser.in_angle_brackets():
            while True:
                pos = parser.pos
                key = parser.parse_identifier("tile_buf_config key")
                if key not in values:
                    parser.raise_error(f"unknown tile_buf_config key '{key}'", pos, parser.pos)
                parser.parse_punctuation("=")
                values[key] = _parse_config_value(parser, key)
                if parser.parse_optional_punctuation(",") is None:
                    break
        return tuple(IntAttr(values[k]) for k in ("blayout", "slayout", "s_fractal_size", "pad", "compact"))


def _parse_config_value(parser: AttrParser, key: str) -> int:
    """``N [: i32]`` or ``#pto.<kind><name>`` (the index of name in the kind's values)."""
    n = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
    if n is not None:
        if parser.parse_optional_punctuation(":") is not None:
            parser.parse_type()
        return n
    pos = parser.pos
    attr = parser.parse_attribute()
    if key not in _CONFIG_KEYS or not isinstance(attr, EnumAttribute):
        parser.raise_error(f"tile_buf_config {key}: expected an integer, got {attr}", pos, parser.pos)
    kind, names = _CONFIG_KEYS[key]
    value = str(attr.data)
    if value not in names:
        parser.raise_error(f"tile_buf_config {key}: expected #pto.{kind}<{'|'.join(names)}>", pos, parser.pos)
    return names.index(value)


class PadValue(StrEnum):
    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


class CompactMode(StrEnum):
    null = "null"
    normal = "normal"
    row_plus_one = "row_plus_one"


@irdl_attr_definition
class PadValueAttr(AngleEnum, EnumAttribute[PadValue]):
    """``#pto.pad_value<zero>``."""

    name = "pto.pad_value"


@irdl_attr_definition
class CompactModeAttr(AngleEnum, EnumAttribute[CompactMode]):
    """``#pto.compact_mode<normal>``."""

    name = "pto.compact_mode"


ISA_TYPES: tuple[type[Attribute], ...] = (PipeType, AsyncSessionType, AsyncEventType, EventIdArrayType)
ISA_ATTRS: tuple[type[Attribute], ...] = (
    GatherOOBAttr,
    ScatterAtomicOpAttr,
    ScatterOOBAttr,
    QuantTypeAttr,
    SaturationModeAttr,
    MaskPatternAttr,
    TileBufConfigAttr,
    PadValueAttr,
    CompactModeAttr,
)
