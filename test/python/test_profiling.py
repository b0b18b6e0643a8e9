"""Compile profiling: the txt/json formats of seed 003, the context
manager, the env var, ``ir.compile(profiling=True)``, the diff tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_pipeline_kernels import kernel

from pypto.compile_profiling import (
    UNATTRIBUTED,
    CompileProfiler,
    Stage,
    format_seconds,
    format_summary,
    get_active_profiler,
)
from pypto.compile_profiling.__main__ import main as profiling_main
from pypto.ir import compile
from pypto.passes.pipeline_order import DEFAULT_PIPELINE


def test_format_seconds() -> None:
    assert format_seconds(0.000139) == "139us"
    assert format_seconds(0.0114) == "11.4ms"
    assert format_seconds(2.847) == "2.847s"


def test_summary_matches_upstream_shape() -> None:
    stages = [
        Stage("passes", 0.011435, [Stage("InlineFunctions", 0.000139)]),
        Stage(
            "codegen",
            0.000464,
            [Stage("kernel_codegen:softmax_rows_incore_0", 0.000217, [Stage("ir_to_mlir", 0.000183)])],
        ),
    ]
    text = format_summary(0.01286, stages)
    assert text.splitlines() == [
        "PyPTO Compile Profile",
        "======================",
        "Total: 12.9ms",
        "",
        "  passes                           11.4ms  ( 88.9%)",
        "    InlineFunctions                   139us  (  1.1%)",
        "  codegen                           464us  (  3.6%)",
        "    kernel_codegen:softmax_rows_incore_0      217us  (  1.7%)",
        "      ir_to_mlir                        183us  (  1.4%)",
    ]
    # seed 003's example column for 0.023s (its percent column is hand-written)
    assert (
        format_summary(2.847, [Stage("parse", 0.023)]).splitlines()[4].startswith("  parse" + " " * 23 + "     23.0ms")
    )


UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream-builds" / "softmax_rows" / "report"


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="needs ../shared/reference/upstream-builds")
def test_summary_reproduces_upstream_file() -> None:
    """Upstream's pipeline_profile.json rendered by our summary is its .txt, byte for byte."""
    data = json.loads((UPSTREAM / "pipeline_profile.json").read_text())
    stages = [Stage.from_dict(s) for s in data["stages"]]
    ours = (format_summary(data["total_seconds"], stages) + "\n").splitlines()
    theirs = (UPSTREAM / "pipeline_profile.txt").read_text().splitlines()
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        # upstream's percents come from unrounded times: allow 0.1 of rounding
        if "%)" in a:
            assert a[:-8] == b[:-8] and abs(float(a[-7:-2]) - float(b[-7:-2])) <= 0.11
        else:
            assert a == b
    assert {"total_seconds": data["total_seconds"], "stages": [s.to_dict() for s in stages]} == data


def test_context_manager_stages_and_json(tmp_path: Path) -> None:
    assert CompileProfiler.current() is None
    with CompileProfiler() as prof:
        assert CompileProfiler.current() is prof and get_active_profiler() is prof
        with prof.stage("outer"):
            with prof.stage("inner"):
                pass
            with prof.stage("inner"):
                pass
    assert CompileProfiler.current() is None
    d = prof.to_dict()
    assert list(d) == ["total_seconds", "stages"]
    assert [s["name"] for s in d["stages"][0]["children"]] == ["inner", "inner"]
    assert set(d["stages"][0]) == {"name", "seconds", "children"}
    assert json.loads(prof.to_json()) == d
    prof.to_json(tmp_path / "p.json")
    assert json.loads((tmp_path / "p.json").read_text()) == d
    outer = prof.stages[0]
    assert outer.self_seconds == pytest.approx(outer.seconds - sum(c.seconds for c in outer.children))
    assert "self_seconds" in prof.to_dict(self_time=True)["stages"][0]


def _attributed(stages: list[dict], total: float) -> float:
    """The share of ``total`` in the named top-level stages."""
    return sum(s["seconds"] for s in stages if s["name"] != UNATTRIBUTED) / total


def _check_report(report: Path) -> None:
    data = json.loads((report / "pipeline_profile.json").read_text())
    names = [s["name"] for s in data["stages"]]
    assert names == ["passes", "codegen", UNATTRIBUTED]
    passes = data["stages"][0]["children"]
    assert [p["name"] for p in passes] == [n for n, _ in DEFAULT_PIPELINE]
    codegen = data["stages"][1]["children"]
    assert [c["name"] for c in codegen] == ["kernel_codegen:add_incore_0", "orchestration_codegen"]
    # the .pto / ptoas / C++ emission run inside kernel_codegen, the build contract in orchestration_codegen
    assert all(c["seconds"] > 0 for c in codegen)
    assert _attributed(data["stages"], data["total_seconds"]) >= 0.95
    total = data["total_seconds"]
    assert sum(s["seconds"] for s in data["stages"]) == pytest.approx(total, abs=1e-5)  # rounding only
    text = (report / "pipeline_profile.txt").read_text().splitlines()
    assert text[:2] == ["PyPTO Compile Profile", "=" * 22] and text[2].startswith("Total: ")
    assert text[4].startswith("  passes ") and text[5].startswith("    InlineFunctions ")
    assert text[-1].startswith("  (unattributed) ")


def test_compile_profiling_option(tmp_path: Path) -> None:
    out = compile(kernel("add", tmp_path), output_dir=tmp_path / "o", dump_passes=False, profiling=True)
    _check_report(out.report_dir)
    plain = compile(kernel("add", tmp_path), output_dir=tmp_path / "p", dump_passes=False)
    assert not (plain.report_dir / "pipeline_profile.json").exists()


def test_compile_profiling_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pypto.compile_profiling as cp

    monkeypatch.setenv("PYPTO_COMPILE_PROFILING", "yes")
    monkeypatch.setattr(cp, "_env_profiler", None)
    try:
        out = compile(kernel("add", tmp_path), output_dir=tmp_path / "o", dump_passes=False)
        _check_report(out.report_dir)
    finally:
        if cp._env_profiler is not None:
            cp._env_profiler.__exit__(None, None, None)


def test_outer_profiler_records_compile(tmp_path: Path) -> None:
    with CompileProfiler() as prof:
        compile(kernel("add", tmp_path), output_dir=tmp_path / "o", dump_passes=False)
    assert [s.name for s in prof.stages] == ["passes", "codegen"]
    assert "Simplify" in prof.summary()
    assert [s["name"] for s in prof.to_dict()["stages"]] == ["passes", "codegen", UNATTRIBUTED]


def test_diff_and_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = {
        "total_seconds": 1.0,
        "stages": [{"name": "passes", "seconds": 0.5, "children": [{"name": "X", "seconds": 0.2, "children": []}]}],
    }
    b = {
        "total_seconds": 2.0,
        "stages": [{"name": "passes", "seconds": 1.5, "children": [{"name": "X", "seconds": 0.4, "children": []}]}],
    }
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert profiling_main(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].split()[:4] == ["Total", "1.000s", "2.000s", "+1.000s"]
    assert out[2].split()[:5] == ["passes", "500.0ms", "1.500s", "+1.000s", "3.00x"]
    assert out[2].split()[-1] == "+800.0ms"  # self time 300ms -> 1.1s
    assert out[3].split()[:4] == ["X", "200.0ms", "400.0ms", "+200.0ms"]
    assert profiling_main(["show", str(tmp_path / "a.json")]) == 0
    shown = capsys.readouterr().out
    assert "300.0ms" in shown  # self time of passes


def test_jit_compile_profiling_records_parse_passes_and_codegen(tmp_path) -> None:
    """RunConfig(compile_profiling=True) on a @pl.jit kernel: one profile with
    the parse stage beside the passes and codegen."""
    import json

    import torch

    import pypto.language as pl
    from pypto.runtime import RunConfig

    @pl.jit
    def exp_kernel(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.exp(a)
        return out

    cfg = RunConfig(compile_profiling=True, save_kernels_dir=str(tmp_path / "b"))
    compiled = exp_kernel.compile(torch.randn(64, 128), torch.zeros(64, 128), config=cfg)
    profile = json.loads((compiled.output_dir / "report" / "pipeline_profile.json").read_text())
    assert [s["name"] for s in profile["stages"]] == ["parse", "compile", UNATTRIBUTED]
    assert [s["name"] for s in profile["stages"][1]["children"]] == ["passes", "codegen"]
    assert len(profile["stages"][1]["children"][0]["children"]) == 49
    assert _attributed(profile["stages"], profile["total_seconds"]) >= 0.95


def _add_jit():
    import pypto.language as pl

    @pl.jit
    def add_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out

    return add_kernel


def _names(stages: list[dict]) -> list[str]:
    return [s["name"] for s in stages]


def test_run_records_the_documented_hierarchy(tmp_path: Path) -> None:
    """run(jit, *args, config=RunConfig(compile_profiling=True)): parse, compile{passes{per pass},
    codegen{kernel_codegen:<name>, orchestration_codegen}}, device_execution; >= 95% attributed;
    result.profile is the report's dict."""
    import torch

    from pypto.runtime import RunConfig, run

    kernel = _add_jit()
    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    result = run(kernel, a, b, out, config=RunConfig(compile_profiling=True, save_kernels_dir=str(tmp_path / "b")))
    assert torch.allclose(out, a + b)
    profile = result.profile
    assert profile is not None
    assert _names(profile["stages"]) == ["parse", "compile", "device_execution", UNATTRIBUTED]
    compile_stage = profile["stages"][1]
    assert _names(compile_stage["children"]) == ["passes", "codegen"]
    assert len(compile_stage["children"][0]["children"]) == 49
    assert _names(compile_stage["children"][1]["children"]) == ["kernel_codegen:add_kernel_incore_0", "orchestration_codegen"]
    assert _attributed(profile["stages"], profile["total_seconds"]) >= 0.95
    written = json.loads((tmp_path / "b" / "report" / "pipeline_profile.json").read_text())
    assert written == profile
    # a second run of the same specialisation is a compile-cache hit: no parse, no compile
    again = run(kernel, a, b, out, config=RunConfig(compile_profiling=True, save_kernels_dir=str(tmp_path / "b")))
    assert _names(again.profile["stages"]) == ["device_execution", UNATTRIBUTED]


def test_env_profiles_each_jit_call_on_its_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PYPTO_COMPILE_PROFILING=1 and a @pl.jit call: the report of that call, total = its stages + (unattributed)."""
    import torch

    from pypto.runtime import RunConfig

    monkeypatch.setenv("PYPTO_COMPILE_PROFILING", "1")
    kernel = _add_jit()
    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    kernel(a, b, out, config=RunConfig(save_kernels_dir=str(tmp_path / "b")))
    assert torch.allclose(out, a + b)
    data = json.loads((tmp_path / "b" / "report" / "pipeline_profile.json").read_text())
    assert _names(data["stages"]) == ["parse", "compile", "device_execution", UNATTRIBUTED]
    assert _attributed(data["stages"], data["total_seconds"]) >= 0.95
    text = (tmp_path / "b" / "report" / "pipeline_profile.txt").read_text()
    assert "kernel_codegen:add_kernel_incore_0" in text and "(unattributed)" in text


def test_seed_run_form_with_tensor_specs(tmp_path: Path) -> None:
    """The seed's run(program=, tensor_specs=, golden=, config=RunConfig(compile_profiling=True))."""
    import torch

    from pypto.runtime import RunConfig, ScalarSpec, TensorSpec, run

    program = kernel("add", tmp_path)
    specs = [
        TensorSpec("a", [128, 128], torch.float32, init_value=torch.randn),
        TensorSpec("b", [128, 128], torch.float32, init_value=2.0),
        TensorSpec("out", [128, 128], torch.float32, is_output=True),
    ]

    def golden(tensors, params):
        tensors["out"][:] = tensors["a"] + tensors["b"]

    cfg = RunConfig(compile_profiling=True, save_kernels_dir=str(tmp_path / "b"))
    result = run(program=program, tensor_specs=specs, golden=golden, config=cfg)
    assert result.passed is True and result.error is None
    assert _names(result.profile["stages"]) == ["compile", "golden_write", "device_execution", UNATTRIBUTED]
    assert _names(result.profile["stages"][0]["children"]) == ["passes", "codegen"]
    assert _attributed(result.profile["stages"], result.profile["total_seconds"]) >= 0.95
    assert "def compute_golden(tensors, params):" in (tmp_path / "b" / "golden.py").read_text()

    def wrong(tensors, params):
        tensors["out"][:] = tensors["a"] - tensors["b"]

    positional = run(program, specs, wrong, RunConfig(save_kernels_dir=str(tmp_path / "c")))
    assert positional.passed is False and "'out'" in positional.error and positional.profile is None
    with pytest.raises(ValueError, match="ctype"):
        ScalarSpec("n", 3, ctype="int8")
    with pytest.raises(TypeError, match="not both"):
        run(program, torch.zeros(1), tensor_specs=specs)


def test_compile_cache_hits_and_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second compile of the same specialisation is a cache hit, also from a new @pl.jit object of
    the same source; an option or environment variable that changes the output is a miss."""
    import torch

    from pypto.driver import compile_cache
    from pypto.runtime import RunConfig

    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    cfg = RunConfig(save_kernels_dir=str(tmp_path / "b"))
    first = _add_jit().compile(a, b, out, config=cfg)
    hits = compile_cache.stats["hits"]
    assert _add_jit().compile(a, b, out, config=cfg) is first  # a new object, the same source
    assert compile_cache.stats["hits"] == hits + 1
    dumps = _add_jit().compile(a, b, out, config=RunConfig(save_kernels_dir=str(tmp_path / "d"), dump_passes=True))
    assert dumps is not first and (dumps.output_dir / "passes_dump").is_dir()
    other_shape = _add_jit().compile(torch.randn(64, 128), torch.randn(64, 128), torch.zeros(64, 128), config=cfg)
    assert other_shape is not first
    monkeypatch.setenv("PYPTO_EMIT_PTO_LOC", "0")
    assert _add_jit().compile(a, b, out, config=cfg) is not first
    monkeypatch.delenv("PYPTO_EMIT_PTO_LOC")
    import shutil

    shutil.rmtree(first.output_dir)  # a removed build compiles again
    assert _add_jit().compile(a, b, out, config=cfg).output_dir.is_dir()


def test_source_hash_follows_the_source_and_constants() -> None:
    from pypto.driver.compile_cache import source_hash

    scale = 2

    def f(x):
        return x * scale

    def g(x):
        return x * scale + 0

    h1 = source_hash(f, lambda v: False)
    assert h1 == source_hash(f, lambda v: False)
    assert h1 != source_hash(g, lambda v: False)
    scale = 3  # noqa: F841 - read through f's closure
    assert source_hash(f, lambda v: False) != h1


REBOUND_KERNELS = '''
import pypto.language as pl

DT = pl.FP32
SCALE = 2.0


def make_cast():
    @pl.jit
    def cast_round_trip(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.cast(a, DT)
            out[:] = pl.cast(t, pl.FP32)
        return out

    return cast_round_trip


@pl.jit
def scaled(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(a, SCALE)
    return out
'''


def test_a_constant_bound_to_another_value_compiles_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The front end reads a kernel's module constants when it parses it; one bound to another value since
    (a notebook cell run again with ``DT = pl.FP16``, a module constant changed) is a new compile, from a new
    ``@pl.jit`` object (the dtype was not in the key: the cache gave the FP32 build) and from the same one
    (the hash was taken once: the old scale)."""
    import importlib

    import torch

    import pypto.language as pl
    from pypto.runtime import RunConfig

    (tmp_path / "rebound_kernels.py").write_text(REBOUND_KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("rebound_kernels")
    a = torch.full((64, 64), 1.0 + 2.0**-12)  # FP16 rounds it to 1.0, FP32 keeps it
    outs = []
    for dt in (pl.FP32, pl.FP16):
        mod.DT = dt
        out = torch.zeros(64, 64)
        mod.make_cast()(a, out, config=RunConfig(save_kernels_dir=str(tmp_path / f"cast_{dt.dtype_name}")))
        outs.append(out[0, 0].item())
    assert outs == [1.0 + 2.0**-12, 1.0], outs
    outs = []
    for scale in (2.0, 3.0, 2.0):
        mod.SCALE = scale
        out = torch.zeros(64, 64)
        mod.scaled(torch.ones(64, 64), out, config=RunConfig(save_kernels_dir=str(tmp_path / f"scaled_{scale}")))
        outs.append(out[0, 0].item())
    assert outs == [2.0, 3.0, 2.0], outs


def test_source_hash_reads_the_annotations_and_the_dsl_constants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names that only an annotation reads (a string under ``from __future__ import annotations``) count,
    and so do the constants the front end reads besides numbers and strings: ``pl`` dtypes, enum members,
    ``pl.dynamic`` extents and None."""
    import importlib

    import pypto.language as pl
    from pypto.driver.compile_cache import SourceKey

    (tmp_path / "annotated_fn.py").write_text(
        "from __future__ import annotations\n\n\ndef f(x: Holder[LAYOUT]) -> None:\n    return None\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("annotated_fn")
    seen = []
    key = SourceKey(mod.f, lambda v: False)
    for value in (pl.FP32, pl.FP16, pl.TileLayout.row_major, pl.TileLayout.col_major, pl.dynamic("M"), None, pl.FP32):
        mod.LAYOUT = value
        seen.append(key.current())
    assert len(set(seen[:-1])) == 6 and seen[-1] == seen[0], seen
