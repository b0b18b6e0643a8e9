"""How pypto-ir-trace scales: time and HTML size for 15/30/60 passes at
1k/5k-line snapshots; the ratio of time at 2x input (goal <= 2.2x) and bytes of
HTML per byte of distinct input.

Run: ``.venv/bin/python benchmarks/ir_trace_scaling.py``
"""

from __future__ import annotations

import gc
import tempfile
import time
from pathlib import Path

from pypto.tools.ir_trace import diff, functions
from pypto.tools.ir_trace.discovery import discover
from pypto.tools.ir_trace.render import render_dump
from pypto.tools.ir_trace.synthetic import write_dump

PASSES = (15, 30, 60)
LINES = (1000, 5000)
GOAL = 2.2


def measure(root: Path, passes: int, lines: int, repeat: int = 3) -> tuple[float, int, int]:
    """Best CPU time (s, robust on a shared machine) of discover+render, HTML bytes, distinct input bytes."""
    dump_dir = write_dump(root / f"p{passes}_l{lines}", passes, lines)
    best = float("inf")
    html = ""
    for _ in range(repeat):
        for cached in (functions._chunk, functions._class_name, diff.char_spans, diff.py_op_name):
            cached.cache_clear()  # a fresh process each time, as on the command line
        gc.collect()
        start = time.process_time()
        dump = discover(dump_dir)
        html = render_dump(dump)
        best = min(best, time.process_time() - start)
    distinct = sum(len(t.encode()) for t in {s.text for s in dump.snapshots})
    return best, len(html.encode()), distinct


def main() -> int:
    results: dict[tuple[int, int], tuple[float, int, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for lines in LINES:
            for passes in PASSES:
                results[(passes, lines)] = r = measure(Path(tmp), passes, lines)
                print(
                    f"{passes:3d} passes x {lines:5d} lines: {r[0]:7.3f} s  html {r[1] / 1e6:7.2f} MB  "
                    f"html/input {r[1] / r[2]:.2f}"
                )
    worst = 0.0
    for lines in LINES:
        for small, big in zip(PASSES, PASSES[1:], strict=False):
            ratio = results[(big, lines)][0] / results[(small, lines)][0]
            worst = max(worst, ratio)
            print(f"time ratio {small}->{big} passes at {lines} lines: {ratio:.2f}x")
    for passes in PASSES:
        ratio = results[(passes, 5000)][0] / results[(passes, 1000)][0]
        print(f"time ratio 1k->5k lines at {passes} passes (5x input): {ratio:.2f}x")
    print(f"worst time ratio at 2x input: {worst:.2f}x (goal <= {GOAL}x): {'ok' if worst <= GOAL else 'MISSED'}")
    return 0 if worst <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
