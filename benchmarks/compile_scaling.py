"""Compile time against program size: a kernel with N independent tile ops, N = 50, 100, 200, 400.

Two shapes of the same work: ``straight`` (N load/add/store chains written out one after the other)
and ``unrolled`` (one chain in a ``pl.unroll(N)`` loop, unrolled by the pipeline). Each size is compiled
with the compile profiler on (no dumps), best of ``--runs`` (the sizes compiled in turn, so machine noise
hits all alike; each stage's figure is its own best over the runs), and the benchmark prints the whole
compile's CPU time and its growth per doubling of N,
then every stage (each pass, the printers, codegen, ptoas) whose growth per doubling is above the goal
(2.2x) at the largest doubling, or the top stages with ``--all``. Not a timed test: it prints ratios.

    .venv/bin/python benchmarks/compile_scaling.py [--runs N] [--sizes 50,100,200,400] [--all] [--profile]

``--profile`` also profiles one compile at each of the two largest sizes (cProfile) and prints the functions whose
own time grows most beyond linear (one compile each: a collection can land in any of them).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pypto.language as pl
from pypto.compile_profiling import CompileProfiler, Stage
from pypto.ir import Program, compile

GOAL = 2.2
SIZES = (50, 100, 200, 400)
TILE = 16

HEAD = (
    "import pypto.language as pl\n\n\n@pl.program\nclass Scale{n}:\n"
    "    @pl.function(type=pl.FunctionType.Orchestration)\n"
    "    def scale(self, a: pl.Tensor[[{rows}, {t}], pl.FP32], out: pl.Out[pl.Tensor[[{rows}, {t}], pl.FP32]])"
    " -> pl.Tensor[[{rows}, {t}], pl.FP32]:\n"
    "        with pl.at(level=pl.Level.CORE_GROUP):\n"
)


def straight_source(n: int) -> str:
    """N independent load/add/store chains, each on its own rows of ``a`` and ``out``."""
    body = "".join(
        f"            x{i} = pl.load(a, [{i * TILE}, 0], [{TILE}, {TILE}])\n"
        f"            pl.store(pl.add(x{i}, x{i}), [{i * TILE}, 0], out)\n"
        for i in range(n)
    )
    return HEAD.format(n=n, rows=n * TILE, t=TILE) + body + "        return out\n"


def unrolled_source(n: int) -> str:
    """The same N chains as one loop body in ``pl.unroll(N)``."""
    body = (
        f"            for i in pl.unroll({n}):\n"
        f"                x = pl.load(a, [i * {TILE}, 0], [{TILE}, {TILE}])\n"
        f"                pl.store(pl.add(x, x), [i * {TILE}, 0], out)\n"
    )
    return HEAD.format(n=n, rows=n * TILE, t=TILE) + body + "        return out\n"


SHAPES = {"straight": straight_source, "unrolled": unrolled_source}


def load(source: str, path: Path) -> Program:
    path.write_text(source)
    return pl.loads(path)


def flatten(stages: list[Stage], prefix: str = "") -> dict[str, float]:
    """Seconds per stage path (``passes/InsertSync``); a name seen twice under one parent is summed."""
    out: dict[str, float] = {}
    for s in stages:
        key = f"{prefix}{s.name}"
        out[key] = out.get(key, 0.0) + s.seconds
        for k, v in flatten(s.children, key + "/").items():
            out[k] = out.get(k, 0.0) + v
    return out


def measure(programs: dict[int, Program], runs: int, root: Path) -> dict[int, tuple[float, dict[str, float]]]:
    """(best total CPU seconds, each stage's best seconds over the runs) per size. The total is the
    process's CPU time (a shared machine's load does not count); the stages are the profiler's wall
    times, each the least of the runs (a load spike or a collector pause in one run does not show up
    as one pass's growth)."""
    best: dict[int, tuple[float, dict[str, float]]] = {n: (float("inf"), {}) for n in programs}
    for r in range(runs):
        for n, program in programs.items():
            start = time.process_time()
            with CompileProfiler() as prof:
                compile(program, output_dir=root / f"n{n}_r{r}", dump_passes=False)
            total = time.process_time() - start
            stages = best[n][1]
            for key, seconds in flatten(prof.stages).items():
                stages[key] = min(stages.get(key, float("inf")), seconds)
            best[n] = (min(best[n][0], total), stages)
    return best


def growth(values: list[float]) -> list[float]:
    """Ratio of each value to the one before (a size's time over the half size's)."""
    return [b / a if a > 0 else float("inf") for a, b in zip(values, values[1:], strict=False)]


def print_growth_profile(programs: dict[int, Program], root: Path, top: int = 10) -> None:
    """cProfile one compile of each of two sizes (the second twice the first) and print the functions
    whose own time at the larger size exceeds twice their own time at the smaller one the most."""
    import cProfile
    import pstats

    own: dict[int, dict[tuple[str, int, str], float]] = {}
    for n, program in programs.items():
        prof = cProfile.Profile()
        prof.enable()
        compile(program, output_dir=root / f"n{n}", dump_passes=False)
        prof.disable()
        own[n] = {key: row[2] for key, row in pstats.Stats(prof).stats.items()}  # type: ignore[attr-defined]
    small, large = (own[n] for n in sorted(own))
    rows = sorted(((t - 2 * small.get(k, 0.0), k, small.get(k, 0.0), t) for k, t in large.items()), reverse=True)
    print(f"    own time beyond linear, N={min(own)} -> N={max(own)} (cProfile, one compile each):")
    for extra, (file, line, name), a, b in rows[:top]:
        where = f"{file.split('site-packages/')[-1].split(str(Path.cwd()) + '/')[-1]}:{line}({name})"
        print(f"      {extra * 1e3:7.1f}ms beyond  {a * 1e3:7.1f} -> {b * 1e3:7.1f}ms  {where}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--all", action="store_true", help="print the top stages, not only those over the goal")
    parser.add_argument("--min-ms", type=float, default=2.0, help="ignore stages under this at the largest size")
    parser.add_argument(
        "--profile", action="store_true", help="also profile one compile at the two largest sizes (cProfile): "
        "the functions whose own time grows most beyond linear"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for shape in args.shapes.split(","):
            make = SHAPES[shape]
            programs = {n: load(make(n), root / f"{shape}_{n}.py") for n in sizes}
            compile(programs[sizes[0]], output_dir=root / "warm", dump_passes=False)  # warm-up
            best = measure(programs, args.runs, root / shape)
            totals = [best[n][0] for n in sizes]
            g = growth(totals)
            worst = max(worst, g[-1])
            print(
                f"{shape:<9} "
                + "  ".join(f"N={n}: {t * 1e3:8.1f}ms" for n, t in zip(sizes, totals, strict=True))
                + "  per doubling: "
                + " ".join(f"{x:.2f}x" for x in g)
                + f"  ({'ok' if g[-1] <= GOAL else 'ABOVE GOAL'} at the largest)"
            )
            names = sorted({k for n in sizes for k in best[n][1]})
            rows = []
            for name in names:
                series = [best[n][1].get(name, 0.0) for n in sizes]
                if series[-1] * 1e3 < args.min_ms:
                    continue
                rows.append((name, series, growth(series)))
            rows.sort(key=lambda r: -r[2][-1])
            shown = rows if args.all else [r for r in rows if r[2][-1] > GOAL]
            for name, series, gs in shown[: 25 if args.all else None]:
                print(
                    f"    {name:<58} {series[-1] * 1e3:8.1f}ms at N={sizes[-1]}  per doubling: "
                    + " ".join(f"{x:.2f}x" for x in gs)
                )
            if not shown:
                print(f"    every stage over {args.min_ms} ms grows at most {GOAL}x per doubling")
            if args.profile:
                print_growth_profile({n: programs[n] for n in sizes[-2:]}, root / f"{shape}_profile")
    print(f"worst growth per doubling (largest sizes): {worst:.2f}x (goal <= {GOAL}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
