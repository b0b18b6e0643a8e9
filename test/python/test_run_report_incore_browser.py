"""The run report's in-core view (issue 13 item 5) in headless Chromium: clicking a task in the swimlane opens
its kernel's pipe lanes (a part per core of a Group task), bars and arrows as the in-core records say."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_browser import ReportPage, launch_browser, needs_chromium
from run_report_kernels import embedded, run_kernel
from test_run_report_browser import png_pixels

from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.run_report import REPORT_NAME

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        root = tmp_path_factory.mktemp("rric")
        run_kernel("mixed", root / "on", enable_chip_swimlane=2, enable_incore_trace=True)
        run_kernel("diamond", root / "off", enable_chip_swimlane=2)
    finally:
        set_dfx_defaults(**saved)
    return {"on": root / "on", "off": root / "off"}


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launch_browser()


def _open(browser: object, build: Path) -> ReportPage:
    return ReportPage(browser, build / "dfx_outputs" / REPORT_NAME, "window.RunReportIncore !== undefined")


def test_clicking_a_task_opens_its_pipe_lanes(browser: object, builds: dict[str, Path], tmp_path: Path) -> None:
    build = builds["on"]
    pg = _open(browser, build)
    data = embedded((build / "dfx_outputs" / REPORT_NAME).read_text())
    assert "Click a task in the swimlane" in pg.page.inner_text("#rr-incore")
    group = next(t for t in data["tasks"] if t["kernel"] == "rr_prescale_mm")
    pg.page.click(f'#rr-swimlane rect.rr-bar[data-task="{group["id"]}"]')
    parts = [p for p in data["incore"]["parts"] if p["task"] == group["id"]]
    assert len(parts) == 2 and pg.ev("document.querySelectorAll('#rr-incore svg.rr-ic-svg').length") == 2
    for n, part in enumerate(parts):
        sel = f"#rr-incore-{group['id']}-{n}"
        metrics = json.loads(
            (build / "dfx_outputs" / "incore" / f"{group['id']}_{part['kernel']}" / "instr_metrics.json").read_text()
        )
        compute = [
            r for r in metrics["instructions"] if r["op"] not in ("pto.set_flag", "pto.wait_flag", "pto.barrier")
        ]
        assert pg.ev(f"document.querySelectorAll('{sel} rect.rr-ic-bar').length") == len(compute) == len(part["instrs"])
        lanes = pg.ev(f"[...document.querySelectorAll('{sel} .rr-ic-lane')].map(e => e.textContent)")
        assert lanes == part["lanes"]
        # the bars of a pipe's (sub-)lanes are that pipe's instructions
        for pipe in {lane.split("#")[0] for lane in part["lanes"]}:
            got = pg.ev(
                f"[...document.querySelectorAll('{sel} rect.rr-ic-bar')].filter(r => r.dataset.lane.split('#')[0] === '{pipe}').length"
            )
            assert got == sum(1 for r in compute if r["pipe"] == pipe) > 0
        arrows = pg.ev(
            f"[...document.querySelectorAll('{sel} path.rr-ic-flow')].map(p => p.getAttribute('d').match(/[-0-9.]+/g).map(Number))"
        )
        assert len(arrows) == len(part["flows"]) and arrows
        assert all(a[2] >= a[0] - 1e-6 for a in arrows)  # no arrow points backwards in time
    kernels = pg.page.inner_text("#rr-incore")
    assert "rr_prescale_mm" in kernels and "AIC" in kernels and "AIV" in kernels and "per-pipe bound" in kernels
    assert "CUBE" in pg.ev(f"[...document.querySelectorAll('#rr-incore-{group['id']}-0 .rr-ic-lane')].map(e => e.textContent)") + \
        pg.ev(f"[...document.querySelectorAll('#rr-incore-{group['id']}-1 .rr-ic-lane')].map(e => e.textContent)")  # fmt: skip
    # clicking an instruction names its op, cycles and DSL line
    pg.page.click(f"#rr-incore-{group['id']}-1 rect.rr-ic-bar[data-i='0']", force=True)
    info = pg.ev("[...document.querySelectorAll('#rr-incore .rr-ic-info')].map(e => e.textContent).join('|')")
    assert "cycles" in info and "run_report_kernels.py:" in info
    shot = pg.page.locator("#rr-incore").screenshot(path=str(tmp_path / "incore.png"))
    _, _, px = png_pixels(shot)
    assert sum(1 for r, g, b in px if g > 150 and g - r > 50 and g - b > 30) > 50  # green VECTOR bars drawn
    # another task replaces the view
    double = next(t for t in data["tasks"] if t["kernel"] == "rr_double")
    pg.page.click(f'#rr-swimlane rect.rr-bar[data-task="{double["id"]}"]')
    assert pg.ev("document.querySelectorAll('#rr-incore svg.rr-ic-svg').length") == 1
    assert "rr_double" in pg.page.inner_text("#rr-incore") and "rr_prescale_mm" not in pg.page.inner_text("#rr-incore")
    pg.page.keyboard.press("Escape")
    assert pg.ev("document.querySelectorAll('#rr-incore svg.rr-ic-svg').length") == 0
    pg.close()


def test_without_the_flag_the_view_says_how_to_get_it(browser: object, builds: dict[str, Path]) -> None:
    pg = _open(browser, builds["off"])
    pg.page.click("#rr-swimlane rect.rr-bar")
    assert "enable_incore_trace=True" in pg.page.inner_text("#rr-incore")
    assert pg.ev("document.querySelectorAll('#rr-incore svg').length") == 0
    pg.close()
