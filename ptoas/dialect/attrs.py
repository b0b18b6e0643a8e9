"""Attributes of the ``pto`` dialect (pto-dialect.md §3, §5).

Two spellings exist upstream and both are kept:

- pretty attributes with an angle-bracketed enum value: ``#pto.pipe<PIPE_V>``,
  ``#pto.event<EVENT_ID0>``, ``#pto.address_space<vec>``, ``#pto.layout<nd>``,
  ``#pto.pipe_event_type<TLOAD>``, ``#pto.sync_op_type<TLOAD>``,
  ``#pto.kernel_kind<cube>``, ``#pto.acc_to_vec_mode<single_mode_vec0>``;
- opaque attributes ``#pto<round_mode CAST_RINT>``, ``#pto<cmp lt>``,
  ``#pto<st_phase final>``, ``#pto<atomic_type atomic_add>``,
  ``#pto<relu_pre_mode normal_relu>``.

Inside the ``[...]`` of sync ops the value alone (``<PIPE_V>``) is accepted and
printed, as MLIR does for an attribute whose kind the op fixes
(:func:`parse_short_enum`, :func:`print_short_enum`).
"""

from __future__ import annotations

from typing import ClassVar, TypeVar, cast

from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum


class AddressSpace(StrEnum):
    """Memories: GM and the on-chip buffers (``loc=`` of a tile_buf)."""

    gm = "gm"
    mat = "mat"
    left = "left"
    right = "right"
    acc = "acc"
    vec = "vec"
    bias = "bias"
    scaling = "scaling"
    zero = "zero"


TILE_LOCS = frozenset(
    {
        AddressSpace.vec,
        AddressSpace.mat,
        AddressSpace.left,
        AddressSpace.right,
        AddressSpace.acc,
        AddressSpace.bias,
        AddressSpace.scaling,
    }
)


class Pipe(StrEnum):
    """Hardware pipes (PTOAS ``PIPE``; the C++ spelling is the value)."""

    PIPE_S = "PIPE_S"
    PIPE_V = "PIPE_V"
    PIPE_M = "PIPE_M"
    PIPE_MTE1 = "PIPE_MTE1"
    PIPE_MTE2 = "PIPE_MTE2"
    PIPE_MTE3 = "PIPE_MTE3"
    PIPE_ALL = "PIPE_ALL"
    PIPE_MTE4 = "PIPE_MTE4"
    PIPE_MTE5 = "PIPE_MTE5"
    PIPE_V2 = "PIPE_V2"
    PIPE_FIX = "PIPE_FIX"
    VIRTUAL_PIPE_MTE2_L1A = "VIRTUAL_PIPE_MTE2_L1A"
    VIRTUAL_PIPE_MTE2_L1B = "VIRTUAL_PIPE_MTE2_L1B"
    PIPE_NUM = "PIPE_NUM"
    PIPE_UNASSIGNED = "PIPE_UNASSIGNED"

    # Every name equals its value, so str's C hash is Enum's ``hash(self._name_)`` without a Python
    # call: pipes key the device model's hot dictionaries (queues, flags, clocks).
    __hash__ = str.__hash__


class Event(StrEnum):
    """The 8 event ids of a pipe pair."""

    EVENT_ID0 = "EVENT_ID0"
    EVENT_ID1 = "EVENT_ID1"
    EVENT_ID2 = "EVENT_ID2"
    EVENT_ID3 = "EVENT_ID3"
    EVENT_ID4 = "EVENT_ID4"
    EVENT_ID5 = "EVENT_ID5"
    EVENT_ID6 = "EVENT_ID6"
    EVENT_ID7 = "EVENT_ID7"


class SyncOpType(StrEnum):
    """High-level sync endpoints of record_event/wait_event (mapped to pipes, §5)."""

    TLOAD = "TLOAD"
    TSTORE_ACC = "TSTORE_ACC"
    TSTORE_VEC = "TSTORE_VEC"
    TMOV_M2L = "TMOV_M2L"
    TMOV_M2S = "TMOV_M2S"
    TMOV_M2B = "TMOV_M2B"
    TMOV_M2V = "TMOV_M2V"
    TMOV_V2M = "TMOV_V2M"
    TMATMUL = "TMATMUL"
    TVEC = "TVEC"
    TVECWAIT_EVENT = "TVECWAIT_EVENT"


SYNC_OP_PIPE: dict[SyncOpType, Pipe] = {
    SyncOpType.TLOAD: Pipe.PIPE_MTE2,
    SyncOpType.TSTORE_VEC: Pipe.PIPE_MTE3,
    SyncOpType.TSTORE_ACC: Pipe.PIPE_FIX,
    SyncOpType.TMOV_M2L: Pipe.PIPE_MTE1,
    SyncOpType.TMOV_M2B: Pipe.PIPE_MTE1,
    SyncOpType.TMOV_M2S: Pipe.PIPE_FIX,
    SyncOpType.TMOV_M2V: Pipe.PIPE_V,
    SyncOpType.TMOV_V2M: Pipe.PIPE_FIX,
    SyncOpType.TMATMUL: Pipe.PIPE_M,
    SyncOpType.TVEC: Pipe.PIPE_V,
    SyncOpType.TVECWAIT_EVENT: Pipe.PIPE_V,
}


class Layout(StrEnum):
    """GM layout of a tensor_view."""

    nd = "nd"
    dn = "dn"
    nz = "nz"


class BLayout(StrEnum):
    """Block layout of a tile_buf."""

    row_major = "row_major"
    col_major = "col_major"


class SLayout(StrEnum):
    """Scatter (fractal) layout of a tile_buf."""

    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"


class RoundMode(StrEnum):
    NONE = "NONE"
    RINT = "RINT"
    ROUND = "ROUND"
    FLOOR = "FLOOR"
    CEIL = "CEIL"
    TRUNC = "TRUNC"
    ODD = "ODD"
    CAST_RINT = "CAST_RINT"


class CmpMode(StrEnum):
    eq = "eq"
    ne = "ne"
    lt = "lt"
    le = "le"
    gt = "gt"
    ge = "ge"


class StPhase(StrEnum):
    unspecified = "unspecified"
    partial = "partial"
    final = "final"


class AtomicType(StrEnum):
    atomic_none = "atomic_none"
    atomic_add = "atomic_add"


class ReluPreMode(StrEnum):
    no_relu = "no_relu"
    normal_relu = "normal_relu"


class AccToVecMode(StrEnum):
    single_mode_vec0 = "single_mode_vec0"
    single_mode_vec1 = "single_mode_vec1"
    dual_mode_split_m = "dual_mode_split_m"
    dual_mode_split_n = "dual_mode_split_n"


class KernelKind(StrEnum):
    cube = "cube"
    vector = "vector"


_E = TypeVar("_E", bound=StrEnum)


class AngleEnum:
    """Mixin: an enum attribute written ``#pto.<name><VALUE>``."""

    enum_type: ClassVar[type[StrEnum]]
    data: StrEnum

    def print_parameter(self, printer: Printer) -> None:
        """Print ``<VALUE>``."""
        printer.print_string(f"<{self.data.value}>")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> StrEnum:
        """Parse ``<VALUE>``."""
        with parser.in_angle_brackets():
            return parser.parse_str_enum(cls.enum_type)


@irdl_attr_definition
class AddressSpaceAttr(AngleEnum, EnumAttribute[AddressSpace]):
    """``#pto.address_space<vec>`` (also the memory space of internal memrefs)."""

    name = "pto.address_space"


@irdl_attr_definition
class PipeAttr(AngleEnum, EnumAttribute[Pipe]):
    """``#pto.pipe<PIPE_V>``."""

    name = "pto.pipe"


@irdl_attr_definition
class EventAttr(AngleEnum, EnumAttribute[Event]):
    """``#pto.event<EVENT_ID0>``."""

    name = "pto.event"


@irdl_attr_definition
class PipeEventTypeAttr(AngleEnum, EnumAttribute[SyncOpType]):
    """``#pto.pipe_event_type<TLOAD>`` (preferred spelling)."""

    name = "pto.pipe_event_type"


@irdl_attr_definition
class SyncOpTypeAttr(AngleEnum, EnumAttribute[SyncOpType]):
    """``#pto.sync_op_type<TLOAD>`` (deprecated alias of pipe_event_type)."""

    name = "pto.sync_op_type"


@irdl_attr_definition
class LayoutAttr(AngleEnum, EnumAttribute[Layout]):
    """``#pto.layout<nd>``."""

    name = "pto.layout"


@irdl_attr_definition
class BLayoutAttr(AngleEnum, EnumAttribute[BLayout]):
    """``#pto.blayout<row_major>`` (a tile_buf parameter)."""

    name = "pto.blayout"


@irdl_attr_definition
class SLayoutAttr(AngleEnum, EnumAttribute[SLayout]):
    """``#pto.slayout<none_box>`` (a tile_buf parameter)."""

    name = "pto.slayout"


@irdl_attr_definition
class KernelKindAttr(AngleEnum, EnumAttribute[KernelKind]):
    """``#pto.kernel_kind<cube|vector>`` (function attribute ``pto.kernel_kind``)."""

    name = "pto.kernel_kind"


@irdl_attr_definition
class AccToVecModeAttr(AngleEnum, EnumAttribute[AccToVecMode]):
    """``#pto.acc_to_vec_mode<single_mode_vec0>`` (tmov acc->vec)."""

    name = "pto.acc_to_vec_mode"


@irdl_attr_definition
class RoundModeAttr(EnumAttribute[RoundMode], SpacedOpaqueSyntaxAttribute):
    """``#pto<round_mode CAST_RINT>`` (tcvt ``rmode``)."""

    name = "pto.round_mode"


@irdl_attr_definition
class CmpModeAttr(EnumAttribute[CmpMode], SpacedOpaqueSyntaxAttribute):
    """``#pto<cmp lt>`` (tcmp ``cmpMode``)."""

    name = "pto.cmp"


@irdl_attr_definition
class StPhaseAttr(EnumAttribute[StPhase], SpacedOpaqueSyntaxAttribute):
    """``#pto<st_phase final>`` (tstore ``stPhase``)."""

    name = "pto.st_phase"


@irdl_attr_definition
class AtomicTypeAttr(EnumAttribute[AtomicType], SpacedOpaqueSyntaxAttribute):
    """``#pto<atomic_type atomic_add>`` (tstore ``atomicType``)."""

    name = "pto.atomic_type"


@irdl_attr_definition
class ReluPreModeAttr(EnumAttribute[ReluPreMode], SpacedOpaqueSyntaxAttribute):
    """``#pto<relu_pre_mode normal_relu>`` (tstore/tmov ``reluPreMode``)."""

    name = "pto.relu_pre_mode"


PTO_ATTRS: tuple[type[Attribute], ...] = (
    AddressSpaceAttr,
    PipeAttr,
    EventAttr,
    PipeEventTypeAttr,
    SyncOpTypeAttr,
    LayoutAttr,
    BLayoutAttr,
    SLayoutAttr,
    KernelKindAttr,
    AccToVecModeAttr,
    RoundModeAttr,
    CmpModeAttr,
    StPhaseAttr,
    AtomicTypeAttr,
    ReluPreModeAttr,
)

_A = TypeVar("_A", bound=EnumAttribute)


def parse_short_enum(parser: AttrParser, attr_type: type[_A] | tuple[type[_A], ...]) -> _A:
    """Parse ``<VALUE>`` (kind implied by the op) or a full ``#pto.kind<VALUE>``.

    With a tuple of kinds the short form means the first one.
    """
    kinds = attr_type if isinstance(attr_type, tuple) else (attr_type,)
    if parser.parse_optional_punctuation("<") is not None:
        value = parser.parse_str_enum(kinds[0].enum_type)
        parser.parse_punctuation(">")
        return kinds[0](value)
    pos = parser.pos
    attr = parser.parse_attribute()
    if not isinstance(attr, kinds):
        expected = " or ".join(f"#{k.name}<...>" for k in kinds)
        parser.raise_error(f"expected {expected}, got {attr}", pos, parser.pos)
    return cast(_A, attr)


def print_short_enum(printer: Printer, attr: EnumAttribute) -> None:
    """Print ``<VALUE>``, the form MLIR uses when the op fixes the attribute kind."""
    printer.print_string(f"<{attr.data.value}>")
