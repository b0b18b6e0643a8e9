"""``@pl.jit``: kernels specialized on sample (torch) arguments.

The body is parsed, never executed. The entry becomes an Orchestration
function of program ``_jit_<entry>``; ``@pl.jit.incore`` / ``.inline`` /
``.opaque`` / ``.host`` functions it calls become functions of the same
program, their bare ``pl.Tensor`` parameters typed by the call's arguments.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

from xdsl.ir import Attribute

from pypto.dialects.dtypes import dtype_type
from pypto.dialects.enums import FunctionType, Level, Role
from pypto.dialects.types import TensorType
from pypto.ir.program import Program
from pypto.target.dtypes import ROWS

from .frontend.builder import FunctionBuilder, FunctionInfo, ProgramBuilder
from .frontend.parser import python_source

TORCH_DTYPES: dict[str, str] = {r.torch: r.name for r in ROWS if r.torch is not None}
"""torch dtype name -> the PyPTO dtype of the same values (``bfloat16`` -> ``BF16``)."""

# Compile options forwarded from a RunConfig to ir.compile when present.
_CONFIG_OPTIONS = ("strategy", "dump_passes", "dump_ptoas_passes", "diagnostic_phase", "disabled_diagnostics",
                   "analyze_auto_scopes_for_deps", "memory_planner", "distributed_config", "platform", "backend_type")  # fmt: skip


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


class JITFunction:
    """A ``@pl.jit`` kernel: ``lower``, ``compile``, call."""

    def __init__(self, fn: Callable[..., Any], info: FunctionInfo):
        self.fn = fn
        self.info = info
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]
        self._programs: dict[tuple[Any, ...], Program] = {}
        self._compiled: dict[tuple[Any, ...], Any] = {}

    @property
    def param_names(self) -> list[str]:
        return list(inspect.signature(self.fn).parameters)

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        names = self.param_names
        unknown = [k for k in kwargs if k not in names]
        if unknown:
            raise TypeError(
                f"{self.__name__}() got an unexpected keyword argument '{unknown[0]}'; the kernel's parameters are "
                f"({', '.join(names)}); pass compile options via config="
            )
        if len(args) > len(names):
            raise TypeError(f"{self.__name__}() takes {len(names)} arguments ({', '.join(names)}), got {len(args)}")
        bound = list(args) + [kwargs[n] for n in names[len(args) :] if n in kwargs]
        if args and len(bound) != len(names):
            raise TypeError(f"{self.__name__}() takes {len(names)} arguments ({', '.join(names)}), got {len(bound)}")
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

    def lower(self, *args: Any, config: Any = None, **kwargs: Any) -> Program:
        """The Program after the pass pipeline (writes nothing)."""
        program = self.specialize(*args, **kwargs).clone()
        ircompile = importlib.import_module("pypto.ir.compile")

        lower_program = getattr(ircompile, "lower_program", None)
        if lower_program is None:
            return program
        return lower_program(program, **_config_options(config, lower_program))

    def compile(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """``pypto.ir.compile.compile`` on the specialized program (cached)."""
        bound = self._bind(args, kwargs)
        key = (self._key(bound), _config_key(config))
        if key not in self._compiled:
            from pypto.compile_profiling import CompileProfiler, get_active_profiler, stage

            ircompile = importlib.import_module("pypto.ir.compile")
            compile_fn = ircompile.compile
            # With compile_profiling, one profiler spans parsing and the compile.
            own = getattr(config, "compile_profiling", False) and get_active_profiler() is None
            with CompileProfiler() if own else contextlib.nullcontext():
                with stage("parse"):
                    program = self.specialize(*bound)
                self._compiled[key] = compile_fn(program, **_config_options(config, compile_fn))
        return self._compiled[key]

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """Compile for these arguments (cached on their shapes/dtypes and the
        compile-side options), then dispatch to the simulated chip
        (``CompiledProgram.__call__`` -> ``pypto.runtime.run``): Out/InOut
        tensors are written in place; returns the kernel's return value."""
        compiled = self.compile(*args, config=config, **kwargs)
        return compiled(*self._bind(args, kwargs), config=config)


def _config_key(config: Any) -> str | None:
    """The compile cache key of a RunConfig and the active PassContext: their
    compile-side options only, so run-side fields (``target``, ``check_races``
    ...) reuse the compiled program."""
    from pypto.ir.pass_context import PassContext

    ctx = PassContext.current()
    scope = "" if ctx is None else repr(sorted(ctx.settings().items(), key=lambda kv: kv[0]))
    if config is None:
        return scope or None
    if hasattr(config, "compile_options"):
        return repr(sorted(config.compile_options().items())) + scope
    return repr(sorted(vars(config).items())) + scope


def _config_options(config: Any, compile_fn: Callable[..., Any]) -> dict[str, Any]:
    """The ``ir.compile`` keyword arguments a RunConfig carries (a RunConfig's
    ``compile_options()``, else its attributes named like compile options)."""
    if config is None:
        return {}
    accepted = set(inspect.signature(compile_fn).parameters)
    if hasattr(config, "compile_options"):
        opts = dict(config.compile_options())
    else:
        opts = {k: getattr(config, k) for k in _CONFIG_OPTIONS if hasattr(config, k)}
        if getattr(config, "compile_profiling", False):
            opts["profiling"] = True
        if getattr(config, "save_kernels_dir", None):
            opts["output_dir"] = config.save_kernels_dir
    return {k: v for k, v in opts.items() if k in accepted}


class JitProgramBuilder(ProgramBuilder):
    """A ProgramBuilder that pulls in ``@pl.jit.*`` callees named in the body."""

    def external_call(self, caller: FunctionBuilder, node: ast.Call) -> Any:
        assert isinstance(node.func, ast.Name)
        target = caller.src.globals.get(node.func.id)
        if not isinstance(target, JITFunction) or target.info.kind is FunctionType.Orchestration:
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


def _build_jit_program(entry: JITFunction, types: dict[str, Attribute]) -> Program:
    fnode, src = python_source(entry.fn)
    assert isinstance(fnode, ast.FunctionDef)
    pb = JitProgramBuilder(f"_jit_{fnode.name}", src)
    pb.add(fnode, entry.info, src)
    pb.function(fnode.name, types)
    return pb.build()


class _Jit:
    """``pl.jit`` and its variants ``pl.jit.incore/inline/opaque/host``."""

    def __call__(self, fn: Callable[..., Any]) -> JITFunction:
        return JITFunction(fn, FunctionInfo(FunctionType.Orchestration))

    @staticmethod
    def _variant(info: FunctionInfo, fn: Callable[..., Any] | None) -> Any:
        if fn is not None:
            return JITFunction(fn, info)
        return lambda f: JITFunction(f, info)

    def incore(self, fn: Callable[..., Any] | None = None, *, level: Level | None = None) -> Any:
        return self._variant(FunctionInfo(FunctionType.InCore, level), fn)

    def inline(self, fn: Callable[..., Any] | None = None, *, auto_scope: bool = True) -> Any:
        extra = {} if auto_scope else {"auto_scope": False}
        return self._variant(FunctionInfo(FunctionType.Inline, extra=extra), fn)

    def opaque(self, fn: Callable[..., Any] | None = None) -> Any:
        return self._variant(FunctionInfo(FunctionType.Opaque), fn)

    def host(self, fn: Callable[..., Any] | None = None) -> Any:
        return self._variant(FunctionInfo(FunctionType.Orchestration, Level.HOST, Role.Orchestrator), fn)


jit = _Jit()
