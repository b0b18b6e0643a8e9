"""The front-end half of ``@pl.jit``: kernels specialized on sample (torch) arguments.

The body is parsed, never executed. The entry becomes an Orchestration
function of program ``_jit_<entry>``; ``@pl.jit.incore`` / ``.inline`` /
``.opaque`` / ``.host`` functions it calls become functions of the same
program, their bare ``pl.Tensor`` parameters typed by the call's arguments.
Compiling and calling a kernel is the driver's half (:mod:`pypto.driver.jit`).
"""

from __future__ import annotations

import ast
import functools
import inspect
import numbers
from collections.abc import Callable
from typing import Any

from xdsl.ir import Attribute

from pypto.core.program import Program
from pypto.dialects.dtypes import dtype_type
from pypto.dialects.enums import FunctionType
from pypto.dialects.types import TensorType
from pypto.errors import ArgumentTypeError, ParserSyntaxError
from pypto.target.dtypes import ROWS

from .builder import FunctionBuilder, FunctionInfo, ProgramBuilder
from .parser import check_decorated, python_source

TORCH_DTYPES: dict[str, str] = {r.torch: r.name for r in ROWS if r.torch is not None}
"""torch dtype name -> the PyPTO dtype of the same values (``bfloat16`` -> ``BF16``)."""


def torch_type(value: Any) -> Attribute | None:
    """The ``pl.Tensor`` type of a torch tensor sample (None for other values)."""
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is None or dtype is None:
        return None
    name = str(dtype).removeprefix("torch.")
    if name not in TORCH_DTYPES:
        raise TypeError(f"torch dtype {dtype} has no PyPTO dtype")
    return TensorType.get(tuple(int(d) for d in shape), dtype_type(TORCH_DTYPES[name]))


TENSOR_ANNOTATIONS = ("Tensor", "Out", "InOut", "DistributedTensor")
"""The annotations (``pl.Tensor``, ``pl.Out[...]`` ...) of a parameter that takes a tensor."""


def annotation_kind(node: ast.expr | None) -> str | None:
    """``"tensor"`` or ``"scalar"`` for a parameter's annotation (``pl.Tensor[...]``, ``pl.Out[...]``,
    ``pl.Scalar[...]``, bare or subscripted), None for anything else (no annotation, a tile ...)."""
    head = node.value if isinstance(node, ast.Subscript) else node
    attr = head.attr if isinstance(head, ast.Attribute) else head.id if isinstance(head, ast.Name) else None
    return "tensor" if attr in TENSOR_ANNOTATIONS else "scalar" if attr == "Scalar" else None


def _check_argument(kernel: str, name: str, value: Any, kind: str | None = None) -> None:
    """A @pl.jit argument is a tensor of a PyPTO dtype or a number, as its parameter's annotation ``kind``
    asks (ArgumentTypeError naming it otherwise)."""
    if getattr(value, "shape", None) is not None and getattr(value, "dtype", None) is not None:
        dtype = str(value.dtype).removeprefix("torch.")
        if str(value.dtype).startswith("torch.") and dtype not in TORCH_DTYPES:
            raise ArgumentTypeError(f"argument '{name}' of {kernel}() has dtype {dtype}, which has no PyPTO dtype")
        if kind == "scalar":
            raise ArgumentTypeError(f"argument '{name}' of {kernel}() is a tensor: its parameter is a pl.Scalar, "
                                    "which takes a number")  # fmt: skip
        return
    if not isinstance(value, numbers.Number):
        got = "None" if value is None else f"a {type(value).__name__}"
        raise ArgumentTypeError(f"argument '{name}' of {kernel}() is {got}: a @pl.jit kernel takes tensors and numbers")
    if kind == "tensor":
        raise ArgumentTypeError(f"argument '{name}' of {kernel}() is the {type(value).__name__} {value!r}: its parameter is a "
                                "pl.Tensor, which takes a tensor (torch, numpy)")  # fmt: skip


class JitKernel:
    """A ``@pl.jit`` kernel's front end: its Python function, its kind, and ``specialize``."""

    def __init__(self, fn: Callable[..., Any], info: FunctionInfo):
        check_decorated(fn, "pl.jit")
        self.fn = fn
        self.info = info
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]
        self._programs: dict[tuple[Any, ...], Program] = {}

    @property
    def param_names(self) -> list[str]:
        return list(inspect.signature(self.fn).parameters)

    @functools.cached_property
    def output_params(self) -> list[int]:
        """Indices of the parameters annotated ``pl.Out[...]`` / ``pl.InOut[...]`` or ``pld.DistributedTensor[...]``
        (a window view, written in place as the front end takes it), from the source."""
        fnode, _ = python_source(self.fn)
        assert isinstance(fnode, ast.FunctionDef)
        return [i for i, a in enumerate(fnode.args.args)
                if isinstance(a.annotation, ast.Subscript) and isinstance(a.annotation.value, ast.Attribute)
                and a.annotation.value.attr in ("Out", "InOut", "DistributedTensor")]  # fmt: skip

    @functools.cached_property
    def param_kinds(self) -> list[str | None]:
        """Each parameter's ``annotation_kind`` (tensor, scalar or None), from the source."""
        fnode, _ = python_source(self.fn)
        assert isinstance(fnode, ast.FunctionDef)
        return [annotation_kind(a.annotation) for a in fnode.args.args]

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        """The call's arguments in parameter order, as Python binds them, defaults included (an
        ArgumentTypeError, also a TypeError, for an unknown, repeated or missing one); each must be a tensor or
        a number."""
        names = self.param_names
        usage = f"{self.__name__}() takes {len(names)} arguments ({', '.join(names)})"
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise ArgumentTypeError(
                f"{self.__name__}() got an unexpected keyword argument '{unknown[0]}'; the kernel's parameters are "
                f"({', '.join(names)}); pass compile options via config="
            )
        if len(args) > len(names):
            raise ArgumentTypeError(f"{usage}, got {len(args) + len(kwargs)}")
        twice = [n for n in names[: len(args)] if n in kwargs]
        if twice:
            raise ArgumentTypeError(f"{self.__name__}() got multiple values for argument '{twice[0]}'")
        defaults = {n: p.default for n, p in inspect.signature(self.fn).parameters.items()
                    if p.default is not inspect.Parameter.empty}  # fmt: skip
        rest = names[len(args) :]
        if args or kwargs:  # a call binds a parameter's default as Python does (specialize() alone binds none)
            kwargs = {**{n: defaults[n] for n in rest if n in defaults}, **kwargs}
        bound = list(args) + [kwargs[n] for n in rest if n in kwargs]
        missing = [n for n in rest if n not in kwargs]
        if (args or kwargs) and missing:
            raise ArgumentTypeError(f"{usage}, got {len(bound)}: missing '{missing[0]}'")
        for n, a, kind in zip(names, bound, self.param_kinds, strict=False):
            _check_argument(self.__name__, n, a, kind)
        return bound

    @staticmethod
    def _key(args: list[Any]) -> tuple[Any, ...]:
        key: list[Any] = []
        for a in args:
            t = torch_type(a)
            key.append(("T", str(t)) if t is not None else ("S", type(a).__name__, a))
        return tuple(key)

    def specialize(self, *args: Any, **kwargs: Any) -> Program:
        """The front-end Program for these sample arguments (cached)."""
        bound = self._bind(args, kwargs)
        key = self._key(bound)
        if key not in self._programs:
            types: dict[str, Attribute] = {}
            for n, a in zip(self.param_names, bound, strict=False):
                t = torch_type(a)
                if t is not None:
                    types[n] = t
            self._programs[key] = _build_jit_program(self, types)
        return self._programs[key]


class JitProgramBuilder(ProgramBuilder):
    """A ProgramBuilder that pulls in ``@pl.jit.*`` callees named in the body."""

    def external_call(self, caller: FunctionBuilder, node: ast.Call) -> Any:
        assert isinstance(node.func, ast.Name)
        if node.func.id in self.building:
            raise caller.fail(ParserSyntaxError, f"recursive call to '{node.func.id}' is not supported", node)
        target = caller.src.globals.get(node.func.id)
        if not isinstance(target, JitKernel) or target.info.kind is FunctionType.Orchestration:
            return None
        args = [caller.value(a) for a in node.args]
        name = target.__name__
        if name not in self.defs:
            fnode, src = python_source(target.fn)
            assert isinstance(fnode, ast.FunctionDef)
            fnode.decorator_list = []
            self.add(fnode, target.info, src)
        params = [p for p in inspect.signature(target.fn).parameters]
        callee = self.function(name, {p: a.type for p, a in zip(params, args, strict=False)})
        return caller.emit_call(callee, args, node, None)


def _build_jit_program(entry: JitKernel, types: dict[str, Attribute]) -> Program:
    fnode, src = python_source(entry.fn)
    assert isinstance(fnode, ast.FunctionDef)
    pb = JitProgramBuilder(f"_jit_{fnode.name}", src)
    pb.add(fnode, entry.info, src)
    pb.function(fnode.name, types)
    return pb.build()
