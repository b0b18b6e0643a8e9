"""``rt.submit`` on a prepared L3 worker (issue 19): it returns at once and the dispatch runs while the caller
goes on; ``result`` / ``wait`` block and re-raise; two submits are in flight at once and a third waits for the
oldest; resident tensors stay valid while used; an error reaches its handle (or ``close``) and the worker goes
on; HOST callbacks run on ``num_sub_workers`` executors, so those of two submits in flight may run at once.

Progress is observed through events set by the callbacks, never by timing the runs: a callback holds its
dispatch until the test releases it (``GATE_S`` bounds that, so a regression fails instead of hanging)."""

from __future__ import annotations

import threading
from pathlib import Path

import dist_worker_programs as pw
import pytest
import torch

from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.runtime.distributed import DistributedRunError
from pypto.runtime.distributed.submit import DistributedRunHandle, Turnstile

TIMEOUT = 60.0  # generous: the suite shares 2 cores with other runs
GATE_S = 10.0  # how long a held callback waits for the test (a regression fails after it)


def dc(**kw: object) -> DistributedConfig:
    return DistributedConfig(device_ids=[0, 1], timeout_s=TIMEOUT, **kw)


@pytest.fixture(scope="module")
def inspect_program(tmp_path_factory: pytest.TempPathFactory) -> DistributedCompiledProgram:
    return ir.compile(pw.AddThenInspect, distributed_config=dc(), output_dir=str(tmp_path_factory.mktemp("s") / "b"))


class Gate:
    """A callback that holds its dispatch until :meth:`open` (``entered`` tells the test it got there)."""

    def __init__(self) -> None:
        self.entered, self.gate = threading.Event(), threading.Event()
        self.released: list[bool] = []

    def hold(self) -> None:
        self.entered.set()
        self.released.append(self.gate.wait(GATE_S))

    def open(self) -> None:
        self.gate.set()


def test_submit_returns_while_the_dispatch_runs_and_result_waits_for_it(
        inspect_program: DistributedCompiledProgram) -> None:
    x, y = torch.ones(2, 2, pw.N), torch.zeros(2, 2, pw.N)
    g = Gate()
    with inspect_program.prepare(callbacks={"inspect": lambda args: g.hold()}) as rt:
        assert rt.num_sub_workers == 2  # upstream: max(num_sub_workers=0, its two SubWorkers)
        handle = rt.submit(inspect_program, x, y)
        assert isinstance(handle, DistributedRunHandle)
        assert g.entered.wait(TIMEOUT)  # the dispatch is in its first callback ...
        assert not handle.done  # ... and submit has returned: the caller works on the host meanwhile
        with pytest.raises(TimeoutError, match="timed out"):
            handle.result(timeout=0)
        with pytest.raises(ValueError, match="non-negative finite"):
            handle.wait(timeout=-1)
        g.open()
        handle.result()
        assert handle.done
        handle.wait()  # the cached outcome, again
    assert g.released == [True, True]  # both ranks' callbacks ran to their end once the test let them
    torch.testing.assert_close(y, 2 * x)


def test_submits_reach_the_ranks_in_submit_order_and_a_third_waits_for_the_oldest(tmp_path: Path) -> None:
    x = torch.ones(2, 2, pw.N)
    prog = pw.accumulate_host.compile(x, x.clone(), config=ir_config(tmp_path))
    with prog.prepare() as rt:
        acc = rt.alloc_stacked_tensor(torch.zeros(2, 2, pw.N))
        order: list[float] = []
        serve = rt.pool._run

        def record(fn: object, args: tuple, output_dir: object) -> object:
            if getattr(fn, "__name__", "") == "run_steps":  # (plan, paths, chip, host_args, ...): x's value
                order.append(float(args[3][0].flatten()[0]))
            return serve(fn, args, output_dir)

        rt.pool._run = record
        xs = [torch.full((2, 2, pw.N), float(k)) for k in (1, 2, 3)]
        first, second = rt.submit(prog, xs[0], acc), rt.submit(prog, xs[1], acc)
        third = rt.submit(prog, xs[2], acc)  # two in flight: waits for the oldest first
        assert first.done
        for h in (second, third):
            h.result()
        assert order == [1.0, 2.0, 3.0]
        host = torch.zeros(2, 2, pw.N)
        rt.copy_stacked_from(acc, host)
        torch.testing.assert_close(host, torch.full((2, 2, pw.N), 6.0))


def ir_config(tmp_path: Path) -> object:
    from pypto.runtime import RunConfig

    return RunConfig(distributed_config=dc(), save_kernels_dir=str(tmp_path / "k"))


def test_a_resident_tensor_used_by_a_submit_in_flight_stays_valid_until_it_ends(tmp_path: Path) -> None:
    prog = ir.compile(pw.AccumulateThenInspect, distributed_config=dc(), output_dir=str(tmp_path / "b"))
    x = torch.ones(2, 2, pw.N)
    g = Gate()
    seen: list[float] = []

    def inspect(args: list[torch.Tensor]) -> None:
        seen.append(float(args[0][0, 0]))
        g.hold()

    with prog.prepare(callbacks={"inspect": inspect}) as rt:
        acc = rt.alloc_stacked_tensor(torch.full((2, 2, pw.N), 5.0))
        handle = rt.submit(prog, x, acc)
        assert g.entered.wait(TIMEOUT)
        assert not handle.done
        freed = threading.Event()
        freer = threading.Thread(target=lambda: (rt.free_tensor(acc), freed.set()))
        freer.start()
        assert not freed.wait(1.0)  # the dispatch still uses it: free_tensor waits for the dispatch's end
        assert not acc.freed
        g.open()
        handle.result()
        freer.join(TIMEOUT)
        assert freed.is_set() and acc.freed
    assert seen == [6.0, 6.0]  # each rank's shard, read after its chip's accumulate


def test_an_error_reaches_its_handle_and_the_next_submit_and_the_worker_go_on(
        inspect_program: DistributedCompiledProgram) -> None:
    g = Gate()

    def inspect(args: list[torch.Tensor]) -> None:
        if float(args[0][0, 0]) == 2.0:  # the first submit's: held, then fails
            g.hold()
            raise KeyError("no such sample")

    x1, y1 = torch.ones(2, 2, pw.N), torch.zeros(2, 2, pw.N)
    x2, y2 = torch.full((2, 2, pw.N), 3.0), torch.zeros(2, 2, pw.N)
    with inspect_program.prepare(callbacks={"inspect": inspect}) as rt:
        bad, good = rt.submit(inspect_program, x1, y1), rt.submit(inspect_program, x2, y2)
        assert g.entered.wait(TIMEOUT) and not bad.done  # both submitted while the first one runs
        good.result()  # the second one ends while the first is still held in its callback
        torch.testing.assert_close(y2, 2 * x2)
        assert not bad.done
        g.open()
        for _ in range(2):  # every call sees the same cached error
            with pytest.raises(DistributedRunError, match="rank 0, task 'callback inspect': KeyError"):
                bad.result()
        y2.zero_()
        rt(x2, y2)  # the worker goes on
        torch.testing.assert_close(y2, 2 * x2)

    unread = inspect_program.prepare(callbacks={"inspect": inspect})
    g.gate.set()
    handle = unread.submit(inspect_program, x1, y1)
    with pytest.raises(DistributedRunError, match="callback inspect"):  # nobody asked the handle: close reports it
        unread.close()
    assert handle.done
    unread.close()  # once


@pytest.mark.parametrize("num_sub_workers", [2, 0])
def test_callbacks_of_two_submits_run_at_once_on_num_sub_workers_executors(tmp_path: Path,
                                                                           num_sub_workers: int) -> None:
    prog = ir.compile(pw.WindowedInspect, distributed_config=dc(num_sub_workers=num_sub_workers),
                      output_dir=str(tmp_path / "b"))
    second_in_callback = threading.Event()
    lock = threading.Lock()
    active, most = [0], [0]
    met: list[bool] = []

    def inspect(args: list[torch.Tensor]) -> None:
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
        try:
            if float(args[0][0, 0]) == 2.0 and not met:  # the first submit's first callback
                met.append(second_in_callback.wait(GATE_S if num_sub_workers else 1.0))
            else:
                second_in_callback.set()
        finally:
            with lock:
                active[0] -= 1

    x1, y1 = torch.ones(2, 2, pw.N), torch.zeros(2, 2, pw.N)
    x2, y2 = torch.full((2, 2, pw.N), 3.0), torch.zeros(2, 2, pw.N)
    with prog.prepare(callbacks={"inspect": inspect}) as rt:
        assert rt.num_sub_workers == max(num_sub_workers, 1)  # upstream: at least one per SubWorker
        first, second = rt.submit(prog, x1, y1), rt.submit(prog, x2, y2)
        first.result()
        second.result()
    torch.testing.assert_close(y1, 2 * x1)
    torch.testing.assert_close(y2, 2 * x2)
    if num_sub_workers == 2:  # the second submit's callback ran while the first's was still running
        assert met == [True] and most[0] == 2
    else:  # one executor: one callback at a time, whatever the submits
        assert met == [False] and most[0] == 1


def test_a_turnstile_serves_reserved_turns_in_order_whatever_thread_takes_them() -> None:
    gate, log = Turnstile(), []
    turns = [gate.reserve() for _ in range(3)]

    def take(k: int) -> None:
        turns[k].acquire()
        log.append(k)
        turns[k].release()

    threads = [threading.Thread(target=take, args=(k,)) for k in (2, 1)]
    for t in threads:
        t.start()
    turns[0].release()  # reserved, never taken (a submit that failed before reaching the ranks)
    for t in threads:
        t.join(TIMEOUT)
    assert log == [1, 2]
