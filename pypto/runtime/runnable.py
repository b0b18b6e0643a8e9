"""What the runtime runs: the :class:`Runnable` protocol and its :class:`RunSpec`.

A compiled program (the driver's ``CompiledProgram``) and a ``@pl.jit``
function are Runnables: :func:`pypto.runtime.run` asks them for a
:class:`RunSpec` and knows nothing else about them. A jit function compiles on
the arguments and hands back its compiled program's spec::

    class CompiledProgram:
        def run_spec(self, args, config):
            return RunSpec(self.lowered, "main", ["a", "b", "out"], self.output_dir, "a2a3sim", "Ascend910B")

The runtime keeps what it prepares from a spec (entry, kernel units) as long
as the spec object lives, so a Runnable returns the same spec object for runs
that need the same preparation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass(eq=False)
class RunSpec:
    """A lowered program ready to run.

    ``program``: the Program after the pass pipeline (``.module``,
    ``.functions``); ``entry_name``: its Orchestration function (None: the
    only one); ``param_names``: the entry's parameter names, in order;
    ``output_dir``: the compile output directory (its ``ptoas/<unit>.pto`` are
    the units that run), None for none; ``platform`` / ``backend_type``: what
    it was compiled for (they pick the ``.pto`` arch when a unit is built in
    memory)."""

    program: Any
    entry_name: str | None = None
    param_names: list[str] = field(default_factory=list)
    output_dir: Path | None = None
    platform: str = "a2a3sim"
    backend_type: str | None = None


@runtime_checkable
class Runnable(Protocol):
    """Anything :func:`pypto.runtime.run` runs besides a bare Program."""

    def run_spec(self, args: Sequence[Any], config: Any) -> RunSpec:
        """The spec to run with ``args`` (the entry's arguments) under ``config`` (a RunConfig or None)."""
        ...



def compile_for_run(program: Any, config: Any) -> Any:
    """``program`` compiled with ``config``'s compile options into a Runnable by the compiler the
    driver registered (:mod:`pypto.core.compiler_hook`); without one, ``program`` itself
    (:func:`pypto.runtime.run` lowers it in memory)."""
    from pypto.core.compiler_hook import registered_compiler

    compiler = registered_compiler()
    if compiler is None:
        return program
    options = dict(config.compile_options()) if config is not None else {}
    options.pop("golden", None)
    options.pop("profiling", None)  # the run's profiler records the compile
    return compiler(program, **options)
