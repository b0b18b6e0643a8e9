"""``enable_dep_gen``: deps.json and the name map (runtime-dfx-formats.md §4, §1) on a real run, and
``python -m pypto.tools.deps_viewer`` on them."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig
from pypto.runtime.dfx.deps import GM_BASE, fnv1a64, tensor_id
from pypto.tools import deps_viewer

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


@pl.jit
def chain(a: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_first"):
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_second"):
        y[:] = pl.mul(x, a)  # reads the first task's output
    return x, y


@pl.jit.inline
def _whole_then_low(a: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_whole"):
        x[:] = pl.add(a, a)
    low = x[16:32, 0:64]  # a host slice: the second task gets a view of the first one's output
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_low"):
        y = pl.assemble(y, pl.mul(low, low), [0, 0])
    return x, y


@pl.jit
def sliced(a: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    x, y = _whole_then_low(a, x, y)
    return x, y


def test_a_dependency_through_a_host_slice(tmp_path: Path) -> None:
    """The consumer reads a view of the memory its producer wrote whole: the edge's producer side is the
    producer's argument on that memory (it was an IndexError: the producer had no argument of that view), and
    the view says where it starts (rows 16-31 of 64 columns: element 1024), in deps.json and the args dump."""
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(16, 64)
    build = tmp_path / "build"
    sliced(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_dep_gen=True, enable_dump_args=2))
    torch.testing.assert_close(y, (2 * a[16:]) ** 2)
    deps = json.loads((build / "dfx_outputs" / "deps.json").read_text())
    (edge,) = [e for e in deps["edges"] if e["source"] == "tensormap"]
    assert (edge["pred"], edge["succ"]) == ("0", "1")
    assert edge["consumer_shape"] == [16, 64] and edge["consumer_start_offset"] == "1024"
    assert edge["producer_shape"] == [32, 64] and edge["producer_start_offset"] == "0"
    assert [a["start_offset"] for a in deps["tasks"][1]["args"]] == ["1024", "0"]
    assert deps_viewer.main([str(build / "dfx_outputs" / "deps.json")]) == 0
    manifest = json.loads((build / "dfx_outputs" / "args_dump" / "args_dump.json").read_text())
    low = [r for r in manifest["args"] if r["task_id"].endswith("1") and r["arg_index"] == 0]
    assert low and all(r["start_offset"] == 1024 and r["shape"] == [16, 64] for r in low)
    data = (build / "dfx_outputs" / "args_dump" / "args.bin").read_bytes()
    r = low[0]
    got = torch.frombuffer(bytearray(data[r["bin_offset"] : r["bin_offset"] + r["bin_size"]]), dtype=torch.float32)
    torch.testing.assert_close(got.reshape(16, 64), 2 * a[16:])  # the window's own bytes


def _run(tmp_path: Path, **flags: object) -> Path:
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    build = tmp_path / "build"
    chain(a, x, y, config=RunConfig(save_kernels_dir=str(build), enable_dep_gen=True, **flags))
    torch.testing.assert_close(y, 2 * a * a)
    return build / "dfx_outputs"


def test_fnv1a64_known_values() -> None:
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C


def test_deps_json_schema_and_values(tmp_path: Path) -> None:
    out = _run(tmp_path)
    doc = json.loads((out / "deps.json").read_text())
    assert set(doc) == {"tasks", "tensors", "edges"}
    t0, t1 = doc["tasks"]
    assert [t["task_id"] for t in doc["tasks"]] == ["0", "1"]  # ring 0: raw id = local id, as strings
    for t in doc["tasks"]:
        assert set(t) == {"task_id", "scope", "kernel_ids", "block_num", "args"}
        assert t["scope"] == "auto" and t["block_num"] == 1 and len(t["kernel_ids"]) == 3
        for a in t["args"]:
            assert set(a) == {"idx", "type", "tensor_id", "dtype", "shape", "start_offset", "strides"}
            assert isinstance(a["tensor_id"], str) and a["start_offset"] == "0"
            assert a["shape"] == [32, 64] and a["strides"] == [64, 1] and a["dtype"] == "FP32"
    assert [a["type"] for a in t0["args"]] == ["INPUT", "OUTPUT_EXISTING"]
    assert [a["type"] for a in t1["args"]] == ["INPUT", "INPUT", "OUTPUT_EXISTING"]
    # func_ids: the name map's numbering; both kernels are AIV (slot 1)
    names = json.loads((out / "name_map_build.json").read_text())
    assert names == {"level": 2, "orchestrator_name": None, "callable_id_to_name": {"0": "k_first", "1": "k_second"}}
    assert t0["kernel_ids"] == [-1, 0, -1] and t1["kernel_ids"] == [-1, 1, -1]

    tensors = {t["tensor_id"]: t for t in doc["tensors"]}
    for t in doc["tensors"]:
        assert set(t) == {"tensor_id", "buffer_addr", "version", "dtype", "buffer_numel"}
        assert all(isinstance(t[k], str) for k in ("tensor_id", "buffer_addr", "buffer_numel"))
        assert t["tensor_id"] == str(tensor_id(int(t["buffer_addr"]), t["version"]))  # FNV of addr + version
        assert t["buffer_numel"] == "2048"
    for t in doc["tasks"]:
        assert all(a["tensor_id"] in tensors for a in t["args"])
    # the second task reads the version of x the first one wrote; both read a's version 0
    x_written = t0["args"][1]["tensor_id"]
    assert t1["args"][0]["tensor_id"] == x_written and tensors[x_written]["version"] == 1
    assert t1["args"][1]["tensor_id"] == t0["args"][0]["tensor_id"]
    assert tensors[t0["args"][0]["tensor_id"]]["buffer_addr"] == str(GM_BASE)

    data = [e for e in doc["edges"] if e["source"] == "tensormap"]
    assert len(data) == 1
    e = data[0]
    assert (e["pred"], e["succ"], e["arg"], e["flags"], e["overlap"]) == ("0", "1", 0, ["wait"], "covered")
    assert e["tensor_id"] == x_written
    assert (e["consumer_dtype"], e["consumer_shape"], e["consumer_start_offset"], e["consumer_strides"]) == (
        "FP32", [32, 64], "0", [64, 1])  # fmt: skip
    assert (e["producer_shape"], e["producer_start_offset"], e["producer_strides"]) == ([32, 64], "0", [64, 1])
    for e in doc["edges"]:
        assert e["source"] in ("tensormap", "explicit")
        if e["source"] == "explicit":  # AutoDeriveTaskDependencies' pl.task_deps
            assert (e["pred"], e["succ"], e["arg"], e["flags"]) == ("0", "1", -1, ["wait", "retain"])
            assert "tensor_id" not in e


def test_deps_json_is_deterministic(tmp_path: Path) -> None:
    first = (_run(tmp_path / "a") / "deps.json").read_bytes()
    assert first == (_run(tmp_path / "b") / "deps.json").read_bytes()


def test_deps_viewer_text(tmp_path: Path) -> None:
    out = _run(tmp_path, enable_chip_swimlane=1)
    deps = out / "deps.json"
    proc = subprocess.run([sys.executable, "-m", "pypto.tools.deps_viewer", str(deps)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out / "deps_viewer.txt")
    n_edges = len(json.loads(deps.read_text())["edges"])
    assert (out / "deps_viewer.txt").read_text().splitlines() == [
        "SUMMARY",
        f"  source_deps_json: {deps}",
        "  tasks: 2",
        "  unique_task_edges: 1",
        f"  annotated_edges: {n_edges}",
        "  tensors: 3",
        "  perf_sidecar: yes",
        "  func_name_map: yes",
        "",
        "TASK INDEX",
        "TASK 0 kind=submit func_id=[-1,0,-1] fanin=0 fanout=1",
        "TASK 1 kind=submit func_id=[-1,1,-1] fanin=1 fanout=0",
        "",
        "=== TASK 0 kind=submit func_id=[-1,0,-1] ===",
        "FANIN 0",
        "FANOUT 1",
        "  -> 1",
        "",
        "=== TASK 1 kind=submit func_id=[-1,1,-1] ===",
        "FANIN 1",
        "  <- 0",
        "FANOUT 0",
    ]


def test_deps_viewer_kinds_rings_and_spmd(tmp_path: Path) -> None:
    ring = 1 << 32
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps({
        "tasks": [{"task_id": str(ring + 1), "kernel_ids": [3, -1, -1], "block_num": 4, "args": []},
                  {"task_id": str(ring + 2), "kernel_ids": [-1, -1, -1], "block_num": 1, "args": []}],
        "tensors": [],
        "edges": [{"pred": "5", "succ": str(ring + 1), "arg": 0, "source": "creator"},
                  {"pred": str(ring + 1), "succ": str(ring + 2), "arg": -1, "source": "explicit"}],
    }))  # fmt: skip
    (tmp_path / "names.json").write_text(json.dumps({"3": "mm"}))
    assert deps_viewer.main([str(deps), "--func-names", str(tmp_path / "names.json")]) == 0
    text = (tmp_path / "deps_viewer.txt").read_text()
    assert "TASK (0, 5) kind=alloc func_id=none fanin=0 fanout=1\n" in text
    assert "TASK (1, 1) kind=submit func_id=[3,-1,-1] SPMD block num = 4 fanin=1 fanout=1\n" in text
    assert "TASK (1, 2) kind=dummy func_id=none fanin=1 fanout=0\n" in text
    assert "  <- (0, 5)\n" in text and "  func_name_map: yes\n" in text and "  perf_sidecar: no\n" in text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"edges": [', "deps.json:1:12: not JSON"),
        ('{"tasks": []}', "expected a top-level 'edges' list"),
        ('{"edges": [{"pred": "0", "succ": 1.5}]}', "edges[0].succ: expected a uint64 as a JSON string"),
        ('{"edges": [], "tasks": [{"task_id": "0", "kernel_ids": "x"}]}', "tasks[0].kernel_ids"),
    ],
)
def test_deps_viewer_bad_input_is_a_located_error(tmp_path: Path, content: str, message: str, capsys) -> None:
    deps = tmp_path / "deps.json"
    deps.write_text(content)
    assert deps_viewer.main([str(deps)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"deps_viewer: error: {deps}") and message in err and "Traceback" not in err
    assert not (tmp_path / "deps_viewer.txt").exists()


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ([], "expected an object {tasks, tensors, edges}, got list"),
        ({"tasks": []}, "expected a top-level 'edges' list"),
        ({"edges": [{"pred": "0", "succ": 1.5}]}, "edges[0].succ: expected a uint64 as a JSON string, got 1.5"),
        ({"edges": [], "tasks": [{"task_id": "0", "kernel_ids": "x"}]}, "tasks[0].kernel_ids: expected a list"),
        ({"edges": [], "tasks": [{"task_id": "0", "block_num": True}]}, "tasks[0].block_num: expected an integer"),
    ],
)
def test_every_deps_reader_checks_a_parsed_document_with_check_deps(
    tmp_path: Path, doc: object, field: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """deps_viewer's ``check_deps`` checks a parsed deps.json and names the field (not a file); deps_viewer and
    the swimlane converter put their file and words before that same message (the converter took it apart: it
    removed the path from deps_viewer's message and told read errors by the exception's cause)."""
    from pypto.tools.deps_viewer import read_deps

    with pytest.raises(deps_viewer.DepsFormatError) as e:
        deps_viewer.check_deps(doc)
    message = str(e.value)
    assert message.startswith(field) and "\n" not in message
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps(doc))
    with pytest.raises(deps_viewer.DepsViewerError) as viewer:
        deps_viewer.load_deps(deps)
    assert str(viewer.value) == f"{deps}: {message}"
    with pytest.raises(ValueError) as converter:
        read_deps(deps)
    assert str(converter.value) == f"{deps}: deps.json does not have the documented tasks/edges: {message}"
    good = deps_viewer.check_deps({"tasks": [{"task_id": "4294967299"}], "edges": [{"pred": "1", "succ": 2}]})
    assert list(good.tasks) == [(1 << 32) | 3] and [(p, s) for p, s, _ in good.rows] == [(1, 2)]


def test_deps_viewer_names_a_folder_and_a_bad_name_map_as_what_they_are(tmp_path: Path, capsys) -> None:
    """A folder given as the deps.json is named as a folder (it said "no such file"), and an undecodable name
    map as the name map (it said "deps.json is not UTF-8 text")."""
    out = _run(tmp_path)
    assert deps_viewer.main([str(out)]) == 1
    assert f"{out}: is a folder (expected a deps.json: {out / 'deps.json'}?)" in capsys.readouterr().err
    names = tmp_path / "names.json"
    names.write_bytes(b"\xff\xfe")
    assert deps_viewer.main([str(out / "deps.json"), "--func-names", str(names)]) == 1
    assert f"{names}: the name map is not UTF-8 text" in capsys.readouterr().err


needs_graphviz = pytest.mark.skipif(
    shutil.which("dot") is None or importlib.util.find_spec("graphviz") is None,
    reason="Graphviz not installed (make test installs Debian graphviz and the PyPI package)",
)


@needs_graphviz
def test_deps_viewer_html(tmp_path: Path, capsys) -> None:
    out = _run(tmp_path, enable_chip_swimlane=1)
    assert deps_viewer.main([str(out / "deps.json"), "--format", "html", "--show-tensor-info"]) == 0
    page = out / "deps_viewer.html"
    assert capsys.readouterr().out.strip() == str(page)
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html and "<script" in html
    assert "<title>T0_0</title>" in html and "<title>T0_1</title>" in html  # a node per task
    assert "<title>T0_0&#45;&gt;T0_1</title>" in html  # the dependency, drawn once
    assert "0 · k_first ↓0 ↑1" in html and "1 · k_second ↓1 ↑0" in html  # names from the name map
    assert html.lower().count('fill="#ffb366"') >= 2 and "<ellipse" in html  # AIV tasks: orange ellipses
    assert "arg2 OUTPUT_EXISTING T2:fp32[32,64]" in html
    first = html
    assert deps_viewer.main([str(out / "deps.json"), "--format", "html", "--show-tensor-info"]) == 0
    assert page.read_text() == first  # deterministic


@needs_graphviz
def test_deps_viewer_html_spmd_and_missing_graphviz(tmp_path: Path, capsys, monkeypatch) -> None:
    deps = tmp_path / "deps.json"
    deps.write_text(json.dumps({"tasks": [{"task_id": "0", "kernel_ids": [0, 1, -1], "block_num": 8}], "edges": []}))
    assert deps_viewer.main([str(deps), "--format", "html"]) == 0
    html = (tmp_path / "deps_viewer.html").read_text()
    assert 'fill="#66cc99"' in html.lower() and ">x8<" in html and 'stroke="#c62828"' in html.lower()  # mix, SPMD
    capsys.readouterr()
    monkeypatch.setenv("PATH", str(tmp_path))  # no Graphviz executables
    assert deps_viewer.main([str(deps), "--format", "html", "--engine", "sfdp"]) == 1
    assert (
        capsys.readouterr().err == "deps_viewer: error: Graphviz 'sfdp' is not installed (apt-get install graphviz)\n"
    )


@pl.program
class DisjointRows:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, a: pl.Tensor[[16, 64], pl.FP32],
             dst: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        return pl.store(pl.add(t, t), [0, 0], dst)

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, src: pl.Tensor[[16, 64], pl.FP32],
             dst: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(src, [0, 0], [16, 64])
        return pl.store(t, [0, 0], dst)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
             mid: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        top = pl.slice(out, [16, 64], [0, 0])
        bottom = pl.slice(out, [16, 64], [16, 0])
        middle = pl.slice(out, [16, 64], [8, 0])
        top = self.fill(a, top)  # task 0: rows 0-15
        bottom = self.fill(a, bottom)  # task 1: rows 16-31, no row of task 0's
        mid = self.copy(middle, mid)  # task 2: reads rows 8-23, half of each
        mid = self.copy(top, mid)  # task 3: reads rows 0-15 (task 0's), rewrites mid (task 2's)
        return out


def test_tasks_writing_disjoint_windows_of_one_tensor_do_not_wait_for_each_other(tmp_path: Path) -> None:
    """Dependencies are per region of memory, as upstream's tensormap tracks them: two tasks writing disjoint
    rows of one output have no edge and run side by side (upstream's 04_paged_attention ran its 64 batches one
    after another); a task reading rows of both waits for both (overlap "other"), one reading rows of one
    waits for that one (overlap "covered")."""
    from pypto.runtime import run

    a, out, mid = torch.randn(16, 64), torch.zeros(32, 64), torch.zeros(16, 64)
    build = tmp_path / "build"
    result = run(DisjointRows, a, out, mid, config=RunConfig(save_kernels_dir=str(build), enable_dep_gen=True))
    torch.testing.assert_close(out, torch.cat([2 * a, 2 * a]))
    torch.testing.assert_close(mid, 2 * a)
    deps = json.loads((build / "dfx_outputs" / "deps.json").read_text())
    edges = sorted((e["pred"], e["succ"], e["arg"], e.get("overlap")) for e in deps["edges"] if e["source"] == "tensormap")
    assert edges == [
        ("0", "2", 0, "other"), ("0", "3", 0, "covered"), ("1", "2", 0, "other"), ("2", "3", 1, "covered"),
    ]  # fmt: skip
    windows = {e["succ"]: (e["consumer_start_offset"], e["producer_start_offset"]) for e in deps["edges"]
               if e["source"] == "tensormap" and e["pred"] == "1"}  # fmt: skip
    assert windows == {"2": ("512", "1024")}  # rows 8-23 and 16-31 of 64 columns
    tasks = {r.task_id: r for r in result.tasks}
    assert not tasks[1].deps and tasks[1].dispatch < tasks[0].end  # dispatched while task 0 runs


@pytest.mark.skipif(importlib.util.find_spec("graphviz") is None, reason="needs the graphviz Python package")
def test_deps_viewer_graph_dashes_explicit_only_pairs_and_reads_any_shape(tmp_path: Path) -> None:
    """A pair every row of which is explicit is dashed (found in one pass over the rows: a scan of the rows per
    pair took 178 s on 04_paged_attention's 69439 rows); a pair with a tensormap row is solid; an argument whose
    shape is not a list is drawn with shape ``?`` (it was a TypeError, an internal error)."""
    arg = {"idx": 0, "type": "INPUT", "tensor_id": "7", "dtype": "FP32", "shape": 5, "start_offset": "0", "strides": []}
    tasks = [{"task_id": str(i), "scope": "auto", "kernel_ids": [-1, 0, -1], "block_num": 1, "args": [arg]} for i in range(3)]
    edges = [{"pred": "0", "succ": "1", "arg": -1, "source": "explicit", "flags": ["wait", "retain"]},
             {"pred": "1", "succ": "2", "arg": -1, "source": "explicit", "flags": ["wait", "retain"]},
             {"pred": "1", "succ": "2", "arg": 0, "source": "tensormap", "flags": ["wait"], "overlap": "covered"}]  # fmt: skip
    path = tmp_path / "deps.json"
    path.write_text(json.dumps({"tasks": tasks, "tensors": [], "edges": edges}))
    source = deps_viewer.dot_source(path, show_tensor_info=True).source
    assert "T0_0 -> T0_1 [color=\"#B0B0B0\" style=dashed]" in source
    assert "\tT0_1 -> T0_2\n" in source and "fp32[?]" in source  # solid: a tensormap row
