"""Generated ``pl`` programs through every level (issue 16, "Fuzzing").

The strategy (:mod:`fuzz_programs`) writes element-wise chains, row / column reductions, cube
matmuls, mixed cube -> vector kernels, ``pl.range`` and ``pl.pipeline`` loops over row tiles, on
random on-chip shapes in FP32 / FP16 / BF16, as DSL source text. Each program must:

- parse, and round-trip through both text forms (the DSL text and the MLIR text);
- compile at every verification level (none, basic, roundtrip) with no internal error, each level
  giving the same lowered program;
- pass ``validate_ir`` against the torch reference at every pass dump;
- run on the simulated chip with no sync race and the reference's numbers.

The seed is fixed (derandomized); ``PYPTO_FUZZ_EXAMPLES`` sets how many programs (default 500),
``PYPTO_FUZZ_SEED=N`` explores other programs (hypothesis seeded with N).
Failures the fuzzer found are kept below as named regression tests (docs/reliability.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")
import torch  # noqa: E402
from fuzz_programs import Kernel, Step, kernels  # noqa: E402
from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

import pypto.ir as ir  # noqa: E402
import pypto.language as pl  # noqa: E402
from pypto.core.mlir_text import parse_mlir, print_mlir  # noqa: E402
from pypto.errors import InternalError  # noqa: E402
from pypto.runtime import RunConfig, run  # noqa: E402

EXAMPLES = int(os.environ.get("PYPTO_FUZZ_EXAMPLES", "500"))
SEED = os.environ.get("PYPTO_FUZZ_SEED")  # another fixed seed explores other programs (default: derandomized)
LEVELS = ("none", "basic", "roundtrip")


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread() -> Iterator[None]:
    """Tiny matmuls on one thread: torch's thread pool spun for 40 ms a call on a loaded 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def check_program(kernel: Kernel, root: Path) -> None:
    """Every check of the module docstring on one generated program."""
    source = kernel.source()
    src = root / "fuzz.py"
    src.write_text(source)
    program = pl.loads(src)
    text = program.as_python()
    assert pl.parse(text).as_python() == text, f"the DSL text does not round-trip:\n{source}"
    mlir = program.as_mlir()
    assert print_mlir(parse_mlir(mlir, str(src))) == mlir, f"the MLIR text does not round-trip:\n{source}"
    lowered: dict[str, str] = {}
    compiled = None
    for level in LEVELS:
        full = level == "roundtrip"  # dumps (for validate_ir) and ptoas once; the passes at every level
        try:
            compiled = ir.compile(
                program, output_dir=root / level, verification_level=level, dump_passes=full, skip_ptoas=not full
            )
        except InternalError as e:  # pragma: no cover - what the fuzzer is for
            pytest.fail(f"internal error at level {level} for\n{source}\n{e}")
        lowered[level] = compiled.lowered.as_python()
    assert lowered["none"] == lowered["basic"] == lowered["roundtrip"], f"the levels lower differently:\n{source}"
    assert compiled is not None
    inputs = kernel.inputs()
    want = kernel.reference(inputs)
    tol = kernel.tolerance()
    compiled.validate_ir(inputs, {"out": want}, rtol=tol, atol=tol)
    args = {k: v.clone() for k, v in inputs.items()}
    result = run(compiled, *args.values(), config=RunConfig(platform=compiled.platform))
    assert not result.races, f"sync races {result.race_messages()} in\n{source}"
    torch.testing.assert_close(args["out"], want, rtol=tol, atol=tol, msg=lambda m: f"{m}\nfor\n{source}")


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(kernel=kernels())
def test_generated_program_through_every_level(kernel: Kernel, tmp_path_factory: pytest.TempPathFactory) -> None:
    check_program(kernel, tmp_path_factory.mktemp("fuzz"))


@settings(max_examples=max(1, EXAMPLES // 8), derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(kernel=kernels(starts=("premix",)))
def test_generated_vector_to_cube_program(kernel: Kernel, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Vector work feeding the cube (``premix``: the chain's result moved to Mat as the matmul's left operand)."""
    check_program(kernel, tmp_path_factory.mktemp("fuzz"))


# (Its own test: the derandomized sequence above is a digest of that test's source, decorators included.)
@pytest.mark.skipif(SEED is None, reason="set PYPTO_FUZZ_SEED=N to explore other programs")
@seed(int(SEED or 0))
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(kernel=kernels())
def test_generated_program_at_another_seed(kernel: Kernel, tmp_path_factory: pytest.TempPathFactory) -> None:
    check_program(kernel, tmp_path_factory.mktemp("fuzz"))


def test_strategy_covers_every_kind() -> None:
    """The strategy reaches every start, dtype, loop and step kind (a narrowed strategy fails here)."""
    from hypothesis import find

    for want in (
        lambda k: k.start == "cube",
        lambda k: k.start == "mixed",
        lambda k: k.start == "mixed" and k.dtype == "BF16",
        lambda k: k.loop == "pipeline" and k.dtype == "FP16",
        lambda k: any(s.kind == "row" for s in k.steps),
        lambda k: any(s.kind == "col" for s in k.steps),
        lambda k: any(s.kind == "scalar" for s in k.steps) and k.loop == "range",
        lambda k: any(s.kind == "binary" and s.args[1] == -1 for s in k.steps),
    ):
        assert want(find(kernels(), want, settings=settings(database=None, derandomize=True)))


def test_source_and_reference_agree_on_a_known_program(tmp_path: Path) -> None:
    k = Kernel("vector", "FP32", 8, 16, 0, 2, "range", (Step("binary", "add", (0, -1)), Step("row", "row_max,row_expand_sub", (1, 1))))
    text = k.source()
    assert "for i in pl.range(2):" in text and "r2 = pl.row_max(v1, s2)" in text and "v2 = pl.row_expand_sub(v1, r2)" in text
    (tmp_path / "k.py").write_text(text)
    assert pl.loads(tmp_path / "k.py").as_python()
    x = k.inputs()
    s = x["a"] + x["b"]
    want = torch.cat([t - t.amax(dim=1, keepdim=True) for t in s.split(8)])
    assert torch.equal(k.reference(x), want)


# ---- what the fuzzer found, minimised by hypothesis (docs/reliability.md) ----

REGRESSIONS = {
    # ptoas codegen read col_max's absent scratch operand (IndexError, "codegen failed"), and the C++
    # emitter's isinstance on the subscripted BoolAttr raised TypeError for every tcolsum.
    "col_max_without_scratch": Kernel("vector", "BF16", 8, 16, 0, 1, "none", (Step("col", "col_max,col_expand_mul", (0, 0)),)),
    "col_sum_without_scratch": Kernel("vector", "FP32", 8, 16, 0, 1, "none", (Step("col", "col_sum,col_expand_mul", (0, 0)),)),
    # An Orchestration parameter no kernel reads (b) shifted the kernels' DDR numbering against the
    # caller's; InitMemRef's call reconciliation renamed a call result to a callee-side name that
    # named another buffer in the caller, merging w and out (VerificationError after InitMemRef).
    "unused_param_vector_to_cube": Kernel("premix", "BF16", 16, 16, 16, 1, "none", (Step("binary", "add", (0, 0)),)),
}


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_fuzzer_regression(name: str, tmp_path: Path) -> None:
    check_program(REGRESSIONS[name], tmp_path)
