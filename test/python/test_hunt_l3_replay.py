"""Replaying an L3 (distributed) build the user has edited, broken or called wrongly: one located error line
(exit 1 from the command line), never an internal error, and nothing in the build changed when the replay
refuses (an edited ``.pto`` is not spliced, no binary cache dropped).

Every test works on a copy of one build of ``dist_l3_programs.chip_host`` (y[r] = x[r] * 3 + r on two ranks),
compiled once per module (mtimes kept).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dist_l3_programs as p3
import pytest
import torch
from replay_build import snapshot

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import InvalidArgumentError
from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.debug import replay, replay_main

SUB = Path("next_levels/scale_add")
UNIT = SUB / "ptoas/scale_add_k.pto"
META = "distributed_meta.json"


@pl.jit.host
def scalar_host(x: pl.Tensor[[4, 2, p3.N], pl.FP32], y: pl.Out[pl.Tensor[[4, 2, p3.N], pl.FP32]],
                k: pl.Scalar[pl.INT32]):  # fmt: skip
    for r in pl.range(pld.world_size()):
        p3.scale_add(x[r], y[r], k, device=r)


def _compile(host: Any, out: Path, *args: Any) -> Path:
    dc = DistributedConfig(device_ids=[0, 1], timeout_s=60.0, num_sub_workers=0)
    compiled = host.compile(*args, config=RunConfig(distributed_config=dc, save_kernels_dir=str(out)))
    return Path(compiled.output_dir)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    return _compile(p3.chip_host, tmp_path_factory.mktemp("hunt_l3") / "b", x, y)


@pytest.fixture
def build(built: Path, tmp_path: Path) -> Path:
    """A private copy of the module's build (mtimes kept), its kernel's 3.0 edited to 5.0 in the ``.pto``
    (newer than its ``.cpp``): a splice a refused replay must not make."""
    work = Path(shutil.copytree(built, tmp_path / "build"))
    pto = work / UNIT
    text = pto.read_text()
    pto.write_text(text.replace("arith.constant 3.000000e+00 : f32", "arith.constant 5.000000e+00 : f32", 1))
    st = pto.with_suffix(".cpp").stat()
    os.utime(pto, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    return work


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    return err


def _edit_meta(work: Path, change: Callable[[dict[str, Any]], Any]) -> None:
    meta = json.loads((work / META).read_text())
    replaced = change(meta)
    (work / META).write_text(json.dumps(meta if replaced is None else replaced))


@pytest.mark.parametrize(
    ("x", "y", "words"),
    [
        (torch.zeros(4, 2, 32), torch.zeros(4, 2, p3.N), ("'x'", "shape")),
        (torch.zeros(4, 2, p3.N), torch.zeros(4, 2, p3.N, dtype=torch.float16), ("'y'", "float16")),
    ],
    ids=["shape", "dtype"],
)
def test_a_wrong_tensor_is_refused_before_the_splice(build: Path, x: Any, y: Any, words: tuple[str, ...]) -> None:
    """Before: the edited .pto was spliced into the sub-build's kernel C++ (and its binary cache dropped), and
    only then did the program refuse the argument: a refused replay had changed the build."""
    before = snapshot(build)
    with pytest.raises(Exception) as info:  # noqa: PT011 - InvalidArgumentError / ArgumentTypeError
        replay(build, x, y)
    assert all(w in str(info.value) for w in words), info.value
    assert snapshot(build) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda m: [m],  # not an object
        lambda m: m.__setitem__("params", "x"),
        lambda m: m["params"][0].__setitem__("shape", "4x2"),
        lambda m: m["params"][0].pop("name"),
        lambda m: m["params"][1].__setitem__("direction", 3),
        lambda m: m["distributed_config"].__setitem__("device_ids", "01"),
        lambda m: m.__setitem__("next_levels", "scale_add"),
    ],
    ids=["list", "params_str", "shape_str", "no_name", "direction_int", "device_ids_str", "next_levels_str"],
)
def test_a_malformed_distributed_meta_is_named(build: Path, change: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: a distributed_meta.json of the wrong types was an internal error (AttributeError, KeyError,
    ValueError), or (device_ids a string) ran as if it were a list of its characters."""
    _edit_meta(build, change)
    before = snapshot(build)
    assert replay_main([str(build)]) == 1
    err = _one_error(capsys)
    assert f"{META}: error:" in err, err
    assert snapshot(build) == before


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.__setitem__("next_levels", []),
        lambda m: m["host_plan"]["dispatches"][0].__setitem__("program", "ghost"),
    ],
    ids=["next_levels_empty", "plan_names_ghost"],
)
def test_a_plan_dispatching_a_program_the_build_lacks_is_named(
    build: Path, change: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the edited .pto was spliced, then every rank failed with KeyError: 'scale_add' (an internal
    error, exit 2)."""
    _edit_meta(build, change)
    before = snapshot(build)
    assert replay_main([str(build)]) == 1
    err = _one_error(capsys)
    assert f"{META}: error:" in err and "next_levels" in err, err
    assert snapshot(build) == before


def test_a_sub_build_without_its_orchestration_is_named(build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the edited .pto was spliced, then each rank failed with 'orchestration/scale_add.py: missing'
    wrapped as an internal error (DistributedRunError, exit 2)."""
    (build / SUB / "orchestration/scale_add.py").unlink()
    before = snapshot(build)
    assert replay_main([str(build)]) == 1
    err = _one_error(capsys)
    assert "next_levels/scale_add/orchestration/scale_add.py: error: missing" in err, err
    assert snapshot(build) == before


def test_an_l3_build_without_host_orch_is_named(build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: without orchestration/host_orch.py the build (distributed_meta.json, next_levels/) was taken for a
    build of several Orchestration entries: 'replay one of next_levels/scale_add'."""
    (build / "orchestration/host_orch.py").unlink()
    before = snapshot(build)
    assert replay_main([str(build)]) == 1
    err = _one_error(capsys)
    assert "orchestration/host_orch.py: error: missing" in err and "replay one of" not in err, err
    assert snapshot(build) == before


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("x = torch.randn((4, 2, 64))", "x = torch.randn((4, 2, 32))"),
        ("return [('x', x), ('y', y)]", "return [('y', y), ('x', x)]"),
    ],
    ids=["shape", "order"],
)
def test_debug_run_py_names_distributed_meta(build: Path, old: str, new: str) -> None:
    """Before: a make_inputs of an L3 build's debug/run.py that did not fit was measured against
    'compiled_meta.json', a file the L3 build does not have at its root."""
    run_py = build / "debug/run.py"
    text = run_py.read_text()
    assert old in text
    run_py.write_text(text.replace(old, new, 1))
    before = snapshot(build)
    done = subprocess.run([sys.executable, str(run_py)], capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert META in done.stderr and "compiled_meta.json" not in done.stderr, done.stderr
    assert snapshot(build) == before


@pytest.fixture(scope="module")
def scalar_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``scalar_host`` (y[r] = x[r] * 3 + k on ranks 0 and 1) compiled with k = 7: the plan holds the 7."""
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    return _compile(scalar_host, tmp_path_factory.mktemp("hunt_l3_scalar") / "b", x, y, 7)


def test_a_scalar_other_than_the_traced_one_is_refused(scalar_build: Path) -> None:
    """Before: the host orchestrator's scalar is traced into the plan at compile time, and a replay given
    another value (k=1) silently ran with the traced one (y = 3x + 7), as if it had taken 1."""
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    before = snapshot(scalar_build)
    with pytest.raises(InvalidArgumentError, match=r"argument 'k' is 1.*7"):
        replay(scalar_build, x, y, 1)
    with pytest.raises(InvalidArgumentError, match=r"argument 'k' is 'a'.*7"):
        replay(scalar_build, x, y, "a")
    assert snapshot(scalar_build) == before
    replay(scalar_build, x, y, 7)
    assert torch.allclose(y[:2], x[:2] * 3 + 7, atol=1e-5)  # ranks 0 and 1


@pytest.mark.parametrize("command", [["-m", "pypto.runtime.debug.replay", "{build}"], ["{build}/debug/run.py"]],
                         ids=["replay_cli", "debug_run_py"])  # fmt: skip
def test_the_default_inputs_take_the_traced_scalar(scalar_build: Path, command: list[str]) -> None:
    """Before: the inputs made from the metadata (and debug/run.py's make_inputs) gave the scalar 1, which the
    run ignored (the plan holds the 7 it was traced with)."""
    run_py = (scalar_build / "debug/run.py").read_text()
    assert "k = 7" in run_py, run_py
    argv = [part.format(build=scalar_build) for part in command]
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr


def test_a_skipped_splice_says_why(build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: an L3 replay printed '[pto->cpp] skipped' without the reason a single-chip replay gives."""
    replay(build, rebuild_from_pto=False)
    assert "[pto->cpp] skipped (rebuild_from_pto=False); edited but not spliced: " + str(UNIT) in capsys.readouterr().out


def test_calling_the_compiled_program_with_another_scalar_is_refused(scalar_build: Path) -> None:
    """Before: ``DistributedCompiledProgram`` called with k=1 ran the plan traced with k=7 and said nothing; the
    check is the one replay makes (``check_host_args``), and the jit function itself compiles for the new value."""
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram

    program = DistributedCompiledProgram.from_dir(scalar_build)
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    with pytest.raises(InvalidArgumentError, match=r"argument 'k' is 1; this L3 build's plan was traced with k=7"):
        program(x, y, 1)
    program(x, y, 7)
    assert torch.allclose(y[:2], x[:2] * 3 + 7, atol=1e-5)
