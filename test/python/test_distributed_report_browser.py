"""The cross-rank page (dfx_outputs/cross_rank_report.html) in headless Chromium: a lane pair per rank,
an arrow per flow of the merged trace, details on click; self-contained and deterministic."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import dist_programs as dp
import pytest
from report_browser import ReportPage, launch_browser, needs_chromium

from pypto.runtime.distributed import DistributedConfig, launch
from pypto.runtime.distributed.report import render_cross_rank_report, report_model

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    yield from launch_browser()


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("xr")
    launch(dp.put_get_notify, DistributedConfig(device_ids=[2, 7], timeout_s=10, output_dir=out))
    return out


def test_the_page_draws_every_rank_and_every_flow(build: Path, browser: object) -> None:
    # build first: the ranks are forked before the browser driver's threads exist
    page_path = build / "dfx_outputs/cross_rank_report.html"
    trace = json.loads((build / "dfx_outputs/merged_comm_trace.json").read_text())
    n_flows = sum(e["ph"] == "s" for e in trace["traceEvents"])
    n_slices = sum(e["ph"] == "X" for e in trace["traceEvents"])
    page = ReportPage(browser, page_path, "document.body.dataset.ready === '1'")
    assert page.ev("document.querySelectorAll('#xr-svg .xr-flow').length") == n_flows == 5
    assert page.ev("document.querySelectorAll('#xr-svg .xr-slice').length") == n_slices
    labels = page.ev("[...document.querySelectorAll('#xr-svg .xr-label')].map(t => t.textContent)")
    assert "rank 0 (d2)" in labels and "rank 1 (d7)" in labels
    page.page.click("#xr-svg .xr-flow >> nth=0")
    assert "rank 0 @" in page.ev("document.getElementById('xr-detail').textContent")
    page.close()


def test_the_page_is_self_contained_and_deterministic(build: Path) -> None:
    text = (build / "dfx_outputs/cross_rank_report.html").read_text()
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text
    trace = json.loads((build / "dfx_outputs/merged_comm_trace.json").read_text())
    assert render_cross_rank_report(report_model(trace)) == text


def test_the_run_report_has_the_cross_rank_trace_as_a_section(build: Path, browser: object) -> None:
    """dfx_outputs/run_report.html (the runtime DFX page) shows the merged trace: its "Cross-rank trace"
    section has the lanes of every rank on the common clock and an arrow per flow, details on click."""
    trace = json.loads((build / "dfx_outputs/merged_comm_trace.json").read_text())
    n_flows = sum(e["ph"] == "s" for e in trace["traceEvents"])
    page = ReportPage(browser, build / "dfx_outputs/run_report.html", "document.body.dataset.ready === '1'")
    assert page.ev("document.getElementById('rr-xr-section').hidden") is False
    assert page.ev("document.querySelectorAll('#rr-xr-section #xr-svg .xr-flow').length") == n_flows == 5
    labels = page.ev("[...document.querySelectorAll('#rr-xr-section .xr-label')].map(t => t.textContent)")
    assert "rank 0 (d2)" in labels and "rank 1 (d7)" in labels
    assert "2 ranks" in page.ev("document.querySelector('.report-subtitle').textContent")
    page.page.click("#xr-svg .xr-flow >> nth=0")
    assert "rank 0 @" in page.ev("document.getElementById('xr-detail').textContent")
    page.close()  # no script error, no network


def test_the_multi_chip_run_report_is_deterministic_and_single_chip_ones_have_no_cross_rank(build: Path) -> None:
    from types import SimpleNamespace

    from pypto.runtime.dfx.run_report import report_model as run_model
    from pypto.runtime.distributed.report import write_run_report_of_ranks

    trace = json.loads((build / "dfx_outputs/merged_comm_trace.json").read_text())
    text = (build / "dfx_outputs/run_report.html").read_text()
    (build / "again").mkdir()
    assert write_run_report_of_ranks(build / "again", report_model(trace)).read_text() == text  # same bytes
    assert 'id="rr-xr-section" aria-label="Cross-rank trace" hidden' in text  # the script shows it
    chip = SimpleNamespace(tasks=[], core_types={}, target_name="a2a3", clock_hz=1, total_cycles=0, graph=None)
    assert run_model(chip)["cross_rank"] is None  # a single-chip run: the section stays hidden
