"""``python -m pypto.tools.upstream_st <upstream checkout>``: upstream's ``tests/st/distributed`` on our package.

Upstream's own conftest needs its hardware harness, so the test files are copied into a temporary folder
next to a two-fixture conftest (:data:`CONFTEST`): ``test_config`` (a ``RunConfig``: ``platform``, ``codegen_only``) and
``device_ids`` (``0 .. N-1``), and a per-test time limit (a hung rank fails its test, not the run). pytest then runs them in one subprocess with this interpreter (so the
``pypto`` it imports is ours), the checkout's root on ``PYTHONPATH`` (``examples.runtime`` imports) and a folder of
shims mapping the Simpler runtime's modules the tests import to :mod:`pypto.runtime.simpler_compat` (:func:`write_shims`).
It prints one line per test (``PASS``/``FAIL``/``SKIP``), the first error line of each failure, and
``st/distributed N/M`` (passed of collected). Exit status 0 when nothing failed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pypto.utils.cli import InputError, cli_main

PLATFORM = "a2a3sim"
ST_DIR = Path("tests") / "st" / "distributed"

CONFTEST = '''\
"""Two fixtures for upstream's tests/st/distributed (written by pypto.tools.upstream_st)."""

import multiprocessing
import os
import signal

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "platforms(*names): platforms the test runs on")


def pytest_collection_modifyitems(config, items):
    platform = os.environ["UPSTREAM_ST_PLATFORM"]
    for item in items:
        marker = item.get_closest_marker("platforms")
        if marker is not None and platform not in marker.args:
            item.add_marker(pytest.mark.skip(reason=f"platforms {marker.args} exclude {platform}"))


class TestTimeout(Exception):
    """A test ran past UPSTREAM_ST_TEST_TIMEOUT seconds (its rank processes are ended)."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    seconds = int(os.environ.get("UPSTREAM_ST_TEST_TIMEOUT", "0"))

    def expire(signum, frame):
        raise TestTimeout(f"no result within {seconds} s")

    old = signal.signal(signal.SIGALRM, expire) if seconds else None
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        if old is not None:
            signal.signal(signal.SIGALRM, old)
        for child in multiprocessing.active_children():
            child.kill()


@pytest.fixture
def test_config():
    from pypto.runtime import RunConfig  # upstream's fixture is a RunConfig too

    return RunConfig(platform=os.environ["UPSTREAM_ST_PLATFORM"], codegen_only=False)


@pytest.fixture
def device_ids():
    return list(range(int(os.environ["UPSTREAM_ST_DEVICES"])))
'''


SHIM = '"""Written by pypto.tools.upstream_st: the Simpler runtime\'s API as pypto.runtime.simpler_compat."""\n\n' \
    "import sys\n\nfrom pypto.runtime import simpler_compat\n\nsys.modules[__name__] = simpler_compat\n"
SHIM_MODULES = ("simpler/task_interface.py", "simpler/worker.py", "simpler_setup/torch_interop.py")
"""Simpler's modules upstream's tests import (``test_l3_manual``, ``test_l3_stacked_device_tensor``), each mapped
to :mod:`pypto.runtime.simpler_compat` by a shim on this run's ``sys.path`` only (never installed)."""


def write_shims(dest: Path) -> Path:
    """The folder holding the ``simpler`` / ``simpler_setup`` shims (:data:`SHIM_MODULES`)."""
    root = dest / "shims"
    for rel in SHIM_MODULES:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").write_text('"""Written by pypto.tools.upstream_st."""\n', encoding="utf-8")
        path.write_text(SHIM, encoding="utf-8")
    return root


class ToolError(InputError):
    """A one-line error for the command line (exit 1 through :func:`~pypto.utils.cli.cli_main`)."""


@dataclass(frozen=True)
class Result:
    """One test's outcome: ``PASS``, ``FAIL`` or ``SKIP``, and the first line of its message."""

    test: str
    status: str
    message: str


def stage(root: Path, dest: Path) -> Path:
    """Copy the checkout's ``tests/st/distributed`` (without its conftest) into ``dest`` with ours."""
    src = root / ST_DIR
    if not src.is_dir():
        raise ToolError(f"{root}: no {ST_DIR.as_posix()}/ folder (expected an upstream PyPTO checkout)")
    target = dest / "distributed"
    shutil.copytree(src, target, ignore=shutil.ignore_patterns("conftest.py", "__pycache__"))
    (target / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    return target


def parse_junit(path: Path) -> list[Result]:
    """The per-test results of a pytest ``--junitxml`` report."""
    results = []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}".replace("distributed.", "", 1)
        status, message = "PASS", ""
        for tag, label in (("failure", "FAIL"), ("error", "FAIL"), ("skipped", "SKIP")):
            node = case.find(tag)
            if node is not None:
                status, message = label, (node.get("message") or node.text or "").strip().splitlines()
                message = message[0] if message else ""
                break
        results.append(Result(name, status, message[:200]))
    return results


def run(root: Path, devices: int, platform: str, match: str, timeout: float, test_timeout: float) -> list[Result]:
    """Run the staged tests in one pytest subprocess; its results (empty if it timed out)."""
    with tempfile.TemporaryDirectory(prefix="upstream_st_") as tmp:
        target = stage(root, Path(tmp))
        report = Path(tmp) / "report.xml"
        shims = write_shims(Path(tmp))
        path = os.pathsep.join(p for p in (str(root), str(shims), os.environ.get("PYTHONPATH", "")) if p)
        env = dict(
            os.environ,
            PYTHONPATH=path,
            PYPTO_SIMULATE_NPU="1",
            UPSTREAM_ST_PLATFORM=platform,
            UPSTREAM_ST_DEVICES=str(devices),
            UPSTREAM_ST_TEST_TIMEOUT=str(int(test_timeout)),
        )
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", "--continue-on-collection-errors"]
        argv += ["--rootdir", tmp, f"--junitxml={report}", str(target)]
        if match:
            argv += ["-k", match]
        try:
            subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise ToolError(f"the pytest run did not end within {timeout:.0f} s") from exc
        if not report.exists():
            raise ToolError("pytest wrote no report (did it start?)")
        return parse_junit(report)


def summary(results: Sequence[Result]) -> list[str]:
    """One line per test, then ``st/distributed N/M``."""
    lines = [f"{r.status}  {r.test}" + (f": {r.message}" if r.status != "PASS" else "") for r in results]
    passed = sum(r.status == "PASS" for r in results)
    lines.append(f"st/distributed {passed}/{len(results)}")
    return lines


@cli_main("upstream_st")
def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: 0 when nothing failed, 1 otherwise."""
    parser = argparse.ArgumentParser(prog="upstream_st", description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=Path, help="root of an upstream PyPTO checkout")
    parser.add_argument("--devices", type=int, default=4, help="how many device ids device_ids holds (4)")
    parser.add_argument("--platform", default=PLATFORM, help="test_config.platform (default a2a3sim)")
    parser.add_argument("-k", dest="match", default="", help="pytest -k expression")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds for the whole run (3600)")
    parser.add_argument("--test-timeout", type=float, default=300.0, help="seconds per test (300; 0: none)")
    args = parser.parse_args(argv)
    results = run(args.checkout.resolve(), args.devices, args.platform, args.match, args.timeout, args.test_timeout)
    print("\n".join(summary(results)))
    return 0 if all(r.status != "FAIL" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
