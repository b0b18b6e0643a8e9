"""``python -m pypto.tools.ptoas_lit_compat``: PTOAS-style lit tests run with our ptoas, on a tiny
synthetic ``test/basic`` built in tmp_path (CI needs no PTOAS checkout)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pypto.tools import ptoas_lit_compat as compat

TILE = "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=16, v_row=1, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0>"
BODY = (
    "module {{\n  func.func @{name}() {{\n"
    f"    %a = pto.alloc_tile : {TILE}\n"
    f"    pto.tadd ins(%a, %a : {TILE}, {TILE}) outs(%a : {TILE})\n"
    "    return\n  }}\n}}\n"
)
TESTS = {
    # passes: PTOAS's arch flag, C++ checked through a pipe
    "ok_emitc.pto": "// RUN: ptoas --pto-arch=a3 %s | FileCheck %s\n"
    + BODY.format(name="ok_emitc")
    + "// CHECK-LABEL: __global__ AICORE void ok_emitc()\n// CHECK: TADD([[D:v[0-9]+]], [[D]], [[D]]);\n",
    # passes: an expected failure under `not`, stdout dropped, stderr checked
    "bad_arch.pto": "// RUN: not ptoas --pto-arch=a9 %s 2>&1 1>/dev/null | FileCheck %s\n"
    + BODY.format(name="bad_arch")
    + "// CHECK: Error: invalid --pto-arch='a9'. Expected 'a3' or 'a5'.\n",
    # fails: FileCheck does not find its line
    "wrong_check.pto": "// RUN: ptoas %s | FileCheck %s\n" + BODY.format(name="wrong_check") + "// CHECK: TSUB(\n",
    # fails: ptoas rejects the op
    "unknown_op.pto": "// RUN: ptoas %s 2>&1 | FileCheck %s\n"
    "module {\n  func.func @u() {\n    pto.no_such_op\n    return\n  }\n}\n// CHECK: AICORE void u()\n",
}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    basic = tmp_path / "PTOAS" / "test" / "basic"
    basic.mkdir(parents=True)
    for name, text in TESTS.items():
        (basic / name).write_text(text)
    return tmp_path / "PTOAS"


def test_runner_counts_and_reasons(checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json = tmp_path / "res.json"
    code = compat.main([str(checkout), "--json", str(out_json)])
    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[-1] == "passed 2/4"
    rows = {r["name"]: r for r in json.loads(out_json.read_text())}
    assert {n for n, r in rows.items() if r["code"] == "PASS"} == {"ok_emitc.pto", "bad_arch.pto"}
    assert "TSUB(" in rows["wrong_check.pto"]["reason"]
    assert "pto.no_such_op" in rows["unknown_op.pto"]["reason"]
    assert f"FAIL: unknown_op.pto: {rows['unknown_op.pto']['reason']}" in out
    assert not list(checkout.rglob("lit.cfg.py")) and not list(checkout.rglob("Output"))  # nothing written there


def test_filter_and_all_pass_exit_code(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert compat.main([str(checkout / "test" / "basic"), "--filter", "ok_emitc"]) == 0
    assert capsys.readouterr().out.strip() == "passed 1/1"


def test_not_a_checkout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert compat.main([str(tmp_path / "missing")]) == 1  # a user error, through the shared CLI wrapper
    err = capsys.readouterr().err
    assert err.startswith("ptoas_lit_compat: error: ") and "expected a PTOAS checkout" in err


def test_failure_reason_prefers_ptoas_error() -> None:
    output = "# executed command: ptoas x.pto\nx.pto:3:5: error: 'pto.foo' is not registered\nx.pto:9: error: CHECK: expected string not found in input\n"
    assert compat.failure_reason(output) == (
        "FileCheck: CHECK: expected string not found in input | ptoas: x.pto:3:5: error: 'pto.foo' is not registered"
    )
    assert compat.failure_reason("Test has no 'RUN:' line") == "no RUN: line in the test"
