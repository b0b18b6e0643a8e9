"""Kernels the run-time DFX tests share: two tasks, the second reading the first's output."""

from __future__ import annotations

import pypto.language as pl


@pl.jit
def chain(a: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_first"):
        x[:] = pl.add(a, a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_second"):
        y[:] = pl.mul(x, a)
    return x, y
