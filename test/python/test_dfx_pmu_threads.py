"""``pmu.csv``'s ``thread_id`` (runtime-dfx-formats.md §5): the AICPU scheduler thread that drives the row's
core, as the swimlane records of the same run place that core and count that thread's dispatches."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves

BLOCKS = 24  # more AIV blocks than one scheduler thread's cores: the run uses several threads
ROWS = 8


@pl.jit.incore
def scale_block(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    row = pl.tile.get_block_idx() * ROWS
    pl.store(pl.mul(pl.load(x, [row, 0], [ROWS, 64]), 2.0), [row, 0], out)
    return out


@pl.jit
def scale_spmd(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(BLOCKS):
        out = scale_block(x, out)
    return out


def test_thread_id_is_the_scheduler_thread_of_the_core(tmp_path: Path) -> None:
    x, out = torch.randn(BLOCKS * ROWS, 64), torch.zeros(BLOCKS * ROWS, 64)
    scale_spmd(x, out, config=RunConfig(save_kernels_dir=str(tmp_path), enable_chip_swimlane=3, enable_pmu=2))
    torch.testing.assert_close(out, 2 * x)
    dfx = tmp_path / "dfx_outputs"
    records = json.loads((dfx / "chip_swimlane_records.json").read_text())
    with (dfx / "pmu.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == BLOCKS
    core_to_thread = records["metadata"]["core_to_thread"]
    assert [int(r["thread_id"]) for r in rows] == [core_to_thread[int(r["core_id"])] for r in rows]
    # each thread dispatched (popped) as many blocks as pmu.csv gives it rows
    popped = {i: sum(p.get("pop_hit", 0) for p in phases if p["kind"] == "dispatch")
              for i, phases in enumerate(records["aicpu_scheduler_phases"])}  # fmt: skip
    assert Counter(int(r["thread_id"]) for r in rows) == +Counter(popped)
    assert len({r["thread_id"] for r in rows}) > 1  # the blocks really span threads
