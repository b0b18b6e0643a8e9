"""The run-time DFX flags (runtime-dfx-formats.md §1) and the swimlane records they write (§2)."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from dfx_kernels import chain as twice

from pypto.errors import InvalidArgumentError
from pypto.runtime import RunConfig
from pypto.runtime.config import PMU_EVENT_TYPES, set_dfx_defaults

pytestmark = pytest.mark.usefixtures("own_dfx_flags")  # these tests set the DFX flags themselves


def test_flags_normalize_and_force_save_kernels() -> None:
    c = RunConfig(enable_chip_swimlane=True, enable_pmu=True, enable_dump_args=True, enable_dep_gen=1)
    assert (c.enable_chip_swimlane, c.enable_pmu, c.enable_dump_args, c.enable_dep_gen) == (4, 2, 1, True)
    assert c.save_kernels and c.dfx_enabled
    assert RunConfig(enable_pmu=7).enable_pmu == 7 and RunConfig(enable_pmu=3).enable_pmu == 2  # invalid type -> 2
    off = RunConfig()
    assert not off.dfx_enabled and not off.save_kernels and off.enable_chip_swimlane == 0


@pytest.mark.parametrize(
    "flags", [{"enable_chip_swimlane": 5}, {"enable_chip_swimlane": -1}, {"enable_dump_args": 3}, {"enable_pmu": -2},
              {"enable_dep_gen": 2}, {"enable_chip_swimlane": "4"}]
)  # fmt: skip
def test_out_of_range_flags_are_value_errors(flags: dict[str, object]) -> None:
    """Any other value is a ValueError (issue 12), and an API error a ``pypto.errors`` class: both hold."""
    with pytest.raises(InvalidArgumentError, match=next(iter(flags))) as err:
        RunConfig(**flags)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(("env", "requested", "want"), [("4", 2, 4), ("8", True, 8), (" 5", 3, 5), ("7", 0, 0)])
def test_pmu_event_env_overrides_when_pmu_is_on(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, env: str, requested: object, want: int
) -> None:
    """§5: a valid ``SIMPLER_PMU_EVENT_TYPE`` overrides the requested type (an invalid one's fallback 2 too);
    with PMU off it turns nothing on."""
    monkeypatch.setenv("SIMPLER_PMU_EVENT_TYPE", env)
    assert RunConfig(enable_pmu=requested).enable_pmu == want
    assert not caplog.records


@pytest.mark.parametrize("env", ["3", "0", "-2", "abc", "", "99"])
def test_invalid_pmu_event_env_is_ignored_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, env: str
) -> None:
    """Upstream's ``resolve_pmu_event_type``: a value that is not an a2a3 type keeps the requested type."""
    monkeypatch.setenv("SIMPLER_PMU_EVENT_TYPE", env)
    with caplog.at_level(logging.WARNING, logger="pypto"):
        assert RunConfig(enable_pmu=7).enable_pmu == 7
    (warning,) = caplog.records
    assert warning.levelno == logging.WARNING
    assert f"SIMPLER_PMU_EVENT_TYPE={env!r}" in warning.getMessage() and "1, 2, 4, 5, 6, 7, 8" in warning.getMessage()


def test_pmu_event_env_reaches_pmu_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIMPLER_PMU_EVENT_TYPE", "5")
    _run(tmp_path, enable_pmu=2)
    header, *rows = (tmp_path / "build" / "dfx_outputs" / "pmu.csv").read_text().splitlines()
    assert "l0a_read_req" in header.split(",") and rows and all(r.endswith(",5") for r in rows)


def test_suite_defaults_apply_to_every_new_config() -> None:
    set_dfx_defaults(enable_pmu=4, enable_chip_swimlane=1)
    c = RunConfig()
    assert (c.enable_pmu, c.enable_chip_swimlane, c.save_kernels) == (4, 1, True)
    assert RunConfig(enable_pmu=0).enable_pmu == 0  # an explicit value wins
    set_dfx_defaults()
    with pytest.raises(ValueError, match="unknown DFX flag"):
        set_dfx_defaults(enable_everything=True)
    with pytest.raises(InvalidArgumentError, match="enable_chip_swimlane takes True/False or a level 0-4, got 7"):
        set_dfx_defaults(enable_pmu=2, enable_chip_swimlane=7)  # refused when set, not by every RunConfig
    assert RunConfig().enable_pmu == 0  # and the defaults stay as they were


def _pytest_with(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """pytest in a child on a one-test file beside this suite's conftest, with ``options``."""
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_one.py").write_text(
        "from pypto.runtime import RunConfig\n\n\ndef test_one():\n    assert RunConfig().enable_pmu == 4\n"
    )
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py", *options]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(
    ("options", "allowed"),
    [(["--chip-swimlane-level", "7"], "0-4"), (["--enable-pmu", "-3"], str(PMU_EVENT_TYPES)),
     (["--dump-args", "3"], "0-2")],
)  # fmt: skip
def test_out_of_range_suite_options_are_usage_errors(tmp_path: Path, options: list[str], allowed: str) -> None:
    """The suite's flag options go through RunConfig's checks at startup: a bad value is one usage error
    naming the option and what it takes, not every test failing."""
    done = _pytest_with(tmp_path, "--enable-pmu", "4", *options)
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR:")]
    assert f"{' '.join(options)}: " in line and allowed in line and "Traceback" not in done.stderr
    ok = _pytest_with(tmp_path, "--enable-pmu", "4", "--chip-swimlane-level", "2")
    assert ok.returncode == pytest.ExitCode.OK, ok.stdout + ok.stderr  # good values still reach every RunConfig


def _run(tmp_path: Path, **flags: object) -> tuple[dict, Path]:
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    config = RunConfig(save_kernels_dir=str(tmp_path / "build"), **flags)
    twice(a, x, y, config=config)
    torch.testing.assert_close(y, 2 * a * a)
    path = tmp_path / "build" / "dfx_outputs" / "chip_swimlane_records.json"
    return (json.loads(path.read_text()) if path.exists() else {}), tmp_path / "build"


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_swimlane_levels_are_cumulative_and_agree(tmp_path: Path, level: int) -> None:
    records, _ = _run(tmp_path, enable_chip_swimlane=level)
    assert records["chip_swimlane_level"] == level
    rows = records["aicore_tasks"]
    assert len(rows) == 2 and all(len(r) == 6 and r[3] < r[4] for r in rows)
    assert ("aicpu_tasks" in records) is (level >= 2)
    assert ("aicpu_scheduler_phases" in records) is ("core_to_thread" in records["metadata"]) is (level >= 3)
    assert ("aicpu_orchestrator_phases" in records) is (level >= 4)
    assert records["metadata"]["core_types"] and records["metadata"]["num_cores"] == len(
        records["metadata"]["core_types"]
    )
    # collecting costs nothing in simulated cycles: level 1's rows are level 2's
    level1, _ = _run(tmp_path / "l1", enable_chip_swimlane=1)
    assert level1["aicore_tasks"] == rows


def test_no_flag_writes_no_dfx_outputs(tmp_path: Path) -> None:
    records, build = _run(tmp_path)
    assert records == {} and not (build / "dfx_outputs").exists()


def test_a_bare_program_run_with_a_flag_compiles_into_a_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A flag forces ``save_kernels``: ``run`` of a bare ``ir.Program`` (which it otherwise lowers in memory,
    writing nothing) compiles it into a build directory, as upstream's ``run`` does, and the run's artefacts go
    there: ``save_kernels_dir``, else ``build_output/<name>_<stamp>`` in the working folder."""
    from pypto.runtime import run

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR", raising=False)
    a, x, y = torch.randn(32, 64), torch.zeros(32, 64), torch.zeros(32, 64)
    program = twice.specialize(a, x, y)
    result = run(program, a, x, y)  # no flag: nothing written
    assert result.dfx_outputs == {} and not (tmp_path / "build_output").exists()
    y.zero_()
    result = run(program, a, x, y, config=RunConfig(enable_chip_swimlane=2))
    torch.testing.assert_close(y, 2 * a * a)
    (build,) = (tmp_path / "build_output").iterdir()
    records = build / "dfx_outputs" / "chip_swimlane_records.json"
    assert result.dfx_outputs["enable_chip_swimlane"][0] == records.resolve()
    assert json.loads(records.read_text())["chip_swimlane_level"] == 2
    assert (build / "passes_dump").is_dir() or (build / "report").is_dir()  # a build, not just the artefacts
    mine = tmp_path / "mine"
    run(program, a, x, y, config=RunConfig(enable_dep_gen=True, save_kernels_dir=str(mine)))
    assert json.loads((mine / "dfx_outputs" / "deps.json").read_text())["tasks"]
    assert len(list((tmp_path / "build_output").iterdir())) == 1


def test_a_failed_run_moves_the_artefacts_it_would_have_replaced_to_previous(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run that fails writes no artefact; the earlier run's stayed in ``dfx_outputs/``, read as this run's.
    Those the failed run's flags would have replaced now move to ``dfx_outputs/previous/`` (the multi-chip rule),
    the error says so, the user's own files and the other flags' artefacts stay, and the next run works."""
    import pypto.device.interpreter as interpreter
    from pypto.device.interpreter import DeviceError

    flags = {"enable_chip_swimlane": 4, "enable_pmu": 2}
    _, build = _run(tmp_path, **flags, enable_dep_gen=True)
    dfx = build / "dfx_outputs"
    (dfx / "my_notes.txt").write_text("mine")
    earlier = {p.name: p.read_bytes() for p in dfx.iterdir() if p.is_file()}
    assert {"chip_swimlane_records.json", "pmu.csv", "deps.json", "run_report.html"} <= set(earlier)

    def fails(*args: object, **kwargs: object) -> object:
        raise DeviceError("the kernel broke")

    monkeypatch.setattr(interpreter, "run_kernel", fails)
    with pytest.raises(DeviceError, match="the kernel broke") as e:
        _run(tmp_path, **flags)
    assert any("were moved to" in n and str(dfx / "previous") in n for n in getattr(e.value, "__notes__", [])), e.value
    moved = {p.name: p.read_bytes() for p in (dfx / "previous").iterdir()}
    assert set(moved) == {n for n in earlier if n.startswith(("chip_swimlane", "merged_swimlane", "name_map", "run_report"))
                          or n == "pmu.csv"}  # fmt: skip
    assert all(moved[n] == earlier[n] for n in moved)  # nothing lost
    assert {p.name for p in dfx.iterdir() if p.is_file()} == {"deps.json", "my_notes.txt"}  # not this run's flags
    with pytest.raises(DeviceError):  # a failure after a failure keeps the previous/ it found
        _run(tmp_path, **flags)
    assert {p.name: p.read_bytes() for p in (dfx / "previous").iterdir()} == moved
    monkeypatch.undo()
    _run(tmp_path, **flags)
    assert (dfx / "chip_swimlane_records.json").is_file() and (dfx / "pmu.csv").is_file()
