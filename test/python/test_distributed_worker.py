"""The prepared L3 worker (issue 19): persistent rank processes across dispatches, resident tensors,
HOST SubWorker callbacks, failures named by rank; and upstream's two examples/runtime/ programs that use
DistributedCompiledProgram, run unmodified when a checkout is present."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import dist_worker_programs as pw
import pytest
import torch

from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.runtime import DistributedWorker, RunConfig, StackedDeviceTensor, simpler_compat
from pypto.runtime.distributed import DistributedRunError
from pypto.runtime.distributed.pool import RankPool

TIMEOUT = 60.0  # generous: the suite shares 2 cores with other runs
UPSTREAM = Path(os.environ.get("PYPTO_UPSTREAM_DIR", "/tmp/upstream-pypto"))
RUNTIME_EXAMPLES = UPSTREAM / "examples" / "runtime"
REPO = Path(__file__).resolve().parents[2]


def dc(world: int = 2, **kw: object) -> DistributedConfig:
    return DistributedConfig(device_ids=list(range(world)), timeout_s=float(kw.pop("timeout_s", TIMEOUT)), **kw)


@pytest.fixture(scope="module")
def inspect_program(tmp_path_factory: pytest.TempPathFactory) -> DistributedCompiledProgram:
    out = tmp_path_factory.mktemp("inspect") / "build"
    return ir.compile(pw.AddThenInspect, distributed_config=dc(), output_dir=str(out))


def test_sub_workers_are_host_functions_with_their_binding_flag(inspect_program: DistributedCompiledProgram) -> None:
    prog = pw.AddThenInspect
    assert prog.get_function("inspect").requires_runtime_binding is True  # body `...` (after a docstring)
    assert prog.get_function("record_first").requires_runtime_binding is False
    assert prog.get_function("double").name == "double"  # an IR function as before
    plan = [(d.rank, d.program) for d in inspect_program.plan.dispatches]
    assert plan == [(0, "double"), (0, "!inspect"), (0, "!record_first"),
                    (1, "double"), (1, "!inspect"), (1, "!record_first")]  # fmt: skip
    sub = Path(inspect_program.output_dir) / "sub_workers"
    assert (sub / "__required__.json").read_text().strip() == '["inspect"]'
    again = DistributedCompiledProgram.from_dir(inspect_program.output_dir)
    assert again.required_callbacks() == {"inspect"} and again.sub_worker_names() == {"inspect", "record_first"}


def test_a_callback_on_a_sub_worker_sees_its_chip_result(inspect_program: DistributedCompiledProgram) -> None:
    torch.manual_seed(0)
    x, y = torch.randn(2, 2, pw.N), torch.zeros(2, 2, pw.N)
    seen: list[torch.Tensor] = []
    pw.SEEN.clear()
    with inspect_program.prepare(callbacks={"inspect": lambda args: seen.append(args[0].clone())}) as rt:
        rt(x, y)
    torch.testing.assert_close(y, 2 * x)
    assert len(seen) == 2
    for r in range(2):
        torch.testing.assert_close(seen[r], 2 * x[r])  # the chip's output, back before the callback ran
    assert pw.SEEN == pytest.approx((2 * x[:, 0, 0]).tolist())  # the concrete SubWorker ran its own body


def test_callbacks_with_four_ranks(tmp_path: Path) -> None:
    compiled = ir.compile(pw.AddThenInspect, distributed_config=dc(4), output_dir=str(tmp_path / "build"))
    x, y = torch.arange(4 * 2 * pw.N, dtype=torch.float32).reshape(4, 2, pw.N), torch.zeros(4, 2, pw.N)
    seen: list[float] = []
    pw.SEEN.clear()
    with compiled.prepare(callbacks={"inspect": lambda args: seen.append(float(args[0].sum()))}) as rt:
        rt(x, y)
    torch.testing.assert_close(y, 2 * x)
    assert seen == [float(2 * x[r].sum()) for r in range(4)]  # one per rank, in the plan's order
    assert pw.SEEN == [float(2 * x[r, 0, 0]) for r in range(4)]


def test_a_missing_or_unknown_binding_is_a_value_error_before_anything_starts(
        inspect_program: DistributedCompiledProgram) -> None:
    with pytest.raises(ValueError, match=r"abstract SubWorker\(s\) \['inspect'\] have no implementation"):
        inspect_program.prepare()
    with pytest.raises(ValueError, match=r"callbacks names \['nope'\] are not sub-workers"):
        inspect_program.prepare(callbacks={"inspect": print, "nope": print})
    with pytest.raises(ValueError, match="have no implementation"):  # a one-shot call needs the binding too
        inspect_program(torch.zeros(2, 2, pw.N), torch.zeros(2, 2, pw.N))


def test_a_failing_callback_names_its_rank_and_the_worker_goes_on(inspect_program: DistributedCompiledProgram) -> None:
    x, y = torch.ones(2, 2, pw.N), torch.zeros(2, 2, pw.N)
    calls: list[int] = []
    fail = [True]

    def inspect(args: list[torch.Tensor]) -> None:
        calls.append(1)
        if fail[0] and len(calls) == 2:  # rank 1's callback
            raise KeyError("no such sample")

    with inspect_program.prepare(callbacks={"inspect": inspect}) as rt:
        with pytest.raises(DistributedRunError) as err:
            rt(x, y)
        assert err.value.failures == {1: ("callback inspect", "KeyError: 'no such sample'")}
        assert "rank 1, task 'callback inspect': KeyError" in str(err.value)
        fail[0] = False
        rt(x, y)  # the ranks are still up
    torch.testing.assert_close(y, 2 * x)


def test_a_plan_with_windows_keeps_them_across_its_callbacks_and_drops_them_when_one_fails(tmp_path: Path, window_dir: Path) -> None:
    compiled = ir.compile(pw.WindowedInspect, distributed_config=dc(), output_dir=str(tmp_path / "build"))
    assert len(compiled.plan.windows) == 1
    x, y = torch.ones(2, 2, pw.N), torch.zeros(2, 2, pw.N)
    shm = set(window_dir.glob("pypto-*"))
    seen: list[float] = []
    with compiled.prepare(callbacks={"inspect": lambda args: seen.append(float(args[0][0, 0]))}) as rt:
        rt(x, y)
        assert seen == [2.0, 2.0]
        assert set(window_dir.glob("pypto-*")) <= shm  # the last segment removed the windows

    def bad(args: list[torch.Tensor]) -> None:
        raise RuntimeError("bad sample")

    with compiled.prepare(callbacks={"inspect": bad}) as rt:
        with pytest.raises(DistributedRunError, match="rank 0, task 'callback inspect': RuntimeError: bad sample"):
            rt(x, y)
        assert set(window_dir.glob("pypto-*")) <= shm
        assert rt.pool.run(pw.rank_open_runs).values == [0, 0]  # every rank dropped the run mid-plan
        rt.callbacks["inspect"] = lambda args: None
        rt(x, y)  # the ranks go on: the next dispatch opens its own windows


def test_a_persistent_chip_keeps_its_state_across_dispatches_and_programs(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(1)
    x = torch.randn(2, 2, pw.N)
    cfg = RunConfig(distributed_config=dc(), save_kernels_dir=str(tmp_path / "a"))
    acc_prog = pw.accumulate_host.compile(x, x.clone(), config=cfg)
    read_prog = pw.read_host.compile(x, x.clone(), config=RunConfig(distributed_config=dc(),
                                                                  save_kernels_dir=str(tmp_path / "b")))
    with DistributedWorker([acc_prog, read_prog]) as rt:
        pids = rt.pids
        acc = rt.alloc_stacked_tensor(torch.ones(2, 2, pw.N))
        assert isinstance(acc, StackedDeviceTensor)
        rt.run(acc_prog, x, acc)
        rt.run(acc_prog, x, acc)  # the second dispatch reads what the first left on each chip
        out = torch.zeros(2, 2, pw.N)
        handed: list[torch.Tensor] = []
        wire = simpler_compat.make_tensor_arg
        monkeypatch.setattr(simpler_compat, "make_tensor_arg", lambda w, t: handed.append(t) or wire(w, t))
        rt.run(read_prog, acc, out)  # another program, same chips, same resident shards
        assert len(handed) == 1 and handed[0] is out  # host tensors become dispatch arguments; `acc` stays resident
        monkeypatch.undo()
        torch.testing.assert_close(out, 1 + 2 * x)
        assert rt._owned_tensors == [acc]  # upstream's name for the live resident tensors
        handle = rt.register(read_prog)  # upstream's explicit surface: a handle that dispatches the program
        assert handle.compiled is read_prog and not handle.closed
        out.zero_()
        handle(acc, out)
        torch.testing.assert_close(out, 1 + 2 * x)
        with pytest.raises(ValueError, match="requires a program this worker was made with"):
            rt.register(object())
        host = torch.zeros(2, 2, pw.N)
        rt.copy_stacked_from(acc, host)
        torch.testing.assert_close(host, 1 + 2 * x)
        assert rt.pids == pids  # no rank process was started again
        with pytest.raises(TypeError, match="ambiguous"):
            rt(x, acc)
        rt.free_tensor(acc)
        with pytest.raises(ValueError, match="was freed"):
            rt.run(read_prog, acc, out)
    assert handle.closed and rt._owned_tensors == []  # a closed worker's handles are closed
    with pytest.raises(RuntimeError, match=r"DistributedWorker.register\(\) called after close\(\)"):
        rt.register(read_prog)
    with pytest.raises(TypeError, match="a one-shot call takes host tensors only"):
        acc_prog(x, acc)


def test_a_pool_serves_dispatches_on_the_same_processes() -> None:
    pool = RankPool(dc())
    try:
        first, second = pool.run(pw.rank_count), pool.run(pw.rank_count)
        assert [v[1] for v in first.values] == [1, 1] and [v[1] for v in second.values] == [2, 2]
        assert [v[0] for v in first.values] == [v[0] for v in second.values] == pool.pids
    finally:
        pool.close()


@pytest.mark.parametrize(("fn", "deadline", "expect"), [
    (pw.rank_raise, None, {1: ("main", "ValueError: boom on purpose")}),
    (pw.rank_hang, 3.0, {1: ("main", "no result within the 3 s dispatch timeout (hung); ended by the launcher")}),
    (pw.rank_exit, None, {1: ("main", "the rank's process exited with code 9 (killed or crashed)")}),
], ids=["raises", "hangs", "dies"])  # fmt: skip
def test_a_failing_or_hung_rank_is_reported_with_its_rank_within_the_timeout(fn: object, deadline: float | None,
                                                                             expect: dict) -> None:
    pool = RankPool(dc(timeout_s=3.0, dispatch_timeout_s=deadline))
    t0 = time.monotonic()
    try:
        with pytest.raises(DistributedRunError) as err:
            pool.run(fn)
        assert time.monotonic() - t0 < 3.0 + 5.0 + 20.0  # timeout + grace + slack for 2 busy cores
        rank, (task, message) = next(iter(expect.items()))
        assert err.value.failures[rank][0] == task
        assert err.value.failures[rank][1].startswith(message)
        with pytest.raises(RuntimeError, match="prepare a new worker"):
            pool.run(pw.rank_count)
    finally:
        pool.close()


# ---- upstream's examples/runtime/ (DistributedCompiledProgram), unmodified ---------------------


def _run_upstream(code_or_path: list[str], tmp_path: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    proc = subprocess.run([sys.executable, *code_or_path], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-3000:]
    assert "skipped (needs" not in out, out[-3000:]
    return out


@pytest.mark.skipif(not RUNTIME_EXAMPLES.is_dir(), reason="no upstream pypto checkout (PYPTO_UPSTREAM_DIR)")
@pytest.mark.parametrize("device_ids", [None, [0, 1], [0, 1, 2, 3]], ids=["default", "2 ranks", "4 ranks"])
def test_upstream_distributed_callback_example(device_ids: list[int] | None, tmp_path: Path) -> None:
    path = RUNTIME_EXAMPLES / "distributed_callback.py"
    if device_ids is not None:  # the script fixes device_ids=[0] in its two compiles: a copy with more ranks
        text = path.read_text(encoding="utf-8")
        assert text.count("device_ids=[0],") == 2
        path = tmp_path / path.name
        path.write_text(text.replace("device_ids=[0],", f"device_ids={device_ids!r},"), encoding="utf-8")
    out = _run_upstream([str(path)], tmp_path)
    assert "callback ran — observed f[0] = 5.0 (expected 5.0)" in out
    assert "missing binding rejected at prepare():" in out and out.rstrip().endswith("OK")


@pytest.mark.skipif(not RUNTIME_EXAMPLES.is_dir(), reason="no upstream pypto checkout (PYPTO_UPSTREAM_DIR)")
@pytest.mark.parametrize("device_ids", [None, [0, 1], [0, 1, 2, 3]], ids=["default", "2 ranks", "4 ranks"])
def test_upstream_multi_program_kv_cache_example(device_ids: list[int] | None, tmp_path: Path) -> None:
    path = RUNTIME_EXAMPLES / "multi_program_kv_cache.py"
    if device_ids is None:  # as a user runs it
        out = _run_upstream([str(path)], tmp_path)
    else:  # its serve() with a rank count; it checks every decode step against torch itself
        code = (f"import runpy; g = runpy.run_path({str(path)!r}, run_name='example'); "
                f"g['serve']('a2a3sim', {device_ids!r})")
        out = _run_upstream(["-c", code], tmp_path)
    assert "OK — prefill wrote the KV cache; 3 decode steps read it on one shared worker" in out
