"""The in-kernel allreduce of ``benchmarks/allreduce.py --kernel-kib``: one ``[R, C]`` FP32 window per rank,
reduced with ``pld.tensor.allreduce`` inside an InCore kernel (a module-level factory, so the forked ranks
and the front end see its source; ``W``, ``R``, ``C`` and ``MODE`` are closure constants)."""

from __future__ import annotations

from typing import Any

import pypto.language as pl
import pypto.language.distributed as pld


def make(W: int, R: int, C: int, ring: bool, op: str = "Sum") -> Any:  # noqa: N803 - upstream's factory spelling
    """The host orchestrator: ``x[r]`` is rank ``r``'s ``[R, C]`` data, ``y[r]`` the first row of its reduced copy
    (``op``: a ``pld.ReduceOp`` name)."""
    MODE = pld.AllreduceMode.ring if ring else pld.AllreduceMode.mesh  # noqa: N806
    OP = getattr(pld.ReduceOp, op)  # noqa: N806
    RB = max(1, min(R, 4096 // C))  # noqa: N806 - rows per 16 KiB staging tile

    @pl.jit.incore
    def ar_k(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
             data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[W, 1], pl.INT32]):
        w = W  # noqa: F841 - a closure constant of this function too (its annotations use it)
        for i in pl.range(R // RB):  # staged in 16 KiB tiles
            data = pl.store(pl.load(x, [i * RB, 0], [RB, C]), [i * RB, 0], data)
        data = pld.tensor.allreduce(data, sig, op=OP, mode=MODE)
        y = pl.store(pl.load(data, [0, 0], [1, C]), [0, 0], y)  # the first row (small results for the launcher)
        return y

    @pl.jit
    def ar(x: pl.Tensor[[R, C], pl.FP32], y: pl.Out[pl.Tensor[[1, C], pl.FP32]],
           data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[W, 1], pl.INT32]):
        w = W + R + C  # noqa: F841 - closure constants of this function too (its annotations use them)
        return ar_k(x, y, data, sig)

    @pl.jit.host
    def ar_host(x: pl.Tensor[[W, R, C], pl.FP32], y: pl.Out[pl.Tensor[[W, 1, C], pl.FP32]]):
        buf = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
        sig = pld.alloc_window_buffer([W, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            ar(x[r], y[r], pld.window(buf, [R, C], dtype=pl.FP32), pld.window(sig, [W, 1], dtype=pl.INT32), device=r)

    return ar_host
