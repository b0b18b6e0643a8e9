"""Tiles whose valid shape is known only at run time, on the simulated chip and in the torch code of
``pypto.debug.torch_codegen`` (``CompiledProgram.validate_ir`` runs every pass dump through it): each case a
place where the two disagreed. The device is the reference (an op works on the valid region, a store writes the
valid region only); every device result is also checked against plain torch math."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import pypto.language as pl
from pypto.debug.torch_codegen import runtime_source
from pypto.device.interpreter import DeviceError
from pypto.ir import compile as ir_compile
from pypto.runtime import RunConfig

S = -7.0
"""What the output holds before the kernel runs: a store must leave it outside the valid region."""


def _padded(x: torch.Tensor, shape: tuple[int, int]) -> torch.Tensor:
    out = torch.full(shape, S)
    out[: x.shape[0], : x.shape[1]] = x
    return out


def _device_and_torch(
    kernel: Any, ins: dict[str, Any], out: str, shape: tuple[int, int], want: torch.Tensor, tmp_path: Path
) -> None:
    """Run ``kernel`` on the simulated chip (``out`` prefilled with ``S``), check it against ``want``, then check
    the torch code of every pass dump against the same numbers."""
    names = list(kernel.param_names)
    args = [ins[k].clone() if isinstance(ins[k], torch.Tensor) else ins[k] for k in names if k != out]
    args.insert(names.index(out), torch.full(shape, S))
    kernel(*args, config=RunConfig(save_kernels_dir=str(tmp_path / "run")))
    device = args[names.index(out)]
    torch.testing.assert_close(device, want, rtol=1e-4, atol=1e-4)
    spec = [ins[k] if k != out else torch.full(shape, S) for k in names]
    program = ir_compile(kernel.specialize(*spec), output_dir=str(tmp_path / "build"))
    tensors = {k: (v.clone() if isinstance(v, torch.Tensor) else v) for k, v in zip(names, spec, strict=True)}
    program.validate_ir(tensors, {out: device}, rtol=1e-4, atol=1e-4)


# ---- transpose: the valid dims swap --------------------------------------------------------------------------


@pl.jit
def _transposed_rows(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="trans"):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[n, 32])
        tmp = pl.create_tile([16, 32], dtype=pl.FP32)
        pl.store(pl.tile.transpose(t, 0, 1, tmp), [0, 0], c)
    return c


@pl.jit
def _transposed_square(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="trans_sq"):
        t = pl.load(a, [0, 0], [16, 16], valid_shape=[n, 16])
        tmp = pl.create_tile([16, 16], dtype=pl.FP32)
        pl.store(pl.exp(pl.tile.transpose(t, 0, 1, tmp)), [0, 0], c)
    return c


def test_transpose_swaps_the_run_time_valid_shape(tmp_path: Path) -> None:
    """``pl.tile.transpose`` of an n x 32 tile is a 32 x n tile (``pto.ttrans``; ptoas swaps the valid dims).
    The torch code's transpose dropped the valid shape, so its store wrote the whole 32 x 16 tile (zeros in
    the columns past n) where the device writes 32 x n: "tensor 'c' mismatch, max abs diff 7"."""
    a = torch.randn(16, 32, generator=torch.Generator().manual_seed(0))
    _device_and_torch(_transposed_rows, {"a": a, "n": 11}, "c", (32, 16), _padded(a[:11].T, (32, 16)), tmp_path)


def test_transpose_of_a_square_tile_swaps_rows_and_columns(tmp_path: Path) -> None:
    """A square tile: the transposed 16 x 16 tile with n valid rows has n valid columns (the torch code kept
    n rows, had it kept anything: an element-wise op after it takes its input's valid shape)."""
    a = torch.randn(16, 16, generator=torch.Generator().manual_seed(1))
    want = _padded(torch.exp(a[:5].T), (16, 16))
    _device_and_torch(_transposed_square, {"a": a, "n": 5}, "c", (16, 16), want, tmp_path)


# ---- matmul: K is the valid extent both operands share ---------------------------------------------------------


@pl.jit
def _exp_then_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="exp_mm"):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[16, n])
        e = pl.move(pl.exp(t), target_memory=pl.Mem.Mat)  # exp of the padding is 1 in the torch code
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(e, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def _matmul_shifted_rhs(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_adds"):
        ta = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
        t = pl.load(b, [0, 0], [32, 32], valid_shape=[n, 32])
        tb = pl.move(pl.adds(t, 1.0), target_memory=pl.Mem.Mat)  # the padding rows hold 1 in the torch code
        acc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def test_matmul_contracts_the_lhs_valid_columns_only(tmp_path: Path) -> None:
    """The device's ``tmatmul`` contracts over K = min(lhs valid columns, rhs valid rows). The torch code's
    ``_matmul`` contracted over the whole tile, so the lhs padding (exp(0) = 1 after ``pl.exp``) was summed
    into every result: "max abs diff 10.4"."""
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(16, 32, generator=g), torch.randn(32, 32, generator=g)
    want = torch.exp(a[:, :11]) @ b[:11]
    _device_and_torch(_exp_then_matmul, {"a": a, "b": b, "n": 11}, "c", (16, 32), want, tmp_path)


def test_matmul_contracts_the_rhs_valid_rows_only(tmp_path: Path) -> None:
    """The same with the rhs the short side: a full 16 x 32 lhs times a (b + 1) with n valid rows is
    ``a[:, :n] @ (b[:n] + 1)`` on the device; the torch code summed the padding rows (1 after ``pl.adds``)."""
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(16, 32, generator=g), torch.randn(32, 32, generator=g)
    want = a[:, :11] @ (b[:11] + 1)
    _device_and_torch(_matmul_shifted_rhs, {"a": a, "b": b, "n": 11}, "c", (16, 32), want, tmp_path)


def _runtime() -> dict[str, Any]:
    ns: dict[str, Any] = {}
    exec(compile(runtime_source(), "<runtime>", "exec"), ns)  # noqa: S102
    return ns


@pytest.mark.parametrize(("a_trans", "b_trans"), [(False, False), (True, False), (False, True), (True, True)])
def test_runtime_matmul_valid_k_with_transposes(a_trans: bool, b_trans: bool) -> None:
    """``_matmul`` finds K on the transposed operands: a's valid columns (rows when ``a_trans``), b's valid
    rows (columns when ``b_trans``); the padding (here 100) takes no part."""
    rt = _runtime()
    g = torch.Generator().manual_seed(4)
    x, y = torch.randn(8, 16, generator=g), torch.randn(16, 8, generator=g)  # x: 5 x 11 valid, y: 11 x 6 valid
    xp, yp = torch.full((8, 16), 100.0), torch.full((16, 8), 100.0)
    xp[:5, :11], yp[:11, :6] = x[:5, :11], y[:11, :6]
    a = rt["_tag"](xp.T.contiguous() if a_trans else xp, (11, 5) if a_trans else (5, 11))
    b = rt["_tag"](yp.T.contiguous() if b_trans else yp, (6, 11) if b_trans else (11, 6))
    out = rt["_matmul"](a, b, torch.float32, a_trans, b_trans)
    assert rt["_valid_shape"](out) == (5, 6)
    torch.testing.assert_close(out[:5, :6], x[:5, :11] @ y[:11, :6], rtol=1e-5, atol=1e-5)


# ---- tensor-level ops (the dumps before ConvertTensorToTileOps) ----------------------------------------------


@pl.jit
def _tensor_slice_exp(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ts_exp"):
        s = pl.slice(a, [16, 32], [0, 0], valid_shape=[n, 32])
        c[:] = pl.exp(s)
    return c


@pl.jit
def _tensor_slice_row_sum(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ts_rsum"):
        s = pl.slice(a, [16, 32], [0, 0], valid_shape=[16, n])
        c[:] = pl.row_sum(pl.mul(s, 2.0))
    return c


@pl.jit
def _tensor_slice_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="ts_mm"):
        s = pl.slice(a, [16, 32], [0, 0], valid_shape=[16, n])
        c[:] = pl.matmul(pl.exp(s), b)
    return c


def test_tensor_level_elementwise_keeps_the_slice_valid_shape(tmp_path: Path) -> None:
    """``pl.slice(a, ..., valid_shape=[n, 32])`` then ``pl.exp`` on tensors: the device (after
    ConvertTensorToTileOps: a load of n x 32, an exp, a store of n x 32) writes n rows. The torch code of the
    tensor-level dumps (00 to 10) let only tile ops keep their operand's valid shape, so ``pl.tensor.exp``
    dropped it and the assemble wrote all 16 rows: "00_frontend.py: tensor 'c' mismatch, max abs diff 67"."""
    a = torch.randn(32, 32, generator=torch.Generator().manual_seed(5))
    want = _padded(torch.exp(a[:11]), (16, 32))
    _device_and_torch(_tensor_slice_exp, {"a": a, "n": 11}, "c", (16, 32), want, tmp_path)


def test_tensor_level_row_sum_of_an_elementwise_result(tmp_path: Path) -> None:
    """``pl.row_sum(pl.mul(s, 2.0))`` of a slice with n valid columns: the sum is over n columns (the torch
    code summed all 32 columns in the tensor-level dumps, the valid shape lost at the ``pl.tensor.muls``)."""
    a = torch.randn(32, 32, generator=torch.Generator().manual_seed(6))
    want = (2 * a[:16, :11]).sum(1, keepdim=True)
    _device_and_torch(_tensor_slice_row_sum, {"a": a, "n": 11}, "c", (16, 1), want, tmp_path)


def test_tensor_level_matmul_of_an_elementwise_result(tmp_path: Path) -> None:
    """``pl.matmul(pl.exp(s), b)`` with n valid columns in ``s``: K is n on the device; the torch code's
    tensor-level dumps summed the 21 padding columns (exp(0) = 1) times b's rows."""
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g)
    want = torch.exp(a[:16, :11]) @ b[:11]
    _device_and_torch(_tensor_slice_matmul, {"a": a, "b": b, "n": 11}, "c", (16, 32), want, tmp_path)


# ---- a run-time valid shape outside the tile ---------------------------------------------------------------------


@pl.jit
def _rows_exp(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_exp"):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[n, 32])
        pl.store(pl.exp(t), [0, 0], c)
    return c


@pytest.mark.parametrize("n", [20, -3])
def test_a_run_time_valid_shape_outside_the_tile_is_an_error_in_both(n: int, tmp_path: Path) -> None:
    """``valid_shape=[n, 32]`` of a 16 x 32 tile with n = 20 (or -3) at run time: the device stops at the
    ``pto.tload``; the torch code clipped n to 0..16 and ran on, so ``validate_ir`` reported a mismatch (or
    passed) instead of the mistake. It now stops naming the dump and the valid shape."""
    a = torch.randn(32, 32, generator=torch.Generator().manual_seed(8))
    with pytest.raises(DeviceError, match="pto.tload"):
        _rows_exp(a, torch.zeros(16, 32), n, config=RunConfig(save_kernels_dir=str(tmp_path / "run")))
    program = ir_compile(_rows_exp.specialize(a, torch.zeros(16, 32), n), output_dir=str(tmp_path / "build"))
    with pytest.raises(RuntimeError) as e:
        program.validate_ir({"a": a, "c": torch.zeros(16, 32), "n": n}, {"c": torch.zeros(16, 32)})
    assert "00_frontend.py: generated torch code failed: ValueError: tile.load: valid_shape" in str(e.value)
    assert f"[{n}, 32] is outside the tile's shape [16, 32]" in str(e.value), str(e.value)
