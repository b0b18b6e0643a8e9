"""The artefacts of a multi-chip run: per-rank events and one merged cross-rank Chrome trace.

``dfx_outputs/rank{r}/comm_events.json`` holds rank ``r``'s events (cycles
of its own clock; every rank starts at cycle 0, the common clock);
``dfx_outputs/rank{r}/d{k}/`` is the ``k``-th chip dispatch of rank ``r`` in the run (upstream's
layout): ``dispatch_program.json`` (``{"program": "<next_levels name>"}``) and that run's L2 files.
``dfx_outputs/merged_comm_trace.json`` is a Chrome trace (``chrome://tracing``,
Perfetto): one process per rank, times in microseconds of the target's clock,
and a flow arrow for every transfer, signal, put and get between ranks (the
arrival side of a one-sided notify or put, and the source side of a get, is an
instant slice on the other rank). ``dfx_outputs/cross_rank_report.html`` shows
the same trace as a page (:mod:`.report`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pypto.runtime.dfx.base import DFX_DIR, json_text, remove_superseded, write_artefact

from .report import write_cross_rank_report

MERGED_TRACE = "merged_comm_trace.json"
RANK_EVENTS = "comm_events.json"
DISPATCH_PROGRAM = "dispatch_program.json"
"""Names the ``next_levels/<program>`` a dispatch ran (upstream's L3 marker: func ids are per program)."""


def rank_dir(out_dir: Path, rank: int, dispatch: int | None = None) -> Path:
    """``<out>/dfx_outputs/rank{r}``, or with ``dispatch`` = k its ``d{k}`` (the k-th chip dispatch of
    the rank in this run), created."""
    d = Path(out_dir) / DFX_DIR / f"rank{rank}"
    d = d if dispatch is None else d / f"d{dispatch}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def remove_stale_ranks(out_dir: Path, dispatches: dict[int, int]) -> list[Path]:
    """Remove what an earlier run left in ``<out>/dfx_outputs``: the ``rank{r}`` of a rank this run did not have,
    and a ``rank{r}/d{k}`` past its rank's ``dispatches[r]`` chip dispatches so far (the cross-rank trace and
    page never show them). Only a folder holding the file that marks it as ours goes (``comm_events.json``,
    ``dispatch_program.json``): :func:`pypto.runtime.dfx.base.remove_superseded`. The removed folders."""
    root = Path(out_dir) / DFX_DIR
    removed = remove_superseded(root, {f"rank{r}" for r in dispatches}, lambda p: _marked(p, _RANK, RANK_EVENTS))
    for rank, count in sorted(dispatches.items()):
        keep = {f"d{k}" for k in range(count)}
        removed += remove_superseded(root / f"rank{rank}", keep, lambda p: _marked(p, _DISPATCH, DISPATCH_PROGRAM))
    return removed


_RANK, _DISPATCH = re.compile(r"rank\d+"), re.compile(r"d\d+")
"""The names of a rank's folder and of one of its dispatches'."""


def _marked(path: Path, name: re.Pattern[str], marker: str) -> bool:
    """Whether ``path`` is a folder named as ``name`` says that holds ``marker`` (a run wrote it)."""
    return name.fullmatch(path.name) is not None and (path / marker).is_file()


def write_rank_events(out_dir: Path, rank: int, device_id: int, clock: int, events: list[dict[str, Any]]) -> Path:
    """Write one rank's ``comm_events.json``."""
    body = {"rank": rank, "device_id": device_id, "final_cycles": clock, "events": events}
    return write_artefact(rank_dir(out_dir, rank) / RANK_EVENTS, json_text(body) + "\n")


def merged_trace(ranks: Sequence[dict[str, Any]], clock_hz: float) -> dict[str, Any]:
    """The Chrome trace of all ranks (``ranks``: ``{"rank", "device_id", "events"}`` each)."""
    us = 1e6 / clock_hz

    def ts(cycles: float) -> float:
        return round(cycles * us, 4)

    out: list[dict[str, Any]] = []
    for r in sorted(ranks, key=lambda x: x["rank"]):
        out.append({"ph": "M", "name": "process_name", "pid": r["rank"], "tid": 0,
                    "args": {"name": f"rank {r['rank']} (device d{r['device_id']})", "device_id": r["device_id"]}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": r["rank"], "tid": 0,
                    "args": {"sort_index": r["rank"]}})
        out.append({"ph": "M", "name": "thread_name", "pid": r["rank"], "tid": 0, "args": {"name": "comm"}})
        out.append({"ph": "M", "name": "thread_name", "pid": r["rank"], "tid": 1, "args": {"name": "arrivals"}})
    for r in ranks:
        pid = r["rank"]
        for ev in r["events"]:
            args = {k: v for k, v in ev.items() if k in ("task", "peer", "bytes")}
            args["cycles"] = [ev["start"], ev["end"]]
            dur = max(ts(ev["end"]) - ts(ev["start"]), 0.001)
            out.append({"ph": "X", "name": ev["name"], "cat": ev["cat"], "pid": pid, "tid": 0,
                        "ts": ts(ev["start"]), "dur": round(dur, 4), "args": args})
            for fl in ev.get("flows", ()):
                at = ev["start"] if fl["ph"] == "s" else ev["end"]
                out.append(_flow(fl["ph"], fl["id"], pid, 0, ts(at)))
            rem = ev.get("remote")
            if rem:
                out.append({"ph": "X", "name": rem["name"], "cat": "arrival", "pid": rem["rank"], "tid": 1,
                            "ts": ts(rem["ts"]), "dur": 0.001, "args": {"from_rank": pid}})
                out.append(_flow(rem.get("ph", "f"), rem["id"], rem["rank"], 1, ts(rem["ts"])))
    out.sort(key=lambda e: (e["ph"] != "M", e.get("ts", 0), e["pid"], e["tid"], e["ph"], str(e.get("id", "")),
                            e["name"]))
    return {"traceEvents": out, "displayTimeUnit": "ns",
            "otherData": {"clock_hz": clock_hz, "aligned": "every rank's clock starts at cycle 0"}}


def _flow(ph: str, fid: str, pid: int, tid: int, t: float) -> dict[str, Any]:
    ev = {"ph": ph, "id": fid, "name": "link", "cat": "link", "pid": pid, "tid": tid, "ts": t}
    if ph == "f":
        ev["bp"] = "e"
    return ev


def write_merged_trace(out_dir: Path, ranks: Sequence[dict[str, Any]], clock_hz: float) -> Path:
    """Write ``dfx_outputs/merged_comm_trace.json`` (deterministic bytes for the same events) and its
    page, ``dfx_outputs/cross_rank_report.html`` (:mod:`.report`)."""
    d = Path(out_dir) / DFX_DIR
    d.mkdir(parents=True, exist_ok=True)
    trace = merged_trace(ranks, clock_hz)
    path = write_artefact(d / MERGED_TRACE, json.dumps(trace, indent=1) + "\n")
    write_cross_rank_report(Path(out_dir), trace)
    return path
