"""The compiled-C++ kernel engine (``RunConfig(kernel_engine="cpp" | "both")``) on real builds from ``examples/``.

Each test compiles an example case into its own directory, so an edit to a ``kernels/*.cpp`` stays in
that test; the g++ builds land in ``<work_dir>/cache/kernels/``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from pypto.runtime import InputWrittenError, RunConfig, run
from pypto.runtime.cpp_engine import CACHE_DIR, KernelBuildError, KernelEngineError, compare

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))
from _harness import Case, compile_case  # noqa: E402

ADD = ("beginner/02_elementwise.py", "chunked_add")
MATMUL = ("beginner/05_matmul.py", "matmul_64")
MIXED = ("advanced/03_mixed_kernel.py", "matmul_bias_epilogue")


def _case(where: tuple[str, str]) -> Case:
    path = ROOT / "examples" / where[0]
    spec = importlib.util.spec_from_file_location(f"kernel_engine_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return next(c for c in module.CASES if c.name == where[1])


def _build(where: tuple[str, str], out: Path) -> tuple[Case, Any]:
    case = _case(where)
    return case, compile_case(case, out, dump_passes=False)


def _run(case: Case, compiled: Any, **config: Any) -> tuple[Any, tuple[torch.Tensor, ...]]:
    args = case.inputs()
    return run(compiled, *args, config=RunConfig(**config)), args


def _output(case: Case, args: tuple[torch.Tensor, ...], name: str | None = None) -> torch.Tensor:
    return args[case.param_names.index(name or case.outputs[0])]


def _kernel_cpp(compiled: Any) -> Path:
    (path,) = sorted(Path(compiled.output_dir).glob("kernels/*/*.cpp"))
    return path


def _libraries(compiled: Any) -> list[Path]:
    return sorted((Path(compiled.output_dir) / CACHE_DIR).glob("*.so"))


@pytest.fixture(scope="module")
def add_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Case, Any]:
    """chunked_add (the largest example) compiled once, never edited."""
    return _build(ADD, tmp_path_factory.mktemp("engine-add") / "build")


def test_config_validates_the_engine() -> None:
    assert RunConfig().kernel_engine == "interpreter" and RunConfig().recompile_kernels is True
    with pytest.raises(ValueError, match="kernel_engine takes one of 'interpreter', 'cpp', 'both', got 'gpu'"):
        RunConfig(kernel_engine="gpu")


def test_elementwise_cpp_is_identical_to_the_interpreter(add_build: tuple[Case, Any]) -> None:
    case, compiled = add_build
    ref, ref_args = _run(case, compiled)
    got, args = _run(case, compiled, kernel_engine="cpp")
    out = _output(case, args)
    assert torch.equal(out, _output(case, ref_args)), "fp32 results of the C++ engine differ from the interpreter's"
    assert torch.equal(out, case.expected(args)["c"])
    assert got.total_cycles == ref.total_cycles > 0  # cycles still come from the interpreter
    report = got.kernel_engine
    assert report is not None and report.engine == "cpp" and report.cpp_calls == len(got.tasks)
    assert ref.kernel_engine is None


def test_cache_location_and_timing_reuse(add_build: tuple[Case, Any]) -> None:
    case, compiled = add_build
    first, _ = _run(case, compiled, kernel_engine="cpp")
    second, args = _run(case, compiled, kernel_engine="cpp")
    cache = Path(compiled.output_dir) / "cache" / "kernels"
    (lib,) = _libraries(compiled)
    assert lib.parent == cache and lib.name.startswith("chunked_add_incore_0-")
    assert second.kernel_engine is not None and set(second.kernel_engine.libraries.values()) == {lib}
    # The second launch of the same signature takes its cycles from the first interpreter run.
    assert second.kernel_engine.interpreter_runs == 0 and second.kernel_engine.cpp_calls == 1
    assert second.total_cycles == first.total_cycles
    assert torch.equal(_output(case, args), case.expected(args)["c"])


def test_matmul_within_tolerance_and_both_reports_the_difference(tmp_path: Path) -> None:
    case, compiled = _build(MATMUL, tmp_path / "build")
    got, args = _run(case, compiled, kernel_engine="cpp")
    torch.testing.assert_close(_output(case, args), case.expected(args)["c"], rtol=case.rtol, atol=case.atol)
    both, args = _run(case, compiled, kernel_engine="both")
    report = both.kernel_engine
    assert report is not None and report.engine == "both"
    (diff,) = report.diffs
    assert diff.func_name == "matmul_64_incore_0" and diff.name == "c" and diff.numel == 64 * 64
    # fp32 sums, the interpreter's in BLAS's order: equal or within the case's tolerance.
    assert diff.max_abs < 1e-4 and diff.max_rel < 1e-2
    torch.testing.assert_close(_output(case, args), case.expected(args)["c"], rtol=case.rtol, atol=case.atol)
    # A C++ result one element off (an edit after the matmul) is listed and summarised.
    path = _kernel_cpp(compiled)
    text = path.read_text()
    call = re.search(r"TMATMUL\((v\d+), v\d+, v\d+\);", text)
    assert call is not None
    path.write_text(text.replace(call.group(0), f"{call.group(0)} {call.group(1)}.at(2, 3) += 0.5f;"))
    both, args = _run(case, compiled, kernel_engine="both")
    (diff,) = both.kernel_engine.diffs
    assert diff.differs and diff.mismatched == 1 and 0.4 < diff.max_abs < 0.6
    assert "differ" in both.kernel_engine.summary() and "'c'" in both.kernel_engine.summary()


def test_both_on_elementwise_finds_no_difference(add_build: tuple[Case, Any]) -> None:
    case, compiled = add_build
    both, _ = _run(case, compiled, kernel_engine="both")
    report = both.kernel_engine
    assert report is not None and report.diffs and not report.differing
    assert report.interpreter_runs == report.cpp_calls == 1
    assert "all 1 outputs identical" in report.summary()
    assert both.summary().endswith(report.summary())  # the run's summary carries the engine's lines


def test_mixed_kernel_pipes_through_the_cpp_engine(tmp_path: Path) -> None:
    case, compiled = _build(MIXED, tmp_path / "build")
    got, args = _run(case, compiled, kernel_engine="cpp")
    want = case.expected(args)
    for name in case.outputs:
        torch.testing.assert_close(_output(case, args, name), want[name], rtol=case.rtol, atol=case.atol)
    assert got.kernel_engine is not None and len(got.kernel_engine.libraries) == 2  # the aic and the aiv part


def test_edited_cpp_is_rebuilt_and_noted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case, compiled = _build(ADD, tmp_path / "build")
    _run(case, compiled, kernel_engine="cpp")
    (old,) = _libraries(compiled)
    cpp = _kernel_cpp(compiled)
    text = cpp.read_text()
    assert text.count("TADD(") == 1
    cpp.write_text(text.replace("TADD(", "TSUB("))

    got, args = _run(case, compiled, kernel_engine="both")
    (new,) = _libraries(compiled)  # rebuilt; the old build of the kernel is gone
    assert new != old and not old.exists()
    a, b = args[0], args[1]
    report = got.kernel_engine
    assert report is not None
    (diff,) = report.differing
    assert diff.name == "c" and diff.max_abs > 0.1
    # "both" keeps the interpreter's numbers (from the .pto): still a + b.
    assert torch.equal(_output(case, args), a + b)
    (note,) = report.notes
    assert "kernels/aiv/chunked_add_incore_0.cpp does not match ptoas/chunked_add_incore_0.pto" in note
    assert "cycles and DFX come from the .pto, which no longer matches the .cpp" in note
    assert note in capsys.readouterr().err

    got, args = _run(case, compiled, kernel_engine="cpp")  # the numbers come from the edited .cpp
    assert torch.equal(_output(case, args), args[0] - args[1])


def test_no_recompile_reuses_the_cached_binary(tmp_path: Path) -> None:
    case, compiled = _build(ADD, tmp_path / "build")
    _run(case, compiled, kernel_engine="cpp")
    (lib,) = _libraries(compiled)
    cpp = _kernel_cpp(compiled)
    cpp.write_text(cpp.read_text().replace("TADD(", "TSUB("))
    got, args = _run(case, compiled, kernel_engine="cpp", recompile_kernels=False)
    assert got.kernel_engine is not None and got.kernel_engine.libraries == {"chunked_add_incore_0": lib}
    assert _libraries(compiled) == [lib]
    assert torch.equal(_output(case, args), args[0] + args[1])  # the cached (unedited) kernel ran
    assert f"recompile_kernels=False: chunked_add_incore_0 runs the cached build {lib.name}" in "".join(
        got.kernel_engine.notes
    )


def test_compile_error_names_the_file_and_line_and_leaves_no_binary(tmp_path: Path) -> None:
    case, compiled = _build(ADD, tmp_path / "build")
    _run(case, compiled, kernel_engine="cpp")
    assert _libraries(compiled)
    cpp = _kernel_cpp(compiled)
    lines = cpp.read_text().splitlines()
    line = next(i for i, ln in enumerate(lines) if "TADD(" in ln)
    lines[line] = lines[line].replace("TADD(", "TADD_NO_SUCH_OP(")
    cpp.write_text("\n".join(lines) + "\n")
    with pytest.raises(KernelBuildError) as info:
        _run(case, compiled, kernel_engine="cpp")
    message = str(info.value)
    first = message.splitlines()[0]
    assert re.match(rf"{re.escape(str(cpp))}:{line + 1}:\d+: error: .*TADD_NO_SUCH_OP", first), first
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chained traceback
    assert _libraries(compiled) == []  # nothing stale: no binary of that kernel stays in the cache
    assert not any(p.name.startswith(".") for p in (Path(compiled.output_dir) / CACHE_DIR).iterdir())


def test_missing_compiler_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pypto.ptoas.build as build

    case, compiled = _build(ADD, tmp_path / "build")
    monkeypatch.setattr(build, "CXX", str(tmp_path / "no-such-g++"))
    with pytest.raises(
        KernelBuildError, match=r"cannot build .*chunked_add_incore_0\.cpp: .*not found \(install g\+\+"
    ):
        _run(case, compiled, kernel_engine="cpp")
    assert _libraries(compiled) == []


def test_a_program_without_build_directory_is_refused() -> None:
    import pypto.language as pl

    @pl.jit
    def tile_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.add(pl.load(a, [0, 0], [32, 32]), pl.load(b, [0, 0], [32, 32])), [0, 0], c)
        return c

    a, b, c = torch.randn(32, 32), torch.randn(32, 32), torch.zeros(32, 32)
    program = tile_add.lower(a, b, c)
    with pytest.raises(KernelEngineError, match="runs the build directory's kernels"):
        run(program, a, b, c, config=RunConfig(kernel_engine="cpp"))


def test_compare_counts_differences_nan_aware() -> None:
    import numpy as np

    x = np.array([1.0, np.nan, 3.0, 4.0], np.float32)
    y = np.array([1.0, np.nan, 3.5, np.nan], np.float32)
    max_abs, max_rel, bad = compare(x, y)
    assert bad == 2 and max_abs == float("inf") and max_rel == float("inf")
    assert compare(x, x.copy()) == (0.0, 0.0, 0)
    bf16 = np.array([0x3F80, 0x4000], np.uint16)  # 1.0, 2.0
    assert compare(bf16, np.array([0x3F80, 0x4040], np.uint16), "BF16") == (1.0, 0.5, 1)


@pytest.mark.usefixtures("own_dfx_flags")
def test_cpp_engine_keeps_the_interpreters_timeline_and_dfx(add_build: tuple[Case, Any]) -> None:
    case, compiled = add_build
    flags = {"enable_chip_swimlane": 2, "enable_pmu": 2}
    ref, _ = _run(case, compiled, **flags)
    got, args = _run(case, compiled, kernel_engine="cpp", **flags)
    assert torch.equal(_output(case, args), case.expected(args)["c"])
    assert got.swimlane_records(2) == ref.swimlane_records(2)
    assert [r.cycles for r in got.tasks] == [r.cycles for r in ref.tasks]
    assert sorted(got.dfx_outputs) == sorted(ref.dfx_outputs) and got.dfx_outputs
    assert all(p.is_file() for paths in got.dfx_outputs.values() for p in paths)


def test_a_failing_compiled_kernel_names_the_task_and_the_check(tmp_path: Path) -> None:
    case, compiled = _build(ADD, tmp_path / "build")
    cpp = _kernel_cpp(compiled)
    cpp.write_text(cpp.read_text().replace("TADD(", "wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID7); TADD(", 1))
    with pytest.raises(KernelEngineError) as info:
        _run(case, compiled, kernel_engine="cpp")
    message = str(info.value)
    assert message.startswith("task t0 (@chunked_add_incore_0): ") and str(cpp) in message
    assert "the compiled kernel stopped" in message and "without a matching set_flag" in message


@pytest.mark.parametrize("name", ["spmd_scale_add", "spmd_loop_add"])
def test_spmd_blocks_run_as_their_own_block_in_cpp(tmp_path: Path, name: str) -> None:
    """Each SPMD block calls the C++ with its own index: every block writes its own rows, so a block
    index lost on the way (all blocks as block 0) leaves rows unwritten and the output wrong."""
    case, compiled = _build(("advanced/09_spmd.py", name), tmp_path / "build")
    both, args = _run(case, compiled, kernel_engine="both")
    want = case.expected(args)
    for out in case.outputs:
        torch.testing.assert_close(_output(case, args, out), want[out], rtol=case.rtol, atol=case.atol)
    report = both.kernel_engine
    assert report is not None and report.diffs, "no output compared"
    for diff in report.diffs:  # vector blocks bit-identical; the cube's fp32 sums only in the last bits
        limit = 1e-4 if "matmul" in diff.func_name else 0.0
        assert diff.max_abs <= limit, report.summary()
    assert report.cpp_calls == sum(len(t.blocks) or 1 for t in both.tasks) > len(both.tasks)


def test_in_arguments_checked_once_per_kernel_signature(tmp_path: Path) -> None:
    """With "cpp", the first launch of a kernel signature compares its In arguments; later launches
    skip the O(input) copy unless ``check_inputs=True``; ``"both"`` always checks."""
    case, compiled = _build(ADD, tmp_path / "build")
    checks = []
    for config in ({}, {}, {"check_inputs": True}, {"check_inputs": False}, {"kernel_engine": "both"}):
        got, args = _run(case, compiled, **{"kernel_engine": "cpp", **config})
        assert torch.equal(_output(case, args), case.expected(args)["c"])
        assert got.kernel_engine is not None
        checks.append(got.kernel_engine.input_checks)
    assert checks == [1, 0, 1, 0, 1]
    assert "1 In-argument check(s)" in got.kernel_engine.summary()


def test_a_cpp_kernel_writing_an_in_argument_is_caught_until_fixed(tmp_path: Path) -> None:
    """A .cpp edited to store into its In argument ``a``: every launch raises (a failed check does not
    mark the signature checked); ``check_inputs=False`` lets it through (``c`` is then never written; an
    In argument is not copied back to the caller's tensor)."""
    case, compiled = _build(ADD, tmp_path / "build")
    cpp = _kernel_cpp(compiled)
    text = cpp.read_text()
    store = re.search(r"GlobalTensor<[^;]*>\(v3 \+", text)
    assert store is not None
    cpp.write_text(text[: store.end() - 4] + "v1 +" + text[store.end() :])
    for _ in range(2):
        with pytest.raises(InputWrittenError, match=r"t0 \(chunked_add_incore_0\) wrote its In argument #0 \('a'\)"):
            _run(case, compiled, kernel_engine="cpp")
    _, args = _run(case, compiled, kernel_engine="cpp", check_inputs=False)
    assert not _output(case, args).any()  # the store went to 'a': nothing compared, nothing raised


def test_check_inputs_false_skips_the_check_with_the_interpreter_too(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="check_inputs takes None, True or False, got 'yes'"):
        RunConfig(check_inputs="yes")  # type: ignore[arg-type]
    assert RunConfig().check_inputs is None


def fma32(x: Any, y: Any, acc: Any) -> Any:
    """``x * y + acc`` rounded once to float32 (a fused multiply-add), element-wise on float32 arrays, exactly.

    The product of two floats is exact in float64 and so is the rounding error ``e`` of the float64 sum
    ``s = p + acc`` (TwoSum), so ``p + acc == s + e``. Rounding ``s`` to float32 gives the correctly rounded
    result unless ``s`` lies exactly halfway between two floats while ``e != 0`` (float64's rounding then
    made the tie, a double rounding): then the float on ``e``'s side is the answer."""
    import numpy as np

    p = x.astype(np.float64) * y.astype(np.float64)
    c = acc.astype(np.float64)
    s = p + c
    b = s - p
    e = (p - (s - b)) + (c - b)
    r = s.astype(np.float32)
    other = np.nextafter(r, np.where(s > r, np.float32(np.inf), np.float32(-np.inf))).astype(np.float32)
    tie = (s != r) & (s == (r.astype(np.float64) + other.astype(np.float64)) / 2) & (e != 0)
    toward_other = (e > 0) == (other > r)
    return np.where(tie & toward_other, other, r).astype(np.float32)


def fused_matmul(a: Any, b: Any, init: Any) -> Any:
    """``init`` then one fused multiply-add ``a[:, p] * b[p, :]`` per p in k order, in float32 (the header's
    matmul on fp32 tiles)."""
    want = init.copy()
    for p in range(a.shape[1]):
        want = fma32(a[:, p : p + 1], b[p : p + 1, :], want)
    return want


def test_fma32_is_the_exactly_rounded_fused_multiply_add() -> None:
    """Against exact rational arithmetic, on random operands of mixed magnitudes and on products that put
    the float64 sum exactly halfway between two floats (where rounding twice would go the other way)."""
    from fractions import Fraction

    import numpy as np

    def exact(x: float, y: float, c: float) -> Any:
        v = Fraction(x) * Fraction(y) + Fraction(c)
        lo = np.float32(float(v))  # float64 rounds v once; search the floats around it for the nearest
        best = min(
            (np.nextafter(lo, np.float32(-np.inf)), lo, np.nextafter(lo, np.float32(np.inf))),
            key=lambda f: (abs(Fraction(float(f)) - v), int(np.float32(f).view(np.uint32)) & 1),
        )
        return np.float32(best)

    rng = np.random.default_rng(7)
    n = 3000
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    y = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    c = (rng.standard_normal(n) * np.exp2(rng.integers(-30, 30, n))).astype(np.float32)
    one, ulp = np.float32(1), np.float32(2**-23)
    # (1 + 2^-23) * 2^-24 (1 - 2^-23) + (1 + 2^-23) = 1 + 3 * 2^-24 - 2^-70: float64 rounds it to the halfway
    # point 1 + 3 * 2^-24, whose tie goes up to the even 1 + 2^-22; the fused result is 1 + 2^-23.
    tx = np.array([(one + ulp) * np.float32(2**-24), (one + ulp) * np.float32(2**-24)], np.float32)
    ty = np.array([one - ulp, -(one - ulp)], np.float32)
    tc = np.array([one + ulp, -(one + ulp)], np.float32)
    got = fma32(np.concatenate([x, tx]), np.concatenate([y, ty]), np.concatenate([c, tc]))
    want = np.array([exact(float(a), float(b), float(d)) for a, b, d in zip(x, y, c, strict=True)], np.float32)
    assert np.array_equal(got[:n].view(np.uint32), want.view(np.uint32))
    assert got[n] == one + ulp and got[n + 1] == -(one + ulp)
    naive = (tx.astype(np.float64) * ty + tc).astype(np.float32)  # rounded twice: the tie went to even
    assert naive[0] == one + 2 * ulp


def test_cpp_matmul_adds_the_products_in_k_order(tmp_path: Path) -> None:
    """The header's matmul gives each element exactly 0 then a[i,0]*b[0,j], a[i,1]*b[1,j], ... added in
    k order with one fused multiply-add (one rounding) each."""
    import numpy as np

    case, compiled = _build(MATMUL, tmp_path / "build")
    got, args = _run(case, compiled, kernel_engine="cpp")
    a, b = (t.numpy() for t in args[:2])
    want = fused_matmul(a, b, np.zeros((a.shape[0], b.shape[1]), np.float32))
    assert _output(case, args).numpy().view("uint32").tolist() == want.view("uint32").tolist()
    report = got.kernel_engine
    assert report is not None and report.cpp_cpu_seconds > 0 and report.interpreter_cpu_seconds > 0
    again, _ = _run(case, compiled, kernel_engine="cpp")  # timing reused: no interpreter run, no CPU time in it
    assert again.kernel_engine is not None and again.kernel_engine.interpreter_cpu_seconds == 0.0


def _device_run(where: tuple[str, str], out: Path) -> tuple[Case, Any, Any, list[Any], Any]:
    """A build on a ChipWorker: (case, compiled, worker, device tensors, registration)."""
    from pypto.runtime import ChipWorker

    case, compiled = _build(where, out)
    worker = ChipWorker()
    dev = [worker.alloc_tensor(t.shape, init=t) for t in case.inputs()]
    return case, compiled, worker, dev, worker.register(compiled, case.name)


def test_a_repeated_cpp_launch_replays_its_recorded_run_in_one_call(tmp_path: Path) -> None:
    """Launch 1 runs the interpreter for the cycles, launch 2 is recorded, launch 3 on replays it in one
    C++ call (no orchestration walk, no scheduler) with the recorded cycles and this launch's data."""
    case, compiled, worker, dev, name = _device_run(ADD, tmp_path / "build")
    cpp = RunConfig(kernel_engine="cpp")
    runs = [worker.run(name, *dev, config=cpp) for _ in range(3)]
    assert [r.kernel_engine.replayed for r in runs] == [False, False, True]
    assert runs[2].kernel_engine.cpp_calls == 1 and runs[2].kernel_engine.interpreter_runs == 0
    assert "replayed in one call" in runs[2].kernel_engine.summary()
    assert runs[2].total_cycles == runs[0].total_cycles > 0 and len(runs[2].tasks) == len(runs[0].tasks)
    a, b, c = dev
    new_a = torch.randn(a.shape)
    a.copy_from(new_a)
    c.copy_from(torch.zeros(c.shape))
    again = worker.run(name, *dev, config=cpp)
    assert again.kernel_engine.replayed
    assert torch.equal(c.to_torch(), new_a + b.to_torch())  # the replay reads this launch's data
    # Other run options, host tensors (copied every run) and check_inputs=True take the full path.
    assert not worker.run(name, *dev, config=RunConfig(kernel_engine="cpp", check_races=False)).kernel_engine.replayed
    assert not worker.run(name, *dev, config=RunConfig(kernel_engine="cpp", check_inputs=True)).kernel_engine.replayed
    for _ in range(3):
        host, args = _run(case, compiled, kernel_engine="cpp")
        assert not host.kernel_engine.replayed
        assert torch.equal(_output(case, args), case.expected(args)["c"])


def test_a_replay_with_cube_vector_pipes_matches_the_full_run(tmp_path: Path) -> None:
    case, _, worker, dev, name = _device_run(MIXED, tmp_path / "build")
    cpp = RunConfig(kernel_engine="cpp")
    worker.run(name, *dev, config=cpp)
    full = worker.run(name, *dev, config=cpp)
    outs = [case.param_names.index(n) for n in case.outputs]
    want = [dev[i].to_torch().clone() for i in outs]
    for i in outs:
        dev[i].copy_from(torch.zeros(dev[i].shape))
    replayed = worker.run(name, *dev, config=cpp)
    assert replayed.kernel_engine.replayed and not full.kernel_engine.replayed
    assert replayed.kernel_engine.cpp_calls == full.kernel_engine.cpp_calls == 2
    for i, w in zip(outs, want, strict=True):
        assert torch.equal(dev[i].to_torch(), w)


def test_a_replay_runs_the_created_buffers_in_one_huge_page_block(tmp_path: Path) -> None:
    """The plan moves the run's ``pl.create_tensor`` buffer into a block on a 2 MiB boundary (huge pages),
    points the kernels at it, and zero-fills it before every replay: the outputs stay the full run's."""

    from pypto.runtime.cpp_engine import _ENGINES
    from pypto.runtime.huge_pages import HUGE_PAGE, huge_page_bytes

    block = huge_page_bytes(100)
    assert block.size == 100 and not block.any() and block.__array_interface__["data"][0] % HUGE_PAGE == 0
    case, compiled, worker, dev, name = _device_run(("intermediate/01_fused_linear.py", "fused_linear_relu"), tmp_path)
    cpp = RunConfig(kernel_engine="cpp")
    worker.run(name, *dev, config=cpp)
    full = worker.run(name, *dev, config=cpp)
    out = dev[case.param_names.index(case.outputs[0])]
    want = out.to_torch().clone()
    (plan,) = [p for e in _ENGINES.values() for p in e.plans.values() if p.result is full]
    (zero,) = plan.zero
    lo = zero.__array_interface__["data"][0]
    assert lo % HUGE_PAGE == 0 and zero.nbytes >= 64 * 64 * 4
    assert any(lo <= s < lo + zero.nbytes for slots in plan._keep[0] for s in slots)  # the kernels' addresses moved
    zero.fill(0xFF)  # stale bytes: the replay zero-fills the block before its one C++ call
    seen: list[bool] = []
    runner = plan.runner

    def checked(*args: Any) -> int:
        seen.append(not zero.any())
        return runner(*args)

    plan.runner = checked
    out.copy_from(torch.zeros(out.shape))
    replayed = worker.run(name, *dev, config=cpp)
    assert replayed.kernel_engine.replayed and not full.kernel_engine.replayed
    assert seen == [True]
    assert torch.equal(out.to_torch(), want)


def test_an_edited_cpp_drops_the_recorded_run(tmp_path: Path) -> None:
    case, compiled, worker, dev, name = _device_run(ADD, tmp_path / "build")
    cpp = RunConfig(kernel_engine="cpp")
    for _ in range(3):
        last = worker.run(name, *dev, config=cpp)
    assert last.kernel_engine.replayed
    remembered = worker._replayable[name.name]  # the worker's launch straight to the plan (fast_launch)
    path = _kernel_cpp(compiled)
    path.write_text(path.read_text().replace("TADD(", "TSUB("))
    edited = worker.run(name, *dev, config=cpp)
    assert not edited.kernel_engine.replayed  # rebuilt and run through the scheduler
    assert remembered.plan.dropped and name.name not in worker._replayable
    a, b, c = (t.to_torch() for t in dev)
    assert torch.equal(c, a - b)


def test_a_program_reading_tensor_elements_is_never_recorded(add_build: tuple[Case, Any]) -> None:
    """``pl.tensor.read`` in the host code: the task graph may depend on data, so no plan."""
    from pypto.runtime.cpp_plan import _reads_tensors

    sys.path.insert(0, str(ROOT / "test" / "python"))
    from test_runtime_shapes import RuntimeShapes

    assert _reads_tensors(RuntimeShapes.module)
    assert not _reads_tensors(add_build[1].program.module)


MATMUL_SRC = """#include "pto_cpu.hpp"
using namespace pto;
extern "C" int mm(const float *a, const float *b, const float *init, float *c) {
    return pto::cpu::launch("mm", [&]() {
        Tile<TileType::Left, float, AR, AC, BLayout::LAYOUT, -1, -1> A(M, K);
        Tile<TileType::Right, float, AC, CC, BLayout::RowMajor, -1, -1> B(K, N);
        Tile<TileType::Acc, float, AR, CC, BLayout::ColMajor, -1, -1> I(M, N), C(M, N);
        TASSIGN(A, 0); TASSIGN(B, 0); TASSIGN(I, 0); TASSIGN(C, 4096);
        for (int r = 0; r < M; ++r) for (int k = 0; k < K; ++k) A.at(r, k) = a[r * K + k];
        for (int k = 0; k < K; ++k) for (int j = 0; j < N; ++j) B.at(k, j) = b[k * N + j];
        for (int r = 0; r < M; ++r) for (int j = 0; j < N; ++j) I.at(r, j) = init[r * N + j];
        TMATMUL_ACC(C, I, A, B);
        for (int r = 0; r < M; ++r) for (int j = 0; j < N; ++j) c[r * N + j] = C.at(r, j);
    });
}
"""


@pytest.mark.parametrize(
    "flags",
    [("-march=native",), ("-DPTO_CPU_NO_AVX512",), ("-DPTO_CPU_NO_AVX2",)],
    ids=["native", "no-avx512", "no-avx2"],
)
@pytest.mark.parametrize(
    ("m", "k", "n", "capacity", "layout"),
    [
        # row-major lhs: a 4-row register block (16 or 8 columns wide), its column tail and the 2-row tail
        (6, 5, 20, (8, 8, 24), "RowMajor"),
        # the cube's column-major Left and Acc tiles (vectorised down the columns: 16-row blocks 6 columns
        # wide, the 1-column tail, the 5-row scalar tail)
        (37, 9, 23, (40, 16, 24), "ColMajor"),
        # with AVX-512: a 32-row block 8 columns wide and its 7-column tail, then the 16-row block, the
        # 5-row tail
        (53, 9, 15, (56, 16, 16), "ColMajor"),
    ],
    ids=["row-major-lhs", "column-major-lhs", "column-major-lhs-32-rows"],
)
def test_header_matmul_keeps_the_k_order_bits(
    tmp_path: Path, flags: tuple[str, ...], m: int, k: int, n: int, capacity: tuple[int, int, int], layout: str
) -> None:
    """``m x k @ k x n`` through TMATMUL_ACC gives each element init, then one fused multiply-add
    a[i,p]*b[p,j] per p in k order, bit for bit, on every blocked path of the header's matmul and its tails
    (compiled with ``-ffp-contract=off``, as the engine: only the explicit FMA fuses)."""
    import ctypes

    import numpy as np

    from pypto.ptoas.build import build_shared

    ar, ac, cc = capacity
    src = MATMUL_SRC
    for key, val in (("AR", ar), ("AC", ac), ("CC", cc), ("LAYOUT", layout), ("M", m), ("K", k), ("N", n)):
        src = re.sub(rf"\b{key}\b", str(val), src)
    lib = ctypes.CDLL(str(build_shared(src, tmp_path, f"mm{layout}", ("-O3", "-ffp-contract=off", *flags))))
    rng = np.random.default_rng(m)
    a, b, init = (rng.standard_normal(s).astype(np.float32) for s in ((m, k), (k, n), (m, n)))
    c = np.zeros((m, n), np.float32)
    ptr = ctypes.c_void_p
    assert lib.mm(*(ptr(x.ctypes.data) for x in (a, b, init, c))) == 0
    want = fused_matmul(a, b, init)
    assert np.array_equal(c.view(np.uint32), want.view(np.uint32))
    unfused = init.copy()
    for p in range(k):
        unfused = unfused + a[:, p : p + 1] * b[p : p + 1, :]  # one rounding per multiply and per add
    assert not np.array_equal(c, unfused)  # the test tells the two apart


@pytest.mark.parametrize("flags", [(), ("-DPTO_CPU_NO_AVX2",)], ids=["as-built", "no-avx2"])
def test_header_transposing_copies_move_every_element(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """TLOAD of a row-major GM view into a column-major tile, TMOV to a row-major tile and back, TSTORE
    from the column-major tile (the 8x8-block transposes, and the edges of a 21x13 valid region) move
    every element to its place."""
    import ctypes

    import numpy as np

    from pypto.ptoas.build import build_shared

    src = """#include "pto_cpu.hpp"
using namespace pto;
extern "C" int moves(float *x, float *y, float *z) {
    return pto::cpu::launch("moves", [&]() {
        using S = pto::Shape<1, 1, 1, 21, 13>;
        using St = pto::Stride<1, 1, 1, 17, 1>;
        GlobalTensor<float, S, St> gx(x, S(), St()), gy(y, S(), St()), gz(z, S(), St());
        Tile<TileType::Mat, float, 24, 16, BLayout::ColMajor, -1, -1> M(21, 13), M2(21, 13);
        Tile<TileType::Vec, float, 24, 16, BLayout::RowMajor, -1, -1> V(21, 13);
        TASSIGN(M, 0); TASSIGN(M2, 2048); TASSIGN(V, 0);
        TLOAD(M, gx);
        TMOV(V, M);
        TMOV(M2, V);
        TSTORE(gy, M2);
        TSTORE(gz, V);
    });
}
"""
    lib = ctypes.CDLL(str(build_shared(src, tmp_path, "moves", ("-O3", *flags))))
    x = np.random.default_rng(2).standard_normal((21, 17)).astype(np.float32)
    y, z = np.zeros_like(x), np.zeros_like(x)
    assert lib.moves(*(ctypes.c_void_p(v.ctypes.data) for v in (x, y, z))) == 0
    assert np.array_equal(y[:, :13], x[:, :13]) and np.array_equal(z[:, :13], x[:, :13])
    assert not y[:, 13:].any() and not z[:, 13:].any()


@pytest.mark.parametrize("flags", [("-march=native",), ("-DPTO_CPU_NO_AVX2",)], ids=["native", "no-avx2"])
def test_header_vectorised_exp_gives_the_interpreters_bits(tmp_path: Path, flags: tuple[str, ...]) -> None:
    """TEXP on fp32 tiles (cpu::exp_f32: a polynomial in double lanes, the scalar exp near a halfway point)
    gives the interpreter's bits, exp in float64 rounded once, on a sweep of the floats: every 512th bit
    pattern over [-88, 89], the ones whose float64 exp lies closest to a halfway point, and the specials."""
    import ctypes

    import numpy as np

    from pypto.device.interpreter.numerics import _exp
    from pypto.ptoas.build import build_shared

    src = """#include "pto_cpu.hpp"
extern "C" void exp_all(const float *in, float *out, long n) { pto::cpu::exp_f32(in, out, n); }
"""
    lib = ctypes.CDLL(str(build_shared(src, tmp_path, "expf", ("-O3", "-fno-math-errno", "-ffp-contract=off", *flags))))
    pos = np.arange(0, np.float32(89).view(np.uint32), 512, dtype=np.uint32)
    neg = np.arange(0x80000000, np.float32(-88).view(np.uint32), 512, dtype=np.uint32)
    x = np.concatenate([pos, neg]).view(np.float32)
    y = np.exp(x.astype(np.float64)).view(np.int64)
    near = x[np.abs((y & ((1 << 29) - 1)) - (1 << 28)) < 4096]  # the scalar-fallback lanes, and their neighbours
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 88.7, 88.72, -87.3, -103.9, -104.0, 1e-30], np.float32)
    x = np.concatenate([x, near, specials])
    out = np.empty_like(x)
    lib.exp_all(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(out.ctypes.data), ctypes.c_long(x.size))
    with np.errstate(over="ignore"):
        want = _exp(x)
    same = (out.view(np.uint32) == want.view(np.uint32)) | (np.isnan(out) & np.isnan(want))
    assert same.all(), f"exp differs at {x[~same][:5]}: {out[~same][:5]} against {want[~same][:5]}"
    assert near.size > 0
