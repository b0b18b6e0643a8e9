"""``@pl.jit``: compile a kernel for each call's arguments (cached) and run it.

The front-end half (specializing on sample arguments, pulling in
``@pl.jit.incore`` callees) is :mod:`pypto.frontend.jit`. A
:class:`JITFunction` is a :class:`pypto.runtime.Runnable`: the runtime asks
it for the :class:`~pypto.runtime.RunSpec` of the program compiled for a call's arguments.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from pypto.compile_profiling import owned_profiler, stage
from pypto.core.pass_context import PassContext
from pypto.core.program import Program
from pypto.dialects.enums import FunctionType, Level, Role
from pypto.errors import InvalidArgumentError
from pypto.frontend.builder import FunctionInfo
from pypto.frontend.jit import JitKernel
from pypto.pipeline.lower import lower_program
from pypto.utils.tracebacks import api_boundary

from . import compile_cache
from .compile import compile
from .compiled import CompiledProgram
from .host_trace import HOST_TRACE, dispatch

if TYPE_CHECKING:
    from pypto.runtime import RunSpec

# Compile options forwarded from a RunConfig to ir.compile when present.
_CONFIG_OPTIONS = ("strategy", "dump_passes", "dump_ptoas_passes", "diagnostic_phase", "disabled_diagnostics",
                   "analyze_auto_scopes_for_deps", "memory_planner", "distributed_config", "platform", "backend_type")  # fmt: skip


class JITFunction(JitKernel):
    """A ``@pl.jit`` kernel: ``lower``, ``compile``, call."""

    def __init__(self, fn: Callable[..., Any], info: FunctionInfo):
        super().__init__(fn, info)
        self._compiled: dict[tuple[Any, ...], CompiledProgram] = {}
        self._source: compile_cache.SourceKey | None = None
        self._programs_source: str | None = None  # the source hash the front end's Programs were parsed under

    def lower(self, *args: Any, config: Any = None, **kwargs: Any) -> Program:
        """The Program after the pass pipeline (writes nothing)."""
        program = self.specialize(*args, **kwargs).clone()
        return lower_program(program, **_config_options(config, lower_program))

    @api_boundary
    def compile(self, *args: Any, config: Any = None, **kwargs: Any) -> CompiledProgram:
        """``pypto.ir.compile`` on the specialized program, cached (:mod:`.compile_cache`: the key is the
        source, the specialisation, the compile-side options and the environment)."""
        _check_config(config)
        if self._is_l3(config):  # a @pl.jit.host orchestrator over several chips: pypto.driver.distributed
            from .distributed import compile_host

            return compile_host(self, self._bind(args, kwargs), config)
        bound = self._bind(args, kwargs)
        key = (self._source_hash(), self._key(bound), _config_key(config), compile_cache.environment_key())
        hit = compile_cache.lookup(key) or self._compiled.get(key)  # this kernel's own: past the cache's bound
        if hit is not None and hit.output_dir.is_dir():
            self._compiled[key] = hit
        else:
            # With compile_profiling (or PYPTO_COMPILE_PROFILING), one profiler spans the parse and
            # the compile; its owner (this call, or an enclosing runtime.run) writes the report.
            with owned_profiler(bool(getattr(config, "compile_profiling", False))) as (prof, owned):
                with stage("parse"):
                    program = self.specialize(*bound)
                options = _config_options(config, compile)
                if prof is not None:
                    options["profiling"] = False  # the report is written below, with the compile stage closed
                with stage("compile"):
                    compiled = compile(program, **options)
                if owned and prof is not None:
                    prof.write_report(compiled.report_dir)
            self._compiled[key] = compiled
            compile_cache.store(key, compiled)
        return self._compiled[key]

    def _is_l3(self, config: Any) -> bool:
        """A ``@pl.jit.host`` orchestrator compiled with ``RunConfig(distributed_config=...)`` (one that
        uses ``pld`` without it is told what it needs)."""
        if self.info.level is not Level.HOST:
            return False
        if getattr(config, "distributed_config", None) is not None:
            return True
        try:
            uses_pld = "pld." in inspect.getsource(self.fn)
        except (OSError, TypeError):
            uses_pld = False
        if uses_pld:
            raise InvalidArgumentError(f"{self.__name__}: a multi-chip @pl.jit.host orchestrator is compiled with "
                                       "config=RunConfig(distributed_config=DistributedConfig(device_ids=[...]))")
        return False

    def specialize(self, *args: Any, **kwargs: Any) -> Program:
        """The front end's Program for these arguments (cached), parsed again once a constant the kernel
        reads is bound to another value (its source hash changed)."""
        source = self._source_hash()
        if source != self._programs_source:
            self._programs.clear()
            self._programs_source = source
        return super().specialize(*args, **kwargs)

    def _source_hash(self) -> str:
        """The hash of this kernel's source and what it names (:class:`.compile_cache.SourceKey`: computed
        once, again when a constant it read is bound to another value)."""
        if self._source is None:
            self._source = compile_cache.SourceKey(self.fn, lambda v: isinstance(v, JitKernel))
        return self._source.current()

    def run_spec(self, args: Sequence[Any], config: Any = None) -> RunSpec:
        """The :class:`pypto.runtime.Runnable` side: the spec of the program compiled for ``args`` (cached)."""
        return self.compile(*args, config=config).run_spec(args, config)

    @api_boundary
    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """Compile for these arguments (cached on their shapes/dtypes and the
        compile-side options), then dispatch to the simulated chip
        (``CompiledProgram.__call__`` -> ``pypto.runtime.run``): Out/InOut
        tensors are written in place; returns the kernel's return value."""
        if HOST_TRACE.get() is not None:  # dispatched by a @pl.jit.host orchestrator: recorded, not run
            return dispatch(self, args, kwargs)
        if self._is_l3(config):
            return self.compile(*args, config=config, **kwargs)(*args, config=config)
        bound = self._bind(args, kwargs)
        if config is not None and getattr(config, "codegen_only", False):
            return self.compile(*bound, config=config)(*bound, config=config)
        from pypto.runtime import run  # the runtime (numpy) is imported when a kernel runs

        # runtime.run compiles through run_spec (cached), so a profile spans parse, compile and run.
        result = run(self, *bound, config=config)
        compiled = self.compile(*bound, config=config)
        compiled.last_run = result
        return result.outputs


def _check_config(config: Any) -> None:
    """``config=`` is None or a RunConfig (:func:`pypto.runtime.config.check_config`, imported on use)."""
    if config is not None:
        from pypto.runtime.config import check_config

        check_config(config)


def _config_key(config: Any) -> str | None:
    """The compile cache key of a RunConfig and the active PassContext: their
    compile-side options only, so run-side fields (``target``, ``check_races``
    ...) reuse the compiled program."""
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


class _Jit:
    """``pl.jit`` and its variants ``pl.jit.incore/inline/opaque/host``."""

    def __call__(self, fn: Callable[..., Any] | None = None, *, auto_scope: bool = True) -> Any:
        """``@pl.jit`` or ``@pl.jit(auto_scope=False)`` (scopes placed by hand with ``pl.scope()``)."""
        extra = {} if auto_scope else {"auto_scope": False}
        return self._variant(FunctionInfo(FunctionType.Orchestration, extra=extra), fn)

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

    def host(self, fn: Callable[..., Any] | None = None, *, auto_scope: bool = True) -> Any:
        extra = {} if auto_scope else {"auto_scope": False}
        return self._variant(FunctionInfo(FunctionType.Orchestration, Level.HOST, Role.Orchestrator, extra=extra), fn)


jit = _Jit()
