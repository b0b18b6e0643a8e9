"""The cross-rank ``pto.comm.*`` ops on the simulator: against the rank's window buffers and signals.

A multi-rank launch (:mod:`pypto.runtime.distributed`) runs a chip's kernels inside
:func:`rank_link`, which makes a :class:`RankLink` (the rank's windows, signals and link model) the
one these ops use. Each op runs at once, numerically, on the peer's bytes (a view of the peer's region: its mapped
window file on the same host, a shadow the link fetches into / commits from on another host,
:mod:`pypto.runtime.distributed.transport`). Its timing follows the link model (``npu.link`` of the target:
``hop(n) = latency + busy(n)``, ``busy(n)`` the bytes at the link's bandwidth):

- a transfer (``tput``, and a ``tstore`` through another rank's ``peer_view``, on PIPE_MTE3; ``tget``, and a
  remote ``tload``, on PIPE_MTE2; a ``tnotify`` of a peer's cell, on PIPE_MTE3) is an instruction on its
  pipe that occupies the link for ``busy(bytes)`` and *lands* later: a put or notify ``hop(bytes)`` after
  it starts, a get ``latency + hop(bytes)`` (the request, then the data). Transfers issued back to back on a
  pipe overlap their latencies: the next one starts when the link has taken the last one's bytes, so ``n``
  tiles cost about what one transfer of their bytes does, and a notify lands after the puts issued before it
  on its pipe. Any other entry on that pipe (a flag, a local load, a barrier) waits until they landed: the
  queue is in order (:class:`InFlight`);
- ``tput``, ``tget`` and ``tnotify`` start once the other pipes' earlier work is complete (upstream drains
  ``PIPE_ALL`` before them: a notify must not overtake the work it publishes); a remote ``tload`` /
  ``tstore`` is ordered by the insert-sync flags like any load or store. Later work on other pipes does not
  wait for a transfer (its completion is published by a notify); the kernel ends when its transfers landed;
- a ``tnotify`` of this rank's own cell is a local 4-byte store (no link), queued like a transfer;
- a ``twait`` (PIPE_S) starts once the earlier instructions were issued (a transfer still in flight does not
  hold it) and stalls the kernel until the notifies that satisfy it landed on this rank's clock: later work on
  every pipe starts after it;
- a ``twait {deferred}`` (``pld.system.defer_wait``) does not stall: it registers the condition
  (:meth:`RankLink.defer`) in the kernel's ``KernelRun.deferred`` and takes no cycles; the chip's
  scheduler completes the task only once it holds (:mod:`pypto.runtime.scheduler`).

Without a rank link (a single-chip run) these ops are a :class:`~.memory.DeviceError` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues

from pypto.ptoas.dialect import comm_ops as C
from pypto.ptoas.dialect.attrs import Pipe

from .core import CoreState
from .costs import instr_name
from .memory import DeviceError, GmPtr, PartitionView, PeerGmPtr, TensorView, TileRef
from .timing import PIPE_NAMES


class RankLink(Protocol):
    """What the comm ops need from the rank (cycles are kernel cycles: from this kernel's start)."""

    rank: int
    nranks: int
    offset: int
    """The chip cycle the running kernel starts at (its kernel cycles count from there)."""
    parts: int | None
    """The kernel parts the chip run interprets (:func:`kernel_parts`; None: not told)."""

    def peer_array(self, a: np.ndarray, peer: int) -> np.ndarray:
        """The bytes of ``a`` (a view of one of this rank's window regions) on ``peer``'s region (``peer``: an
        index into the comm domain of that window buffer: the ranks dispatched with it)."""

    def owner(self, a: np.ndarray) -> int:
        """The rank whose window region ``a`` views."""

    def fetch(self, a: np.ndarray) -> None:
        """Make ``a`` (a view of a window region) hold its owner's bytes now (before reading it)."""

    def commit(self, a: np.ndarray) -> None:
        """Make the owner's bytes hold ``a`` (after writing it); returns once they do."""

    def update(self, a: np.ndarray, add: bool, data: np.ndarray, kind: str) -> None:
        """Atomically add ``data`` (stored bits of the DType named ``kind``) into ``a`` at its owner, or set it."""

    def transfer(self, name: str, peer: int, nbytes: int, write: bool, start: int) -> int:
        """Price (and trace) one remote access starting at ``start``; returns the cycle it landed."""

    def busy(self, nbytes: int) -> int:
        """Cycles the link is occupied by ``nbytes`` (a hop without its latency)."""

    def notify(self, cell: np.ndarray, value: int, set_: bool, start: int, delay: int | None = None) -> int:
        """Post a notify of ``cell`` (a signal cell, already updated) issued at ``start``; it lands ``delay``
        cycles later (None: a link hop of 4 bytes); returns the cycle it landed."""

    def wait(self, cell: np.ndarray, expected: int, cmp: str, start: int) -> int:
        """Block (bounded) until this rank's ``cell`` compares true; returns the cycle it did."""

    def defer(self, cell: np.ndarray, expected: int, cmp: str, start: int) -> Any:
        """A completion condition on this rank's ``cell`` registered at kernel cycle ``start``
        (:class:`pypto.runtime.scheduler.Deferred`: polled by the chip's scheduler, never blocking here)."""


_LINKS: list[RankLink] = []


@contextmanager
def rank_link(link: RankLink) -> Iterator[None]:
    """Run kernels with ``link`` as the rank the ``pto.comm`` ops talk through."""
    _LINKS.append(link)
    try:
        yield
    finally:
        _LINKS.pop()


def kernel_start(cycle: int) -> None:
    """The kernel about to run starts at chip cycle ``cycle`` (its block's start in the chip's schedule):
    the rank link, if any, prices its ``pto.comm`` ops from there (no-op in a single-chip run)."""
    if _LINKS:
        _LINKS[-1].offset = int(cycle)


def kernel_parts(n: int) -> None:
    """The chip run about to start interprets ``n`` kernel parts (its tasks' blocks times their parts): the
    rank link, if any, knows whether a part interpreted later can notify earlier than a blocked one's wait."""
    if _LINKS:
        _LINKS[-1].parts = int(n)


def _link(op: Any) -> RankLink:
    if not _LINKS:
        raise DeviceError(f"'{op.name}' needs the ranks of a multi-chip launch (pypto.runtime.distributed); "
                          "this is a single-chip run")
    return _LINKS[-1]


@dataclass
class InFlight:
    """The last link transfer issued on a pipe (``CoreState.link_queue``): the link takes the next one's
    bytes from ``link_free`` on, if no other entry joined the pipe's queue since row ``rows`` of the timeline
    (such an entry waited for the landing; the transfer after it waits for that entry)."""

    link_free: int
    rows: int


def _issue_point(core: CoreState, pipe: Pipe) -> int:
    """The cycle a transfer on ``pipe`` can start: right behind the pipe's last transfer when nothing else was
    queued on the pipe since, else after the pipe's last entry."""
    tl = core.timeline
    free = tl.free.get(pipe, 0)
    last = core.link_queue.get(pipe)
    if last is None:
        return free
    names = (PIPE_NAMES[pipe][1], Pipe.PIPE_ALL.value)
    for i in range(last.rows, len(tl.rows)):
        if tl.rows[i][3] in names:
            return free
    return last.link_free


def _drained(core: CoreState, pipe: Pipe) -> int:
    """The cycle an op on ``pipe`` can start once every other pipe's earlier work completed (``PIPE_ALL``
    drained before it, as upstream emits around the comm ops); on ``pipe`` itself, its issue point."""
    return max([_issue_point(core, pipe), *(v for p, v in core.timeline.free.items() if p != pipe)])


def link_transfer(core: CoreState, op: Any, pipe: Pipe, instr: str, detail: str, nbytes: int,
                  land: Callable[[int], int], drain: bool, moves_after: int = 0,
                  tiles: list[TileRef] | None = None) -> None:
    """Time one link transfer of ``nbytes`` on ``pipe`` (see the module docstring): it starts at the pipe's
    issue point (after every other pipe's earlier work too when ``drain``), occupies the link for
    ``busy(nbytes)`` (its timeline row) and lands at ``land(start)``; the pipe's next non-transfer entry waits
    for that. ``moves_after``: timeline rows the op itself adds on the pipe right after this one (a remote
    ``tload`` / ``tstore``'s local move), which do not end the pipelining."""
    link = _link(op)
    free = core.timeline.free
    start = _drained(core, pipe) if drain else _issue_point(core, pipe)
    landed = max(start, land(start))
    link_free = start + link.busy(nbytes)
    _row(core, op, pipe, instr, start, link_free, "transfer", f"{detail}, lands @{landed}", tiles or [])
    free[pipe] = max(free[pipe], landed)
    core.link_queue[pipe] = InFlight(link_free, len(core.timeline.rows) + moves_after)


def _row(core: CoreState, op: Any, pipe: Pipe, instr: str, start: int, end: int, kind: str, detail: str,
         tiles: list[TileRef]) -> None:
    """The timeline row of ``op`` on ``pipe`` from ``start`` to ``end`` (it may start before the pipe's earlier
    transfers landed); the pipe's ``free`` does not move back."""
    free = core.timeline.free
    queued = free.get(pipe, 0)
    free[pipe] = start
    core.account(op, instr, pipe, end - start, kind, tiles, tiles, detail, not_before=start)
    free[pipe] = max(queued, end)


def _stall(core: CoreState, op: Any, detail: str, kind: str, run: Callable[[int], int]) -> None:
    """Time ``op`` as a stall: it starts once every earlier instruction was issued (transfers in flight do not
    hold it), lasts until ``run(start)``'s end, and later work on every pipe starts after it."""
    free = core.timeline.free
    start = max([0, *(_issue_point(core, p) for p in free)])
    end = max(start, run(start))
    core.account(op, op.INSTR, op.pipe(), end - start, kind, [], [], detail, not_before=start)
    for p in list(free):
        free[p] = max(free[p], end)
    free[Pipe.PIPE_S] = max(free.get(Pipe.PIPE_S, 0), end)
    for last in core.link_queue.values():
        last.link_free = max(last.link_free, end)


def get_rank(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    return (_link(op).rank,)


def get_nranks(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    return (_link(op).nranks,)


def peer_view(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """The same view on ``peer``'s region of the window buffer."""
    link = _link(op)
    tv, peer = args
    if not 0 <= int(peer) < link.nranks:
        raise DeviceError(f"'{op.name}': peer rank {peer} out of range (world size {link.nranks})")
    assert isinstance(tv, TensorView)
    flat = link.peer_array(tv.ptr.flat, int(peer))  # peer: an index into the buffer's comm domain
    owner = link.owner(flat)
    if owner == link.rank:  # this rank's own region: local memory
        return (TensorView(GmPtr(flat, tv.ptr.offset, tv.ptr.dtype), tv.shape, tv.strides),)
    return (TensorView(PeerGmPtr(flat, tv.ptr.offset, tv.ptr.dtype, owner), tv.shape, tv.strides),)


def remote_tile(core: CoreState, op: Any, peer: int, nbytes: int, write: bool) -> None:
    """The link part of a ``tload`` (``write`` False: a get, landing ``latency + hop(nbytes)`` after it starts)
    or ``tstore`` (a put, ``hop(nbytes)``) through a peer's view, on the op's pipe before its local move."""
    link = _link(op)
    instr = instr_name(op.name)
    name = f"remote {instr.lower()} {'->' if write else '<-'} r{peer}"
    link_transfer(core, op, op.pipe(), instr, f"{nbytes}B {'->' if write else '<-'} r{peer}", nbytes,
                  lambda start: link.transfer(name, peer, nbytes, write, start), drain=False, moves_after=1)


def _window(pv: Any, what: str, op: Any) -> np.ndarray:
    if not isinstance(pv, PartitionView):
        raise DeviceError(f"'{op.name}': {what} is not a GM partition view")
    return pv.window()


def tput_tget(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Copy (TPUT: or atomically add) ``src`` into ``dst``; one of the two lies on a peer."""
    link = _link(op)
    dst, src = _window(args[0], "dst", op), _window(args[1], "src", op)
    put = isinstance(op, C.TPutOp)
    peer = link.owner(dst if put else src)
    atomic = put and op.atomicType is not None and op.atomicType.data.value == "atomic_add"
    link.fetch(src)
    if atomic:  # in the compute dtype (bf16 is stored as its bits), at the owner
        link.update(dst, True, np.ascontiguousarray(src).reshape(dst.shape), args[0].ptr.dtype.name)
    else:
        dst[...] = src
        link.commit(dst)
    nbytes = int(src.size * src.itemsize)
    name = f"{op.INSTR.lower()} {'->' if put else '<-'} r{peer}"
    link_transfer(core, op, op.pipe(), op.INSTR, f"{nbytes}B {'->' if put else '<-'} r{peer}", nbytes,
                  lambda start: link.transfer(name, peer, nbytes, put, start), drain=True)
    return ()


def _kind(dt: np.dtype) -> str:
    """The DType name of a signal cell's numpy dtype (an ``update``'s element type)."""
    if dt.kind in "iu":
        return f"{'int' if dt.kind == 'i' else 'uint'}{8 * dt.itemsize}"
    return {2: "fp16", 4: "fp32", 8: "fp64"}[dt.itemsize]


def remote_fetch(op: Any, a: np.ndarray) -> None:
    """Before a ``tload`` through a peer's view: ``a`` holds the owner's bytes (:meth:`RankLink.fetch`)."""
    _link(op).fetch(a)


def remote_commit(op: Any, a: np.ndarray) -> None:
    """After a ``tstore`` through a peer's view: the owner holds ``a`` (:meth:`RankLink.commit`)."""
    _link(op).commit(a)


def remote_add(op: Any, a: np.ndarray, data: np.ndarray, kind: str) -> None:
    """A ``tstore`` with ``atomicType`` through a peer's view: ``data`` added into ``a`` at its owner, atomically."""
    _link(op).update(a, True, data, kind)


def tnotify(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Set or atomically add ``value`` into a peer's signal cell, then post it."""
    link = _link(op)
    cell, value = _window(args[0], "the signal cell", op), int(args[1])
    set_ = op.notifyOp is not None and op.notifyOp.data.value == "set"
    first = cell[tuple(slice(0, 1) for _ in range(cell.ndim))]  # a view (the cell's first element)
    link.update(first, not set_, np.array([value], dtype=cell.dtype), _kind(cell.dtype))
    owner = link.owner(cell)
    detail = f"{'set' if set_ else 'add'} {value} -> r{owner}"
    if owner != link.rank:
        link_transfer(core, op, op.pipe(), op.INSTR, detail, 4,
                      lambda start: link.notify(cell, value, set_, start), drain=True)
        return ()
    # this rank's own cell: a local 4-byte store, once the other pipes' earlier work completed; it is queued
    # like a transfer (it neither waits for the ones in flight nor holds the next)
    start, cycles = _drained(core, op.pipe()), core.costs.transfer("TSTORE", "vec", None, 4)
    link.notify(cell, value, set_, start, cycles)
    _row(core, op, op.pipe(), op.INSTR, start, start + cycles, "signal", detail, [])
    core.link_queue[op.pipe()] = InFlight(start + cycles, len(core.timeline.rows))
    return ()


def twait(core: CoreState, interp: Interpreter, op: Any, args: PythonValues) -> PythonValues:
    """Stall until this rank's signal cell compares true with ``expected``."""
    link = _link(op)
    cell, expected = _window(args[0], "the signal cell", op), int(args[1])
    cmp = op.cmp.data.value if op.cmp is not None else "ge"
    if op.deferred is not None:  # register the condition; the kernel goes on, its task's completion waits

        def register(start: int) -> int:
            core.deferred.append(link.defer(cell, expected, cmp, start))
            return start

        _stall(core, op, f"deferred {cmp} {expected}", "wait", register)
        return ()
    _stall(core, op, f"{cmp} {expected}", "wait", lambda start: link.wait(cell, expected, cmp, start))
    return ()


COMM_HANDLERS: dict[type, Callable[..., PythonValues]] = {
    C.GetRankOp: get_rank,
    C.GetNranksOp: get_nranks,
    C.PeerViewOp: peer_view,
    C.TPutOp: tput_tget,
    C.TGetOp: tput_tget,
    C.TNotifyOp: tnotify,
    C.TWaitOp: twait,
}
"""pto.comm op class -> implementation (registered as per-call handlers by :mod:`.pto_impls`)."""
