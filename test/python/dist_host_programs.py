"""Rank functions for the cross-host window tests (test_distributed_hosts.py): run by
:func:`pypto.runtime.distributed.launch` on every rank, with ``PYPTO_HOST_ID`` placing the ranks on "hosts"."""

from __future__ import annotations

import os
import time
from typing import Any

import torch


def mine(rank: int, n: int) -> torch.Tensor:
    return torch.arange(n, dtype=torch.float32) + 100 * rank


def window_rma(comm: Any, n: int) -> dict[str, Any]:
    """Two ranks: put into the peer's window, atomic adds into both ranks' accumulators, notify / wait, a
    barrier, then a get of the peer's window; returns what this rank saw and how it reached each region."""
    from pypto.runtime.distributed.windows import KernelComm, SharedWindows

    w = SharedWindows(comm, [4 * n, 4 * n, 16], "hosts-rma")
    kc = KernelComm(comm, w)
    data, acc, sig = (w.local(b).view(dt) for b, dt in enumerate((torch.float32, torch.float32, torch.int32)))  # type: ignore[union-attr]
    peer = 1 - comm.rank
    kc.put(data, peer, mine(comm.rank, n))
    for owner in (0, 1):
        kc.put(acc, owner, mine(comm.rank, n), atomic="AtomicAdd")
    kc.notify(sig, peer, [0], 1, "AtomicAdd")
    kc.wait(sig, [0], 1, "Ge")  # the peer's put and adds were acknowledged before its notify
    got, summed, cell = data.clone(), acc.clone(), int(sig[0])
    kc.barrier(sig)
    back = torch.zeros(n)
    kc.get(back, peer, data)  # the peer's window holds this rank's values
    kinds = [type(t).__name__ for t in w.transports[0]]
    w.close()
    stopped = w.server is None or not w.server.thread.is_alive()
    return {"got": got, "acc": summed, "cell": cell, "back": back, "kinds": kinds, "stopped": stopped}


def peer_dies_during_a_remote_write(comm: Any, n: int) -> None:
    """Rank 1 dies once the windows exist; rank 0 then writes into rank 1's window (on another host)."""
    from pypto.runtime.distributed.windows import KernelComm, SharedWindows

    w = SharedWindows(comm, [4 * n], "hosts-dies")
    if comm.rank == 1:
        os._exit(9)
    time.sleep(0.5)
    with comm.scope("put to rank 1"):
        KernelComm(comm, w).put(w.local(0).view(torch.float32), 1, mine(0, n))  # type: ignore[union-attr]


def window_servers(comm: Any, *, state: dict) -> int:
    """How many window server threads this (persistent) rank process still runs."""
    import threading

    return sum(t.name.startswith("pypto-window-server") and t.is_alive() for t in threading.enumerate())
