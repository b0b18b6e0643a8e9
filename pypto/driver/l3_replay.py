"""Replay an L3 (distributed) build directory: what :func:`pypto.runtime.debug.replay` does for a build with
``orchestration/host_orch.py`` and ``distributed_meta.json`` and no top-level ``kernel_config.py``
(runtime-dfx-formats.md §9, upstream's "Replaying an L3 / distributed build").

The runtime finds this module through the ``pypto.replay`` entry point (``pyproject.toml``): replay lives in
the runtime layer, the L3 program (:class:`~.distributed.DistributedCompiledProgram`) in this one.

Before anything is written every ``next_levels/<name>/`` sub-build is checked as a single-chip replay checks
its build (metadata, ``kernel_config.py``, each ``ptoas/<unit>.pto`` parsed and verified) and
``distributed_meta.json`` is read (:meth:`~.distributed.DistributedCompiledProgram.from_dir`); a problem is one
:class:`~pypto.runtime.build_dir.BuildDirError` naming the file. Then the edited ``.pto`` units of every
sub-build are spliced into their kernel C++, each sub-build's C++ binary cache is dropped, and the program
runs on ``world_size`` simulated chips with the config's DFX flags (each chip dispatch writes
``dfx_outputs/rank{r}/d{k}/``).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pypto.runtime.build_dir import (
    KERNEL_CONFIG,
    BuildDirError,
    BuildMeta,
    ParamMeta,
    absent,
    load_run_spec,
)
from pypto.runtime.config import RunConfig
from pypto.runtime.debug.pto_rebuild import apply_rebuild, invalidate_binary_cache, stale_units
from pypto.runtime.debug.replaying import preflight
from pypto.runtime.distributed.launch import DistributedRun
from pypto.target.dtypes import ROWS

from .comm_program import DistributedBuildError
from .distributed import DistributedCompiledProgram, check_host_args
from .output_dir import DISTRIBUTED_META, NEXT_LEVELS


def read_meta(work: Path) -> BuildMeta:
    """``distributed_meta.json``'s parameters and platform as a :class:`BuildMeta` (:func:`meta_of`)."""
    return meta_of(load(work), work / DISTRIBUTED_META)


def meta_of(program: DistributedCompiledProgram, path: Path) -> BuildMeta:
    """The L3 program's parameters and platform as a :class:`BuildMeta` (dtypes in the metadata's spelling,
    ``fp32``), so inputs are made and checked as for a single-chip build; ``path``: the sidecar a bad dtype is
    named in."""
    params = []
    for p in program.params:
        if p.get("scalar"):
            params.append(ParamMeta(str(p["name"]), "In", [], "index", p.get("value")))
            continue
        params.append(ParamMeta(str(p["name"]), str(p["direction"]), [int(d) for d in p["shape"]],
                                _label(str(p["dtype"]), path)))  # fmt: skip
    return BuildMeta(params, 0, program.platform, "Ascend910B")


def _label(torch_name: str, path: Path) -> str:
    """The metadata spelling (``fp32``) of a torch dtype name (``float32``)."""
    for row in ROWS:
        if row.torch == torch_name:
            return row.pto or row.name.lower()
    raise BuildDirError(path, f"dtype {torch_name!r} is not a torch dtype the simulated chip takes")


def load(work: Path, platform: str | None = None) -> DistributedCompiledProgram:
    """The build's program (:meth:`DistributedCompiledProgram.from_dir`); a malformed sidecar or sub-build is a
    BuildDirError naming its file."""
    meta = work / DISTRIBUTED_META
    if not meta.is_file():
        raise BuildDirError(meta, f"{absent(meta)}; an L3 build holds distributed_meta.json, written by compile")
    try:
        program = DistributedCompiledProgram.from_dir(work, platform=platform)
    except DistributedBuildError as e:
        text = str(e)
        path, _, message = text.partition(": ")
        raise BuildDirError(path if message else meta, message or text) from None
    check_plan(program, meta)
    return program


def check_plan(program: DistributedCompiledProgram, path: Path) -> None:
    """The plan's dispatches against the build: each on a rank of the world, of a program in ``next_levels``,
    on parameters the build has; a BuildDirError naming ``path`` (``distributed_meta.json``) otherwise."""
    from .host_trace import HostTensor

    world = program.plan.world_size
    if world != len(program.distributed_config.device_ids or []):
        raise BuildDirError(path, f"host_plan is for {world} ranks, distributed_config.device_ids has "
                            f"{len(program.distributed_config.device_ids or [])}")  # fmt: skip
    for k, d in enumerate(program.plan.dispatches):
        if not 0 <= d.rank < world:
            raise BuildDirError(path, f"host_plan dispatch {k} runs on rank {d.rank}; the world has ranks "
                                f"0..{world - 1}")  # fmt: skip
        if not d.program.startswith(("@", "!")) and d.program not in program.programs:
            listed = ", ".join(sorted(program.programs)) or "none"
            raise BuildDirError(path, f"host_plan dispatch {k} runs {d.program!r}, which next_levels does not list "
                                f"(lists: {listed}); an L3 build runs the programs of next_levels/<name>/")  # fmt: skip
        for a in d.args:
            if isinstance(a, HostTensor) and not 0 <= a.param < len(program.params):
                raise BuildDirError(path, f"host_plan dispatch {k} reads parameter {a.param}; the build has "
                                    f"{len(program.params)}")  # fmt: skip


def replay(
    work: Path,
    *tensors: Any,
    config: RunConfig,
    recompile: bool,
    rebuild: bool,
    program: DistributedCompiledProgram,
    why_skipped: str = "",
) -> DistributedRun:
    """Run ``program`` (the L3 build in ``work``, :func:`load`) on ``tensors`` (module docstring: its parameters in
    order, their count, shapes and dtypes checked by the caller against :func:`meta_of`; Out/InOut written in
    place); returns the run (:class:`DistributedRun`). ``why_skipped``: what turned the splice off (printed)."""
    found = sorted((work / NEXT_LEVELS).glob(f"*/{KERNEL_CONFIG}"))  # the single-chip sub-builds (not the
    levels = [p.parent for p in found]  # torch-form comm programs nor the built-in collectives: no .pto there)
    plans = {}
    for level in levels:
        plans[level] = preflight(level, rebuild)[1]
        load_run_spec(level)  # its orchestration and metadata read as each rank's chip run reads them
    check_host_args(program.params, tensors)  # a host scalar other than the one the plan was traced with

    # ---- writes from here on ----
    touched = []
    for level in levels:
        if rebuild:
            touched += apply_rebuild(level, plans[level])
        if recompile:
            invalidate_binary_cache(level)
    if rebuild:
        print(f"[pto->cpp] updated {len(touched)} kernel cpp(s)" if touched else "[pto->cpp] no .pto changes detected")
    else:
        stale = [str(p.relative_to(work)) for level in levels for p in stale_units(level)]
        why = f" ({why_skipped})" if why_skipped else ""
        print(f"[pto->cpp] skipped{why}" + (f"; edited but not spliced: {', '.join(stale)}" if stale else ""))
    if not recompile and hasattr(config, "recompile_kernels"):
        config = dataclasses.replace(config, recompile_kernels=False)
    program(*tensors, config=config)
    return program.last_run
