"""``chip_swimlane_records.json``'s content (runtime-dfx-formats.md §2) built from a run: the one
builder the swimlane file, the merged trace and the run report read."""

from __future__ import annotations

import pickle
from typing import Any

from .base import RECORDED_LEVEL, per_run
from .jsonenc import Encoded, plain_json


def swimlane_records(result: Any, level: int = 2) -> dict[str, Any]:
    """The records of a run at ``level`` (capped at :data:`RECORDED_LEVEL`): ``aicore_tasks`` rows
    ``[core_id, task_token_raw, reg_task_id, start, end, receive_to_start]`` (one per block of a task and
    core it ran on; ``reg_task_id`` is the core's dispatch number, 1, 2, ..., the key the rows join on)
    and, from level 2,
    ``aicpu_tasks`` rows ``[core_id, reg_task_id, dispatch, finish]``, from level 3 the scheduler phases
    and ``metadata.core_to_thread``, at level 4 the orchestrator phases; ``metadata.clock_freq_hz`` is
    the target clock the cycles count. Built once per run for the swimlane file, the merged trace and the
    run report (:func:`.base.per_run`)."""
    level = min(max(level, 1), RECORDED_LEVEL)
    return per_run(result, ("swimlane_records", level), lambda: _records(result, level))


def _records(result: Any, level: int) -> dict[str, Any]:
    aicore: list[list[int]] = []
    aicpu: list[list[int]] = []
    for t in result.tasks:
        for b in t.blocks:  # an SPMD task: one row per block and core, all with the task's token
            for core, reg in zip(b.core_ids, b.reg_ids, strict=True):
                aicore.append([core, t.task_id, reg, b.start, b.end, b.start - b.dispatch])
                aicpu.append([core, reg, b.dispatch, b.finish])
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
    if level >= 3:
        records["metadata"]["core_to_thread"] = list(getattr(result, "core_to_thread", []))
        records["aicpu_scheduler_phases"] = [[dict(p) for p in thread] for thread in result.scheduler_phases]
    if level >= 4:
        records["aicpu_orchestrator_phases"] = [[dict(p) for p in thread] for thread in result.orchestrator_phases]
    return records


def records_fingerprint(result: Any, level: int = 2) -> bytes:
    """:func:`swimlane_records` as its pickle, once per run: the part of every :func:`.base.across_runs` key
    that is the records (the records file's, the merged trace's and the run report's)."""
    records = swimlane_records(result, level)
    return per_run(result, ("records_fingerprint", records["chip_swimlane_level"]),
                   lambda: pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL))  # fmt: skip


def phase_texts(result: Any, level: int = 2) -> list[list[str]]:
    """Each scheduler phase of :func:`swimlane_records` (level >= 3; none below) as its compact JSON, per
    thread: the records file's thread lines (:func:`records_for_json`)."""
    records = swimlane_records(result, level)
    return [[plain_json(p) for p in thread] for thread in records.get("aicpu_scheduler_phases", [])]


def records_for_json(result: Any, level: int = 2) -> dict[str, Any]:
    """:func:`swimlane_records` as ``json_text`` writes it, its task rows and each scheduler thread's phases
    already encoded (:func:`.jsonenc.plain_json`; the phases are :func:`phase_texts`, one line a thread)."""
    records = swimlane_records(result, level)
    out = {**records, "aicore_tasks": [Encoded(plain_json(r)) for r in records["aicore_tasks"]]}
    if "aicpu_tasks" in records:
        out["aicpu_tasks"] = [Encoded(plain_json(r)) for r in records["aicpu_tasks"]]
    if "aicpu_scheduler_phases" in records:
        out["aicpu_scheduler_phases"] = [Encoded("[" + ",".join(texts) + "]") for texts in phase_texts(result, level)]
    return out
