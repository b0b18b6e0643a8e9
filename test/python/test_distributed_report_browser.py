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
