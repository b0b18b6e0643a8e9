"""The scope_stats report in headless Chromium (Playwright, Debian's /usr/bin/chromium): made from a real
run's scope_stats.jsonl; it renders with no console error and no request off the file, shows the Top
Peaks table (one row per resource and ring, tensormap global) and a chart per row; a row selects its
panel; it also runs under the page's own CSP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from report_browser import ReportPage, launch_browser, needs_chromium

import pypto.language as pl
from pypto.runtime import RunConfig, run
from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.tools import scope_stats_plot

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pl.jit
def ssb_looped(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(4):
        tmp = pl.create_tensor([32, 64], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ssb_rows"):
            t = pl.slice(a, [32, 64], [i * 32, 0])
            tmp[:] = pl.add(t, t)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ssb_put"):
            out = pl.assemble(out, pl.add(tmp, tmp), [i * 32, 0])
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        root = tmp_path_factory.mktemp("ssb")
        a, out = torch.randn(128, 64), torch.zeros(128, 64)
        run(ssb_looped, a, out, config=RunConfig(save_kernels_dir=str(root / "build"), enable_scope_stats=True))
    finally:
        set_dfx_defaults(**saved)
    src = root / "build" / "dfx_outputs" / "scope_stats" / "scope_stats.jsonl"
    assert scope_stats_plot.main([str(src)]) == 0
    return src.parent / "scope_stats.html"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launch_browser()


def test_page_renders_the_peaks_table(browser: object, report: Path, tmp_path: Path) -> None:
    pg = ReportPage(browser, report, "window.ScopeStats !== undefined")
    data = pg.ev("PyptoReport.data")
    peaks = data["peaks"]  # type: ignore[index]
    # rings 0 (the root scope) and 1 (the loop) for each ring resource, plus the global tensormap
    assert len(peaks) == 7
    assert pg.ev("window.ScopeStats.rows") == len(peaks) == pg.ev("window.ScopeStats.panels")
    assert pg.page.is_visible("#ss-peaks")
    header = pg.page.inner_text("#ss-peaks thead")
    for col in ("Resource", "Ring", "Peak", "Capacity", "Use", "Peak site"):
        assert col in header
    first = pg.page.inner_text("#ss-peaks tbody tr:first-child")
    assert peaks[0]["resource"] in first and peaks[0]["site"] in first  # type: ignore[index]
    heap = next(r for r in peaks if r["resource"] == "heap" and r["ring"] == 1)  # type: ignore[index]
    assert heap["peak"] == 4 * 32 * 64 * 4
    assert "0.0312 MiB" in pg.page.inner_text("#ss-peaks")  # 32 KiB of tmp buffers, in MiB
    # every panel draws its charts
    assert pg.ev("document.querySelectorAll('.ss-panel svg polyline').length") >= len(peaks)
    box = pg.page.locator("#ss-panel-task_window-1 svg").first.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50
    # a row selects its panel
    pg.page.click('#ss-peaks tr[data-target="ss-panel-heap-1"]')
    assert pg.ev("document.getElementById('ss-panel-heap-1').classList.contains('ss-sel')")
    pg.page.screenshot(path=str(tmp_path / "scope_stats.png"))  # for a human look
    pg.close()


def test_page_runs_under_its_own_csp(browser: object, report: Path) -> None:
    context = browser.new_context()  # type: ignore[attr-defined]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(report.as_uri())
    page.wait_for_load_state("load")
    assert page.evaluate("window.ScopeStats && window.ScopeStats.rows") == 7
    assert not errors, errors
    context.close()


def test_same_input_same_bytes(report: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.html"
    assert scope_stats_plot.main([str(report.parent / "scope_stats.jsonl"), "-o", str(again)]) == 0
    assert again.read_bytes() == report.read_bytes()
