"""Syntax highlighting of pypto-ir-trace: our Pygments MLIRLexer, the compact class runs
and their place in the payload."""

from __future__ import annotations

import re

import pytest

from pypto.tools.ir_trace.discovery import discover
from pypto.tools.ir_trace.highlight import distinct_lines, tokenize_lines
from pypto.tools.ir_trace.lexers import MLIRLexer
from pypto.tools.ir_trace.payload import build_payload

PTO = (
    "    pto.tload ins(%a__pview : !pto.partition_tensor_view<128x128xf32>) outs(%a__tile : "
    '!pto.tile_buf<loc=vec, dtype=f32>) {layout = #pto.layout<nd>} loc("k.py":33:5)'
)


def spans(line: str, runs: str) -> list[tuple[str, str]]:
    """(class letter, text) of each run."""
    out, pos = [], 0
    for letter, n in re.findall(r"([A-Z_])(\d+)", runs):
        out.append((letter, line[pos : pos + int(n)]))
        pos += int(n)
    assert pos == len(line)
    return out


def test_mlir_lexer_classes() -> None:
    got = spans(PTO, tokenize_lines([PTO], "mlir")[0])
    classes = {text: letter for letter, text in got}
    assert classes["pto.tload"] == "B"
    assert classes["%a__pview"] == "V" and classes["%a__tile"] == "V"
    assert classes["!pto.tile_buf"] == "T" and classes["#pto.layout"] == "A"
    assert classes['"k.py"'] == "S" and classes["loc"] == "K" and classes["33"] == "N"
    assert "".join(t for _, t in got) == PTO
    assert MLIRLexer().analyse_text(PTO) == 0.0  # never claims other files


@pytest.mark.parametrize("fmt", ["py", "mlir", "cpp"])
def test_runs_cover_every_line_exactly(fmt: str) -> None:
    lines = [
        "",
        "    ",
        "\tx = 1  # tab",
        "        t: pl.Tile[[16, 128], pl.FP32] = pl.tile.add(a, b)",
        'name = "é ✓ 字"',
        "%0 = arith.constant 1.5e3 : f32",
        "for (int64_t i11 = v10; i11 < v9; i11 += v8) {",
        '"unterminated',
    ]
    runs = tokenize_lines(lines, fmt)
    assert len(runs) == len(lines)
    for line, r in zip(lines, runs, strict=True):
        spans(line, r)  # asserts the lengths add up


def test_python_keywords_and_digit_shapes() -> None:
    a, b = "    def kernel_1(self, x):", "    def kernel_22(self, y):"
    ra, rb = tokenize_lines([a, b], "py")
    assert ("K", "def") in spans(a, ra) and ("F", "kernel_1") in spans(a, ra)
    assert ("F", "kernel_22") in spans(b, rb)


def test_payload_has_runs_per_distinct_line() -> None:
    dump = discover("/work/shared/reference/upstream-builds/softmax_rows/passes_dump")
    payload = build_payload(dump, 3)
    lines = distinct_lines(t.splitlines() for t in payload["texts"])
    assert len(payload["hl"]["runs"]) == len(lines) == len(set(lines))
    for line, r in zip(lines, payload["hl"]["runs"], strict=True):
        spans(line, r)
