"""Run a single-chip program on a rank's simulated chip, on the rank's clock.

:func:`run_on_chip` runs a program (a ``@pl.jit`` function, an ``ir.Program`` or a
``CompiledProgram``) with :func:`pypto.runtime.run` in the rank's own process,
then advances the rank's clock by the run's makespan (``total_cycles``), so
kernel time and link time add up on one clock per chip. Each call is one
dispatch: the ``k``-th of the rank writes its L2 artefacts to
``dfx_outputs/rank{r}/d{k}/``, with ``dispatch_program.json`` naming the program.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pypto.runtime.config import RunConfig
from pypto.runtime.dfx.base import json_text, write_artefact
from pypto.runtime.run import RunResult, run

from .comm import RankComm
from .trace import DISPATCH_PROGRAM, rank_dir


def begin_dispatch(comm: RankComm, program: str) -> Path | None:
    """Count one dispatch of ``program`` on this rank; with an ``output_dir``, create its
    ``dfx_outputs/rank{r}/d{k}/`` with ``dispatch_program.json`` and return it."""
    k = comm.dispatches
    comm.dispatches += 1
    if comm.output_dir is None:
        return None
    dfx_dir = rank_dir(Path(comm.output_dir), comm.rank, k)
    write_artefact(dfx_dir / DISPATCH_PROGRAM, json_text({"program": program}) + "\n")
    return dfx_dir


def run_on_chip(comm: RankComm, program: Any, *args: Any, config: RunConfig | None = None,
                name: str | None = None) -> RunResult:
    """Run ``program(*args)`` on this rank's chip (``pypto.runtime.run``); the clock moves by its cycles.
    When the launch has an ``output_dir``, the run's DFX artefacts (the ``RunConfig`` flags) go to
    ``<output_dir>/dfx_outputs/rank{r}/d{k}/`` (``k``: this rank's dispatch number in the run), with
    ``dispatch_program.json`` = ``{"program": name}``; ``enable_chip_swimlane`` also turns on
    ``enable_dep_gen`` there (upstream's L3 driver does: ``rank{r}/d{k}/deps.json`` beside the records)."""
    label = name or getattr(program, "__name__", None) or type(program).__name__
    k = comm.dispatches
    dfx_dir = begin_dispatch(comm, label)
    if dfx_dir is not None:
        config = config if config is not None else RunConfig()
        config = replace(config, extra={**config.extra, "dfx_dir": str(dfx_dir)})
        if config.enable_chip_swimlane and not config.enable_dep_gen:
            config = replace(config, enable_dep_gen=True)  # as upstream's L3: swimlane co-enables deps.json
    with comm.scope(f"chip run {label}"):
        result = run(program, *args, config=config)
    start = comm.clock
    comm.clock += int(result.total_cycles)
    comm._event(f"chip {label}", "chip", start, comm.clock, tasks=len(result.tasks), dispatch=k)
    return result
