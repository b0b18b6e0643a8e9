"""The scheduler-overhead model of runtime-dfx-formats.md §8 as Chrome trace counter tracks on pid 2
(``swimlane_converter --overhead``), from level-2 swimlane records and ``deps.json``.

Per task T (its rows joined on ``(core_id, reg_task_id)``): its type is ``aic`` or ``aiv`` from the
``core_types`` of its cores (a task on both is ``mix`` and counts for both), dispatch(T) its earliest
dispatch, and ready(T) the latest end among its producers (``deps.json`` pairs, producers in the record
set), else dispatch(T). A core is busy from a task's dispatch to its finish (start to end without
``aicpu_tasks``). Counters, each a step function sampled at every time where one may change, over the
window [first start, last end] (times in µs as the merged trace's, §2's reader):

- ``oh_<type>_idle``: the idle cores of the type; ``oh_<type>_ready``: its tasks that are ready
  (ready(T) <= t) and not yet dispatched (t < dispatch(T));
- ``oh_<type>_overhead``: 1 when the type has an idle core and a ready task, else 0;
- ``oh_all_overhead``: 1 when every engine (core type present) is in overhead;
- ``oh_has_overhead``: 1 when some engine has ready work and every engine that has is in overhead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .trace import TraceInputError

ENGINES = ("aic", "aiv")
COUNTERS = tuple(f"oh_{e}_{k}" for e in ENGINES for k in ("idle", "ready", "overhead")) + (
    "oh_all_overhead",
    "oh_has_overhead",
)
PID = 2
"""The AICPU Scheduler process, where the counters go (the model doc says 3; the converter writes 2)."""


def overhead_series(records: Mapping[str, Any], edges: Sequence[tuple[int, int]]) -> list[tuple[int, dict[str, int]]]:
    """``[(cycles, {counter: value})]``: the counters from each time on, for every time where one changes
    (the first sample holds them all; the last, at the window's end, sets every counter to 0)."""
    series: list[tuple[int, dict[str, int]]] = []
    last: tuple[int, ...] | None = None
    for t, row in overhead_samples(records, edges):
        if last is None:
            series.append((t, dict(zip(COUNTERS, row, strict=True))))
        elif row != last:
            series.append((t, {k: v for k, v, was in zip(COUNTERS, row, last, strict=True) if v != was}))
        else:
            continue
        last = row
    return series


def overhead_samples(records: Mapping[str, Any], edges: Sequence[tuple[int, int]]) -> list[tuple[int, tuple[int, ...]]]:
    """``[(cycles, values)]``: the counters (``values`` in :data:`COUNTERS` order) at every time where one
    may change, sorted, over the window [first start, last end]; each holds until the next time (the last,
    at the window's end, is all 0). :func:`overhead_series` keeps the changes; the §8 analysis integrates
    them as they are (no dict per change)."""
    try:
        core_types = [str(t) for t in records["metadata"]["core_types"]]
        aicore = [list(r) for r in records.get("aicore_tasks", [])]
        aicpu = {(r[0], r[1]): r for r in records.get("aicpu_tasks", [])}
    except (KeyError, TypeError, IndexError) as e:
        raise TraceInputError(f"metadata.core_types and aicore_tasks rows are required ({e})") from None
    if not aicore:
        return []
    dispatch: dict[int, int] = {}
    end: dict[int, int] = {}
    types: dict[int, set[str]] = {}
    busy: list[tuple[str, int, int]] = []  # (engine, from, to)
    for row in aicore:
        core, raw, reg, start, stop = row[:5]
        kind = core_types[core] if 0 <= core < len(core_types) else "core"
        cpu = aicpu.get((core, reg))
        d, f = (cpu[2], cpu[3]) if cpu is not None else (start, stop)
        dispatch[raw] = min(dispatch.get(raw, d), d)
        end[raw] = max(end.get(raw, stop), stop)
        types.setdefault(raw, set()).add(kind)
        busy.append((kind, d, f))
    producers: dict[int, list[int]] = {}
    for pred, succ in edges:
        if pred in end and succ in end:
            producers.setdefault(succ, []).append(pred)
    ready = {t: max((end[p] for p in producers.get(t, [])), default=dispatch[t]) for t in dispatch}
    engines = [e for e in ENGINES if e in core_types]
    cores = {e: core_types.count(e) for e in engines}
    lo = min(r[3] for r in aicore)
    hi = max(end.values())
    # per engine, the [from, to) spans of its busy cores and of its ready, undispatched tasks, as the change
    # each span makes to its count where it begins (+1) and ends (-1) (an empty span never holds): one
    # sweep over the sorted times sums them (the spans holding t are those begun and not ended by t)
    width = 2 * len(ENGINES)
    steps: dict[int, list[int]] = {}
    slot = {e: 2 * i for i, e in enumerate(ENGINES) if e in cores}
    for kind, a, b in busy:
        k = slot.get(kind)
        if k is not None and a < b:
            _step(steps, a, b, k, width)
    for task, kinds in types.items():
        a, b = ready[task], dispatch[task]
        if a < b:
            for e in kinds:
                k = slot.get(e)
                if k is not None:
                    _step(steps, a, b, k + 1, width)
    times = {lo, hi} | {t for _, a, b in busy for t in (a, b)} | set(ready.values()) | set(dispatch.values())
    samples: list[tuple[int, tuple[int, ...]]] = []
    zero = (0,) * len(COUNTERS)  # at the window's end every counter is 0
    present = [(2 * i, cores[e]) if e in cores else None for i, e in enumerate(ENGINES)]
    held = [0] * width  # per engine: its busy cores, its ready undispatched tasks
    for t in sorted(times):
        step = steps.get(t)
        if step is not None:
            held = [h + d for h, d in zip(held, step, strict=True)]
        if t < lo:
            continue
        if t >= hi:
            samples.append((t, zero))
            break
        values: list[int] = []  # in COUNTERS order: per engine idle, ready, overhead; then all, has
        all_over = bool(engines)
        has_ready = False
        ready_over = True  # every engine with ready work is in overhead
        for engine in present:
            if engine is None:  # no core of this engine: nothing idle, nothing waiting
                values += (0, 0, 0)
                continue
            k, n = engine
            idle = n - held[k]
            waiting = held[k + 1]
            over = idle > 0 and waiting > 0
            values += (idle, waiting, int(over))
            if not over:
                all_over = False
            if waiting > 0:
                has_ready = True
                ready_over = ready_over and over
        values += (int(all_over), int(has_ready and ready_over))
        samples.append((t, tuple(values)))
    return samples


def _step(steps: dict[int, list[int]], a: int, b: int, k: int, width: int) -> None:
    """Count the span ``[a, b)`` in column ``k`` of ``steps``: +1 from ``a``, -1 from ``b``."""
    row = steps.get(a)
    if row is None:
        row = steps[a] = [0] * width
    row[k] += 1
    row = steps.get(b)
    if row is None:
        row = steps[b] = [0] * width
    row[k] -= 1


def overhead_events(records: Mapping[str, Any], edges: Sequence[tuple[int, int]]) -> list[dict[str, Any]]:
    """The counter (``ph: "C"``) events of :func:`overhead_series` on pid 2, ``ts`` in µs from the
    records' base (the smallest non-zero cycle value, as the merged trace's bars)."""
    freq = float(records["metadata"]["clock_freq_hz"])
    rows = [c for r in records.get("aicore_tasks", []) for c in r[3:5]]
    rows += [c for r in records.get("aicpu_tasks", []) for c in r[2:4]]
    base = min((c for c in rows if c), default=0)
    events: list[dict[str, Any]] = []
    for t, values in overhead_series(records, edges):
        ts = round((t - base) * 1e6 / freq, 6) if t else 0.0
        for name in COUNTERS:
            if name in values:
                events.append({"ph": "C", "pid": PID, "name": name, "ts": ts, "args": {"value": values[name]}})
    return events
