"""Benchmark: compile speed (issue 17 goals 1 and 2). Prints ratios; not a timed test.

1. Whole process: ``import torch; import pypto.language`` + the first compile of the 128x128 add
   kernel (``@pl.jit``, dumps off) in a fresh process, against a bare ``import torch`` process
   (best of N each, interleaved). Goal: at most 0.15 s beyond the torch process (upstream's 0.14 s
   import + 0.01 s first compile). The process figure holds the exit too, which ``import pypto``
   makes cheaper than a bare torch process's own (``gc_policy.collect_then_freeze_at_exit``), so the
   child also reports its import / first-compile split in wall and CPU time: their CPU sum is the
   goal's figure read strictly. The floor is ``import xdsl.dialects.builtin`` after torch, timed in a
   child. Children write and use bytecode (an untimed first round) as a user's process does.
   Session 7, CPU in the child against ``main`` before it: import 0.31-0.36 -> 0.24-0.25 s, first
   compile 0.16-0.20 -> 0.14-0.18 s; session 8 (collector policy ``gc_policy.long_lived``): import
   0.26-0.28 -> 0.23-0.25 s, first compile 0.18-0.20 -> 0.13-0.16 s, both 0.46 -> 0.35-0.42 s;
   session 22 (the exit): process CPU beyond torch 0.35 -> 0.03 s (docs/compile_speed.md, "A fresh
   process").
2. Warm compile in-process of the same kernel (``ir.compile``), dumps off (goal <= 20 ms) and
   dumps on (goal <= 30 ms), best of N, timed by ``--clock`` (wall, default, or this process's CPU
   time; the other is printed beside it); and a second ``@pl.jit`` compile of the same
   specialisation, which must be a compile-cache hit. Session 8, process CPU on a 2-core machine at a
   load of 8-18: dumps off 20.0-21.7 -> 17.8-20.7 ms, dumps on 30.2-34.4 -> 25.8-31.4 ms. Session 9
   (``pypto.core.op_verify``, dump links; load 15-25, best of 200 in 8 processes): dumps off 20.7 ->
   19.6 ms, dumps on 30.7 -> 28.7 ms; Python calls per compile 0.90x / 0.91x (docs/compile_speed.md).

    .venv/bin/python benchmarks/compile_speed.py [--runs N] [--procs N] [--baseline DIR] [--clock cpu]

``--baseline DIR`` runs the same figures on another source tree (e.g. ``git archive <commit>``
with ``dialects/``, ``ptoas/``, ``tools/`` copied into its ``pypto/``) in the same processes'
rotation and prints this tree's figures as ratios of the baseline's. Wall times on a loaded
machine swing; the warm figures also give process CPU time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = {"beyond_torch": 0.15, "warm_off": 0.0063, "warm_on": 0.0118}
GOALS = {"beyond_torch": 0.15, "warm_off": 0.020, "warm_on": 0.030}

CHILD = """
import json, sys, time
def now():
    return time.perf_counter(), time.process_time()
t0 = now()
import torch
t1 = now()
split = {{}}
if {floor}:
    import xdsl.dialects.builtin
    t2 = now()
    split = {{"floor_import": t2[0] - t1[0], "floor_import_cpu": t2[1] - t1[1]}}
if {full}:
    import pypto.language as pl

    t2 = now()

    @pl.jit
    def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out

    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    from pypto.runtime import RunConfig

    add.compile(a, b, out, config=RunConfig(save_kernels_dir={out_dir!r}))
    t3 = now()
    split = {{"import": t2[0] - t1[0], "first_compile": t3[0] - t2[0],
              "import_cpu": t2[1] - t1[1], "first_compile_cpu": t3[1] - t2[1]}}
print(json.dumps(split))
"""

KERNEL = '''import pypto.language as pl


@pl.program
class add:
    @pl.function(type=pl.FunctionType.Orchestration)
    def add(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32],
            out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out
'''


def _env(baseline: str | None) -> dict[str, str]:
    """The child's environment: ``baseline`` (a source tree laid out as the installed package) first.

    Bytecode is written and used as in a user's process (``PYTHONDONTWRITEBYTECODE`` would make every
    changed module compile from source in every child)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if baseline:
        env["PYTHONPATH"] = baseline
    return env


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_child(script: Path, cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """Run a child script: its wall time, its CPU time (user + system: steadier on a loaded machine), stdout."""
    start, start_cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=cwd, check=True, env=env)
    return time.perf_counter() - start, _children_cpu() - start_cpu, done.stdout


def whole_process(procs: int, tmp: Path, baseline: str | None = None, clock: str = "wall") -> None:
    """Goal 1: the fresh-process figure against a bare ``import torch`` process (and the baseline's)."""
    kinds = [("torch", False, None), ("floor", False, None), ("pypto", True, None)]
    kinds += [("baseline", True, baseline)] if baseline else []
    best = {k: float("inf") for k, _, _ in kinds}
    cpu = {k: float("inf") for k, _, _ in kinds}
    split: dict[str, dict[str, float]] = {k: {} for k, _, _ in kinds}
    for i in range(-1, procs):  # round -1 is not timed: it writes the bytecode and the target cache
        for label, full, path in kinds:
            script = tmp / f"child_{label}_{i}.py"  # a file: the jit front end reads the kernel's source
            script.write_text(CHILD.format(full=full, floor=label == "floor", out_dir=str(tmp / f"proc_{label}_{i}")))
            wall, used, stdout = _run_child(script, tmp, _env(path))
            if i < 0:
                continue
            best[label], cpu[label] = min(best[label], wall), min(cpu[label], used)
            for k, v in json.loads(stdout.strip().splitlines()[-1]).items():
                split[label][k] = min(split[label].get(k, float("inf")), v)
    beyond = best["pypto"] - best["torch"]
    if clock == "cpu":  # judged by the processes' CPU time (user + system)
        beyond = cpu["pypto"] - cpu["torch"]
    print(f"whole process   import torch {best['torch']:.3f}s   + pypto.language + first compile {best['pypto']:.3f}s")
    print(f"                ratio {best['pypto'] / best['torch']:.3f}x the torch process; beyond torch {beyond:.3f}s {clock}"
          f" (goal <= {GOALS['beyond_torch']:.2f}s: {'met' if beyond <= GOALS['beyond_torch'] else 'NOT met'};"
          f" {beyond / UPSTREAM['beyond_torch']:.2f}x upstream)")  # fmt: skip
    now = split["pypto"]
    print(f"                in the child: import pypto.language {now['import']:.3f}s, first compile {now['first_compile']:.3f}s")
    in_child = now["import_cpu"] + now["first_compile_cpu"]
    print(f"                in the child, CPU: import {now['import_cpu']:.3f}s + first compile {now['first_compile_cpu']:.3f}s"
          f" = {in_child:.3f}s (goal <= {GOALS['beyond_torch']:.2f}s: {'met' if in_child <= GOALS['beyond_torch'] else 'NOT met'})")
    print("                (the process figure above also holds the exit: gc_policy.collect_then_freeze_at_exit makes it"
          " cheaper than a bare torch process's own)")
    print(f"                process CPU time: torch {cpu['torch']:.3f}s, + pypto {cpu['pypto']:.3f}s: beyond torch "
          f"{cpu['pypto'] - cpu['torch']:.3f}s")  # fmt: skip
    floor = split["floor"]
    print(f"                floor: ``import xdsl.dialects.builtin`` after torch, in a child: {floor['floor_import']:.3f}s"
          f" (CPU {floor['floor_import_cpu']:.3f}s): xDSL's own class building, which any xDSL IR needs")  # fmt: skip
    if baseline:
        before = best["baseline"] - best["torch"]
        print(f"                baseline {best['baseline']:.3f}s ({best['baseline'] / best['torch']:.3f}x torch, beyond torch "
              f"{before:.3f}s): now {beyond / before:.2f}x the baseline's time beyond torch")  # fmt: skip
        cpu_before, cpu_now = cpu["baseline"] - cpu["torch"], cpu["pypto"] - cpu["torch"]
        print(f"                baseline process CPU beyond torch {cpu_before:.3f}s: now {cpu_now / cpu_before:.2f}x")
        base = split["baseline"]
        print(f"                baseline child: import {base['import']:.3f}s, first compile {base['first_compile']:.3f}s;"
              f" now import {now['import'] / base['import']:.2f}x, first compile "
              f"{now['first_compile'] / base['first_compile']:.2f}x, together "
              f"{(now['import'] + now['first_compile']) / (base['import'] + base['first_compile']):.2f}x")  # fmt: skip


def warm(runs: int, tmp: Path, as_json: bool = False, clock: str = "wall") -> None:
    """Goal 2: warm in-process compiles and the compile cache."""
    import torch

    import pypto.language as pl
    from pypto.ir import compile
    from pypto.runtime import RunConfig

    src = tmp / "add_kernel.py"
    src.write_text(KERNEL)
    program = pl.loads(src)
    for dumps in (False, True):
        compile(program, output_dir=tmp / f"warmup_{dumps}", dump_passes=dumps)
    best = {False: float("inf"), True: float("inf")}
    cpu = {False: float("inf"), True: float("inf")}
    for i in range(runs):
        for dumps in (False, True):
            start, start_cpu = time.perf_counter(), time.process_time()
            compile(program, output_dir=tmp / f"warm_{dumps}_{i}", dump_passes=dumps)
            best[dumps] = min(best[dumps], time.perf_counter() - start)
            cpu[dumps] = min(cpu[dumps], time.process_time() - start_cpu)
    if as_json:
        print(json.dumps({"warm_off": best[False], "warm_on": best[True], "cpu_off": cpu[False], "cpu_on": cpu[True]}))
        return
    for dumps, key in ((False, "warm_off"), (True, "warm_on")):
        t = cpu[dumps] if clock == "cpu" else best[dumps]
        other = f"wall {best[dumps] * 1e3:.1f}ms" if clock == "cpu" else f"CPU {cpu[dumps] * 1e3:.1f}ms"
        print(f"warm compile    dumps {'on ' if dumps else 'off'} {t * 1e3:7.1f}ms {clock}  {t / GOALS[key]:.2f}x the goal "
              f"({GOALS[key] * 1e3:.0f} ms: {'met' if t <= GOALS[key] else 'NOT met'}), {t / UPSTREAM[key]:.2f}x upstream; "
              f"{other}")  # fmt: skip

    def make() -> object:
        """A new @pl.jit object of the same source (a re-run cell, a kernel defined in a function)."""

        @pl.jit
        def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
            with pl.at(level=pl.Level.CORE_GROUP):
                out[:] = pl.add(a, b)
            return out

        return add

    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    cfg = RunConfig(save_kernels_dir=str(tmp / "jit"))
    kernel = make()
    start = time.perf_counter()
    first = kernel.compile(a, b, out, config=cfg)
    miss = time.perf_counter() - start
    for label, obj in (("same @pl.jit object", kernel), ("a new @pl.jit object", make())):
        start = time.perf_counter()
        again = obj.compile(a, b, out, config=cfg)
        hit = time.perf_counter() - start
        verdict = "cache hit" if again is first else "compiled AGAIN"
        print(f"same specialisation again, {label}: {hit * 1e3:.3f}ms ({verdict}; first compile {miss * 1e3:.1f}ms)")


def warm_against(baseline: str, runs: int, rounds: int) -> None:
    """Warm compiles of this tree and of ``baseline``, each in its own process, alternately."""
    best: dict[str, dict[str, float]] = {}
    for _ in range(rounds):
        for label, path in (("now", None), ("baseline", baseline)):
            done = subprocess.run([sys.executable, __file__, "--warm-json", "--runs", str(runs)], capture_output=True,
                                  text=True, check=True, env=_env(path), cwd=tempfile.gettempdir())  # fmt: skip
            figures = json.loads(done.stdout.strip().splitlines()[-1])
            mine = best.setdefault(label, {})
            for k, v in figures.items():
                mine[k] = min(mine.get(k, float("inf")), v)
    for key, cpu_key, name in (("warm_off", "cpu_off", "dumps off"), ("warm_on", "cpu_on", "dumps on ")):
        now, base = best["now"], best["baseline"]
        print(f"warm vs baseline {name}  wall {base[key] * 1e3:7.1f} -> {now[key] * 1e3:7.1f}ms ({now[key] / base[key]:.2f}x)"
              f"   CPU {base[cpu_key] * 1e3:7.1f} -> {now[cpu_key] * 1e3:7.1f}ms ({now[cpu_key] / base[cpu_key]:.2f}x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="warm compiles per setting")
    parser.add_argument("--procs", type=int, default=5, help="fresh processes per kind")
    parser.add_argument("--baseline", help="a source tree laid out as the installed package (pypto/ with dialects/, "
                        "ptoas/, tools/ inside) to compare with, e.g. an older commit's")  # fmt: skip
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="the time the warm figures are judged by: wall (default) or this process's CPU time "
                        "(steadier on a shared machine)")  # fmt: skip
    parser.add_argument("--warm-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.warm_json:
            warm(args.runs, Path(tmp), as_json=True)
            return
        whole_process(args.procs, Path(tmp), args.baseline, clock=args.clock)
        warm(args.runs, Path(tmp), clock=args.clock)
        if args.baseline:
            warm_against(args.baseline, args.runs, rounds=3)


if __name__ == "__main__":
    main()
