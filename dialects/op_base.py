"""The shape every ``pl`` op shares: a DSL signature, type inference, a verifier.

Each op class lists its DSL arguments in ``DSL_ARGS`` (the order the printed DSL
writes them). That one table drives the IRDL fields' meaning, the front end
(``pl.tile.load(x, [0, 0], ...)`` -> operands and properties), the DSL printer
and the op's verifier, so the two text forms cannot drift apart.

Argument kinds:

- ``VALUE``: one SSA operand (tile, tensor or scalar).
- ``OPT_VALUE``: an optional SSA operand (DSL default ``None``).
- ``VALUE_LIST``: a list of index operands (offsets, valid shapes); literals are
  ``arith.constant`` ops that the DSL printer writes inline.
- ``ATTR``: a property, converted by a :class:`Codec` (enums, dtypes, bools,
  numbers, strings, static int lists).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, SSAValue, TypeAttribute
from xdsl.irdl import IRDLOperation, VarOperandDef
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum

from .dtypes import dtype_name, dtype_type, is_dtype, is_integer
from .enums import DSL_PATH, ENUM_ATTRS, enum_attr
from .types import DYNAMIC, TensorType, TileType


class OpTypeError(VerifyException):
    """An op's operands or attributes break its typing rules (a user error)."""


class ArgKind(Enum):
    VALUE = "value"
    OPT_VALUE = "opt_value"
    VALUE_LIST = "value_list"
    ATTR = "attr"


class Codec:
    """Converts one kind of property between Python, MLIR and DSL text."""

    what = "a property"
    """What the property's attribute is, for an error about one of another kind."""

    def accepts(self, attr: Attribute) -> bool:
        """Whether ``attr`` is of the kind :meth:`from_attr` reads (text may hold any attribute there)."""
        raise NotImplementedError

    def to_attr(self, value: Any) -> Attribute:
        raise NotImplementedError

    def from_attr(self, attr: Attribute) -> Any:
        raise NotImplementedError

    def to_dsl(self, attr: Attribute) -> str:
        raise NotImplementedError


class EnumCodec(Codec):
    def __init__(self, enum_type: type[StrEnum]):
        self.enum_type = enum_type

    def to_attr(self, value: Any) -> Attribute:
        if isinstance(value, str) and not isinstance(value, self.enum_type):
            value = next((m for m in self.enum_type if m.value == value), value)  # upstream's mode="ring"
        if not isinstance(value, self.enum_type):
            raise TypeError(f"expected a {DSL_PATH.get(self.enum_type, self.enum_type.__name__)} value, got {value!r}")
        return enum_attr(value)

    @property
    def what(self) -> str:  # type: ignore[override]
        return f"a {DSL_PATH.get(self.enum_type, self.enum_type.__name__)} value"

    def accepts(self, attr: Attribute) -> bool:
        return isinstance(attr, ENUM_ATTRS[self.enum_type])

    def from_attr(self, attr: Attribute) -> Any:
        assert isinstance(attr, ENUM_ATTRS[self.enum_type])
        return attr.data

    def to_dsl(self, attr: Attribute) -> str:
        return f"{DSL_PATH[self.enum_type]}.{self.from_attr(attr).value}"


class BoolCodec(Codec):
    def to_attr(self, value: Any) -> Attribute:
        if not isinstance(value, bool):
            raise TypeError(f"expected True or False, got {value!r}")
        return IntegerAttr(int(value), IntegerType(1))

    what = "a boolean (true or false)"

    def accepts(self, attr: Attribute) -> bool:
        return isinstance(attr, IntegerAttr)

    def from_attr(self, attr: Attribute) -> Any:
        assert isinstance(attr, IntegerAttr)
        return bool(attr.value.data)

    def to_dsl(self, attr: Attribute) -> str:
        return str(self.from_attr(attr))


class IntCodec(Codec):
    def to_attr(self, value: Any) -> Attribute:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"expected an integer, got {value!r}")
        return IntegerAttr(value, i64)

    what = "an integer (such as 1 : i64)"

    def accepts(self, attr: Attribute) -> bool:
        return isinstance(attr, IntegerAttr)

    def from_attr(self, attr: Attribute) -> Any:
        assert isinstance(attr, IntegerAttr)
        return attr.value.data

    def to_dsl(self, attr: Attribute) -> str:
        return str(self.from_attr(attr))


class FloatCodec(Codec):
    def to_attr(self, value: Any) -> Attribute:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"expected a number, got {value!r}")
        return FloatAttr(float(value), f64)

    what = "a float (such as 1.0 : f64)"

    def accepts(self, attr: Attribute) -> bool:
        return isinstance(attr, FloatAttr)

    def from_attr(self, attr: Attribute) -> Any:
        assert isinstance(attr, FloatAttr)
        return attr.value.data

    def to_dsl(self, attr: Attribute) -> str:
        return repr(self.from_attr(attr))


class StrCodec(Codec):
    def to_attr(self, value: Any) -> Attribute:
        if not isinstance(value, str):
            raise TypeError(f"expected a string, got {value!r}")
        return StringAttr(value)

    what = "a string"

    def accepts(self, attr: Attribute) -> bool:
        return isinstance(attr, StringAttr)

    def from_attr(self, attr: Attribute) -> Any:
        assert isinstance(attr, StringAttr)
        return attr.data

    def to_dsl(self, attr: Attribute) -> str:
        return json.dumps(self.from_attr(attr))


class DTypeCodec(Codec):
    """A dtype property (``dtype=pl.FP32``): stored as the MLIR type itself."""

    def to_attr(self, value: Any) -> Attribute:
        name = getattr(value, "dtype_name", None)
        if name is None:
            raise TypeError(f"expected a dtype such as pl.FP32, got {value!r}")
        return dtype_type(name)

    what = "a dtype (such as f32)"

    def accepts(self, attr: Attribute) -> bool:
        return isinstance(attr, TypeAttribute) and is_dtype(attr)

    def from_attr(self, attr: Attribute) -> Any:
        assert isinstance(attr, TypeAttribute) and is_dtype(attr)
        return attr

    def to_dsl(self, attr: Attribute) -> str:
        return f"pl.{dtype_name(attr)}"


class IntListCodec(Codec):
    """A static list of ints (a shape): ``array<i64: 16, 128>``."""

    def to_attr(self, value: Any) -> Attribute:
        if not isinstance(value, (list, tuple)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            raise TypeError(f"expected a list of integer literals, got {value!r}")
        return DenseArrayBase.from_list(i64, list(value))

    what = "an integer list (such as array<i64: 16, 128>)"

    def accepts(self, attr: Attribute) -> bool:
        return isinstance(attr, DenseArrayBase)

    def from_attr(self, attr: Attribute) -> Any:
        assert isinstance(attr, DenseArrayBase)
        return tuple(attr.get_values())

    def to_dsl(self, attr: Attribute) -> str:
        return "[" + ", ".join(str(v) for v in self.from_attr(attr)) + "]"


BOOL = BoolCodec()
INT = IntCodec()
FLOAT = FloatCodec()
STR = StrCodec()
DTYPE = DTypeCodec()
INTS = IntListCodec()


_REQUIRED = object()


@dataclass(frozen=True)
class Arg:
    """One argument of an op's DSL signature.

    ``keyword`` args print as ``name=value``; they print only when their value
    differs from ``default`` unless ``always`` is set.
    """

    name: str
    kind: ArgKind
    codec: Codec | None = None
    default: Any = _REQUIRED
    keyword: bool = False
    always: bool = False

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


def value(name: str) -> Arg:
    return Arg(name, ArgKind.VALUE)


def opt_value(name: str, keyword: bool = False) -> Arg:
    return Arg(name, ArgKind.OPT_VALUE, default=None, keyword=keyword)


def value_list(name: str, optional: bool = False) -> Arg:
    return Arg(name, ArgKind.VALUE_LIST, default=None if optional else _REQUIRED)


def attr(
    name: str,
    codec: Codec,
    default: Any = _REQUIRED,
    *,
    keyword: bool | None = None,
    always: bool = False,
) -> Arg:
    if keyword is None:
        keyword = default is not _REQUIRED
    return Arg(name, ArgKind.ATTR, codec, default, keyword, always)


class ArgView:
    """Named access to an op's (or a to-be-built op's) arguments."""

    def __init__(self, op_name: str, values: dict[str, Any], attrs: dict[str, Attribute], args: Sequence[Arg]):
        self.op_name = op_name
        self._values = values
        self._attrs = attrs
        self._args = {a.name: a for a in args}

    def value(self, name: str) -> SSAValue:
        return self._values[name]

    def opt_value(self, name: str) -> SSAValue | None:
        return self._values.get(name)

    def values(self, name: str) -> list[SSAValue]:
        return list(self._values.get(name) or [])

    def has(self, name: str) -> bool:
        return name in self._attrs

    def attr(self, name: str) -> Any:
        """The Python value of a property, or its default when absent."""
        arg = self._args[name]
        if name not in self._attrs:
            return None if arg.required else arg.default
        assert arg.codec is not None
        value = self._attrs[name]
        if not arg.codec.accepts(value):  # the text's attribute, of another kind: the user's mistake
            raise self.fail(f"attribute '{name}' must be {arg.codec.what}, got {value}")
        return arg.codec.from_attr(value)

    def fail(self, message: str) -> OpTypeError:
        return OpTypeError(f"{self.op_name}: {message}")

    def tile(self, name: str) -> TileType:
        t = self.value(name).type
        if not isinstance(t, TileType):
            raise self.fail(f"operand '{name}' must be a tile, got {describe_type(t)}")
        return t

    def tensor(self, name: str) -> TensorType:
        t = self.value(name).type
        if not isinstance(t, TensorType):
            raise self.fail(f"operand '{name}' must be a tensor, got {describe_type(t)}")
        return t

    def shaped(self, name: str) -> TileType | TensorType:
        t = self.value(name).type
        if not isinstance(t, (TileType, TensorType)):
            raise self.fail(f"operand '{name}' must be a tile or tensor, got {describe_type(t)}")
        return t


def check_dyn_sizes(a: ArgView, shape: Sequence[int], sizes: str = "sizes") -> None:
    """The run-time extents of ``shape``'s dynamic entries: one integer scalar each."""
    vals = a.values(sizes)
    want = sum(1 for d in shape if d == DYNAMIC)
    if len(vals) != want:
        raise a.fail(f"shape {list(shape)} has {want} dynamic entries but {len(vals)} run-time extents")
    for v in vals:
        if not (is_dtype(v.type) and is_integer(v.type)):
            raise a.fail(f"a run-time extent must be an integer scalar, got {describe_type(v.type)}")
    if any(d < 0 and d != DYNAMIC for d in shape) or any(d == 0 for d in shape):
        raise a.fail(f"shape {list(shape)} has an entry that is neither positive nor dynamic")


def describe_type(t: Attribute) -> str:
    """A type as the DSL writes it, for messages."""
    if isinstance(t, (TileType, TensorType)):
        kind = "Tile" if isinstance(t, TileType) else "Tensor"
        dims = ", ".join("?" if d < 0 else str(d) for d in t.get_shape())
        extra = f", pl.Mem.{t.memory_space.value}" if isinstance(t, TileType) else ""
        return f"pl.{kind}[[{dims}], pl.{dtype_name(t.element_type)}{extra}]"
    if is_dtype(t):
        return f"pl.Scalar[pl.{dtype_name(t)}]"
    return str(t)


class PLOp(IRDLOperation):
    """Base of every ``pl.tensor.*`` / ``pl.tile.*`` op.

    Besides its signature an op class states the facts passes and backends need
    (read them through :mod:`pypto.dialects.op_facts`):

    - ``ALIAS_OPERAND``: the operand whose buffer the result is (a view of, when
      ``IS_VIEW``; else written in place), e.g. ``"acc"`` for ``matmul_acc``;
    - ``INPLACE_SAFE``: False when the result may share a buffer with none of the
      tile operands (the hardware reads them, or a scratch, while writing);
    - ``FORBID_INPLACE_OPERAND``: the one operand the result may not share a
      buffer with (a broadcast vector re-read for every output row);
    - ``ALSO_WRITES``: operands the op writes in place besides ``ALIAS_OPERAND``
      (a collective's signal, which its notifies update);
    - ``PTO_OP``: the name of the ``pto`` op a tile op lowers to (ptoas keys its
      lowering by this class, without the pl dialect importing ptoas);
    - ``TORCH``: the torch expression of the result, a format string over the
      op's value arguments (``"torch.exp({input})"``), for ops whose torch
      meaning is one expression;
    - ``KEEPS_VALID_SHAPE``: the result has its first operand's valid shape;
    - ``NO_TORCH`` / ``NO_PTO``: why the op has no torch lowering / no pto
      lowering (test_op_facts fails for an op that lacks one without a reason);
    - ``ROW_MAJOR``: the backend needs every tile operand and the result
      row_major (upstream's backend layout spec; ResolveBackendOpLayouts
      reshapes a ``[N, 1]`` col_major tile to ``[1, N]`` around the op);
    - ``DYN_SIZES``: the VALUE_LIST operand holding the run-time extents of the
      ``shape`` property's dynamic (``-1``) entries, in order (an Orchestration
      ``pl.create_tensor([16, n])``); the DSL writes them inline in the shape;
    - ``OTHER_LEVEL_ARGS``: keywords of the op's other level (tensor / tile) that
      this one does not take, each with what to write instead (the front end's
      error names it, as upstream's does);
    - ``POSITIONAL``: the names the DSL binds positional arguments to, when
      upstream's signature orders them otherwise than ``DSL_ARGS`` (whose order
      is the printed one): the tensor matmul's ``out_dtype`` comes third.
    """

    DSL_ARGS: ClassVar[tuple[Arg, ...]] = ()
    OTHER_LEVEL_ARGS: ClassVar[dict[str, str]] = {}
    POSITIONAL: ClassVar[tuple[str, ...] | None] = None
    ALIAS_OPERAND: ClassVar[str | None] = None
    IS_VIEW: ClassVar[bool] = False
    INPLACE_SAFE: ClassVar[bool] = True
    FORBID_INPLACE_OPERAND: ClassVar[str | None] = None
    ALSO_WRITES: ClassVar[tuple[str, ...]] = ()
    PTO_OP: ClassVar[str | None] = None
    TORCH: ClassVar[str | None] = None
    KEEPS_VALID_SHAPE: ClassVar[bool] = False
    NO_TORCH: ClassVar[str | None] = None
    NO_PTO: ClassVar[str | None] = None
    ROW_MAJOR: ClassVar[bool] = False
    DYN_SIZES: ClassVar[str | None] = None

    def folded_by_front_end(self) -> bool:
        """Its value is a compile-time constant the front end writes in where the program uses it (so the
        result may have no use in the IR although the program reads the variable)."""
        return False

    def result_valid_shape(self) -> list[SSAValue | int] | None:
        """The valid shape of the op's tile result, a run-time index value or a static extent per dim (the
        region of the tile that holds data: a load's ``valid_shapes``); None when the op states no rule. By
        default its first operand's (:func:`~pypto.dialects.op_facts.valid_shape`) when ``KEEPS_VALID_SHAPE``."""
        if self.KEEPS_VALID_SHAPE and self.operands:
            from .op_facts import valid_shape

            return valid_shape(self.operands[0])
        return None

    def forbidden_inplace_operands(self) -> list[SSAValue]:
        """The operands this op's result must not share a buffer with."""
        if not self.INPLACE_SAFE:
            return [v for v in self.operands if isinstance(v.type, TileType)]
        if self.FORBID_INPLACE_OPERAND is not None:
            v = getattr(self, self.FORBID_INPLACE_OPERAND)
            return [v] if isinstance(v.type, TileType) else []
        return []

    @classmethod
    def infer_type(cls, args: ArgView) -> Attribute:
        """The result type for these arguments; raises OpTypeError if illegal."""
        raise NotImplementedError(cls.__name__)

    @classmethod
    def build_from_args(
        cls,
        values: dict[str, Any],
        attrs: dict[str, Attribute],
        result_type: Attribute | None = None,
    ) -> PLOp:
        """Build the op from DSL arguments, inferring its result type."""
        attrs = dict(attrs)
        for arg in cls.DSL_ARGS:
            if (
                arg.kind is ArgKind.ATTR
                and arg.always
                and arg.name not in attrs
                and arg.default is not None
                and not arg.required
            ):
                assert arg.codec is not None
                attrs[arg.name] = arg.codec.to_attr(arg.default)
        view = ArgView(cls.name, values, attrs, cls.DSL_ARGS)
        inferred = cls.infer_type(view)
        irdl = cls.get_irdl_definition()
        operands: list[Any] = []
        for name, odef in irdl.operands:
            v = values.get(name)
            if isinstance(odef, VarOperandDef):
                operands.append([] if v is None else ([v] if isinstance(v, SSAValue) else list(v)))
            else:
                operands.append(v)
        return cls.create_checked(operands, attrs, result_type or inferred)

    @classmethod
    def create_checked(cls, operands: list[Any], properties: dict[str, Attribute], result_type: Attribute) -> PLOp:
        return cls(operands=operands, properties=dict(properties), result_types=[result_type])

    def arg_view(self) -> ArgView:
        values: dict[str, Any] = {}
        for arg in self.DSL_ARGS:
            if arg.kind is ArgKind.VALUE:
                values[arg.name] = getattr(self, arg.name)
            elif arg.kind is ArgKind.OPT_VALUE:
                v = getattr(self, arg.name)
                if v is not None:
                    values[arg.name] = v
            elif arg.kind is ArgKind.VALUE_LIST:
                values[arg.name] = list(getattr(self, arg.name))
        attrs = {
            a.name: self.properties[a.name]
            for a in self.DSL_ARGS
            if a.kind is ArgKind.ATTR and a.name in self.properties
        }
        return ArgView(self.name, values, attrs, self.DSL_ARGS)

    def verify_(self) -> None:
        inferred = self.infer_type(self.arg_view())
        actual = self.results[0].type
        if not same_kind_shape_dtype(inferred, actual):
            raise OpTypeError(
                f"{self.name}: result type {describe_type(actual)} does not match the "
                f"inferred {describe_type(inferred)}"
            )


def same_kind_shape_dtype(a: Attribute, b: Attribute) -> bool:
    """Equal up to MemRef and TileView (what passes may attach later)."""
    if isinstance(a, TileType) and isinstance(b, TileType):
        return a.get_shape() == b.get_shape() and a.element_type == b.element_type and a.memory_space == b.memory_space
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.get_shape() == b.get_shape() and a.element_type == b.element_type
    return a == b
