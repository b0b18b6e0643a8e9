"""Mixed kernels (ExpandMixedKernel) in which a tile whose valid shape is known only at run time crosses between
the cube and the vector part: each case a bug found probing them. The pop declares the pushed tile's valid shape
from the op classes' ``result_valid_shape`` rules (:func:`pypto.dialects.op_facts.valid_shape`); where a rule was
missing the pop took the tile's static shape and the run stopped with "pops a 16x32 tile but the cube side
pushed 11x32". Every device result is compared with plain torch math."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.runtime import RunConfig


def _run(kernel, *args, tmp_path: Path) -> None:
    kernel(*args, config=RunConfig(save_kernels_dir=str(tmp_path)))


# ---- a loop-carried accumulator (scf.for block argument / result) ---------------------------------------------


@pl.jit
def _k_loop_then_relu(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_loop"):
        ta = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        for k in pl.range(1, 3):
            ta2 = pl.load(a, [0, k * 32], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
            tb2 = pl.load(b, [k * 32, 0], [32, 32], target_memory=pl.Mem.Mat)
            acc = pl.matmul_acc(acc, pl.move(ta2, target_memory=pl.Mem.Left), pl.move(tb2, target_memory=pl.Mem.Right))
        v = pl.move(acc, target_memory=pl.Mem.Vec)  # cube -> vector after the K loop: n x 32 valid
        pl.store(pl.relu(v), [0, 0], c)
    return c


def test_k_loop_accumulator_crosses_after_the_loop(tmp_path: Path) -> None:
    """The usual K loop (``acc = pl.matmul_acc(acc, ...)`` carried through ``pl.range``) of a tile with run-time
    rows, moved to the vector core after the loop: the loop's result had no valid-shape rule (a loop result, its
    block argument), so the pop took 16x32 and the run stopped with "pops a 16x32 tile but the cube side pushed
    11x32". A carried tile now has its initial value's valid shape when the body keeps it (the yielded value's,
    given the argument's, is the same)."""
    torch.manual_seed(0)
    a, b, c = torch.randn(16, 96), torch.randn(96, 32), torch.full((16, 32), -7.0)
    _run(_k_loop_then_relu, a, b, c, 11, tmp_path=tmp_path)
    torch.testing.assert_close(c[:11], torch.relu(a[:11] @ b), rtol=1e-4, atol=1e-4)
    assert bool((c[11:] == -7.0).all()), "rows past the valid shape were stored"
    pto = next(tmp_path.rglob("k_loop_aiv.pto")).read_text()
    assert "pto.tpop_from_aic(%arg" in pto and "v_row=?, v_col=?" in pto, pto


@pl.jit
def _k_loop_crossing_inside(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_inside"):
        ta = pl.load(a, [0, 0], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        for k in pl.range(1, 3):
            ta2 = pl.load(a, [0, k * 32], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
            tb2 = pl.load(b, [k * 32, 0], [32, 32], target_memory=pl.Mem.Mat)
            acc = pl.matmul_acc(acc, pl.move(ta2, target_memory=pl.Mem.Left), pl.move(tb2, target_memory=pl.Mem.Right))
            v = pl.move(acc, target_memory=pl.Mem.Vec)  # every step's partial sum crosses
            pl.store(pl.relu(v), [(k - 1) * 16, 0], c)
    return c


def test_k_loop_accumulator_crosses_inside_the_loop(tmp_path: Path) -> None:
    """The partial sum of the carried accumulator crosses in every step: the vector part's copy of the loop
    drops the cube tile it carries (its yield is rewritten) before the pop is made, so the carried tile's
    valid shape could not be followed there ("pops a 16x32 tile but the cube side pushed 11x32"). The pops'
    valid shapes are now found on the intact function, before either part is cut down."""
    torch.manual_seed(1)
    a, b, c = torch.randn(16, 96), torch.randn(96, 32), torch.full((32, 32), -7.0)
    _run(_k_loop_crossing_inside, a, b, c, 11, tmp_path=tmp_path)
    for k in (1, 2):
        block = c[(k - 1) * 16 : k * 16]
        torch.testing.assert_close(
            block[:11], torch.relu(a[:11, : (k + 1) * 32] @ b[: (k + 1) * 32]), rtol=1e-4, atol=1e-4
        )
        assert bool((block[11:] == -7.0).all())


# ---- vector ops without a rule ----------------------------------------------------------------------------------


@pl.jit
def _cast_then_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="cast_mm"):
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[n, 32])
        th = pl.cast(pl.mul(t, 2.0), pl.FP16)
        tm = pl.move(th, target_memory=pl.Mem.Mat)  # vector -> cube: n x 32 valid
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def test_cast_result_crosses_to_the_cube(tmp_path: Path) -> None:
    """A vector tile cast to FP16 for the cube (the usual mixed-precision matmul input): ``pl.tile.cast`` had no
    valid-shape rule, so the pop took 16x32 and the run stopped with "pops a 16x32 tile but the vector side
    pushed 11x32". A cast keeps its input's valid shape (as ptoas's ``tcvt`` lowering does)."""
    torch.manual_seed(2)
    a, b, c = torch.randn(16, 32), torch.randn(32, 32).half(), torch.full((16, 32), -7.0)
    _run(_cast_then_matmul, a, b, c, 11, tmp_path=tmp_path)
    torch.testing.assert_close(c[:11], (2 * a[:11]).half().float() @ b.float(), rtol=1e-2, atol=1e-2)
    assert bool((c[11:] == -7.0).all())


@pl.jit
def _transpose_then_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="trans_mm"):
        t = pl.load(a, [0, 0], [16, 16], valid_shape=[n, 16])
        tmp = pl.tile.create([16, 16], dtype=pl.FP16, target_memory=pl.Mem.Vec)
        tm = pl.move(pl.tile.transpose(t, 0, 1, tmp), target_memory=pl.Mem.Mat)  # vector -> cube: 16 x n valid
        tb = pl.load(b, [0, 0], [16, 16], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tb, target_memory=pl.Mem.Left), pl.move(tm, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def test_transposed_tile_crosses_to_the_cube(tmp_path: Path) -> None:
    """A vector ``pl.tile.transpose`` of a tile with run-time rows, moved to the cube as a matmul's rhs:
    transpose had no rule ("pops a 16x16 tile but the vector side pushed 16x11"); its valid dims swap."""
    torch.manual_seed(3)
    a, b, c = torch.randn(16, 16).half(), torch.randn(16, 16).half(), torch.full((16, 16), -7.0)
    _run(_transpose_then_matmul, a, b, c, 11, tmp_path=tmp_path)
    torch.testing.assert_close(c[:, :11], b.float() @ a[:11].float().T, rtol=1e-2, atol=1e-2)
    assert bool((c[:, 11:] == -7.0).all())


# ---- both directions in one kernel -------------------------------------------------------------------------------


@pl.jit
def _attention_run_time_rows(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="attn_rows"):
        tq = pl.load(q, [0, 0], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
        tk = pl.load(k, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        kt = pl.move(pl.tile.transpose_view(tk), target_memory=pl.Mem.Right)
        s = pl.move(pl.matmul(pl.move(tq, target_memory=pl.Mem.Left), kt), target_memory=pl.Mem.Vec)  # n x 32
        tmp = pl.tile.create([16, 32], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        e = pl.exp(pl.row_expand_sub(s, pl.row_max(s, tmp)))
        p = pl.cast(pl.row_expand_div(e, pl.row_sum(e, tmp)), pl.FP16)
        pm = pl.move(p, target_memory=pl.Mem.Mat)  # vector -> cube: n x 32
        tv = pl.load(v, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        out = pl.matmul(pl.move(pm, target_memory=pl.Mem.Left), pl.move(tv, target_memory=pl.Mem.Right))
        pl.store(out, [0, 0], o)
    return o


def test_attention_with_run_time_query_rows_crosses_both_ways(tmp_path: Path) -> None:
    """``q @ k.T`` on the cube (``k.T`` a ``pl.tile.transpose_view``), softmax on the vector core, ``p @ v`` on
    the cube, the query rows known at run time: the view had no rule, so ``s``'s matmul had none and its pop took
    16x32 while the cube pushed 11x32 (reported as a deadlock, see below); the cast of ``p`` had none either. The
    view is valid everywhere as lowered (``pto.treshape``); a cast keeps its input's valid shape."""
    torch.manual_seed(4)
    q, k, v = torch.randn(16, 32).half(), torch.randn(32, 32).half(), torch.randn(32, 32).half()
    o = torch.full((16, 32), -7.0)
    _run(_attention_run_time_rows, q, k, v, o, 11, tmp_path=tmp_path)
    p = torch.softmax(q[:11].float() @ k.float().T, -1).half().float()
    torch.testing.assert_close(o[:11], p @ v.float(), rtol=1e-2, atol=1e-2)
    assert bool((o[11:] == -7.0).all())


@pl.jit
def _both_ways_carried_rows_change(
    q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]
):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_change"):
        tq = pl.load(q, [0, 0], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n, 32])
        tk = pl.load(k, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        s = pl.matmul(pl.move(tq, target_memory=pl.Mem.Left), pl.move(tk, target_memory=pl.Mem.Right))
        for _i in pl.range(2):
            tq2 = pl.load(q, [0, 0], [16, 32], target_memory=pl.Mem.Mat, valid_shape=[n - 1, 32])
            s = pl.matmul(pl.move(tq2, target_memory=pl.Mem.Left), pl.move(tk, target_memory=pl.Mem.Right))
        sv = pl.move(s, target_memory=pl.Mem.Vec)  # a carried tile whose valid rows the body changes: no rule
        pm = pl.move(pl.cast(pl.exp(sv), pl.FP16), target_memory=pl.Mem.Mat)
        tv = pl.load(v, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        out = pl.matmul(pl.move(pm, target_memory=pl.Mem.Left), pl.move(tv, target_memory=pl.Mem.Right))
        pl.store(out, [0, 0], o)
    return o


def test_a_pop_error_of_interleaved_parts_is_not_reported_as_a_deadlock(tmp_path: Path) -> None:
    """When the parts push to each other (run interleaved) and the vector part's pop fails, the cube part, left
    waiting, raised the deadlock and that was reported ("@..._aic each pop a pipe the other parts pushed nothing
    (more) to") instead of the vector part's error: :class:`pypto.utils.interleave.Interleaved` told a deadlock
    from other errors by identity, and the kernel runner wraps it (``KernelError`` from the ``DeviceError``)."""
    q, k, v = torch.randn(16, 32).half(), torch.randn(32, 32).half(), torch.randn(32, 32).half()
    with pytest.raises(Exception) as e:
        _run(_both_ways_carried_rows_change, q, k, v, torch.zeros(16, 32), 11, tmp_path=tmp_path)
    msg = str(e.value)
    assert "pops a 16x32 tile but the cube side pushed 11x32" in msg and "rows_change_aiv" in msg, msg
    assert "wait for each other" not in msg, msg


# ---- a valid shape only one core can compute ---------------------------------------------------------------------


@pl.jit
def _rows_read_from_a_tile(a: pl.Tensor, cnt: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_read"):
        rows = pl.tile.read(pl.load(cnt, [0, 0], [1, 8]), [0, 0])
        t = pl.load(a, [0, 0], [16, 32], valid_shape=[pl.cast(rows, pl.INDEX), 32])
        tm = pl.move(pl.mul(t, 2.0), target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def test_a_valid_shape_only_the_pushing_core_has_is_a_located_error_at_the_move(tmp_path: Path) -> None:
    """The valid rows read from a vector tile (``pl.tile.read``): the cube core's pop needs them, and the error
    named an ``arith.index_cast`` "on the cube core" at the ``pl.cast`` the user wrote for the load, not the
    crossing. It is now located at the ``pl.move`` and says which value the cube core cannot compute."""
    a, b, c = torch.randn(16, 32), torch.randn(32, 32), torch.zeros(16, 32)
    cnt = torch.full((1, 8), 11, dtype=torch.int32)
    with pytest.raises(Exception) as e:
        _run(_rows_read_from_a_tile, a, cnt, b, c, tmp_path=tmp_path)
    msg = str(e.value)
    assert "test_hunt_mixed_valid.py:" in msg and "tm = pl.move(" in msg, msg
    assert "valid shape computed from 'rows' (pl.tile.read on the vector core)" in msg, msg
    assert "pl.tile.fillpad" in msg, msg
