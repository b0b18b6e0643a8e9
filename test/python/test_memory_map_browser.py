"""The memory map report in headless Chromium (Playwright, Debian's /usr/bin/chromium): built from a
real ir.compile dump; clicking a tile highlights its IR lines; clicking a line finds its tile; the peak
view; the theme toggle; no network; a screenshot for a human look."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from report_browser import ReportPage, launch_browser, needs_chromium

import pypto.language as pl
from pypto import ir
from pypto.tools.memory_map import cli

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pl.jit
def mmb_softmax(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = pl.load(x, [i * 16, 0], [16, 128])
            tmp = pl.create_tile([16, 128], dtype=pl.FP32)
            mx = pl.row_max(t, tmp)
            e = pl.exp(pl.row_expand_sub(t, mx))
            s = pl.row_sum(e, tmp)
            pl.store(pl.row_expand_div(e, s), [i * 16, 0], out)
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mmb")
    program = mmb_softmax.specialize(torch.randn(64, 128), torch.empty(64, 128))
    build = Path(ir.compile(program, output_dir=root / "build", dump_passes=True).output_dir)
    out = root / "memory_map.html"
    assert cli.main([str(build), "-o", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launch_browser()


class Page(ReportPage):
    """The memory-map viewer."""

    def __init__(self, browser: object, path: Path, scheme: str = "light") -> None:
        super().__init__(browser, path, "window.MemoryMap !== undefined", scheme)

    def lines(self, cls: str) -> list[int]:
        found = self.ev(f"[...document.querySelectorAll('.mm-line.{cls}')].map(e => e.dataset.line)")
        return sorted(int(x) for x in found)  # type: ignore[union-attr]


def test_click_tile_highlights_its_ir_lines(browser: object, report: Path, tmp_path: Path) -> None:
    pg = Page(browser, report)
    data = pg.ev("PyptoReport.data")
    fn = data["functions"][0]  # type: ignore[index]
    vec = next(s for s in fn["spaces"] if s["space"] == "Vec")
    chain = max(vec["boxes"], key=lambda b: len(b["members"]))  # the in-place t -> e chain
    assert len(chain["members"]) >= 3
    pg.page.click(f'[data-box="{chain["id"]}"]')
    defs = sorted({ln for m in chain["members"] for ln in m["def_lines"]})
    uses = sorted({ln for m in chain["members"] for ln in m["use_lines"]} - set(defs))
    assert pg.lines("mm-hl-def") == defs
    assert pg.lines("mm-hl-use") == uses
    assert pg.lines("mm-hl-alloc") == [vec["allocs"][chain["base"]]]
    assert pg.ev(f"document.querySelector('[data-box=\"{chain['id']}\"]').classList.contains('mm-sel')")
    detail = pg.page.inner_text("#mm-detail")
    for m in chain["members"]:
        assert m["name"] in detail
    # the highlighted lines are the IR text of those values
    first_def = pg.page.inner_text(f'.mm-line[data-line="{defs[0]}"] .mm-code')
    assert chain["members"][0]["name"] in first_def
    pg.page.screenshot(path=str(tmp_path / "memory_map_light.png"))
    assert (tmp_path / "memory_map_light.png").stat().st_size > 10_000

    # clicking an IR line selects the tile it defines
    other = next(b for b in vec["boxes"] if b["id"] != chain["id"])
    pg.page.click(f'.mm-line[data-line="{other["members"][0]["def_lines"][0]}"]')
    assert pg.ev("MemoryMap.state.sel.box") == other["id"]
    assert pg.lines("mm-hl-def") == sorted({ln for m in other["members"] for ln in m["def_lines"]})

    # the peak view: tiles live at the peak selected, the others dimmed, the holes listed
    pg.page.click('button[data-peak="Vec"]')
    selected = pg.ev("[...document.querySelectorAll('.mm-box.mm-sel')].map(e => e.dataset.box).sort()")
    assert selected == sorted(vec["peak_boxes"])
    assert pg.lines("mm-peak-line") == [vec["peak_line"]]
    assert "Free holes at the peak" in pg.page.inner_text("#mm-detail")
    pg.page.keyboard.press("Escape")
    assert pg.lines("mm-hl-def") == [] and pg.ev("MemoryMap.state.sel") is None
    pg.close()


def test_theme_toggle_and_dark_screenshot(browser: object, report: Path, tmp_path: Path) -> None:
    pg = Page(browser, report, scheme="dark")
    assert pg.ev("document.documentElement.dataset.theme") == "dark"
    bg = lambda: pg.ev("getComputedStyle(document.querySelector('.mm-detail')).backgroundColor")  # noqa: E731
    dark = bg()
    pg.page.click("#theme-toggle")
    assert pg.ev("document.documentElement.dataset.theme") == "light" and bg() != dark
    pg.page.click("#theme-toggle")
    assert pg.ev("document.documentElement.dataset.theme") == "dark" and bg() == dark
    # Capacity scale and full types redraw without losing the selection
    box = pg.ev("PyptoReport.data.functions[0].spaces[0].boxes[0].id")
    pg.page.click(f'[data-box="{box}"]')
    pg.page.click("#mm-scale-cap")
    pg.page.click("#mm-types")
    assert pg.ev("MemoryMap.state.sel.box") == box and pg.lines("mm-hl-def")
    assert "pl.Tile[" in pg.page.inner_text(".mm-ir")
    pg.page.screenshot(path=str(tmp_path / "memory_map_dark.png"))
    pg.close()
