"""``chip_swimlane_records.json`` (runtime-dfx-formats.md §2), raw and in cycles.

Levels are cumulative: 1 AICore start/end (``aicore_tasks``); 2 adds AICPU dispatch/finish
(``aicpu_tasks``). Levels 3 and 4 add the AICPU scheduler and orchestrator phases, which need the
AICPU model the simulated chip does not have yet: a run asked for them records level 2 and says so
in the file's level.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from .base import Collector, json_text, register, write_artefact
from .trace import chrome_trace, trace_json

RECORDED_LEVEL = 2
"""The highest swimlane level the simulated chip records."""


def swimlane_records(result: Any, level: int = 2) -> dict[str, Any]:
    """The records of a run at ``level`` (capped at :data:`RECORDED_LEVEL`): ``aicore_tasks`` rows
    ``[core_id, task_token_raw, reg_task_id, start, end, receive_to_start]`` and, from level 2,
    ``aicpu_tasks`` rows ``[core_id, reg_task_id, dispatch, finish]``; ``metadata.clock_freq_hz`` is the
    target clock the cycles count."""
    level = min(max(level, 1), RECORDED_LEVEL)
    aicore: list[list[int]] = []
    aicpu: list[list[int]] = []
    for t in result.tasks:
        for core in t.core_ids:
            aicore.append([core, t.task_id, t.task_id, t.start, t.end, t.start - t.dispatch])
            aicpu.append([core, t.task_id, t.dispatch, t.finish])
    records: dict[str, Any] = {
        "chip_swimlane_level": level,
        "metadata": {
            "clock_freq_hz": result.clock_hz,
            "num_cores": len(result.core_types),
            "core_types": result.core_types,
        },
        "aicore_tasks": aicore,
    }
    if level >= 2:
        records["aicpu_tasks"] = aicpu
    return records


def write_swimlane(result: Any, path: Path, level: int = 2) -> Path:
    """Write :func:`swimlane_records` as JSON, atomically; returns the path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_artefact(path, json_text(swimlane_records(result, level)))
    return path


def write_merged_trace(result: Any, out_dir: Path, level: int = 2, stamp: str | None = None) -> Path:
    """``merged_swimlane_<YYYYMMDD_HHMMSS>.json``: the run's Chrome trace (:mod:`.trace`), labelled with
    its kernel names and its task dependencies as flows (upstream's simulator cannot write it: it lacks
    the task metadata)."""
    names = {t.task_id: t.func_name for t in result.tasks}
    edges = [(d, t.task_id) for t in result.tasks for d in sorted(t.deps)]
    trace = chrome_trace(swimlane_records(result, level), names, edges)
    path = out_dir / f"merged_swimlane_{stamp or datetime.now().strftime('%Y%m%d_%H%M%S')}.json"
    out_dir.mkdir(parents=True, exist_ok=True)
    write_artefact(path, trace_json(trace))
    return path


@register
class SwimlaneCollector(Collector):
    """``enable_chip_swimlane``: ``chip_swimlane_records.json`` at the run's level and the merged trace."""

    FLAG = "enable_chip_swimlane"

    def finish(self, result: Any) -> list[Path]:
        records = write_swimlane(result, self.out_dir / "chip_swimlane_records.json", self.level)
        return [records, write_merged_trace(result, self.out_dir, self.level)]
