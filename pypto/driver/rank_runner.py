"""One rank of an L3 run: its window buffers, then its dispatches in order, on its own simulated chip.

:func:`run_rank` is what :func:`pypto.runtime.distributed.launch` runs in every rank process for a
:class:`~pypto.driver.distributed.DistributedCompiledProgram`: per-rank programs compiled through the
pipeline run on the chip (:func:`~pypto.runtime.distributed.run_on_chip`; their ``pto.comm`` ops talk to
the peers through a :class:`~pypto.runtime.distributed.windows.ChipLink`), those with ``pld`` ops that
do not lower to ``.pto`` as their torch form (:mod:`.comm_program`), and host-level collectives between them.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .comm_program import CommProgram
from .compiled import CompiledProgram
from .host_trace import TORCH_OF, HostPlan, HostPlanError, HostTensor, WindowView


def torch_dtype(name: str) -> Any:
    import torch

    return getattr(torch, TORCH_OF[name])


def load_level(out: Path) -> CompiledProgram | CommProgram:
    """The program of one ``next_levels/<name>/`` directory."""
    return CommProgram.from_dir(out) if CommProgram.is_build(out) else CompiledProgram.from_dir(out)


_LOADED: dict[str, CompiledProgram | CommProgram] = {}


def _program(path: str) -> CompiledProgram | CommProgram:
    """A rank's program of ``next_levels/<name>`` (loaded once per process)."""
    if path not in _LOADED:
        _LOADED[path] = load_level(Path(path))
    return _LOADED[path]


def run_rank(comm: Any, plan_json: dict[str, Any], paths: dict[str, str], config: Any,
             host_args: list[Any], run_id: str) -> list[tuple[int, list[int], Any]]:
    """One rank: its window buffers, then its dispatches in order; returns its Out/InOut slices."""
    return run_steps(comm, plan_json, paths, config, host_args, run_id, 0, None, True, state={})


def run_steps(comm: Any, plan_json: dict[str, Any], paths: dict[str, str], config: Any, host_args: list[Any],
              run_id: str, lo: int, hi: int | None, last: bool, persist: tuple[str, bool] | None = None, *,
              state: dict[str, Any]) -> list[tuple[int, list[int], Any]]:
    """Steps ``lo:hi`` of the plan on this rank (a persistent rank runs a plan in segments, between the HOST
    callbacks): the windows of ``run_id`` live in ``state`` until the ``last`` segment, and so do the rank's
    clock, events and dispatch count, so the segments add up to one run. ``persist`` (a worker prepared with
    ``persistent=True``: its windows' id and whether to reset them) keeps the windows for the worker's life
    instead (:func:`persistent_windows`). Returns the Out/InOut slices."""
    from pypto.runtime.distributed.windows import SharedWindows, persistent_windows, window_signals

    plan = HostPlan.from_json(plan_json)
    key = ("run", run_id)
    run = state.get(key)
    if run is None:
        sizes, groups = [w.nbytes for w in plan.windows], plan.window_groups()
        if persist is not None:
            shared = persistent_windows(comm, sizes, *persist, groups, state=state)
        else:
            shared = SharedWindows(comm, sizes, run_id, groups) if plan.windows else None
        run = state[key] = {"shared": shared, "clock": 0, "events": [], "dispatches": 0, "persist": persist}
    comm.clock, comm.events, comm.dispatches = run["clock"], run["events"], run["dispatches"]
    if run["persist"] is not None and run["shared"] is not None:
        window_signals(comm, run["persist"][0], run["shared"], state=state)
    ok = False
    try:
        order = _CrossRank(comm, plan, run_id)
        outs = _dispatch_all(comm, plan.dispatches[lo:hi], paths, config, host_args, run["shared"], state,
                             order, lo)
        ok = True
        return outs
    finally:
        run["clock"], run["dispatches"] = comm.clock, comm.dispatches
        if last or not ok:
            state.pop(key, None)
            if run["shared"] is not None and run["persist"] is None:
                run["shared"].close(ok)


def drop_run(comm: Any, run_id: str, *, state: dict[str, Any]) -> None:
    """Abandon a segmented run (a HOST callback failed): close its windows without waiting for the peers (every
    rank drops them together, so their window servers, if any, stop)."""
    run = state.pop(("run", run_id), None)
    if run is not None and run["shared"] is not None and run["persist"] is None:
        run["shared"].close(False, idle=True)


class _CrossRank:
    """The plan's cross-rank order (:mod:`.host_order`) on this rank: a dispatch waits for the peers'
    dispatches in its ``after`` list, each of which notifies the ranks that wait for it once done."""

    def __init__(self, comm: Any, plan: HostPlan, run_id: str):
        self.comm, self.signal = comm, f"__order/{run_id}"
        self.waiters: dict[int, set[int]] = {}
        for d in plan.dispatches:
            for j in d.after:
                self.waiters.setdefault(j, set()).add(d.rank)

    def before(self, d: Any) -> None:
        for j in d.after:
            self.comm.wait(self.signal, j, 1)

    def done(self, i: int) -> None:
        for rank in sorted(self.waiters.get(i, ())):
            self.comm.notify(self.signal, rank, i, 1)


def _dispatch_all(comm: Any, steps: list[Any], paths: dict[str, str], config: Any, host_args: list[Any],
                  shared: Any, state: dict[str, Any], order: _CrossRank, lo: int) -> list[tuple[int, list[int], Any]]:
    import torch

    from pypto.runtime.distributed import run_on_chip
    from pypto.runtime.distributed.chip import begin_dispatch
    from pypto.runtime.distributed.resident import ResidentRef, resident_arg
    from pypto.runtime.distributed.windows import KernelComm

    windows = [shared.local(i) for i in range(len(shared.regions))] if shared is not None else []
    outs: list[tuple[int, list[int], Any]] = []
    def view(a: WindowView) -> Any:
        dt = torch_dtype(a.dtype)
        nbytes = math.prod(a.shape) * torch.empty(0, dtype=dt).element_size()
        return windows[a.buffer][:nbytes].view(dt).view(a.shape)

    for i, d in enumerate(steps, start=lo):
        if d.rank != comm.rank or d.program.startswith("!"):  # "!": a HOST callback, run by the worker
            continue
        if d.program.startswith("@"):  # a host-level collective: every rank, between its dispatches
            extra = next(a for a in d.args if isinstance(a, dict))
            with comm.scope(f"pld.tensor.{d.program[1:]} (host)"):
                host_collective(KernelComm(comm, shared), d.program[1:],
                                [view(a) for a in d.args if isinstance(a, WindowView)], extra)
            continue
        program = _program(paths[d.program])
        order.before(d)
        call: list[Any] = []
        for a in d.args:
            if isinstance(a, HostTensor) and isinstance(host_args[a.param], ResidentRef):
                call.append(resident_arg(comm, host_args[a.param], a.index, state))  # in place, on the chip
            elif isinstance(a, HostTensor):
                call.append(host_args[a.param][a.index].clone().contiguous())
            elif isinstance(a, WindowView):
                call.append(_as_param(view(a), program, len(call)))
            else:
                call.append(a)
        if isinstance(program, CommProgram):
            begin_dispatch(comm, d.program)
            with comm.scope(f"rank program {d.program}"):
                program.run(KernelComm(comm, shared), *call)
        elif shared is not None:  # its pto.comm ops reach the peers' windows through the rank link
            from pypto.device.interpreter.comm_impls import rank_link
            from pypto.runtime.distributed.windows import ChipLink

            chip_args = [in_place(c) if isinstance(a, WindowView) else c for a, c in zip(d.args, call, strict=True)]
            with rank_link(ChipLink(KernelComm(comm, shared))):
                run_on_chip(comm, program, *chip_args, config=config, name=d.program)
        else:
            run_on_chip(comm, program, *call, config=config, name=d.program)
        for k in program.output_indices:
            a = d.args[k]
            if isinstance(a, HostTensor) and not isinstance(host_args[a.param], ResidentRef):
                host_args[a.param][a.index].copy_(call[k])  # a later dispatch on this rank reads it
                outs.append((a.param, list(a.index), call[k]))
        order.done(i)
    return outs


def _as_param(t: Any, program: Any, k: int) -> Any:
    """A window view in the shape of parameter ``k`` when only its rank differs (``pld.window(buf, [N])`` passed
    for a ``[1, N]`` parameter, as upstream accepts); otherwise as it is (a mismatch is the chip's error)."""
    shapes = getattr(program, "param_shapes", [])
    want = shapes[k] if k < len(shapes) else None
    if want is not None and tuple(t.shape) != want and math.prod(want) == t.numel():
        return t.view(want)
    return t


def in_place(t: Any) -> Any:
    """A window view as a :class:`~pypto.runtime.tensors.DeviceTensor` on its very bytes: the chip reads and
    writes the shared window region itself (no copy), so the peers see its stores and it sees theirs."""
    import numpy as np
    import torch

    from pypto.runtime.tensors import DeviceTensor

    arr = t.view(torch.int16).numpy().view(np.uint16) if t.dtype == torch.bfloat16 else t.numpy()
    return DeviceTensor(None, tuple(t.shape), t.dtype, arr)


def host_collective(kc: Any, name: str, views: list[Any], extra: dict[str, Any]) -> None:
    """Run ``pld.tensor.<name>`` of a host orchestrator on this rank's window ``views``."""
    opts, nums = extra.get("options", {}), extra.get("numbers", [])
    second = views[1] if len(views) > 1 else None
    if name == "allreduce":
        kc.allreduce(views[0], second, opts.get("op", "Sum"), opts.get("mode", "mesh"), opts.get("core_num", 1))
    elif name == "barrier":
        kc.barrier(views[0] if views else None)
    elif name == "broadcast":
        kc.broadcast(views[0], second, opts.get("root", nums[0] if nums else 0))
    elif name == "allgather":
        kc.allgather(views[0], views[1], None)
    elif name == "reduce_scatter":
        kc.reduce_scatter(views[0], None, opts.get("op", "Sum"))
    elif name == "all_to_all":
        kc.all_to_all(views[0], views[1], None)
    elif name == "all_to_all_v":  # (input, target, signal, send_counts, recv_counts): counts in their windows
        kc.all_to_all_v(views[0], views[1], None, views[3], views[4])
    else:
        raise HostPlanError(f"pld.tensor.{name}: not a host-level collective")
