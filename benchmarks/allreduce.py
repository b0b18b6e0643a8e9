"""Benchmark: a 1 MiB FP32 allreduce over 2, 4 and 8 local ranks (issue 19).

For each world size and mode (ring, mesh), every rank process runs one allreduce
after a barrier; the script prints the simulated cycles (the slowest rank) against
the link model's analytic bound (``analytic_cycles``: ring ``2 (P-1) hop(S/P)``,
mesh ``(P-1) hop(S)``; goal: ring within 1.2x), and the host wall time of the
allreduce itself (slowest rank) and of the whole launch (process start, gloo
rendezvous, run, teardown), to show how the host side scales with the rank count.
Not a timed test: it prints a table.

With ``--kernel-kib K`` it also runs the allreduce inside a kernel (``pld.tensor.allreduce`` in an InCore
function, lowered to ``pto.comm`` ops: ``benchmarks/allreduce_kernel_programs.py``; ``--kernel-ops``: its
``ReduceOp``s, Sum by default) on every rank's simulated chip and prints, against the same bound, the
allreduce's own cycles (from the rank's first ``pto.comm`` op to the landing of its last one, as the
host lines time the allreduce alone; slowest rank) and the rank's whole clock (the chip run: staging the
window in 16 KiB tiles, the allreduce, reading one row back; then the launcher's closing barrier).
A mesh over 64 KiB is the chunked one (16 KiB chunks, a barrier per 4).

With ``--hosts-kib K`` it runs that in-kernel ring allreduce (and a 16 KiB mesh) once with every rank on
this host (window regions reached through the shared files) and once with the ranks split over two "hosts"
(``PYPTO_HOST_ID``: the first half on one, the rest on the other; a region on the other "host" reached
through its owner's window server over gloo), and prints the host wall time of each run (best of
``--repeat``, the launch: rank processes, windows, chip runs) and the simulated cycles, which must agree.

    .venv/bin/python benchmarks/allreduce.py [--sizes-kib 1024] [--ranks 2 4 8] [--repeat 3]
        [--kernel-kib 1024] [--kernel-ranks 2 4 8] [--kernel-ops Sum Max] [--hosts-kib 1024] [--hosts-ranks 2 4]
"""

from __future__ import annotations

import argparse
import time

import torch

from pypto.runtime.distributed import DistributedConfig, RankComm, allreduce, analytic_cycles, launch
from pypto.target.model import Target, load_target


def one_allreduce(comm: RankComm, numel: int, mode: str, repeat: int) -> tuple[int, float]:
    """(cycles of the last allreduce, best wall seconds) on this rank."""
    x = torch.ones(numel, dtype=torch.float32) * (comm.rank + 1)
    cycles, best = 0, float("inf")
    for _ in range(repeat):
        comm.barrier()
        start, t0 = comm.clock, time.perf_counter()
        allreduce(comm, x, "Sum", mode)
        best = min(best, time.perf_counter() - t0)
        cycles = comm.clock - start
        x.fill_(comm.rank + 1)
    return cycles, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes-kib", type=int, nargs="*", default=[1024], help="host-level allreduce sizes (KiB)")
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kernel-kib", type=int, nargs="*", default=[], help="in-kernel allreduce sizes (KiB)")
    ap.add_argument("--kernel-ranks", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--kernel-ops", nargs="+", default=["Sum"], choices=["Sum", "Max", "Min", "Prod"],
                    help="in-kernel allreduce ReduceOps (Sum: the pushed ring; the others: the pulled ring)")
    ap.add_argument("--hosts-kib", type=int, nargs="*", default=[], help="same-host vs two-host allreduce sizes (KiB)")
    ap.add_argument("--hosts-ranks", type=int, nargs="+", default=[2, 4])
    args = ap.parse_args()
    target = load_target("a2a3")
    link = target.link
    assert link is not None
    print(f"link: {link.gb_per_s:g} GB/s, {link.latency_cycles} cycles per hop, clock {target.clock_hz:g} Hz")
    if args.sizes_kib:
        print(f"{'KiB':>6} {'ranks':>5} {'mode':>5} {'sim cycles':>11} {'bound':>11} {'ratio':>6} "
              f"{'sim us':>8} {'host ms':>8} {'launch s':>8}")
    for kib in args.sizes_kib:
        numel = kib * 1024 // 4
        for world in args.ranks:
            for mode in ("ring", "mesh"):
                t0 = time.perf_counter()
                run = launch(one_allreduce, DistributedConfig(world_size=world, timeout_s=120), numel, mode,
                             args.repeat)
                launch_s = time.perf_counter() - t0
                cycles = max(v[0] for v in run.values)
                wall = max(v[1] for v in run.values)
                bound = analytic_cycles(lambda n: link.hop_cycles(n, target.clock_hz), "allreduce", kib * 1024,
                                        world, mode)
                print(f"{kib:>6} {world:>5} {mode:>5} {cycles:>11} {bound:>11} {cycles / bound:>6.3f} "
                      f"{target.cycles_to_us(cycles):>8.1f} {wall * 1e3:>8.1f} {launch_s:>8.2f}")
    if args.kernel_kib:
        print("in-kernel allreduce (pld.tensor.allreduce lowered to pto.comm ops, on each rank's chip):")
        print(f"{'KiB':>6} {'ranks':>5} {'mode':>5} {'op':>4} {'allreduce':>10} {'bound':>11} {'ratio':>6} "
              f"{'rank clock':>10} {'ratio':>6} {'compile s':>9} {'launch s':>8}")
    for kib in args.kernel_kib:
        for world in args.kernel_ranks:
            for mode in ("ring", "mesh"):
                for op in args.kernel_ops:
                    print(kernel_line(kib, world, mode, target, op), flush=True)
    if args.hosts_kib:
        print("in-kernel allreduce, every rank on one host vs the ranks on two \"hosts\" (host wall, best of "
              f"{args.repeat}):")
        print(f"{'KiB':>6} {'ranks':>5} {'mode':>5} {'sim cycles':>11} {'1 host s':>9} {'2 hosts s':>9} {'ratio':>6}")
    for kib in args.hosts_kib:
        for world in args.hosts_ranks:
            for mode, size in (("ring", kib), ("mesh", min(kib, 16))):
                print(hosts_line(size, world, mode, args.repeat), flush=True)
    for kib in args.hosts_kib:
        print(put_line(kib, max(args.repeat, 5)), flush=True)


def comm_span(events: list[dict]) -> int:
    """Cycles from a rank's first ``pto.comm`` op in a chip run to the landing of its last one."""
    ops = [e for e in events if e["task"].startswith("chip run") and e["cat"] in ("put", "get", "notify", "wait")]
    ends = [max(e["end"], e.get("remote", {}).get("ts", 0) if e["cat"] == "notify" else 0) for e in ops]
    return max(ends) - min(e["start"] for e in ops)


REFERENCE = {"Sum": lambda x: x.sum(0), "Max": lambda x: x.amax(0), "Min": lambda x: x.amin(0),
             "Prod": lambda x: x.prod(0)}
"""The torch result of each ReduceOp over the ranks (dim 0)."""


def kernel_line(kib: int, world: int, mode: str, target: Target, op: str = "Sum") -> str:
    """One in-kernel allreduce of ``kib`` KiB on ``world`` ranks: its table row."""
    import allreduce_kernel_programs as ak

    from pypto.ir.distributed_compiled_program import DistributedConfig as L3Config
    from pypto.runtime import RunConfig

    cols = 1024
    rows = kib * 1024 // 4 // cols
    x, y = torch.randn(world, rows, cols), torch.zeros(world, 1, cols)
    cfg = RunConfig(distributed_config=L3Config(device_ids=list(range(world)), timeout_s=300))
    t0 = time.perf_counter()
    compiled = ak.make(world, rows, cols, mode == "ring", op).compile(x, y, config=cfg)
    t1 = time.perf_counter()
    compiled(x, y)
    launch_s = time.perf_counter() - t1
    want = REFERENCE[op](x[:, :1]).unsqueeze(0).expand_as(y)
    assert torch.allclose(y, want, rtol=1e-4, atol=1e-3), "wrong allreduce"
    cycles = max(r.cycles for r in compiled.last_run.ranks)
    span = max(comm_span(r.events) for r in compiled.last_run.ranks)
    link = target.link
    assert link is not None
    bound = analytic_cycles(lambda n: link.hop_cycles(n, target.clock_hz), "allreduce", kib * 1024, world, mode)
    return (f"{kib:>6} {world:>5} {mode:>5} {op:>4} {span:>10} {bound:>11} {span / bound:>6.3f} {cycles:>10} "
            f"{cycles / bound:>6.3f} {t1 - t0:>9.1f} {launch_s:>8.2f}")


def window_puts(comm: RankComm, numel: int, repeat: int) -> float:
    """Best wall seconds of one ``numel``-float put into the peer's window (``KernelComm.put``: the transport
    alone, no chip run), rank 0 putting to rank 1."""
    from pypto.runtime.distributed.windows import KernelComm, SharedWindows

    w = SharedWindows(comm, [4 * numel], "bench-put")
    kc, x = KernelComm(comm, w), torch.ones(numel)
    best = float("inf")
    for _ in range(repeat):
        comm.barrier()
        t0 = time.perf_counter()
        if comm.rank == 0:
            kc.put(w.local(0).view(torch.float32), 1, x)  # type: ignore[union-attr]
        best = min(best, time.perf_counter() - t0)
    w.close()
    return best


def put_line(kib: int, repeat: int) -> str:
    """A ``kib`` KiB window put between 2 ranks, on one host and on two: the transport's own host time."""
    import os

    from pypto.runtime.distributed.transport import HOST_ID_ENV

    before, best = os.environ.pop(HOST_ID_ENV, None), {}
    try:
        for hosts in (1, 2):
            if hosts == 2:
                os.environ[HOST_ID_ENV] = "h0,h1"
            run = launch(window_puts, DistributedConfig(world_size=2, timeout_s=120), kib * 256, repeat)
            best[hosts] = run.values[0]
    finally:
        os.environ.pop(HOST_ID_ENV, None)
        if before is not None:
            os.environ[HOST_ID_ENV] = before
    return (f"one {kib} KiB window put (KernelComm.put, rank 0 -> 1, best of {repeat}): one host "
            f"{best[1] * 1e3:.2f} ms, two hosts {best[2] * 1e3:.2f} ms ({best[2] / best[1]:.0f}x)")


def hosts_line(kib: int, world: int, mode: str, repeat: int) -> str:
    """One in-kernel allreduce of ``kib`` KiB on ``world`` ranks, on one host and on two: its table row."""
    import os

    import allreduce_kernel_programs as ak

    from pypto.ir.distributed_compiled_program import DistributedConfig as L3Config
    from pypto.runtime import RunConfig
    from pypto.runtime.distributed.transport import HOST_ID_ENV

    cols = 1024
    rows = kib * 1024 // 4 // cols
    x, y = torch.randn(world, rows, cols), torch.zeros(world, 1, cols)
    cfg = RunConfig(distributed_config=L3Config(device_ids=list(range(world)), timeout_s=300))
    compiled = ak.make(world, rows, cols, mode == "ring").compile(x, y, config=cfg)
    walls, cycles = {}, {}
    before = os.environ.pop(HOST_ID_ENV, None)
    try:
        for hosts in (1, 2):
            if hosts == 2:
                os.environ[HOST_ID_ENV] = ",".join(f"h{2 * r // world}" for r in range(world))
            best = float("inf")
            for _ in range(repeat):
                y.zero_()
                t0 = time.perf_counter()
                compiled(x, y)
                best = min(best, time.perf_counter() - t0)
                assert torch.allclose(y, x[:, :1].sum(0, keepdim=True).expand_as(y), atol=1e-3), "wrong allreduce"
            walls[hosts], cycles[hosts] = best, max(r.cycles for r in compiled.last_run.ranks)
    finally:
        os.environ.pop(HOST_ID_ENV, None)
        if before is not None:
            os.environ[HOST_ID_ENV] = before
    assert cycles[1] == cycles[2], f"the transport changed the simulated cycles: {cycles}"
    return (f"{kib:>6} {world:>5} {mode:>5} {cycles[1]:>11} {walls[1]:>9.2f} {walls[2]:>9.2f} "
            f"{walls[2] / walls[1]:>6.2f}")


if __name__ == "__main__":
    main()
