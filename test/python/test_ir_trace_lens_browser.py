"""The source-line lens and the syntax highlighting of pypto-ir-trace in headless Chromium:
click a line of 00_frontend.py, the same DSL line is highlighted in later passes, the
passes that touched it are marked, the panel shows its .pto ops, C++ lines and cycles per
pipe; clicking a .pto op or a C++ line goes back to its DSL line; spans are painted lazily."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_browser import ReportPage, launch_browser, needs_chromium
from test_ir_trace_lens import ADD_LINE, HERE, KEY, args, lens_add, metrics, write_metrics

from pypto import ir
from pypto.tools.ir_trace.cli import main
from pypto.tools.ir_trace.synthetic import write_dump

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium

WITH_KEY = f"{HERE.name}:{ADD_LINE - 1}"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("lensb")
    build = root / "build"
    ir.compile(lens_add.specialize(*args()), output_dir=build, dump_passes=True)
    write_metrics(
        build,
        metrics(
            "lens_add_incore_0",
            [
                ("MTE2", 120, f"{HERE}:{ADD_LINE - 1}:5"),
                ("MTE2", 110, f"{HERE}:{ADD_LINE - 1}:5"),
                ("VECTOR", 70, f"{HERE}:{ADD_LINE}:18"),
                ("MTE3", 90, f"{HERE}:{ADD_LINE}:9"),
            ],
        ),
    )
    bare = root / "bare"
    shutil.copytree(build, bare, ignore=shutil.ignore_patterns("dfx_outputs"))
    big = write_dump(root / "big" / "passes_dump", 4, 3000)
    out = {"lens": root / "lens.html", "bare": root / "bare.html", "big": root / "big.html"}
    for src, name in ((build, "lens"), (bare, "bare"), (big, "big")):
        assert main([str(src), "-o", str(out[name])]) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launch_browser()


class Page(ReportPage):
    def __init__(self, browser: object, path: Path) -> None:
        super().__init__(browser, path, "window.IRTrace !== undefined")

    def index_of(self, name: str) -> int:
        return int(self.ev(f"PyptoReport.data.passes.findIndex(p => p.name === {name!r})"))  # type: ignore[arg-type]

    def lens_rows(self, where: str) -> list[str]:
        return list(self.ev(f"Array.from(document.querySelectorAll('{where} .k-lens .c')).map(e => e.textContent)"))  # type: ignore[arg-type]

    def lens(self) -> str:
        return str(self.ev("document.documentElement.getAttribute('data-irt-lens')"))


def test_click_a_frontend_line_follows_it(browser: object, reports: dict[str, Path]) -> None:
    pg = Page(browser, reports["lens"])
    assert pg.ev("document.getElementById('irt-lens').hidden") is False
    pg.ev("IRTrace.select(0)")
    pg.page.locator("#irt-canvas-b .r[data-t]", has_text="pl.tensor.add(").locator(".c").click()
    assert pg.lens() == KEY
    front = pg.lens_rows("#irt-canvas-b")
    assert len(front) == 1 and "pl.tensor.add(" in front[0]

    # three later passes: the ops that carry the line, and only those
    for name, op in (
        ("ConvertTensorToTileOps", "pl.tile.add("),
        ("AllocateMemoryAddr", "pl.tile.add("),
        ("InitMemRef", "pl.tile.store("),
    ):
        pg.ev(f"IRTrace.select({pg.index_of(name)})")
        rows = pg.lens_rows("#irt-canvas-b")
        assert any(op in r for r in rows), (name, rows)
        assert not any("pl.tile.load(" in r for r in rows), (name, rows)  # the loads belong to the with line
        assert pg.ev("document.querySelector('#irt-canvas-b .k-lens').getBoundingClientRect().top") > 0

    # the pass list marks the passes that touched the line: a subset of the changed ones
    touched = pg.ev("Array.from(document.querySelectorAll('.irt-touched .irt-name')).map(e => e.textContent)")
    changed = pg.ev("Array.from(document.querySelectorAll('.irt-s-changed .irt-name')).map(e => e.textContent)")
    assert "ConvertTensorToTileOps" in touched and "frontend" not in touched
    assert set(touched) < set(changed)
    assert pg.ev("document.getElementById('irt-lens-n').textContent") == str(len(touched))

    # the panel: the line's .pto ops, C++ lines and cycles per pipe
    pto = pg.lens_rows("#irt-lens-pto")
    assert any(r.startswith("pto.tadd") for r in pto) and any(r.startswith("pto.tstore") for r in pto)
    assert not any(r.startswith("pto.tload") for r in pto)
    cpp = pg.lens_rows("#irt-lens-cpp")
    assert any(r.startswith("TADD(") for r in cpp) and not any(r.startswith("TLOAD(") for r in cpp)
    cycles = pg.ev("Array.from(document.querySelectorAll('#irt-lens-cycles tbody tr')).map(r => r.innerText)")
    assert [c.split("\t")[:2] for c in cycles] == [["VECTOR", "70"], ["MTE3", "90"]]

    # reverse: a .pto op, then a C++ line, lead back to their DSL line
    pg.page.locator("#irt-lens-pto .irt-lr", has_text="pto.tload").first.click()
    assert pg.lens() == WITH_KEY
    assert [
        c.split("\t")[:2]
        for c in pg.ev("Array.from(document.querySelectorAll('#irt-lens-cycles tbody tr')).map(r => r.innerText)")
    ] == [["MTE2", "230"]]  # noqa: E501
    assert any("pl.tile.load(" in r for r in pg.lens_rows("#irt-canvas-b"))
    pg.page.locator("#irt-lens-cpp .irt-lr", has_text="TADD(").first.click()
    assert pg.lens() == KEY
    pg.page.click("#irt-lens-src")  # back to the line in 00_frontend.py
    assert pg.ev("IRTrace.state.current") == 0
    assert ["pl.tensor.add(" in r for r in pg.lens_rows("#irt-canvas-b")] == [True]

    # clicking the same line again, or Clear, stops the lens
    pg.page.click("#irt-lens-clear")
    assert pg.lens() == "" and pg.lens_rows("#irt-canvas-b") == []
    assert pg.ev("document.querySelectorAll('.irt-touched').length") == 0
    pg.close()


def test_highlighting_spans(browser: object, reports: dict[str, Path]) -> None:
    pg = Page(browser, reports["lens"])
    pg.ev("IRTrace.select(0)")
    pg.ev("IRTrace.paintVisible()")
    kw = pg.ev("Array.from(document.querySelectorAll('#irt-canvas-b span.hK')).map(e => e.textContent)")
    assert "def" in kw and "class" in kw
    assert "pto.tadd" in pg.ev("Array.from(document.querySelectorAll('#irt-lens-pto span.hB')).map(e => e.textContent)")
    assert "%a__tile" in pg.ev("Array.from(document.querySelectorAll('#irt-lens-pto span.hV')).map(e => e.textContent)")
    # painting keeps the text: every row reads as its line
    texts = pg.ev("Array.from(document.querySelectorAll('#irt-canvas-b .r[data-t] .c')).map(e => e.textContent)")
    assert texts == pg.ev("IRTrace.splitLines(PyptoReport.data.texts[PyptoReport.data.passes[0].text])")
    pg.close()


def test_no_incore_records_says_how_to_get_them(browser: object, reports: dict[str, Path]) -> None:
    pg = Page(browser, reports["bare"])
    pg.ev("IRTrace.setLens([0])")
    text = pg.ev("document.getElementById('irt-lens-cycles').textContent")
    assert "RunConfig(enable_incore_trace=True)" in text
    pg.close()


def test_spans_are_painted_lazily(browser: object, reports: dict[str, Path]) -> None:
    pg = Page(browser, reports["big"])
    assert pg.ev("document.getElementById('irt-lens').hidden") is True  # no line map: no lens
    pg.page.click("#irt-expand")
    pg.page.wait_for_timeout(100)
    rows = int(pg.ev("document.querySelectorAll('#irt-canvas-b .r').length"))  # type: ignore[arg-type]
    assert rows > 2000
    last_spans = "document.querySelector('#irt-canvas-b').lastElementChild.querySelectorAll('span.hK, span.hN').length"
    first_spans = (
        "document.querySelector('#irt-canvas-b').children[1].querySelectorAll('span.hK, span.hN, span.hD').length"
    )
    assert pg.ev(first_spans) > 0
    assert pg.ev(last_spans) == 0  # far below the viewport: not painted yet
    pg.ev("document.getElementById('irt-scroll-b').scrollTop = 1e9")
    pg.page.wait_for_function(last_spans + " > 0")
    pg.close()
