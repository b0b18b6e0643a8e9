"""Loop replay (pypto.device.interpreter.loop_replay): a replayed loop leaves exactly what running every
iteration leaves: outputs, records, flag pairs, cycles, races and problems; a data op that differs from the
template, and an error in a replayed iteration, fall back without a trace of the replay."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_races import CORPUS, UPSTREAM, _args, _funcs, synced_kernels

from pypto.device.interpreter import DeviceError, loop_replay, run_kernel
from pypto.device.interpreter import run as run_module
from pypto.device.interpreter.races import RaceDetector
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto_with_source_map

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from interpreter_overhead import kernel_text  # noqa: E402 -- the benchmark's kernel: load, exp, store

TRIPS = loop_replay.MIN_TRIPS + 4
"""A loop just long enough to be replayed."""


def _kernel(trips: int, sync: bool = True) -> tuple[Any, Any]:
    module, source_map = parse_pto_with_source_map(kernel_text(trips), "exp.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=sync))
    return module, source_map


def _outcome(module: Any, source_map: Any, x: np.ndarray, races: bool = True) -> tuple[Any, ...]:
    y = np.zeros_like(x)
    run = run_kernel(
        module,
        "exp_kernel",
        [x, y],
        check_races=races,
        positions=source_map.positions,
        remember_race_free=False,
        remember_accounting=False,
    )  # the detector and the accounting run every time: their outcome is compared
    records = [r.to_json() for r in run.records]
    return y.tobytes(), records, list(run.timeline.flag_pairs), run.cycles, run.race_messages, run.problems


@pytest.fixture
def replays(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the loops replayed (one entry per replay, the iterations it replayed)."""
    seen: list[int] = []
    original = loop_replay.timeline_repeat

    def spy(tl: Any, period: Any, times: int) -> None:
        seen.append(times)
        original(tl, period, times)

    monkeypatch.setattr(loop_replay, "timeline_repeat", spy)
    return seen


def _race_state(rd: RaceDetector) -> tuple[Any, ...]:
    """Everything the race detector would compare later: clocks, pending flags, shadow segments, accesses."""
    segs = [
        (space, s.lo, s.hi, s.w_pipe, s.w_tick, s.w_who, dict(s.reads)) for space, ss in rd.shadows.items() for s in ss
    ]
    flags = {k: list(v) for k, v in rd.flags.items()}
    return rd.index, rd.clock, flags, segs, rd.who, rd.counts


def _both(module: Any, source_map: Any, x: np.ndarray, monkeypatch: pytest.MonkeyPatch, races: bool = True) -> None:
    """Run with and without loop replay: the same outcome and, with races on, the same detector state."""
    detectors: list[RaceDetector] = []

    class Kept(RaceDetector):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            detectors.append(self)

    monkeypatch.setattr(run_module, "RaceDetector", Kept)
    monkeypatch.setattr(loop_replay, "ENABLED", False)
    plain = _outcome(module, source_map, x, races)
    monkeypatch.setattr(loop_replay, "ENABLED", True)
    assert _outcome(module, source_map, x, races) == plain
    if races:
        assert _race_state(detectors[0]) == _race_state(detectors[1])


@pytest.mark.parametrize("races", [True, False])
@pytest.mark.parametrize("trips", [loop_replay.MIN_TRIPS, 64])
def test_a_replayed_loop_leaves_what_every_iteration_leaves(
    trips: int, races: bool, replays: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    module, source_map = _kernel(trips)
    x = np.random.default_rng(trips).standard_normal((64 * trips, 128)).astype(np.float32)
    _both(module, source_map, x, monkeypatch, races)
    assert replays and trips - 4 <= replays[-1] < trips  # the period is found in the first iterations


def test_short_loops_run_as_usual(replays: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    module, source_map = _kernel(loop_replay.MIN_TRIPS - 1)
    x = np.ones((64 * (loop_replay.MIN_TRIPS - 1), 128), np.float32)
    _both(module, source_map, x, monkeypatch)
    assert not replays


def test_a_racy_loop_reports_the_same_races(monkeypatch: pytest.MonkeyPatch) -> None:
    module, source_map = _kernel(TRIPS, sync=False)
    x = np.ones((64 * TRIPS, 128), np.float32)
    _both(module, source_map, x, monkeypatch)
    assert _outcome(module, source_map, x)[4], "the unsynced loop races"


@pytest.mark.parametrize("at", [0, 2, 7])
def test_a_data_op_unlike_the_template_ends_the_replay_there(
    at: int, replays: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``at``-th check of the texp (counting from the first replayed iteration) reports a difference:
    the replayed iterations and the current one's skipped accounting are written, and the loop goes on as
    usual."""
    original = loop_replay.LoopReplay._replay

    def differing(
        self: loop_replay.LoopReplay, env: Any, core: Any, iv: Any, it: Any, period: Any, template: Any
    ) -> None:
        calls = [0]
        roles = list(self.roles)
        data = [i for i, r in enumerate(roles) if r.kind == loop_replay.DATA]
        role = roles[data[1]]  # the texp

        def check(env: Any, core: Any, want: Any) -> Any:
            got = role.check(env, core, want)  # type: ignore[misc]
            calls[0] += 1
            return role.probe(env, core) if calls[0] == at + 1 else got  # type: ignore[misc]

        roles[data[1]] = dataclasses.replace(role, check=check)
        original(dataclasses.replace(self, roles=tuple(roles)), env, core, iv, it, period, template)

    module, source_map = _kernel(TRIPS)
    x = np.random.default_rng(1).standard_normal((64 * TRIPS, 128)).astype(np.float32)
    monkeypatch.setattr(loop_replay, "ENABLED", False)
    plain = _outcome(module, source_map, x)
    monkeypatch.setattr(loop_replay, "ENABLED", True)
    monkeypatch.setattr(loop_replay.LoopReplay, "_replay", differing)
    assert _outcome(module, source_map, x) == plain
    assert replays == ([at] if at else [])


def test_an_error_in_a_replayed_iteration_is_the_same_error(
    replays: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GM shorter than the loop reaches: the tload of the next-to-last iteration fails, as it does without
    replay."""
    module, source_map = _kernel(TRIPS)
    x = np.ones((64 * (TRIPS - 2), 128), np.float32).reshape(-1)[: 64 * (TRIPS - 2) * 128]
    errors = []
    for enabled in (False, True):
        monkeypatch.setattr(loop_replay, "ENABLED", enabled)
        with pytest.raises(DeviceError) as info:
            run_kernel(module, "exp_kernel", [x, np.zeros_like(x)], positions=source_map.positions)
        errors.append(str(info.value))
    assert errors[0] == errors[1]
    assert errors[0].startswith("<module>:16:7: pto.tload: GM window"), errors[0]
    assert replays, "the error came in a replayed iteration"


@pytest.mark.skipif(not CORPUS.is_dir() or not UPSTREAM.is_dir(), reason="shared corpus not available")
def test_replay_changes_nothing_on_the_corpus_kernels(replays: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every runnable corpus and upstream kernel with a loop, loops of 3 trips and more offered to replay
    (loops that branch or barrier inside run as usual, and so do those with a pipe that only signals at a
    fixed time, which is not a shift; some replay, tiles allocated in the body included)."""
    monkeypatch.setattr(loop_replay, "MIN_TRIPS", 3)
    compared = 0
    for name, text, func, configs in synced_kernels():
        if "scf.for" not in text:
            continue
        module, source_map = parse_pto_with_source_map(text, name)
        f = next(f for f in _funcs(module) if f.sym_name.data == func)
        for cfg in configs[:2]:
            args = _args(module, f, cfg)
            outcomes = []
            for enabled in (False, True):
                monkeypatch.setattr(loop_replay, "ENABLED", enabled)
                mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
                run = run_kernel(
                    module, func, mine, positions=source_map.positions, pto_file=name, remember_accounting=False
                )
                outputs = [a.tobytes() for a in mine if isinstance(a, np.ndarray)]
                records = [r.to_json() for r in run.records]
                outcomes.append(
                    (outputs, records, run.timeline.flag_pairs, run.cycles, run.race_messages, run.problems)
                )
            assert outcomes[0] == outcomes[1], (name, func, cfg)
            compared += 1
    assert compared >= 5 and replays, (compared, replays)
