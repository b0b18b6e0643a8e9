"""Remembered accounting (``pypto.device.interpreter.race_memo``): a kernel whose accesses cannot depend on data,
run again with the same key, runs its numerics only and hands back the earlier run's timeline. The timeline
and the outputs are those of a run that prices every instruction; a run with another key (scalars, array
sizes, block, target, locations) is priced again; an ineligible kernel never is remembered; and a
remembered run prices and records nothing (counted)."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_race_memo import DATA_GUARD, SCALAR_GUARD, _arrays
from test_races import CORPUS, _args, _funcs, synced_kernels

from pypto.device.interpreter import run as run_module
from pypto.device.interpreter import run_kernel
from pypto.device.interpreter.race_memo import data_independent
from pypto.device.interpreter.timing import Timeline
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto, parse_pto_with_source_map
from pypto.target import load_target

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from interpreter_overhead import kernel_text  # noqa: E402 -- the benchmark's kernel: load, exp, store

SPMD = "issue428_cube_sync_regression.pto"
"""A corpus kernel with a cube section, ``get_block_idx``, an ``scf.for`` and syncs."""


def _facts(run: Any) -> tuple[Any, ...]:
    """Everything a run reports of its accounting."""
    tl = run.timeline
    records = [r.to_json() for r in run.records]
    return run.cycles, records, tl.flag_pairs, run.problems, run.per_pipe_busy, run.races, run.prints, run.deferred


def _outputs(args: list[Any]) -> list[bytes]:
    return [a.tobytes() for a in args if isinstance(a, np.ndarray)]


def _fresh(args: list[Any]) -> list[Any]:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _compare(module: Any, func: str | None, args: list[Any], **kw: Any) -> list[Any]:
    """Three runs remembering (the last two remembered) and one priced afresh: equal outputs and accounting."""
    base_args = _fresh(args)
    base = run_kernel(module, func, base_args, remember_accounting=False, **kw)
    runs = []
    for _ in range(3):
        mine = _fresh(args)
        runs.append(run_kernel(module, func, mine, **kw))
        assert _outputs(mine) == _outputs(base_args)
        assert _facts(runs[-1]) == _facts(base)
    assert base.accounting == "run"
    return runs


def _bench(trips: int) -> tuple[Any, Any, list[Any]]:
    module, source_map = parse_pto_with_source_map(kernel_text(trips), "exp.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    x = np.random.default_rng(0).standard_normal((trips * 64, 128)).astype(np.float32)
    return module, source_map, [x, np.zeros_like(x)]


@pytest.mark.parametrize("trips", [8, 64])  # 64: the priced run replays the loop (loop_replay)
@pytest.mark.parametrize("races", [True, False])
def test_the_benchmark_kernel_remembered_equals_priced(trips: int, races: bool) -> None:
    module, source_map, args = _bench(trips)
    runs = _compare(module, "exp_kernel", args, check_races=races, positions=source_map.positions)
    assert [r.accounting for r in runs] == ["run", "remembered", "remembered"]
    assert [r.race_check for r in runs] == (["remembered"] * 3 if races else ["off"] * 3)  # the priced run checked it
    assert runs[1].timeline is runs[0].timeline  # shared, not copied


def test_the_race_detector_on_every_run_keeps_the_accounting_too() -> None:
    module, source_map, args = _bench(8)
    runs = [run_kernel(module, "exp_kernel", _fresh(args), remember_race_free=False) for _ in range(3)]
    assert [r.accounting for r in runs] == ["run"] * 3 and [r.race_check for r in runs] == ["run"] * 3


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_corpus_kernels_remembered_equal_priced() -> None:
    remembered = 0
    for name, text, func, configs in synced_kernels():
        module = parse_pto(text, name)
        fn = next(f for f in _funcs(module) if f.sym_name.data == func)
        for scalars in configs[:1]:
            args = _args(module, fn, scalars)
            runs = _compare(module, func, args)
            if runs[0].races or not data_independent(fn):
                assert all(r.accounting == "run" for r in runs), name
            else:
                assert [r.accounting for r in runs] == ["run", "remembered", "remembered"], name
                remembered += 1
    assert remembered >= 20


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not available")
def test_spmd_blocks_are_remembered_apart() -> None:
    name, text, func, configs = next(k for k in synced_kernels() if k[0] == SPMD)
    module = parse_pto(text, name)
    fn = next(f for f in _funcs(module) if f.sym_name.data == func)
    args = [np.concatenate([a, a]) if isinstance(a, np.ndarray) else a for a in _args(module, fn, configs[0])]
    assert data_independent(fn)  # GM arrays doubled: block 1 works on the second half
    for block in [(0, 2), (1, 2), (0, 2), (1, 2)]:
        runs = _compare(module, func, args, block=block)
        assert runs[-1].accounting == "remembered"
    first = run_kernel(module, func, _fresh(args), block=(0, 2))
    other = run_kernel(module, func, _fresh(args), block=(1, 2))
    assert first.accounting == other.accounting == "remembered"
    assert first.timeline is not other.timeline


def test_another_key_is_priced_again() -> None:
    """Scalars steer the records (the guarded handshake): a memo not checking its key hands back the wrong
    timeline here. Then array sizes, the block, the target and the locations' source each price again."""
    module = parse_pto(SCALAR_GUARD, "k.pto")
    x, _ = _arrays()
    kw: dict[str, Any] = dict(check_races=False)
    on = [run_kernel(module, None, [x, np.zeros_like(x), True], **kw) for _ in range(2)]
    off = [run_kernel(module, None, [x, np.zeros_like(x), False], **kw) for _ in range(2)]
    assert [r.accounting for r in on + off] == ["run", "remembered", "run", "remembered"]
    assert len(on[1].records) == len(off[1].records) + 2  # the handshake's two sync records
    assert _facts(off[1]) == _facts(
        run_kernel(module, None, [x, np.zeros_like(x), False], remember_accounting=False, **kw)
    )
    assert _facts(on[1]) == _facts(on[0])

    module, source_map, args = _bench(8)
    kw = dict(positions=source_map.positions)
    assert run_kernel(module, "exp_kernel", _fresh(args), **kw).accounting == "run"
    assert run_kernel(module, "exp_kernel", _fresh(args), **kw).accounting == "remembered"
    longer = [np.concatenate([args[0], args[0]]), np.zeros((1024, 128), np.float32)]
    assert run_kernel(module, "exp_kernel", longer, **kw).accounting == "run"
    assert run_kernel(module, "exp_kernel", _fresh(args), block=(1, 2), **kw).accounting == "run"
    target = copy.copy(load_target("a2a3"))  # another target object (load_target gives the cached one)
    assert run_kernel(module, "exp_kernel", _fresh(args), target=target, **kw).accounting == "run"
    assert run_kernel(module, "exp_kernel", _fresh(args), target=target, **kw).accounting == "remembered"
    assert run_kernel(module, "exp_kernel", _fresh(args), positions=dict(source_map.positions)).accounting == "run"
    assert run_kernel(module, "exp_kernel", _fresh(args), pto_file="other.pto", **kw).accounting == "run"
    assert run_kernel(module, "exp_kernel", _fresh(args), engine="xdsl", **kw).accounting == "run"
    assert run_kernel(module, "exp_kernel", _fresh(args), **kw).accounting == "remembered"


def test_a_remembered_run_prints_its_own_values() -> None:
    """``tprint`` output is numerics: a remembered run prints the values of its own inputs."""
    text = SCALAR_GUARD.replace(
        "    pto.tstore",
        "    pto.tprint ins(%e : " + SCALAR_GUARD.split("pto.texp ins(%t : ")[1].split(")")[0] + ")\n    pto.tstore",
    )
    module = parse_pto(text, "k.pto")
    runs = []
    for first in (1.0, 2.0, 3.0):
        x, y = _arrays(first)
        runs.append(run_kernel(module, None, [x, y, True]))
        assert runs[-1].prints and str(np.float32(np.exp(first)))[:4] in runs[-1].prints[0]
    assert [r.accounting for r in runs] == ["run", "remembered", "remembered"]
    assert len({r.prints[0] for r in runs}) == 3


def test_an_ineligible_kernel_is_never_remembered() -> None:
    module = parse_pto(DATA_GUARD, "k.pto")
    for check in (True, False):
        for _ in range(3):
            x, y = _arrays()
            assert run_kernel(module, None, [x, y], check_races=check).accounting == "run"


def test_a_racing_run_is_not_remembered() -> None:
    module = parse_pto(SCALAR_GUARD, "k.pto")
    x, _ = _arrays()
    runs = [run_kernel(module, None, [x, np.zeros_like(x), False]) for _ in range(3)]
    assert all(r.races for r in runs) and [r.accounting for r in runs] == ["run"] * 3


PER_RUN = frozenset(("of", "sync", "cycles", "__init__"))
"""Accounting code a remembered run still calls once (the core's cost model and its two flag costs, the
remembered timeline's ``cycles``): not per instruction."""


def _counted(monkeypatch: pytest.MonkeyPatch, run: Any) -> tuple[int, int]:
    """(calls of the accounting's Python code, rows appended to any new timeline) while ``run()`` runs."""
    made: list[Timeline] = []

    class Counted(Timeline):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, **k)
            made.append(self)

    monkeypatch.setattr(run_module, "Timeline", Counted)
    folder = Path(run_module.__file__).parent
    accounting = {str(folder / f) for f in ("timing.py", "costs.py", "races.py", "loop_replay.py")}
    impls = str(folder / "pto_impls.py")
    calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call":
            code = frame.f_code
            if code.co_filename in accounting and code.co_name not in PER_RUN:
                calls += 1
            elif code.co_filename == impls and code.co_name in ("cost", "account"):
                calls += 1

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls, sum(len(t.rows) for t in made)


def test_a_remembered_run_prices_and_records_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    module, source_map, args = _bench(8)
    kw: dict[str, Any] = dict(positions=source_map.positions)
    for _ in range(3):  # priced, then remembered; the fused functions generated
        run_kernel(module, "exp_kernel", _fresh(args), **kw)
    kept = run_kernel(module, "exp_kernel", _fresh(args), **kw)
    rows = len(kept.timeline.rows)
    got: list[Any] = []
    assert _counted(monkeypatch, lambda: got.append(run_kernel(module, "exp_kernel", _fresh(args), **kw))) == (0, 0)
    assert got[0].accounting == "remembered" and len(kept.timeline.rows) == rows
    # the counter counts: a run priced afresh calls the cost formulas and appends rows
    calls, appended = _counted(
        monkeypatch, lambda: run_kernel(module, "exp_kernel", _fresh(args), remember_accounting=False, **kw)
    )
    assert calls > 0 and appended == 0  # its timeline is the core's own (not made in run.py)
