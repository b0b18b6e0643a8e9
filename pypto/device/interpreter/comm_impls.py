"""The cross-rank ``pto.comm.*`` ops on the simulator: against the rank's window buffers and signals.

A multi-rank launch (:mod:`pypto.runtime.distributed`) runs a chip's kernels inside
:func:`rank_link`, which makes a :class:`RankLink` (the rank's windows, signals and link model) the
one these ops use. Each op runs at once, numerically, on the peer's bytes (a view of the peer's region: its mapped
window file on the same host, a shadow the link fetches into / commits from on another host,
:mod:`pypto.runtime.distributed.transport`), and is timed as a *blocking* instruction on its pipe:

- it starts when every pipe of the core has drained (upstream emits ``pto.barrier <PIPE_ALL>``
  around TNOTIFY / TPUT / TGET), and later work on any pipe starts after it ends;
- its cycles come from the link (``npu.link`` of the target): a put ``hop(bytes)`` on PIPE_MTE3,
  a get ``latency + hop(bytes)`` on PIPE_MTE2, a notify ``hop(4)`` on PIPE_MTE3; a wait (PIPE_S)
  ends when the notifies that satisfy it landed on this rank's clock (the kernel stalls meanwhile);
- a ``tload`` / ``tstore`` through a ``peer_view`` of another rank (``pld.tile.remote_load`` /
  ``remote_store``) is such a get / put of its bytes first (:func:`remote_tile`), then the ordinary
  local tile move; a ``peer_view`` of this rank itself is local memory (no link);
- a ``twait {deferred}`` (``pld.system.defer_wait``) does not stall: it registers the condition
  (:meth:`RankLink.defer`) in the kernel's ``KernelRun.deferred`` and takes no cycles; the chip's
  scheduler completes the task only once it holds (:mod:`pypto.runtime.scheduler`).

Without a rank link (a single-chip run) these ops are a :class:`~.memory.DeviceError` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np
from xdsl.interpreter import Interpreter, PythonValues

from pypto.ptoas.dialect import comm_ops as C
from pypto.ptoas.dialect.attrs import Pipe

from .core import CoreState
from .costs import instr_name
from .memory import DeviceError, GmPtr, PartitionView, PeerGmPtr, TensorView


class RankLink(Protocol):
    """What the comm ops need from the rank (cycles are kernel cycles: from this kernel's start)."""

    rank: int
    nranks: int
    offset: int
    """The chip cycle the running kernel starts at (its kernel cycles count from there)."""

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
        """Price (and trace) one remote access starting at ``start``; returns its end."""

    def notify(self, cell: np.ndarray, value: int, set_: bool, start: int) -> int:
        """Post a notify of ``cell`` (a peer's signal cell, already updated); returns its end."""

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


def _link(op: Any) -> RankLink:
    if not _LINKS:
        raise DeviceError(f"'{op.name}' needs the ranks of a multi-chip launch (pypto.runtime.distributed); "
                          "this is a single-chip run")
    return _LINKS[-1]


def _blocking(core: CoreState, op: Any, detail: str, kind: str, run: Callable[[int], int],
              instr: str | None = None) -> None:
    """Time ``op`` as a blocking instruction: after every pipe drained, until ``run(start)``'s end."""
    free = core.timeline.free
    start = max(free.values(), default=0)
    end = max(start, run(start))
    core.account(op, instr or op.INSTR, op.pipe(), end - start, kind, [], [], detail, not_before=start)
    for p in list(free):
        free[p] = max(free[p], end)
    free[Pipe.PIPE_S] = max(free.get(Pipe.PIPE_S, 0), end)


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
    """The link part of a ``tload`` (``write`` False: a get, ``latency + hop(nbytes)``) or ``tstore``
    (a put, ``hop(nbytes)``) through a peer's view, as a blocking instruction before the local move."""
    link = _link(op)
    instr = instr_name(op.name)
    name = f"remote {instr.lower()} {'->' if write else '<-'} r{peer}"
    _blocking(core, op, f"{nbytes}B {'->' if write else '<-'} r{peer}", "transfer",
              lambda start: link.transfer(name, peer, nbytes, write, start), instr)


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
    _blocking(core, op, f"{nbytes}B {'->' if put else '<-'} r{peer}", "transfer",
              lambda start: link.transfer(name, peer, nbytes, put, start))
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
    _blocking(core, op, f"{'set' if set_ else 'add'} {value} -> r{link.owner(cell)}", "signal",
              lambda start: link.notify(cell, value, set_, start))
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

        _blocking(core, op, f"deferred {cmp} {expected}", "wait", register)
        return ()
    _blocking(core, op, f"{cmp} {expected}", "wait", lambda start: link.wait(cell, expected, cmp, start))
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
