"""Slices in an Orchestration function (upstream's qwen3 decode, ``rope_kv_cache_update``):
an ``@pl.jit.inline`` helper slices a table at a run-time position outside its
``pl.at`` scope and passes two windows of the same table to one kernel.

Before: InitMemRef failed verification (two parameters passed views of one
buffer); then the host interpreter could not run ``pl.tensor.slice``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.ir import compile
from pypto.runtime import run
from pypto.runtime.orchestration import OrchestrationError


@pl.jit.inline
def _rotate(x: pl.Tensor, table: pl.Tensor, pos: pl.Tensor, out: pl.Out[pl.Tensor]):
    p = pl.read(pos, [0])
    lo = table[p : p + 1, 0:64]
    hi = table[p : p + 1, 64:128]
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rot"):
        a = x[0:16, 0:64]
        b = x[0:16, 64:128]
        r = pl.sub(pl.col_expand_mul(a, lo), pl.col_expand_mul(b, hi))
        out = pl.assemble(out, r, [0, 0])
    return out


@pl.jit
def rotate(x: pl.Tensor, table: pl.Tensor, pos: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = _rotate(x, table, pos, out)
    return out


@pl.jit.inline
def _columns(table: pl.Tensor, out: pl.Out[pl.Tensor]):
    left = table[0:4, 0:64]  # four rows of half the columns: not contiguous
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cols"):
        out = pl.assemble(out, pl.add(left, left), [0, 0])
    return out


@pl.jit
def columns(table: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = _columns(table, out)
    return out


def test_two_slices_of_one_table_match_torch(tmp_path: Path) -> None:
    torch.manual_seed(0)
    x, table, out = torch.randn(16, 128), torch.randn(8, 128), torch.zeros(16, 64)
    pos = torch.tensor([5], dtype=torch.int32)
    compiled = compile(rotate.specialize(x, table, pos, out), output_dir=tmp_path / "build")
    result = run(compiled, x, table, pos, out)
    expected = x[:, :64] * table[5:6, :64] - x[:, 64:] * table[5:6, 64:]
    torch.testing.assert_close(out, expected)
    assert len(result.tasks) == 1 and result.problems == []


def test_non_contiguous_host_slice_is_a_located_error(tmp_path: Path) -> None:
    table, out = torch.randn(8, 128), torch.zeros(4, 64)
    compiled = compile(columns.specialize(table, out), output_dir=tmp_path / "build")
    with pytest.raises(OrchestrationError, match=r"test_host_slice.py:\d+:\d+.*not contiguous"):
        run(compiled, table, out)
