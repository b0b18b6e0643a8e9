"""What the runtime runs, as a protocol: the runtime never imports the compile driver.

:func:`pypto.runtime.run` takes

- a bare :class:`~pypto.core.program.Program` (or ``ModuleOp``): lowered with
  :func:`pypto.pipeline.lower.lower_program`, nothing written;
- a :class:`Runnable`: an object whose ``executable()`` gives the lowered
  program and its signature (``pypto.driver.CompiledProgram``);
- a :class:`CompilesOnCall`: an object compiled for each call's arguments,
  whose ``runnable_for(args, config)`` gives a Runnable (a ``@pl.jit``
  function).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pypto.core.program import Program


@dataclass
class Executable:
    """A lowered program and what the runtime needs to run it."""

    program: Program
    """The program after the pass pipeline."""
    entry_name: str | None = None
    """The Orchestration function to run (None: the program's entry)."""
    param_names: list[str] = field(default_factory=list)
    """The entry's parameter names as the user wrote them (empty: from the IR)."""
    output_dir: Path | None = None
    """The compile's output directory (None: nothing is written)."""
    platform: str = "a2a3sim"
    prepared: Any = field(default=None, compare=False, repr=False)
    """The runtime's prepared form of this executable, built on the first run."""


@runtime_checkable
class Runnable(Protocol):
    """A compiled program the runtime can run."""

    def executable(self) -> Executable:
        """The lowered program (the same object on every call, so the runtime's preparation is kept)."""
        ...


@runtime_checkable
class CompilesOnCall(Protocol):
    """A kernel compiled for each call's arguments (``@pl.jit``)."""

    def runnable_for(self, args: Sequence[Any], config: Any = None) -> Runnable:
        """The compiled program for these arguments and this RunConfig."""
        ...
