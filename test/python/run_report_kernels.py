"""Small kernels and helpers shared by the run report's tests (test_run_report*.py): a diamond of three
vector tasks, and a mixed graph (a cube+vector Group task, an independent vector task, a vector task
joining both)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch

import pypto.language as pl
from pypto.runtime import RunConfig
from pypto.runtime.run import run


@pl.jit
def rr_diamond(a: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor], z: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rr_first"):
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rr_second"):
        y[:] = pl.mul(x, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rr_third"):
        z[:] = pl.add(x, y)
    return x, y, z


@pl.jit
def rr_mixed(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], d: pl.Out[pl.Tensor], e: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rr_prescale_mm"):
        ta = pl.mul(pl.load(a, [0, 0], [64, 64]), 2.0)
        tm = pl.move(ta, target_memory=pl.Mem.Mat)  # vector -> cube: one Group task on AIC + AIV
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rr_double"):
        d[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rr_join"):
        e[:] = pl.add(c, d)
    return c, d, e


def run_kernel(kernel: str, build: Path, **flags: Any) -> Any:
    """Run ``kernel`` ("diamond" or "mixed") with ``flags``, its artefacts under ``build``; the RunResult."""
    torch.manual_seed(0)
    config = RunConfig(save_kernels_dir=str(build), **flags)
    if kernel == "diamond":
        args = [torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)]
        fn = rr_diamond
    else:
        args = [torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64), torch.zeros(64, 64), torch.zeros(64, 64)]
        fn = rr_mixed
    return run(fn, *args, config=config)


def embedded(html: str) -> dict[str, Any]:
    """The JSON a report page embeds (``PyptoReport.data``)."""
    m = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', html, re.S)
    assert m, "no embedded report data"
    return json.loads(m.group(1))
