"""pypto-ir-trace payload and HTML: distinct snapshots stored once, function diffs,
verdicts, determinism, safe embedding; reports of upstream dumps and of a real ir.compile dump."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.reports import embed_json, render_report
from pypto.tools.ir_trace.discovery import discover
from pypto.tools.ir_trace.payload import build_payload
from pypto.tools.ir_trace.render import render_dump
from pypto.tools.ir_trace.synthetic import write_dump

UPSTREAM = sorted(Path("/work/shared/reference/upstream-builds").glob("*/passes_dump"))


@pl.jit
def trace_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


def compile_dump(root: Path) -> Path:
    """A real dump: ``ir.compile`` of a jit kernel with ``dump_passes=True``."""
    program = trace_add.specialize(torch.randn(128, 128), torch.randn(128, 128), torch.empty(128, 128))
    compiled = ir.compile(program, output_dir=root / "build", dump_passes=True)
    return Path(compiled.output_dir) / "passes_dump"


def payload_of(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert m
    return json.loads(m.group(1))


def test_real_compile_dump(tmp_path: Path) -> None:
    dump = discover(compile_dump(tmp_path))
    assert len(dump.snapshots) >= 3 and dump.snapshots[0].file == "00_frontend.py"
    p = build_payload(dump, 3)
    assert p["format"] == "py" and p["context"] == 3
    assert any(x["diff"]["ins"] for x in p["passes"][1:])
    assert all(fs is not None for fs in p["functions"])  # our dumps parse
    outlined = next(x for x in p["passes"] if x["name"] == "OutlineIncoreScopes")
    assert outlined["funcs"] is not None and any(f["del"] == 0 and f["ins"] for f in outlined["funcs"].values())
    assert payload_of(render_dump(dump)) == json.loads(json.dumps(build_payload(dump, 3)))


@pytest.mark.parametrize("path", UPSTREAM, ids=lambda p: p.parent.name)
def test_upstream_dump_reports(path: Path) -> None:
    dump = discover(path)
    p = build_payload(dump, 3)
    assert len(p["passes"]) == 50
    assert len(p["texts"]) == len({s.text for s in dump.snapshots}) < 50  # each distinct snapshot once
    changed = [x["name"] for x in p["passes"][1:] if x["diff"]["ins"] or x["diff"]["del"]]
    assert "ConvertToSSA" in changed and "Simplify" not in changed[:1]
    assert all(fs is not None for fs in p["functions"])
    keys = set(p["labels"])
    assert any(k.endswith(f".{path.parent.name}") for k in keys)
    for x in p["passes"][1:]:
        if x["funcs"]:
            for f in x["funcs"].values():
                assert f["ins"] or f["del"]
    html = render_dump(dump)
    assert html == render_dump(discover(path))  # same input, same bytes


def test_deterministic_and_no_paths(tmp_path: Path) -> None:
    a = write_dump(tmp_path / "x" / "passes_dump", 6, 200)
    b = write_dump(tmp_path / "y" / "passes_dump", 6, 200)
    ha, hb = render_dump(discover(a)), render_dump(discover(b))
    assert str(tmp_path) not in ha
    assert ha.replace("x/passes_dump", "?") == hb.replace("y/passes_dump", "?")


def test_verdicts_and_first_diverging(tmp_path: Path) -> None:
    d = write_dump(tmp_path / "passes_dump", 4, 100)
    snap = lambda s: {"tensors": {"out": {"status": s, "max_abs_diff": 0.0 if s == "pass" else 2.5}}}  # noqa: E731
    (d / "validation.json").write_text(
        json.dumps(
            {
                "version": 1,
                "snapshots": {
                    "00_frontend.py": snap("pass"),
                    "02_after_Synthetic2.py": snap("fail"),
                    "03_after_Synthetic3.py": snap("fail"),
                },
            }
        )
    )
    p = build_payload(discover(d), 3)
    assert p["firstDiverging"] == 2
    assert p["passes"][2]["verdict"] == {"status": "fail", "message": None, "tensors": [["out", False, 2.5, None]]}
    assert p["passes"][1]["verdict"] is None


def test_unparsable_snapshot_disables_functions(tmp_path: Path) -> None:
    d = tmp_path / "passes_dump"
    d.mkdir()
    (d / "00_frontend.py").write_text("def f():\n    return 1\n")
    (d / "01_after_Break.py").write_text("def f(:\n    return 1\n")
    p = build_payload(discover(d), 3)
    assert p["functions"][1] is None and p["passes"][1]["funcs"] is None
    assert p["passes"][1]["diff"]["ins"] == 1


def test_mlir_dump_payload(tmp_path: Path) -> None:
    d = tmp_path / "dump"
    d.mkdir()
    before = 'builtin.module @m {\n  func.func @f(%a: f32) -> f32 {\n    %0 = "pl.tensor.add"(%a, %a) : (f32, f32) -> f32\n    func.return %0 : f32\n  }\n}\n'
    after = before.replace("pl.tensor.add", "pl.tile.add") + "\n"
    (d / "00_input.mlir").write_text(before)
    (d / "01_after_ConvertTensorToTileOps.mlir").write_text(after)
    p = build_payload(discover(d), 3)
    assert p["format"] == "mlir" and p["labels"] == {"@f": "@f"}
    assert p["passes"][1]["funcs"]["@f"]["ins"] == 1


def test_embedding_is_script_safe() -> None:
    text = embed_json({"b": "</script><script>alert(1)</script>", "a": "\u2028&"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"b": "</script><script>alert(1)</script>", "a": "\u2028&"}
    assert text.index('"a"') < text.index('"b"')


def test_shell_is_self_contained() -> None:
    html = render_report("T <1>", {"k": 1}, body="<p id=x></p>", scripts=["var a = 1;"], styles=["p{}"])
    assert "T &lt;1&gt;" in html and "Content-Security-Policy" in html and "default-src 'none'" in html
    assert not re.search(r"(src|href)=\"?(https?:)?//", html)
    assert "prefers-color-scheme" in html and 'id="theme-toggle"' in html
    with pytest.raises(ValueError):
        render_report("T", {}, body="", scripts=["x = '</script>'"])
