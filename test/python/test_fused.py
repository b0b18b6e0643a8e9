"""Fused blocks (pypto.device.interpreter.fused): a loop or block run as one generated function leaves exactly
what calling its steps one by one leaves (outputs, records, flag pairs, cycles, races, problems, the race
detector's state, errors), the fast path is taken on the benchmark's loop, and the fall-backs (a step with no
template, an older pending signal before a handshake, a wait with no signal) are taken and agree."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_races import CORPUS, UPSTREAM, _args, _funcs, synced_kernels

from pypto.device.interpreter import DeviceError, fused, run_kernel
from pypto.device.interpreter import run as run_module
from pypto.device.interpreter.compiled import _PLAN_ATTR
from pypto.device.interpreter.races import RaceDetector
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto_with_source_map, print_pto

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from interpreter_overhead import kernel_text  # noqa: E402 -- the benchmark's kernel: load, exp, store


def _kernel(trips: int, sync: bool = True, edit: Any = None) -> tuple[Any, Any]:
    module, source_map = parse_pto_with_source_map(kernel_text(trips), "exp.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=sync))
    if edit is not None:  # a variant of the synced text
        module, source_map = parse_pto_with_source_map(edit(print_pto(module)), "exp.pto")
    return module, source_map


def _race_state(rd: RaceDetector) -> tuple[Any, ...]:
    segs = [
        (space, s.lo, s.hi, s.w_pipe, s.w_tick, s.w_who, dict(s.reads)) for space, ss in rd.shadows.items() for s in ss
    ]
    return rd.index, rd.clock, {k: list(v) for k, v in rd.flags.items()}, segs, rd.who, rd.counts


def _run(module: Any, func: str, args: list[Any], enabled: bool, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> Any:
    """(outputs, records, flag pairs, cycles, races, problems, detector state) of a run compiled with fusing
    ``enabled`` (the module's compiled plan dropped first, so the function is compiled again)."""
    detectors: list[RaceDetector] = []

    class Kept(RaceDetector):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            detectors.append(self)

    monkeypatch.setattr(run_module, "RaceDetector", Kept)
    monkeypatch.setattr(fused, "ENABLED", enabled)
    monkeypatch.setattr(fused, "HOT", 1)  # generated on first use (a new plan: compiled again)
    if hasattr(module, _PLAN_ATTR):
        delattr(module, _PLAN_ATTR)
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run = run_kernel(module, func, mine, **kw)
    outputs = [a.tobytes() for a in mine if isinstance(a, np.ndarray)]
    records = [r.to_json() for r in run.records]
    state = _race_state(detectors[0]) if detectors and kw.get("check_races", True) else None
    return outputs, records, list(run.timeline.flag_pairs), run.cycles, run.race_messages, run.problems, state


def _both(module: Any, source_map: Any, x: np.ndarray, monkeypatch: pytest.MonkeyPatch, races: bool = True) -> Any:
    args = [x, np.zeros_like(x)]
    kw = dict(check_races=races, positions=source_map.positions)
    plain = _run(module, "exp_kernel", args, False, monkeypatch, **kw)
    fast = _run(module, "exp_kernel", args, True, monkeypatch, **kw)
    assert fast == plain
    return fast


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The generated functions (one entry per fused block or loop), each counting its calls."""
    seen: list[Any] = []
    original = fused._build

    def spy(*args: Any) -> Any:
        fn = original(*args)
        if fn is None:
            return None

        def counted(*a: Any) -> Any:
            counted.calls += 1  # type: ignore[attr-defined]
            return fn(*a)

        counted.calls, counted.inlined, counted.steps = 0, fn.inlined, len(args[2])  # type: ignore[attr-defined]
        counted.loop = args[-1]  # type: ignore[attr-defined]
        seen.append(counted)
        return counted

    monkeypatch.setattr(fused, "_build", spy)
    return seen


@pytest.mark.parametrize("races", [True, False])
@pytest.mark.parametrize("trips", [1, 8])
def test_the_benchmark_loop_runs_fused_with_every_step_inlined(
    trips: int, races: bool, built: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    module, source_map = _kernel(trips)
    x = np.random.default_rng(trips).standard_normal((64 * trips, 128)).astype(np.float32)
    _both(module, source_map, x, monkeypatch, races)
    loops = [f for f in built if f.loop]
    assert len(loops) == 1 and loops[0].calls == 1, "the loop ran as one generated function"
    assert loops[0].inlined == loops[0].steps == 11, "muli, two views, three data ops, five flag steps"


def test_a_loop_is_generated_on_its_second_execution(built: list[Any]) -> None:
    """``fused.HOT`` = 2: the first run calls the steps (no source compiled for a one-off run), the second
    generates the loop and runs it, with the same outcome."""
    assert fused.HOT == 2
    module, source_map = _kernel(8)
    x = np.random.default_rng(2).standard_normal((64 * 8, 128)).astype(np.float32)
    outcomes = []
    for n in range(3):
        y = np.zeros_like(x)
        run = run_kernel(module, "exp_kernel", [x, y], positions=source_map.positions, remember_accounting=False)
        outcomes.append((y.tobytes(), [r.to_json() for r in run.records], run.race_messages))
        assert [f.calls for f in built if f.loop] == ([] if n == 0 else [n])
    assert outcomes[0] == outcomes[1] == outcomes[2]


def test_fusing_off_generates_nothing(built: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    module, source_map = _kernel(8)
    x = np.ones((64 * 8, 128), np.float32)
    _run(module, "exp_kernel", [x, np.zeros_like(x)], False, monkeypatch, positions=source_map.positions)
    assert not built


def test_a_racy_loop_reports_the_same_races(monkeypatch: pytest.MonkeyPatch) -> None:
    module, source_map = _kernel(8, sync=False)
    got = _both(module, source_map, np.ones((64 * 8, 128), np.float32), monkeypatch)
    assert got[4], "the unsynced loop races"


def test_a_step_without_a_template_is_called_and_the_locals_read_again(
    built: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``pipe_barrier(PIPE_ALL)`` in the body (it replaces the race detector's clocks) is called as it is;
    the inlined steps after it, and those of the next trip, see the new clocks."""

    def barrier_in_body(text: str) -> str:
        head, sep, tail = text.partition("pto.tstore")
        return head + "pto.barrier <PIPE_ALL>\n      " + sep + tail

    module, source_map = _kernel(8, edit=barrier_in_body)
    x = np.random.default_rng(3).standard_normal((64 * 8, 128)).astype(np.float32)
    _both(module, source_map, x, monkeypatch)
    (loop,) = (f for f in built if f.loop)
    assert loop.calls == 1 and loop.inlined == loop.steps - 1


def test_an_older_pending_signal_takes_the_handshake_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal of the MTE2->V flag set before the loop: each trip's handshake then waits on the older
    signal (the pair's fall-back to its set and wait steps), as the steps called one by one do."""

    def early_signal(text: str) -> str:
        return text.replace("    scf.for", "    pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]\n    scf.for", 1)

    module, source_map = _kernel(8, edit=early_signal)
    got = _both(module, source_map, np.ones((64 * 8, 128), np.float32), monkeypatch)
    assert any(w != s + 1 for s, w in got[2]), "a wait consumed an older signal"


def test_a_wait_with_no_signal_is_reported_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    def orphan_wait(text: str) -> str:
        return text.replace(
            "      pto.tstore", "      pto.wait_flag[<PIPE_M>, <PIPE_MTE3>, <EVENT_ID1>]\n      pto.tstore", 1
        )

    module, source_map = _kernel(8, edit=orphan_wait)
    got = _both(module, source_map, np.ones((64 * 8, 128), np.float32), monkeypatch)
    assert len(got[5]) == 8 and "has no set_flag before it" in got[5][0]


_DYN = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=128, v_row=?, v_col=?, blayout=row_major, slayout=none_box, "
    "fractal=512, pad=0>"
)


def test_a_valid_shape_changed_in_the_loop_is_priced_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """The texp's input resized to ``i + 1`` rows each trip (``set_validshape``, and back for the next tload):
    the fused loop's kept cost (``_COST_KEPT``) is not reused for another valid shape."""

    def resized(text: str) -> str:
        text = text.replace("v_row=64, v_col=128", "v_row=?, v_col=?")
        text = text.replace(" : " + _DYN, " valid_row = %c64 valid_col = %c128 : " + _DYN, 2)  # the two alloc_tiles
        text = text.replace(
            "      pto.texp",
            f"      %vr = arith.addi %i, %c1 : index\n      pto.set_validshape %t, %vr, %c128 : {_DYN}\n      pto.texp",
            1,
        )
        return text.replace(
            "      pto.set_flag[<PIPE_V>, <PIPE_MTE3>",
            f"      pto.set_validshape %t, %c64, %c128 : {_DYN}\n      pto.set_flag[<PIPE_V>, <PIPE_MTE3>",
            1,
        )

    module, source_map = _kernel(4, edit=resized)
    got = _both(module, source_map, np.ones((64 * 4, 128), np.float32), monkeypatch)
    exps = [r for r in got[1] if r["instr"] == "TEXP"]
    assert [r["detail"] for r in exps] == [f"{n}x128 fp32" for n in (1, 2, 3, 4)]
    assert len({r["end"] - r["start"] for r in exps}) == 4, "each trip priced for its own valid shape"


def test_a_window_size_changed_in_the_loop_is_priced_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tstore's window and source tile ``i + 1`` rows each trip: its kept cost (``_COST_STORE``) is not
    reused for a window of other sizes."""
    static = _DYN.replace("v_row=?, v_col=?", "v_row=64, v_col=128")
    window = "!pto.partition_tensor_view<64x128xf32>"

    def growing(text: str) -> str:
        text = text.replace(static, _DYN).replace(" : " + _DYN, " valid_row = %c64 valid_col = %c128 : " + _DYN, 2)
        text = text.replace(
            "      %r = arith.muli",
            f"      %vr = arith.addi %i, %c1 : index\n      pto.set_validshape %e, %vr, %c128 : {_DYN}\n"
            "      %r = arith.muli",
            1,
        )
        head, sep, tail = text.partition("%yp = pto.partition_view")
        body, nl, rest = tail.partition("\n")
        body = body.replace("sizes = [%c64, %c128]", "sizes = [%vr, %c128]").replace(
            window, "!pto.partition_tensor_view<?x128xf32>"
        )
        text = head + sep + body + nl + rest
        return text.replace(f"outs(%yp : {window})", "outs(%yp : !pto.partition_tensor_view<?x128xf32>)")

    module, source_map = _kernel(4, edit=growing)
    got = _both(module, source_map, np.ones((64 * 4, 128), np.float32), monkeypatch)
    stores = [r for r in got[1] if r["instr"] == "TSTORE"]
    assert [r["detail"] for r in stores] == [f"vec->gm {512 * n}B" for n in (1, 2, 3, 4)]


def test_a_window_past_its_view_is_read_from_the_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    """The input's tensor view covers half the rows the loop reads: the later windows are not slices of the
    view's array (the inlined ``partition_2d`` checks the view's bounds) but windows of the argument itself,
    as calling the steps gives."""

    def half_view(text: str) -> str:
        text = text.replace(
            "%xv = pto.make_tensor_view %x, shape = [%c512,", "%xv = pto.make_tensor_view %x, shape = [%c256,"
        )
        return text.replace("    %xv =", "    %c256 = arith.constant 256 : index\n    %xv =", 1)

    module, source_map = _kernel(8, edit=half_view)
    x = np.random.default_rng(5).standard_normal((64 * 8, 128)).astype(np.float32)
    got = _both(module, source_map, x, monkeypatch)
    y = np.frombuffer(got[0][1], np.float32).reshape(x.shape)
    assert np.array_equal(y, np.exp(x.astype(np.float64)).astype(np.float32))


def test_an_error_is_located_at_the_same_op(monkeypatch: pytest.MonkeyPatch) -> None:
    """GM shorter than the loop reaches: the tload of trip 6 fails, with the same message either way."""
    module, source_map = _kernel(8)
    x = np.ones((64 * 6, 128), np.float32)
    errors = []
    for enabled in (False, True):
        with pytest.raises(DeviceError) as info:
            _run(module, "exp_kernel", [x, np.zeros_like(x)], enabled, monkeypatch, positions=source_map.positions)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("<module>:16:7: pto.tload: GM window"), errors[0]


@pytest.mark.skipif(not CORPUS.is_dir() or not UPSTREAM.is_dir(), reason="shared corpus not available")
def test_fusing_changes_nothing_on_the_corpus_kernels(built: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every runnable corpus and upstream kernel, compiled with and without fusing."""
    compared = 0
    for name, text, func, configs in synced_kernels():
        module, source_map = parse_pto_with_source_map(text, name)
        f = next(f for f in _funcs(module) if f.sym_name.data == func)
        args = _args(module, f, configs[0])
        kw = dict(positions=source_map.positions, pto_file=name)
        assert _run(module, func, args, True, monkeypatch, **kw) == _run(module, func, args, False, monkeypatch, **kw)
        compared += 1
    assert compared >= 20 and any(f.calls for f in built), compared
