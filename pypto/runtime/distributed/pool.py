"""Persistent rank processes: one simulated chip per rank, kept alive across dispatches.

:class:`RankPool` starts ``world_size`` local processes once (``torch.multiprocessing``, as
:func:`.launch.launch`), each joining one gloo process group on a store this process hosts, and then
serves dispatches: :meth:`RankPool.run` sends ``fn`` and its arguments to every rank, which runs
``fn(comm, *args, state=state)`` and answers with its value, clock and events, like a launch.
``state`` is the rank process's own dict, kept between dispatches: what lives on the chip (resident
tensors, loaded programs, a persistent worker's windows; ``state["base_store"]`` is the store without the
dispatch's prefix, for what outlives a dispatch). Each dispatch gets a fresh :class:`~.comm.RankComm` (clock at 0, its own
key space on the store), so signals and window names never leak from one dispatch into the next.

Operations asked for from several threads (the dispatches a worker has in flight, resident-tensor copies)
run one at a time, in the order of their :class:`~.submit.Turn` (reserved when asked for).

A rank that raises, dies, or (with ``dispatch_timeout_s``) hangs makes :meth:`run` raise
:class:`~.launch.DistributedRunError` naming the rank and its task; the pool is then closed (its
ranks may be half-way through a collective) and says so on the next dispatch.
"""

from __future__ import annotations

import os
import pickle
import queue as queue_mod
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch.distributed as dist
import torch.multiprocessing as mp

from .comm import RankComm
from .config import DistributedConfig, distributed_config_of, under_torchrun
from .launch import (
    GRACE_S,
    DistributedRun,
    DistributedRunError,
    _free_port,
    _link_target,
    _run_rank,
    collect,
    exception_line,
    finish_run,
    join_rank_group,
    rank_result,
    set_aside,
    start_ranks,
)
from .submit import Turn, Turnstile


def _pool_child(rank: int, config: DistributedConfig, host: str, port: int, commands: Any, results: Any) -> None:
    """The body of one persistent rank process: join the group, then serve commands until ``None``."""
    try:
        target, store = join_rank_group(rank, config, host, port)
    except Exception as exc:  # noqa: BLE001 - reported as this rank's failure
        results.put(("err", rank, "connect", exception_line(exc), 0))
        return
    results.put(("up", rank))
    state: dict[str, Any] = {"pid": os.getpid(), "base_store": store}  # base_store: keys that outlive a dispatch
    while True:
        command = commands.get()
        if command is None:
            break
        seq, fn, payload, output_dir = command
        comm = RankComm(rank, config.world_size, dist.PrefixStore(f"d{seq}", store), target.link, target.clock_hz,
                        config.timeout_s, config.device_ids[rank], target)
        comm.output_dir, comm.epoch = output_dir, seq
        try:
            args = pickle.loads(payload)
        except Exception as exc:  # noqa: BLE001 - reported as this rank's failure
            results.put(("err", rank, "main", f"cannot read the dispatch: {type(exc).__name__}: {exc}", seq))
            break
        outcome = _run_rank(comm, fn, args, {"state": state})
        results.put((*outcome, seq))
        if outcome[0] == "err":
            # a failed dispatch closes the pool: end this process now, as a launch's rank does, so a peer blocked
            # on it in a receive fails at once (the connection closes) instead of at its timeout
            break
    try:
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001 - a failed peer may have broken the group already
        pass


class RankPool:
    """``world_size`` rank processes serving dispatches until :meth:`close` (see the module docstring)."""

    def __init__(self, config: Any, startup_timeout_s: float | None = None):
        self.config = distributed_config_of(config)
        if under_torchrun():
            raise NotImplementedError("a prepared worker's persistent rank processes are local: under torchrun, "
                                      "call the compiled program directly (one launch per dispatch)")
        self.target = _link_target(self.config)
        self.world = int(self.config.world_size or 0)
        self.closed: str | None = None
        self._seq = 0
        self.turns = Turnstile()
        """The order in which the rank processes serve operations asked for from several threads."""
        port = _free_port()
        ctx = mp.get_context(self.config.start_method)
        self._results = ctx.Queue()
        self._commands = [ctx.Queue() for _ in range(self.world)]
        self._procs = [ctx.Process(target=_pool_child, args=(r, self.config, "127.0.0.1", port, self._commands[r],
                                                             self._results),
                                   daemon=True, name=f"pypto-chip{r}") for r in range(self.world)]  # fmt: skip
        start_ranks(self._procs)  # before the store's server thread exists: nothing half-locked is forked
        self._store = dist.TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False,
                                    timeout=timedelta(seconds=self.config.timeout_s))
        self._wait_up(startup_timeout_s or self.config.timeout_s)

    def _wait_up(self, timeout_s: float) -> None:
        up: set[int] = set()
        failures: dict[int, tuple[str, str]] = {}
        end = time.monotonic() + timeout_s
        while len(up) + len(failures) < self.world and time.monotonic() < end:
            try:
                msg = self._results.get(timeout=0.05)
            except queue_mod.Empty:
                for r, p in enumerate(self._procs):
                    if r not in up and r not in failures and p.exitcode is not None:
                        failures[r] = ("connect", f"the rank's process exited with code {p.exitcode} at start")
                continue
            if msg[0] == "up":
                up.add(msg[1])
            else:
                failures[msg[1]] = (msg[2], msg[3])
        for r in range(self.world):
            if r not in up and r not in failures:
                failures[r] = ("connect", f"did not join the process group within the {timeout_s:g} s startup "
                               "timeout (a start deadlock or an unreachable store)")
        if failures:
            self._shutdown()
            raise DistributedRunError(failures, self.world)

    @property
    def pids(self) -> list[int]:
        """The rank processes' ids (the same for every dispatch of the pool)."""
        return [int(p.pid or 0) for p in self._procs]

    def run(self, fn: Callable[..., Any], *args: Any, output_dir: Any = None, turn: Turn | None = None) -> DistributedRun:
        """Run ``fn(comm, *args, state=state)`` on every rank (``fn`` module-level: it is pickled by name).
        Operations asked for from several threads run one at a time, in the order of their turns
        (:attr:`turns`; ``turn``: one reserved earlier, which the caller ends; none: a new one)."""
        own = turn is None
        turn = self.turns.reserve() if turn is None else turn
        turn.acquire()
        try:
            return self._run(fn, args, output_dir)
        finally:
            if own:
                turn.release()

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], output_dir: Any) -> DistributedRun:
        if self.closed is not None:
            raise RuntimeError(f"this worker's rank processes are gone ({self.closed}); prepare a new worker")
        t0 = time.perf_counter()
        self._seq += 1
        seq, payload = self._seq, pickle.dumps(args)
        config = self.config if output_dir is None else _with_output(self.config, output_dir)
        earlier = set_aside(config)  # before any rank writes (:mod:`.outputs`)
        for q in self._commands:
            q.put((seq, fn, payload, None if output_dir is None else str(output_dir)))
        store = dist.PrefixStore(f"d{seq}", self._store)
        done, failures = collect(self._procs, self._results, self.config, store, set(range(self.world)),
                                 accept=lambda msg: msg[-1] == seq, deadline_s=self.config.dispatch_timeout_s)
        if failures:
            self._shutdown()
            self.closed = f"dispatch {seq} failed"
        ranks = [rank_result(done[r], self.config.device_ids[r]) for r in range(self.world)] if not failures else []
        return finish_run(ranks, failures, self.world, config, self.target, time.perf_counter() - t0, earlier)

    def close(self) -> None:
        """End the rank processes (idempotent)."""
        if self.closed is None:
            self.closed = "closed"
            for q in self._commands:
                q.put(None)
        self._shutdown()

    def _shutdown(self) -> None:
        for p in self._procs:
            if p.is_alive() and self.closed is None:
                p.terminate()
        for p in self._procs:
            p.join(timeout=GRACE_S)
            if p.is_alive():
                p.kill()
                p.join()
        self._store = None


def _with_output(config: DistributedConfig, output_dir: Any) -> DistributedConfig:
    from dataclasses import replace

    return replace(config, output_dir=output_dir)
