"""How pypto-ir-trace scales: time and HTML size for 15/30/60 passes at
1k/5k-line snapshots (best CPU time of 5 rounds, the sizes run in turn); the ratio
of time at 2x input (goal <= 2.2x) and bytes of HTML per byte of distinct input;
and the report's bytes on upstream's add-kernel dump against upstream's own report
(2.2 MB; goal <= 0.1x, syntax highlighting included).

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
UPSTREAM_ADD = Path("/work/shared/reference/upstream-builds/add/passes_dump")
UPSTREAM_ADD_REPORT_BYTES = 2_200_000  # upstream's ir-trace report on the same dumps (issue 13)
SIZE_GOAL = 0.1


def render_once(dump_dir: Path) -> tuple[float, str, object]:
    """CPU seconds of one discover+render of ``dump_dir`` (caches cleared: a fresh process, as on the
    command line), the HTML and the dump."""
    for cached in (functions._chunk, functions._class_name, diff.char_spans, diff.py_op_name):
        cached.cache_clear()
    gc.collect()
    start = time.process_time()
    dump = discover(dump_dir)
    html = render_dump(dump)
    return time.process_time() - start, html, dump


def measure_all(root: Path, repeat: int = 5) -> dict[tuple[int, int], tuple[float, int, int]]:
    """(best CPU time, HTML bytes, distinct input bytes) per (passes, lines); the configurations are run
    in turn, ``repeat`` rounds, so machine noise hits every size alike."""
    dirs = {(p, n): write_dump(root / f"p{p}_l{n}", p, n) for n in LINES for p in PASSES}
    best = dict.fromkeys(dirs, float("inf"))
    sizes: dict[tuple[int, int], tuple[int, int]] = {}
    for _ in range(repeat):
        for key, dump_dir in dirs.items():
            seconds, html, dump = render_once(dump_dir)
            best[key] = min(best[key], seconds)
            distinct = sum(len(t.encode()) for t in {s.text for s in dump.snapshots})  # type: ignore[attr-defined]
            sizes[key] = (len(html.encode()), distinct)
    return {k: (best[k], *sizes[k]) for k in dirs}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        results = measure_all(Path(tmp))
    for lines in LINES:
        for passes in PASSES:
            r = results[(passes, lines)]
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
    size_ok = True
    if UPSTREAM_ADD.is_dir():
        size = len(render_dump(discover(UPSTREAM_ADD)).encode())
        ratio = size / UPSTREAM_ADD_REPORT_BYTES
        size_ok = ratio <= SIZE_GOAL
        print(
            f"add kernel report: {size} bytes, {ratio:.3f}x upstream's {UPSTREAM_ADD_REPORT_BYTES} "
            f"(goal <= {SIZE_GOAL}x): {'ok' if size_ok else 'MISSED'}"
        )
    return 0 if worst <= GOAL and size_ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
