"""``@pl.program`` and ``@pl.function``, and the ``pl`` names that mean something only inside a kernel body."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from pypto.core.program import Program
from pypto.utils.tracebacks import api_boundary, caller_frame

from .dsl_objects import _DSLOnly
from .parser import check_decorated, program_from_class, program_from_function, python_source
from .sugar import SUGAR


@api_boundary
def program(cls: type) -> Program:
    """``@pl.program`` class -> Program (the class body is parsed, not run). A class defined inside a
    function also sees that function's local variables (``big_m`` below ``def build(): big_m = ...``)."""
    check_decorated(cls, "pl.program", want_class=True, frame=caller_frame())
    node, src = python_source(cls)
    assert isinstance(node, ast.ClassDef)
    _add_enclosing_locals(src.globals, caller_frame())
    prog = program_from_class(node, src)
    prog.host_orchestrators = {n: f or cls.__dict__[n] for n, f in prog.host_orchestrators.items()}
    prog.host_functions = {n: f or cls.__dict__[n] for n, f in prog.host_functions.items()}
    prog.sub_workers = {n: replace(h, fn=cls.__dict__[n]) for n, h in prog.sub_workers.items()}
    return prog


def _add_enclosing_locals(env: dict[str, Any], frame: Any) -> None:
    """A kernel defined inside a function sees that function's locals (they shadow the module's globals)."""
    if frame is not None and frame.f_code.co_name != "<module>":
        env.update(frame.f_locals)


def _is_method(fn: Callable[..., Any]) -> bool:
    parts = fn.__qualname__.split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


@api_boundary
def function(fn: Callable[..., Any] | None = None, **options: Any) -> Any:
    """``@pl.function`` / ``@pl.function(type=..., level=..., role=...)``.

    Inside a ``@pl.program`` class it only marks the method; on a module-level
    function it returns a Program holding that one function."""

    @api_boundary
    def deco(f: Callable[..., Any], frame: Any = None) -> Any:
        frame = frame if frame is not None else caller_frame()
        check_decorated(f, "pl.function", frame=frame)
        if _is_method(f):
            f.__pl_function__ = options  # type: ignore[attr-defined]
            return f
        node, src = python_source(f)
        assert isinstance(node, ast.FunctionDef)
        _add_enclosing_locals(src.globals, frame)
        dec = next(d for d in node.decorator_list if "function" in ast.unparse(d))
        return program_from_function(node, src, dec)

    return deco(fn, caller_frame()) if fn is not None else deco


DSL_ONLY_NAMES = (
    "range", "parallel", "unroll", "pipeline", "at", "scope", "spmd", "cluster", "yield_", "cond", "while_",
    *SUGAR,  # the op functions (pl.add, pl.load, ...), derived from the ops
    "tile", "tensor", "adir", "dump_tag",
)  # fmt: skip
"""DSL-only functions: meaningful inside parsed kernel bodies only."""

DSL_ONLY: dict[str, _DSLOnly] = {name: _DSLOnly(f"pl.{name}") for name in DSL_ONLY_NAMES}
"""``pl.<name>`` for each DSL-only function: an object that explains itself when called outside a kernel."""
