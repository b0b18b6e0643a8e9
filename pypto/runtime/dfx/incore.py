"""``dfx_outputs/incore/<task_id>_<kernel>/``: the clean in-core trace, the instruction metrics and the
bottleneck table of every kernel run, from the device model (no simulator, no CANN).

``RunConfig(enable_incore_trace=True)`` writes, per task part (one kernel run on one core):

- ``trace.clean.json``: the core's pipe lanes as a Chrome trace (:mod:`.cleantrace`'s rules; the SCALAR
  lane only with ``RunConfig(extra={"incore_keep_scalar": True})``), each set_flag -> wait_flag pair
  one flow arrow from the instruction before the set_flag on its pipe to the one after the wait on
  its pipe (the interpreter pairs them: :attr:`~pypto.device.interpreter.timing.Timeline.flag_pairs`);
- ``instr_metrics.json`` (:func:`instr_metrics`): one record per executed instruction (sync entries
  included, so the per-pipe sums are the interpreter's busy cycles and the PMU's PIPE_UTILIZATION
  counters) and ``bottleneck`` (:mod:`.bottleneck`);
- ``bottleneck.txt``: the table as text, also logged (``pypto`` logger, INFO) and appended to
  :meth:`RunResult.summary` through ``RunResult.notes``.

``bytes`` is what a transfer moves (its record's ``<src>-><dst> <N>B``), null for other instructions;
``vector_util`` is defined for VECTOR compute on a ``rows x cols`` tile: the valid bytes over the
256-byte vector repeats they occupy, a row at a time (a2a3-costs.md §1: repeat = 256 B), i.e.
``cols*size / (256 * ceil(cols*size / 256))``; null elsewhere.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from .base import Collector, json_text, register, remove_superseded, when_written, write_artefact
from .bottleneck import SYNC_KINDS, bottleneck, bottleneck_text
from .cleantrace import Slice, clean_trace
from .pmu import dtype_bytes, part_rows
from .trace import trace_json

INCORE_DIR = "incore"
VECTOR_REPEAT_BYTES = 256
"""a2a3-costs.md §1: one vector repeat covers 256 B."""

COLUMN_TYPES: dict[str, str] = {
    "index": "int", "pipe": "enum", "start_cycle": "cycles", "end_cycle": "cycles", "cycles": "cycles",
    "op": "str", "pto_loc": "loc", "dsl_loc": "loc", "bytes": "bytes", "vector_util": "ratio",
}  # fmt: skip

_TRANSFER = re.compile(r"(\d+)B$")
_TILE = re.compile(r"^(\d+)x(\d+) (\w+)$")
log = logging.getLogger("pypto.incore")


def moved_bytes(r: Any) -> int | None:
    """Bytes a transfer record moved, else None."""
    if r.kind != "transfer":
        return None
    m = _TRANSFER.search(r.detail)
    return int(m.group(1)) if m else None


def vector_util(r: Any) -> float | None:
    """Lane utilisation of a VECTOR compute record (module docstring), else None."""
    if r.kind != "compute" or r.pipe != "VECTOR":
        return None
    m = _TILE.match(r.detail)
    if m is None:
        return None
    row = int(m.group(2)) * dtype_bytes(m.group(3))
    if row <= 0:
        return None
    return round(row / (VECTOR_REPEAT_BYTES * -(-row // VECTOR_REPEAT_BYTES)), 4)


def instruction_rows(records: list[Any]) -> list[dict[str, Any]]:
    """``instr_metrics.json["instructions"]`` of a kernel run's records."""
    return [
        {"index": r.index, "pipe": r.pipe, "start_cycle": r.start, "end_cycle": r.end, "cycles": r.end - r.start,
         "op": r.op, "pto_loc": r.pto_loc, "dsl_loc": r.dsl_loc, "bytes": moved_bytes(r), "vector_util": vector_util(r)}
        for r in records
    ]  # fmt: skip


def core_name(core_type: str, core_id: int) -> str:
    """``AIV0``, ``AIC24``."""
    return f"{core_type.upper()}{core_id}"


def instr_metrics(kernel_run: Any, kernel: str, task_id: int, core: str, core_type: str) -> dict[str, Any]:
    """``instr_metrics.json`` of one kernel run (the shared contract's shape)."""
    records = kernel_run.records
    return {
        "version": 1,
        "kernel": kernel,
        "task_id": int(task_id),
        "core": core,
        "core_type": core_type,
        "clock_mhz": float(kernel_run.clock_hz) / 1e6,
        "column_types": dict(COLUMN_TYPES),
        "instructions": instruction_rows(records),
        "bottleneck": bottleneck(records, kernel_run.timeline.flag_pairs, kernel_run.cycles),
    }


def flow_anchors(records: list[Any], flag_pairs: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """(producer, consumer, label) record indices per flag pair: the last non-sync record on the
    set_flag's queue before it, the first on the wait's queue after it (-1 when there is none)."""
    last: dict[str, int] = {}
    before: list[int] = []
    for i, r in enumerate(records):
        before.append(last.get(r.hw_pipe, -1))
        if r.kind not in SYNC_KINDS:
            last[r.hw_pipe] = i
    nxt: dict[str, int] = {}
    after = [-1] * len(records)
    for i in range(len(records) - 1, -1, -1):
        r = records[i]
        after[i] = nxt.get(r.hw_pipe, -1)
        if r.kind not in SYNC_KINDS:
            nxt[r.hw_pipe] = i
    return [(before[s], after[w], records[s].detail) for s, w in flag_pairs]


def incore_trace(kernel_run: Any, kernel: str, task_id: int, core: str, keep_scalar: bool = False) -> dict[str, Any]:
    """``trace.clean.json`` of one kernel run: one process (the core), its pipe lanes, the flag arrows."""
    records = kernel_run.records
    slices = [
        Slice(r.index, 0, r.pipe, r.instr, r.start, r.end,
              {"index": r.index, "op": r.op, "cycles": r.end - r.start, "pto_loc": r.pto_loc, "dsl_loc": r.dsl_loc,
               "detail": r.detail})
        for r in records
        if r.kind not in SYNC_KINDS
    ]  # fmt: skip
    pairs = flow_anchors(records, kernel_run.timeline.flag_pairs)
    return clean_trace(
        [f"{core} {kernel} (task {task_id})"],
        slices,
        pairs,
        float(kernel_run.clock_hz) / 1e6,
        keep_scalar,
        {"kernel": kernel, "task_id": int(task_id), "core": core, "source": "pypto device model"},
    )


def part_dir(out_dir: Path, task_id: int, kernel: str, block: int | None = None) -> Path:
    """``<dfx_outputs>/incore/<task_id>_<kernel>/`` (``..._b<block>/`` for each block of an SPMD task)."""
    return out_dir / INCORE_DIR / (f"{task_id}_{kernel}" if block is None else f"{task_id}_{kernel}_b{block}")


def write_part(out: Path, metrics: dict[str, Any], trace: dict[str, Any]) -> tuple[list[Path], str]:
    """Write the three files of one part into ``out``; (paths, bottleneck text)."""
    out.mkdir(parents=True, exist_ok=True)
    title = (f"bottleneck of {metrics['kernel']} (task {metrics['task_id']}, {metrics['core']}, "
             f"{metrics['clock_mhz']:g} MHz)")  # fmt: skip
    text = bottleneck_text(metrics["bottleneck"], title)
    paths = [
        write_artefact(out / "trace.clean.json", trace_json(trace)),
        write_artefact(out / "instr_metrics.json", json_text(metrics) + "\n"),
        write_artefact(out / "bottleneck.txt", text),
    ]
    return paths, text


def write_incore(result: Any, out_dir: Path, keep_scalar: bool = False) -> tuple[list[Path], list[str]]:
    """Every task part's files under ``out_dir/incore``; (paths, bottleneck texts). Once they are written,
    the part folders of an earlier run that this run has no part for are removed (:func:`_is_part_folder`)."""
    paths: list[Path] = []
    texts: list[str] = []
    folders: set[str] = set()
    for rec, core_id, kernel, run, block in part_rows(result):
        core_type = result.core_types[core_id]
        core = core_name(core_type, core_id)
        metrics = instr_metrics(run, kernel, rec.task_id, core, core_type)
        trace = incore_trace(run, kernel, rec.task_id, core, keep_scalar)
        spmd_block = block if len(rec.blocks) > 1 else None
        folder = part_dir(out_dir, rec.task_id, kernel, spmd_block)
        folders.add(folder.name)
        written, text = write_part(folder, metrics, trace)
        paths += written
        texts.append(text)
    when_written(lambda: remove_superseded(out_dir / INCORE_DIR, folders, _is_part_folder))
    return paths, texts


PART_FILES = frozenset({"trace.clean.json", "instr_metrics.json", "bottleneck.txt"})
"""What :func:`write_part` writes into a part folder."""

PART_NAME = re.compile(r"\d+_[A-Za-z_]\w*")
"""A part folder's name: ``<task_id>_<kernel>`` (``_b<block>`` for an SPMD block)."""


def _is_part_folder(path: Path) -> bool:
    """Whether ``path`` is a run's part folder: named as a part and holding a part's files only (an earlier run's,
    for a task part the current run did not have, reads as the current run's; anything else is the user's)."""
    if not PART_NAME.fullmatch(path.name) or not path.is_dir():
        return False
    files = list(path.iterdir())
    return bool(files) and all(f.name in PART_FILES and f.is_file() for f in files)


@register
class IncoreCollector(Collector):
    """``enable_incore_trace``: ``incore/<task_id>_<kernel>[_b<block>]/{trace.clean.json,instr_metrics.json,bottleneck.txt}``."""

    FLAG = "enable_incore_trace"
    OUTPUTS = (INCORE_DIR,)

    def finish(self, result: Any) -> list[Path]:
        extra = getattr(getattr(self, "config", None), "extra", None) or {}
        paths, texts = write_incore(result, self.out_dir, bool(extra.get("incore_keep_scalar", False)))
        for text in texts:
            log.info("%s", text.rstrip())
        notes = getattr(result, "notes", None)
        if isinstance(notes, list):
            notes.extend(t.rstrip() for t in texts)
        return paths
