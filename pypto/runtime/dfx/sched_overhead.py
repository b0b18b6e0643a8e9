"""``sched_overhead_analysis`` (runtime-dfx-formats.md §8): the scheduler's overhead in one run, from its
level >= 3 ``chip_swimlane_records.json`` and its ``deps.json`` pairs, as six analyses.

The window is [first start, last end] of the AICore rows (the makespan); every share is a percentage of
it, and times are µs through the records' ``clock_freq_hz``. A task's rows are joined on
``(core_id, reg_task_id)``: its dispatch/start are the earliest of its rows, its end/finish the latest
(without an ``aicpu_tasks`` row, dispatch = start and finish = end).

1. Overhead per engine type: the time an engine has an idle core and a ready, undispatched task, through
   the model of :mod:`.overhead` (ready(T) = the latest end among T's producers, else its dispatch; MIX
   counts for both); ``all_overhead`` every engine at once, ``has_overhead`` every engine that has ready
   work. Verdict on ``has_overhead``: >= 25% scheduler-bound, >= 8% partial, else not.
2. AICore switch: on each core, the gap [prev_end, start] before a task dispatched while the core's
   previous task was still running (dispatch < prev_end); per core count/min/mean/max/total, the total
   split into the part that overlaps its engine's overhead (model of 1) and the independent rest;
   makespan bound = [min over cores of the totals, Σ over engines of each engine's minimum].
3. Head OH per row = max(0, min(start - dispatch, start - prev_end)) (prev_end: the core's previous
   row, else the first term alone); 4. Tail OH per row = max(0, finish - end). P10 P25 P50 P75 P90 P95
   P99 (linear interpolation between the sorted values), Max, Mean, Total.
5. Per scheduler thread: loops (max ``loop_iter``), ns per loop over the thread's span (first phase
   start to last phase end), the time in complete/async_poll/dispatch phases, idle (the span minus the
   union of its outer phases), pop hit rate (Σ pop_hit / Σ (pop_hit + pop_miss)) and the mean/max
   fanout and fanin (distinct ``deps.json`` pairs) of the tasks on its cores.
6. Critical path: from the task with the latest finish, back through the producer with the latest end
   to a task without producers (the root); sched = Σ (start - producer end) + (root start - root
   dispatch), exec = Σ (end - start), other = span - exec - sched with span = last finish - root dispatch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .overhead import COUNTERS, ENGINES, core_kind, joined_samples
from .trace import (
    OUTER_PHASES,
    TraceInputError,
    record_clock_hz,
    record_core_to_thread,
    record_phases,
    record_rows,
    task_label,
)

PERCENTILES = (10, 25, 50, 75, 90, 95, 99)
SCHED_BOUND, PARTIAL = 25.0, 8.0
LOOP_KINDS = ("complete", "async_poll", "dispatch")


@dataclass(slots=True)
class _Task:
    dispatch: int
    start: int
    end: int
    finish: int
    cores: list[int] = field(default_factory=list)


def _check(records: Any) -> None:
    if not isinstance(records, Mapping):
        raise TraceInputError("expected a JSON object with chip_swimlane_level, metadata and aicore_tasks")
    level = records.get("chip_swimlane_level")
    if not isinstance(level, int) or level < 3:
        raise TraceInputError(
            f"chip_swimlane_level is {level!r}; the analysis needs level >= 3 records (AICPU dispatch/finish "
            "and scheduler phases): run with RunConfig(enable_chip_swimlane=3 or 4)"
        )
    try:
        list(records["metadata"]["core_types"])
    except (KeyError, TypeError, ValueError) as e:
        raise TraceInputError(f"metadata.clock_freq_hz and metadata.core_types are required ({e})") from None
    record_clock_hz(records)
    record_core_to_thread(records)
    for key, width in (("aicore_tasks", 5), ("aicpu_tasks", 4)):
        record_rows(records, key, width, required=True)
    record_phases(records, "aicpu_scheduler_phases", ("kind", "start_cycles", "end_cycles"), required=True)
    if not records["aicore_tasks"]:
        raise TraceInputError("'aicore_tasks' is empty: no task ran")


def percentiles(values: Sequence[float]) -> dict[str, float]:
    """P10..P99 (linear interpolation), Max, Mean, Total of ``values`` (all 0 when empty)."""
    a = sorted(values)
    out: dict[str, float] = {}
    for p in PERCENTILES:
        if not a:
            out[f"P{p}"] = 0.0
            continue
        pos = (len(a) - 1) * p / 100
        lo = int(pos)
        hi = min(lo + 1, len(a) - 1)
        out[f"P{p}"] = a[lo] + (a[hi] - a[lo]) * (pos - lo)
    out["Max"] = a[-1] if a else 0.0
    out["Mean"] = sum(a) / len(a) if a else 0.0
    out["Total"] = float(sum(a))
    return out


def _overlap(a: int, b: int, spans: Sequence[tuple[int, int]]) -> int:
    return sum([max(0, min(b, y) - max(a, x)) for x, y in spans])


def _union(spans: Sequence[tuple[int, int]]) -> int:
    total, reach = 0, None
    for a, b in sorted(spans):
        if reach is None or a > reach:
            total += b - a
            reach = b
        elif b > reach:
            total += b - reach
            reach = b
    return total


def analyze(
    records: Mapping[str, Any],
    edges: Sequence[tuple[int, int]],
    block_num: Mapping[int, int] | None = None,
    *,
    trusted: bool = False,
) -> dict[str, Any]:
    """The six analyses as plain data (µs and % of the makespan; see the module doc). ``block_num``: the
    SPMD block count of each raw task id (``deps.json``'s ``block_num``); the window lists each SPMD task
    with its blocks and core rows (a task is every row of its token: its blocks are one task here).
    ``trusted``: the records are :func:`.records.swimlane_records`'s of a run with a task (level >= 3),
    not a file's: their shape is not checked again."""
    if not trusted:
        _check(records)
    meta = records["metadata"]
    freq = float(meta["clock_freq_hz"])
    core_types = [str(t) for t in meta["core_types"]]
    core_to_thread = list(meta.get("core_to_thread") or [])

    def us(cycles: float) -> float:
        return cycles * 1e6 / freq

    aicore, cpu_rows = records["aicore_tasks"], records["aicpu_tasks"]
    if not trusted:  # a file's numbers as ints (a run's records hold ints)
        aicore = [[int(x) for x in r[:5]] for r in aicore]
        cpu_rows = [[int(x) for x in r[:4]] for r in cpu_rows]
    aicpu = {(r[0], r[1]): r for r in cpu_rows}
    rows: list[tuple[int, int, int, int, int, int]] = []  # core, task, dispatch, start, end, finish
    tasks: dict[int, _Task] = {}
    for r in aicore:
        core, raw, reg, start, end = r[0], r[1], r[2], r[3], r[4]
        cpu = aicpu.get((core, reg))
        d, f = (cpu[2], cpu[3]) if cpu is not None else (start, end)
        rows.append((core, raw, d, start, end, f))
        t = tasks.get(raw)
        if t is None:
            tasks[raw] = _Task(d, start, end, f, [core])
            continue
        t.dispatch, t.start = min(t.dispatch, d), min(t.start, start)
        t.end, t.finish = max(t.end, end), max(t.finish, f)
        t.cores.append(core)
    lo = min([r[3] for r in rows])
    hi = max([r[4] for r in rows])
    span = hi - lo

    def share(cycles: float) -> float:
        return 100.0 * cycles / span if span else 0.0

    if not trusted:
        edges = [(int(p), int(s)) for p, s in edges]
    pairs = sorted({(p, s) for p, s in edges if p in tasks and s in tasks and p != s})
    producers: dict[int, list[int]] = {}
    consumers: dict[int, list[int]] = {}
    for p, s in pairs:
        producers.setdefault(s, []).append(p)
        consumers.setdefault(p, []).append(s)
    out: dict[str, Any] = {
        "window": {
            "start_us": 0.0,
            "makespan_us": us(span),
            "tasks": len(tasks),
            "rows": len(rows),
            "edges": len(pairs),
            "clock_freq_hz": freq,
            "spmd": [{"task": raw, "blocks": int(n), "rows": len(tasks[raw].cores)}
                     for raw, n in sorted((block_num or {}).items()) if int(n) > 1 and raw in tasks],
        },  # fmt: skip
    }

    # 1. overhead per engine (the counters of .overhead, integrated over the window)
    # the counters from the rows and tasks joined above (a file's numbers already read as ints)
    kind_of = {c: core_kind(core_types, c) for c in {r[0] for r in rows}}
    samples = joined_samples(
        core_types, [(kind_of[r[0]], r[2], r[5]) for r in rows],
        {raw: t.dispatch for raw, t in tasks.items()}, {raw: t.end for raw, t in tasks.items()},
        {raw: {kind_of[c] for c in t.cores} for raw, t in tasks.items()}, producers, lo,
    )  # fmt: skip
    # each sample holds until the next one (the last, at the window's end, for no time): per overhead
    # counter, the time it is on and, per engine, the spans its overhead is on (one pass per column)
    held = [(t, until, row) for (t, row), (until, _) in zip(samples, samples[1:], strict=False) if until > t]
    totals = {name: sum([b - a for a, b, row in held if row[k]])
              for k, name in enumerate(COUNTERS) if name.endswith("overhead")}  # fmt: skip
    over_spans = {e: [(a, b) for a, b, row in held if row[k]]
                  for e, k in ((e, COUNTERS.index(f"oh_{e}_overhead")) for e in ENGINES)}  # fmt: skip
    engines = [e for e in ENGINES if e in core_types]
    has = share(totals.get("oh_has_overhead", 0))
    out["overhead"] = {
        "engines": {
            e: {
                "cores": core_types.count(e),
                "overhead_us": us(totals.get(f"oh_{e}_overhead", 0)),
                "share": share(totals.get(f"oh_{e}_overhead", 0)),
            }
            for e in engines
        },  # fmt: skip
        "all_overhead_us": us(totals.get("oh_all_overhead", 0)),
        "all_overhead": share(totals.get("oh_all_overhead", 0)),
        "has_overhead_us": us(totals.get("oh_has_overhead", 0)),
        "has_overhead": has,
        "verdict": "scheduler-bound" if has >= SCHED_BOUND else "partial" if has >= PARTIAL else "not scheduler-bound",
    }

    # 2. aicore switch gaps, and 3/4 head and tail overhead per row
    by_core: dict[int, list[tuple[int, int, int, int, int, int]]] = {}
    for row in rows:
        by_core.setdefault(row[0], []).append(row)
    switch: dict[int, dict[str, Any]] = {}
    heads: list[int] = []  # in cycles (µs below)
    tails: list[int] = []
    for core in sorted(by_core):
        kind = core_types[core] if 0 <= core < len(core_types) else "core"
        gaps: list[int] = []
        in_over = 0
        prev_end: int | None = None
        for _, _, d, start, end, f in sorted(by_core[core], key=lambda r: (r[3], r[4], r[1])):
            head = start - d if prev_end is None else min(start - d, start - prev_end)
            heads.append(max(0, head))
            tails.append(max(0, f - end))
            if prev_end is not None and d < prev_end:
                gap = max(0, start - prev_end)
                gaps.append(gap)
                in_over += _overlap(prev_end, prev_end + gap, over_spans.get(kind, []))
            prev_end = end if prev_end is None else max(prev_end, end)
        total = sum(gaps)
        switch[core] = {"type": kind, "count": len(gaps), "min_us": us(min(gaps, default=0)),
                        "mean_us": us(total / len(gaps)) if gaps else 0.0, "max_us": us(max(gaps, default=0)),
                        "total_us": us(total), "overhead_us": us(in_over), "independent_us": us(total - in_over)}  # fmt: skip
    per_engine_min = {
        e: min([s["total_us"] for s in switch.values() if s["type"] == e])
        for e in sorted({s["type"] for s in switch.values()})
    }
    out["switch"] = {
        "cores": switch,
        "bound_us": (min([s["total_us"] for s in switch.values()]), sum(per_engine_min.values())),
    }
    out["head"] = percentiles([c * 1e6 / freq for c in heads])  # us(c) of each, without a call each
    out["tail"] = percentiles([c * 1e6 / freq for c in tails])

    # 5. scheduler threads
    threads: list[dict[str, Any]] = []
    tasks_of: dict[int, list[int]] = {}  # scheduler thread -> the tasks with a row on its cores
    for t, task in tasks.items():
        for thread in {core_to_thread[c] for c in task.cores if 0 <= c < len(core_to_thread)}:
            tasks_of.setdefault(thread, []).append(t)
    for i, phases in enumerate(records["aicpu_scheduler_phases"]):
        mine = sorted(tasks_of.get(i, ()))
        fanout = [len(consumers.get(t, [])) for t in mine]
        fanin = [len(producers.get(t, [])) for t in mine]
        # one pass over the thread's phases: its loops, its outer phases' spans, their time per loop kind and
        # the dispatch phases' pops
        loops: list[int] = []
        spans: list[tuple[int, int]] = []
        in_kind = dict.fromkeys(LOOP_KINDS, 0)
        hit = miss = 0
        for p in phases:
            loops.append(int(p.get("loop_iter", 0)))
            kind = p["kind"]
            if kind in OUTER_PHASES:
                a, b = int(p["start_cycles"]), int(p["end_cycles"])
                spans.append((a, b))
                if kind in in_kind:
                    in_kind[kind] += b - a
            if kind == "dispatch":
                hit += int(p.get("pop_hit", 0))
                miss += int(p.get("pop_miss", 0))
        info: dict[str, Any] = {"loops": max(loops, default=0), "tasks": len(mine)}
        if spans:
            first = min([a for a, _ in spans])
            last = max([b for _, b in spans])
            busy = _union(spans)
        else:
            first = last = busy = 0
        info["span_us"] = us(last - first)
        info["ns_per_loop"] = us(last - first) * 1e3 / info["loops"] if info["loops"] else 0.0
        for kind in LOOP_KINDS:
            info[f"{kind}_us"] = us(in_kind[kind])
        info["idle_us"] = us(last - first - busy)
        info["pop_hit"], info["pop_miss"] = hit, miss
        info["pop_hit_rate"] = 100.0 * hit / (hit + miss) if hit + miss else 0.0
        info["fanout_mean"] = sum(fanout) / len(fanout) if fanout else 0.0
        info["fanout_max"] = max(fanout, default=0)
        info["fanin_mean"] = sum(fanin) / len(fanin) if fanin else 0.0
        info["fanin_max"] = max(fanin, default=0)
        threads.append(info)
    out["threads"] = threads

    # 6. critical path
    last_task = max(tasks, key=lambda t: (tasks[t].finish, tasks[t].end, -t))
    path = [last_task]
    sched = execute = 0
    seen = {last_task}
    node = last_task
    while True:
        execute += tasks[node].end - tasks[node].start
        preds = [p for p in producers.get(node, []) if p not in seen]
        if not preds:
            sched += tasks[node].start - tasks[node].dispatch
            break
        pred = max(preds, key=lambda p: (tasks[p].end, -p))
        sched += tasks[node].start - tasks[pred].end
        seen.add(pred)
        path.append(pred)
        node = pred
    path.reverse()
    cp_span = tasks[last_task].finish - tasks[path[0]].dispatch
    other = cp_span - execute - sched
    out["critical_path"] = {
        "tasks": [task_label(t) for t in path], "span_us": us(cp_span),
        "sched_us": us(sched), "exec_us": us(execute), "other_us": us(other),
        "sched": share(sched), "exec": share(execute), "other": share(other),
    }  # fmt: skip
    return out


def _f(x: float) -> str:
    return f"{x:.3f}"


def format_report(a: Mapping[str, Any]) -> str:
    """The analyses of :func:`analyze` as the text report (deterministic)."""
    w = a["window"]
    mk = w["makespan_us"]

    def pct(us: float) -> str:
        return f"{100.0 * us / mk:.1f}%" if mk else "0.0%"

    lines = [
        "SCHED OVERHEAD ANALYSIS",
        f"window: makespan {_f(mk)} us (first start -> last end), {w['tasks']} tasks, {w['rows']} core rows, "
        f"{w['edges']} dependency pairs, clock {w['clock_freq_hz']:g} Hz",
        *([("spmd: " + ", ".join(f"{task_label(x['task'])} x{x['blocks']} blocks ({x['rows']} core rows)"
                                  for x in w["spmd"]))] if w.get("spmd") else []),
        "",
        "1. OVERHEAD PER ENGINE (idle core + ready, undispatched task)",
    ]
    o = a["overhead"]
    for e, v in o["engines"].items():
        lines.append(f"  {e:<14} {v['cores']} cores  overhead {_f(v['overhead_us'])} us  {v['share']:.1f}%")
    lines.append(f"  {'all_overhead':<14} {_f(o['all_overhead_us'])} us  {o['all_overhead']:.1f}%")
    lines.append(f"  {'has_overhead':<14} {_f(o['has_overhead_us'])} us  {o['has_overhead']:.1f}%")
    lines.append(
        f"  verdict: {o['verdict']} (has_overhead >= {SCHED_BOUND:g}%: scheduler-bound, >= {PARTIAL:g}%: partial)"
    )
    lines += ["", "2. AICORE SWITCH GAPS (prev_end -> start, task dispatched before prev_end)"]
    lines.append(f"  {'core':<8} {'type':<4} {'n':>3} {'min_us':>10} {'mean_us':>10} {'max_us':>10} {'total_us':>10} "
                 f"{'overhead':>10} {'indep':>10}")  # fmt: skip
    for core, s in a["switch"]["cores"].items():
        lines.append(f"  {core:<8} {s['type']:<4} {s['count']:>3} {_f(s['min_us']):>10} {_f(s['mean_us']):>10} "
                     f"{_f(s['max_us']):>10} {_f(s['total_us']):>10} {_f(s['overhead_us']):>10} "
                     f"{_f(s['independent_us']):>10}")  # fmt: skip
    blo, bhi = a["switch"]["bound_us"]
    lines.append(f"  makespan bound: [{_f(blo)}, {_f(bhi)}] us ({pct(blo)} .. {pct(bhi)})")
    for n, key, title in ((3, "head", "HEAD OH = max(0, min(start-dispatch, start-prev_end))"),
                          (4, "tail", "TAIL OH = max(0, finish-end)")):  # fmt: skip
        lines += ["", f"{n}. {title}, us"]
        stats = a[key]
        lines.append(
            "  " + "  ".join(f"{k}={_f(v)}" for k, v in stats.items()) + f"  ({pct(stats['Total'])} of makespan)"
        )
    lines += ["", "5. SCHEDULER THREADS"]
    lines.append(f"  {'thread':<7} {'loops':>6} {'ns/loop':>10} {'complete':>10} {'async_poll':>10} {'dispatch':>10} "
                 f"{'idle':>10} {'pop_hit':>8} {'fanout':>11} {'fanin':>11}")  # fmt: skip
    for i, t in enumerate(a["threads"]):
        lines.append(f"  {i:<7} {t['loops']:>6} {t['ns_per_loop']:>10.1f} {_f(t['complete_us']):>10} "
                     f"{_f(t['async_poll_us']):>10} {_f(t['dispatch_us']):>10} {_f(t['idle_us']):>10} "
                     f"{t['pop_hit_rate']:>7.1f}% {t['fanout_mean']:>6.2f}/{t['fanout_max']:<4} "
                     f"{t['fanin_mean']:>6.2f}/{t['fanin_max']:<4}")  # fmt: skip
    lines.append("  (phase totals and idle in us; fanout/fanin: mean/max over the thread's tasks)")
    c = a["critical_path"]
    lines += ["", "6. CRITICAL PATH", f"  path: {' -> '.join(c['tasks'])}  span {_f(c['span_us'])} us"]
    for k in ("sched", "exec", "other"):
        of_span = 100.0 * c[f"{k}_us"] / c["span_us"] if c["span_us"] else 0.0
        lines.append(f"  {k:<6} {_f(c[f'{k}_us']):>10} us  {c[k]:.1f}% of makespan  {of_span:.1f}% of the path's span")
    return "\n".join(lines) + "\n"
