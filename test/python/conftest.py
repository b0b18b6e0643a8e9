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
    """The options as the suite's DFX defaults; a value ``RunConfig`` refuses is a usage error here, naming
    the option (``run_config.check_dfx_flag`` says what it takes), not a failure of every test."""
    level = config.getoption("--chip-swimlane-level")
    swimlane = level if level is not None else (4 if config.getoption("--enable-chip-swimlane") else 0)
    flags = {  # RunConfig flag -> (its option, the value)
        "enable_chip_swimlane": ("--chip-swimlane-level" if level is not None else "--enable-chip-swimlane", swimlane),
        "enable_dump_args": ("--dump-args", config.getoption("--dump-args")),
        "enable_pmu": ("--enable-pmu", config.getoption("--enable-pmu")),
        "enable_dep_gen": ("--enable-dep-gen", config.getoption("--enable-dep-gen")),
        "enable_scope_stats": ("--enable-scope-stats", config.getoption("--enable-scope-stats")),
        "enable_incore_trace": ("--enable-incore-trace", config.getoption("--enable-incore-trace")),
    }
    for flag, (option, value) in flags.items():
        try:
            run_config.check_dfx_flag(flag, value)
        except ValueError as e:
            raise pytest.UsageError(f"{option} {value}: {e}") from None
    set_dfx_defaults(**{flag: value for flag, (_, value) in flags.items()})


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
