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

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
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


def core_kind(core_types: Sequence[str], core: int) -> str:
    """The engine of ``core`` in ``metadata.core_types`` ("core" for an index the list does not hold)."""
    return core_types[core] if 0 <= core < len(core_types) else "core"


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
        kind = core_kind(core_types, core)
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
    return joined_samples(core_types, busy, dispatch, end, types, producers, min(r[3] for r in aicore))


def joined_samples(
    core_types: Sequence[str],
    busy: Sequence[tuple[str, int, int]],
    dispatch: Mapping[int, int],
    end: Mapping[int, int],
    types: Mapping[int, Iterable[str]],
    producers: Mapping[int, Sequence[int]],
    lo: int,
) -> list[tuple[int, tuple[int, ...]]]:
    """:func:`overhead_samples` of records already joined per task (the §8 analysis has joined them): each
    row's ``(engine, dispatch, finish)``, each task's dispatch, end, engines and producers (tasks of the
    records only), and the window's first start ``lo``."""
    ready = dict(dispatch)  # without producers: its dispatch
    for t, preds in producers.items():
        ready[t] = max(map(end.__getitem__, preds))
    engines = [e for e in ENGINES if e in core_types]
    cores = {e: core_types.count(e) for e in engines}
    hi = max(end.values())
    times = {lo, hi} | {t for _, a, b in busy for t in (a, b)} | set(ready.values()) | set(dispatch.values())
    # per engine, the [from, to) spans of its busy cores and of its ready, undispatched tasks: how many hold
    # at t is (spans begun by t) - (spans ended by t), two bisections (an empty span never holds)
    busy_at = {e: _Spans([(a, b) for k, a, b in busy if k == e]) for e in ENGINES}
    ready_at = {e: _Spans([(ready[task], dispatch[task]) for task, kinds in types.items() if e in kinds])
                for e in ENGINES}  # fmt: skip
    samples: list[tuple[int, tuple[int, ...]]] = []
    zero = (0,) * len(COUNTERS)  # at the window's end every counter is 0
    present = [(cores[e], busy_at[e].starts, busy_at[e].ends, ready_at[e].starts, ready_at[e].ends)
               if e in cores else None for e in ENGINES]  # fmt: skip
    for t in sorted([x for x in times if lo <= x <= hi]):
        if t == hi:
            samples.append((t, zero))
            continue
        values: list[int] = []  # in COUNTERS order: per engine idle, ready, overhead; then all, has
        all_over = bool(engines)
        has_ready = False
        ready_over = True  # every engine with ready work is in overhead
        for spans in present:
            if spans is None:  # no core of this engine: nothing idle, nothing waiting
                values += (0, 0, 0)
                continue
            n, busy_starts, busy_ends, ready_starts, ready_ends = spans
            idle = n - bisect_right(busy_starts, t) + bisect_right(busy_ends, t)
            waiting = bisect_right(ready_starts, t) - bisect_right(ready_ends, t)
            over = idle > 0 and waiting > 0
            values += (idle, waiting, 1 if over else 0)  # no int() call per engine and sample
            if not over:
                all_over = False
            if waiting > 0:
                has_ready = True
                ready_over = ready_over and over
        values += (1 if all_over else 0, 1 if has_ready and ready_over else 0)
        samples.append((t, tuple(values)))
    return samples


class _Spans:
    """Half-open spans ``[a, b)`` as their sorted starts and sorted ends: ``bisect_right(starts, t) -
    bisect_right(ends, t)`` of them hold ``t`` (``a <= t < b``; an empty span never holds)."""

    def __init__(self, spans: Iterable[tuple[int, int]]):
        kept = [(a, b) for a, b in spans if a < b]
        self.starts = sorted([a for a, _ in kept])  # lists, not generators (a generator is made, resumed, freed)
        self.ends = sorted([b for _, b in kept])


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
