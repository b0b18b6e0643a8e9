"""The run-time DFX viewers as commands (``python -m pypto.tools.<name>``) on a real run's artefacts: one rule
for a missing output folder, deps_viewer's ``--edge-mode`` (upstream's), and its page's legend."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
from report_browser import CHROMIUM, ReportPage, launch_browser
from run_report_kernels import rr_diamond as diamond  # task 0 writes x; 1 reads x, writes y; 2 reads both

from pypto.runtime import RunConfig
from pypto.tools import deps_viewer

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves
needs_graphviz = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dfx_outputs of a run with every viewer's input: deps.json, swimlane records, args dump, scope stats."""
    from pypto.runtime import config as run_config
    from pypto.runtime.config import set_dfx_defaults

    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        build = tmp_path_factory.mktemp("viewers") / "build"
        a, x, y, z = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
        flags = {"enable_dep_gen": True, "enable_chip_swimlane": 4, "enable_dump_args": 2, "enable_scope_stats": True}
        diamond(a, x, y, z, config=RunConfig(save_kernels_dir=str(build), **flags))
        torch.testing.assert_close(z, 2 * a + 2 * a * a)
    finally:
        set_dfx_defaults(**saved)
    return build / "dfx_outputs"


def _tool(name: str, *argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"pypto.tools.{name}", *map(str, argv)], capture_output=True, text=True, timeout=120
    )


# ---- a missing output folder ---------------------------------------------------------------------


def test_every_viewer_refuses_a_missing_output_folder_alike(run_dir: Path, tmp_path: Path) -> None:
    """``-o``/``--out`` in a folder that does not exist: exit 1, ``output directory does not exist: <folder>``,
    and nothing made (scope_stats_plot and dump_viewer --export made the folders, /nonexistent as root)."""
    jsonl = next((run_dir / "scope_stats").glob("*.jsonl"))
    missing = tmp_path / "no" / "such"
    calls = {
        "swimlane_converter": (run_dir / "chip_swimlane_records.json", "-o", missing / "t.json"),
        "deps_viewer": (run_dir / "deps.json", "-o", missing / "d.txt"),
        "scope_stats_plot": (jsonl, "-o", missing / "s.html"),
        "dump_viewer": (run_dir / "args_dump", "--export", "--out", missing / "q"),
    }
    for name, argv in calls.items():
        p = _tool(name, *argv)
        assert p.returncode == 1, (name, p.stderr)
        assert p.stderr == f"{name}: error: output directory does not exist: {missing}\n", name
        assert not (tmp_path / "no").exists(), name


def test_dump_viewer_makes_its_export_folder_when_its_parent_exists(run_dir: Path, tmp_path: Path) -> None:
    """The export folder itself is made (upstream makes its ``txt/``), and only that: a file in its place
    is refused naming it."""
    out = tmp_path / "q"
    p = _tool("dump_viewer", run_dir / "args_dump", "--export", "--out", out)
    assert p.returncode == 0, p.stderr
    manifest = json.loads((run_dir / "args_dump" / "args_dump.json").read_text())
    assert len(list(out.iterdir())) == len(manifest["args"]) > 0
    taken = tmp_path / "a_file"
    taken.write_text("keep")
    p = _tool("dump_viewer", run_dir / "args_dump", "--export", "--out", taken)
    assert p.returncode == 1 and p.stderr.startswith(f"dump_viewer: error: {taken}: a file, not a folder")
    assert taken.read_text() == "keep"


# ---- deps_viewer --edge-mode ---------------------------------------------------------------------


def _implied(pairs: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The pairs (u, v) with another path u -> ... -> v (a search per pair: the definition, not the code)."""

    def reaches(u: str, v: str, skip: tuple[str, str]) -> bool:
        todo, seen = [u], {u}
        while todo:
            n = todo.pop()
            for p, s in pairs:
                if p == n and (p, s) != skip and s not in seen:
                    if s == v:
                        return True
                    seen.add(s)
                    todo.append(s)
        return False

    return {(u, v) for u, v in pairs if reaches(u, v, (u, v))}


def _text_pairs(path: Path) -> set[tuple[str, str]]:
    """The pairs a text view lists (its FANOUT lines)."""
    pairs, task = set(), None
    for line in path.read_text().splitlines():
        if line.startswith("=== TASK "):
            task = line.split()[2]
        elif line.startswith("  -> "):
            pairs.add((task, line.split()[1]))
    return pairs


def test_edge_modes_on_a_real_run(run_dir: Path, tmp_path: Path) -> None:
    """reduced lists the implied pairs on stdout and writes deps_viewer_reduced.txt without them; omitted only
    them; the _dataflow modes are the same here (the runtime writes no creator edge, the only kind they
    treat otherwise); full writes deps_viewer.txt with every pair."""
    deps = tmp_path / "deps.json"
    shutil.copy(run_dir / "deps.json", deps)
    doc = json.loads(deps.read_text())
    pairs = {(e["pred"], e["succ"]) for e in doc["edges"]}
    implied = _implied(pairs)
    assert ("0", "2") in implied and not any(e["source"] == "creator" for e in doc["edges"])
    for mode, want in [("full", pairs), ("reduced", pairs - implied), ("omitted", implied),
                       ("reduced_dataflow", pairs - implied), ("omitted_dataflow", implied)]:  # fmt: skip
        p = _tool("deps_viewer", deps, "--edge-mode", mode)
        assert p.returncode == 0, p.stderr
        out = tmp_path / ("deps_viewer.txt" if mode == "full" else f"deps_viewer_{mode}.txt")
        lines = p.stdout.splitlines()
        assert lines[-1] == str(out) and _text_pairs(out) == want, mode
        if mode != "full":
            assert sorted(lines[1:-1]) == sorted(f"  - {u} -> {v}" for u, v in implied), mode
            assert f"unique_task_edges: {len(want)}\n" in out.read_text()
    assert "TASK 2 kind=submit" in (tmp_path / "deps_viewer_omitted.txt").read_text()  # every task stays a node


def test_edge_mode_to_stdout_keeps_the_view_clean(run_dir: Path) -> None:
    """``-o -``: the view alone on stdout, the dropped pairs on stderr."""
    p = _tool("deps_viewer", run_dir / "deps.json", "--edge-mode", "reduced", "-o", "-")
    assert p.returncode == 0 and p.stdout.startswith("SUMMARY\n") and "  - 0 -> 2" in p.stderr


def _inout_chain(tmp_path: Path, last_type: str = "INOUT") -> Path:
    """Task 0 creates a buffer; tasks 1, 2, 3 update it whole in place (INOUT), each after the one before
    (tensormap), each holding 0's creation (creator)."""
    view = {"tensor_id": "9", "dtype": "FP32", "shape": [4, 16], "start_offset": "0", "strides": [16, 1]}
    consumer = {f"consumer_{k}": view[k] for k in ("dtype", "shape", "start_offset", "strides")}
    producer = {f"producer_{k}": view[k] for k in ("shape", "start_offset", "strides")}
    tasks = [{"task_id": "0", "kernel_ids": [-1, 0, -1], "args": []}]
    tasks += [{"task_id": str(t), "kernel_ids": [-1, 0, -1], "args": [{"idx": 0, "type": "INOUT", **view}]}
              for t in (1, 2, 3)]  # fmt: skip
    tasks[2]["args"][0]["type"] = last_type
    edges = [{"pred": "0", "succ": str(t), "arg": 0, "source": "creator", "flags": ["wait", "retain"],
              "tensor_id": "9", **consumer} for t in (1, 2, 3)]  # fmt: skip
    edges += [{"pred": str(t), "succ": str(t + 1), "arg": 0, "source": "tensormap", "flags": ["wait"],
               "overlap": "covered", "tensor_id": "9", **consumer, **producer} for t in (1, 2)]  # fmt: skip
    tensors = [{"tensor_id": "9", "buffer_addr": "4096", "version": "0", "dtype": "FP32", "buffer_numel": "64"}]
    path = tmp_path / "deps.json"
    path.write_text(json.dumps({"tasks": tasks, "tensors": tensors, "edges": edges}))
    return path


def test_dataflow_modes_drop_a_creator_edge_only_on_proof(tmp_path: Path) -> None:
    """(0, 2) and (0, 3) are implied by 0->1->2->3. reduced keeps both (creator rows hold a lifetime);
    reduced_dataflow drops (0, 2): its every byte flows in from 1 and out to 3, INOUTs of the same creator;
    (0, 3) has no later INOUT, so it stays. An OUTPUT_EXISTING at task 2 (a reuse boundary) keeps (0, 2)."""
    deps = _inout_chain(tmp_path)
    graph = deps_viewer.load_deps(deps)
    removed = {m: set(graph.pairs) - set(deps_viewer.select_edges(graph, m, False).graph.pairs)
               for m in ("reduced", "reduced_dataflow", "omitted_dataflow")}  # fmt: skip
    assert removed["reduced"] == set()
    assert removed["reduced_dataflow"] == {(0, 2)}
    assert removed["omitted_dataflow"] == set(graph.pairs) - {(0, 2)}
    graph = deps_viewer.load_deps(_inout_chain(tmp_path, "OUTPUT_EXISTING"))
    assert set(graph.pairs) == set(deps_viewer.select_edges(graph, "reduced_dataflow", False).graph.pairs)


def test_a_cycle_is_shown_whole_with_a_warning(tmp_path: Path) -> None:
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps({"edges": [{"pred": "0", "succ": "1"}, {"pred": "1", "succ": "0"}]}))
    p = _tool("deps_viewer", deps, "--edge-mode", "omitted")
    assert p.returncode == 0 and p.stdout == f"{tmp_path / 'deps_viewer.txt'}\n"
    assert p.stderr == (
        "deps_viewer: warning: dependency graph has a cycle; transitive reduction skipped, emitting full graph "
        "(--edge-mode omitted ignored)\n"
    )
    assert _text_pairs(tmp_path / "deps_viewer.txt") == {("0", "1"), ("1", "0")}



@needs_graphviz
def test_a_cycles_page_does_not_claim_the_mode_it_ignored(tmp_path: Path) -> None:
    """The HTML view of a cyclic graph draws every edge, and its header says so: not "(omitted; 2 laid out)"."""
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps({"edges": [{"pred": "0", "succ": "1"}, {"pred": "1", "succ": "0"}]}))
    p = _tool("deps_viewer", deps, "--edge-mode", "omitted", "--format", "html")
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "deps_viewer.html").read_text()
    assert "<b>2</b> edges</span>" in page and "omitted" not in page


def _svg(path: Path) -> ET.Element:
    html = path.read_text()
    return ET.fromstring(html[html.index("<svg") : html.index("</svg>") + 6])


@needs_graphviz
def test_edge_mode_html_keeps_the_layout_and_draws_the_unselected_edges_below(run_dir: Path, tmp_path: Path) -> None:
    """Every edge is laid out (the nodes sit where the full view puts them); the unselected ones are in the
    page's background colour, drawn before the selected ones; the legend counts the shown edges."""
    pytest.importorskip("graphviz")
    deps = tmp_path / "deps.json"
    shutil.copy(run_dir / "deps.json", deps)
    implied = _implied({(e["pred"], e["succ"]) for e in json.loads(deps.read_text())["edges"]})
    assert deps_viewer.main([str(deps), "--format", "html"]) == 0
    assert deps_viewer.main([str(deps), "--format", "html", "--edge-mode", "reduced"]) == 0
    ns = "{http://www.w3.org/2000/svg}"

    def groups(root: ET.Element, kind: str) -> list[ET.Element]:
        return [g for g in root.iter(f"{ns}g") if kind in g.get("class", "").split()]

    def placed(root: ET.Element) -> dict[str, str]:
        return {g.find(f"{ns}title").text: ET.tostring(g) for g in groups(root, "node")}

    full, reduced = _svg(tmp_path / "deps_viewer.html"), _svg(tmp_path / "deps_viewer_reduced.html")
    assert placed(reduced) == placed(full)
    edges = groups(reduced, "edge")
    hidden = [e for e in edges if "hidden-edge" in e.get("class", "")]
    assert {tuple(e.find(f"{ns}title").text.replace("T0_", "").split("->")) for e in hidden} == implied
    assert all(e.find(f"{ns}path").get("stroke") == deps_viewer.PAGE_BACKGROUND for e in hidden)
    order = [e in hidden for e in edges]
    assert order == sorted(order, reverse=True)  # the hidden ones first: below the shown ones
    shown = len(edges) - len(hidden)
    assert (
        f"<b>{shown}</b> edges (reduced; {len(edges)} laid out)" in (tmp_path / "deps_viewer_reduced.html").read_text()
    )


# ---- the page's legend ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium not installed (make test installs it)")
    yield from launch_browser()


@needs_graphviz
def test_the_legend_never_covers_the_graph(tmp_path: Path, browser: object) -> None:
    """A tall graph drawn top to bottom, fitted to the window: the legend bar covered the top SPMD node's
    ``xN`` label. The legend now sits above the graph's area, so no node meets it."""
    pytest.importorskip("graphviz")
    tasks = [{"task_id": "0", "kernel_ids": [0, 1, -1], "block_num": 24}]
    tasks += [{"task_id": str(i), "kernel_ids": [-1, 1, -1]} for i in range(1, 8)]
    edges = [{"pred": str(i), "succ": str(i + 1)} for i in range(7)]
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps({"tasks": tasks, "edges": edges}))
    assert deps_viewer.main([str(deps), "--format", "html", "--direction", "TB"]) == 0
    page = ReportPage(browser, tmp_path / "deps_viewer.html", "document.querySelector('#stage svg') !== null")
    for key in ("", "f"):  # as opened, and fitted again
        if key:
            page.page.keyboard.press(key)
        boxes = page.ev("""(() => {
          const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
          return {legend: box(document.getElementById('hud')), node: box(document.querySelector('svg g.node')),
                  xn: Array.from(document.querySelectorAll('svg g.node text')).filter(t => t.textContent === 'x24')
                        .map(box)};
        })()""")
        legend, node = boxes["legend"], boxes["node"]
        assert len(boxes["xn"]) == 1 and node[1] <= boxes["xn"][0][1]  # the first node's box holds its xN
        apart = legend[2] <= node[0] or node[2] <= legend[0] or legend[3] <= node[1] or node[3] <= legend[1]
        assert apart, boxes
    page.close()
