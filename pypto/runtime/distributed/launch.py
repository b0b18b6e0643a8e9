"""Launch a multi-chip run: one process per rank, each holding one simulated chip.

:func:`launch` runs ``fn(comm, *args)`` on every rank (``comm``: the rank's
:class:`~.comm.RankComm`) and returns a :class:`DistributedRun`:

- by default it starts ``world_size`` local processes with ``torch.multiprocessing``;
  this process hosts the run's ``torch.distributed`` store (so a rank that dies
  does not take the store with it) and the ranks join a gloo process group on it;
- under ``torchrun`` (its ``RANK`` / ``WORLD_SIZE`` / ``MASTER_*`` variables set) the
  same call runs this process's rank only, joins ``torchrun``'s rendezvous
  (``env://``) and gathers every rank's result, so the program is unchanged.

A rank that raises, dies, does not join the process group within ``timeout_s``
or waits past ``timeout_s`` makes the launch raise
:class:`DistributedRunError` naming every failed rank, its task and why; the
surviving ranks fail on their own timeouts (never a silent deadlock) and are
terminated if they outlive the grace period. Local work that never returns and
never talks to a peer is bounded only by ``dispatch_timeout_s`` (the whole launch; None by
default, as a chip simulation may take long): a rank without a result by then is reported as
hung, with its task, and ended. With the ``fork`` start method, threads the
parent runs (a browser driver, a server) can deadlock a child at start: it is then
reported as not joining; ``start_method="forkserver"`` or ``"spawn"`` avoid it.
"""

from __future__ import annotations

import errno
import functools
import gc
import os
import pickle
import queue as queue_mod
import socket
import sysconfig
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch.distributed as dist
import torch.multiprocessing as mp

from pypto.errors import InvalidArgumentError
from pypto.target.model import Target, load_target

from .comm import DistributedRankError, RankComm
from .config import DistributedConfig, distributed_config_of, torchrun_rank, under_torchrun
from .outputs import EarlierOutputs
from .trace import remove_stale_ranks, write_merged_trace, write_rank_events

GRACE_S = 5.0
"""How long after the timeout the launcher waits for surviving ranks to report before ending them."""


class DistributedRunError(RuntimeError):
    """One or more ranks failed; ``failures`` maps each failed rank to ``(task, message)``."""

    def __init__(self, failures: dict[int, tuple[str, str]], world_size: int):
        self.failures = dict(sorted(failures.items()))
        self.previous: Path | None = None
        """Where the earlier run's outputs in the ``output_dir`` now are (``dfx_outputs/previous/``; None: there
        were none, or the run had no ``output_dir``): :mod:`.outputs`."""
        lines = [f"  rank {r}, task '{task}': {msg}" for r, (task, msg) in self.failures.items()]
        super().__init__(f"{len(self.failures)} of {world_size} ranks failed:\n" + "\n".join(lines))

    def outputs_moved(self, previous: Path | None) -> DistributedRunError:
        """Name ``previous`` (where the earlier run's outputs went, :meth:`.outputs.EarlierOutputs.failed`) in the
        message; returns the error."""
        self.previous = previous
        if previous is not None:
            self.args = (f"{self.args[0]}\nthe earlier run's outputs in {previous.parent} were moved to {previous}/ "
                         "(this run's were removed: it failed)",)
        return self


@dataclass
class RankResult:
    """What one rank returned and where its clock ended."""

    rank: int
    device_id: int
    value: Any
    cycles: int
    events: list[dict[str, Any]] = field(default_factory=list)
    dispatches: int = 0
    """Its chip dispatches in the run (``dfx_outputs/rank{r}/d0`` .. ``d{dispatches - 1}``)."""


def rank_result(msg: tuple, device_id: int) -> RankResult:
    """The :class:`RankResult` of a rank's ``("ok", ...)`` message (:func:`_run_rank`)."""
    return RankResult(msg[1], device_id, pickle.loads(msg[2]), msg[3], msg[4], msg[5])


@dataclass
class DistributedRun:
    """The outcome of :func:`launch`: one :class:`RankResult` per rank, in rank order."""

    ranks: list[RankResult]
    world_size: int
    clock_hz: float
    wall_s: float
    trace_path: Path | None = None

    @property
    def values(self) -> list[Any]:
        """Each rank's return value, in rank order."""
        return [r.value for r in self.ranks]

    @property
    def cycles(self) -> int:
        """The run's simulated length: the latest rank clock."""
        return max(r.cycles for r in self.ranks)

    def summary(self) -> str:
        """One line: the ranks, the run's simulated length and each rank's clock and chip dispatches."""
        ranks = ", ".join(f"rank {r.rank}: {r.cycles} cycles, {r.dispatches} dispatch(es)" for r in self.ranks)
        return f"{self.world_size} ranks, {self.cycles} simulated cycles ({ranks})"


def _link_target(config: DistributedConfig) -> Target:
    target = config.target if isinstance(config.target, Target) else load_target(config.target)
    if target.link is None:
        raise ValueError(
            f"target '{target.name}' ({target.source}) has no 'npu.link' line: a multi-chip run needs the "
            f"chip-to-chip link (bandwidth and latency per hop; docs/distributed.md)"
        )
    return target


def _run_rank(comm: RankComm, fn: Callable[..., Any], args: tuple, kwargs: dict) -> tuple:
    """Run ``fn`` on this rank; ``("ok", rank, pickled value, clock, events, chip dispatches)`` or ``("err", rank,
    task, msg)``."""
    try:
        value = fn(comm, *args, **kwargs)
    except DistributedRankError as exc:
        _finished(comm)
        return ("err", comm.rank, exc.task, exc.message)
    except Exception as exc:  # noqa: BLE001 - the user's code: reported with its rank and task
        _finished(comm)
        where = user_frame(exc)
        return ("err", comm.rank, comm.task, f"{type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})")
    _finished(comm)
    try:
        payload = pickle.dumps(value)
    except Exception as exc:  # noqa: BLE001 - what the user's function returned
        return ("err", comm.rank, comm.task, f"its return value ({type(value).__name__}) cannot be sent to the launcher: "
                f"{exception_line(exc)} (return tensors, numbers or other values pickle can copy)")
    return ("ok", comm.rank, payload, comm.clock, comm.events, comm.dispatches)


@functools.cache
def _library() -> tuple[str, ...]:
    """Where PyPTO (its packages and the ``dialects`` / ``ptoas`` it maps in), the standard library and the
    installed packages live: not the user's code (read on the first error: no import of them before)."""
    import pypto.dialects
    import pypto.ptoas

    found = (*pypto.__path__, *pypto.dialects.__path__, *pypto.ptoas.__path__,
             *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")))
    return tuple(sorted({str(Path(p).resolve()) + os.sep for p in found}))


def user_frame(exc: BaseException) -> traceback.FrameSummary:
    """The innermost frame of ``exc``'s traceback in the user's code (a bad argument to a collective names the
    line that passed it, not ``enum.py``), else the innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if not str(Path(f.filename).resolve()).startswith(_library())]
    return (mine or frames)[-1]


def _finished(comm: RankComm) -> None:
    """This rank sends no more notifies: its floor is ``inf`` (a peer's wait no longer waits for its clock)."""
    try:
        comm.stop_tracking()
    except Exception:  # noqa: BLE001 - the store may be gone with a failed peer; the run reports the failure
        pass


def exception_line(exc: BaseException) -> str:
    """``Type: first line of the message`` (the type alone for an empty message)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def join_rank_group(rank: int, config: DistributedConfig, host: str, port: int) -> tuple[Target, Any]:
    """First steps of every rank process this package starts: one intra-op thread for torch, then join
    the run's store and gloo process group. Returns the link target and the store.

    One thread: a forked child inherits the parent's OpenMP thread pool as dead threads, and its first
    parallel torch op (over 32k elements) waits on them forever once the parent has used the pool. One
    thread per rank never enters a parallel region, and N local ranks share the machine's cores anyway."""
    import torch

    torch.set_num_threads(1)
    target = _link_target(config)
    store = dist.TCPStore(host, port, is_master=False, timeout=timedelta(seconds=config.timeout_s))
    dist.init_process_group("gloo", store=dist.PrefixStore("pg", store), rank=rank,
                            world_size=config.world_size, timeout=timedelta(seconds=config.timeout_s))
    return target, store


def _child(rank: int, fn: Callable[..., Any], args: tuple, kwargs: dict, config: DistributedConfig,
           host: str, port: int, results: Any) -> None:
    """The body of one spawned rank process."""
    try:
        target, store = join_rank_group(rank, config, host, port)
    except Exception as exc:  # noqa: BLE001 - reported as this rank's failure
        results.put(("err", rank, "connect", exception_line(exc)))
        return
    comm = RankComm(rank, config.world_size, store, target.link, target.clock_hz, config.timeout_s,
                    config.device_ids[rank], target)
    comm.output_dir = config.output_dir
    results.put(("up", rank))
    results.put(_run_rank(comm, fn, args, kwargs))
    try:
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001 - a failed peer may have broken the group already
        pass


def launch(fn: Callable[..., Any], config: Any, *args: Any, **kwargs: Any) -> DistributedRun:
    """Run ``fn(comm, *args, **kwargs)`` on every rank (see the module docstring). ``config``: a
    :class:`DistributedConfig` or a ``RunConfig(distributed_config=...)``. With ``start_method="spawn"``
    ``fn`` must be importable (a module-level function)."""
    config = distributed_config_of(config)
    target = _link_target(config)
    if config.output_dir is not None and os.path.exists(config.output_dir) and not os.path.isdir(config.output_dir):
        # found now, not after every rank ran (its artefacts are written at the end)
        raise NotADirectoryError(errno.ENOTDIR, "DistributedConfig.output_dir is not a directory", str(config.output_dir))
    if under_torchrun():
        return _launch_torchrun(fn, config, target, args, kwargs)
    return _launch_local(fn, config, target, args, kwargs)


def start_ranks(procs: list[Any]) -> None:
    """Start the rank processes with the garbage collector frozen: a forked child then never collects the
    parent's objects (a collection right after a fork, in ``threading._after_fork``, can crash a child of a
    big process such as a test session's)."""
    gc.collect()
    gc.freeze()
    try:
        for p in procs:
            p.start()
    finally:
        gc.unfreeze()


def _launch_local(fn: Callable[..., Any], config: DistributedConfig, target: Target, args: tuple,
                  kwargs: dict) -> DistributedRun:
    world = int(config.world_size or 0)
    t0 = time.perf_counter()
    port = _free_port()
    ctx = mp.get_context(config.start_method)
    results = ctx.Queue()
    procs = [ctx.Process(target=_child, args=(r, fn, args, kwargs, config, "127.0.0.1", port, results),
                         daemon=True, name=f"pypto-rank{r}") for r in range(world)]
    try:
        start_ranks(procs)  # before the store's server thread exists: nothing half-locked is forked
    except (pickle.PicklingError, AttributeError, TypeError) as exc:  # spawn / forkserver pickle what a rank runs
        for p in procs:
            if p.pid is not None:
                p.kill()
                p.join()
        raise InvalidArgumentError(
            f"DistributedConfig(start_method={config.start_method!r}) sends each rank its function and arguments "
            f"by pickle, which cannot copy them ({exception_line(exc)}): make the function a module-level one "
            "(not a lambda or a nested function) and its arguments picklable, or use start_method='fork'"
        ) from None
    try:
        earlier = set_aside(config)  # the ranks write nothing before they join the store, made below
        store = dist.TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False,
                              timeout=timedelta(seconds=config.timeout_s))
        done, failures = collect(procs, results, config, store, set(), deadline_s=config.dispatch_timeout_s)
    finally:
        for p in procs:
            p.join(timeout=GRACE_S)
            if p.is_alive():
                p.kill()
                p.join()
    store = None  # noqa: F841 - stop the store's server thread now: a traceback holding this frame must not
    # keep it alive into the next launch's fork (a forked child can deadlock on a live thread's lock)
    ranks = [rank_result(done[r], config.device_ids[r]) for r in range(world)] if not failures else []
    return finish_run(ranks, failures, world, config, target, time.perf_counter() - t0, earlier)


def set_aside(config: DistributedConfig, **owned: Any) -> EarlierOutputs | None:
    """Before a run with an ``output_dir`` writes: the earlier run's outputs set aside (:mod:`.outputs`)."""
    if config.output_dir is None:
        return None
    earlier = EarlierOutputs(config.output_dir, int(config.world_size or 0), **owned)
    earlier.set_aside()
    return earlier


def finish_run(ranks: list[RankResult], failures: dict[int, tuple[str, str]], world: int, config: DistributedConfig,
               target: Target, wall_s: float, earlier: EarlierOutputs | None) -> DistributedRun:
    """The run's outcome: its artefacts written and the earlier run's outputs dropped, or (``failures``, or the
    artefacts could not be written) the :class:`DistributedRunError` naming where the earlier outputs went."""
    if not failures:
        try:
            run = _finish(ranks, config, target, wall_s)
        except BaseException:
            if earlier is not None:
                earlier.failed()
            raise
        if earlier is not None:
            earlier.succeeded()
        return run
    error = DistributedRunError(failures, world)
    if earlier is not None:
        error.outputs_moved(earlier.failed())
    raise error


def collect(procs: list[Any], results: Any, config: DistributedConfig, store: Any, up: set[int],
            accept: Callable[[tuple], bool] = lambda msg: True,
            deadline_s: float | None = None) -> tuple[dict[int, tuple], dict[int, tuple[str, str]]]:
    """Wait for every rank's ``("ok" | "err", rank, ...)`` message on ``results``; ``up``: ranks already in the
    process group. A rank that fails, dies or never joins within the timeout is a failure ``(task, message)``;
    survivors still running ``timeout_s + GRACE_S`` after the first failure are terminated. ``accept``
    drops stale messages (a persistent pool's earlier dispatch); ``deadline_s`` bounds the whole wait: a rank
    still running then is reported as hung and terminated."""
    world = len(procs)
    done: dict[int, tuple] = {}
    failures: dict[int, tuple[str, str]] = {}
    first_failure: float | None = None
    started = time.monotonic()
    first_ok: tuple[int, float] | None = None  # (rank, when) the first rank finished while others still run
    note_in = config.timeout_s  # seconds after first_ok of the next "still running" warning (doubling)
    while len(done) < world:
        if first_ok is not None and first_failure is None and time.monotonic() - first_ok[1] > note_in:
            _still_running(procs, done, store, first_ok[0], note_in, deadline_s)
            note_in *= 2
        if first_failure is None and len(up) < world and time.monotonic() - started > config.timeout_s:
            for r in range(world):  # a rank that never joined the process group: report it, end the rest
                if r not in up and r not in done:
                    failures[r] = ("connect", f"did not join the process group within the {config.timeout_s:g} s "
                                   f"timeout (a start deadlock or an unreachable store)")
                    done[r] = ("err", r, "connect", "")
                    procs[r].terminate()  # stuck: end it now, not after the final join's grace period
            first_failure = time.monotonic() - config.timeout_s  # give the others GRACE_S to report
        try:
            msg = results.get(timeout=0.05)
            if msg[0] != "up" and not accept(msg):
                continue
            if msg[0] == "up":
                up.add(msg[1])
                continue
            done[msg[1]] = msg
            if msg[0] == "err":
                failures[msg[1]] = (msg[2], msg[3])
                first_failure = first_failure or time.monotonic()
            elif first_ok is None and len(done) < world:
                first_ok = (msg[1], time.monotonic())
            continue
        except queue_mod.Empty:
            pass
        for r, p in enumerate(procs):
            if r not in done and p.exitcode is not None:
                # Drain a message the rank may have sent just before it exited.
                time.sleep(0.05)
                while True:
                    try:
                        msg = results.get_nowait()
                    except queue_mod.Empty:
                        break
                    if msg[0] == "up":
                        up.add(msg[1])
                        continue
                    if not accept(msg):
                        continue
                    done[msg[1]] = msg
                    if msg[0] == "err":
                        failures[msg[1]] = (msg[2], msg[3])
                if r not in done:
                    task = _last_task(store, r)
                    failures[r] = (task, f"the rank's process exited with code {p.exitcode} (killed or crashed)")
                    done[r] = ("err", r, task, "exited")
                first_failure = first_failure or time.monotonic()
        if deadline_s is not None and first_failure is None and time.monotonic() - started > deadline_s:
            for r, p in enumerate(procs):
                if r not in done:
                    failures[r] = (_last_task(store, r), f"no result within the {deadline_s:g} s dispatch timeout "
                                   f"(hung); ended by the launcher")
                    done[r] = ("err", r, "", "")
                    p.terminate()
        if first_failure is not None and time.monotonic() - first_failure > config.timeout_s + GRACE_S:
            for r, p in enumerate(procs):
                if r not in done:
                    failures[r] = (_last_task(store, r), f"still running {config.timeout_s + GRACE_S:g} s after "
                                   f"another rank failed; ended by the launcher")
                    done[r] = ("err", r, "", "")
                    p.terminate()
    return done, failures


def _still_running(procs: list[Any], done: dict[int, tuple], store: Any, finished: int, after_s: float,
                   deadline_s: float | None) -> None:
    """Warn (stderr, or the innermost diagnostics collector) that ranks are still running ``after_s`` seconds
    after rank ``finished`` returned: local work that never talks to a peer is bounded only by
    ``dispatch_timeout_s``, so a hung rank is named instead of waited on silently."""
    from pypto.diagnostics import Diagnostic, Severity, emit

    running = ", ".join(f"rank {r} (task {_last_task(store, r)!r})" for r in range(len(procs)) if r not in done)
    bound = ("only DistributedConfig(dispatch_timeout_s=...) would end it" if deadline_s is None
             else f"the {deadline_s:g} s dispatch timeout ends it")
    emit(Diagnostic(Severity.WARNING, f"{running} still running {after_s:g} s after rank {finished} finished; "
                    f"nothing waits on it, so {bound}"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _last_task(store: Any, rank: int) -> str:
    try:
        if store.check([f"task/{rank}"]):
            return store.get(f"task/{rank}").decode()
    except Exception:  # noqa: BLE001 - best effort
        pass
    return "main"


def _launch_torchrun(fn: Callable[..., Any], config: DistributedConfig, target: Target, args: tuple,
                     kwargs: dict) -> DistributedRun:
    t0 = time.perf_counter()
    rank, world = torchrun_rank()
    if world != config.world_size:
        raise ValueError(f"torchrun started {world} ranks but the DistributedConfig has world_size "
                         f"{config.world_size}")
    try:
        dist.init_process_group("gloo", init_method="env://", rank=rank, world_size=world,
                                timeout=timedelta(seconds=config.timeout_s))
    except (RuntimeError, ValueError, OSError) as exc:  # torch's DistNetworkError / DistStoreError, a bad address
        where = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
        raise DistributedRunError({rank: ("connect", f"did not join torchrun's rendezvous at {where} (MASTER_ADDR:"
                                          f"MASTER_PORT) within the {config.timeout_s:g} s timeout: "
                                          f"{exception_line(exc)}")}, world) from None
    store = dist.distributed_c10d._get_default_store()
    comm = RankComm(rank, world, dist.PrefixStore("pypto", store), target.link, target.clock_hz, config.timeout_s,
                    config.device_ids[rank], target)
    comm.output_dir = config.output_dir
    # each rank sets its own rank{r}/ aside (its host may have its own folder), rank 0 the rest; the barrier:
    # no rank writes before rank 0 moved the top files (its all_gather of the outcome: none decides before all ran)
    earlier = set_aside(config, ranks={rank}, top=rank == 0)
    dist.barrier()
    msg = _run_rank(comm, fn, args, kwargs)
    gathered: list[Any] = [None] * world
    dist.all_gather_object(gathered, msg)
    dist.destroy_process_group()
    failures = {m[1]: (m[2], m[3]) for m in gathered if m[0] == "err"}
    ranks = [rank_result(m, config.device_ids[m[1]]) for m in gathered] if not failures else []
    write = rank == 0
    return finish_run(ranks, failures, world, config if write else _no_output(config), target,
                      time.perf_counter() - t0, earlier)


def _no_output(config: DistributedConfig) -> DistributedConfig:
    return replace(config, output_dir=None)


def _finish(ranks: list[RankResult], config: DistributedConfig, target: Target, wall_s: float) -> DistributedRun:
    trace = None
    if config.output_dir is not None:
        out = Path(config.output_dir)
        for r in ranks:
            write_rank_events(out, r.rank, r.device_id, r.cycles, r.events)
        remove_stale_ranks(out, {r.rank: r.dispatches for r in ranks})
        trace = write_merged_trace(out, [{"rank": r.rank, "device_id": r.device_id, "events": r.events}
                                         for r in ranks], target.clock_hz)
    return DistributedRun(ranks, len(ranks), target.clock_hz, wall_s, trace)
