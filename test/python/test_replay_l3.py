"""Replaying an L3 (distributed) build (runtime-dfx-formats.md §9, upstream's "Replaying an L3 / distributed
build"): ``replay`` and ``python -m pypto.runtime.debug.replay`` take the L3 path when the directory has
``orchestration/host_orch.py`` and no top-level ``kernel_config.py``. Before, such a build was refused ("replay
runs single-chip builds only")."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import dist_l3_programs as p3
import pytest
import torch
from replay_build import snapshot

from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.debug import replay, replay_main

UNIT = Path("next_levels/scale_add/ptoas/scale_add_k.pto")


@pytest.fixture
def l3_build(tmp_path: Path) -> Path:
    """``chip_host`` (y[r] = x[r] * 3 + r on ranks 0 and 1) compiled for two ranks."""
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    dc = DistributedConfig(device_ids=[0, 1], timeout_s=60.0, num_sub_workers=0)
    compiled = p3.chip_host.compile(x, y, config=RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "b")))
    return Path(compiled.output_dir)


def _edit_scale(build: Path, new: str) -> Path:
    """The kernel's 3.0 becomes ``new`` in its ``.pto``, made newer than its ``.cpp``."""
    pto = build / UNIT
    text = pto.read_text()
    assert "arith.constant 3.000000e+00 : f32" in text
    pto.write_text(text.replace("arith.constant 3.000000e+00 : f32", f"arith.constant {new} : f32", 1))
    st = pto.with_suffix(".cpp").stat()
    os.utime(pto, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    return pto


def test_replay_runs_an_edited_l3_build_on_every_rank_with_dfx(l3_build: Path, own_dfx_flags: None) -> None:
    _edit_scale(l3_build, "5.000000e+00")
    x, y = torch.randn(4, 2, p3.N), torch.zeros(4, 2, p3.N)
    run = replay(l3_build, x, y, config=RunConfig(enable_chip_swimlane=4, enable_dump_args=2))
    for r in range(2):  # the edited .pto ran: x * 5 + r
        assert torch.allclose(y[r], x[r] * 5 + r, atol=1e-5)
    assert run.world_size == 2 and all(rank.cycles > 0 for rank in run.ranks)
    assert "2 ranks" in run.summary()
    kernel_cpp = next((l3_build / "next_levels/scale_add/kernels").rglob("scale_add_k.cpp")).read_text()
    assert "5.0" in kernel_cpp  # the .pto spliced into the sub-build's kernel C++
    for r in range(2):
        d = l3_build / f"dfx_outputs/rank{r}/d0"
        assert len(json.loads((d / "chip_swimlane_records.json").read_text())["aicore_tasks"]) == 1
        assert json.loads((d / "args_dump/args_dump.json").read_text())["dump_args_level"] == 2


@pytest.mark.parametrize("command", [["-m", "pypto.runtime.debug.replay", "{build}"], ["{build}/debug/run.py"]],
                         ids=["replay_cli", "debug_run_py"])  # fmt: skip
def test_replay_cli_and_debug_run_py_of_an_l3_build(l3_build: Path, command: list[str]) -> None:
    argv = [part.format(build=l3_build) for part in command]
    done = subprocess.run([sys.executable, *argv, "--dep-gen"], capture_output=True, text=True, check=False,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"^2 ranks, \d+ simulated cycles", done.stdout, re.M), done.stdout
    assert "dfx_outputs/rank0/d0/deps.json" in done.stdout and "dfx_outputs/rank1/d0/deps.json" in done.stdout


def _one_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_a_broken_l3_sidecar_is_named_and_nothing_changes(l3_build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit_scale(l3_build, "5.000000e+00")  # a splice that must not happen
    (l3_build / "distributed_meta.json").write_text('{"schema": 2}')
    before = snapshot(l3_build)
    assert replay_main([str(l3_build)]) == 1
    err = _one_error(capsys)
    assert "distributed_meta.json" in err and "malformed" in err, err
    assert snapshot(l3_build) == before


def test_a_broken_pto_in_a_sub_build_is_located_and_nothing_changes(
    l3_build: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit_scale(l3_build, "bogus")
    before = snapshot(l3_build)
    assert replay_main([str(l3_build)]) == 1
    err = _one_error(capsys)
    assert re.search(r"next_levels/scale_add/ptoas/scale_add_k\.pto:\d+:\d+", err), err
    assert snapshot(l3_build) == before


@pytest.mark.parametrize(
    ("host", "shapes"),
    [
        (p3.put_host, [(2, 1, p3.N), (2, 1, p3.N)]),  # kernel-body put / notify / wait
        (p3.collective_host, [(2, 1, p3.N), (2, 1, p3.N), (2, 1, p3.N), (2, 2, p3.N)]),  # window collectives
    ],
    ids=["put_notify_wait", "collectives"],
)
def test_replay_gives_what_the_compiled_program_gives(
    tmp_path: Path, host: object, shapes: list[tuple[int, ...]]
) -> None:
    """Builds whose sub-builds are not all single-chip builds of .pto units (comm programs, built-in levels):
    the replay of the directory computes what calling the compiled program computes."""
    torch.manual_seed(3)
    args = [torch.randn(*shapes[0])] + [torch.zeros(*s) for s in shapes[1:]]
    dc = DistributedConfig(device_ids=[0, 1], timeout_s=60.0, num_sub_workers=0)
    compiled = host.compile(*args, config=RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "b")))
    compiled(*args)
    again = [args[0]] + [torch.zeros(*s) for s in shapes[1:]]
    replay(Path(compiled.output_dir), *again)
    for got, want in zip(again[1:], args[1:], strict=True):
        assert torch.equal(got, want)


def test_replay_of_a_build_with_a_torch_form_rank_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A per-rank program built as its torch form (``comm_meta.json``, no ``kernel_config.py`` nor ``.pto``) is
    not a single-chip build to check or splice: the replay runs it as the compiled program does."""
    import pypto.driver.distributed as driver

    monkeypatch.setattr(driver, "needs_torch_form", lambda program: True)
    torch.manual_seed(4)
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    dc = DistributedConfig(device_ids=[0, 1], timeout_s=60.0, num_sub_workers=0)
    compiled = p3.put_host.compile(x, y, config=RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "b")))
    assert (Path(compiled.output_dir) / "next_levels/put_next/comm_meta.json").is_file()
    again = torch.zeros(2, 1, p3.N)
    replay(Path(compiled.output_dir), x, again)
    assert torch.equal(again, torch.roll(x + 1, 1, dims=0))  # y[r] = x[r-1] + 1
