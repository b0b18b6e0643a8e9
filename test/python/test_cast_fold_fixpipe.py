"""``pl.cast(acc, pl.BF16, mode="rint")`` of a matmul result feeding a second matmul (upstream's
``advanced/02_auto_tile_matmul``): folded into the cube's FIXPIPE write-back (an Acc -> Mat
``pl.tile.assemble``, ``pto.tinsert`` narrowing FP32 to BF16, round half to even), so the value
never leaves the cube. A result larger than L0C is written block by block into the scratch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig, run

ENGINES = ["interpreter", pytest.param("cpp", marks=pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"))]


@pl.jit
def chain(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chain"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


@pl.jit
def chain_round(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chain"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.BF16)
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_cast_rounds_half_to_even_on_fixpipe(engine: str) -> None:
    """c = 1 + 2^-8 is halfway between the BF16 values 1 and 1 + 2^-7: FIXPIPE gives 1 (ties to even;
    ties away would give 1 + 2^-7), and e = I passes it through the second matmul."""
    a = torch.zeros(64, 64, dtype=torch.bfloat16)
    a[:, 0], a[:, 1] = 1.0, 2.0**-8
    b = torch.zeros(64, 64, dtype=torch.bfloat16)
    b[0, :], b[1, :] = 1.0, 1.0
    e = torch.eye(64, 32, dtype=torch.bfloat16)
    out = torch.zeros(64, 32)
    compiled = chain.compile(a, b, e, out)
    text = compiled.lowered.as_python()
    assert "pl.tile.cast" not in text and "pl.Mem.Vec" not in text
    pto = "".join(p.read_text() for p in Path(compiled.output_dir).rglob("*.pto"))
    assert "pto.tinsert" in pto and "pto.tcvt" not in pto
    result = run(compiled, a, b, e, out, config=RunConfig(kernel_engine=engine))
    torch.testing.assert_close(out, torch.ones(64, 32), rtol=0, atol=0)
    if engine == "interpreter":
        (task,) = result.tasks
        (kernel,) = task.kernel_runs
        inserts = [r for r in kernel.records if r.instr.startswith("TINSERT")]
        assert inserts and all(r.pipe == "FIXPIPE" for r in inserts)
        assert not [r for r in kernel.records if r.instr.startswith("TCVT")]


@pytest.mark.parametrize("engine", ENGINES)
def test_large_result_is_written_into_the_scratch_block_by_block(engine: str) -> None:
    """[256, 64] @ [64, 256]: the FP32 [256, 256] result exceeds L0C, so each [128, 256] block goes
    through FIXPIPE into its window of the BF16 scratch; the second matmul splits K."""
    torch.manual_seed(0)
    a = torch.randn(256, 64, dtype=torch.bfloat16)
    b = torch.randn(64, 256, dtype=torch.bfloat16)
    e = torch.randn(256, 64, dtype=torch.bfloat16)
    out = torch.zeros(256, 64)
    result = run(chain.compile(a, b, e, out), a, b, e, out, config=RunConfig(kernel_engine=engine))
    golden = (a.float() @ b.float()).to(torch.bfloat16).float() @ e.float()
    torch.testing.assert_close(out, golden, rtol=1e-3, atol=1e-2)
    if engine == "interpreter":
        (task,) = result.tasks
        (kernel,) = task.kernel_runs
        assert len([r for r in kernel.records if r.instr.startswith("TINSERT")]) == 2


def test_round_mode_is_not_folded(tmp_path: Path) -> None:
    """The default mode ("round", ties away) does not match FIXPIPE: the cast stays on the vector core, and
    its result goes back to the cube for the second matmul (a pipe each way, the parts interleaved; it was a
    located error "is a tile in pl.Mem.Vec, expected pl.Mem.Mat")."""
    torch.manual_seed(0)
    a = torch.randn(64, 64, dtype=torch.bfloat16)
    e = torch.randn(64, 32, dtype=torch.bfloat16)
    out = torch.zeros(64, 32)
    result = run(chain_round.compile(a, a, e, out, config=RunConfig(save_kernels_dir=str(tmp_path / "b"))), a, a, e, out)
    golden = (a.float() @ a.float()).to(torch.bfloat16).float() @ e.float()  # ties (to even here) are rare
    torch.testing.assert_close(out, golden, rtol=1e-2, atol=1e-1)
    (task,) = result.tasks
    assert task.core_type == "mix" and not any(r.instr.startswith("TINSERT") for k in task.kernel_runs for r in k.records)


@pl.jit
def matmul_fp16_out(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, out_dtype=pl.FP16)
    return c


@pl.jit
def promoted_chain(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ab = pl.matmul(a, b)  # FP16 operands, no out_dtype: FP16, as upstream promotes
        out[:] = pl.matmul(ab, e, out_dtype=pl.FP32)
    return out


@pytest.mark.parametrize("engine", ENGINES)
def test_a_matmul_into_a_narrower_dtype_is_the_accumulator_then_a_cast(engine: str, tmp_path: Path) -> None:
    """``pl.matmul(a, b, out_dtype=pl.FP16)`` (upstream's flash attention writes it) and a matmul of FP16
    operands without ``out_dtype`` stopped in ConvertTensorToTileOps ("out_dtype pl.FP16 differs from the
    accumulator dtype pl.FP32"); they are the FP32 matmul then a cast rounding half to even, as the FIXPIPE
    write-back rounds: stored (on the vector core) or read by a second matmul (folded into the FIXPIPE)."""
    torch.manual_seed(0)
    a, b, e = torch.randn(32, 64).half(), torch.randn(64, 32).half(), torch.randn(32, 48).half()
    c = torch.zeros(32, 32).half()
    config = RunConfig(kernel_engine=engine, save_kernels_dir=str(tmp_path / "stored"))
    matmul_fp16_out(a, b, c, config=config)
    assert torch.equal(c, (a.float() @ b.float()).half())  # torch's FP32 -> FP16 is round half to even too
    out = torch.zeros(32, 48)
    promoted_chain(a, b, e, out, config=RunConfig(kernel_engine=engine, save_kernels_dir=str(tmp_path / "chain")))
    torch.testing.assert_close(out, (a.float() @ b.float()).half().float() @ e.float(), rtol=1e-5, atol=1e-5)
