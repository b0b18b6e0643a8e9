"""``python -m pypto.tools.scope_stats_plot SCOPE_STATS_JSONL [-o OUT.html]``: the report of a
``scope_stats.jsonl`` (runtime-dfx-formats.md §7), ``scope_stats.html`` next to the input by default.

It pairs each ``end`` record with the latest open ``begin`` of the same ``(ring, site)`` and computes,
per pair and per ring resource R (``task_window``, ``heap``, ``dep_pool``):

- high water   = end.R_end - begin.R_start (the risk metric),
- live at exit = end.R_end - end.R_start,
- alloc        = end.R_end - begin.R_end (what the scope added);

``tensormap`` is one global count, shown as live entries (end.tensormap) only. Pairs are numbered
(the scope index, x of the charts) in the order they end. The page (the ``pypto.reports`` shell, no
network) has a Top Peaks table, one row per (resource, ring) seen plus one tensormap row, sorted by
use% = peak / capacity (the file's ``*_max``), then one panel per row with an SVG chart of high water
and live at exit and one of alloc per scope. Heap is in MiB. A version-5 file's heap values wrap
(upstream's note), so its heap rows are left out and the page says so.

Exit codes: 0 written (its path printed), 1 a bad input or I/O failure (one line
``scope_stats_plot: error: <file>[:<line>]: <what>``), 2 argument errors. Same input, same bytes.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pypto.reports import render_report
from pypto.reports.cli import ReportError, output_path, report_main, write_report
from pypto.utils.cli import check_output_not_input

PROG = "scope_stats_plot"
OUTPUT_NAME = "scope_stats.html"
RESOURCES = ("task_window", "heap", "dep_pool")
META_KEYS = ("version", "fatal", "dropped", "total", "task_window_max", "heap_max", "dep_pool_max", "tensormap_max")
RECORD_KEYS = (
    "site",
    "phase",
    "depth",
    "ring",
    *(f"{r}_{e}" for r in RESOURCES for e in ("start", "end")),
    "tensormap",
)
MIB = 1024 * 1024


class ScopeStatsError(ReportError):
    """A bad scope_stats.jsonl or an I/O failure."""


# ---- reading -------------------------------------------------------------------


def load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(metadata, records) of a scope_stats.jsonl; a ScopeStatsError names the file, line and what was expected."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ScopeStatsError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ScopeStatsError(f"{path}: cannot read: {e}") from e
    rows: list[tuple[int, Any]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            raise ScopeStatsError(f"{path}:{n}: not JSON ({e.msg}); expected one JSON object per line") from None
    if not rows:
        raise ScopeStatsError(f"{path}: empty; expected a metadata line then scope records")
    n, meta = rows[0]
    missing = [k for k in META_KEYS if not isinstance(meta, dict) or k not in meta]
    if missing:
        raise ScopeStatsError(f"{path}:{n}: the metadata line lacks {', '.join(missing)}")
    if meta["version"] not in (5, 6):
        raise ScopeStatsError(f"{path}:{n}: version {meta['version']!r}; expected 6 (or 5)")
    for k in ("task_window_max", "heap_max", "dep_pool_max"):
        if not isinstance(meta[k], list) or not all(isinstance(v, int) for v in meta[k]):
            raise ScopeStatsError(f"{path}:{n}: {k} must be a list of ints (one per ring)")
    if type(meta["tensormap_max"]) is not int or meta["tensormap_max"] < 0:
        raise ScopeStatsError(f"{path}:{n}: tensormap_max must be an integer >= 0, not {meta['tensormap_max']!r}")
    records = []
    for n, rec in rows[1:]:
        missing = [k for k in RECORD_KEYS if not isinstance(rec, dict) or k not in rec]
        if missing:
            raise ScopeStatsError(f"{path}:{n}: a scope record lacks {', '.join(missing)}")
        if rec["phase"] not in ("begin", "end"):
            raise ScopeStatsError(f"{path}:{n}: phase {rec['phase']!r}; expected 'begin' or 'end'")
        bad = [k for k in RECORD_KEYS[2:] if not isinstance(rec[k], int) or isinstance(rec[k], bool)]
        if bad:
            raise ScopeStatsError(f"{path}:{n}: {', '.join(bad)} must be integers")
        if not isinstance(rec["site"], str):
            raise ScopeStatsError(f"{path}:{n}: site {rec['site']!r} must be a string (file:line)")
        if rec["ring"] < 0:
            raise ScopeStatsError(f"{path}:{n}: ring {rec['ring']} must be >= 0")
        negative = [f"{k} {rec[k]}" for k in RECORD_KEYS[2:] if rec[k] < 0]
        if negative:  # counts and sizes: a negative one would be drawn far off its chart
            raise ScopeStatsError(f"{path}:{n}: {', '.join(negative)}; expected counts >= 0")
        records.append({**rec, "line": n})
    return meta, records


def pair(records: Sequence[dict[str, Any]], where: str = "") -> tuple[list[dict[str, Any]], int]:
    """(pairs in end order, begins left open): each ``end`` with the latest open ``begin`` of its (ring, site)."""
    open_: dict[tuple[int, str], list[dict[str, Any]]] = {}
    pairs: list[dict[str, Any]] = []
    for rec in records:
        key = (rec["ring"], rec["site"])
        if rec["phase"] == "begin":
            open_.setdefault(key, []).append(rec)
            continue
        stack = open_.get(key)
        if not stack:
            raise ScopeStatsError(
                f"{where}:{rec.get('line', '?')}: an 'end' of {rec['site']} (ring {rec['ring']}) with no open 'begin'"
            )
        b = stack.pop()
        p: dict[str, Any] = {"index": len(pairs), "site": rec["site"], "ring": rec["ring"], "depth": rec["depth"]}
        for r in RESOURCES:
            p[r] = {
                "high_water": rec[f"{r}_end"] - b[f"{r}_start"],
                "live": rec[f"{r}_end"] - rec[f"{r}_start"],
                "alloc": rec[f"{r}_end"] - b[f"{r}_end"],
            }
        p["tensormap"] = {"live": rec["tensormap"]}
        pairs.append(p)
    return pairs, sum(len(s) for s in open_.values())


def peaks(meta: dict[str, Any], pairs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Top Peaks rows, highest use% first: per (resource, ring) the peak high water (tensormap: live
    entries), the largest live at exit and alloc, the capacity, use% and the peak's scope."""
    rows: list[dict[str, Any]] = []
    resources = [r for r in RESOURCES if not (r == "heap" and meta["version"] == 5)]
    for r in resources:
        for ring in sorted({p["ring"] for p in pairs}):
            mine = [p for p in pairs if p["ring"] == ring]
            top = max(mine, key=lambda p: (p[r]["high_water"], -p["index"]))
            caps = meta[f"{r}_max"]
            cap = caps[ring] if ring < len(caps) else 0
            peak = top[r]["high_water"]
            rows.append({
                "resource": r, "ring": ring, "metric": "high water", "peak": peak,
                "live_max": max(p[r]["live"] for p in mine), "alloc_max": max(p[r]["alloc"] for p in mine),
                "cap": cap, "use": round(100 * peak / cap, 2) if cap else None,
                "scope": top["index"], "site": top["site"], "scopes": len(mine),
            })  # fmt: skip
    if pairs:
        top = max(pairs, key=lambda p: (p["tensormap"]["live"], -p["index"]))
        cap = meta["tensormap_max"]
        peak = top["tensormap"]["live"]
        rows.append({
            "resource": "tensormap", "ring": None, "context_ring": top["ring"], "metric": "live entries",
            "peak": peak, "live_max": peak, "alloc_max": None, "cap": cap,
            "use": round(100 * peak / cap, 2) if cap else None, "scope": top["index"], "site": top["site"],
            "scopes": len(pairs),
        })  # fmt: skip
    order = {r: i for i, r in enumerate((*RESOURCES, "tensormap"))}
    rows.sort(key=lambda x: (-(x["use"] or 0), order[x["resource"]], x["ring"] or 0))
    return rows


# ---- the page --------------------------------------------------------------------


def _fmt(resource: str, v: int | None) -> str:
    if v is None:
        return "—"
    return f"{v / MIB:.4f} MiB" if resource == "heap" else str(v)


def _chart(series: Sequence[tuple[str, str, list[int]]], resource: str, label: str) -> str:
    """An inline SVG line chart: x the scope index, y from 1.1 x the lowest value (0 unless one is
    negative) to 1.1 x the peak."""
    w, h, ml, mr, mt, mb = 560, 150, 64, 12, 10, 24
    n = max(len(s[2]) for s in series)
    top = max([max(s[2], default=0) for s in series] + [0])
    low = min([min(s[2], default=0) for s in series] + [0])  # a scope that frees more than it allocates
    ymax = top * 1.1 if top or low else 1
    ymin = low * 1.1
    pw, ph = w - ml - mr, h - mt - mb

    def x(i: int) -> float:
        return ml + (pw * i / (n - 1) if n > 1 else pw / 2)

    def y(v: int) -> float:
        return mt + ph - ph * (v - ymin) / (ymax - ymin)

    parts = [f'<svg class="ss-chart" viewBox="0 0 {w} {h}" role="img" aria-label="{html.escape(label)}">']
    parts.append(f'<line class="ss-axis" x1="{ml}" y1="{y(0):g}" x2="{ml + pw}" y2="{y(0):g}"/>')
    parts.append(f'<line class="ss-axis" x1="{ml}" y1="{mt}" x2="{ml}" y2="{mt + ph}"/>')
    for v in sorted({low, 0, top}):
        parts.append(
            f'<text class="ss-tick" x="{ml - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{html.escape(_fmt(resource, v))}</text>'
        )
    if n > 1:
        parts.append(f'<text class="ss-tick" x="{ml}" y="{h - 6}">scope 0</text>')
        parts.append(f'<text class="ss-tick" x="{ml + pw}" y="{h - 6}" text-anchor="end">scope {n - 1}</text>')
    else:  # one scope, drawn in the middle
        parts.append(f'<text class="ss-tick" x="{x(0):.1f}" y="{h - 6}" text-anchor="middle">scope 0</text>')
    for cls, name, vals in series:
        pts = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(vals))
        parts.append(f'<polyline class="ss-line {cls}" points="{pts}"><title>{html.escape(name)}</title></polyline>')
        if len(vals) <= 400:
            for i, v in enumerate(vals):
                parts.append(
                    f'<circle class="ss-dot {cls}" cx="{x(i):.1f}" cy="{y(v):.1f}" r="2">'
                    f"<title>{html.escape(name)} · scope {i}: {html.escape(_fmt(resource, v))}</title></circle>"
                )
    parts.append("</svg>")
    return "".join(parts)


def _panel(row: dict[str, Any], pairs: Sequence[dict[str, Any]]) -> str:
    r = row["resource"]
    mine = pairs if r == "tensormap" else [p for p in pairs if p["ring"] == row["ring"]]
    title = "tensormap (global)" if r == "tensormap" else f"{r} · ring {row['ring']}"
    pid = f"ss-panel-{r}" + ("" if r == "tensormap" else f"-{row['ring']}")
    if r == "tensormap":
        charts = _chart([("ss-live", "live entries", [p[r]["live"] for p in mine])], r, f"{title}: live entries")
    else:
        charts = _chart(
            [("ss-hw", "high water", [p[r]["high_water"] for p in mine]),
             ("ss-live", "live at exit", [p[r]["live"] for p in mine])], r, f"{title}: high water and live at exit"
        ) + _chart([("ss-alloc", "alloc", [p[r]["alloc"] for p in mine])], r, f"{title}: alloc per scope")  # fmt: skip
    use = "—" if row["use"] is None else f"{row['use']:.2f}%"
    names = [("ss-live", "live entries")] if r == "tensormap" else [
        ("ss-hw", "high water"), ("ss-live", "live at exit"), ("ss-alloc", "alloc (lower chart)")]  # fmt: skip
    keys = "<br>".join(f'<span class="ss-key {c}"></span>{n}' for c, n in names)
    return (
        f'<section class="ss-panel" id="{pid}"><h2>{html.escape(title)}</h2><div class="ss-panel-body">'
        f'<div class="ss-charts">{charts}</div><dl class="ss-max">'
        f"<dt>Line colors</dt><dd>{keys}</dd><dt>Max use</dt><dd>{use}</dd><dt>Peak ({row['metric']})</dt><dd>{html.escape(_fmt(r, row['peak']))}</dd>"
        f"<dt>Capacity</dt><dd>{html.escape(_fmt(r, row['cap']))}</dd>"
        f"<dt>Peak scope</dt><dd>#{row['scope']} {html.escape(row['site'])}</dd>"
        + (f"<dt>Peak context ring</dt><dd>{row['context_ring']}</dd>" if r == "tensormap" else "")
        + f"<dt>Scopes</dt><dd>{row['scopes']}</dd></dl></div></section>"
    )


def _table(rows: Sequence[dict[str, Any]]) -> str:
    head = ("Resource", "Ring", "Risk metric", "Peak", "Live at exit (max)", "Alloc (max)", "Capacity", "Use",
            "Peak scope", "Peak site")  # fmt: skip
    out = ['<table class="ss-peaks" id="ss-peaks"><thead><tr>']
    out += [f"<th>{h}</th>" for h in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        r = row["resource"]
        target = f"ss-panel-{r}" + ("" if r == "tensormap" else f"-{row['ring']}")
        cells = (
            r, "global" if row["ring"] is None else str(row["ring"]), row["metric"], _fmt(r, row["peak"]),
            _fmt(r, row["live_max"]), _fmt(r, row["alloc_max"]), _fmt(r, row["cap"]),
            "—" if row["use"] is None else f"{row['use']:.2f}%", f"#{row['scope']}", row["site"],
        )  # fmt: skip
        out.append(f'<tr data-target="{target}">' + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


CSS = """
.ss { padding: 12px 16px; overflow: auto; font-family: var(--sans); }
.ss-chips { display: flex; gap: 8px; flex-wrap: wrap; margin-bottom: 10px; }
.ss-chip { border: 1px solid var(--border); border-radius: 10px; padding: 1px 8px; color: var(--muted); font-size: 12px; }
.ss-chip.ss-warn { background: var(--warn-bg); color: var(--warn-fg); }
.ss-guide { color: var(--muted); font-size: 13px; margin: 0 0 10px; }
.ss-guide code { font-family: var(--mono); }
.ss-peaks { border-collapse: collapse; font-size: 13px; margin-bottom: 16px; }
.ss-peaks th, .ss-peaks td { border: 1px solid var(--border); padding: 3px 8px; text-align: left; }
.ss-peaks th { background: var(--panel); }
.ss-peaks tbody tr { cursor: pointer; }
.ss-peaks tbody tr:hover { background: var(--hover); }
.ss-panel { border: 1px solid var(--border); border-radius: 6px; margin: 0 0 12px; padding: 6px 10px; }
.ss-panel.ss-sel { border-color: var(--accent); }
.ss-panel h2 { font-size: 14px; margin: 2px 0 6px; }
.ss-panel-body { display: flex; gap: 16px; align-items: flex-start; }
.ss-charts { display: flex; flex-direction: column; gap: 4px; }
.ss-chart { width: 560px; height: 150px; background: var(--panel); }
.ss-axis { stroke: var(--faint); stroke-width: 1; }
.ss-tick { fill: var(--muted); font-size: 10px; font-family: var(--mono); }
.ss-line { fill: none; stroke-width: 1.5; }
.ss-hw { stroke: var(--bad); fill: var(--bad); }
.ss-live { stroke: var(--accent); fill: var(--accent); }
polyline.ss-live { stroke-dasharray: 6 3; }
.ss-key { display: inline-block; width: 18px; height: 0; border-top: 2px solid; vertical-align: middle; margin-right: 4px; }
.ss-key.ss-hw { border-color: var(--bad); } .ss-key.ss-live { border-color: var(--accent); border-top-style: dashed; }
.ss-key.ss-alloc { border-color: var(--ok); }
.ss-alloc { stroke: var(--ok); fill: var(--ok); }
polyline.ss-line { fill: none; }
.ss-max { display: grid; grid-template-columns: auto auto; gap: 2px 10px; font-size: 13px; margin: 0; }
.ss-max dt { color: var(--muted); }
.ss-max dd { margin: 0; font-family: var(--mono); }
"""

JS = """
(function () {
  "use strict";
  var rows = document.querySelectorAll("#ss-peaks tbody tr");
  rows.forEach(function (tr) {
    tr.addEventListener("click", function () {
      document.querySelectorAll(".ss-panel.ss-sel").forEach(function (p) { p.classList.remove("ss-sel"); });
      var panel = document.getElementById(tr.getAttribute("data-target"));
      if (panel) { panel.classList.add("ss-sel"); panel.scrollIntoView({ block: "nearest" }); }
    });
  });
  window.ScopeStats = { rows: rows.length, panels: document.querySelectorAll(".ss-panel").length };
})();
"""


def build_payload(
    meta: dict[str, Any], records: Sequence[dict[str, Any]], name: str, where: str | None = None
) -> dict[str, Any]:
    """What the page shows, as data (embedded in it as ``PyptoReport.data``); ``where`` names the file in errors."""
    pairs, unpaired = pair(records, where or name)
    return {
        "schema": 1,
        "title": f"Scope stats: {name}",
        "file": name,
        "meta": {k: meta[k] for k in META_KEYS},
        "records": len(records),
        "unpaired": unpaired,
        "pairs": pairs,
        "peaks": peaks(meta, pairs),
    }


def render(payload: dict[str, Any]) -> str:
    """The self-contained page of a payload."""
    meta = payload["meta"]
    rows = payload["peaks"]
    chips = [f"{payload['records']} records", f"{len(payload['pairs'])} scopes", f"version {meta['version']}"]
    warn = []
    if meta["fatal"]:
        warn.append("fatal latched: records past it are diagnostic only")
    if meta["dropped"]:
        warn.append(f"{meta['dropped']} of {meta['total']} records dropped")
    if payload["unpaired"]:
        warn.append(f"{payload['unpaired']} begin record(s) without an end")
    if meta["version"] == 5:
        warn.append("version 5: heap values wrap, heap not shown")
    dominant = rows[0]["site"] if rows else "—"
    body = (
        '<div class="ss" id="ss">'
        + '<div class="ss-chips">'
        + f'<span class="ss-chip">dominant site {html.escape(dominant)}</span>'
        + "".join(f'<span class="ss-chip">{html.escape(c)}</span>' for c in chips)
        + "".join(f'<span class="ss-chip ss-warn">{html.escape(w)}</span>' for w in warn)
        + "</div>"
        + '<p class="ss-guide">Per scope (a begin/end pair of one ring and site): <b>high water</b> '
        "<code>end.R_end − begin.R_start</code>, <b>live at exit</b> <code>end.R_end − end.R_start</code>, "
        "<b>alloc</b> <code>end.R_end − begin.R_end</code>; tensormap shows live entries. "
        "Use = peak / capacity. Heap in MiB.</p>"
        + "<h2>Top Peaks</h2>"
        + _table(rows)
        + "".join(_panel(row, payload["pairs"]) for row in rows)
        + "</div>"
    )
    return render_report(
        payload["title"], payload, body=body, styles=[CSS], scripts=[JS], subtitle="per-scope ring and heap use"
    )


# ---- command line ----------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    p = argparse.ArgumentParser(prog=PROG, description="Draw a scope_stats.jsonl as one self-contained HTML page.")
    p.add_argument("jsonl", metavar="SCOPE_STATS_JSONL", help="a scope_stats.jsonl (dfx_outputs/scope_stats/)")
    p.add_argument("-o", "--output", metavar="OUT.html", help=f"report path (default: {OUTPUT_NAME} next to the input)")
    return p


def run(args: argparse.Namespace) -> Path:
    """Build and write the report; returns its path."""
    src = Path(args.jsonl)
    if src.is_dir():
        raise ScopeStatsError(f"{src}: a directory; expected a scope_stats.jsonl file")
    out = output_path(Path(args.output) if args.output else src.parent / OUTPUT_NAME, ScopeStatsError)
    check_output_not_input(out, [src])
    meta, records = load(src)
    return write_report(out, render(build_payload(meta, records, src.name, str(src))), ScopeStatsError)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line entry point."""
    return report_main(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
