"""``pmu.csv`` (runtime-dfx-formats.md §5): the counters of every a2a3 event type, derived from the
interpreter's records of real runs, agree with the cycle model."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import pytest
import torch
from dfx_kernels import chain as twice

import pypto.language as pl
from pypto.runtime import RunConfig
from pypto.runtime.run import run

HEAD = ["thread_id", "core_id", "task_id", "func_id", "core_type", "pmu_total_cycles"]
SECTION_5 = {  # the a2a3 counters, spelled out as runtime-dfx-formats.md §5 lists them
    1: "cube_fp16_exec cube_int8_exec vec_fp32_exec vec_fp16_128lane_exec vec_fp16_64lane_exec vec_int32_exec "
    "vec_misc_exec",
    2: "vec_busy_cycles cube_busy_cycles scalar_busy_cycles mte1_busy_cycles mte2_busy_cycles mte3_busy_cycles "
    "icache_miss icache_req",
    4: "ub_read_req ub_write_req l1_read_req l1_write_req l2_read_req l2_write_req main_read_req main_write_req",
    5: "l0a_read_req l0a_write_req l0b_read_req l0b_write_req l0c_read_req l0c_write_req",
    6: "bankgroup_stall_cycles bank_stall_cycles vec_resc_conflict_cycles",
    7: "ub_read_bw_mte l2_write_bw main_mem_write_bw ub_write_bw_mte ub_read_bw_vector ub_write_bw_vector "
    "ub_read_bw_scalar ub_write_bw_scalar",
    8: "write_cache_hit write_cache_miss_allocate r0_read_cache_hit r0_read_cache_miss_allocate r1_read_cache_hit "
    "r1_read_cache_miss_allocate",
}
PIPES = {"vec": "VECTOR", "cube": "CUBE", "scalar": "SCALAR", "mte1": "MTE1", "mte2": "MTE2", "mte3": "MTE3"}
REQUEST_BYTES = 32  # a2a3.mlir: npu.target ... block_bytes = 32


pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


@pl.jit
def matmul_64(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(tc, [0, 0], c)
    return c


@pl.jit
def prescaled_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prescale_matmul"):
        ta = pl.mul(pl.load(a, [0, 0], [64, 64]), 2.0)
        tm = pl.move(ta, target_memory=pl.Mem.Mat)  # vector -> cube: the pipe
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def _run(kernel: str, build: Path, pmu: Any) -> tuple[Any, list[str], list[dict[str, str]], Path]:
    torch.manual_seed(0)
    config = RunConfig(save_kernels_dir=str(build), enable_pmu=pmu)
    if kernel == "vector":
        a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
        result = run(twice, a, x, y, config=config)
        torch.testing.assert_close(y, 2 * a * a)
    else:
        fn = matmul_64 if kernel == "matmul" else prescaled_matmul
        a, b, c = torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)
        result = run(fn, a, b, c, config=config)
        want = a @ b if kernel == "matmul" else (2 * a) @ b
        torch.testing.assert_close(c, want, rtol=1e-3, atol=1e-3)
    path = build / "dfx_outputs" / "pmu.csv"
    assert result.dfx_outputs["enable_pmu"] == [path]
    with path.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        rows = [dict(zip(header, r, strict=True)) for r in reader]
    return result, header, rows, path


def _total(rows: list[dict[str, str]], col: str) -> int:
    return sum(int(r[col]) for r in rows)


@pytest.mark.parametrize("event_type", [1, 2, 4, 5, 6, 7, 8])
def test_header_is_section_5_for_every_event_type(tmp_path: Path, event_type: int) -> None:
    result, header, rows, _ = _run("vector", tmp_path, event_type)
    assert header == [*HEAD, *SECTION_5[event_type].split(), "event_type"]
    assert len(rows) == 2 and {r["event_type"] for r in rows} == {str(event_type)}
    # one row per task, ordered by task id; task_id as 0x%016x; func_id: the kernels in program order
    assert [r["task_id"] for r in rows] == ["0x0000000000000000", "0x0000000000000001"]
    names = list(dict.fromkeys(t.func_name for t in result.tasks))  # chain defines its kernels as it calls them
    assert [int(r["func_id"]) for r in rows] == [names.index(t.func_name) for t in result.tasks]
    assert [int(r["pmu_total_cycles"]) for r in rows] == [t.cycles for t in result.tasks]
    assert all(r["core_type"] == "1" for r in rows)  # vector tasks on AIV cores
    assert [int(r["thread_id"]) for r in rows] == [result.core_to_thread[int(r["core_id"])] for r in rows]
    assert [int(r["core_id"]) for r in rows] == [t.core_ids[0] for t in result.tasks]


@pytest.mark.parametrize("kernel", ["vector", "matmul", "mixed"])
def test_pipe_busy_cycles_agree_with_the_cycle_model(tmp_path: Path, kernel: str) -> None:
    result, _, rows, _ = _run(kernel, tmp_path, 2)
    busy = result.per_pipe_busy()
    for prefix, pipe in PIPES.items():
        assert _total(rows, f"{prefix}_busy_cycles") == busy.get(pipe, 0), pipe
    assert sum(busy.get(p, 0) for p in PIPES.values()) > 0
    runs = [kr for t in result.tasks for kr in t.kernel_runs]
    assert _total(rows, "icache_req") == sum(len(kr.records) for kr in runs)
    assert _total(rows, "icache_miss") == 0
    assert len(rows) == len(runs)  # one row per task part
    if kernel == "mixed":  # a Group task: its AIC part and its AIV part, each on its own core
        assert [r["core_type"] for r in rows] == ["0", "1"]
        assert [int(r["core_id"]) for r in rows] == result.tasks[0].core_ids
        assert [int(r["pmu_total_cycles"]) for r in rows] == [kr.cycles for kr in result.tasks[0].kernel_runs]


def _mte2_bytes(result: Any) -> int:
    total = 0
    for t in result.tasks:
        for kr in t.kernel_runs:
            for rec in kr.records:
                if rec.pipe == "MTE2" and rec.kind == "transfer":
                    total += int(re.search(r"(\d+)B$", rec.detail).group(1))
    return total


def test_memory_requests_are_bytes_over_the_request_size(tmp_path: Path) -> None:
    result, _, rows, _ = _run("matmul", tmp_path, 4)
    loaded = 2 * 64 * 64 * 4  # a and b, fp32, GM -> L1 by MTE2
    assert _mte2_bytes(result) == loaded
    assert _total(rows, "l2_read_req") == _total(rows, "main_read_req") == loaded // REQUEST_BYTES
    assert _total(rows, "l1_write_req") == loaded // REQUEST_BYTES  # into L1
    assert _total(rows, "l1_read_req") == loaded // REQUEST_BYTES  # L1 -> L0A / L0B
    assert _total(rows, "l2_write_req") == _total(rows, "main_write_req") == 64 * 64 * 4 // REQUEST_BYTES  # c
    assert _total(rows, "ub_read_req") == _total(rows, "ub_write_req") == 0  # the cube path has no UB

    vec, _, vrows, _ = _run("vector", tmp_path / "v", 4)
    assert _total(vrows, "l2_read_req") == _mte2_bytes(vec) // REQUEST_BYTES > 0


def test_l0_and_l2_cache_counters(tmp_path: Path) -> None:
    _, _, rows, _ = _run("matmul", tmp_path / "l0", 5)
    tile = 64 * 64 * 4 // REQUEST_BYTES
    assert [_total(rows, f"{lv}_{rw}_req") for lv in ("l0a", "l0b", "l0c") for rw in ("read", "write")] == [tile] * 6
    result, _, rows, _ = _run("mixed", tmp_path / "l2", 8)
    # the AIC part pops the AIV part's push (an L2 hit, just written) and loads b (a cold miss)
    aic, aiv = rows
    assert (int(aic["r1_read_cache_hit"]), int(aic["r0_read_cache_miss_allocate"])) == (tile, tile)
    assert int(aiv["r0_read_cache_miss_allocate"]) == tile and int(aiv["write_cache_miss_allocate"]) == tile
    assert _total(rows, "write_cache_hit") == _total(rows, "r0_read_cache_hit") == 0


def test_arithmetic_counters_split_the_busy_cycles(tmp_path: Path) -> None:
    result, _, rows, _ = _run("mixed", tmp_path, 1)
    busy = result.per_pipe_busy()
    vec = ["vec_fp32_exec", "vec_fp16_128lane_exec", "vec_fp16_64lane_exec", "vec_int32_exec", "vec_misc_exec"]
    assert sum(_total(rows, c) for c in vec) == busy["VECTOR"]
    assert _total(rows, "vec_fp32_exec") > 0  # TMULS on fp32
    assert _total(rows, "cube_fp16_exec") + _total(rows, "cube_int8_exec") == busy["CUBE"] > 0
    _, _, rrows, _ = _run("mixed", tmp_path / "6", 6)
    assert all(r[c] == "0" for r in rrows for c in SECTION_5[6].split())


def test_bandwidths_are_bytes_per_cycle(tmp_path: Path) -> None:
    result, _, rows, _ = _run("matmul", tmp_path, 7)
    (row,) = rows
    cycles = int(row["pmu_total_cycles"])
    assert float(row["l2_write_bw"]) == pytest.approx(64 * 64 * 4 / cycles, abs=1e-4)
    assert float(row["ub_read_bw_vector"]) == 0.0


@pytest.mark.parametrize("event_type", [1, 2, 4, 5, 6, 7, 8])
def test_two_identical_runs_write_the_same_bytes(tmp_path: Path, event_type: int) -> None:
    *_, first = _run("mixed", tmp_path / "a", event_type)
    *_, second = _run("mixed", tmp_path / "b", event_type)
    assert first.read_bytes() == second.read_bytes()


def test_enable_pmu_true_is_pipe_utilization(tmp_path: Path) -> None:
    _, header, rows, _ = _run("vector", tmp_path, True)
    assert header[6:-1] == SECTION_5[2].split()
    assert {r["event_type"] for r in rows} == {"2"}
