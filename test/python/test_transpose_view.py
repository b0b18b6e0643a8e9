"""``pl.tile.transpose_view`` (issue 15: upstream's zero-copy NZ <-> ZN view, used by every model
example for ``q @ k.T``): the typing rule, the ``.pto`` it lowers to, and the numbers of both
kernel engines against torch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import pypto.ir as ir
import pypto.language as pl
from pypto.dialects.enums import MemorySpace, TileLayout
from pypto.errors import ParserTypeError
from pypto.runtime import RunConfig, run


@pl.program
class QK:
    @pl.function(type=pl.FunctionType.InCore)
    def qk(
        self,
        q: pl.Tensor[[16, 128], pl.BF16],
        k: pl.Tensor[[64, 128], pl.BF16],
        out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
    ) -> pl.Tensor[[16, 64], pl.FP32]:
        q_l1 = pl.load(q, [0, 0], [16, 128], target_memory=pl.MemorySpace.Mat)
        k_nat = pl.load(k, [0, 0], [64, 128], target_memory=pl.MemorySpace.Mat)
        k_t: pl.Tile[[128, 64], pl.BF16, pl.Mem.Mat] = pl.tile.transpose_view(k_nat)
        a = pl.move(q_l1, target_memory=pl.MemorySpace.Left)
        b = pl.move(k_t, target_memory=pl.MemorySpace.Right)
        out = pl.store(pl.matmul(a, b), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        q: pl.Tensor[[16, 128], pl.BF16],
        k: pl.Tensor[[64, 128], pl.BF16],
        out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
    ) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.qk(q, k, out)
        return out


@pl.jit
def shared_operand(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor], out_t: pl.Out[pl.Tensor]):
    """One Mat load of ``b`` feeds ``a @ b`` and, through the view, ``a @ b.T``."""
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
        la = pl.move(ta, target_memory=pl.MemorySpace.Left)
        rb = pl.move(tb, target_memory=pl.MemorySpace.Right)
        rbt = pl.move(pl.tile.transpose_view(tb), target_memory=pl.MemorySpace.Right)
        pl.store(pl.matmul(la, rb), [0, 0], out)
        pl.store(pl.matmul(la, rbt), [0, 0], out_t)
    return out, out_t


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(0)
    return torch.randn(16, 128).bfloat16(), torch.randn(64, 128).bfloat16(), torch.zeros(16, 64)


def test_type_swaps_dims_and_flips_layouts() -> None:
    prog = QK.as_python()
    assert "pl.tile.transpose_view(k_nat)" in prog
    f = next(op for op in QK.module.walk() if op.name == "pl.tile.transpose_view")
    t = f.results[0].type
    assert t.get_shape() == (128, 64) and t.memory_space is MemorySpace.Mat
    v = t.effective_view()
    # Mat's NZ (col_major blocks, row_major fractals) becomes ZN; the annotation without a
    # pl.TileView keeps the view the op gives.
    assert (v.blayout.data, v.slayout.data) == (TileLayout.row_major, TileLayout.col_major)


def test_vec_nd_becomes_dn() -> None:
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            t = pl.load(x, [0, 0], [16, 32])
            v = pl.tile.transpose_view(t)
            out = pl.store(v, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            out = self.k(x, out)
            return out

    op = next(op for op in P.module.walk() if op.name == "pl.tile.transpose_view")
    v = op.results[0].type.effective_view()
    assert op.results[0].type.get_shape() == (32, 16)
    assert (v.blayout.data, v.slayout.data) == (TileLayout.col_major, TileLayout.none_box)
    # the DN view of a row-major [16, 32] tile, stored, is its transpose
    x, out = torch.randn(16, 32), torch.zeros(32, 16)
    run(ir.compile(P), x, out)
    torch.testing.assert_close(out, x.T)


def test_lowers_to_treshape(tmp_path: Path) -> None:
    ir.compile(QK, output_dir=str(tmp_path))
    pto = (tmp_path / "ptoas" / "qk.pto").read_text()
    line = next(ln for ln in pto.splitlines() if "pto.treshape" in ln)
    assert "rows=64, cols=128" in line.split("->")[0] and "blayout=col_major, slayout=row_major" in line.split("->")[0]
    assert "rows=128, cols=64" in line.split("->")[1] and "blayout=row_major, slayout=col_major" in line.split("->")[1]
    # zero copy: no tmov/ttrans between the Mat load and the move to Right reads the view
    assert "pto.ttrans" not in pto


@pytest.mark.parametrize(
    "engine",
    ["interpreter", pytest.param("cpp", marks=pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"))],
)
def test_qk_matches_torch(engine: str, tmp_path: Path) -> None:
    q, k, out = _inputs()
    compiled = ir.compile(QK, output_dir=str(tmp_path))
    run(compiled, q, k, out, config=RunConfig(kernel_engine=engine))
    torch.testing.assert_close(out, q.float() @ k.float().T, rtol=1e-4, atol=1e-3)


def test_one_load_feeds_b_and_b_transposed() -> None:
    torch.manual_seed(1)
    a, b = torch.randn(32, 32).half(), torch.randn(32, 32).half()
    out, out_t = torch.zeros(32, 32), torch.zeros(32, 32)
    shared_operand(a, b, out, out_t)
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-4, atol=1e-3)
    torch.testing.assert_close(out_t, a.float() @ b.float().T, rtol=1e-4, atol=1e-3)


def test_operand_must_be_a_tile() -> None:
    with pytest.raises(ParserTypeError, match="transpose_view"):

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
                v = pl.tile.transpose_view(x)
                out = pl.store(v, [0, 0], out)
                return out


@pl.jit
def _tile_transpose(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [16, 32])
        pl.store(pl.transpose(t, 0, 1), [0, 0], out)
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_a_tile_transposed_as_written_runs(dtype: torch.dtype, tmp_path: Path) -> None:
    """``pl.transpose`` of a loaded tile (no scratch tile given, as upstream's users write it) compiles and
    gives ``a.T`` on the simulated chip; the codegen stopped with "needs its scratch tile (tmp_tile)"."""
    a, out = torch.randn(16, 32).to(dtype), torch.zeros(32, 16, dtype=dtype)
    _tile_transpose(a, out, config=RunConfig(save_kernels_dir=str(tmp_path / str(dtype))))
    assert torch.equal(out, a.T)


@pl.jit
def qk_softmax(q: pl.Tensor, k: pl.Tensor, p: pl.Out[pl.Tensor]):
    """Attention's ``softmax(q @ k.T / 8)`` with the tensor matmul's ``b_trans``."""
    with pl.at(level=pl.Level.CORE_GROUP):
        scores = pl.mul(pl.matmul(q, k, out_dtype=pl.FP32, b_trans=True), 0.125)
        e = pl.exp(pl.row_expand_sub(scores, pl.row_max(scores)))
        p[:] = pl.row_expand_div(e, pl.row_sum(e))
    return p


@pl.jit
def at_bt(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        c[:] = pl.matmul(a, b, a_trans=True, b_trans=True)
    return c


def test_tensor_matmul_transposes_through_a_view(tmp_path: Path) -> None:
    """``pl.matmul(q, k, b_trans=True)`` on tensors (upstream's ``q @ k.T``) stopped in ConvertTensorToTileOps
    ("b_trans=True is not supported ... yet"); each transposed operand is now loaded into Mat as it is and read
    through a ``pl.tile.transpose_view``, as upstream lowers it, and gives torch's numbers."""
    torch.manual_seed(0)
    q, k, p = torch.randn(32, 64).half(), torch.randn(48, 64).half(), torch.zeros(32, 48)
    qk_softmax(q, k, p, config=RunConfig(save_kernels_dir=str(tmp_path / "qk"), dump_passes=True))
    torch.testing.assert_close(p, torch.softmax(q.float() @ k.float().T * 0.125, -1), rtol=1e-3, atol=1e-4)
    assert "pl.tile.transpose_view(" in (tmp_path / "qk" / "passes_dump" / "11_after_ConvertTensorToTileOps.py").read_text()
    a, b, c = torch.randn(64, 32), torch.randn(48, 64), torch.zeros(32, 48)
    at_bt(a, b, c, config=RunConfig(save_kernels_dir=str(tmp_path / "at_bt")))
    torch.testing.assert_close(c, a.T @ b.T, rtol=1e-4, atol=1e-4)


def test_tile_matmul_names_the_view_for_a_transpose_flag() -> None:
    """A tile matmul has no ``b_trans``: the error says what to write instead (it listed ``lhs, rhs``)."""
    with pytest.raises(Exception, match="has no argument 'b_trans'") as e:
        pl.parse(
            "import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\n"
            "def f(a: pl.Tensor[[16, 16], pl.FP16], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):\n"
            "    t = pl.load(a, [0, 0], [16, 16], target_memory=pl.Mem.Mat)\n"
            "    l = pl.move(t, target_memory=pl.Mem.Left)\n"
            "    r = pl.move(t, target_memory=pl.Mem.Right)\n"
            "    o = pl.store(pl.matmul(l, r, b_trans=True), [0, 0], o)\n"
            "    return o\n",
            filename="k.py",
        )
    assert "k.py:8:" in str(e.value) and "pl.tile.transpose_view(<the pl.Mem.Mat rhs>)" in str(e.value)
