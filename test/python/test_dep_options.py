"""Dependency opt-outs of upstream's manual (issue 15): ``pl.at(..., no_dep_args=[t])``,
``with pl.manual_scope():`` and the timing-only hint ``allow_early_resolve=``."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError

N, TR, TC = 4, 32, 64


@pl.jit
def tracked(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(N):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [i * TR, 0], [TR, TC])
            pl.store(pl.mul(t, 2.0), [i * TR, 0], out)
    return out


@pl.jit
def narrow(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(N):
        with pl.at(level=pl.Level.CORE_GROUP, no_dep_args=[out]):
            t = pl.load(a, [i * TR, 0], [TR, TC])
            pl.store(pl.mul(t, 2.0), [i * TR, 0], out)
    return out


@pl.jit
def region(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.manual_scope():
        for i in pl.range(N):
            with pl.at(level=pl.Level.CORE_GROUP):
                t = pl.load(a, [i * TR, 0], [TR, TC])
                pl.store(pl.mul(t, 2.0), [i * TR, 0], out)
    return out


@pl.jit
def early(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, allow_early_resolve=True):
        out[:] = pl.mul(a, 2.0)
    return out


def _run(kernel) -> list[tuple[int, int]]:
    torch.manual_seed(0)
    a = torch.randn(N * TR, TC)
    out = torch.zeros(N * TR, TC)
    compiled = kernel.compile(a, out)
    compiled(a, out)
    torch.testing.assert_close(out, a * 2.0)
    return compiled.last_run.graph.edges()


def test_tracked_writes_chain_the_tasks() -> None:
    assert _run(tracked) == [(0, 1), (1, 2), (2, 3)]  # WAW on out, iteration after iteration


@pytest.mark.parametrize("kernel", [narrow, region], ids=["no_dep_args", "manual_scope"])
def test_opt_outs_drop_the_inferred_edges(kernel) -> None:
    assert _run(kernel) == []


def test_no_dep_args_printed_and_checked() -> None:
    a = torch.zeros(N * TR, TC)
    assert "no_dep_args=[out]" in narrow.specialize(a, a).as_python()
    assert "allow_early_resolve=True" in early.specialize(a, a).as_python()
    assert _run(early) == []  # the hint changes timing only
    src = narrow.specialize(a, a).as_python().replace("no_dep_args=[out]", "no_dep_args=[missing]")
    with pytest.raises(ParserTypeError, match="'missing' is not a tensor defined before the scope"):
        pl.parse(src)
