"""Hello world: add two 128x128 tensors on one core group.

Run with `make demo` (or `.venv/bin/python examples/hello_world.py`). It compiles
the kernel through the pass pipeline and prints where the artefacts went.
"""

from __future__ import annotations

from pathlib import Path

import torch

import pypto.language as pl


@pl.jit
def hello_world(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


def main() -> Path:
    a = torch.randn(128, 128)
    b = torch.randn(128, 128)
    out = torch.empty(128, 128)
    compiled = hello_world.compile(a, b, out)
    build = Path(compiled.output_dir)
    print(f"compiled {hello_world.__name__} -> {build}")
    dumps = build / "passes_dump"
    for f in sorted(dumps.iterdir()):
        print(f"  pass dump: {f}")
    return build


if __name__ == "__main__":
    main()
