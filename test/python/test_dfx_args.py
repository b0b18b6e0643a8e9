"""``enable_dump_args`` (runtime-dfx-formats.md §6): ``args_dump/args_dump.json`` + ``args.bin`` on real
runs, levels 2 (every argument) and 1 (marked tensors), and the ``dump_viewer`` tool that reads them."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

import pypto.language as pl
from pypto.ir import compile as pypto_compile
from pypto.runtime import RunConfig, run
from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults
from pypto.runtime.dfx.args_dump import scalar_value
from pypto.tools import dump_viewer

MANIFEST_KEYS = [
    "run_dir", "bin_format", "dump_args_level", "total_args", "before_dispatch", "after_completion", "input_args",
    "output_args", "inout_args", "truncated_args", "dropped_records", "dropped_overwrite", "bin_file", "args",
]  # fmt: skip
ARG_KEYS = [
    "task_id", "func_id", "arg_index", "role", "stage", "kind", "dtype", "value", "is_contiguous", "shape",
    "strides", "start_offset", "numel", "bin_offset", "bin_size", "truncated", "overwritten",
]  # fmt: skip


pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


@pl.jit
def dump_me(a: pl.Tensor, acc: pl.InOut[pl.Tensor], out: pl.Out[pl.Tensor]):
    """Tasks 0, 1: ``rows`` (scalar i, In a, Out out); task 2: ``accum`` (InOut acc, In out)."""
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            t = pl.slice(a, [32, 64], [i * 32, 0])
            out = pl.assemble(out, pl.add(t, t), [i * 32, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="accum"):
        acc[:] = pl.add(acc, out)
    return acc, out


@pl.program
class Scaled:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self, a: pl.Tensor[[32, 64], pl.FP32], s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [32, 64])
        pl.store(pl.muls(t, s), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, a: pl.Tensor[[32, 64], pl.FP32], s: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]
    ) -> pl.Tensor[[32, 64], pl.FP32]:
        pl.dump_tag(out)
        out = self.k(a, s, out)
        return out


@pl.jit
def dump_acc(a: pl.Tensor, acc: pl.InOut[pl.Tensor], out: pl.Out[pl.Tensor]):
    """``dump_me`` with ``acc`` tagged: only task 2 (``accum``) receives it."""
    pl.dump_tag(acc)
    for i in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            t = pl.slice(a, [32, 64], [i * 32, 0])
            out = pl.assemble(out, pl.add(t, t), [i * 32, 0])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="accum"):
        acc[:] = pl.add(acc, out)
    return acc, out


def _dump_me(build: Path, kernel: Any = dump_me, **flags: Any) -> tuple[dict[str, Any], bytes, dict[str, torch.Tensor]]:
    torch.manual_seed(0)
    t = {"a": torch.randn(64, 64), "acc": torch.randn(64, 64), "out": torch.zeros(64, 64)}
    t["acc0"] = t["acc"].clone()
    kernel(t["a"], t["acc"], t["out"], config=RunConfig(save_kernels_dir=str(build), **flags))
    torch.testing.assert_close(t["acc"], t["acc0"] + 2 * t["a"])
    d = build / "dfx_outputs" / "args_dump"
    return json.loads((d / "args_dump.json").read_text()), (d / "args.bin").read_bytes(), t


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], bytes, dict[str, torch.Tensor], Path]:
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    try:
        build = tmp_path_factory.mktemp("args") / "build"
        m, blob, t = _dump_me(build, enable_dump_args=2)
    finally:
        set_dfx_defaults(**saved)
    return m, blob, t, build / "dfx_outputs" / "args_dump"


def _payload(arg: dict[str, Any], blob: bytes) -> np.ndarray:
    raw = blob[arg["bin_offset"] : arg["bin_offset"] + arg["bin_size"]]
    return np.frombuffer(raw, dtype="<f4").reshape(arg["shape"])


def _rows(m: dict[str, Any]) -> list[tuple[int, str, int, str, str]]:
    return [(int(a["task_id"], 16), a["stage"], a["arg_index"], a["role"], a["kind"]) for a in m["args"]]


def test_manifest_keys_counts_and_order(full) -> None:
    m, blob, _, _ = full
    assert list(m) == MANIFEST_KEYS
    assert all(list(a) == ARG_KEYS for a in m["args"])
    assert m["bin_format"] == {"type": "logical_contiguous", "byte_order": "little_endian"}
    assert m["dump_args_level"] == 2 and m["bin_file"] == "args.bin"
    # before: the values going in (In, InOut, scalars); after: the values coming out (Out, InOut)
    assert _rows(m) == [
        (0, "before_dispatch", 0, "input", "scalar"), (0, "before_dispatch", 1, "input", "tensor"),
        (0, "after_completion", 2, "output", "tensor"),
        (1, "before_dispatch", 0, "input", "scalar"), (1, "before_dispatch", 1, "input", "tensor"),
        (1, "after_completion", 2, "output", "tensor"),
        (2, "before_dispatch", 0, "inout", "tensor"), (2, "before_dispatch", 1, "input", "tensor"),
        (2, "after_completion", 0, "inout", "tensor"),
    ]  # fmt: skip
    counts = [
        m[k] for k in ("total_args", "before_dispatch", "after_completion", "input_args", "output_args", "inout_args")
    ]
    assert counts == [9, 6, 3, 5, 2, 2]
    assert [m[k] for k in ("truncated_args", "dropped_records", "dropped_overwrite")] == [0, 0, 0]
    assert m["args"][0]["task_id"] == "0x0000000000000000" and m["args"][-1]["task_id"] == "0x0000000000000002"
    # func_id: the program's kernel functions in module order (rows 0, accum 1), as deps.json numbers them
    assert [a["func_id"] for a in m["args"]] == [[0]] * 6 + [[1]] * 3
    scalars = [a for a in m["args"] if a["kind"] == "scalar"]
    assert [(a["value"], a["dtype"], a["bin_size"], a["shape"], a["numel"]) for a in scalars] == [
        (0, "INDEX", 0, [], 1), (1, "INDEX", 0, [], 1)
    ]  # fmt: skip
    tensors = [a for a in m["args"] if a["kind"] == "tensor"]
    assert all(
        (a["dtype"], a["shape"], a["strides"], a["numel"], a["start_offset"], a["bin_size"], a["is_contiguous"])
        == ("FP32", [64, 64], [64, 1], 4096, 0, 4096 * 4, True)
        for a in tensors
    )
    assert not any(a["truncated"] or a["overwritten"] for a in m["args"])
    # each distinct tensor state is stored once, in manifest order, and they fill args.bin exactly: `a`
    # (read by tasks 0 and 1) and task 1's `out` (read by task 2) are shared; a scalar sits at the end so far
    size = 4096 * 4
    offsets = [0, 0, size, 2 * size, 0, 2 * size, 3 * size, 2 * size, 4 * size]
    assert [a["bin_offset"] for a in m["args"]] == offsets and len(blob) == 5 * size


def test_payloads_are_the_tensors_before_and_after(full) -> None:
    m, blob, t, _ = full
    a, acc0, acc, out = (t[k].numpy() for k in ("a", "acc0", "acc", "out"))
    by = {
        (int(x["task_id"], 16), x["stage"], x["arg_index"]): _payload(x, blob)
        for x in m["args"]
        if x["kind"] == "tensor"
    }
    half = np.zeros_like(out)
    half[:32] = 2 * a[:32]
    np.testing.assert_array_equal(by[0, "before_dispatch", 1], a)
    np.testing.assert_array_equal(by[1, "before_dispatch", 1], a)
    np.testing.assert_array_equal(by[0, "after_completion", 2], half)  # task 0 wrote the first 32 rows
    np.testing.assert_array_equal(by[1, "after_completion", 2], out)
    np.testing.assert_array_equal(by[2, "before_dispatch", 0], acc0)  # InOut: its value going in ...
    np.testing.assert_array_equal(by[2, "before_dispatch", 1], out)
    np.testing.assert_array_equal(by[2, "after_completion", 0], acc)  # ... and coming out
    assert not np.array_equal(acc0, acc)


def test_same_run_same_bytes(full, tmp_path: Path) -> None:
    m, blob, _, _ = full
    m2, blob2, _ = _dump_me(tmp_path / "again", enable_dump_args=2)
    assert blob2 == blob
    assert {**m2, "run_dir": None} == {**m, "run_dir": None}
    assert m2["run_dir"] == str(tmp_path / "again")


def test_level1_dumps_only_the_tagged_tensors(full, tmp_path: Path) -> None:
    m2, blob2, _, _ = full
    m, blob, _ = _dump_me(tmp_path / "l1", dump_acc, enable_dump_args=1)
    assert m["dump_args_level"] == 1
    assert _rows(m) == [(2, "before_dispatch", 0, "inout", "tensor"), (2, "after_completion", 0, "inout", "tensor")]
    assert (m["total_args"], m["inout_args"], m["input_args"], m["output_args"]) == (2, 2, 0, 0)
    # the same payloads as the full dump's rows for acc
    full_rows = {
        (x["task_id"], x["stage"], x["arg_index"]): _payload(x, blob2) for x in m2["args"] if x["kind"] == "tensor"
    }
    for x in m["args"]:
        np.testing.assert_array_equal(_payload(x, blob), full_rows[x["task_id"], x["stage"], x["arg_index"]])
    # nothing marked: an empty dump
    m0, blob0, _ = _dump_me(tmp_path / "none", enable_dump_args=1)
    assert m0["total_args"] == 0 and m0["args"] == [] and blob0 == b""
    # level 2 ignores the tags: every argument, as for the untagged kernel
    m3, blob3, _ = _dump_me(tmp_path / "l2", dump_acc, enable_dump_args=2)
    assert _rows(m3) == _rows(m2) and blob3 == blob2


def test_call_marks_and_scalar_spelling(tmp_path: Path) -> None:
    """``pl.dump_tag(out)`` before the kernel call marks ``out`` for level 1; level 2 dumps the FP32
    scalar too, spelling NaN and the infinities as §6 says."""
    compiled = pypto_compile(Scaled, output_dir=str(tmp_path / "scaled"))
    a = torch.randn(32, 64)
    spelled = []
    for s, want in ((float("nan"), None), (float("inf"), "$Inf"), (float("-inf"), "-$Inf"), (1.5, 1.5)):
        out = torch.zeros(32, 64)
        run(compiled, a, s, out, config=RunConfig(enable_dump_args=2))
        text = (tmp_path / "scaled" / "dfx_outputs" / "args_dump" / "args_dump.json").read_text()
        assert "NaN" not in text and "Infinity" not in text
        scalar = next(x for x in json.loads(text)["args"] if x["kind"] == "scalar")
        assert (scalar["dtype"], scalar["arg_index"], scalar["bin_size"]) == ("FP32", 1, 0)
        spelled.append(scalar["value"] == want)
    assert all(spelled)
    out = torch.zeros(32, 64)
    run(compiled, a, 2.0, out, config=RunConfig(enable_dump_args=1))
    d = tmp_path / "scaled" / "dfx_outputs" / "args_dump"
    m = json.loads((d / "args_dump.json").read_text())
    assert _rows(m) == [(0, "after_completion", 2, "output", "tensor")]
    np.testing.assert_array_equal(_payload(m["args"][0], (d / "args.bin").read_bytes()), out.numpy())
    np.testing.assert_array_equal(out.numpy(), 2 * a.numpy())


def test_scalar_encoder() -> None:
    assert scalar_value(float("nan")) is None and scalar_value(np.float32("nan")) is None
    assert scalar_value(math.inf) == "$Inf" and scalar_value(-math.inf) == "-$Inf"
    assert scalar_value(np.float64("-inf")) == "-$Inf"
    assert scalar_value(2.5) == 2.5 and scalar_value(np.int64(7)) == 7 and scalar_value(True) is True


def test_bf16_payload_is_its_bits(tmp_path: Path) -> None:
    @pl.jit
    def bf16_add(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="bf16_k"):
            out[:] = pl.add(a, a)
        return out

    a = torch.randn(32, 64).to(torch.bfloat16)
    out = torch.zeros(32, 64, dtype=torch.bfloat16)
    bf16_add(a, out, config=RunConfig(save_kernels_dir=str(tmp_path / "b"), enable_dump_args=2))
    d = tmp_path / "b" / "dfx_outputs" / "args_dump"
    m, blob = json.loads((d / "args_dump.json").read_text()), (d / "args.bin").read_bytes()
    for x, t in zip(m["args"], (a, out), strict=True):
        assert x["dtype"] == "BF16" and x["bin_size"] == 32 * 64 * 2
        bits = np.frombuffer(blob[x["bin_offset"] : x["bin_offset"] + x["bin_size"]], "<u2")
        np.testing.assert_array_equal(bits, t.view(torch.int16).numpy().view(np.uint16).reshape(-1))
    rc = dump_viewer.main([str(d), "--export", "--role", "out"])
    assert rc == 0
    text = (d / "txt" / "task_0_after_out1.txt").read_text()
    assert f"[0, 1] {float(out[0, 1]):.7g}\n" in text  # the viewer widens BF16 bits to their values


# ---- dump_viewer -------------------------------------------------------------------------------


def test_viewer_table_and_filters(full, capsys: pytest.CaptureFixture[str]) -> None:
    _, _, _, d = full
    assert dump_viewer.main([str(d)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{d}: level 2, 9 of 9 args"
    assert lines[1].split() == ["idx", "task_id", "stage", "role", "arg", "dtype", "shape", "bytes"]
    assert lines[2].split() == ["0", "0x0000000000000000", "before_dispatch", "input", "0", "INDEX", "scalar", "0"]
    assert lines[8].split() == ["6", "0x0000000000000002", "before_dispatch", "inout", "0", "FP32", "64x64", "16384"]
    assert len(lines) == 11

    def idx(*argv: str) -> list[int]:
        assert dump_viewer.main([str(d), *argv]) == 0
        return [int(r.split()[0]) for r in capsys.readouterr().out.splitlines()[2:]]

    assert idx("--task", "2") == [6, 7, 8] and idx("--task", "0x1") == [3, 4, 5]
    assert idx("--stage", "after") == [2, 5, 8] and idx("--stage", "before_dispatch") == [0, 1, 3, 4, 6, 7]
    assert idx("--role", "inout") == [6, 8] and idx("--role", "out") == [2, 5]
    assert idx("--arg", "0", "--stage", "before") == [0, 3, 6]
    assert idx("--index", "4") == [4] and idx("--task", "2", "--role", "output") == []
    # the default: the newest build_output/*/dfx_outputs/args_dump
    os.environ["PYPTO_PROG_BUILD_DIR"] = str(d.parents[2])
    try:
        assert dump_viewer.main([]) == 0
    finally:
        del os.environ["PYPTO_PROG_BUILD_DIR"]
    assert capsys.readouterr().out.splitlines()[0] == f"{d}: level 2, 9 of 9 args"


def test_viewer_export(full, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    m, blob, t, d = full
    out = tmp_path / "txt"
    assert dump_viewer.main([str(d), "--export", "--out", str(out)]) == 0
    assert capsys.readouterr().out.rstrip().endswith(f"exported 9 file(s) to {out}")
    assert sorted(p.name for p in out.iterdir()) == sorted([
        "task_0_before_in0.txt", "task_0_before_in1.txt", "task_0_after_out2.txt",
        "task_1_before_in0.txt", "task_1_before_in1.txt", "task_1_after_out2.txt",
        "task_2_before_inout0.txt", "task_2_before_in1.txt", "task_2_after_inout0.txt",
    ])  # fmt: skip
    text = (out / "task_2_after_inout0.txt").read_text()
    header, rest = text.split("\n## overview", 1)
    assert '\ndtype: "FP32"\n' in header and "\nshape: [64, 64]\n" in header and '\nrole: "inout"\n' in header
    grid, detail = rest.split("\n## detail\n")
    acc = t["acc"].numpy()
    assert f"{acc[0, 0]:.7g}" in grid.splitlines()[2] and "..." in grid
    detail_lines = detail.splitlines()
    assert len(detail_lines) == 64 * 64
    assert detail_lines[65] == f"[1, 1] {acc[1, 1]:.7g}"
    assert all(
        float(line.split("] ")[1]) == pytest.approx(float(acc.reshape(-1)[i]), rel=1e-6)
        for i, line in enumerate(detail_lines)
    )
    scalar = (out / "task_1_before_in0.txt").read_text()
    assert '\nkind: "scalar"\n' in scalar and "value = 1\n" in scalar


def _broken(tmp_path: Path, full_dir: Path, manifest: str | None, blob: bytes | None) -> Path:
    d = tmp_path / "args_dump"
    d.mkdir()
    (d / "args_dump.json").write_text(manifest if manifest is not None else (full_dir / "args_dump.json").read_text())
    (d / "args.bin").write_bytes(blob if blob is not None else (full_dir / "args.bin").read_bytes())
    return d


@pytest.mark.parametrize(
    ("manifest", "blob", "file", "what"),
    [
        ("{not json", None, "args_dump.json", "not JSON"),
        ('{"args": [{"task_id": "0x0"}]}', None, "args_dump.json", "args[0] lacks arg_index"),
        (None, b"\0" * 10, "args.bin", "args[1] needs bytes [0, +16384) but the file has 10"),
        ("SHAPE", None, "args_dump.json", "args[0] has shape None, expected a list of sizes"),
        ("OFFSET", None, "args_dump.json", "args[0] has bin_offset 'abc', expected a byte count"),
        ("NEGATIVE", None, "args_dump.json", "args[0] has bin_offset -10, expected a byte count"),
    ],
)
def test_viewer_bad_input_is_one_line_exit_1(
    full,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    manifest: str | None,
    blob: bytes | None,
    file: str,
    what: str,
) -> None:
    edits = {"SHAPE": ("shape", None), "OFFSET": ("bin_offset", "abc"), "NEGATIVE": ("bin_offset", -10)}
    if manifest in edits:  # the run's manifest with one field of its first row broken (was an internal error)
        doc = json.loads((full[3] / "args_dump.json").read_text())
        key, value = edits[manifest]
        doc["args"][0][key] = value
        manifest = json.dumps(doc)
    d = _broken(tmp_path, full[3], manifest, blob)
    assert dump_viewer.main([str(d)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"dump_viewer: error: {d / file}: ") and what in err and err.count("\n") == 1


def test_viewer_module_entry_point(tmp_path: Path) -> None:
    """``python -m pypto.tools.dump_viewer``: a missing directory is one line on stderr, exit 1, no traceback."""
    missing = tmp_path / "nowhere"
    p = subprocess.run([sys.executable, "-m", "pypto.tools.dump_viewer", str(missing)], capture_output=True, text=True)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert p.stderr == f"dump_viewer: error: {missing}: no such directory\n"


@pl.jit
def mixed_epilogue(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    """A Group task: an AIC and an AIV kernel joined by a pipe (examples/advanced/03_mixed_kernel.py)."""
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="matmul_epilogue"):
        ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        c = pl.move(acc, target_memory=pl.Mem.Vec)
        pl.store(pl.relu(pl.add(c, pl.load(bias, [0, 0], [64, 64]))), [0, 0], y)
    return y


def test_mixed_task_is_one_task_with_both_kernels(tmp_path: Path) -> None:
    """A Group task's parts run one after the other: its inputs are dumped once, before the first part,
    its outputs after the last; its func_id lists both kernels."""
    a, b, bias, y = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)
    mixed_epilogue(a, b, bias, y, config=RunConfig(save_kernels_dir=str(tmp_path / "mix"), enable_dump_args=2))
    d = tmp_path / "mix" / "dfx_outputs" / "args_dump"
    m, blob = json.loads((d / "args_dump.json").read_text()), (d / "args.bin").read_bytes()
    assert _rows(m) == [
        (0, "before_dispatch", 0, "input", "tensor"), (0, "before_dispatch", 1, "input", "tensor"),
        (0, "before_dispatch", 2, "input", "tensor"), (0, "after_completion", 3, "output", "tensor"),
    ]  # fmt: skip
    assert all(x["func_id"] == [0, 1] for x in m["args"])
    np.testing.assert_array_equal(_payload(m["args"][3], blob), y.numpy())
    np.testing.assert_allclose(y.numpy(), torch.relu(a @ b + bias).numpy(), rtol=1e-3, atol=1e-3)


def test_a_mixed_tasks_bars_are_named_by_the_kernel_on_each_core(tmp_path: Path) -> None:
    """§3: a bar's name is its kernel's through deps.json's slots (AIC: slot 0; AIV: slot 1, else 2). The run's
    trace named both bars of a mixed task by the Group, and swimlane_converter both by the AIC kernel."""
    from pypto.tools.swimlane_converter import main as converter_main

    a, b, bias, y = torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)
    config = RunConfig(save_kernels_dir=str(tmp_path / "mix"), enable_chip_swimlane=2, enable_dep_gen=True)
    mixed_epilogue(a, b, bias, y, config=config)
    dfx = tmp_path / "mix" / "dfx_outputs"
    name_map = json.loads(next(dfx.glob("name_map_*.json")).read_text())["callable_id_to_name"]
    deps = json.loads((dfx / "deps.json").read_text())
    aic, aiv = (name_map[str(k)] for k in deps["tasks"][0]["kernel_ids"][:2])
    out = tmp_path / "converted.json"
    assert converter_main([str(dfx / "chip_swimlane_records.json"), "-o", str(out)]) == 0
    for trace in (next(dfx.glob("merged_swimlane_*.json")), out):
        bars = {(e["tid"] >= 10240, e["name"]) for e in json.loads(trace.read_text())["traceEvents"]
                if e["ph"] == "X" and e["pid"] == 4}  # fmt: skip
        assert bars == {(False, f"{aic}(t0)"), (True, f"{aiv}(t0)")}, trace.name


def test_viewer_points_at_a_multi_chip_builds_per_rank_dumps(full, tmp_path: Path, capsys, monkeypatch) -> None:
    """A multi-chip build keeps a dump per rank and dispatch (``dfx_outputs/rank{r}/d{k}/args_dump``): given
    the build, or run in its project with no argument, the viewer names them (it said no dump was there)."""
    import shutil

    build = tmp_path / "build_output" / "host_orch_1"
    for r in (0, 1):
        shutil.copytree(full[3], build / "dfx_outputs" / f"rank{r}" / "d0" / "args_dump")
    assert dump_viewer.main([str(build)]) == 1
    err = capsys.readouterr().err
    assert "an args dump per rank and dispatch" in err and str(build / "dfx_outputs" / "rank0" / "d0" / "args_dump") in err
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR", raising=False)
    assert dump_viewer.main([]) == 1
    assert "per rank and dispatch" in capsys.readouterr().err
    assert dump_viewer.main([str(build / "dfx_outputs" / "rank1" / "d0" / "args_dump")]) == 0
