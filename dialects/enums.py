"""The DSL's enumerations and their MLIR attributes.

Each enum's values are spelled exactly as in the DSL (``pl.Mem.Vec`` is
``MemorySpace.Vec`` whose value is ``"Vec"``), so the Python and MLIR text forms
name the same thing the same way. ``DSL_PATH`` is how the printed DSL spells the
enum class (``pl.Mem``).
"""

from __future__ import annotations

from xdsl.dialects.utils.enum_attribute import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.str_enum import StrEnum


class MemorySpace(StrEnum):
    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"
    LeftScale = "LeftScale"
    RightScale = "RightScale"
    ScalarLocal = "ScalarLocal"


class FunctionType(StrEnum):
    Opaque = "Opaque"
    Orchestration = "Orchestration"
    InCore = "InCore"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Spmd = "Spmd"
    Inline = "Inline"
    Graph = "Graph"


class Level(StrEnum):
    AIV = "AIV"
    AIC = "AIC"
    CORE_GROUP = "CORE_GROUP"
    CHIP_DIE = "CHIP_DIE"
    CHIP = "CHIP"
    HOST = "HOST"


class Role(StrEnum):
    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"


class ParamDirection(StrEnum):
    In = "In"
    Out = "Out"
    InOut = "InOut"


class ForKind(StrEnum):
    Sequential = "Sequential"
    Parallel = "Parallel"
    Unroll = "Unroll"
    Pipeline = "Pipeline"


class PadValue(StrEnum):
    null = "null"
    zero = "zero"
    max = "max"
    min = "min"


class TileLayout(StrEnum):
    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"


class AtomicType(StrEnum):
    None_ = "None_"
    Add = "Add"


class CastMode(StrEnum):
    round = "round"
    rint = "rint"
    floor = "floor"
    ceil = "ceil"
    trunc = "trunc"
    odd = "odd"
    none = "none"


# How the printed DSL names each enum class.
DSL_PATH: dict[type[StrEnum], str] = {
    MemorySpace: "pl.Mem",
    FunctionType: "pl.FunctionType",
    Level: "pl.Level",
    Role: "pl.Role",
    PadValue: "pl.PadValue",
    TileLayout: "pl.TileLayout",
    AtomicType: "pl.AtomicType",
}

# Function kind -> the level and role it implies (pl-dsl.md §1).
DEFAULT_LEVEL: dict[FunctionType, Level] = {
    FunctionType.Orchestration: Level.CHIP,
    FunctionType.InCore: Level.CHIP_DIE,
    FunctionType.AIC: Level.AIC,
    FunctionType.AIV: Level.AIV,
    FunctionType.Group: Level.CORE_GROUP,
}
DEFAULT_ROLE: dict[FunctionType, Role] = {
    FunctionType.Orchestration: Role.Orchestrator,
    FunctionType.InCore: Role.SubWorker,
    FunctionType.AIC: Role.SubWorker,
    FunctionType.AIV: Role.SubWorker,
    FunctionType.Group: Role.SubWorker,
}


@irdl_attr_definition
class MemorySpaceAttr(EnumAttribute[MemorySpace], SpacedOpaqueSyntaxAttribute):
    name = "pl.mem"


@irdl_attr_definition
class FunctionTypeAttr(EnumAttribute[FunctionType], SpacedOpaqueSyntaxAttribute):
    name = "pl.func_type"


@irdl_attr_definition
class LevelAttr(EnumAttribute[Level], SpacedOpaqueSyntaxAttribute):
    name = "pl.level"


@irdl_attr_definition
class RoleAttr(EnumAttribute[Role], SpacedOpaqueSyntaxAttribute):
    name = "pl.role"


@irdl_attr_definition
class ParamDirectionAttr(EnumAttribute[ParamDirection], SpacedOpaqueSyntaxAttribute):
    name = "pl.dir"


@irdl_attr_definition
class ForKindAttr(EnumAttribute[ForKind], SpacedOpaqueSyntaxAttribute):
    name = "pl.for_kind"


@irdl_attr_definition
class PadValueAttr(EnumAttribute[PadValue], SpacedOpaqueSyntaxAttribute):
    name = "pl.pad"


@irdl_attr_definition
class TileLayoutAttr(EnumAttribute[TileLayout], SpacedOpaqueSyntaxAttribute):
    name = "pl.layout"


@irdl_attr_definition
class AtomicTypeAttr(EnumAttribute[AtomicType], SpacedOpaqueSyntaxAttribute):
    name = "pl.atomic"


@irdl_attr_definition
class CastModeAttr(EnumAttribute[CastMode], SpacedOpaqueSyntaxAttribute):
    name = "pl.cast_mode"


ENUM_ATTRS: dict[type[StrEnum], type[EnumAttribute]] = {
    MemorySpace: MemorySpaceAttr,
    FunctionType: FunctionTypeAttr,
    Level: LevelAttr,
    Role: RoleAttr,
    ParamDirection: ParamDirectionAttr,
    ForKind: ForKindAttr,
    PadValue: PadValueAttr,
    TileLayout: TileLayoutAttr,
    AtomicType: AtomicTypeAttr,
    CastMode: CastModeAttr,
}


def enum_attr(value: StrEnum) -> EnumAttribute:
    """The MLIR attribute of an enum value."""
    return ENUM_ATTRS[type(value)](value)

