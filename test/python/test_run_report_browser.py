"""The run report (``dfx_outputs/run_report.html``) in headless Chromium (Playwright, Debian's
/usr/bin/chromium), built by a real run of a mixed task graph with the swimlane, PMU and dep_gen on:
no console error and no request, the bars are drawn (counted in the SVG, and seen in a screenshot),
clicking a bar shows the task's detail and draws its dependencies, the scheduler view, zoom, the
dependency graph, the PMU table and the findings linking to the timeline."""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_browser import ReportPage, launch_browser, needs_chromium
from run_report_kernels import embedded, run_kernel

from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.run_report import REPORT_NAME

pytest.importorskip("playwright.sync_api")
pytestmark = needs_chromium


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        build = tmp_path_factory.mktemp("rrb") / "build"
        run_kernel("mixed", build, enable_chip_swimlane=4, enable_pmu=2, enable_dep_gen=True)
    finally:
        set_dfx_defaults(**saved)
    return build / "dfx_outputs" / REPORT_NAME


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launch_browser()


def open_page(browser: object, path: Path, scheme: str = "light") -> ReportPage:
    return ReportPage(browser, path, "window.RunReport !== undefined", scheme)


def png_pixels(png: bytes) -> tuple[int, int, list[tuple[int, ...]]]:
    """(width, height, pixels) of an 8-bit RGB / RGBA, non-interlaced PNG (what Chromium writes)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(png):
        (n,) = struct.unpack(">I", png[pos : pos + 4])
        kind, body = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    pixels: list[tuple[int, ...]] = []
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels += [tuple(line[i : i + 3]) for i in range(0, stride, bpp)]
        prev = line
    return width, height, pixels


def test_the_bars_are_drawn(browser: object, report: Path, tmp_path: Path) -> None:
    pg = open_page(browser, report)
    data = embedded(report.read_text())
    want = sum(len(t["cores"]) for t in data["tasks"])  # a bar per task per core it ran on
    assert pg.ev("document.querySelectorAll('#rr-swimlane rect.rr-bar').length") == want == 4
    lanes = pg.ev("[...document.querySelectorAll('#rr-swimlane .rr-lane-label')].map(e => e.textContent)")
    assert lanes == ["AIC0", "AIV24", "AIV25"]
    widths = pg.ev("[...document.querySelectorAll('#rr-swimlane rect.rr-bar')].map(r => r.getBBox().width)")
    assert all(w > 20 for w in widths)  # type: ignore[union-attr]
    # the screenshot is not blank: the AIC (blue) and AIV (orange) bars are there in colour
    shot = pg.page.locator("#rr-timeline").screenshot(path=str(tmp_path / "timeline.png"))
    w, h, px = png_pixels(shot)
    blue = sum(1 for r, g, b in px if b > 150 and b - r > 60)
    orange = sum(1 for r, g, b in px if r > 180 and r - b > 100)
    assert blue > 500 and orange > 1000, (w, h, blue, orange)
    pg.page.screenshot(path=str(tmp_path / "run_report.png"), full_page=True)
    assert pg.ev("document.querySelectorAll('#rr-depgraph .rr-node').length") == 3
    assert pg.ev("document.querySelectorAll('#rr-depgraph .rr-edge').length") == len(data["edges"])
    assert pg.ev("document.querySelectorAll('#rr-pmu-table tr.rr-row').length") == len(data["pmu"]["rows"])
    assert pg.ev("document.querySelectorAll('#rr-level3').length") == 0  # level 4: the analyses, not the note
    pg.close()


def test_click_a_task_shows_its_detail_and_dependencies(browser: object, report: Path) -> None:
    pg = open_page(browser, report)
    data = embedded(report.read_text())
    join = next(t for t in data["tasks"] if t["kernel"] == "rr_join")
    assert len(join["preds"]) == 2
    pg.page.click(f'#rr-swimlane rect.rr-bar[data-task="{join["id"]}"]')
    detail = pg.page.inner_text("#rr-detail")
    for text in (
        "rr_join",
        "rr_prescale_mm",
        "rr_double",
        str(join["dispatch"]),
        str(join["finish"]),
        str(join["cycles"]),
    ):
        assert text in detail
    assert "vec_busy_cycles" in detail  # its PMU row
    assert pg.ev("document.querySelectorAll('#rr-swimlane path.rr-dep-in').length") == 2
    assert pg.ev("document.querySelectorAll('#rr-swimlane rect.rr-bar.rr-pred').length") == 3  # the Group: 2 cores
    assert pg.ev(f"document.querySelector('#rr-depgraph [data-task=\"{join['id']}\"]').classList.contains('rr-sel')")
    # a link in the detail goes to that task
    pred = join["preds"][0]
    pg.page.click(f'#rr-detail [data-goto="{pred}"]')
    assert pg.ev("RunReport.state.sel") == pred
    assert pg.ev("document.querySelectorAll('#rr-swimlane path.rr-dep-out').length") == 1
    # the scheduler view: dispatch -> finish
    pg.page.click("#rr-view-sched")
    bar = pg.ev(
        f"(() => {{ const r = document.querySelector('#rr-swimlane rect.rr-bar[data-task=\"{pred}\"]'); return r.getBBox().width; }})()"
    )
    pg.page.click("#rr-view-worker")
    bar_w = pg.ev(f"document.querySelector('#rr-swimlane rect.rr-bar[data-task=\"{pred}\"]').getBBox().width")
    t = next(t for t in data["tasks"] if t["id"] == pred)
    assert abs(bar / bar_w - (t["finish"] - t["dispatch"]) / (t["end"] - t["start"])) < 0.05  # type: ignore[operator]
    # Escape clears the selection
    pg.page.keyboard.press("Escape")
    assert pg.ev("RunReport.state.sel") is None
    pg.close()


def test_zoom_pan_graph_pmu_and_findings(browser: object, report: Path) -> None:
    pg = open_page(browser, report, "dark")
    data = embedded(report.read_text())
    span = pg.ev("RunReport.state.t1 - RunReport.state.t0")
    pg.page.click("#rr-zoom-in")
    assert pg.ev("RunReport.state.t1 - RunReport.state.t0") < span  # type: ignore[operator]
    box = pg.page.locator("#rr-timeline").bounding_box()
    assert box is not None
    t0 = pg.ev("RunReport.state.t0")
    pg.page.mouse.move(box["x"] + 400, box["y"] + 10)
    pg.page.mouse.down()
    pg.page.mouse.move(box["x"] + 300, box["y"] + 10, steps=5)
    pg.page.mouse.up()
    assert pg.ev("RunReport.state.t0") > t0  # type: ignore[operator]
    pg.page.click("#rr-zoom-fit")
    assert pg.ev("RunReport.state.t0") == 0
    # a graph node selects its task
    mm = next(t for t in data["tasks"] if t["kernel"] == "rr_prescale_mm")
    pg.page.click(f'#rr-depgraph .rr-node[data-task="{mm["id"]}"] rect')
    assert pg.ev("RunReport.state.sel") == mm["id"] and "rr_prescale_mm" in pg.page.inner_text("#rr-detail h3")
    # a PMU row selects its task
    last = data["pmu"]["rows"][-1]["task"]
    pg.page.click(f'#rr-pmu-table tr.rr-row[data-task="{last}"] td:nth-child(3)')
    assert pg.ev("RunReport.state.sel") == last
    # a finding marks its span on its task's lane
    idle = next(i for i, f in enumerate(data["findings"]) if f["kind"] == "idle")
    pg.page.click(f'#rr-findings tr[data-finding="{idle}"] td:nth-child(4)')
    assert pg.ev("RunReport.state.sel") == data["findings"][idle]["task"]
    assert pg.ev("document.querySelectorAll('#rr-mark').length") == 1
    pg.close()


def test_section_8_analyses_and_the_critical_path(browser: object, report: Path) -> None:
    """Level 4: the six analyses render (no console error), and a critical-path task selects its task."""
    sync_api = pytest.importorskip("playwright.sync_api")
    assert sync_api
    data = embedded(report.read_text())
    s = data["sched"]
    ctx = browser.new_context()  # type: ignore[attr-defined]
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(report.as_uri())
    page.wait_for_selector("#rr-sched")
    assert page.inner_text("#rr-verdict") == "Verdict: " + s["overhead"]["verdict"]
    rows = {t: page.locator(f"#{t} tr").count() - 1 for t in
            ("rr-sched-engines", "rr-sched-switch", "rr-sched-headtail", "rr-sched-threads", "rr-critical")}  # fmt: skip
    assert rows == {"rr-sched-engines": len(s["overhead"]["engines"]) + 2, "rr-sched-switch": len(s["switch"]["cores"]),
                    "rr-sched-headtail": 2, "rr-sched-threads": len(s["threads"]),
                    "rr-critical": len(s["critical_path"]["task_ids"])}  # fmt: skip
    assert "Makespan bound" in page.inner_text("#rr-sched") and "sched" in page.inner_text("#rr-critical-split")
    assert page.locator("#rr-level3").count() == 0
    first = s["critical_path"]["task_ids"][0]
    page.click(f'#rr-critical tr.rr-row[data-task="{first}"] td:nth-child(3)')  # the row
    assert page.evaluate("RunReport.state.sel") == first
    assert page.evaluate(
        f"document.querySelector('#rr-critical tr[data-task=\"{first}\"]').classList.contains('rr-sel')"
    )
    assert page.evaluate(f"document.querySelector('#rr-swimlane rect.rr-bar[data-task=\"{first}\"]') !== null")
    last = s["critical_path"]["task_ids"][-1]
    page.click(f'#rr-critical [data-goto="{last}"]')  # the task's link
    assert page.evaluate("RunReport.state.sel") == last
    assert not errors
    ctx.close()


def test_below_level_3_the_note_stays(browser: object, tmp_path: Path) -> None:
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        run_kernel("mixed", tmp_path / "build", enable_chip_swimlane=2)
    finally:
        set_dfx_defaults(**saved)
    pg = open_page(browser, tmp_path / "build" / "dfx_outputs" / REPORT_NAME)
    assert "level 2" in pg.page.inner_text("#rr-level3")
    assert pg.ev("document.querySelectorAll('#rr-sched').length") == 0
    pg.close()


def test_no_request_leaves_the_page_under_its_csp(browser: object, report: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    assert sync_api
    ctx = browser.new_context()  # type: ignore[attr-defined]
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(report.as_uri())
    page.wait_for_selector("#rr-swimlane rect.rr-bar")
    assert page.locator("#rr-swimlane rect.rr-bar").count() == 4
    assert not errors
    ctx.close()
