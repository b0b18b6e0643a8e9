"""Edges of the tensor matmul's transposes and output dtypes, of the Vec -> Mat crossing and of mixed kernels
whose parts push to each other (attention in one kernel): each case a bug found probing them."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.runtime import RunConfig


def _parse(body: str, params: str) -> None:
    """Parse an InCore function ``f(params)`` whose body is ``body`` from the file ``k.py``."""
    pl.parse(
        f"import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\ndef f({params}):\n{body}",
        filename="k.py",
    )


_AB = "a: pl.Tensor[[16, 32], pl.FP16], b: pl.Tensor[[32, 16], pl.FP16], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"


@pytest.mark.parametrize(
    "make",
    ["pl.matmul(a, b)", "pl.create_tensor([16, 16], dtype=pl.FP16)"],
    ids=["promoted_matmul", "create_tensor"],
)
def test_matmul_acc_into_a_narrower_accumulator_is_a_located_error(make: str) -> None:
    """``pl.matmul_acc`` accumulates FP16 operands in FP32, as upstream requires of ``acc``. An FP16 ``acc`` (the
    promoted ``pl.matmul(a, b)`` of FP16 operands) stopped in ConvertTensorToTileOps with "the accumulator
    'x__tile' must come from a matmul" (it did), and one from ``pl.create_tensor`` in ptoas codegen ("dtypes
    (acc=f16, ...) are not one of ..."); both are now a front-end error naming the dtype expected."""
    body = f"    x = {make}\n    x = pl.matmul_acc(x, a, b)\n    o[:] = pl.cast(x, pl.FP32)\n    return o\n"
    with pytest.raises(ParserTypeError) as e:
        _parse(body, _AB)
    msg = str(e.value)
    assert "k.py:6:" in msg, msg
    assert "operand 'acc' has dtype pl.FP16, expected pl.FP32" in msg, msg
    assert "out_dtype=pl.FP32" in msg, msg


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ("a, b, b_trans=True", "operand 'rhs' has 16 columns (b_trans=True), expected 32 (the columns of 'lhs')"),
        ("b, a, a_trans=True", "operand 'rhs' has 16 rows, expected 32 (the rows of 'lhs', a_trans=True)"),
    ],
)
def test_transposed_matmul_inner_extent_mismatch_names_the_transposed_dimension(args: str, says: str) -> None:
    """The inner-extent mismatch of a transposed tensor matmul named the dimension the flag reads as the one the
    user did not write: ``pl.matmul(a, b, b_trans=True)`` of a [32, 16] ``b`` said "'rhs' has 16 rows", and
    ``a_trans`` compared against "the columns of 'lhs'" (its rows)."""
    body = f"    o[:] = pl.matmul({args}, out_dtype=pl.FP32)\n    return o\n"
    with pytest.raises(ParserTypeError) as e:
        _parse(body, _AB)
    msg = str(e.value)
    assert "k.py:5:" in msg and says in msg, msg


@pl.jit
def _qk_positional_out_dtype(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s[:] = pl.matmul(q, k, pl.FP32, b_trans=True)
    return s


def test_tensor_matmul_takes_out_dtype_third_as_upstream(tmp_path: Path) -> None:
    """Upstream's ``pl.matmul(lhs, rhs, out_dtype, a_trans, b_trans, c_matrix_nz)`` takes ``out_dtype`` third, and
    its models write ``pl.matmul(x, w, pl.FP32, b_trans=True)``; it was bound to ``a_trans`` ("argument 'a_trans':
    expected True or False, got pl.FP32"). The op's ``POSITIONAL`` orders its positional arguments as upstream;
    the printed keywords keep upstream's printed order."""
    torch.manual_seed(0)
    q, k, s = torch.randn(16, 32).half(), torch.randn(24, 32).half(), torch.zeros(16, 24)
    _qk_positional_out_dtype(q, k, s, config=RunConfig(save_kernels_dir=str(tmp_path)))
    torch.testing.assert_close(s, q.float() @ k.float().T, rtol=1e-3, atol=1e-3)
    # b.T @ a.T is [16, 16] (b @ a, [32, 32], would not fit o): the flags bound in upstream's order
    _parse("    o[:] = pl.tensor.matmul(b, a, pl.FP32, True, True)\n    return o\n", _AB)


@pl.jit
def _fp32_chain(a: pl.Tensor, b: pl.Tensor, d: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.matmul(a, b)
        o[:] = pl.matmul(x, d)
    return o


@pl.jit
def _fp32_chain_cast(a: pl.Tensor, b: pl.Tensor, d: pl.Tensor, o: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        x = pl.cast(pl.matmul(a, b), pl.BF16, mode="rint")
        o[:] = pl.matmul(x, pl.cast(d, pl.BF16, mode="rint"), out_dtype=pl.FP32)
    return o


def test_matmul_reading_a_matmul_result_says_to_narrow_it(tmp_path: Path) -> None:
    """An FP32 matmul result read by another tensor matmul is an error in ConvertTensorToTileOps; it named the
    converted tile ('x__tile') and hinted at pl.move, which a tensor does not take. It now names ``x`` and the
    cast the cube's write-back folds, and the kernel written as the hint says gives torch's numbers."""
    from pypto.diagnostics import DiagnosticError

    torch.manual_seed(0)
    a, b, d, o = torch.randn(16, 32), torch.randn(32, 16), torch.randn(16, 24), torch.zeros(16, 24)
    with pytest.raises(DiagnosticError) as e:
        _fp32_chain(a, b, d, o, config=RunConfig(save_kernels_dir=str(tmp_path / "bad")))
    msg = str(e.value)
    assert "operand 'x' is a matmul result (pl.Mem.Acc)" in msg and 'pl.cast(x, pl.BF16, mode="rint")' in msg, msg
    assert "test_hunt_matmul_attention.py:" in msg and "x__tile" not in msg, msg
    _fp32_chain_cast(a, b, d, o, config=RunConfig(save_kernels_dir=str(tmp_path / "good")))
    want = (a @ b).bfloat16().float() @ d.bfloat16().float()
    torch.testing.assert_close(o, want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", ["BOOL", "INDEX"])
def test_tensor_matmul_of_operands_the_cube_does_not_take_is_a_front_end_error(dtype: str) -> None:
    """A tensor matmul of BOOL operands was accepted (its accumulator read as INT32, BOOL being an integer) and
    failed in ptoas codegen: "ptoas codegen produced an invalid op: 'pto.tmatmul' op dtypes (acc=i32, lhs=i1,
    rhs=i1) ...". The tensor matmul checks its operands as the tile one does."""
    params = (
        f"a: pl.Tensor[[16, 16], pl.{dtype}], b: pl.Tensor[[16, 16], pl.{dtype}], "
        "o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]"
    )
    with pytest.raises(ParserTypeError) as e:
        _parse("    o[:] = pl.matmul(a, b, out_dtype=pl.FP32)\n    return o\n", params)
    msg = str(e.value)
    assert "k.py:5:" in msg and f"operand 'lhs' has dtype pl.{dtype}, which matmul does not take" in msg, msg
