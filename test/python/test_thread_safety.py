"""Kernels compiled and run from several threads at once: the first compile loads the passes, the codegen
and the op tables lazily, and a thread that comes second must see them whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

THREADS_CHILD = '''
import threading, traceback
import torch
import pypto.language as pl

@pl.jit
def kadd(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out

start = threading.Barrier(4)
errors = []

def work(i: int) -> None:
    try:
        n = 64 * (1 + i % 2)
        a, b, out = torch.full((n, 64), float(i)), torch.ones(n, 64), torch.zeros(n, 64)
        start.wait()
        for _ in range(2):
            kadd(a, b, out)
            if not torch.equal(out, a + b):
                errors.append(f"thread {i}: wrong numbers")
    except Exception as e:
        errors.append(f"thread {i}: {type(e).__name__}: {e}")

threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("ERRORS", errors)
'''


def test_first_compiles_in_four_threads_at_once(tmp_path: Path) -> None:
    """Four threads start their first ``@pl.jit`` call together in a fresh process: each compiles (two
    shapes) and gets the right numbers. The pass registry was marked loaded before its modules were
    imported, so the threads that came second failed with "unknown pass 'inline-functions'"."""
    script = tmp_path / "threads.py"
    script.write_text(THREADS_CHILD)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ERRORS []" in done.stdout, done.stdout[-3000:]
