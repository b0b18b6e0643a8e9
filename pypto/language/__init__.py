"""``import pypto.language as pl``: the PyPTO DSL.

Decorators (``@pl.program``, ``@pl.function``, ``@pl.jit``) parse the kernel
source with :mod:`ast` into xDSL IR (docs/ir.md); kernel bodies never run.
``pl.parse`` / ``pl.loads`` read printed programs (pass dumps).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from pypto.dialects.enums import (
    AtomicType,
    CastMode,
    ForKind,
    FunctionType,
    Level,
    MemorySpace,
    PadValue,
    ParamDirection,
    Role,
    TileLayout,
)
from pypto.ir.program import Program

from . import dsl_objects as _objs
from .dsl_objects import (
    DTYPES,
    ConstValue,
    DType,
    InOut,
    MemRef,
    Out,
    Ptr,
    Scalar,
    Tensor,
    Tile,
    TileView,
    Tuple,
    const,
)
from .frontend import loads, parse
from .frontend.parser import program_from_class, program_from_function, python_source
from .frontend.sugar import SUGAR
from .jit import JITFunction, jit

Mem = MemorySpace

# dtypes: pl.FP32, pl.INDEX, ...
globals().update(DTYPES)
BOOL = DTYPES["BOOL"]
INT8, INT16, INT32, INT64 = DTYPES["INT8"], DTYPES["INT16"], DTYPES["INT32"], DTYPES["INT64"]
UINT8, UINT16, UINT32, UINT64 = DTYPES["UINT8"], DTYPES["UINT16"], DTYPES["UINT32"], DTYPES["UINT64"]
FP16, BF16, FP32, INDEX = DTYPES["FP16"], DTYPES["BF16"], DTYPES["FP32"], DTYPES["INDEX"]

parse_program = parse
loads_program = loads


def program(cls: type) -> Program:
    """``@pl.program`` class -> Program (the class body is parsed, not run)."""
    node, src = python_source(cls)
    assert isinstance(node, ast.ClassDef)
    return program_from_class(node, src)


def _is_method(fn: Callable[..., Any]) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def function(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@pl.function`` / ``@pl.function(type=..., level=..., role=...)``.

    Inside a ``@pl.program`` class it only marks the method; on a module-level
    function it returns a Program holding that one function."""

    def deco(f: Callable[..., Any]) -> Any:
        if _is_method(f):
            f.__pl_function__ = options  # type: ignore[attr-defined]
            return f
        node, src = python_source(f)
        assert isinstance(node, ast.FunctionDef)
        dec = next(d for d in node.decorator_list if "function" in ast.unparse(d))
        return program_from_function(node, src, dec)

    return deco(fn) if fn is not None else deco


# DSL-only functions: meaningful inside parsed kernel bodies only.
_DSL_ONLY = (
    "range", "parallel", "unroll", "pipeline", "at", "scope", "yield_", "cond", "while_", "dynamic",
    *SUGAR,  # the op functions (pl.add, pl.load, ...)
    "tile", "tensor", "adir",
)  # fmt: skip
globals().update({_n: _objs._DSLOnly(f"pl.{_n}") for _n in _DSL_ONLY})

__all__ = [
    "AtomicType", "CastMode", "ConstValue", "DType", "ForKind", "FunctionType", "InOut", "JITFunction", "Level",
    "Mem", "MemRef", "MemorySpace", "Out", "PadValue", "ParamDirection", "Program", "Ptr", "Role", "Scalar",
    "Tensor", "Tile", "TileLayout", "TileView", "Tuple", "const", "function", "jit", "loads", "loads_program",
    "parse", "parse_program", "program",
]  # fmt: skip
