"""Window buffers shared by the ranks, and the kernel-side RMA of ``pld`` (put, get, remote load/store,
notify, wait, barrier).

A window buffer (``pld.alloc_window_buffer``) is one region per rank. Each rank's region is a file
in ``/dev/shm`` (``pypto-<run>-w<buffer>-r<rank>``). A rank reaches each region through a
:class:`~.transport.Region`: the regions of the ranks on its own host are their files mapped here (a
remote load, store, put or get reads or writes the peer's bytes directly, one-sided, as a window on
real hardware); a region of a rank on another host (``socket.gethostname()`` or ``PYPTO_HOST_ID``,
gathered through the store when the windows are made) is reached through its owner's window server,
over a gloo group of their own (:mod:`.transport`). So the same run works on one machine (N processes)
or on many under ``torchrun``.

Synchronisation and time stay on ``torch.distributed`` (:class:`.comm.RankComm`): a notify
updates the peer's signal cell (an atomic update at the owner, under the file's lock whichever path
it takes) and posts the signal on the store, where a wait blocks (bounded by the timeout) and
orders this rank's clock after the notifies it consumed. A remote access costs a link hop (plus a
request latency for reads) on the rank's clock, whichever transport carries the bytes, and is an
event with a flow in the merged trace.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

from pypto.dialects.distributed_enums import NotifyOp, WaitCmp, compare

from . import collectives
from .comm import RankComm
from .transport import (
    TORCH_KIND,
    Region,
    RemoteRegion,
    SharedFileRegion,
    WindowClient,
    WindowServer,
    host_id,
    stop_servers,
)

WINDOW_DIR_ENV = "PYPTO_WINDOW_DIR"
"""Names the folder of the window files (default ``/dev/shm``, else the temp folder); rank processes
inherit it, so it must be set before a launch or ``prepare()``."""


def _shm_dir() -> Path:
    chosen = os.environ.get(WINDOW_DIR_ENV)
    if chosen:
        return Path(chosen)
    shm = Path("/dev/shm")
    return shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(tempfile.gettempdir())


def window_file(run_id: str, buffer: int, rank: int) -> Path:
    """The file of ``rank``'s region of window buffer ``buffer`` in run ``run_id``."""
    return _shm_dir() / f"pypto-{run_id}-w{buffer}-r{rank}"


def remove_window_files(run_id: str) -> None:
    """Remove every window file of run ``run_id`` (after the launch: a killed rank leaves its own)."""
    for f in _shm_dir().glob(f"pypto-{run_id}-w*"):
        f.unlink(missing_ok=True)


class SharedWindows:
    """The window buffers of one run: every rank's region reached through a :class:`~.transport.Region` (a
    shared file on this host, the owner's window server on another; see the module docstring)."""

    _made = 0
    """Window sets made in this process: the same sequence on every rank (every rank runs the same runs)."""

    def __init__(self, comm: RankComm, sizes: Sequence[int], run_id: str,
                 groups: Sequence[Sequence[int]] | None = None):
        self.comm = comm
        self.groups = [tuple(int(r) for r in g) for g in groups] if groups is not None else \
            [tuple(range(comm.world_size))] * len(sizes)
        """Per buffer, its comm domain: the ranks that hold a region of it, in order (a ``peer`` indexes it)."""
        SharedWindows._made += 1
        key = f"windows/run/{SharedWindows._made}"
        comm.store.set(f"{key}/host/{comm.rank}", host_id(comm.rank))
        if comm.rank == 0:  # rank 0's id names the files: under torchrun every process drew its own
            comm.store.set(key, run_id)
        run_id = _store_get(comm, key)
        self.hosts = [_store_get(comm, f"{key}/host/{r}") for r in range(comm.world_size)]
        """Each rank's host identity (:func:`~.transport.host_id`): same host, shared files; else the server."""
        self.paths = [[window_file(run_id, b, r) for r in range(comm.world_size)] for b in range(len(sizes))]
        for b, n in enumerate(sizes):
            if comm.rank in self.groups[b]:
                with open(self.paths[b][comm.rank], "wb") as f:
                    f.truncate(int(n))  # zero-filled: a window starts cleared
        comm.barrier("window alloc")
        self.cross_host = len(set(self.hosts)) > 1
        """Some ranks are on other hosts: every rank runs a window server (the group is made by all)."""
        self.group = dist.new_group(backend="gloo") if self.cross_host else None
        client = WindowClient(comm, self.group) if self.cross_host else None
        here = self.hosts[comm.rank]
        self.transports: list[list[Region | None]] = [
            [None if r not in g else SharedFileRegion(p, n) if self.hosts[r] == here
             else RemoteRegion(client, r, b, n)  # type: ignore[arg-type]
             for r, p in enumerate(row)]
            for b, (row, n, g) in enumerate(zip(self.paths, sizes, self.groups, strict=True))]  # fmt: skip
        self.regions: list[list[torch.Tensor | None]] = [[None if t is None else t.tensor for t in row]
                                                         for row in self.transports]
        self.server = WindowServer(self.group, [row[comm.rank] for row in self.transports],  # type: ignore[misc]
                                   comm.rank) if self.cross_host else None

    def use(self, comm: RankComm) -> None:
        """Serve a later dispatch of a persistent worker (its fresh comm: store, clock and errors)."""
        self.comm = comm
        for row in self.transports:
            for t in row:
                if isinstance(t, RemoteRegion):
                    t.client.comm = comm

    def local(self, buffer: int) -> torch.Tensor | None:
        """This rank's region of ``buffer`` (bytes; None: the rank is outside the buffer's comm domain)."""
        return self.regions[buffer][self.comm.rank]

    def locate(self, t: torch.Tensor) -> tuple[int, int]:
        """``(buffer, byte offset)`` of a tensor viewing one of this rank's regions."""
        ptr = t.data_ptr()
        for b, row in enumerate(self.regions):
            mine = row[self.comm.rank]
            if mine is not None and mine.data_ptr() <= ptr < mine.data_ptr() + mine.numel():
                return b, ptr - mine.data_ptr()
        raise self.comm.error("the tensor is not a pld.window view of this rank's window buffers")

    def global_rank(self, buffer: int, peer: int) -> int:
        """The rank of ``peer`` (an index into the comm domain of ``buffer``)."""
        group = self.groups[buffer]
        if not 0 <= peer < len(group):
            raise self.comm.error(f"peer rank {peer} out of range (the comm domain of window buffer {buffer} "
                                  f"has {len(group)} ranks: {list(group)})")
        return group[peer]

    def peer_view(self, t: torch.Tensor, peer: int) -> tuple[torch.Tensor, Region]:
        """The tensor on ``peer``'s region (``peer``: in the buffer's comm domain) at the place ``t`` has in this
        rank's, and the region's transport (fetch before reading it, commit after writing it)."""
        b, off = self.locate(t)
        owner = self.global_rank(b, peer)
        region = self.transports[b][owner]
        assert region is not None
        nbytes = t.numel() * t.element_size()
        view = region.tensor[off : off + nbytes].view(t.dtype).view(t.shape)
        return view, region

    def close(self, ok: bool = True, idle: bool = False) -> None:
        """Remove this rank's files: after every rank is done with them, or at once when the run failed
        (never raises: a failure is reported by the launch, not masked by the clean-up). The window servers
        stop after the last barrier (each rank sends its successor's server the STOP), or at once when every
        rank drops the windows together with no kernel running (``idle``: a persistent worker's abandoned run);
        after a failure a server keeps serving the surviving peers until the process ends (a daemon thread)."""
        try:
            if ok:
                self.comm.barrier("window free")
            if ok or idle:
                if self.server is not None:
                    stop_servers(self.group, self.comm.rank, self.comm.world_size)
                    self.server.stop(self.comm.timeout_s)
        except Exception:  # noqa: BLE001 - a peer died or timed out: the run's own error says so
            pass
        finally:
            for row, group in zip(self.paths, self.groups, strict=True):
                if self.comm.rank in group:
                    row[self.comm.rank].unlink(missing_ok=True)


# ---- a prepared worker's persistent windows (prepare(persistent=True)) ----------------------------------


def persistent_windows(comm: RankComm, sizes: list[int], ident: str, reset: bool, groups: Sequence[Sequence[int]],
                       *, state: dict[str, Any]) -> SharedWindows | None:
    """The windows ``ident`` of a persistent worker on this rank: made (cleared) at its first dispatch and kept
    in ``state``; at a later dispatch cleared again when ``reset`` (each rank its own regions and a new key
    space for their signal counts, then a barrier before any rank notifies), else left as the last dispatch
    left them. The same program must ask for the same window sizes each time."""
    key = ("windows", ident)
    kept = state.get(key)
    if kept is None:
        shared = SharedWindows(comm, sizes, ident, groups) if sizes else None
        state[key] = {"shared": shared, "sizes": list(sizes), "generation": 0}
        return shared
    if kept["sizes"] != list(sizes):
        raise comm.error(f"a persistent worker's window buffers changed size between dispatches: "
                         f"{kept['sizes']} -> {list(sizes)} bytes (prepare a new worker for other shapes)")
    shared = kept["shared"]
    if shared is not None:
        shared.use(comm)
        if reset:
            for b in range(len(sizes)):
                region = shared.local(b)
                if region is not None:
                    region.zero_()
            kept["generation"] += 1
            comm.barrier("window reset")
    return shared


def window_signals(comm: RankComm, ident: str, shared: SharedWindows, *, state: dict[str, Any]) -> None:
    """Keep the signal counts of the persistent windows ``ident`` on the store's key space of their generation."""
    gen = state[("windows", ident)]["generation"]
    store = dist.PrefixStore(f"windows/{ident}/{gen}", state["base_store"])
    comm.signal_stores.update({f"w{b}": store for b in range(len(shared.regions))})


def release_windows(comm: RankComm, ident: str, *, state: dict[str, Any]) -> None:
    """Drop the persistent windows ``ident`` on this rank (a closing worker; the caller removes the files)."""
    kept = state.pop(("windows", ident), None)
    if kept is not None and kept["shared"] is not None:  # every rank releases them: the servers can stop
        kept["shared"].use(comm)
        kept["shared"].close(kept["shared"].server is not None)


def _store_get(comm: RankComm, key: str) -> str:
    """``key`` from the run's store, waited for (bounded by the timeout)."""
    from datetime import timedelta

    try:
        comm.store.wait([key], timedelta(seconds=comm.timeout_s))
        return bytes(comm.store.get(key)).decode()
    except Exception as exc:  # noqa: BLE001 - the store's timeout / connection errors
        raise comm.error(f"window set-up: rank 0 did not publish the window names within {comm.timeout_s:g} s "
                         f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__})") from None


def _region(t: torch.Tensor, offsets: Sequence[int], shape: Sequence[int] | None) -> torch.Tensor:
    """The ``shape`` region of ``t`` at ``offsets`` (none: from the origin; no shape: to the end)."""
    offs = [int(o) for o in offsets] or [0] * t.dim()
    dims = [int(s) for s in shape] if shape is not None else [d - o for d, o in zip(t.shape, offs, strict=True)]
    return t[tuple(slice(o, o + s) for o, s in zip(offs, dims, strict=True))]


def _flat(t: torch.Tensor, offsets: Sequence[int]) -> int:
    idx = 0
    for o, s in zip(offsets, t.stride(), strict=True):
        idx += int(o) * s
    return idx


_SAME_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _np(t: torch.Tensor) -> np.ndarray:
    """The numpy view of ``t``'s bytes (its elements' bits, as integers of their width; any strides)."""
    return t.view(_SAME_WIDTH[t.element_size()]).numpy()


class KernelComm:
    """``_pld`` in a per-rank kernel script: the ``pld`` ops on this rank's windows and clock."""

    def __init__(self, comm: RankComm, windows: SharedWindows):
        self.comm, self.windows = comm, windows
        self._ops = 0

    # ---- the communication context ----------------------------------------------

    def comm_ctx(self, t: torch.Tensor) -> int:
        self.windows.locate(t)
        return 0

    def rank(self, ctx: int) -> int:
        return self.comm.rank

    def nranks(self, ctx: int) -> int:
        return self.comm.world_size

    # ---- one-sided data -------------------------------------------------------------

    def _remote(self, name: str, peer: int, nbytes: int, write: bool) -> None:
        """Advance the clock for one remote access and record it (a flow to / from ``peer``)."""
        c = self.comm
        start = c.clock
        c.clock += c.hop_cycles(nbytes) + (0 if write else c.link.latency_cycles)
        if peer == c.rank:
            c._event(name, "put" if write else "get", start, c.clock, peer=peer, bytes=nbytes)
            return
        fid = f"k{c.rank}-{self._ops}"
        self._ops += 1
        # a write's flow starts here and lands on the peer when it ends; a read's starts on the peer
        remote = {"rank": peer, "ts": c.clock if write else start, "id": fid,
                  "name": f"{name} {'<-' if write else '->'} r{c.rank}"}  # fmt: skip
        if not write:
            remote["ph"] = "s"
        c._event(name, "put" if write else "get", start, c.clock, peer=peer, bytes=nbytes,
                 flows=[{"id": fid, "ph": "s" if write else "f"}], remote=remote)  # fmt: skip

    def remote_load(self, target: torch.Tensor, peer: int, offsets: Sequence[int], shape: Sequence[int]) -> Any:
        src, via = self.windows.peer_view(target, int(peer))
        sl = tuple(slice(int(o), int(o) + int(s)) for o, s in zip(offsets, shape, strict=True))
        via.fetch(_np(src[sl]))
        tile = src[sl].clone()
        self._remote(f"remote_load <- r{peer}", int(peer), tile.numel() * tile.element_size(), False)
        return tile

    def remote_store(self, tile: torch.Tensor, target: torch.Tensor, peer: int, offsets: Sequence[int],
                     atomic: str = "None_") -> Any:
        dst, via = self.windows.peer_view(target, int(peer))
        sl = tuple(slice(int(o), int(o) + int(s)) for o, s in zip(offsets, tile.shape, strict=True))
        self._write(dst[sl], tile, via, atomic)
        self._remote(f"remote_store -> r{peer}", int(peer), tile.numel() * tile.element_size(), True)
        return target

    def _write(self, region: torch.Tensor, value: torch.Tensor, via: Region, atomic: str) -> None:
        """Store (``atomic`` None_) or atomically add ``value`` into a peer's ``region`` (reached ``via``)."""
        value = value.to(region.dtype).expand(region.shape)
        if atomic in ("None_", "None", None):
            region.copy_(value)
            via.commit(_np(region))
        else:
            via.update(_np(region), True, _np(value.contiguous()), TORCH_KIND[region.dtype])

    def put(self, dst: torch.Tensor, peer: int, src: torch.Tensor, dst_offsets: Sequence[int] = (),
            src_offsets: Sequence[int] = (), shape: Sequence[int] | None = None, atomic: str = "None_",
            chunk_rows: int = 0, chunk_cols: int = 0, pipeline: bool = False) -> Any:
        remote, via = self.windows.peer_view(dst, int(peer))
        region = _region(src, src_offsets, shape)
        self._write(_region(remote, dst_offsets, list(region.shape)), region, via, atomic)
        self._remote(f"put -> r{peer}", int(peer), region.numel() * region.element_size(), True)
        return dst

    def get(self, dst: torch.Tensor, peer: int, src: torch.Tensor, dst_offsets: Sequence[int] = (),
            src_offsets: Sequence[int] = (), shape: Sequence[int] | None = None, chunk_rows: int = 0,
            chunk_cols: int = 0, pipeline: bool = False) -> Any:
        remote, via = self.windows.peer_view(src, int(peer))
        region = _region(remote, src_offsets, shape)
        via.fetch(_np(region))
        _region(dst, dst_offsets, list(region.shape)).copy_(region)
        self._remote(f"get <- r{peer}", int(peer), region.numel() * region.element_size(), False)
        return dst

    # ---- signals ----------------------------------------------------------------------

    def notify(self, signal: torch.Tensor, peer: int, offsets: Sequence[int], value: int | None = 1,
               op: str = "AtomicAdd") -> Any:
        """Update the peer's signal cell (acknowledged: after this rank's earlier puts), then post the notify."""
        peer, value = int(peer), 1 if value is None else int(value)
        cells, via = self.windows.peer_view(signal, peer)
        b, _ = self.windows.locate(signal)
        slot, peer = _flat(signal, offsets), self.windows.global_rank(b, peer)
        cell = cells.view(-1)[slot : slot + 1]  # peer_view is contiguous
        add = NotifyOp(op) is NotifyOp.AtomicAdd
        via.update(_np(cell), add, np.array([value], dtype=_np(cell).dtype), TORCH_KIND[cell.dtype])
        self.comm.notify(f"w{b}", peer, slot, int(value), NotifyOp(op))
        return signal

    def wait(self, signal: torch.Tensor, offsets: Sequence[int], expected: int | None = 1, cmp: str = "Ge") -> Any:
        b, _ = self.windows.locate(signal)
        self.comm.wait(f"w{b}", _flat(signal, offsets), 1 if expected is None else int(expected), WaitCmp(cmp))
        return signal

    def barrier(self, signal: torch.Tensor) -> Any:
        self.comm.barrier("pld.tensor.barrier")
        return signal

    # ---- collectives (the ranks' gloo collectives of :mod:`.collectives`, on the window data) --------------

    def allreduce(self, data: torch.Tensor, signal: Any, op: str, mode: str, core_num: int) -> Any:
        collectives.allreduce(self.comm, data, op, mode, int(core_num))
        return data

    def broadcast(self, data: torch.Tensor, signal: Any, root: int) -> Any:
        collectives.broadcast(self.comm, data, int(root))
        return data

    def allgather(self, local: torch.Tensor, target: torch.Tensor, signal: Any) -> Any:
        rows = collectives.allgather(self.comm, local.contiguous().view(-1))
        target.copy_(rows.view(target.shape))
        return target

    def reduce_scatter(self, target: torch.Tensor, signal: Any, op: str) -> Any:
        mine = collectives.reducescatter(self.comm, target.contiguous(), op)
        target[self.comm.rank : self.comm.rank + 1].copy_(mine)
        return target

    def all_to_all(self, source: torch.Tensor, target: torch.Tensor, signal: Any) -> Any:
        target.copy_(collectives.alltoall(self.comm, source.contiguous()))
        return target

    def all_to_all_v(self, source: torch.Tensor, target: torch.Tensor, signal: Any, send_counts: torch.Tensor,
                     recv_counts: torch.Tensor) -> Any:
        """Full ``MAX_RECV``-row blocks move as in :meth:`all_to_all`; each rank's clamped count for a peer
        lands in that peer's ``recv_counts[rank]``."""
        n = self.comm.world_size
        blocks = source.contiguous().view(n, -1)
        target.copy_(collectives.alltoall(self.comm, blocks).view(target.shape))
        cap = target.shape[0] // n
        counts = send_counts.reshape(n, 1).clamp(0, cap).to(torch.int32).contiguous()
        recv_counts.view(n, 1).copy_(collectives.alltoall(self.comm, counts))
        return target


class ChipLink:
    """This rank as the simulator's ``pto.comm`` ops see it during one chip run
    (:class:`pypto.device.interpreter.comm_impls.RankLink`): the window regions as numpy arrays, the
    signals and the link model of :class:`KernelComm`. Chip cycle ``c`` of the run is rank cycle
    ``base + c`` (``base``: the rank's clock when the chip run started); a kernel's cycle ``t`` is chip
    cycle ``offset + t``, ``offset`` being the chip cycle its block starts at (set by the scheduler
    through :func:`pypto.device.interpreter.comm_impls.kernel_start`)."""

    def __init__(self, kc: KernelComm):
        self.kc, self.comm = kc, kc.comm
        self.base = kc.comm.clock
        self.offset = 0
        self.rank, self.nranks = kc.comm.rank, kc.comm.world_size
        self.parts: int | None = None
        """The kernel parts (blocks x parts) the chip run interprets (None: not told): with one, its waits
        are exact (:mod:`.horizon`); with more, a part interpreted later may notify earlier in simulated time
        than a blocked one's wait, so the rank stops publishing a floor (:attr:`.comm.RankComm.tracked`)."""
        self._arrays = [[None if r is None else r.array for r in row] for row in kc.windows.transports]

    def _find(self, a: np.ndarray) -> tuple[int, int, int] | None:
        """(buffer, rank, byte offset) of the region ``a`` views, None: none of them."""
        ptr = a.__array_interface__["data"][0]
        for b, row in enumerate(self._arrays):
            for r, region in enumerate(row):
                if region is None:
                    continue
                base = region.__array_interface__["data"][0]
                if base <= ptr < base + region.nbytes:
                    return b, r, ptr - base
        return None

    def _locate(self, a: np.ndarray) -> tuple[int, int, int]:
        """(buffer, rank, byte offset) of the region ``a`` views."""
        found = self._find(a)
        if found is not None:
            return found
        raise self.comm.error("a pto.comm operand is not a view of the run's window buffers "
                              "(pass pld.window views for DistributedTensor parameters)")

    def peer_array(self, a: np.ndarray, peer: int) -> np.ndarray:
        b, _, off = self._locate(a)
        region = self._arrays[b][self.kc.windows.global_rank(b, peer)]  # peer: in the buffer's comm domain
        return np.lib.stride_tricks.as_strided(region[off:].view(a.dtype), shape=a.shape, strides=a.strides)

    def owner(self, a: np.ndarray) -> int:
        return self._locate(a)[1]

    def _via(self, a: np.ndarray) -> Region | None:
        found = self._find(a)
        return None if found is None else self.kc.windows.transports[found[0]][found[1]]

    def fetch(self, a: np.ndarray) -> None:
        """Make ``a`` hold its owner's bytes (a region on another host; otherwise ``a`` is them already)."""
        via = self._via(a)
        if via is not None and via.remote:
            via.fetch(a)

    def commit(self, a: np.ndarray) -> None:
        """Make the owner's bytes hold ``a`` (a region on another host; acknowledged)."""
        via = self._via(a)
        if via is not None and via.remote:
            via.commit(a)

    def update(self, a: np.ndarray, add: bool, data: np.ndarray, kind: str) -> None:
        """Atomically add ``data`` (stored bits of the element type ``kind``) into ``a``, or set it, at its owner."""
        b, r, _ = self._locate(a)
        via = self.kc.windows.transports[b][r]
        assert via is not None
        via.update(a, add, data, kind)

    def _at(self, start: int, step: Any) -> int:
        """Run ``step()`` with the rank's clock at kernel cycle ``start``; the kernel cycle it ends at."""
        c = self.comm
        c.clock = self.base + self.offset + start
        try:
            step()
            return c.clock - self.base - self.offset
        finally:
            c.clock = self.base

    def transfer(self, name: str, peer: int, nbytes: int, write: bool, start: int) -> int:
        return self._at(start, lambda: self.kc._remote(name, peer, nbytes, write))

    def busy(self, nbytes: int) -> int:
        return self.comm.link.busy_cycles(nbytes, self.comm.clock_hz)

    def _slot(self, cell: np.ndarray) -> tuple[str, int]:
        b, _, off = self._locate(cell)
        return f"w{b}", off // max(1, cell.itemsize)

    def _check_tracking(self) -> None:
        """A chip run of more than one kernel part (or not told) publishes no floor (see :attr:`parts`)."""
        if self.parts != 1 and self.comm.tracked:
            self.comm.stop_tracking()

    def notify(self, cell: np.ndarray, value: int, set_: bool, start: int, delay: int | None = None) -> int:
        signal, slot = self._slot(cell)
        self._check_tracking()
        peer = self.owner(cell)
        op = NotifyOp.Set if set_ else NotifyOp.AtomicAdd
        self._at(start, lambda: self.comm.notify(signal, peer, slot, value, op, delay))
        return start + (self.comm.hop_cycles(4) if delay is None else int(delay))

    def wait(self, cell: np.ndarray, expected: int, cmp: str, start: int) -> int:
        signal, slot = self._slot(cell)
        self._check_tracking()
        return self._at(start, lambda: self.comm.wait(signal, slot, expected, WaitCmp(cmp.capitalize())))

    def defer(self, cell: np.ndarray, expected: int, cmp: str, start: int) -> DeferredSignal:
        signal, slot = self._slot(cell)
        self.comm.stop_tracking()  # polled by the chip's scheduler as the notifies arrive (comm.tracked)
        return DeferredSignal(self, signal, slot, expected, WaitCmp(cmp.capitalize()), self.offset + start)


class DeferredSignal:
    """A ``pld.system.defer_wait`` condition of one task (:class:`pypto.runtime.scheduler.Deferred`): this
    rank's cell ``slot`` of ``signal`` compares ``cmp`` with ``expected``; registered at chip cycle ``at``."""

    def __init__(self, link: ChipLink, signal: str, slot: int, expected: int, cmp: WaitCmp, at: int):
        self.link, self.signal, self.slot, self.expected, self.cmp, self.at = link, signal, slot, expected, cmp, at
        self.timeout_s = link.comm.timeout_s

    def poll(self) -> int | None:
        """The chip cycle the condition held at (not before its registration), or None while it does not
        (one store read; once it holds, the wait is recorded with the flows of the notifies it consumed)."""
        comm, base = self.link.comm, self.link.base
        if not compare(self.cmp, comm.signal_value(self.signal, self.slot), self.expected):
            return None
        return comm.landed(self.signal, self.slot, self.expected, self.cmp, base + self.at, "defer_wait") - base

    def timed_out(self, task: str) -> Exception:
        """The error of this condition still not holding after ``timeout_s``, naming the rank and ``task``."""
        comm = self.link.comm
        have = comm.signal_value(self.signal, self.slot)
        return comm.wait_timeout(self.signal, self.slot, self.expected, self.cmp, have, f"{task}: deferred wait")
