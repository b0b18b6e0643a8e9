"""The report's JSON payload: distinct snapshot texts (each stored once), the
functions of each, and per pass the whole-file and per-function diffs.

Shape (all keys sorted when serialised)::

    {"version": 1, "title": str, "source": str, "format": "py"|"mlir",
     "context": int, "firstDiverging": int|null, "labels": {key: label},
     "texts": [str], "functions": [[[key, start, end], ...] | null],
     "passes": [{"index", "file", "name", "text", "warning", "warningFile",
                 "verdict": {"status", "message", "tensors": [[name, passed, max_abs_diff, message]]} | null,
                 "diff": {"ops", "ins", "del"} | null,        # null for snapshot 0
                 "funcs": {key: {"ops", "ins", "del"}} | null}],  # changed functions; null: unparsable
     "hl": {"runs": [str]},      # highlight runs of each distinct line (:mod:`.highlight`)
     "lens": {...} | null}        # the source-line lens (:mod:`.lens`); null without report/line_locs.json

``ops`` are the compact ops of :mod:`.diff`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pypto.utils.progress import progress

from .diff import DEL, INS, LineDiff, diff_lines, mlir_op_name, py_op_name
from .discovery import Dump, Verdict
from .functions import Function, extract, short_labels
from .highlight import distinct_lines, tokenize_lines
from .lens import build_lens

PAYLOAD_VERSION = 1


def _diff_json(d: LineDiff) -> dict[str, Any]:
    return {"ops": d.ops, "ins": d.inserted, "del": d.deleted}


def _verdict_json(v: Verdict | None) -> dict[str, Any] | None:
    if v is None:
        return None
    tensors = [[t.name, t.passed, t.max_abs_diff, t.message] for t in v.tensors]
    return {"status": v.status, "message": v.message, "tensors": tensors}


def source_label(path: Path) -> str:
    """The last two components of the dump path (no absolute paths: determinism)."""
    parts = path.resolve().parts
    return "/".join(parts[-2:])


class _Builder:
    def __init__(self, dump: Dump) -> None:
        self.dump = dump
        self.op_name = mlir_op_name if dump.fmt == "mlir" else py_op_name
        self.texts: list[str] = []
        self.text_index: dict[str, int] = {}
        self.lines: list[list[str]] = []
        self.functions: list[list[Function] | None] = []

    def text(self, text: str) -> int:
        idx = self.text_index.get(text)
        if idx is None:
            idx = self.text_index[text] = len(self.texts)
            self.texts.append(text)
            self.lines.append(text.splitlines())
            self.functions.append(extract(text, self.dump.fmt))
        return idx

    def function_diffs(self, a: int, b: int) -> dict[str, Any] | None:
        fa, fb = self.functions[a], self.functions[b]
        if fa is None or fb is None:
            return None
        la, lb = self.lines[a], self.lines[b]
        before = {f.key: la[f.start : f.end] for f in fa}
        after = {f.key: lb[f.start : f.end] for f in fb}
        out: dict[str, Any] = {}
        for key in sorted(before.keys() | after.keys()):
            x, y = before.get(key), after.get(key)
            if x == y:
                continue
            if x is None:
                out[key] = {"ops": [[INS, len(y or [])]], "ins": len(y or []), "del": 0}
            elif y is None:
                out[key] = {"ops": [[DEL, len(x)]], "ins": 0, "del": len(x)}
            else:
                out[key] = _diff_json(diff_lines(x, y, self.op_name))
        return out


def build_payload(dump: Dump, context: int, title: str | None = None) -> dict[str, Any]:
    """The payload of the report for ``dump`` with ``context`` lines of context (a progress bar
    names the snapshot being diffed when this takes long: :mod:`pypto.utils.progress`)."""
    with progress("ir-trace", total=len(dump.snapshots)) as bar:
        return _build_payload(dump, context, title, bar)


def _build_payload(dump: Dump, context: int, title: str | None, bar: Any) -> dict[str, Any]:
    b = _Builder(dump)
    passes: list[dict[str, Any]] = []
    cache: dict[tuple[int, int], tuple[dict[str, Any], dict[str, Any] | None]] = {}
    prev: int | None = None
    first_diverging: int | None = None
    for snap in dump.snapshots:
        bar.advance(snap.name or snap.file)
        idx = b.text(snap.text)
        diff = funcs = None
        if prev is not None:
            if (prev, idx) not in cache:
                whole = _diff_json(diff_lines(b.lines[prev], b.lines[idx], b.op_name))
                cache[(prev, idx)] = (whole, b.function_diffs(prev, idx))
            diff, funcs = cache[(prev, idx)]
        verdict = dump.verdicts.get(snap.file)
        if first_diverging is None and verdict is not None and verdict.status != "pass":
            first_diverging = snap.index
        passes.append(
            {
                "index": snap.index,
                "file": snap.file,
                "name": snap.name,
                "text": idx,
                "warning": snap.warning,
                "warningFile": snap.warning_file,
                "verdict": _verdict_json(verdict),
                "diff": diff,
                "funcs": funcs,
            }
        )
        prev = idx
    keys = {f.key for fs in b.functions if fs for f in fs}
    source = source_label(dump.path)
    return {
        "version": PAYLOAD_VERSION,
        "title": title or f"IR trace: {source}",
        "source": source,
        "format": dump.fmt,
        "context": context,
        "firstDiverging": first_diverging,
        "labels": short_labels(keys, dump.fmt),
        "texts": b.texts,
        "functions": [None if fs is None else [[f.key, f.start, f.end] for f in fs] for fs in b.functions],
        "passes": passes,
        "hl": {"runs": tokenize_lines(distinct_lines(b.lines), dump.fmt)},
        "lens": build_lens(dump, [p["text"] for p in passes], len(b.texts)),
    }
