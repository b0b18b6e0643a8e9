"""Hello world: ``out = a + b`` on one core group (128x128, tensor level).

The kernel is the one ``make demo`` compiles (``examples/hello_world.py``); this
file wraps it as an example case.

Run:  .venv/bin/python examples/beginner/01_hello_world.py
Next: examples/beginner/02_elementwise.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402
from hello_world import hello_world  # noqa: E402


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)


def reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"out": a + b}


CASES = [Case("hello_world", hello_world, make_inputs, reference, outputs=("out",))]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
