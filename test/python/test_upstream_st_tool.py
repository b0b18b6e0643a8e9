"""``pypto.tools.upstream_st``: upstream's tests/st/distributed run with a two-fixture conftest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pypto.tools import upstream_st as U

UPSTREAM = Path(os.environ.get("PYPTO_UPSTREAM_DIR", "/tmp/upstream-pypto"))

FAKE_TEST = '''
import pytest


def test_fixtures(test_config, device_ids):
    assert test_config.platform == "a2a3sim" and not test_config.codegen_only
    assert device_ids == [0, 1, 2]


def test_fails():
    raise AssertionError("boom")


def test_simpler_shims():
    import pypto.runtime.simpler_compat as ours
    from simpler.task_interface import TaskArgs
    from simpler.worker import Worker
    from simpler_setup import torch_interop

    assert torch_interop is ours and Worker is ours.Worker and TaskArgs is ours.TaskArgs


@pytest.mark.platforms("a5sim")
def test_other_platform():
    pass
'''


def fake_checkout(root: Path) -> Path:
    st = root / "tests" / "st" / "distributed"
    st.mkdir(parents=True)
    (st / "conftest.py").write_text("raise ImportError('upstream harness')\n")  # replaced by ours
    (st / "test_fake.py").write_text(FAKE_TEST)
    (st / "test_broken.py").write_text("import no_such_module\n")
    return root


def test_a_fake_checkout_runs_with_the_two_fixtures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = U.main([str(fake_checkout(tmp_path / "up")), "--devices", "3", "--test-timeout", "60"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert "PASS  test_fake::test_fixtures" in out
    assert "PASS  test_fake::test_simpler_shims" in out  # Simpler's modules, on this run's sys.path only
    assert any(line.startswith("FAIL  test_fake::test_fails: AssertionError: boom") for line in out)
    assert any(line.startswith("SKIP  test_fake::test_other_platform: platforms ('a5sim',)") for line in out)
    assert any(line.startswith("FAIL  ::test_broken") for line in out)  # a module that does not import
    assert out[-1] == "st/distributed 2/5"


def test_not_a_checkout_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert U.main([str(tmp_path)]) == 1
    assert "no tests/st/distributed/ folder" in capsys.readouterr().err


@pytest.mark.skipif(not (UPSTREAM / "tests/st/distributed").is_dir(), reason="no upstream pypto checkout")
def test_upstream_notify_wait_passes(capsys: pytest.CaptureFixture[str]) -> None:
    U.main([str(UPSTREAM), "-k", "test_signal_exchange", "--test-timeout", "300"])
    assert "PASS  test_l3_notify_wait.TestL3NotifyWait::test_signal_exchange" in capsys.readouterr().out
