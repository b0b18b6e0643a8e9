"""Synthetic pass dumps for benchmarks and tests: a program of many small
functions, each pass editing a few of them (deterministic)."""

from __future__ import annotations

import os
import random
from pathlib import Path

_FUNC_LINES = 50


def _function(k: int, body: int) -> list[str]:
    lines = [
        "    @pl.function(type=pl.FunctionType.InCore)",
        f"    def kernel_{k}(self, a: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]):",
    ]
    lines += [f"        t{k}_{i}: pl.Tile[[16, 128], pl.FP32] = pl.tile.add(t{k}_{i - 1}, a)" for i in range(body)]
    return [*lines, "        return out"]


def snapshots(passes: int, lines: int, seed: int = 0) -> list[str]:
    """``passes + 1`` snapshot texts of about ``lines`` lines each."""
    rng = random.Random(seed)
    nfuncs = max(1, lines // _FUNC_LINES)
    funcs = [_function(k, _FUNC_LINES - 3) for k in range(nfuncs)]
    head = ["# pypto.program: synthetic", "import pypto.language as pl", "", "@pl.program", "class synthetic:"]
    out = ["\n".join(head + [x for f in funcs for x in f]) + "\n"]
    for step in range(1, passes + 1):
        if step % 3 != 0:  # two passes in three change something
            for _ in range(3):
                f = funcs[rng.randrange(nfuncs)]
                i = rng.randrange(2, len(f) - 1)
                choice = rng.randrange(4)
                if choice == 0:
                    f[i] = f[i].replace("pl.tile.add", "pl.tile.mul")
                elif choice == 1:
                    f.insert(i, f"        s{step}_{i}: pl.Scalar[pl.INDEX] = pl.tile.get_block_idx()")
                elif choice == 2 and len(f) > 4:
                    del f[i]
                else:
                    f[i] = f[i].replace(", a)", ", a__ssa_v0)")
        out.append("\n".join(head + [x for f in funcs for x in f]) + "\n")
    return out


def write_dump(directory: str | os.PathLike[str], passes: int, lines: int, seed: int = 0) -> Path:
    """Write a synthetic ``passes_dump`` with ``passes`` passes into ``directory``."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for k, text in enumerate(snapshots(passes, lines, seed)):
        name = "00_frontend.py" if k == 0 else f"{k:02d}_after_Synthetic{k}.py"
        (path / name).write_text(text, encoding="utf-8")
    return path
