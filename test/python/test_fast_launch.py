"""``ChipWorker`` launches straight to a recorded plan (:mod:`pypto.runtime.fast_launch`): taken when
nothing :func:`pypto.runtime.run`'s look-ups read changed, and not taken when anything did (a config
field, the target file, another tensor of the same shape, the program, a compile profiler)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from pypto.compile_profiling import CompileProfiler
from pypto.runtime import ChipWorker, RunConfig, fast_launch
from pypto.runtime.run import prepare
from pypto.target.model import TARGETS_DIR

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_kernel_engine import ADD, _build  # noqa: E402


@pytest.fixture(scope="module")
def add_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Any]:
    return _build(ADD, tmp_path_factory.mktemp("fast-launch") / "build")


@pytest.fixture
def full_runs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The launches that went through ``pypto.runtime.run`` (the full path), in order."""
    seen: list[Any] = []
    run = fast_launch.run_program

    def counted(program: Any, *args: Any, config: Any = None) -> Any:
        result = run(program, *args, config=config)
        seen.append(result)
        return result

    monkeypatch.setattr(fast_launch, "run_program", counted)
    return seen


def _worker(add_build: tuple[Any, Any]) -> tuple[ChipWorker, list[Any], Any]:
    case, compiled = add_build
    worker = ChipWorker()
    dev = [worker.alloc_tensor(t.shape, init=t) for t in case.inputs()]
    return worker, dev, worker.register(compiled, case.name)


def _replaying(worker: ChipWorker, name: Any, dev: list[Any], config: RunConfig) -> None:
    """Launch until a launch is a replay (the worker then remembers it)."""
    for _ in range(3):
        if worker.run(name, *dev, config=config).kernel_engine.replayed:
            return
    raise AssertionError("no replay after three launches")


def test_a_remembered_replay_skips_the_full_path_and_interpreter_launches_keep_it(
    add_build: tuple[Any, Any], full_runs: list[Any]
) -> None:
    worker, dev, name = _worker(add_build)
    cpp = RunConfig(kernel_engine="cpp")
    _replaying(worker, name, dev, cpp)
    full_runs.clear()
    a, b, c = dev
    new_a = torch.randn(a.shape)
    a.copy_from(new_a)
    c.copy_from(torch.zeros(c.shape))
    fast = worker.run(name, *dev, config=cpp)
    assert full_runs == [] and fast.kernel_engine.replayed and worker.launches[-1] is fast
    assert torch.equal(c.to_torch(), new_a + b.to_torch())  # this launch's data
    interpreted = worker.run(name, *dev, config=RunConfig())
    assert full_runs == [interpreted] and interpreted.kernel_engine is None
    assert worker.run(name, *dev, config=RunConfig(kernel_engine="cpp")).kernel_engine.replayed  # an equal config
    assert full_runs == [interpreted]


def test_a_changed_config_field_takes_the_full_path(add_build: tuple[Any, Any], full_runs: list[Any]) -> None:
    worker, dev, name = _worker(add_build)
    cpp = RunConfig(kernel_engine="cpp")
    _replaying(worker, name, dev, cpp)
    full_runs.clear()
    cpp.check_races = False  # the same object changed in place: a field of the plan key
    changed = worker.run(name, *dev, config=cpp)
    assert full_runs == [changed] and not changed.kernel_engine.replayed
    _replaying(worker, name, dev, cpp)
    full_runs.clear()
    cpp.extra["note"] = 1  # a field the plan key does not hold: still the full path (which replays)
    assert worker.run(name, *dev, config=cpp).kernel_engine.replayed and len(full_runs) == 1
    assert worker.run(name, *dev, config=cpp).kernel_engine.replayed and len(full_runs) == 1  # remembered again
    cpp.rtol = 0.5
    worker.run(name, *dev, config=cpp)
    assert len(full_runs) == 2


def test_a_changed_target_file_takes_the_full_path(
    add_build: tuple[Any, Any], full_runs: list[Any], tmp_path: Path
) -> None:
    target = tmp_path / "chip.mlir"
    target.write_text((TARGETS_DIR / "a2a3.mlir").read_text())
    worker, dev, name = _worker(add_build)
    cpp = RunConfig(kernel_engine="cpp", target=str(target))
    _replaying(worker, name, dev, cpp)
    full_runs.clear()
    before = worker.run(name, *dev, config=cpp)
    assert full_runs == [] and before.target is not None
    target.write_text(target.read_text() + "\n")  # the same chip, another file
    after = worker.run(name, *dev, config=cpp)
    assert full_runs == [after] and not after.kernel_engine.replayed
    assert after.target is not before.target  # read again, as the full path does


def test_a_relative_target_path_is_not_remembered(
    add_build: tuple[Any, Any], full_runs: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``RunConfig(target="chip.mlir")`` names a file in the current directory, which may change."""
    (tmp_path / "chip.mlir").write_text((TARGETS_DIR / "a2a3.mlir").read_text())
    monkeypatch.chdir(tmp_path)
    worker, dev, name = _worker(add_build)
    cpp = RunConfig(kernel_engine="cpp", target="chip.mlir")
    _replaying(worker, name, dev, cpp)
    full_runs.clear()
    assert worker.run(name, *dev, config=cpp).kernel_engine.replayed and len(full_runs) == 1


def test_another_tensor_of_the_same_shape_takes_the_full_path(add_build: tuple[Any, Any], full_runs: list[Any]) -> None:
    worker, dev, name = _worker(add_build)
    cpp = RunConfig(kernel_engine="cpp")
    _replaying(worker, name, dev, cpp)
    full_runs.clear()
    a, b, c = dev
    other = worker.alloc_tensor(c.shape, c.dtype)
    result = worker.run(name, a, b, other, config=cpp)
    assert full_runs == [result] and not result.kernel_engine.replayed
    assert torch.equal(other.to_torch(), a.to_torch() + b.to_torch())
    worker.free_tensor(other)
    with pytest.raises(RuntimeError, match="freed DeviceTensor"):
        worker.run(name, a, b, other, config=cpp)
    swapped = worker.run(name, b, a, c, config=cpp)  # the same tensors in other places
    assert full_runs[-1] is swapped and not swapped.kernel_engine.replayed


def test_another_program_under_the_name_or_a_profiler_takes_the_full_path(
    add_build: tuple[Any, Any], full_runs: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    worker, dev, name = _worker(add_build)
    cpp = RunConfig(kernel_engine="cpp")
    _replaying(worker, name, dev, cpp)
    full_runs.clear()
    monkeypatch.setenv("PYPTO_COMPILE_PROFILING", "1")
    profiled = worker.run(name, *dev, config=cpp)
    assert full_runs == [profiled] and profiled.profile is not None
    monkeypatch.delenv("PYPTO_COMPILE_PROFILING")
    assert worker.run(name, *dev, config=cpp).kernel_engine.replayed and full_runs == [profiled]
    with CompileProfiler():  # an active profiler: the launch is profiled as a stage of it
        inside = worker.run(name, *dev, config=cpp)
    assert full_runs == [profiled, inside]
    full_runs.clear()
    worker.programs[name.name] = prepare(add_build[1])  # another object under the name (the same program)
    again = worker.run(name, *dev, config=cpp)
    assert full_runs == [again] and again.kernel_engine.replayed
    assert worker.run(name, *dev, config=cpp).kernel_engine.replayed and full_runs == [again]


def test_an_evicted_plan_takes_the_full_path(add_build: tuple[Any, Any], full_runs: list[Any]) -> None:
    """Recording more plans than a program keeps (``MAX_PLANS``) drops the oldest: the remembered launch
    of it is not taken, and the full path records the plan again."""
    from pypto.runtime.cpp_plan import MAX_PLANS

    worker, dev, name = _worker(add_build)
    cpp = RunConfig(kernel_engine="cpp")
    _replaying(worker, name, dev, cpp)
    remembered = worker._replayable[name.name]
    a, b, c = dev
    for _ in range(MAX_PLANS):  # as many new plans (another output tensor each), launched through the handle
        other = worker.alloc_tensor(c.shape, c.dtype)
        name(a, b, other, config=cpp)
    assert remembered.plan.dropped
    full_runs.clear()
    again = worker.run(name, *dev, config=cpp)
    assert full_runs == [again] and not again.kernel_engine.replayed
    assert torch.equal(c.to_torch(), a.to_torch() + b.to_torch())
