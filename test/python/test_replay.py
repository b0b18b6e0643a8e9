"""Replaying a build directory (issue 14): the contract files, ``replay`` and its CLI, the ``.pto`` splice,
bad directories, ``debug/run.py`` with no source at hand, ``CompiledProgram.from_dir`` and ``benchmark``.

Every test works on a real build of ``examples/beginner/02_elementwise.py`` (``chunked_add``: c = a + b on
512x128 in four chunks), compiled once per module and copied per test (mtimes kept).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from replay_build import ROOT, UNIT, build_example, edit_pto, example_case, snapshot

from pypto.ir import CompiledProgram
from pypto.runtime import RunConfig, benchmark
from pypto.runtime.build_dir import BuildDirError, read_kernel_config, read_meta
from pypto.runtime.debug import PtoUnitError, invalidate_binary_cache, rebuild_kernel_cpp_from_pto, replay, replay_main
from pypto.runtime.debug.pto_rebuild import PTOAS_BODY_BEGIN, PTOAS_BODY_END
from pypto.runtime.golden_file import golden_text

CONTRACT = ["kernel_config.py", "compiled_meta.json", "orchestration/chunked_add.py", "golden.py", "debug/run.py"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example(tmp_path_factory.mktemp("replay") / "chunked_add")


@pytest.fixture
def build(built: Path, tmp_path: Path) -> Path:
    """A private copy of the module's build (mtimes kept)."""
    return Path(shutil.copytree(built, tmp_path / "build"))


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    torch.manual_seed(1)
    return torch.randn(512, 128), torch.randn(512, 128), torch.zeros(512, 128)


# ---- the contract files -----------------------------------------------------------------------------------------------


def test_contract_files_are_written_and_deterministic(built: Path, tmp_path: Path) -> None:
    again = build_example(tmp_path / "again")
    for rel in CONTRACT:
        assert (built / rel).read_bytes() == (again / rel).read_bytes(), rel
    assert not [p for p in again.rglob(".*") if p.is_file()]  # no temp files left
    meta = json.loads((built / "compiled_meta.json").read_text())
    assert meta == {
        "schema": 1,
        "params": [
            {"name": "a", "direction": "In", "shape": [512, 128], "dtype": "fp32"},
            {"name": "b", "direction": "In", "shape": [512, 128], "dtype": "fp32"},
            {"name": "c", "direction": "Out", "shape": [512, 128], "dtype": "fp32"},
        ],
        "num_return_types": 1,
        "platform": "a2a3sim",
        "backend_type": "Ascend910B",
    }
    kc = read_kernel_config(built)
    assert kc.orchestration["function_name"] == "chunked_add"
    assert [(k.func_id, k.name, k.source, k.core_type, k.signature) for k in kc.kernels] == [
        (0, UNIT, f"kernels/aiv/{UNIT}.cpp", "aiv", ["In", "In", "Out"])
    ]
    assert (built / kc.kernels[0].source).is_file() and (built / kc.orchestration["source"]).is_file()
    golden = (built / "golden.py").read_text()
    assert "__outputs__ = ['c']" in golden and "def compute_golden(tensors, params):" in golden
    assert "TILE_ROWS = 128" in golden  # the reference's constants travel with it


def test_debug_runner_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_EMIT_DEBUG_RUNNER", "0")
    out = build_example(tmp_path / "b", golden=False)
    assert not (out / "debug").exists() and not (out / "golden.py").exists()
    assert (out / "kernel_config.py").is_file() and (out / "compiled_meta.json").is_file()


def test_golden_in_place_form(built: Path) -> None:
    def compute(tensors, params):  # noqa: ANN001 - the golden.py signature
        tensors["c"][:] = tensors["a"] - tensors["b"]

    text = golden_text(read_meta(built), compute, 1e-3, 1e-4)
    scope: dict[str, Any] = {}
    exec(compile(text, "golden.py", "exec"), scope)  # noqa: S102
    named = dict(scope["generate_inputs"]({}))
    scope["compute_golden"](named, {})
    assert torch.equal(named["c"], named["a"] - named["b"]) and scope["RTOL"] == 1e-3


def test_golden_that_reads_an_object_is_refused(built: Path) -> None:
    table = {"k": 1}

    def ref(a, b):  # noqa: ANN001
        return a * table["k"]

    with pytest.raises(ValueError, match="reads 'table'"):
        golden_text(read_meta(built), ref, 1e-5, 1e-5)


# ---- replay -------------------------------------------------------------------------------------------------------------


def test_replay_cli_with_every_flag(build: Path, capsys: pytest.CaptureFixture[str], own_dfx_flags: None) -> None:
    stale = build / "dfx_outputs" / "stale.txt"
    stale.parent.mkdir()
    stale.write_text("from an older run")
    cached = build / "cache" / "kernels" / f"{UNIT}.so"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"\x7fELF")
    argv = [str(build), "--pmu", "2", "--swimlane-level", "3", "--dump-args", "2", "--dep-gen", "--scope-stats",
            "--no-recompile", "--no-rebuild-from-pto", "--validate", "--log-level", "warn", "--platform", "a2a3sim"]  # fmt: skip
    assert replay_main(argv) == 0
    out = capsys.readouterr().out
    assert "golden validation: PASSED (c)" in out and "total " in out
    dfx = build / "dfx_outputs"
    assert not stale.exists()  # a fresh dfx_outputs/
    for rel in ("pmu.csv", "deps.json", "chip_swimlane_records.json", "args_dump/args_dump.json", "args_dump/args.bin",
                "scope_stats/scope_stats.jsonl"):  # fmt: skip
        assert (dfx / rel).is_file(), rel
    assert json.loads((dfx / "chip_swimlane_records.json").read_text())["chip_swimlane_level"] == 3
    assert cached.is_file()  # --no-recompile keeps the binaries
    assert replay_main([str(build), "--swimlane", "--dump-args"]) == 0
    assert json.loads((dfx / "chip_swimlane_records.json").read_text())["chip_swimlane_level"] == 4
    assert not (dfx / "pmu.csv").exists() and not cached.exists()  # flags of this run only; cache dropped


def test_replay_api_returns_the_run_and_writes_outputs(build: Path, own_dfx_flags: None) -> None:
    a, b, c = _inputs()
    result = replay(build, a, b, c, config=RunConfig(enable_pmu=2), validate=True)
    assert torch.equal(c, a + b)
    assert result.total_cycles > 0 and [p.name for p in result.dfx_outputs["enable_pmu"]] == ["pmu.csv"]
    with pytest.raises(TypeError, match="takes 3 arguments"):
        replay(build, a, b)


def test_edited_pto_changes_the_result_and_is_spliced(build: Path, own_dfx_flags: None) -> None:
    kernel = build / "kernels" / "aiv" / f"{UNIT}.cpp"
    before = kernel.read_text()
    a, b, c = _inputs()
    base = replay(build, a, b, c).total_cycles
    assert torch.equal(c, a + b)
    edit_pto(build, "pto.tadd ", "pto.tmul ")
    with pytest.raises(AssertionError, match="output 'c' does not match golden.py"):
        replay(build, *_inputs(), validate=True)
    a, b, c = _inputs()
    edited = replay(build, a, b, c)
    assert torch.equal(c, a * b)  # the simulated chip ran the edited .pto
    assert edited.total_cycles != base
    after = kernel.read_text()
    assert "TMUL(" in after and "TADD(" not in after and "TADD(" in before
    head, tail = before.split(PTOAS_BODY_BEGIN)[0], before.split(PTOAS_BODY_END)[1]
    assert after.startswith(head + PTOAS_BODY_BEGIN) and after.endswith(PTOAS_BODY_END + tail)
    body = after.split(PTOAS_BODY_BEGIN + "\n")[1].split("\n" + PTOAS_BODY_END)[0]
    assert body == (build / "ptoas" / f"{UNIT}.cpp").read_text().rstrip("\n")
    assert rebuild_kernel_cpp_from_pto(build) == []  # the .cpp stamp is now newer than the .pto


def test_splice_keeps_text_outside_the_sentinels(build: Path) -> None:
    kernel = build / "kernels" / "aiv" / f"{UNIT}.cpp"
    text = kernel.read_text().replace("// Kernel Function:", "// my note\n// Kernel Function:", 1) + "// my tail\n"
    kernel.write_text(text)
    edit_pto(build, "pto.tadd ", "pto.tsub ")
    assert rebuild_kernel_cpp_from_pto(build) == [f"kernels/aiv/{UNIT}.cpp"]
    after = kernel.read_text()
    assert after.startswith("// my note\n") and after.endswith("// my tail\n") and "TSUB(" in after


@pytest.mark.parametrize("how", ["flag", "env"])
def test_no_rebuild_from_pto(build: Path, how: str, monkeypatch: pytest.MonkeyPatch, own_dfx_flags: None) -> None:
    edit_pto(build, "pto.tadd ", "pto.tmul ")
    cpps = {p: p.read_bytes() for p in [build / "kernels" / "aiv" / f"{UNIT}.cpp", build / "ptoas" / f"{UNIT}.cpp"]}
    if how == "env":
        monkeypatch.setenv("PYPTO_REBUILD_FROM_PTO", "0")
        assert replay_main([str(build), "--no-validate"]) == 0
    else:
        assert replay_main([str(build), "--no-rebuild-from-pto", "--no-validate"]) == 0
    assert {p: p.read_bytes() for p in cpps} == cpps  # no splice
    a, b, c = _inputs()
    replay(build, a, b, c, rebuild_from_pto=False)
    assert torch.equal(c, a * b)  # the chip runs the .pto as it is


def test_invalidate_binary_cache_removes_only_the_cache(build: Path) -> None:
    (build / "cache" / "kernels").mkdir(parents=True)
    (build / "cache" / "kernels" / "k.o").write_bytes(b"o")
    (build / "cache" / "keep.txt").write_text("x")
    assert invalidate_binary_cache(build) == 1
    assert not (build / "cache" / "kernels").exists() and (build / "cache" / "keep.txt").is_file()


# ---- bad directories: a clear error, nothing written ----------------------------------------------------------------


def _corrupt_kernel_config(build: Path) -> None:
    (build / "kernel_config.py").write_text((build / "kernel_config.py").read_text() + "KERNELS = [\n")


def _missing_pto(build: Path) -> None:
    (build / "ptoas" / f"{UNIT}.pto").unlink()


def _missing_meta(build: Path) -> None:
    (build / "compiled_meta.json").unlink()


def _bad_pto_syntax(build: Path) -> None:
    edit_pto(build, "pto.tadd ins(", "pto.tadd ins((")


def _bad_pto_verify(build: Path) -> None:
    edit_pto(
        build,
        "outs(%t__tmp_v0 : !pto.tile_buf<loc=vec, dtype=f32",
        "outs(%t__tmp_v0 : !pto.tile_buf<loc=vec, dtype=f16",
    )


def _kernels_not_a_list(build: Path) -> None:
    text = (build / "kernel_config.py").read_text()
    (build / "kernel_config.py").write_text(text.split("KERNELS = [")[0] + 'KERNELS = {"a": 1}\n')


def _golden_not_utf8(build: Path) -> None:
    (build / "golden.py").write_bytes(b"# caf\xe9\n" + (build / "golden.py").read_bytes())


def _golden_raises(build: Path) -> None:
    text = (build / "golden.py").read_text()
    head = "def generate_inputs(params=None):\n"
    assert head in text
    (build / "golden.py").write_text(text.replace(head, f"{head}    raise KeyError('seed')\n", 1))


def _golden_import_fails(build: Path) -> None:
    (build / "golden.py").write_text("import no_such_module_xyz\n" + (build / "golden.py").read_text())


BAD = {
    "corrupt kernel_config.py": (_corrupt_kernel_config, r"kernel_config\.py:\d+:\d+: error: not valid Python"),
    "KERNELS not a list": (_kernels_not_a_list, r"kernel_config\.py:\d+: error: expected KERNELS = a list"),
    "missing .pto": (_missing_pto, rf"ptoas/{UNIT}\.pto: error: missing; kernel_config\.py lists kernel"),
    "missing compiled_meta.json": (_missing_meta, r"compiled_meta\.json: error: missing"),
    "bad .pto syntax": (_bad_pto_syntax, rf"ptoas/{UNIT}\.pto:23:\d+: error: "),
    "bad .pto verify": (_bad_pto_verify, rf"ptoas/{UNIT}\.pto:\d+:\d+: error: "),
    "golden.py raises": (_golden_raises, r"/golden\.py:\d+: error: generate_inputs raised KeyError: 'seed'"),
    "golden.py import fails": (_golden_import_fails, r"/golden\.py:1: error: golden\.py raised ModuleNotFoundError"),
    "golden.py not UTF-8": (_golden_not_utf8, r"/golden\.py:1:6: error: not UTF-8 text \(byte 0xe9 at offset 5\)"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_directory_gives_a_clear_error_and_writes_nothing(
    build: Path, name: str, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    spoil, pattern = BAD[name]
    spoil(build)
    before = snapshot(build)
    assert replay_main([str(build), "--swimlane", "--pmu", "2"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    assert len(err.strip().splitlines()) == 1
    import re

    assert re.search(pattern, err), err
    assert snapshot(build) == before  # nothing written, nothing changed
    with pytest.raises(BuildDirError):  # the API raises the same error
        replay(build)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--dump-args", "7"], "argument --dump-args: invalid choice: 7 (choose from 0, 1, 2)"),
        (["--pmu", "-1"], "argument --pmu: invalid non-negative integer: '-1'"),
        (["--log-level", "foo"], "argument --log-level: unknown log level 'foo'"),
        (["--platform", "a5sim"], "argument --platform: invalid choice: 'a5sim' (choose from 'a2a3sim'"),
    ],
)
def test_bad_option_value_is_a_usage_error(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An option value RunConfig or the logger refuses is argparse's usage error naming the option (it was
    ``replay: internal error: ValueError: ...``, exit 2, the bug note)."""
    assert replay_main([str(tmp_path), *flags]) == 2
    err = capsys.readouterr().err
    assert message in err and "internal error" not in err, err


def test_a_platform_with_no_simulated_chip_is_a_user_error(
    build: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, own_dfx_flags: None
) -> None:
    """A recorded (or RunConfig) platform the simulator cannot run: a5sim has no packaged target, so it said
    ``unknown target 'a5': not a packaged target (a2a3)``; a2a3 (hardware) was an internal error."""
    monkeypatch.delenv("PYPTO_SIMULATE_NPU", raising=False)
    before = snapshot(build)
    assert replay_main([str(build)], default_platform="a5sim") == 1
    err = capsys.readouterr().err
    assert err == (
        "replay: error: platform 'a5sim' cannot run here: there is no packaged target 'a5' for its simulated chip "
        "(packaged: a2a3); run on a2a3sim, or give RunConfig(target=<a .mlir target file>)\n"
    ), err
    assert replay_main([str(build)], default_platform="a2a3") == 1
    err = capsys.readouterr().err
    assert err.startswith("replay: error: platform 'a2a3' needs an NPU") and "(a2a3sim)" in err, err
    assert snapshot(build) == before


def test_user_code_failures_are_located_user_errors(build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """golden.py's compute_golden and debug/run.py's make_inputs / _user_compare are the user's code: what
    they raise (a failed assert in _user_compare, where run.py says to check the outputs) is one error at
    their line, exit 1; it was ``replay: internal error: ...`` with the bug note, exit 2."""
    golden = build / "golden.py"
    head = "def compute_golden(tensors, params):\n"
    golden.write_text(golden.read_text().replace(head, f"{head}    raise ValueError('mine')\n", 1))
    assert replay_main([str(build)]) == 1
    err = capsys.readouterr().err
    assert re.match(r"\S*/golden\.py:\d+: error: compute_golden raised ValueError: mine$", err), err
    golden.unlink()

    def make_inputs() -> list[tuple[str, torch.Tensor]]:
        return list(zip(("a", "b", "c"), _inputs(), strict=True))

    def compare(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> None:
        assert torch.equal(c, a * b), "c is not a * b"

    assert replay_main([str(build)], inline_inputs=make_inputs, user_compare=compare) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{__file__}:") and "error: _user_compare raised AssertionError: c is not a * b" in err, err
    assert replay_main([str(build)], inline_inputs=lambda: [("a", 1)], user_compare=compare) == 1
    err = capsys.readouterr().err
    assert "error: make_inputs must return the arguments as [(name, value), ...]" in err and "got (a)" in err, err


def test_an_edited_kernel_that_faults_on_the_device_is_a_user_error(
    build: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An edited ``.pto`` whose loop runs one chunk too many reads past its argument: the device model's
    verdict (a DeviceError) is the program's fault, one error line naming the task, the unit and the op, exit
    1; it was ``replay: internal error: KernelError: ...`` with the bug note, exit 2."""
    edit_pto(build, "%c4_index = arith.constant 4 :", "%c4_index = arith.constant 5 :")
    assert replay_main([str(build), "--no-validate"]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err and "bug in PyPTO" not in err, err
    assert re.search(rf"replay: error: task t0 \(@{UNIT}\): \S*{UNIT}\.pto:\d+:\d+: .*pto\.tload: GM window .* is "
                     "outside the argument", err), err  # fmt: skip


def test_a_verifier_error_in_an_edited_pto_names_its_line_there(build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The error of an edited ``.pto`` that verifies no more names the line of the ``.pto`` (the file the user
    edited), then the op's ``loc``; it named only the kernel's Python line."""
    pto = edit_pto(build, "%c65536_i64 = arith.constant 65536 :", "%c65536_i64 = arith.constant 65539 :")
    line = next(i for i, text in enumerate(pto.read_text().splitlines(), 1) if "addr = %c65536_i64" in text)
    assert replay_main([str(build), "--no-validate"]) == 1
    err = capsys.readouterr().err
    assert re.match(rf"{re.escape(str(pto))}:{line}:\d+: error: vec tile at address 65539 is not 32-byte aligned: .* "
                    r"\(the op of 02_elementwise\.py:\d+:\d+\)$", err), err  # fmt: skip


def test_bad_pto_error_is_a_pto_unit_error(build: Path) -> None:
    _bad_pto_syntax(build)
    with pytest.raises(PtoUnitError) as e:
        rebuild_kernel_cpp_from_pto(build)
    assert str(e.value).startswith(str(build / "ptoas" / f"{UNIT}.pto") + ":23:")


# ---- debug/run.py, with no source at hand ------------------------------------------------------------------------


def _run_py(build: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, str(build / "debug" / "run.py"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_debug_run_py_in_a_directory_without_the_source(build: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    moved = Path(shutil.move(str(build), str(elsewhere / "build_output_copy")))
    assert not list(elsewhere.rglob("02_elementwise.py"))
    edit_pto(moved, "pto.tadd ", "pto.tmul ")
    done = _run_py(moved, elsewhere, "--swimlane")
    assert done.returncode == 1 and "output 'c' does not match golden.py" in done.stderr  # the edit is what ran
    assert "TMUL(" in (moved / "kernels" / "aiv" / f"{UNIT}.cpp").read_text()
    edit_pto(moved, "pto.tmul ", "pto.tadd ")
    done = _run_py(moved, elsewhere, "--swimlane")
    assert done.returncode == 0, done.stderr
    assert "golden validation: PASSED (c)" in done.stdout
    assert (moved / "dfx_outputs" / "chip_swimlane_records.json").is_file()


def test_debug_run_py_without_golden_calls_user_compare(tmp_path: Path) -> None:
    build = build_example(tmp_path / "nogolden", golden=False)
    run_py = build / "debug" / "run.py"
    marker = tmp_path / "compared.txt"
    hook = '    """Called after a replay'
    text = run_py.read_text()
    assert hook in text
    text = text.replace(
        hook, f"    assert torch.equal(c, a + b)\n    open({str(marker)!r}, 'w').write('ok')\n{hook}", 1
    )
    run_py.write_text(text)
    done = _run_py(build, tmp_path)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "ok" and "golden validation" not in done.stdout


# ---- CompiledProgram.from_dir and benchmark -----------------------------------------------------------------------------


def test_from_dir_reloads_metadata_only(build: Path, own_dfx_flags: None) -> None:
    compiled = CompiledProgram.from_dir(build)
    assert compiled.program is None and compiled.param_names == ["a", "b", "c"] and compiled.output_indices == [2]
    assert compiled.platform == "a2a3sim" and compiled.backend_type.value == "Ascend910B"
    kernel = build / "kernels" / "aiv" / f"{UNIT}.cpp"
    edit_pto(build, "pto.tadd ", "pto.tmul ")
    cache = build / "cache" / "kernels" / "k.so"
    cache.parent.mkdir(parents=True)
    cache.write_bytes(b"so")
    before = kernel.read_bytes()
    a, b, c = _inputs()
    out = compiled(a, b, c)
    assert out is c and torch.equal(c, a * b)
    assert kernel.read_bytes() == before and cache.is_file()  # no splice, no cache invalidation
    assert CompiledProgram.from_dir(build, platform="a5sim").backend_type.value == "Ascend950"
    with pytest.raises(BuildDirError, match="compiled_meta.json: error: missing"):
        _missing_meta(build)
        CompiledProgram.from_dir(build)


def test_benchmark_statistics(build: Path, own_dfx_flags: None) -> None:
    compiled = CompiledProgram.from_dir(build)
    args = list(_inputs())
    stats = benchmark(compiled, args, rounds=3)
    once = replay(build, *_inputs())
    for s in (stats.device_cycles, stats.device_us, stats.host_s):
        assert s.min <= s.median <= s.max and s.min <= s.mean <= s.max
    assert stats.rounds == 3 and stats.device_cycles.min == stats.device_cycles.max == once.total_cycles
    assert stats.device_us.median == pytest.approx(once.time_us) and stats.host_s.min > 0
    assert "device cycles" in stats.summary()
    with pytest.raises(ValueError, match="rounds >= 1"):
        benchmark(compiled, args, rounds=0)
    with pytest.raises(ValueError, match="warmup >= 0, got -1"):  # it ran no warm-up, silently
        benchmark(compiled, args, rounds=1, warmup=-1)
    with pytest.raises(TypeError, match="rounds is a whole number, got float 2.5"):  # "'float' object cannot be ..."
        benchmark(compiled, args, rounds=2.5)


def test_run_config_engine_fields() -> None:
    assert RunConfig().kernel_engine == "interpreter" and RunConfig().recompile_kernels is True
    assert RunConfig(kernel_engine="both").kernel_engine == "both"
    with pytest.raises(ValueError, match="kernel_engine"):
        RunConfig(kernel_engine="gpu")


# ---- other examples: a cube kernel, a golden with helper functions ----------------------------------------------------


@pytest.mark.parametrize(
    ("file", "name"), [("beginner/05_matmul.py", None), ("intermediate/02_softmax.py", "softmax_rows")]
)
def test_example_builds_replay_and_validate(file: str, name: str | None, tmp_path: Path, own_dfx_flags: None) -> None:
    from _harness import compile_case  # examples/ is on sys.path (the example module put it there)

    path = ROOT / "examples" / file
    spec = importlib.util.spec_from_file_location(f"_replay_example_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    case = next(c for c in module.CASES if name is None or c.name == name)
    build = Path(compile_case(case, tmp_path / "b", dump_passes=False).output_dir)
    assert (build / "golden.py").is_file()  # the harness hands the case's reference to compile
    result = replay(build, validate=True)
    assert result.total_cycles > 0
    named = dict(result.replay_inputs)
    expected = case.expected(tuple(named.values()))
    for out_name, want in expected.items():  # validate=True compared them; check they really are the outputs
        assert torch.allclose(named[out_name], want, rtol=case.rtol, atol=case.atol)


def test_run_config_golden_reaches_the_build(tmp_path: Path, own_dfx_flags: None) -> None:
    case = example_case()
    a, b, c = case.inputs()
    config = RunConfig(golden=case.reference, rtol=1e-4, atol=1e-6, save_kernels_dir=str(tmp_path / "jit"))
    case.kernel(a, b, c, config=config)
    assert torch.equal(c, a + b)
    text = (tmp_path / "jit" / "golden.py").read_text()
    assert "RTOL = 0.0001" in text and "ATOL = 1e-06" in text and "def _reference(a" in text
    assert replay_main([str(tmp_path / "jit")]) == 0  # validates by default when golden.py is there


def test_replay_with_both_engines_reports_an_edited_cpp(
    build: Path, capsys: pytest.CaptureFixture[str], own_dfx_flags: None
) -> None:
    """An edited .pto is spliced, so both engines agree on the new numbers; an edit to the .cpp alone
    makes them differ, and the replay says so and that the cycles come from the .pto."""
    edit_pto(build, "pto.tadd ", "pto.tmul ")
    assert replay_main([str(build), "--kernel-engine", "both", "--no-validate"]) == 0
    out = capsys.readouterr()
    assert "kernel engine both" in out.out and "identical" in out.out and "differ" not in out.err
    pto = build / "ptoas" / f"{UNIT}.pto"
    stamp = (build / "ptoas" / f"{UNIT}.cpp").stat().st_mtime_ns
    os.utime(pto, ns=(stamp, stamp - 1_000_000_000))  # the .pto is done with: only the .cpp is edited
    kernel = build / "kernels" / "aiv" / f"{UNIT}.cpp"
    kernel.write_text(kernel.read_text().replace("TMUL(", "TSUB("))
    assert replay_main([str(build), "--kernel-engine", "both", "--no-validate"]) == 0
    out = capsys.readouterr()
    assert "differ" in out.out, out.out
    assert "cycles and DFX come from the .pto, which no longer matches the .cpp" in out.out + out.err
