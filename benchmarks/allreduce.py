"""Benchmark: a 1 MiB FP32 allreduce over 2, 4 and 8 local ranks (issue 19).

For each world size and mode (ring, mesh), every rank process runs one allreduce
after a barrier; the script prints the simulated cycles (the slowest rank) against
the link model's analytic bound (``analytic_cycles``: ring ``2 (P-1) hop(S/P)``,
mesh ``(P-1) hop(S)``; goal: ring within 1.2x), and the host wall time of the
allreduce itself (slowest rank) and of the whole launch (process start, gloo
rendezvous, run, teardown), to show how the host side scales with the rank count.
Not a timed test: it prints a table.

    .venv/bin/python benchmarks/allreduce.py [--sizes-kib 1024] [--ranks 2 4 8] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import torch

from pypto.runtime.distributed import DistributedConfig, RankComm, allreduce, analytic_cycles, launch
from pypto.target.model import load_target


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
    ap.add_argument("--sizes-kib", type=int, nargs="+", default=[1024])
    ap.add_argument("--ranks", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    target = load_target("a2a3")
    link = target.link
    assert link is not None
    print(f"link: {link.gb_per_s:g} GB/s, {link.latency_cycles} cycles per hop, clock {target.clock_hz:g} Hz")
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


if __name__ == "__main__":
    main()
