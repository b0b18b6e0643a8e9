"""Front-end forms upstream's model examples use (issue 15): integer scalars of different dtypes
mixed in arithmetic and loop bounds (upstream promotes within a category), slice sizes that follow
from the bounds' difference, and ``pl.create_tensor`` inside an InCore scope."""

from __future__ import annotations

import shutil

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.runtime import RunConfig


@pl.jit
def mixed_scalars(x: pl.Tensor, n: pl.Tensor, out: pl.Out[pl.Tensor]):
    """``n[0]`` is an INT32, loop indices are INDEX: the row arithmetic and the loop bound mix them."""
    with pl.at(level=pl.Level.CORE_GROUP):
        rows = pl.tensor.read(n, [0])
        for i in pl.range(rows):
            r = i * 1 + rows - rows
            t = pl.load(x, [r * 16, 0], [16, 64])
            pl.store(pl.add(t, t), [r * 16, 0], out)
    return out


@pytest.mark.parametrize(
    "engine",
    ["interpreter", pytest.param("cpp", marks=pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"))],
)
def test_mixed_integer_scalars_are_promoted(engine: str) -> None:
    """The kernel's GM read (``pl.tensor.read`` -> ``pto.load_scalar``) runs in both engines."""
    x = torch.randn(64, 64)
    n = torch.tensor([3], dtype=torch.int32)
    out = torch.zeros(64, 64)
    text = mixed_scalars.lower(x, n, out).as_python()
    assert "pl.tensor.read(n__ssa_v0, [0])" in text and "pl.range(pl.cast(rows__ssa_v0, pl.INDEX))" in text
    mixed_scalars(x, n, out, config=RunConfig(kernel_engine=engine))
    torch.testing.assert_close(out[:48], 2 * x[:48])
    assert torch.count_nonzero(out[48:]) == 0  # the loop ran n[0] = 3 times


@pl.jit
def affine_slices(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for k in pl.range(2):
            col = k * 32
            lo = x[0:16, col : col + 16]
            hi = x[0:16, col + 16 : col + 32]  # size 32 - 16
            whole = x[0:16, k * 32 : (k + 1) * 32]  # size 32
            out = pl.assemble(out, pl.add(lo, hi), [0, k * 16])
            out = pl.assemble(out, whole, [16, k * 32])
    return out


def test_slice_size_from_bound_difference() -> None:
    x = torch.randn(16, 64)
    out = torch.zeros(32, 64)
    affine_slices(x, out)
    for k in range(2):
        torch.testing.assert_close(out[0:16, k * 16 : k * 16 + 16], x[:, k * 32 : k * 32 + 16] + x[:, k * 32 + 16 : k * 32 + 32])
        torch.testing.assert_close(out[16:32, k * 32 : k * 32 + 32], x[:, k * 32 : k * 32 + 32])


def test_slice_size_still_needs_a_constant_difference() -> None:
    with pytest.raises(ParserTypeError, match="cannot infer a static slice size"):

        @pl.jit
        def bad(x: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                for k in pl.range(2):
                    out = pl.assemble(out, x[0:16, k : k * 2], [0, 0])
            return out

        bad(torch.zeros(16, 64), torch.zeros(16, 64))


@pl.jit
def acc_from_create(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    """upstream's qwen3 projection: the accumulator starts as pl.create_tensor in the scope."""
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.create_tensor([16, 32], dtype=pl.FP32)
        for kb in pl.range(2):
            k0 = kb * 32
            ta = a[:, k0 : k0 + 32]
            tb = b[k0 : k0 + 32, :]
            if k0 == 0:
                acc = pl.matmul(ta, tb, out_dtype=pl.FP32)
            else:
                acc = pl.matmul_acc(acc, ta, tb)
        out = pl.assemble(out, acc, [0, 0])
    return out


def test_create_tensor_in_incore_scope_is_an_accumulator_tile() -> None:
    torch.manual_seed(0)
    a, b = torch.randn(16, 64).half(), torch.randn(64, 32).half()
    out = torch.zeros(16, 32)
    acc_from_create(a, b, out)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


@pl.jit
def host_config(x: pl.Tensor, cfg: pl.Tensor, out: pl.Out[pl.Tensor]):
    """upstream's paged attention reads its run-time config on the host: the loop count comes from ``cfg``."""
    n = pl.tensor.read(cfg, [1])
    for i in pl.range(pl.cast(n, pl.INDEX)):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [i * 16, 0], [16, 128])
            pl.store(pl.mul(t, 3.0), [i * 16, 0], out)
    return out


def test_orchestration_reads_a_config_tensor_and_casts_the_scalar() -> None:
    x = torch.randn(64, 128)
    cfg = torch.tensor([7, 2, 9], dtype=torch.int64)
    out = torch.zeros(64, 128)
    host_config(x, cfg, out)
    torch.testing.assert_close(out[:32], 3 * x[:32])
    assert torch.count_nonzero(out[32:]) == 0  # two iterations: cfg[1]


@pl.jit
def host_reads_kernel_output(x: pl.Tensor, tmp: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [16, 128])
        pl.store(t, [0, 0], tmp)
    n = pl.tensor.read(tmp, [0, 0])
    for _i in pl.range(pl.cast(n, pl.INDEX)):
        with pl.at(level=pl.Level.CORE_GROUP):
            t2 = pl.load(x, [0, 0], [16, 128])
            pl.store(t2, [0, 0], out)
    return out


def test_host_read_of_a_kernel_output_is_a_clear_error() -> None:
    from pypto.runtime.orchestration import OrchestrationError

    with pytest.raises(OrchestrationError, match="which a kernel writes"):
        host_reads_kernel_output(torch.ones(16, 128), torch.zeros(16, 128), torch.zeros(16, 128))


def test_scalar_cast_needs_a_dtype() -> None:
    with pytest.raises(ParserTypeError, match="the target must be a dtype"):

        @pl.jit
        def bad(cfg: pl.Tensor, out: pl.Out[pl.Tensor]):
            n = pl.tensor.read(cfg, [0])
            for _i in pl.range(pl.cast(n, 3)):
                with pl.at(level=pl.Level.CORE_GROUP):
                    pl.store(pl.load(out, [0, 0], [16, 128]), [0, 0], out)
            return out

        bad(torch.zeros(2, dtype=torch.int64), torch.zeros(16, 128))


@pl.jit
def scope_local_tensor(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    """upstream's qwen3 MLP: a tensor one scope makes is read by the next scope."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="gate"):
        g = pl.exp(x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="use"):
        out = pl.assemble(out, pl.mul(g, x), [0, 0])
    return out


def test_tensor_made_in_one_scope_feeds_the_next() -> None:
    x = torch.randn(16, 128)
    out = torch.zeros(16, 128)
    scope_local_tensor(x, out)
    torch.testing.assert_close(out, torch.exp(x) * x, rtol=1e-5, atol=1e-5)


@pl.program
class ScalarArgs:
    """upstream's paged attention: a kernel reads a 1-D table with a scalar index (``pl.read(t, i)``),
    clamps with the scalar ``pl.min`` / ``pl.max``, and takes an INDEX parameter passed an INT64."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[64, 128], pl.FP32],
        table: pl.Tensor[[4], pl.INT64],
        n: pl.Scalar[pl.INDEX],
        out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
    ) -> pl.Tensor[[64, 128], pl.FP32]:
        for i in pl.range(n):
            row = pl.max(pl.min(pl.read(table, i), 3), 0) * 16
            t = pl.load(x, [row, 0], [16, 128])
            out = pl.store(t, [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 128], pl.FP32],
        table: pl.Tensor[[4], pl.INT64],
        out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
    ) -> pl.Tensor[[64, 128], pl.FP32]:
        n = pl.tensor.read(table, [0])
        out = self.k(x, table, n, out)
        return out


def test_scalar_index_read_min_max_and_int64_argument() -> None:
    import pypto.ir as ir
    from pypto.runtime import run

    x = torch.randn(64, 128)
    table = torch.tensor([3, 9, -2, 1], dtype=torch.int64)  # n = 3 rows: table[0..2] clamped to [0, 3]
    out = torch.zeros(64, 128)
    run(ir.compile(ScalarArgs), x, table, out)
    for i, r in enumerate([3, 3, 0]):
        torch.testing.assert_close(out[i * 16 : i * 16 + 16], x[r * 16 : r * 16 + 16])
    assert torch.count_nonzero(out[48:]) == 0
