"""Run a single-chip program on a rank's simulated chip, on the rank's clock.

:func:`run_on_chip` runs a program (a ``@pl.jit`` function, an ``ir.Program`` or a
``CompiledProgram``) with :func:`pypto.runtime.run` in the rank's own process,
then advances the rank's clock by the run's makespan (``total_cycles``), so
kernel time and link time add up on one clock per chip.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pypto.runtime.config import RunConfig
from pypto.runtime.run import RunResult, run

from .comm import RankComm
from .trace import rank_dir


def run_on_chip(comm: RankComm, program: Any, *args: Any, config: RunConfig | None = None,
                name: str | None = None) -> RunResult:
    """Run ``program(*args)`` on this rank's chip (``pypto.runtime.run``); the clock moves by its cycles.
    When the launch has an ``output_dir``, the run's DFX artefacts (the ``RunConfig`` flags) go to
    ``<output_dir>/dfx_outputs/rank{r}/d{k}/``."""
    label = name or getattr(program, "__name__", None) or type(program).__name__
    if comm.output_dir is not None:
        config = config if config is not None else RunConfig()
        dfx_dir = rank_dir(Path(comm.output_dir), comm.rank, comm.device_id)
        config = replace(config, extra={**config.extra, "dfx_dir": str(dfx_dir)})
    with comm.scope(f"chip run {label}"):
        result = run(program, *args, config=config)
    start = comm.clock
    comm.clock += int(result.total_cycles)
    comm._event(f"chip {label}", "chip", start, comm.clock, tasks=len(result.tasks))
    return result
