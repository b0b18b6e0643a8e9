"""How a rank reaches one region of a window buffer: a shared file (same host) or a window server (another host).

Every rank sees each region of a window buffer through a :class:`Region`: ``array`` holds the region's bytes
*as seen here*, and a view of it is read or written with

- :meth:`Region.fetch` (before reading a view: make it hold the owner's bytes now),
- :meth:`Region.commit` (after writing a view: make the owner's bytes hold it; returns once they do),
- :meth:`Region.update` (an atomic read-modify-write at the owner: ``add`` or ``set``).

Two implementations:

- :class:`SharedFileRegion` -- the region's file in ``/dev/shm`` mapped here (the owner's own region, and
  every region of a rank on the same host). ``array`` *is* the owner's memory: fetch and commit do
  nothing, ``update`` holds an ``flock`` on the file.
- :class:`RemoteRegion` -- a region owned by a rank on another host. ``array`` is a local shadow (not
  coherent); fetch, commit and update are requests to the owner's :class:`WindowServer`, over a gloo
  process group of their own (``dist.new_group(backend="gloo")``, made by every rank together). The
  requester blocks on the reply: a commit or update is acknowledged once applied, so a later notify (on
  the store) is ordered after it.

The server applies a request to its own :class:`SharedFileRegion`, an update under the same ``flock`` as
the same-host ranks use: ``AtomicAdd`` is atomic whichever path the adders take. Every request and reply
is bounded by the run's timeout; a peer that died or does not answer is a
:class:`~.comm.DistributedRankError` naming it. The host of a rank is ``socket.gethostname()``, or
``PYPTO_HOST_ID`` when set (so one machine can play several hosts).
"""

from __future__ import annotations

import fcntl
import os
import socket
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.distributed as dist

HOST_ID_ENV = "PYPTO_HOST_ID"
"""Overrides the host identity of a rank (default: its hostname): ranks with the same id share window files,
ranks with different ids reach each other's regions through the window servers."""

_STOP, _READ, _WRITE, _ADD, _SET = range(5)
_REQ, _DATA, _REPLY = 7101, 7102, 7103
"""The tags of a request header, its payload and the reply on the window servers' group."""
_MAXD = 8
_HEADER = 7 + 2 * _MAXD  # op, buffer, offset, itemsize, kind, ndim, payload bytes, shape, strides
_KINDS = ["", "fp32", "fp16", "bf16", "fp64", "fp8e4m3fn", "fp8e5m2", "fp8e8m0", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64"]
"""The element types an ``add`` computes in (the names of :class:`pypto.device.interpreter.memory.DType`)."""
_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def host_id(rank: int) -> str:
    """The host identity of ``rank`` (this process): ``PYPTO_HOST_ID`` -- one id for every rank of this process
    tree, or a comma-separated list indexed by rank (local launches: ``h0,h0,h1,h1`` puts ranks 0-1 and 2-3 on
    two "hosts") -- else the hostname."""
    ids = [s.strip() for s in os.environ.get(HOST_ID_ENV, "").split(",")]
    if len(ids) == 1:
        return ids[0] or socket.gethostname()
    if rank >= len(ids) or not ids[rank]:
        raise ValueError(f"{HOST_ID_ENV}={os.environ[HOST_ID_ENV]!r} names {len(ids)} hosts by rank; it has none "
                         f"for rank {rank}")
    return ids[rank]


TORCH_KIND = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64",
              torch.int8: "int8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
              torch.uint8: "uint8"}
"""The ``kind`` of an ``add`` on a torch tensor's elements."""


def apply(view: np.ndarray, add: bool, data: np.ndarray, kind: str) -> None:
    """``view`` += ``data`` (computed in the element type ``kind``: a DType name) or ``view`` = ``data``; both
    hold the elements' stored bits, of one width."""
    data = data.reshape(view.shape)
    if not add:
        view[...] = data.view(view.dtype)
        return
    from pypto.device.interpreter.memory import dtype_named, to_compute, to_storage

    dt = dtype_named(kind)
    bits = view.view(dt.storage)
    bits[...] = to_storage(to_compute(bits, dt) + to_compute(data.view(dt.storage), dt), dt).reshape(view.shape)


class Region:
    """One region of a window buffer as this rank reaches it (see the module docstring)."""

    remote = False
    array: np.ndarray
    """The region's bytes as seen here (uint8)."""
    tensor: torch.Tensor
    """The same bytes as a torch tensor."""

    def fetch(self, view: np.ndarray) -> None:
        """Make ``view`` (a view of :attr:`array`) hold the owner's bytes."""

    def commit(self, view: np.ndarray) -> None:
        """Make the owner's bytes hold ``view`` (returns once they do)."""

    def update(self, view: np.ndarray, add: bool, data: np.ndarray, kind: str = "") -> None:
        """Atomically add ``data`` to (or set) the owner's bytes at ``view``."""
        raise NotImplementedError


class FileLock:
    """An exclusive ``flock`` on a window file: a read-modify-write of a region is atomic."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


class SharedFileRegion(Region):
    """A region whose file this process maps (the owner's memory itself)."""

    def __init__(self, path: Path, nbytes: int):
        self.path = path
        self.tensor = torch.from_file(str(path), shared=True, size=int(nbytes), dtype=torch.uint8)
        self.array = self.tensor.numpy()

    def update(self, view: np.ndarray, add: bool, data: np.ndarray, kind: str = "") -> None:
        with FileLock(self.path):
            apply(view, add, data, kind)


def _describe(view: np.ndarray, base: np.ndarray) -> tuple[int, tuple[int, ...], tuple[int, ...]]:
    """(byte offset, shape, byte strides) of ``view`` inside ``base``."""
    return (view.__array_interface__["data"][0] - base.__array_interface__["data"][0], view.shape, view.strides)


def _at(base: np.ndarray, offset: int, itemsize: int, shape: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """The view of ``base``'s bytes a request describes (checked to lie inside it)."""
    lo = hi = offset
    for n, s in zip(shape, strides, strict=True):
        if n == 0:
            return np.empty(shape, _UINT[itemsize])
        lo, hi = (lo + (n - 1) * s, hi) if s < 0 else (lo, hi + (n - 1) * s)
    if lo < 0 or hi + itemsize > base.nbytes:
        raise ValueError(f"bytes [{lo}, {hi + itemsize}) outside the {base.nbytes}-byte region")
    return np.ndarray(shape, _UINT[itemsize], buffer=base, offset=offset, strides=strides)


class RemoteRegion(Region):
    """A region owned by ``owner`` on another host, reached through its :class:`WindowServer`."""

    remote = True

    def __init__(self, client: WindowClient, owner: int, buffer: int, nbytes: int):
        self.client, self.owner, self.buffer = client, owner, buffer
        self.tensor = torch.zeros(int(nbytes), dtype=torch.uint8)
        self.array = self.tensor.numpy()

    def _header(self, op: int, view: np.ndarray, kind: str, payload: int) -> torch.Tensor:
        offset, shape, strides = _describe(view, self.array)
        if len(shape) > _MAXD:
            raise self.client.comm.error(f"a window access of {len(shape)} dimensions (at most {_MAXD})")
        pad = [0] * (_MAXD - len(shape))
        return torch.tensor([op, self.buffer, offset, view.itemsize, _KINDS.index(kind), len(shape), payload,
                             *shape, *pad, *strides, *pad], dtype=torch.int64)

    def fetch(self, view: np.ndarray) -> None:
        got = self.client.request(self.owner, self._header(_READ, view, "", 0), None, view.size * view.itemsize)
        view.view(_UINT[view.itemsize])[...] = got.view(_UINT[view.itemsize]).reshape(view.shape)

    def commit(self, view: np.ndarray) -> None:
        data = np.ascontiguousarray(view).view(np.uint8).reshape(-1)
        self.client.request(self.owner, self._header(_WRITE, view, "", data.size), data, 0)

    def update(self, view: np.ndarray, add: bool, data: np.ndarray, kind: str = "") -> None:
        raw = np.ascontiguousarray(np.asarray(data).reshape(view.shape).view(view.dtype)).view(np.uint8).reshape(-1)
        self.client.request(self.owner, self._header(_ADD if add else _SET, view, kind, raw.size), raw, 0)


class WindowClient:
    """This rank's side of the requests to the other hosts' window servers (one request at a time)."""

    def __init__(self, comm: Any, group: Any):
        self.comm, self.group = comm, group
        self.lock = threading.Lock()

    def _wait(self, work: Any, what: str, owner: int) -> None:
        try:
            if not work.wait(timeout=timedelta(seconds=self.comm.timeout_s)):
                raise RuntimeError("no reply")
        except RuntimeError as exc:
            raise self.comm.error(_failure(what, owner, self.comm.timeout_s, exc)) from None

    def request(self, owner: int, header: torch.Tensor, payload: np.ndarray | None, reply: int) -> np.ndarray:
        """Send one request to ``owner``'s server and wait for its reply (``reply`` bytes of data)."""
        what = {_READ: "window read", _WRITE: "window write", _ADD: "window atomic add", _SET: "window set"}
        name = what.get(int(header[0]), "window request")
        out = torch.empty(8 + reply, dtype=torch.uint8)
        with self.lock:
            try:
                sends = [dist.isend(header, dst=owner, group=self.group, tag=_REQ)]
                if payload is not None and payload.size:
                    sends.append(dist.isend(torch.from_numpy(payload), dst=owner, group=self.group, tag=_DATA))
                got = dist.irecv(out, src=owner, group=self.group, tag=_REPLY)
            except RuntimeError as exc:
                raise self.comm.error(_failure(name, owner, self.comm.timeout_s, exc)) from None
            for w in sends:
                self._wait(w, name, owner)
            self._wait(got, name, owner)
        status = int(out[:8].view(torch.int64)[0])
        if status:
            raise self.comm.error(f"{name} on rank {owner}'s window buffer {int(header[1])}: the owner refused it "
                                  f"(a malformed request)")
        return out[8:].numpy()


def _failure(what: str, owner: int, timeout_s: float, exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "closed by peer" in text or "Connection reset" in text or "Broken pipe" in text:
        text = "the connection was closed: its process died"
    return f"{what} on rank {owner} (another host) failed within the {timeout_s:g} s timeout: {text.split('] ', 1)[-1]}"


class WindowServer:
    """A thread serving the other hosts' requests on this rank's own regions (see the module docstring)."""

    def __init__(self, group: Any, own: list[SharedFileRegion | None], rank: int):
        self.group, self.own, self.rank = group, own, rank
        self.served = 0
        self.error: str | None = None
        self.thread = threading.Thread(target=self._serve, name=f"pypto-window-server-r{rank}", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            header = torch.zeros(_HEADER, dtype=torch.int64)
            try:
                work = dist.irecv(header, src=None, group=self.group, tag=_REQ)
                work.wait()
                src = work._source_rank()
            except Exception as exc:  # noqa: BLE001 - the group went away (a peer died, the run ended)
                self.error = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                return
            h = [int(v) for v in header]
            op, buffer, offset, itemsize, kind, ndim, nbytes = h[:7]
            if op == _STOP:
                return
            try:
                payload = torch.empty(nbytes, dtype=torch.uint8)
                if nbytes:
                    dist.recv(payload, src=src, group=self.group, tag=_DATA)
                reply = self._apply(op, buffer, offset, itemsize, _KINDS[kind],
                                    tuple(h[7 : 7 + ndim]), tuple(h[7 + _MAXD : 7 + _MAXD + ndim]), payload.numpy())
                dist.send(reply, dst=src, group=self.group, tag=_REPLY)
                self.served += 1
            except Exception as exc:  # noqa: BLE001 - the requester died mid-request: keep serving the others
                self.error = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

    def _apply(self, op: int, buffer: int, offset: int, itemsize: int, kind: str, shape: tuple[int, ...],
               strides: tuple[int, ...], payload: np.ndarray) -> torch.Tensor:
        """The reply (status, then the bytes read) to one request on this rank's region ``buffer``."""
        status, data = 0, b""
        try:
            region = self.own[buffer]
            if region is None:
                raise ValueError(f"rank {self.rank} holds no region of window buffer {buffer}")
            raw = _at(region.array, offset, itemsize, shape, strides)
            if op == _READ:
                data = np.ascontiguousarray(raw).tobytes()
            elif op == _WRITE:
                apply(raw, False, payload.view(raw.dtype), "")
            else:  # under the file's lock, as the same-host ranks' updates
                region.update(raw, op == _ADD, payload.view(raw.dtype), kind)
        except (ValueError, IndexError, KeyError):
            status = 1
            if op == _READ:  # the reply the requester posted for: the status and its size in zeros
                data = bytes(int(np.prod(shape)) * itemsize)
        return torch.cat([torch.tensor([status], dtype=torch.int64).view(torch.uint8),
                          torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)])

    def stop(self, timeout_s: float) -> None:
        """Wait for the server to end (after the STOP every server gets from its predecessor)."""
        self.thread.join(timeout_s)


def stop_servers(group: Any, rank: int, world: int) -> None:
    """Send the STOP that ends rank ``rank + 1``'s server (after a barrier: no request is still under way)."""
    header = torch.zeros(_HEADER, dtype=torch.int64)
    header[0] = _STOP
    dist.send(header, dst=(rank + 1) % world, group=group, tag=_REQ)
