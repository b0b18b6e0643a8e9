"""A ``kernel_engine="cpp"`` run replayed in one C++ call.

A ``"cpp"`` run whose every kernel signature already has its cycles (no interpreter run), that checked
no In argument and collected no DFX artefact, is recorded as a plan: its kernel launches in the
order they ran (each library's ``kernel_entry``, its int64 argument slots, its block) and its result
(the task records, cycles, problems and notes, which depend only on the kernel signatures). A later
run of the same prepared program on the same argument arrays (by identity: the plan keeps them alive)
with the same shapes, dtypes and scalar values (device-resident tensors: ``ChipWorker`` DeviceTensors;
a host tensor is copied anew every run), under the same run options, does not walk the orchestration or
the scheduler again: it zero-fills the run's ``pl.create_tensor`` buffers (as a fresh run creates them;
the plan moved them into one block on huge pages, :func:`_relocate`) and makes one ctypes call, ``pto_cpu_run_calls``, which launches every kernel in the recorded order. The
result is the recorded one with this run's outputs and engine report (``EngineReport.replayed``).

A ``ChipWorker`` launch of a registered program that was replayed is remembered
(:mod:`.fast_launch`): its next launch goes straight to the plan when nothing the look-ups of
:func:`~.run.run` read changed. For that the target file is among the plan's stamps (watched as the
kernels' files), so a replay notices an edited target without the ``stat`` of ``resolve_target``.

A plan is not made (the run goes through the scheduler every time) when the orchestration reads a
tensor element (``pl.tensor.read``: the task graph may depend on data), or when a kernel argument is
an array that is neither a parameter nor a ``pl.create_tensor`` buffer (e.g. a padded copy of a window,
which a fresh run copies again). A plan is dropped when a kernel's ``.cpp``, ``pto_cpu.hpp`` or the target
file changed since it was recorded (their stamps are checked after an inotify event in their directories,
:mod:`.file_watch`, or every replay without a watch). A plan keeps the arrays it ran on alive, so an
address it names cannot be reused by another tensor while it exists; at most :data:`MAX_PLANS` are kept
per program.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pypto.target.model import loaded_key

from . import file_watch
from .cpp_engine import EngineReport, EngineRun, KernelEngineError, _header
from .huge_pages import huge_page_bytes


@dataclass
class RunPlan:
    """A recorded ``"cpp"`` run (see the module doc)."""

    n: int
    entries: Any
    """ctypes array of the launches' ``kernel_entry`` addresses."""
    args: Any
    """ctypes array of pointers to each launch's slots (into ``_slots``)."""
    blocks: Any
    """ctypes int64 array: (block index, block count) per launch."""
    runner: Any
    """``pto_cpu_run_calls`` of one of the libraries."""
    labels: list[str]
    kernels: list[Any]
    """The launches' :class:`~.cpp_engine._Kernel` (for their error message)."""
    zero: list[np.ndarray]
    """The run's ``pl.create_tensor`` buffers, zero-filled before every replay."""
    stamps: tuple[tuple[str, int, int], ...]
    """The kernels' ``.cpp``, the header (:func:`_stamp_files`) and the target file: (path, mtime, size) when
    recorded (the target's as it was loaded)."""
    result: Any
    """The recorded :class:`~.run.RunResult`."""
    report: EngineReport
    """The engine report of a replay (its times are set per replay)."""
    returns: list[tuple[str, Any]]
    """Each return value: ("param", index of the argument), ("array", a device array) or ("value", v)."""
    element_types: list[Any]
    """Each return value's element type (a device array is returned as a torch tensor of it)."""
    checked: int | None = None
    """The :func:`.file_watch.generation` when the stamps were last found unchanged (None: check every replay)."""
    target_stamped: bool = False
    """Whether the target file is among :attr:`stamps` (a launch may then skip ``resolve_target``)."""
    dropped: bool = False
    """Set when the plan is no longer kept (stale, or beyond :data:`MAX_PLANS`): no launch may use it."""
    _keep: list[Any] = field(default_factory=list)


def plan_key(config: Any, target: Any, dev_args: Sequence[Any]) -> tuple[Any, ...] | None:
    """What a plan is valid for: the run options and each argument's identity, shape and dtype (an
    array: the plan keeps it alive, so no other array takes its ``id`` and its data stays where the plan's
    slots point) or value (a scalar); None when the run cannot use one (not ``"cpp"``,
    ``check_inputs=True``)."""
    if config.kernel_engine != "cpp" or config.check_inputs is True:
        return None
    key = (
        id(target),  # the plan's result holds the target
        config.check_races,
        config.aicpu_thread_num,
        config.ring_task_window,
        config.ring_heap,
        config.ring_dep_pool,
        bool(config.recompile_kernels),
        config.check_inputs,
        *[(id(a), a.shape, a.dtype) if isinstance(a, np.ndarray) else ("s", type(a), a) for a in dev_args],
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _reads_tensors(module: Any) -> bool:
    """Whether the program's host code reads a tensor element (its task graph may depend on data)."""
    return any(op.name == "pl.tensor.read" for op in module.walk())


def _stamp_files(kernels: Sequence[Any]) -> tuple[str, ...]:
    """The kernels' ``.cpp`` (each once) and the header, whose stamps say whether a plan is stale."""
    seen = {id(k): k for k in kernels}
    return (*(str(k.source) for k in seen.values()), str(_header()))


def _stamps(files: Sequence[str]) -> tuple[Any, ...]:
    """Each file's (path, mtime, size)."""
    out = []
    for f in files:
        st = os.stat(f)
        out.append((f, st.st_mtime_ns, st.st_size))
    return tuple(out)


def _owner(addr: int, nbytes: int, ranges: Sequence[tuple[int, int, Any]]) -> Any:
    for lo, hi, what in ranges:
        if lo <= addr and addr + nbytes <= hi:
            return what
    return None


def _address(a: np.ndarray) -> int:
    """The address of ``a``'s first byte."""
    return int(a.__array_interface__["data"][0])


def _relocate(
    created: Sequence[np.ndarray], calls: Sequence[Any]
) -> tuple[np.ndarray, dict[int, np.ndarray], list[list[int]]]:
    """The run's ``pl.create_tensor`` buffers copied into one block on huge pages (:mod:`.huge_pages`), which a
    replay zero-fills in one call and whose pages stay in one TLB entry: (the block, each moved buffer's new
    array by the ``id`` of the old one, each launch's slots with the addresses into the old buffers moved)."""
    offsets, total = [], 0
    for a in created:
        offsets.append(total)
        total += -(-a.nbytes // 64) * 64  # each buffer 64-byte aligned, as the allocator gave it
    block = huge_page_bytes(total) if total else np.zeros(0, np.uint8)
    moved: dict[int, np.ndarray] = {}
    ranges: list[tuple[int, int, int]] = []
    for a, off in zip(created, offsets, strict=True):
        new = block[off : off + a.nbytes].view(a.dtype).reshape(a.shape)
        new[...] = a
        moved[id(a)] = new
        if a.nbytes:
            ranges.append((_address(a), _address(a) + a.nbytes, _address(new)))
    slots = []
    for call in calls:
        out = list(call.slots)
        for i, v in enumerate(call.values):
            if isinstance(v, np.ndarray) and v.nbytes:  # slot i is v's address
                for lo, hi, new_lo in ranges:
                    if lo <= out[i] < hi:
                        out[i] += new_lo - lo
                        break
        slots.append(out)
    return block, moved, slots


MAX_PLANS = 8
"""Plans kept per prepared program (the oldest is dropped): each holds its arrays alive."""


def record(
    run: EngineRun, graph: Any, dev_args: Sequence[Any], result: Any, copied: int, element_types: Sequence[Any]
) -> RunPlan | None:
    """The plan of a finished ``"cpp"`` run, or None when it cannot be replayed (see the module doc).

    Only a run whose tensors are all device-resident (``copied == 0``: DeviceTensors, no host copies)
    is recorded: a host tensor is copied to a new array every run, so its address never repeats."""
    report = run.report
    if copied or report.interpreter_runs or report.input_checks or not run.calls or report.differing:
        return None
    engine = run.engine
    reads = engine.plan_blockers.get(id(result.module))
    if reads is None:
        reads = engine.plan_blockers[id(result.module)] = _reads_tensors(result.module)
    if reads:
        return None
    ranges: list[tuple[int, int, Any]] = []
    for a in dev_args:
        if isinstance(a, np.ndarray) and a.nbytes:
            lo = _address(a)
            ranges.append((lo, lo + a.nbytes, "param"))
    created = [b for b in graph.buffers if b.origin.startswith("tensor.create")]
    for b in created:
        lo = _address(b.array)
        ranges.append((lo, lo + b.array.nbytes, "created"))
    for call in run.calls:
        for v in call.values:
            if isinstance(v, np.ndarray) and v.nbytes:
                if _owner(_address(v), v.nbytes, ranges) is None:
                    return None  # an array a fresh run makes again (a padded window copy, ...)
    block, moved, call_slots = _relocate([b.array for b in created], run.calls)
    by_id = {id(a): i for i, a in enumerate(dev_args) if isinstance(a, np.ndarray)}
    returns: list[tuple[str, Any]] = []
    from .orchestration import DeviceBuffer

    for v in graph.returns:
        if isinstance(v, DeviceBuffer):
            if id(v.array) in by_id:
                returns.append(("param", by_id[id(v.array)]))
            else:
                returns.append(("array", moved.get(id(v.array), v.array)))
        else:
            returns.append(("value", v))
    n = len(run.calls)
    slot_arrays = [(ctypes.c_int64 * max(1, len(s)))(*s) for s in call_slots]
    args = (ctypes.c_void_p * n)(*[ctypes.addressof(a) for a in slot_arrays])
    entries = (ctypes.c_void_p * n)(*[c.kernel.entry_address for c in run.calls])
    blocks = (ctypes.c_int64 * (2 * n))(*[x for c in run.calls for x in c.block])
    kernels = [c.kernel for c in run.calls]
    runner = getattr(kernels[0].library.lib, "pto_cpu_run_calls", None)
    if runner is None:  # a cached build of an older header (recompile_kernels=False)
        return None
    runner.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    runner.restype = ctypes.c_int64
    files = _stamp_files(kernels)
    target_stamp = loaded_key(result.target)  # the target file's stamp when it was loaded
    watched = {os.path.dirname(f) for f in files} | ({os.path.dirname(target_stamp[0])} if target_stamp else set())
    checked = file_watch.watch(sorted(watched))  # watched before the stamps are taken
    stamps = _stamps(files) + ((target_stamp,) if target_stamp else ())
    return RunPlan(
        n=n,
        entries=entries,
        args=args,
        blocks=blocks,
        runner=runner,
        labels=[c.label for c in run.calls],
        kernels=kernels,
        zero=[block] if block.nbytes else [],
        checked=checked,
        stamps=stamps,
        target_stamped=target_stamp is not None,
        result=result,
        report=EngineReport(
            report.engine, libraries=dict(report.libraries), notes=list(report.notes), cpp_calls=n, replayed=True
        ),
        returns=returns,
        element_types=list(element_types),
        _keep=[slot_arrays, [c.values for c in run.calls], list(dev_args), block],
    )


def keep(plans: dict[tuple[Any, ...], RunPlan], key: tuple[Any, ...], plan: RunPlan) -> None:
    """Store ``plan`` under ``key``, dropping the oldest plan beyond :data:`MAX_PLANS`."""
    plans[key] = plan
    while len(plans) > MAX_PLANS:
        plans.pop(next(iter(plans))).dropped = True


class _Last(threading.local):
    wanted = False
    replay: tuple[Any, ...] | None = None


LAST = _Last()
"""While ``wanted`` (set by :mod:`.fast_launch` around a launch), this thread's last replay from
:func:`try_replay`: (prepared, target, key, plan)."""


def replay_kept(engine: Any, key: tuple[Any, ...], plan: RunPlan, args: Sequence[Any], copied: int) -> Any:
    """:func:`replay` of ``engine``'s plan under ``key``; a stale plan is dropped (None: run the task graph)."""
    result = replay(plan, args, copied)
    if result is None:
        plan.dropped = True
        if engine.plans.get(key) is plan:
            del engine.plans[key]
    return result


def try_replay(prepared: Any, target: Any, args: Sequence[Any], dev_args: Sequence[Any], copied: int, config: Any) -> Any:
    """The RunResult of this run replayed from a recorded plan of ``prepared`` (see the module doc), or None
    when there is none for these arguments and options (or it is stale, then dropped): the caller runs the
    task graph. The caller has checked that no DFX flag is on."""
    from .cpp_engine import _ENGINES

    engine = _ENGINES.get(id(prepared))
    if engine is None or not engine.plans or engine.out_dir is not prepared.out_dir:
        return None
    key = plan_key(config, target, dev_args)
    plan = engine.plans.get(key) if key is not None else None
    if plan is None:
        return None
    result = replay_kept(engine, key, plan, args, copied)
    if result is not None and LAST.wanted:
        LAST.replay = (prepared, target, key, plan)
    return result


def _clone(obj: Any) -> Any:
    """A shallow copy of a dataclass instance (its fields' values shared), without calling its ``__init__``."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    return new


def replay(plan: RunPlan, args: Sequence[Any], copied: int) -> Any | None:
    """Run ``plan`` on this run's arguments; its RunResult, or None when the plan is stale (a kernel's
    ``.cpp`` or the header changed: the caller runs the task graph instead)."""
    seen = file_watch.generation()
    if seen is None or seen != plan.checked:  # a file in a watched directory changed (or no watch): stat them
        for path, mtime, size in plan.stamps:
            try:
                st = os.stat(path)
            except OSError:
                return None
            if st.st_mtime_ns != mtime or st.st_size != size:
                return None
        plan.checked = seen
    for a in plan.zero:
        a.fill(0)
    t0, c0 = time.perf_counter(), time.thread_time()
    failed = plan.runner(plan.n, plan.entries, plan.args, plan.blocks)
    seconds, cpu_seconds = time.perf_counter() - t0, time.thread_time() - c0
    if failed >= 0:
        try:
            plan.kernels[failed].raise_error()
        except KernelEngineError as e:
            raise KernelEngineError(f"{plan.labels[failed]}: {e}") from None
        raise KernelEngineError(f"{plan.labels[failed]}: the compiled kernel stopped")
    report: EngineReport = _clone(plan.report)
    report.libraries, report.notes, report.diffs = dict(report.libraries), list(report.notes), []
    report.cpp_seconds, report.cpp_cpu_seconds = seconds, cpu_seconds
    result = _clone(plan.result)
    result.races, result.problems, result.kernel_engine = list(result.races), list(result.problems), report
    result.host_copy_bytes, result.dfx_outputs, result.profile = copied, {}, None
    for note in report.notes:
        print(f"[kernel_engine] {note}", file=sys.stderr)
    for r in result.races:
        print(f"[race] {r.message()}", file=sys.stderr)
    if plan.returns:
        outs = [_returned(plan, i, args) for i in range(len(plan.returns))]
        result.outputs = outs[0] if len(outs) == 1 else tuple(outs)
    else:
        result.outputs = None
    return result


def _returned(plan: RunPlan, i: int, args: Sequence[Any]) -> Any:
    """Return value ``i`` of a replayed run: the caller's argument, a device array as torch, or a value."""
    kind, v = plan.returns[i]
    if kind == "param":
        return args[v]
    if kind == "array":
        from .tensors import device_to_torch

        return device_to_torch(v, plan.element_types[i] if i < len(plan.element_types) else None)
    return v
