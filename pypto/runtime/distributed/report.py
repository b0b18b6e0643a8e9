"""``dfx_outputs/cross_rank_report.html``: the merged cross-rank trace as one self-contained page on the
:mod:`pypto.reports` shell: a lane per rank (its events) and one below it (what landed on it from
peers), on the common clock, and an arrow for every flow of the merged trace (:mod:`.trace`).

The model is read from the merged Chrome trace itself, so the page and ``merged_comm_trace.json`` show
the same events; same trace, same bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pypto.reports import asset, render_report
from pypto.runtime.dfx.base import DFX_DIR, write_artefact

REPORT_NAME = "cross_rank_report.html"
PACKAGE = "pypto.runtime.distributed"
ASSETS = ("cross_rank.html", "cross_rank.css", "cross_rank.js")


def report_model(trace: dict[str, Any]) -> dict[str, Any]:
    """The page's data from a merged trace (:func:`.trace.merged_trace`): ranks with their slices (cycles),
    and flows paired by id (source and destination rank, lane and cycle)."""
    evs = trace["traceEvents"]
    clock_hz = float(trace["otherData"]["clock_hz"])
    ranks: dict[int, dict[str, Any]] = {}
    for e in evs:
        if e["ph"] == "M" and e["name"] == "process_name":
            ranks[e["pid"]] = {"rank": e["pid"], "device_id": e["args"]["device_id"], "slices": []}

    def cyc(us: float) -> int:
        return round(us * clock_hz / 1e6)

    for e in evs:
        if e["ph"] == "X":
            start = e.get("args", {}).get("cycles", [cyc(e["ts"]), cyc(e["ts"])])
            ranks[e["pid"]]["slices"].append({"name": e["name"], "cat": e["cat"], "row": e["tid"],
                                              "start": start[0], "end": start[1],
                                              "task": e.get("args", {}).get("task", "")})
    ends = {e["id"]: e for e in evs if e["ph"] == "f"}
    flows = [{"id": e["id"], "src": {"rank": e["pid"], "row": e["tid"], "t": cyc(e["ts"])},
              "dst": {"rank": ends[e["id"]]["pid"], "row": ends[e["id"]]["tid"], "t": cyc(ends[e["id"]]["ts"])}}
             for e in evs if e["ph"] == "s" and e["id"] in ends]
    total = max([s["end"] for r in ranks.values() for s in r["slices"]] + [1])
    return {"title": "Cross-rank trace", "ranks": [ranks[k] for k in sorted(ranks)], "flows": flows,
            "total_cycles": total, "clock_hz": clock_hz}


def render_cross_rank_report(model: dict[str, Any]) -> str:
    """The self-contained page of a :func:`report_model`."""
    html, css, js = (asset(PACKAGE, name) for name in ASSETS)
    subtitle = f"{len(model['ranks'])} ranks \u00b7 {len(model['flows'])} flows \u00b7 {model['total_cycles']} cycles"
    return render_report(model["title"], model, body=html, styles=[css], scripts=[js], subtitle=subtitle)


def write_cross_rank_report(out_dir: Path, trace: dict[str, Any]) -> Path:
    """``<out_dir>/dfx_outputs/cross_rank_report.html`` and the run's ``dfx_outputs/run_report.html`` (its
    "Cross-rank trace" section), atomically; returns the first's path."""
    path = Path(out_dir) / DFX_DIR / REPORT_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    model = report_model(trace)
    write_run_report_of_ranks(Path(out_dir) / DFX_DIR, model)
    return write_artefact(path, render_cross_rank_report(model))


def write_run_report_of_ranks(dfx_dir: Path, model: dict[str, Any], target: str = "") -> Path:
    """``<dfx_dir>/run_report.html`` of a multi-chip run: the run report page (the runtime DFX one) with the
    merged cross-rank trace as its "Cross-rank trace" section. Its single-chip sections are empty: each
    rank's chip runs have their own reports in ``rank{r}/d{k}/run_report.html`` (when the swimlane is on)."""
    from types import SimpleNamespace

    from pypto.runtime.dfx.run_report import render_run_report
    from pypto.runtime.dfx.run_report import report_model as run_model

    run = SimpleNamespace(tasks=[], core_types={}, target_name=target or f"{len(model['ranks'])} ranks",
                          clock_hz=int(model["clock_hz"]), total_cycles=int(model["total_cycles"]), graph=None)
    page = run_model(run, cross_rank=model)
    page["title"] = "Run report (multi-chip)"
    return write_artefact(dfx_dir / "run_report.html", render_run_report(page))
