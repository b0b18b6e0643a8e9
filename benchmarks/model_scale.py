"""Model scale and memory: compile and run every example case on the simulated chip, one process each.

For each ``Case`` of ``examples/`` (or those named with ``--case file.py::name``), a fresh child process
compiles it (dumps off) and runs it on the simulated chip (race detector on, as the examples run), and
reports: compile seconds, run seconds (the first run, which also parses the kernels' ``.pto``, and a
second), simulated instructions (the kernel runs' timing records, sync entries included), simulated
instructions per host second of the second run, and the child's peak RSS (``resource.getrusage``:
compiling and running twice, the interpreter and torch included).

The largest example is the case with the most simulated instructions; its line is repeated at the end
with the goals of issue 17: the run finishes within 60 s, and its instructions per host second.
Not a timed test: it prints figures.

    .venv/bin/python benchmarks/model_scale.py [--case examples/beginner/04_activation.py::gelu] [--json]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
RUN_GOAL_S = 60.0


def _load(path: Path) -> Any:
    sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"example_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def all_cases() -> list[str]:
    """``file::case`` of every example case (files that define ``CASES``)."""
    out = []
    for path in sorted(EXAMPLES.rglob("*.py")):
        if path.name.startswith("_") or "CASES" not in path.read_text(encoding="utf-8"):
            continue
        out.extend(f"{path.relative_to(ROOT)}::{c.name}" for c in _load(path).CASES)
    return out


def child(spec: str) -> dict[str, Any]:
    """Compile and run one case in this process; its figures."""
    import resource

    file, name = spec.split("::")
    module = _load(ROOT / file)
    harness = sys.modules["_harness"]
    case = next(c for c in module.CASES if c.name == name)
    args = case.inputs()
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        compiled = harness.compile_case(case, Path(tmp) / "build", dump_passes=False, inputs=args)
        t1 = time.perf_counter()
        compiled(*args)  # the first run also parses the kernels' .pto and builds the interpreter's plans
        t2 = time.perf_counter()
        compiled(*args)
        t3 = time.perf_counter()
    run = compiled.last_run
    instructions = sum(len(r.timeline.rows) for t in run.tasks for r in t.kernel_runs)
    return {
        "case": spec,
        "compile_s": t1 - t0,
        "run_s": t2 - t1,
        "warm_run_s": t3 - t2,
        "instructions": instructions,
        "cycles": run.total_cycles,
        "races": len(run.races),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def measure(spec: str) -> dict[str, Any]:
    """Run :func:`child` in a fresh interpreter (peak RSS is per process)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", spec], capture_output=True, text=True, cwd=ROOT, check=False
    )
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise SystemExit(f"{spec}: the child failed:\n{proc.stderr[-2000:]}")
    return json.loads(lines[-1])


def line(r: dict[str, Any]) -> str:
    return (
        f"{r['case']:<58} compile {r['compile_s']:6.2f}s  run {r['run_s']:6.2f}s (again {r['warm_run_s']:6.3f}s)  "
        f"{r['instructions']:7d} instr  {rate(r):9.0f} instr/s  peak RSS {r['peak_rss_mb']:5.0f} MB"
    )


def rate(r: dict[str, Any]) -> float:
    """Simulated instructions per host second of the second run (the first also parses the kernels)."""
    return r["instructions"] / r["warm_run_s"] if r["warm_run_s"] > 0 else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", action="append", help="file.py::case (default: every example case)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    opts = parser.parse_args()
    if opts.child:
        print(json.dumps(child(opts.child)))
        return 0
    results = []
    for spec in opts.case or all_cases():
        r = measure(spec)
        results.append(r)
        print(line(r), flush=True)
    largest = max(results, key=lambda r: r["instructions"])
    print(f"largest example (most simulated instructions): {largest['case']}")
    print(f"  simulated instructions per host second: {rate(largest):.0f} (second run)")
    verdict = "ok" if largest["run_s"] <= RUN_GOAL_S else "ABOVE GOAL"
    print(f"  run on the simulated chip: {largest['run_s']:.2f}s (goal <= {RUN_GOAL_S:.0f}s, {verdict})")
    print(f"  peak RSS compiling and running: {largest['peak_rss_mb']:.0f} MB")
    print(f"  max peak RSS of any case: {max(r['peak_rss_mb'] for r in results):.0f} MB")
    if opts.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
