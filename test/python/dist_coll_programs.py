"""In-kernel collectives for test_distributed_collectives.py: one kernel per world size ``W`` running
every ``pld.tensor.*`` collective on its own windows (module-level factories, so the forked ranks and the
front end see their source; ``W`` and ``C`` are closure constants)."""

from __future__ import annotations

from typing import Any

import pypto.language as pl
import pypto.language.distributed as pld

C = 64


def make(W: int) -> Any:  # noqa: N803 - the world size, as upstream's factories spell it
    """The host orchestrator of the ``W``-rank program (``x[r]``: rank ``r``'s ``[W, C]`` input)."""

    @pl.jit.incore
    def coll_k(x: pl.Tensor[[W, C], pl.FP32], o_mesh: pl.Out[pl.Tensor[[1, C], pl.FP32]],
               o_ring: pl.Out[pl.Tensor[[1, C], pl.FP32]], o_bc: pl.Out[pl.Tensor[[1, C], pl.FP32]],
               o_ag: pl.Out[pl.Tensor[[W, C], pl.FP32]], o_rs: pl.Out[pl.Tensor[[W, C], pl.FP32]],
               o_a2a: pl.Out[pl.Tensor[[W, C], pl.FP32]],
               d_mesh: pld.DistributedTensor[[1, C], pl.FP32], d_ring: pld.DistributedTensor[[1, C], pl.FP32],
               d_bc: pld.DistributedTensor[[1, C], pl.FP32], stage: pld.DistributedTensor[[1, C], pl.FP32],
               gath: pld.DistributedTensor[[W, C], pl.FP32], rs: pld.DistributedTensor[[W, C], pl.FP32],
               a_in: pld.DistributedTensor[[W, C], pl.FP32], a_out: pld.DistributedTensor[[W, C], pl.FP32],
               sig: pld.DistributedTensor[[W, 1], pl.INT32], rsig: pld.DistributedTensor[[W, 1], pl.INT32]):
        row = pl.load(x, [0, 0], [1, C])
        d_mesh = pl.store(row, [0, 0], d_mesh)
        d_mesh = pld.tensor.allreduce(d_mesh, sig, op=pld.ReduceOp.Prod, mode=pld.AllreduceMode.mesh)
        o_mesh = pl.store(pl.load(d_mesh, [0, 0], [1, C]), [0, 0], o_mesh)
        d_ring = pl.store(row, [0, 0], d_ring)
        d_ring = pld.tensor.allreduce(d_ring, rsig, op=pld.ReduceOp.Sum, mode=pld.AllreduceMode.ring)
        o_ring = pl.store(pl.load(d_ring, [0, 0], [1, C]), [0, 0], o_ring)
        d_bc = pl.store(row, [0, 0], d_bc)
        d_bc = pld.tensor.broadcast(d_bc, sig, root=W - 1)
        o_bc = pl.store(pl.load(d_bc, [0, 0], [1, C]), [0, 0], o_bc)
        stage = pl.store(row, [0, 0], stage)
        gath = pld.tensor.allgather(stage, gath, sig)
        o_ag = pl.store(pl.load(gath, [0, 0], [W, C]), [0, 0], o_ag)
        whole = pl.load(x, [0, 0], [W, C])
        rs = pl.store(whole, [0, 0], rs)
        rs = pld.tensor.reduce_scatter(rs, sig, op=pld.ReduceOp.Max)
        o_rs = pl.store(pl.load(rs, [0, 0], [W, C]), [0, 0], o_rs)
        a_in = pl.store(whole, [0, 0], a_in)
        a_out = pld.tensor.all_to_all(a_in, a_out, sig)
        o_a2a = pl.store(pl.load(a_out, [0, 0], [W, C]), [0, 0], o_a2a)
        return o_mesh, o_ring, o_bc, o_ag, o_rs, o_a2a

    @pl.jit
    def coll(x: pl.Tensor[[W, C], pl.FP32], o_mesh: pl.Out[pl.Tensor[[1, C], pl.FP32]],
             o_ring: pl.Out[pl.Tensor[[1, C], pl.FP32]], o_bc: pl.Out[pl.Tensor[[1, C], pl.FP32]],
             o_ag: pl.Out[pl.Tensor[[W, C], pl.FP32]], o_rs: pl.Out[pl.Tensor[[W, C], pl.FP32]],
             o_a2a: pl.Out[pl.Tensor[[W, C], pl.FP32]],
             d_mesh: pld.DistributedTensor[[1, C], pl.FP32], d_ring: pld.DistributedTensor[[1, C], pl.FP32],
             d_bc: pld.DistributedTensor[[1, C], pl.FP32], stage: pld.DistributedTensor[[1, C], pl.FP32],
             gath: pld.DistributedTensor[[W, C], pl.FP32], rs: pld.DistributedTensor[[W, C], pl.FP32],
             a_in: pld.DistributedTensor[[W, C], pl.FP32], a_out: pld.DistributedTensor[[W, C], pl.FP32],
             sig: pld.DistributedTensor[[W, 1], pl.INT32], rsig: pld.DistributedTensor[[W, 1], pl.INT32]):
        w = W  # noqa: F841 - W is a closure constant of this function too (its annotations use it)
        o_mesh, o_ring, o_bc, o_ag, o_rs, o_a2a = coll_k(x, o_mesh, o_ring, o_bc, o_ag, o_rs, o_a2a, d_mesh, d_ring,
                                                         d_bc, stage, gath, rs, a_in, a_out, sig, rsig)
        return o_mesh, o_ring, o_bc, o_ag, o_rs, o_a2a

    @pl.jit.host
    def coll_host(x: pl.Tensor[[W, W, C], pl.FP32], o_mesh: pl.Out[pl.Tensor[[W, 1, C], pl.FP32]],
                  o_ring: pl.Out[pl.Tensor[[W, 1, C], pl.FP32]], o_bc: pl.Out[pl.Tensor[[W, 1, C], pl.FP32]],
                  o_ag: pl.Out[pl.Tensor[[W, W, C], pl.FP32]], o_rs: pl.Out[pl.Tensor[[W, W, C], pl.FP32]],
                  o_a2a: pl.Out[pl.Tensor[[W, W, C], pl.FP32]]):
        one = [pld.alloc_window_buffer([1, C], dtype=pl.FP32) for _ in range(4)]
        rows = [pld.alloc_window_buffer([W, C], dtype=pl.FP32) for _ in range(4)]
        sigs = [pld.alloc_window_buffer([W, 1], dtype=pl.INT32) for _ in range(2)]
        for r in pl.range(pld.world_size()):
            o = [pld.window(b, [1, C], dtype=pl.FP32) for b in one]
            w = [pld.window(b, [W, C], dtype=pl.FP32) for b in rows]
            s = [pld.window(b, [W, 1], dtype=pl.INT32) for b in sigs]
            coll(x[r], o_mesh[r], o_ring[r], o_bc[r], o_ag[r], o_rs[r], o_a2a[r], o[0], o[1], o[2], o[3], w[0], w[1],
                 w[2], w[3], s[0], s[1], device=r)

    return coll_host


def torch_reference(comm: Any, x: Any) -> dict[str, Any]:
    """torch.distributed's own results on rank r's ``x[r]`` (reduce-scatter and all-to-all as gloo spells them:
    an all_reduce / all_gather of the whole block, then this rank's part)."""
    import torch
    import torch.distributed as dist

    w, r = comm.world_size, comm.rank
    mine = x[r].clone()
    row = mine[:1].clone()
    prod, total, bc = row.clone(), row.clone(), row.clone()
    dist.all_reduce(prod, op=dist.ReduceOp.PRODUCT)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    dist.broadcast(bc, src=w - 1)
    rows = [torch.empty_like(row) for _ in range(w)]
    dist.all_gather(rows, row)
    mx = mine.clone()
    dist.all_reduce(mx, op=dist.ReduceOp.MAX)
    blocks = [torch.empty_like(mine) for _ in range(w)]
    dist.all_gather(blocks, mine)
    return {"mesh": prod, "ring": total, "bc": bc, "ag": torch.cat(rows), "rs": mx[r],
            "a2a": torch.stack([blocks[q][r] for q in range(w)])}


def make_ring_signal(W: int, n: int, rounds: int) -> Any:  # noqa: N803 - the world size, as upstream's factories spell it
    """A ``mode=ring`` Max allreduce of ``[1, n]`` on upstream's ring signal ``[rounds, W]`` (``rounds``:
    ``2 * (W - 1)`` in a kernel, one more on the host; its world size is its last extent), called twice on the same signal (the second call needs the first's
    credits cleared); ``n % W != 0`` takes the mesh on the signal's last column."""
    @pl.jit.incore
    def ring_k(x: pl.Tensor[[1, n], pl.FP32], out: pl.Out[pl.Tensor[[1, n], pl.FP32]],
               data: pld.DistributedTensor[[1, n], pl.FP32], sig: pld.DistributedTensor[[rounds, W], pl.INT32]):
        m = n + W + rounds  # noqa: F841 - closure constants of this function too (its annotations use them)
        data = pl.store(pl.load(x, [0, 0], [1, n]), [0, 0], data)
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, mode=pld.AllreduceMode.ring)
        twice = pl.add(pl.load(data, [0, 0], [1, n]), pl.load(data, [0, 0], [1, n]))
        data = pl.store(twice, [0, 0], data)
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, mode=pld.AllreduceMode.ring)
        out = pl.store(pl.load(data, [0, 0], [1, n]), [0, 0], out)
        return out

    @pl.jit
    def ring(x: pl.Tensor[[1, n], pl.FP32], out: pl.Out[pl.Tensor[[1, n], pl.FP32]],
             data: pld.DistributedTensor[[1, n], pl.FP32], sig: pld.DistributedTensor[[rounds, W], pl.INT32]):
        m = n + W + rounds  # noqa: F841 - closure constants of this function too (its annotations use them)
        out = ring_k(x, out, data, sig)
        return out

    @pl.jit.host
    def ring_host(x: pl.Tensor[[W, 1, n], pl.FP32], out: pl.Out[pl.Tensor[[W, 1, n], pl.FP32]]):
        d = pld.alloc_window_buffer([1, n], dtype=pl.FP32)
        s = pld.alloc_window_buffer([rounds, W], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            ring(x[r], out[r], pld.window(d, [1, n], dtype=pl.FP32), pld.window(s, [rounds, W], dtype=pl.INT32),
                 device=r)

    return ring_host


def assert_matches_reference(outs: list[Any], values: list[dict[str, Any]]) -> None:
    """Each rank's slice of the six outputs (mesh, ring, broadcast, all-gather, reduce-scatter, all-to-all)
    against :func:`torch_reference`'s values for that rank."""
    import torch

    for r, want in enumerate(values):
        mesh, ring, bc, ag, rs, a2a = (o[r] for o in outs)
        assert torch.allclose(mesh, want["mesh"], rtol=1e-5, atol=1e-6)
        assert torch.allclose(ring, want["ring"], rtol=1e-5, atol=1e-6)
        assert torch.equal(bc, want["bc"]) and torch.equal(ag, want["ag"]) and torch.equal(a2a, want["a2a"])
        assert torch.equal(rs[r], want["rs"])  # this rank's row of the reduce-scatter


def make_big_mesh(W: int, R: int, C: int) -> Any:  # noqa: N803 - the world size, as upstream's factories spell it
    """A mesh Sum allreduce of an ``[R, C]`` FP32 window over ``AllreduceOp.MESH_UB_BYTES`` (it goes in 16 KiB
    chunks): staged from ``x`` and read back into ``out`` a row at a time (``C`` FP32 a row, at most 16 KiB)."""
    @pl.jit.incore
    def mesh_k(x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]],
               data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[W, 1], pl.INT32]):
        m = W  # noqa: F841 - a closure constant of this function too (its annotations use it)
        for i in pl.range(R):
            data = pl.store(pl.load(x, [i, 0], [1, C]), [i, 0], data)
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Sum, mode=pld.AllreduceMode.mesh)
        for i in pl.range(R):
            out = pl.store(pl.load(data, [i, 0], [1, C]), [i, 0], out)
        return out

    @pl.jit
    def mesh(x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]],
             data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[W, 1], pl.INT32]):
        m = W + R + C  # noqa: F841 - closure constants of this function too (its annotations use them)
        out = mesh_k(x, out, data, sig)
        return out

    @pl.jit.host
    def mesh_host(x: pl.Tensor[[W, R, C], pl.FP32], out: pl.Out[pl.Tensor[[W, R, C], pl.FP32]]):
        d = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
        s = pld.alloc_window_buffer([W, 1], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            mesh(x[r], out[r], pld.window(d, [R, C], dtype=pl.FP32), pld.window(s, [W, 1], dtype=pl.INT32),
                 device=r)

    return mesh_host


def torch_allreduce(comm: Any, x: Any, op: str = "SUM") -> Any:
    """torch.distributed's all_reduce (``op``: a ``torch.distributed.ReduceOp`` name) of rank r's ``x[r]``."""
    import torch.distributed as dist

    mine = x[comm.rank].clone()
    dist.all_reduce(mine, op=getattr(dist.ReduceOp, op))
    return mine


def make_blocks(W: int, N: int, R: int, C: int, K: int | None = None) -> Any:  # noqa: N803 - upstream's spelling
    """A mesh Prod allreduce of an ``[R, C]`` FP32 window with ``core_num=K`` (default ``N``) in a kernel launched
    as ``N`` SPMD blocks (``pl.spmd(N)``): block ``b`` stages, reduces (on lane ``b`` of the ``[W, N]`` signal)
    and reads back its share, columns ``[b * C / N, (b + 1) * C / N)``."""
    S = C // N  # noqa: N806 - a block's columns
    K = N if K is None else K  # noqa: N806

    @pl.jit.incore
    def blocks_k(x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]],
                 data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[W, N], pl.INT32]):
        m = S + W + N + R + C + K  # noqa: F841 - closure constants of this function too (its annotations use them)
        col = pl.tile.get_block_idx() * S
        data = pl.store(pl.load(x, [0, col], [R, S]), [0, col], data)
        data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Prod, core_num=K)
        out = pl.store(pl.load(data, [0, col], [R, S]), [0, col], out)
        return out

    @pl.jit
    def blocks(x: pl.Tensor[[R, C], pl.FP32], out: pl.Out[pl.Tensor[[R, C], pl.FP32]],
               data: pld.DistributedTensor[[R, C], pl.FP32], sig: pld.DistributedTensor[[W, N], pl.INT32]):
        m = W + N + R + C  # noqa: F841 - closure constants of this function too (its annotations use them)
        with pl.spmd(N):
            out = blocks_k(x, out, data, sig)
        return out

    @pl.jit.host
    def blocks_host(x: pl.Tensor[[W, R, C], pl.FP32], out: pl.Out[pl.Tensor[[W, R, C], pl.FP32]]):
        d = pld.alloc_window_buffer([R, C], dtype=pl.FP32)
        s = pld.alloc_window_buffer([W, N], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            blocks(x[r], out[r], pld.window(d, [R, C], dtype=pl.FP32), pld.window(s, [W, N], dtype=pl.INT32),
                   device=r)

    return blocks_host


NR = pl.dynamic("NR")
M = pl.dynamic("M")


@pl.jit.incore
def any_ranks_k(x: pl.Tensor[[M, C], pl.FP32], out: pl.Out[pl.Tensor[[M, C], pl.FP32]],
                data: pld.DistributedTensor[[M, C], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    """Written for any rank count and rows (upstream's ``07_dynamic_rank_count`` style): a mesh Max allreduce."""
    data = pl.store(pl.load(x, [0, 0], [2, C]), [0, 0], data)
    data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max)
    out = pl.store(pl.load(data, [0, 0], [2, C]), [0, 0], out)
    return out


@pl.jit
def any_ranks(x: pl.Tensor[[M, C], pl.FP32], out: pl.Out[pl.Tensor[[M, C], pl.FP32]],
              data: pld.DistributedTensor[[M, C], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    out = any_ranks_k(x, out, data, sig)
    return out


@pl.jit.host
def any_ranks_host(x: pl.Tensor[[NR, M, C], pl.FP32], out: pl.Out[pl.Tensor[[NR, M, C], pl.FP32]]):
    """Rank ``r`` reduces ``x[r]`` (``[2, C]``: the launch's sample binds ``M`` and ``NR``)."""
    d = pld.alloc_window_buffer([2, C], dtype=pl.FP32)
    s = pld.alloc_window_buffer([NR, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        any_ranks(x[r], out[r], pld.window(d, [2, C], dtype=pl.FP32), pld.window(s, [NR, 1], dtype=pl.INT32),
                  device=r)

