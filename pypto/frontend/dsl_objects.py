"""Runtime objects of the ``pl`` namespace: dtypes and annotation markers.

Kernel bodies are never executed; these objects exist so that decorated
Python code (annotations, decorator arguments) evaluates, and so the front
end's constant evaluator has concrete values (``pl.FP32.dtype_name``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from pypto.dialects.dtypes import DTYPE_NAMES


class DType:
    """A DSL element type such as ``pl.FP32`` (``dtype_name == "FP32"``)."""

    __slots__ = ("dtype_name",)

    def __init__(self, dtype_name: str):
        self.dtype_name = dtype_name

    def __repr__(self) -> str:
        return f"pl.{self.dtype_name}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DType) and other.dtype_name == self.dtype_name

    def __hash__(self) -> int:
        return hash(("pl.dtype", self.dtype_name))

    def get_byte(self) -> int:
        """Bytes per element (upstream's ``DataType.get_byte()``; sub-byte types round up)."""
        from pypto.dialects.dtypes import dtype_bits, dtype_type

        return max(1, dtype_bits(dtype_type(self.dtype_name)) // 8)


DTYPES: dict[str, DType] = {name: DType(name) for name in DTYPE_NAMES}


class _Annotation:
    """The value of a subscripted marker (``pl.Tensor[[128, 128], pl.FP32]``)."""

    def __init__(self, kind: str, args: tuple[Any, ...]):
        self.kind = kind
        self.args = args

    def __repr__(self) -> str:
        return f"pl.{self.kind}[{', '.join(map(repr, self.args))}]"


class _Marker:
    """``pl.Tensor``, ``pl.Tile``, ``pl.Scalar``, ``pl.Out``, ``pl.InOut``, ``pl.Tuple``."""

    def __init__(self, kind: str):
        self.kind = kind

    def __getitem__(self, item: Any) -> _Annotation:
        return _Annotation(self.kind, item if isinstance(item, tuple) else (item,))

    def __repr__(self) -> str:
        return f"pl.{self.kind}"


Tensor = _Marker("Tensor")
Tile = _Marker("Tile")
Scalar = _Marker("Scalar")
Out = _Marker("Out")
InOut = _Marker("InOut")
Tuple = _Marker("Tuple")
Ptr = _Marker("Ptr")


class MemRef:
    """``pl.MemRef(base, offset, size)`` inside a type annotation."""

    def __init__(self, base: Any, offset: Any, size: int):
        self.base, self.offset, self.size = base, offset, size


class TileView:
    """``pl.TileView(blayout=, slayout=, fractal=)`` inside a tile annotation."""

    def __init__(self, blayout: Any = None, slayout: Any = None, fractal: int = 512, **extra: Any):
        self.blayout, self.slayout, self.fractal, self.extra = blayout, slayout, fractal, extra


class TensorLayout(enum.Enum):
    """``pl.TensorLayout``: a tensor's layout (``pl.ND`` is ``pl.TensorLayout.ND``)."""

    ND = "ND"
    DN = "DN"
    NZ = "NZ"


class ScopeMode(enum.Enum):
    """``pl.ScopeMode``: ``with pl.scope(mode=...)``: AUTO (the runtime infers dependencies) or MANUAL
    (only ``deps=`` edges; ``pl.manual_scope()``)."""

    AUTO = "AUTO"
    MANUAL = "MANUAL"


class TensorView:
    """``pl.TensorView(stride=, layout=, valid_shape=, pad=)`` inside a ``pl.Tensor`` annotation (upstream:
    explicit strides / valid shape of a window). Accepted and checked as upstream (``layout=`` is required
    when any other field is given); the parameter's type is its shape and dtype (a kernel reads the valid
    extent from a scalar parameter, ``pl.load(..., valid_shape=[16, n])``)."""

    def __init__(self, stride: Any = None, layout: Any = None, valid_shape: Any = None, pad: Any = None):
        if layout is None and (stride is not None or valid_shape is not None or pad is not None):
            raise ValueError("pl.TensorView: layout= is required when stride, valid_shape or pad is given")
        if layout is not None and not isinstance(layout, TensorLayout):
            raise ValueError(f"pl.TensorView: layout must be a pl.TensorLayout member, got {layout!r}")
        self.stride, self.layout, self.valid_shape, self.pad = stride, layout, valid_shape, pad


class ConstValue:
    """``pl.const(value, dtype)``: a literal of an explicit dtype."""

    def __init__(self, value: int | float | bool, dtype: DType):
        self.value, self.dtype = value, dtype

    def __repr__(self) -> str:
        return f"pl.const({self.value!r}, {self.dtype!r})"


def const(value: int | float | bool, dtype: DType) -> ConstValue:
    return ConstValue(value, dtype)


class DynVar:
    """``pl.dynamic("M")``: a tensor dimension whose extent is known only at run time.

    Usable anywhere a shape annotation is (``pl.Tensor[[M, 128], pl.FP16]``), inside or outside a
    kernel; every use of the same ``DynVar`` names the same extent."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"pl.dynamic(name): expected an identifier such as 'M', got {name!r}")
        self.name = name

    def __repr__(self) -> str:
        return f"pl.dynamic({self.name!r})"

    def value(self, bind: Callable[[DynVar], int]) -> int:
        """The extent once ``bind`` gives each named dimension its run-time value."""
        return bind(self)

    def _arith(self, op: str, other: object, reflected: bool = False) -> DynExpr:
        if not isinstance(other, DynVar) and (isinstance(other, bool) or not isinstance(other, int)):
            return NotImplemented  # type: ignore[return-value]
        return DynExpr(op, other, self) if reflected else DynExpr(op, self, other)

    def __add__(self, other: object) -> DynExpr:
        return self._arith("+", other)

    def __radd__(self, other: object) -> DynExpr:
        return self._arith("+", other, reflected=True)

    def __sub__(self, other: object) -> DynExpr:
        return self._arith("-", other)

    def __rsub__(self, other: object) -> DynExpr:
        return self._arith("-", other, reflected=True)

    def __mul__(self, other: object) -> DynExpr:
        return self._arith("*", other)

    def __rmul__(self, other: object) -> DynExpr:
        return self._arith("*", other, reflected=True)

    def __floordiv__(self, other: object) -> DynExpr:
        return self._arith("//", other)

    def __rfloordiv__(self, other: object) -> DynExpr:
        return self._arith("//", other, reflected=True)


_DYN_OPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "//": lambda a, b: a // b,
}  # fmt: skip


class DynExpr(DynVar):
    """Arithmetic on ``pl.dynamic`` dimensions (``NR * SIZE``, ``M * 2``, as upstream's ``DynVar`` is a
    scalar expression): itself a run-time extent, whose value follows from its named dimensions'."""

    def __init__(self, op: str, lhs: DynVar | int, rhs: DynVar | int):
        self.op, self.lhs, self.rhs = op, lhs, rhs
        self.name = f"({_text(lhs)} {op} {_text(rhs)})"

    def __repr__(self) -> str:
        return self.name

    def value(self, bind: Callable[[DynVar], int]) -> int:
        def ev(x: DynVar | int) -> int:
            return x.value(bind) if isinstance(x, DynVar) else x

        return _DYN_OPS[self.op](ev(self.lhs), ev(self.rhs))


def _text(x: DynVar | int) -> str:
    return x.name if isinstance(x, DynVar) else str(x)


def dynamic(name: str) -> DynVar:
    """A run-time tensor dimension (see :class:`DynVar`)."""
    return DynVar(name)


HOST_CALLS: ContextVar[dict[str, Callable[..., Any]] | None] = ContextVar("pypto_host_calls", default=None)
"""While a ``@pl.jit.host`` orchestrator runs on the host: the DSL functions it may call (``pl.range``)."""


class _DSLOnly:
    """A DSL function: only meaningful inside a parsed kernel body."""

    def __init__(self, name: str):
        self._name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        host = HOST_CALLS.get()
        if host is not None and self._name in host:  # a @pl.jit.host body run on the host (pypto.driver.distributed)
            return host[self._name](*args, **kwargs)
        raise RuntimeError(f"{self._name}(...) can only be used inside a @pl.function / @pl.jit kernel body")

    def __getattr__(self, attr: str) -> _DSLOnly:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _DSLOnly(f"{self._name}.{attr}")

    def __repr__(self) -> str:
        return self._name
