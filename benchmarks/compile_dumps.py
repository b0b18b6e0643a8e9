"""Benchmark: the cost of EXPLICIT pass dumps, and where compile time goes.

For the element-wise, softmax and matmul kernels, compile with
``dump_passes=EXPLICIT`` and with no dumps (best of N runs each) and print the
ratio (goal: <= 1.3x; the two are timed alternately), then the per-pass share of the ``passes`` stage from
the compile profiler (top passes). Not a timed test: it prints ratios.

    .venv/bin/python benchmarks/compile_dumps.py [--runs N] [--top K]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pypto.language as pl
from pypto.compile_profiling import CompileProfiler
from pypto.ir import PassDumpLevel, Program, compile

HEAD = "import pypto.language as pl\n\n\n@pl.program\nclass {name}:\n    @pl.function(type=pl.FunctionType.Orchestration)\n"

KERNELS: dict[str, str] = {
    "elementwise": """    def elementwise(self, a: pl.Tensor[[512, 128], pl.FP32], b: pl.Tensor[[512, 128], pl.FP32],
                    out: pl.Out[pl.Tensor[[512, 128], pl.FP32]]) -> pl.Tensor[[512, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                x = pl.load(a, [i * 128, 0], [128, 128])
                y = pl.load(b, [i * 128, 0], [128, 128])
                pl.store(pl.add(x, y), [i * 128, 0], out)
        return out
""",
    "softmax": """    def softmax(self, x: pl.Tensor[[64, 128], pl.FP32],
                out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                t = pl.load(x, [i * 16, 0], [16, 128])
                tmp = pl.create_tile([16, 128], dtype=pl.FP32)
                mx = pl.row_max(t, tmp)
                e = pl.exp(pl.row_expand_sub(t, mx))
                s = pl.row_sum(e, tmp)
                pl.store(pl.row_expand_div(e, s), [i * 16, 0], out)
        return out
""",
    "matmul": """    def matmul(self, a: pl.Tensor[[128, 128], pl.FP16], b: pl.Tensor[[128, 128], pl.FP16],
               c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:] = pl.matmul(a, b, out_dtype=pl.FP32)
        return c
""",
}


def load_kernel(name: str, directory: Path) -> Program:
    path = directory / f"{name}.py"
    path.write_text(HEAD.format(name=name) + KERNELS[name])
    return pl.loads(path)


def best_times(program: Program, levels: list[PassDumpLevel], runs: int, directory: Path) -> list[float]:
    """Fastest compile of each level, the levels interleaved run by run (machine noise hits all alike)."""
    best = [float("inf")] * len(levels)
    for i in range(runs):
        for k, level in enumerate(levels):
            out = directory / f"{level.name}_{i}"
            start = time.perf_counter()
            compile(program, output_dir=out, dump_passes=level)
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def pass_shares(program: Program, directory: Path) -> list[tuple[str, float]]:
    with CompileProfiler() as prof:
        compile(program, output_dir=directory / "profiled", dump_passes=False)
    passes = next(s for s in prof.stages if s.name == "passes")
    return [(c.name, c.seconds / passes.seconds) for c in passes.children]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--top", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in KERNELS:
            d = root / name
            d.mkdir()
            program = load_kernel(name, d)
            compile(program, output_dir=d / "warm", dump_passes=PassDumpLevel.EXPLICIT)  # warm-up
            base, explicit = best_times(program, [PassDumpLevel.NONE, PassDumpLevel.EXPLICIT], args.runs, d)
            ratio = explicit / base
            verdict = "ok" if ratio <= 1.3 else "ABOVE GOAL"
            print(
                f"{name:<12} no dumps {base * 1e3:8.1f}ms  EXPLICIT {explicit * 1e3:8.1f}ms  ratio {ratio:5.2f}x  ({verdict})"
            )
            shares = sorted(pass_shares(program, d), key=lambda s: -s[1])[: args.top]
            print("             top passes: " + ", ".join(f"{n} {100 * s:.1f}%" for n, s in shares))


if __name__ == "__main__":
    main()
