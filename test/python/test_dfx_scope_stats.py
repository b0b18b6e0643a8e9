"""``enable_scope_stats``: ``dfx_outputs/scope_stats/scope_stats.jsonl`` (runtime-dfx-formats.md §7, version 6)
on real runs, and ``python -m pypto.tools.scope_stats_plot``'s numbers on a hand-made file."""

from __future__ import annotations

import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig, run
from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.scope_stats import MAX_RING_DEPTH
from pypto.tools import scope_stats_plot as plot

ROOT = Path(__file__).resolve().parents[2]
META_KEYS = ["version", "fatal", "dropped", "total", "task_window_max", "heap_max", "dep_pool_max", "tensormap_max"]
RECORD_KEYS = ["site", "phase", "depth", "ring", "task_window_start", "task_window_end", "heap_start", "heap_end",
               "dep_pool_start", "dep_pool_end", "tensormap"]  # fmt: skip
ITERS = 3


@pytest.fixture(autouse=True)
def _own_flags():
    """These tests set the flags themselves; the suite's own come back after."""
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    yield
    set_dfx_defaults(**saved)


@pl.jit
def ss_looped(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(ITERS):
        tmp = pl.create_tensor([32, 64], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ss_rows"):
            t = pl.slice(a, [32, 64], [i * 32, 0])
            tmp[:] = pl.add(t, t)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ss_put"):
            out = pl.assemble(out, pl.add(tmp, tmp), [i * 32, 0])
    return out


def _line_of(fn: object, text: str) -> int:
    """The source line of ``fn`` holding ``text``."""
    src, first = inspect.getsourcelines(fn)  # type: ignore[arg-type]
    return first + next(i for i, line in enumerate(src) if text in line)


def _read(path: Path) -> tuple[dict, list[dict]]:
    lines = path.read_text().splitlines()
    return json.loads(lines[0]), [json.loads(x) for x in lines[1:]]


def _run_looped(build: Path, **flags: object):
    a, out = torch.randn(32 * ITERS, 64), torch.zeros(32 * ITERS, 64)
    result = run(ss_looped, a, out, config=RunConfig(save_kernels_dir=str(build), enable_scope_stats=True, **flags))
    torch.testing.assert_close(out, 4 * a)
    return result, build / "dfx_outputs" / "scope_stats" / "scope_stats.jsonl"


def _check_schema(meta: dict, records: list[dict]) -> None:
    assert list(meta) == META_KEYS
    assert (meta["version"], meta["fatal"], meta["dropped"], meta["total"]) == (6, False, 0, len(records))
    for k in ("task_window_max", "heap_max", "dep_pool_max"):
        assert len(meta[k]) == MAX_RING_DEPTH and all(isinstance(v, int) and v > 0 for v in meta[k])
    for r in records:
        assert list(r) == RECORD_KEYS
        assert r["phase"] in ("begin", "end") and r["ring"] == min(r["depth"], MAX_RING_DEPTH - 1)
    # properly nested: each end closes the latest open begin, of the same site and depth
    stack: list[dict] = []
    for r in records:
        if r["phase"] == "begin":
            assert r["depth"] == len(stack)
            stack.append(r)
        else:
            b = stack.pop()
            assert (b["site"], b["depth"], b["ring"]) == (r["site"], r["depth"], r["ring"])
    assert not stack
    # heads only grow, per ring; nothing is reclaimed on the simulator (tails 0)
    last: dict[int, dict] = {}
    for r in records:
        prev = last.get(r["ring"])
        for k in ("task_window", "heap", "dep_pool"):
            assert r[f"{k}_start"] == 0
            if prev is not None:
                assert r[f"{k}_end"] >= prev[f"{k}_end"], (k, prev, r)
        last[r["ring"]] = r
    assert all(a["tensormap"] <= b["tensormap"] for a, b in zip(records, records[1:], strict=False))


def test_loop_scopes_count_what_the_run_made(tmp_path: Path) -> None:
    result, path = _run_looped(tmp_path / "build")
    assert result.dfx_outputs["enable_scope_stats"] == [path]
    meta, records = _read(path)
    _check_schema(meta, records)
    assert meta["task_window_max"] == [16384] * 4 and meta["heap_max"] == [256 << 20] * 4
    assert meta["dep_pool_max"] == [16384] * 4 and meta["tensormap_max"] == 65536

    here = Path(__file__).name
    root = (
        f"{here}:{_line_of(ss_looped, 'def ss_looped')}"
    )
    loop = f"{here}:{_line_of(ss_looped, 'for i in pl.range')}"
    assert [(r["site"], r["phase"], r["depth"]) for r in records] == (
        [(root, "begin", 0)] + [(loop, p, 1) for _ in range(ITERS) for p in ("begin", "end")] + [(root, "end", 0)]
    )
    graph = result.graph
    created = [b for b in graph.buffers if b.origin.startswith("tensor.create")]
    assert len(graph.tasks) == 2 * ITERS and len(created) == ITERS
    end = records[-2]  # the last iteration's end: ring 1 holds every task and buffer of the loop
    assert end["task_window_end"] == len(graph.tasks) == len(result.tasks)
    assert end["heap_end"] == sum(b.nbytes for b in created) == ITERS * 32 * 64 * 4
    assert end["dep_pool_end"] == sum(len(t.deps) for t in graph.tasks)
    assert end["tensormap"] == ITERS + 1  # each tmp and out have a producer task
    for b, e in zip(records[1:-1:2], records[2:-1:2], strict=True):  # per iteration: 2 tasks, one tmp
        assert e["task_window_end"] - b["task_window_end"] == 2 and e["heap_end"] - b["heap_end"] == 32 * 64 * 4
    assert records[-1]["task_window_end"] == records[-1]["heap_end"] == 0  # the root scope (ring 0) issued nothing

    # same run, same bytes; the caps follow RunConfig
    _, again = _run_looped(tmp_path / "again")
    assert again.read_bytes() == path.read_bytes()
    _, capped = _run_looped(tmp_path / "capped", ring_task_window=8, ring_heap=[1 << 20, 1 << 16], ring_dep_pool=64)
    meta2, _ = _read(capped)
    assert meta2["task_window_max"] == [8] * 4 and meta2["dep_pool_max"] == [64] * 4
    assert meta2["heap_max"] == [1 << 20, 1 << 16, 256 << 20, 256 << 20]


def _example(rel: str) -> ModuleType:
    path = ROOT / "examples" / rel
    sys.path.insert(0, str(path.parent.parent))
    spec = importlib.util.spec_from_file_location("ss_example_" + path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_task_graph_example(tmp_path: Path) -> None:
    ex = _example("intermediate/07_task_graph.py")
    x, scratch, out = ex.make_inputs()
    result = run(
        ex.inferred_edge, x, scratch, out, config=RunConfig(save_kernels_dir=str(tmp_path), enable_scope_stats=True)
    )
    torch.testing.assert_close(out, ex.reference(x)["out"])
    meta, records = _read(tmp_path / "dfx_outputs" / "scope_stats" / "scope_stats.jsonl")
    _check_schema(meta, records)
    assert [(r["phase"], r["depth"], r["ring"]) for r in records] == [("begin", 0, 0), ("end", 0, 0)]
    assert (
        records[0]["site"]
        == records[1]["site"]
        == f"07_task_graph.py:{_line_of(ex.inferred_edge, 'def inferred_edge')}"
    )
    end = records[1]
    assert end["task_window_end"] == len(result.graph.tasks) == 2
    assert end["dep_pool_end"] == 1  # stage2 waits for stage1
    assert end["heap_end"] == 0  # no pl.create_tensor: both buffers are parameters
    assert end["tensormap"] == 2  # scratch and out have producers


def test_no_flag_no_file(tmp_path: Path) -> None:
    a, out = torch.randn(32 * ITERS, 64), torch.zeros(32 * ITERS, 64)
    result = run(ss_looped, a, out, config=RunConfig(save_kernels_dir=str(tmp_path)))
    assert "enable_scope_stats" not in result.dfx_outputs
    assert not (tmp_path / "dfx_outputs" / "scope_stats").exists()
    assert len(result.graph.scopes) == 2 + 2 * ITERS  # the walk records its scopes anyway


# ---- the plot ----------------------------------------------------------------------


def _rec(
    site: str, phase: str, depth: int, tw: tuple[int, int], heap: tuple[int, int], dp: tuple[int, int], tm: int
) -> dict:
    return {"site": site, "phase": phase, "depth": depth, "ring": min(depth, 3),
            "task_window_start": tw[0], "task_window_end": tw[1], "heap_start": heap[0], "heap_end": heap[1],
            "dep_pool_start": dp[0], "dep_pool_end": dp[1], "tensormap": tm}  # fmt: skip


MIB = 1 << 20
HAND = [
    {"version": 6, "fatal": False, "dropped": 0, "total": 6, "task_window_max": [16, 8, 8, 8],
     "heap_max": [4 * MIB, 2 * MIB, MIB, MIB], "dep_pool_max": [100, 10, 10, 10], "tensormap_max": 50},
    _rec("o.cpp:1", "begin", 0, (0, 0), (0, 0), (0, 0), 0),
    _rec("o.cpp:5", "begin", 1, (0, 0), (0, 0), (0, 0), 0),
    _rec("o.cpp:5", "end", 1, (0, 4), (0, MIB), (0, 3), 4),          # hw 4, live 4, alloc 4; heap 1 MiB
    _rec("o.cpp:5", "begin", 1, (2, 4), (MIB // 2, MIB), (1, 3), 4),
    _rec("o.cpp:5", "end", 1, (3, 6), (MIB // 2, 3 * MIB // 2), (2, 5), 5),  # hw 6-2=4, live 3, alloc 2
    _rec("o.cpp:1", "end", 0, (0, 1), (0, 0), (0, 0), 5),
]  # fmt: skip


def test_plot_numbers_of_a_hand_made_file(tmp_path: Path) -> None:
    src = tmp_path / "scope_stats.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in HAND) + "\n")
    meta, records = plot.load(src)
    payload = plot.build_payload(meta, records, src.name)
    pairs = payload["pairs"]
    assert [(p["index"], p["site"], p["ring"]) for p in pairs] == [
        (0, "o.cpp:5", 1),
        (1, "o.cpp:5", 1),
        (2, "o.cpp:1", 0),
    ]
    assert pairs[0]["task_window"] == {"high_water": 4, "live": 4, "alloc": 4}
    assert pairs[1]["task_window"] == {"high_water": 4, "live": 3, "alloc": 2}
    assert pairs[1]["heap"] == {"high_water": MIB, "live": MIB, "alloc": MIB // 2}
    assert pairs[1]["dep_pool"] == {"high_water": 4, "live": 3, "alloc": 2}
    assert pairs[2]["task_window"] == {"high_water": 1, "live": 1, "alloc": 1}
    rows = {(r["resource"], r["ring"]): r for r in payload["peaks"]}
    tw1 = rows[("task_window", 1)]
    keys = ("peak", "live_max", "alloc_max", "cap", "use", "scope")
    assert {k: tw1[k] for k in keys} == dict(zip(keys, (4, 4, 4, 8, 50.0, 0), strict=True))
    assert rows[("heap", 1)]["use"] == 50.0 and rows[("dep_pool", 1)]["use"] == 40.0
    tm = rows[("tensormap", None)]
    assert (tm["peak"], tm["use"], tm["context_ring"], tm["metric"]) == (
        5,
        10.0,
        1,
        "live entries",
    )  # first reached in scope 1 (ring 1)
    assert [r["use"] for r in payload["peaks"]] == sorted((r["use"] for r in payload["peaks"]), reverse=True)
    assert payload["peaks"][0]["resource"] == "task_window" and payload["peaks"][0]["ring"] == 1  # 50% first

    out = tmp_path / "report.html"
    proc = subprocess.run([sys.executable, "-m", "pypto.tools.scope_stats_plot", str(src), "-o", str(out)],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(out)
    page = out.read_text()
    assert "1.0000 MiB" in page and "50.00%" in page and 'id="ss-peaks"' in page
    assert "http://" not in page and "https://" not in page
    assert plot.main([str(src)]) == 0  # default: scope_stats.html next to the input
    assert (tmp_path / "scope_stats.html").read_bytes() == out.read_bytes()  # deterministic


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["{not json"], ":1: not JSON"),
        ([json.dumps({"version": 6})], ":1: the metadata line lacks fatal"),
        ([json.dumps({**HAND[0], "version": 4})], "version 4; expected 6"),
        ([json.dumps(HAND[0]), json.dumps({"site": "x"})], ":2: a scope record lacks phase"),
        ([json.dumps(HAND[0]), json.dumps(HAND[3])], ":2: an 'end' of o.cpp:5 (ring 1) with no open 'begin'"),
        ([json.dumps(HAND[0]), json.dumps({**HAND[1], "site": 123})], ":2: site 123 must be a string"),  # were
        ([json.dumps(HAND[0]), json.dumps({**HAND[1], "ring": -5})], ":2: ring -5 must be >= 0"),  # internal
        ([json.dumps({**HAND[0], "tensormap_max": "x"})], ":1: tensormap_max must be an integer >= 0"),  # errors
    ],
)
def test_plot_errors_name_the_file_and_line(tmp_path: Path, lines: list[str], message: str, capsys) -> None:
    src = tmp_path / "bad.jsonl"
    src.write_text("\n".join(lines) + "\n")
    assert plot.main([str(src)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"scope_stats_plot: error: {src}") and message in err, err
    assert not (tmp_path / "scope_stats.html").exists()
