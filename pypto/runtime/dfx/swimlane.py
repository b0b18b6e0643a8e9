"""``chip_swimlane_records.json`` (runtime-dfx-formats.md §2), raw and in cycles.

Levels are cumulative: 1 AICore start/end (``aicore_tasks``); 2 adds AICPU dispatch/finish
(``aicpu_tasks``); 3 adds the AICPU scheduler threads' phases (``aicpu_scheduler_phases``, one list
per thread) and ``metadata.core_to_thread``; 4 adds the orchestrator's submits
(``aicpu_orchestrator_phases``). They come from the AICPU model of :mod:`pypto.runtime.scheduler`,
which runs the same way at every level: collection costs no simulated cycle.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from .base import (
    Collector,
    across_runs,
    json_text,
    kept_across_runs,
    kernel_func_ids,
    register,
    remove_superseded,
    when_written,
    write_artefact,
)
from .deps import kernel_slots, write_name_map
from .records import records_fingerprint, records_for_json, swimlane_records
from .run_report import write_run_report
from .trace import DepsFacts, chrome_trace_text


def write_swimlane(result: Any, path: Path, level: int = 2) -> Path:
    """Write :func:`swimlane_records` as JSON, atomically; returns the path. The text is an earlier run's when
    its records were the same (:func:`.base.across_runs`)."""
    key = records_fingerprint(result, level)
    text = across_runs(
        (path, "records"), key, lambda: json_text(records_for_json(result, level)), keep=kept_across_runs(result)
    )
    write_artefact(path, text)
    return path


STAMPED_TRACE = re.compile(r"merged_swimlane_\d{8}_\d{6}\.json")
"""The name of a run's merged trace (its time stamp: upstream's ``-o`` name); ``merged_swimlane.json``, the
converter's own default name, is a user's file and not one of them."""


def _is_stamped_trace(path: Path) -> bool:
    return STAMPED_TRACE.fullmatch(path.name) is not None and path.is_file()


def write_merged_trace(result: Any, out_dir: Path, level: int = 2, stamp: str | None = None) -> Path:
    """``merged_swimlane_<YYYYMMDD_HHMMSS>.json``: the run's Chrome trace (:mod:`.trace`), labelled with
    its kernel names and its task dependencies as flows (upstream's simulator cannot write it: it lacks
    the task metadata). Once it is written, an earlier run's time-stamped trace in ``out_dir`` is removed:
    the records, the report and the other artefacts beside it are this run's (a run replaces them), so an
    older trace there would be stale, and a folder run every second would fill with them. The text is an
    earlier run's when its records, names and edges were the same (:func:`.base.across_runs`)."""
    names = {t.task_id: t.func_name + ("_spmd" if t.block_num > 1 else "") for t in result.tasks}
    records, kernel_names = swimlane_records(result, level), _mixed_kernel_names(result)
    deps = _deps_facts(result)  # what the run's deps.json says: its pairs in order, the func_ids, the block counts
    text = across_runs(
        (out_dir, "merged_trace"), (records_fingerprint(result, level), names, deps.edges, kernel_names,
                                    deps.kernel_ids, deps.block_nums),
        lambda: chrome_trace_text(records, names, trusted=True, kernel_names=kernel_names, deps=deps),
        keep=kept_across_runs(result),
    )  # fmt: skip
    path = out_dir / f"merged_swimlane_{stamp or datetime.now().strftime('%Y%m%d_%H%M%S')}.json"
    write_artefact(path, text)
    when_written(lambda: remove_superseded(out_dir, {path.name}, _is_stamped_trace))
    return path


def _deps_facts(result: Any) -> DepsFacts:
    """The run's :class:`~.trace.DepsFacts`: its distinct (pred, succ) pairs in ``deps.json``'s order (each task's
    edges in the order the task graph found them: a bar's ``fanin-hint`` lists its producers as upstream's
    converter reading that file does), each task's ``kernel_ids`` and ``block_num`` (no name map: the run's own
    names label the bars). A result without its task graph: its tasks' dependencies in id order."""
    tasks = getattr(getattr(result, "graph", None), "tasks", None) or ()
    if not tasks:
        return DepsFacts([(d, t.task_id) for t in result.tasks for d in sorted(t.deps)], {}, {}, {})
    ids = kernel_func_ids(result.module)
    pairs = list(dict.fromkeys((e.pred, t.id) for t in tasks for e in t.dep_edges))
    return DepsFacts(pairs, {t.id: kernel_slots(t, ids) for t in tasks}, {t.id: t.block_num for t in tasks}, {})


def _mixed_kernel_names(result: Any) -> dict[tuple[int, str], str]:
    """A mixed task's kernel per core type, ``(task, "aic" | "aiv") -> name`` (§3: its AIC bar is its AIC
    kernel's, its AIV bars its first AIV kernel's, as deps.json's slots name them); a single-kernel task is
    named by its function."""
    out: dict[tuple[int, str], str] = {}
    for t in getattr(getattr(result, "graph", None), "tasks", None) or ():
        if len({p.core_type for p in t.parts}) < 2:
            continue
        spmd = "_spmd" if t.block_num > 1 else ""
        for p in t.parts:  # AIC first, then the AIVs: the first of a kind names its bars
            out.setdefault((t.id, p.core_type), p.func_name + spmd)
    return out


@register
class SwimlaneCollector(Collector):
    """``enable_chip_swimlane``: ``chip_swimlane_records.json`` at the run's level, the merged trace, the
    name map (§1: written when the swimlane or dep_gen is on) and ``run_report.html`` (:mod:`.run_report`, with the PMU rows when ``enable_pmu`` is on too, the in-core pipe lanes when ``enable_incore_trace`` is)."""

    FLAG = "enable_chip_swimlane"
    OUTPUTS = ("chip_swimlane_records.json", "merged_swimlane_*.json", "name_map_*.json", "run_report.html")

    def finish(self, result: Any) -> list[Path]:
        records = write_swimlane(result, self.out_dir / "chip_swimlane_records.json", self.level)
        merged = write_merged_trace(result, self.out_dir, self.level)
        config = getattr(self, "config", None)
        pmu_event = int(getattr(config, "enable_pmu", 0) or 0)
        incore = bool(getattr(config, "enable_incore_trace", False))
        report = write_run_report(result, self.out_dir, pmu_event, self.level, incore)
        return [records, merged, write_name_map(result, self.out_dir), report]
