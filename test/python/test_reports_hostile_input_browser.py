"""Every HTML report with hostile input, checked in headless Chromium (Playwright, Debian's
/usr/bin/chromium): names with HTML/JS specials, backslashes and undecodable bytes; each page must
render the text as written, raise no console error and make no request."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from report_browser import CHROMIUM, ReportPage, launch_browser

import pypto.language as pl
from pypto import ir
from pypto.runtime import RunConfig
from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.run_report import REPORT_NAME
from pypto.runtime.run import run
from pypto.tools import deps_viewer, scope_stats_plot
from pypto.tools.ir_trace import cli as ir_trace
from pypto.tools.memory_map import cli as memory_map

HOSTILE = "</script><script>alert(1)</script> &amp; \"q' \\ 🎉"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium not installed (make test installs it)")
    yield from launch_browser()


@pl.jit
def hostile_softmax(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(2):
            t = pl.load(x, [i * 16, 0], [16, 128])
            tmp = pl.create_tile([16, 128], dtype=pl.FP32)
            mx = pl.row_max(t, tmp)
            pl.store(pl.row_expand_sub(t, mx), [i * 16, 0], out)
    return out


@pytest.fixture(scope="module")
def build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compiled kernel's build directory (its pass dumps)."""
    root = tmp_path_factory.mktemp("hostile")
    program = hostile_softmax.specialize(torch.randn(32, 128), torch.empty(32, 128))
    return Path(ir.compile(program, output_dir=root / "build", dump_passes=True).output_dir)


@pl.jit
def hostile_no_task(a: pl.Tensor, x: pl.Out[pl.Tensor]):
    for _ in pl.range(0):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="never"):
            x[:] = pl.add(a, a)
    return x


@pytest.fixture(scope="module")
def no_task_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dfx_outputs of a run with no task (swimlane level 4, dep_gen, PMU, scope stats)."""
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        build = tmp_path_factory.mktemp("hostile_run") / "build"
        flags = {"enable_chip_swimlane": 4, "enable_dep_gen": True, "enable_pmu": 2, "enable_scope_stats": True}
        run(
            hostile_no_task,
            torch.randn(16, 64),
            torch.zeros(16, 64),
            config=RunConfig(save_kernels_dir=str(build), **flags),
        )
    finally:
        set_dfx_defaults(**saved)
    return build / "dfx_outputs"


def _scope_stats(path: Path, site: str, *pairs: tuple[dict[str, int], dict[str, int]]) -> Path:
    """A scope_stats.jsonl: one ring, a scope per (begin, end) override pair (default: one scope)."""
    meta = {"version": 6, "fatal": False, "dropped": 0, "total": 2, "task_window_max": [16], "heap_max": [1 << 20],
            "dep_pool_max": [8], "tensormap_max": 4}  # fmt: skip
    rec = {"site": site, "depth": 0, "ring": 0, "task_window_start": 0, "task_window_end": 1, "heap_start": 0,
           "heap_end": 64, "dep_pool_start": 0, "dep_pool_end": 1, "tensormap": 0}  # fmt: skip
    lines: list[dict[str, object]] = [meta]
    for begin, end in pairs or (({}, {}),):
        lines += [{**rec, **begin, "phase": "begin"}, {**rec, **end, "phase": "end"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


# ---- a lone surrogate (an undecodable file name, a JSON "\ud800") ----------------------------------


def test_ir_trace_undecodable_snapshot_name(
    tmp_path: Path, browser: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A snapshot whose name is not UTF-8 (os.listdir gives a lone surrogate) keeps it in the page's data
    (a JSON escape; the browser draws U+FFFD) and in its HTML as U+FFFD; the report used to stop with "'utf-8' codec can't encode character '\\udcff'", naming no file."""
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "00_frontend.py").write_text("def f():\n    return 1\n")
    (dump / f"01_after_{HOSTILE.replace('/', '')}.py").write_text("def f():\n    return 2\n")
    (dump / os.fsdecode(b"02_after_X\xff.py")).write_text("def f():\n    return 3\n")
    out = tmp_path / "trace.html"
    assert ir_trace.main([str(dump), "-o", str(out)]) == 0, capsys.readouterr().err
    page = ReportPage(browser, out, "window.IRTrace !== undefined")
    names = page.ev("Array.from(document.querySelectorAll('.irt-name')).map(e => e.textContent)")
    assert names == ["frontend", HOSTILE.replace("/", ""), "X\udcff"]
    page.ev("document.querySelectorAll('.irt-pass')[2].click()")
    assert page.ev("document.getElementById('irt-pass-title').textContent") == "02 X\udcff"
    page.close()


def test_ir_trace_long_pass_name_keeps_the_panes_aligned(
    tmp_path: Path, browser: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pass name as long as a file name may be is cut in the pane header (its title has it whole), and
    the two panes' rows stay side by side; the After header's copy button used to wrap onto three lines
    and push its rows 32 px below their Before rows."""
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "00_frontend.py").write_text("def f():\n    return 1\n")
    long = "VeryLongPassName" * 14
    (dump / f"01_after_{long}.py").write_text("def f():\n    return 2\n")
    out = tmp_path / "trace.html"
    assert ir_trace.main([str(dump), "-o", str(out)]) == 0, capsys.readouterr().err
    page = ReportPage(browser, out, "window.IRTrace !== undefined")
    for layout in ("side", "stack"):
        page.ev(f"IRTrace.setLayout('{layout}')")
        heads = page.ev("Array.from(document.querySelectorAll('.irt-copy')).map(b => b.getBoundingClientRect().height)")
        assert heads[0] == heads[1], heads  # type: ignore[index]
    page.ev("IRTrace.setLayout('side')")
    tops = page.ev(
        "['a', 'b'].map(s => document.querySelector('#irt-canvas-' + s + ' .r').getBoundingClientRect().top)"
    )
    assert tops[0] == tops[1], tops  # type: ignore[index]
    assert page.ev("document.getElementById('irt-file-b').title") == f"01_after_{long}.py"
    page.close()


def test_scope_stats_lone_surrogate_site(tmp_path: Path, browser: object, capsys: pytest.CaptureFixture[str]) -> None:
    """A site spelled with a lone surrogate escape (valid JSON) renders as U+FFFD, twice byte-identical;
    the report used to stop with "'utf-8' codec can't encode character '\ud800'"."""
    src = _scope_stats(tmp_path / "scope_stats.jsonl", HOSTILE + " \ud800")
    out = tmp_path / "ss.html"
    assert scope_stats_plot.main([str(src), "-o", str(out)]) == 0, capsys.readouterr().err
    first = out.read_bytes()
    assert scope_stats_plot.main([str(src), "-o", str(out)]) == 0
    assert out.read_bytes() == first
    page = ReportPage(browser, out, "window.ScopeStats !== undefined")
    assert page.ev("document.querySelector('#ss-peaks td:last-child').textContent") == HOSTILE + " \ufffd"
    page.ev("document.querySelector('#ss-peaks tbody tr').click()")
    assert page.ev("document.querySelectorAll('.ss-panel.ss-sel').length") == 1
    page.close()


def test_memory_map_undecodable_folder(
    browser: object, tmp_path: Path, build: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dump in a folder whose name is not UTF-8 is drawn; the map used to
    stop with "'utf-8' codec can't encode character '\\udcff'" (it printed every op's location)."""
    dump = tmp_path / os.fsdecode("</script>&amp;\"'\\🎉".replace("/", "").encode() + b"\xff") / "passes_dump"
    shutil.copytree(build / "passes_dump", dump)
    out = tmp_path / "mm.html"
    assert memory_map.main([str(dump.parent), "-o", str(out)]) == 0, capsys.readouterr().err
    page = ReportPage(browser, out, "window.MemoryMap !== undefined")
    info = page.ev("document.getElementById('mm-info').textContent")
    assert "<script>&amp;\"'\\🎉\udcff/passes_dump/" in info, info
    page.ev("document.querySelector('[data-box]').click()")
    assert page.ev("document.querySelectorAll('.mm-line.mm-hl-def').length"), "a tile's lines were not marked"
    page.close()


def _points(page: ReportPage, panel: str) -> list[tuple[str, float]]:
    """(title, cy) of every dot in a scope-stats panel, and its charts' heights."""
    return page.ev(  # type: ignore[return-value]
        f"Array.from(document.querySelectorAll('#{panel} circle'))"
        ".map(c => [c.querySelector('title').textContent, +c.getAttribute('cy'), c.ownerSVGElement.viewBox.baseVal.height])"
    )


def test_scope_stats_scope_that_frees_stays_on_its_chart(
    tmp_path: Path, browser: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scope that frees more task-window slots than it took (alloc -7, high water -5) is drawn inside its
    chart, with a tick for its value; it used to be drawn at y=864 of a 150-pixel chart (not seen)."""
    shrink = ({"task_window_start": 8, "task_window_end": 10}, {"task_window_start": 2, "task_window_end": 3})
    src = _scope_stats(tmp_path / "s.jsonl", "k.py:3", shrink, ({}, {}))
    out = tmp_path / "ss.html"
    assert scope_stats_plot.main([str(src), "-o", str(out)]) == 0, capsys.readouterr().err
    page = ReportPage(browser, out, "window.ScopeStats !== undefined")
    dots = _points(page, "ss-panel-task_window-0")
    assert {t for t, _, _ in dots} >= {"high water · scope 0: -5", "alloc · scope 0: -7"}
    assert all(0 <= cy <= h for _, cy, h in dots), dots
    ticks = page.ev("Array.from(document.querySelectorAll('#ss-panel-task_window-0 .ss-tick')).map(t => t.textContent)")
    assert "-7" in ticks and "-5" in ticks, ticks
    page.close()


def test_scope_stats_one_scope_and_negative_counts(
    tmp_path: Path, browser: object, capsys: pytest.CaptureFixture[str]
) -> None:
    """One scope: one "scope 0" label under its dot (not "scope 0" at both ends) and one "0" tick on a flat
    chart; a negative count in the file is an error naming the file, line and field."""
    out = tmp_path / "ss.html"
    assert scope_stats_plot.main([str(_scope_stats(tmp_path / "s.jsonl", "k.py:3")), "-o", str(out)]) == 0
    page = ReportPage(browser, out, "window.ScopeStats !== undefined")
    charts = page.ev(
        "Array.from(document.querySelectorAll('.ss-chart')).map(c => Array.from(c.querySelectorAll('.ss-tick'))"
        ".map(t => t.textContent + '@' + t.getAttribute('x') + ',' + t.getAttribute('y')))"
    )
    for ticks in charts:  # type: ignore[union-attr]
        assert len(set(ticks)) == len(ticks), ticks
        assert [t for t in ticks if t.startswith("scope")] == ["scope 0@306.0,144"], ticks
    page.close()
    capsys.readouterr()
    bad = _scope_stats(tmp_path / "bad.jsonl", "k.py:3", ({}, {"heap_end": -64}))
    assert scope_stats_plot.main([str(bad), "-o", str(tmp_path / "bad.html")]) == 1
    assert capsys.readouterr().err == f"scope_stats_plot: error: {bad}:3: heap_end -64; expected counts >= 0\n"
    assert not (tmp_path / "bad.html").exists()


# ---- the run report --------------------------------------------------------------------------------


def _axis(page: ReportPage) -> list[tuple[str, float]]:
    return page.ev(  # type: ignore[return-value]
        "Array.from(document.querySelectorAll('#rr-swimlane .rr-axis text'))"
        ".map(t => [t.textContent, +t.getAttribute('x')])"
    )


def test_run_report_no_task_and_full_zoom_axis(browser: object, no_task_run: Path) -> None:
    """The swimlane's ticks are whole cycles, one label each: with no task (0-1 cycles) or zoomed in to
    4 cycles the axis used to read 0 0 0 0 0 1 1 1 1 1 1 (labels rounded, drawn between cycles)."""
    page = ReportPage(browser, no_task_run / REPORT_NAME, "window.RunReport !== undefined")
    for zoom in (None, 1000):
        if zoom:
            page.ev(f"RunReport.zoom({zoom})")
        ticks = _axis(page)
        labels = [t for t, _ in ticks]
        assert len(labels) >= 2 and len(set(labels)) == len(labels), labels
        assert [int(t) for t in labels] == sorted(int(t) for t in labels)
    for sel in ("button", "tr", "li"):
        page.ev(
            f"document.querySelectorAll('{sel}').forEach(e => e.dispatchEvent(new MouseEvent('click', {{bubbles: true}})))"
        )
    page.close()


# ---- deps_viewer --format html -----------------------------------------------------------------------


def test_deps_viewer_backslashes_are_text(tmp_path: Path, browser: object, capsys: pytest.CaptureFixture[str]) -> None:
    """Kernel names and tensor fields with backslashes and HTML specials are drawn as written; Graphviz
    used to read them as escapes (``a\\"b\\`` drawn ``a"b``, ``\\N`` as the node id, ``\\G`` the graph's)."""
    if shutil.which("dot") is None:
        pytest.skip("Graphviz not installed")
    pytest.importorskip("graphviz")
    names = {"0": HOSTILE, "1": 'a\\"b\\', "2": "\\N \\G \\L"}
    args = [{"idx": 0, "type": "in<b>", "tensor_id": "7", "dtype": "fp\\32", "shape": [4, 8]}]
    tasks = [{"task_id": str(i), "kernel_ids": [i, -1, -1], "args": args} for i in range(3)]
    deps = tmp_path / "deps.json"
    deps.write_text(
        json.dumps({"tasks": tasks, "edges": [{"pred": "0", "succ": "1"}], "tensors": [{"tensor_id": "7"}]})
    )
    (tmp_path / "name_map_k.json").write_text(json.dumps({"callable_id_to_name": names}))
    out = tmp_path / "deps.html"
    argv = [str(deps), "--format", "html", "--show-tensor-info", "-o", str(out)]
    assert deps_viewer.main(argv) == 0, capsys.readouterr().err
    page = ReportPage(browser, out, "document.querySelector('#stage svg') !== null")
    text = page.ev("Array.from(document.querySelectorAll('svg g.node text')).map(t => t.textContent)")
    assert text == [
        f"0 · {HOSTILE} ↓0 ↑1", "arg0 in<b> T0:fp\\32[4,8]",
        '1 · a\\"b\\ ↓1 ↑0', "arg0 in<b> T0:fp\\32[4,8]",
        "2 · \\N \\G \\L ↓0 ↑0", "arg0 in<b> T0:fp\\32[4,8]",
    ]  # fmt: skip
    page.close()


# ---- an output path that is an input --------------------------------------------------------------


def test_output_that_names_the_input_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``-o`` naming the input (by any name) is an error and the input is kept; scope_stats_plot and
    deps_viewer used to replace their input with the page."""
    src = _scope_stats(tmp_path / "scope_stats.jsonl", "k.py:1")
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps({"tasks": [{"task_id": "0"}], "edges": []}))
    names = tmp_path / "name_map_k.json"
    names.write_text(json.dumps({"callable_id_to_name": {"0": "k"}}))
    (tmp_path / "link.json").symlink_to(deps)
    cases = [
        (scope_stats_plot.main, [str(src), "-o", str(src)], src),
        (deps_viewer.main, [str(deps), "-o", str(tmp_path / "link.json")], deps),
        (deps_viewer.main, [str(deps), "-o", str(names)], names),
    ]
    for main, argv, victim in cases:
        before = victim.read_bytes()
        capsys.readouterr()
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert "writing there would overwrite the input" in err and err.count("\n") == 1, err
        assert victim.read_bytes() == before
