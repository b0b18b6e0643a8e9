"""Generated ``pl`` programs through every level (issue 16, "Fuzzing"; a first slice).

A hypothesis strategy writes element-wise chains (add/sub/mul/exp/relu over
the inputs and earlier values) on random on-chip shapes; each program must
parse, round-trip through its DSL text, compile at every verification level
with no internal error, pass ``validate_ir`` against torch at every dump, and
run on the simulated chip with the torch result. The seed is fixed
(derandomized); ``PYPTO_FUZZ_EXAMPLES`` sets how many (default 12, the CI budget
on 2 cores). Reductions, matmuls, loops, ``pl.pipeline`` and mixed kernels are
not generated yet.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")
import torch  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import pypto.ir as ir  # noqa: E402
import pypto.language as pl  # noqa: E402
from pypto.errors import InternalError  # noqa: E402
from pypto.runtime import run  # noqa: E402

EXAMPLES = int(os.environ.get("PYPTO_FUZZ_EXAMPLES", "12"))
BINARY = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}
UNARY = {"exp": torch.exp, "relu": torch.relu}


@dataclass(frozen=True)
class Chain:
    """One generated program: shape and steps ``(op, operand indices)`` over
    the values ``a, b, t0, t1, ...``."""

    rows: int
    cols: int
    steps: tuple[tuple[str, tuple[int, ...]], ...]

    def names(self) -> list[str]:
        return ["a", "b"] + [f"t{i}" for i in range(len(self.steps))]

    def source(self) -> str:
        shape = f"[[{self.rows}, {self.cols}], pl.FP32]"
        lines = [
            "import pypto.language as pl",
            "",
            "",
            "@pl.program",
            "class Fuzz:",
            "    @pl.function(type=pl.FunctionType.Orchestration)",
            f"    def f(self, a: pl.Tensor{shape}, b: pl.Tensor{shape}, out: pl.Out[pl.Tensor{shape}])"
            f" -> pl.Tensor{shape}:",
            "        with pl.at(level=pl.Level.CORE_GROUP):",
        ]
        names = self.names()
        for i, (op, args) in enumerate(self.steps):
            lines.append(f"            t{i} = pl.{op}({', '.join(names[j] for j in args)})")
        lines += [f"            out[:] = {names[-1]}", "        return out", ""]
        return "\n".join(lines)

    def reference(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        values = [a, b]
        for op, args in self.steps:
            fn = BINARY.get(op) or UNARY[op]
            values.append(fn(*(values[j] for j in args)))
        return values[-1]


@st.composite
def chains(draw: st.DrawFn) -> Chain:
    rows = draw(st.sampled_from([8, 16, 32, 64]))
    cols = draw(st.sampled_from([16, 32, 64, 128]))
    steps: list[tuple[str, tuple[int, ...]]] = []
    for i in range(draw(st.integers(1, 5))):
        available = 2 + i
        last = available - 1  # every step uses the previous value: one chain, nothing dead
        if draw(st.booleans()):
            op = draw(st.sampled_from(sorted(BINARY)))
            steps.append((op, (last, draw(st.integers(0, last)))))
        else:
            op = draw(st.sampled_from(sorted(UNARY)))
            steps.append((op, (last,)))
    return Chain(rows, cols, tuple(steps))


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(chain=chains())
def test_generated_chain_through_every_level(chain: Chain, tmp_path_factory: pytest.TempPathFactory) -> None:
    root = tmp_path_factory.mktemp("fuzz")
    src = root / "fuzz.py"
    src.write_text(chain.source())
    program = pl.loads(src)
    assert pl.parse(program.as_python()).as_python() == program.as_python()  # the DSL text round-trips
    gen = torch.Generator().manual_seed(0)
    a = torch.rand(chain.rows, chain.cols, generator=gen) - 0.5
    b = torch.rand(chain.rows, chain.cols, generator=gen) - 0.5
    want = chain.reference(a, b)
    for level in ("none", "basic", "roundtrip"):
        try:
            compiled = ir.compile(program, output_dir=root / level, verification_level=level)
        except InternalError as e:  # pragma: no cover - what the fuzzer is for
            pytest.fail(f"internal error at level {level} for\n{chain.source()}\n{e}")
    compiled.validate_ir({"a": a, "b": b, "out": torch.zeros_like(a)}, {"out": want})
    out = torch.zeros_like(a)
    run(compiled, a, b, out)
    torch.testing.assert_close(out, want, rtol=2e-2, atol=2e-2)


def test_strategy_source_parses(tmp_path: Path) -> None:
    chain = Chain(16, 32, (("add", (0, 1)), ("exp", (2,)), ("mul", (3, 0))))
    path = tmp_path / "c.py"
    path.write_text(chain.source())
    assert "t2 = pl.mul(t1, a)" in chain.source() and pl.loads(path).as_python()
    a, b = torch.ones(16, 32), torch.zeros(16, 32)
    assert torch.allclose(chain.reference(a, b), torch.exp(a + b) * a)
