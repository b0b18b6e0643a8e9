"""The suite's run-time DFX flags (runtime-dfx-formats.md §1): every run in the tests collects what they
ask for, as upstream's ``--enable-pmu`` and friends do.

    pytest --enable-chip-swimlane | --chip-swimlane-level N   --dump-args [N]   --enable-pmu [N]
           --enable-dep-gen   --enable-scope-stats   --enable-incore-trace
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.runtime import config as run_config
from pypto.runtime.config import set_dfx_defaults


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pypto-dfx", "run-time DFX collection for every run in the tests")
    group.addoption("--enable-chip-swimlane", action="store_true", help="swimlane records at level 4")
    group.addoption("--chip-swimlane-level", type=int, default=None, metavar="N", help="swimlane records at level N (0-4)")
    group.addoption("--dump-args", nargs="?", type=int, const=1, default=0, metavar="N", help="args dump level (bare: 1)")
    group.addoption("--enable-pmu", nargs="?", type=int, const=2, default=0, metavar="N", help="PMU event type (bare: 2)")
    group.addoption("--enable-dep-gen", action="store_true", help="deps.json")
    group.addoption("--enable-scope-stats", action="store_true", help="scope_stats.jsonl")
    group.addoption("--enable-incore-trace", action="store_true", help="incore/<task>_<kernel>/ traces and metrics")


def pytest_configure(config: pytest.Config) -> None:
    level = config.getoption("--chip-swimlane-level")
    swimlane = level if level is not None else (4 if config.getoption("--enable-chip-swimlane") else 0)
    set_dfx_defaults(
        enable_chip_swimlane=swimlane,
        enable_dump_args=config.getoption("--dump-args"),
        enable_pmu=config.getoption("--enable-pmu"),
        enable_dep_gen=config.getoption("--enable-dep-gen"),
        enable_scope_stats=config.getoption("--enable-scope-stats"),
        enable_incore_trace=config.getoption("--enable-incore-trace"),
    )


@pytest.fixture
def own_dfx_flags():
    """For tests that set the DFX flags themselves: no suite defaults inside, the suite's back after."""
    saved = dict(run_config._DFX_DEFAULTS)
    set_dfx_defaults()
    yield
    set_dfx_defaults(**saved)


@pytest.fixture
def window_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of this test's own for multi-chip window files (``PYPTO_WINDOW_DIR``): a test that
    checks its windows are removed must not see another run's on a shared machine."""
    folder = tmp_path_factory.mktemp("windows")
    monkeypatch.setenv("PYPTO_WINDOW_DIR", str(folder))
    return folder
