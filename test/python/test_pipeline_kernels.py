"""Kernels the pipeline tests compile (DSL source text, parsed with ``pl.parse``),
and a pass helper for test-only passes."""

from __future__ import annotations

from pathlib import Path

import pypto.language as pl
from pypto.ir import Program

ELEMENTWISE = """import pypto.language as pl


@pl.program
class add_chunks:
    @pl.function(type=pl.FunctionType.Orchestration)
    def add_chunks(
        self,
        a: pl.Tensor[[512, 128], pl.FP32],
        b: pl.Tensor[[512, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[512, 128], pl.FP32]],
    ) -> pl.Tensor[[512, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                x = pl.load(a, [i * 128, 0], [128, 128])
                y = pl.load(b, [i * 128, 0], [128, 128])
                pl.store(pl.add(x, y), [i * 128, 0], out)
        return out
"""

ADD = """import pypto.language as pl


@pl.program
class add:
    @pl.function(type=pl.FunctionType.Orchestration)
    def add(
        self,
        a: pl.Tensor[[128, 128], pl.FP32],
        b: pl.Tensor[[128, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
    ) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out
"""

SOFTMAX = """import pypto.language as pl


@pl.program
class softmax_rows:
    @pl.function(type=pl.FunctionType.Orchestration)
    def softmax_rows(
        self,
        x: pl.Tensor[[64, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
    ) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                t = pl.load(x, [i * 16, 0], [16, 128])
                tmp = pl.create_tile([16, 128], dtype=pl.FP32)
                mx = pl.row_max(t, tmp)
                e = pl.exp(pl.row_expand_sub(t, mx))
                s = pl.row_sum(e, tmp)
                pl.store(pl.row_expand_div(e, s), [i * 16, 0], out)
        return out
"""

KERNELS = {"add": ADD, "elementwise": ELEMENTWISE, "softmax": SOFTMAX}


def kernel(name: str, directory: Path) -> Program:
    """Write kernel ``name`` to ``directory/<name>.py`` and parse it (so
    locations point at a real file)."""
    path = directory / f"{name}_kernel.py"
    path.write_text(KERNELS[name])
    return pl.loads(path)


def test_kernels_parse(tmp_path: Path) -> None:
    for name in KERNELS:
        assert kernel(name, tmp_path).functions
