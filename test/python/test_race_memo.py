"""Race-free runs remembered (``pypto.device.interpreter.race_memo``): a kernel whose accesses cannot depend on
data is race-checked once per key, and every run that races is still reported."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

from pypto.device.interpreter import run_kernel
from pypto.device.interpreter.memory import GmPtr
from pypto.device.interpreter.race_memo import data_independent, run_key
from pypto.ptoas.pto_text import parse_pto

TILE = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=16, v_row=8, v_col=16, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
PART = "!pto.partition_tensor_view<8x16xf32>"


def _kernel(args: str, guard: str, prelude: str = "") -> str:
    """tload -> texp -> tstore of one 8x16 tile; the MTE2->V handshake runs when ``guard`` (an i1) holds,
    the V->MTE3 one always: without the first, texp reads the tile tload wrote with no flag between."""
    return f"""module {{
  func.func @k(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>{args}) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %a0 = arith.constant 0 : i64
    %a1 = arith.constant 512 : i64
{prelude}
    %xv = pto.make_tensor_view %x, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %yv = pto.make_tensor_view %y, shape = [%c8, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %t = pto.alloc_tile addr = %a0 : {TILE}
    %e = pto.alloc_tile addr = %a1 : {TILE}
    %xp = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> {PART}
    %yp = pto.partition_view %yv, offsets = [%c0, %c0], sizes = [%c8, %c16] : !pto.tensor_view<?x?xf32> -> {PART}
    pto.tload ins(%xp : {PART}) outs(%t : {TILE})
    scf.if {guard} {{
      pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
      pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]
    }}
    pto.texp ins(%t : {TILE}) outs(%e : {TILE})
    pto.set_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.wait_flag[<PIPE_V>, <PIPE_MTE3>, <EVENT_ID0>]
    pto.tstore ins(%e : {TILE}) outs(%yp : {PART})
    return
  }}
}}
"""


SCALAR_GUARD = _kernel(", %sync: i1", "%sync")
DATA_GUARD = _kernel(
    "",
    "%pos",
    "    %v = pto.load_scalar %x[%c0] : !pto.ptr<f32> -> f32\n"
    "    %z = arith.constant 0.0 : f32\n"
    "    %pos = arith.cmpf ogt, %v, %z : f32",
)


def _func(text: str) -> FuncOp:
    return next(op for op in parse_pto(text, "k.pto").walk() if isinstance(op, FuncOp))


def _arrays(first: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    x = np.ones((8, 16), np.float32)
    x[0, 0] = first
    return x, np.zeros_like(x)


def test_analysis_accepts_scalar_control_and_rejects_data_control() -> None:
    assert data_independent(_func(SCALAR_GUARD))
    assert not data_independent(_func(DATA_GUARD))


def test_the_analysis_reads_the_op_classes_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Eligibility comes from ``PTOOp.OUTSIDE_RUN`` / ``VALUE_OF_OPERANDS`` on the op classes: flipping a
    class's fact flips the verdict, and every op of a cross-core or cross-rank family carries it."""
    from pypto.ptoas.dialect import _all_ops
    from pypto.ptoas.dialect.sync_ops import SetFlagOp
    from pypto.ptoas.dialect.view_ops import PartitionViewOp

    func = _func(SCALAR_GUARD)
    monkeypatch.setattr(SetFlagOp, "OUTSIDE_RUN", True)
    assert not data_independent(func)
    monkeypatch.undo()
    monkeypatch.setattr(PartitionViewOp, "VALUE_OF_OPERANDS", False)
    assert not data_independent(func)
    monkeypatch.undo()
    assert data_independent(func)
    families = ("pto.comm.", "pto.tpush", "pto.tpop", "pto.tfree", "pto.sync.", "pto.tput_async", "pto.tget_async")
    crossing = [op for op in _all_ops() if op.name.startswith(families)]
    assert len(crossing) >= 16 and all(op.OUTSIDE_RUN for op in crossing), [op.name for op in crossing]


def test_a_racy_kernel_is_reported_on_every_run() -> None:
    module = parse_pto(SCALAR_GUARD, "k.pto")
    x, y = _arrays()
    runs = [run_kernel(module, None, [x, y, False]) for _ in range(3)]
    assert [r.race_check for r in runs] == ["run"] * 3
    assert all(len(r.races) == 1 and r.races[0].op == "texp" for r in runs), [r.race_messages for r in runs]


@pytest.mark.parametrize("order", [(False, True, False, True, True, False), (True, False, True, True, False, False)])
def test_a_race_that_depends_on_a_scalar_is_reported_for_that_value_only(order: tuple[bool, ...]) -> None:
    module = parse_pto(SCALAR_GUARD, "k.pto")
    x, y = _arrays()
    seen_sync = False
    for sync in order:
        run = run_kernel(module, None, [x, y, sync])
        assert bool(run.races) is (not sync), (sync, run.race_messages)
        assert run.race_check == ("remembered" if sync and seen_sync else "run")
        seen_sync = seen_sync or sync


def test_a_race_that_depends_on_data_is_checked_on_every_run() -> None:
    module = parse_pto(DATA_GUARD, "k.pto")
    for first in (1.0, -1.0, 1.0, 1.0, -1.0):
        run = run_kernel(module, None, list(_arrays(first)))
        assert run.race_check == "run"
        assert bool(run.races) is (first < 0), (first, run.race_messages)


def test_remembered_runs_give_the_same_results() -> None:
    module = parse_pto(SCALAR_GUARD, "k.pto")
    x, _ = _arrays()
    x = x * np.arange(128, dtype=np.float32).reshape(8, 16) / 64
    outs, runs = [], []
    for remember in (False, True, True):
        y = np.zeros_like(x)
        runs.append(run_kernel(module, None, [x, y, True], remember_race_free=remember))
        outs.append(y)
    assert [r.race_check for r in runs] == ["run", "run", "remembered"]
    assert all(np.array_equal(o, outs[0]) for o in outs)
    facts = [(r.cycles, r.records, r.races, r.problems) for r in runs]
    assert facts[1] == facts[0] and facts[2] == facts[0]
    assert run_kernel(module, None, [x, np.zeros_like(x), True], check_races=False).race_check == "off"


def test_the_key_tells_apart_what_a_run_may_depend_on() -> None:
    a = np.zeros(16, np.float32)
    b = np.zeros(32, np.float32)
    p, q = GmPtr(a, 0, None), GmPtr(b, 0, None)  # type: ignore[arg-type]
    key = run_key([p, q, 1.0], (0, 1), "compiled", None)
    assert key == run_key([GmPtr(a.copy(), 0, None), GmPtr(b.copy(), 0, None), 1.0], (0, 1), "compiled", None)  # type: ignore[arg-type]
    different = [
        run_key([p, q, 2.0], (0, 1), "compiled", None),
        run_key([p, GmPtr(b[:16], 0, None), 1.0], (0, 1), "compiled", None),  # type: ignore[arg-type]
        run_key([p, GmPtr(b, 16, None), 1.0], (0, 1), "compiled", None),  # type: ignore[arg-type]
        run_key([p, GmPtr(b.view(np.int32), 0, None), 1.0], (0, 1), "compiled", None),  # type: ignore[arg-type]
        run_key([p, q, 1.0], (1, 2), "compiled", None),
        run_key([p, q, 1.0], (0, 1), "xdsl", None),
    ]
    assert all(k is not None and k != key for k in different)
    assert run_key([0.0], (0, 1), "compiled", None) != run_key([-0.0], (0, 1), "compiled", None)
    assert run_key([True], (0, 1), "compiled", None) != run_key([1], (0, 1), "compiled", None)
    assert run_key([np.zeros(4, np.int16)], (0, 1), "compiled", None) is None


CORPUS = Path("/work/shared/corpus/pto")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_kernels_are_eligible_and_remembered() -> None:
    from pypto.device.interpreter import example_args

    eligible = 0
    for path in sorted(CORPUS.glob("*.pto")):
        module = parse_pto(path.read_text(), path.name)
        funcs = [op for op in module.walk() if isinstance(op, FuncOp) and op.body.blocks]
        eligible += sum(data_independent(f) for f in funcs)
        try:
            args = example_args(module)
            first = run_kernel(module, None, args)
        except Exception:  # noqa: BLE001 -- kernels the interpreter rejects (checked elsewhere)
            continue
        second = run_kernel(module, None, args)
        assert second.races == first.races and second.cycles == first.cycles, path.name
        if not first.races and data_independent(funcs[0] if len(funcs) == 1 else _entry(funcs)):
            assert second.race_check == "remembered", path.name
    assert eligible >= 20


def _entry(funcs: list[FuncOp]) -> FuncOp:
    return next((f for f in funcs if "pto.entry" in f.attributes), funcs[0])


def test_the_memo_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from pypto.device.interpreter import race_memo

    monkeypatch.setattr(race_memo, "MAX_KEYS", 3)
    memo = race_memo.RaceMemo()
    for i in range(10):
        memo.remember((i,), None)
        assert len(memo.keys) <= 3 and memo.race_free((i,), None)
    assert not memo.race_free((0,), None)
