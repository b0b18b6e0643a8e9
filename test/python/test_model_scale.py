"""benchmarks/model_scale.py's comparison with upstream's own compile (issue 17 goal 5): how it reduces
repeated processes and words the ratio against the goal. No timing is asserted: the figures are printed."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "model_scale.py"


@pytest.fixture(scope="module")
def model_scale() -> ModuleType:
    spec = importlib.util.spec_from_file_location("model_scale_under_test", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_best_of_takes_each_seconds_figure_at_its_minimum(model_scale: ModuleType) -> None:
    runs = [
        {"case": "p", "compile_s": 0.5, "compile_cpu_s": 0.2, "runs": 1},
        {"case": "p", "compile_s": 0.3, "compile_cpu_s": 0.4, "runs": 1},
    ]
    assert model_scale.best_of(runs) == {"case": "p", "compile_s": 0.3, "compile_cpu_s": 0.2, "runs": 1}


def test_repeated_stops_at_an_error_result(model_scale: ModuleType) -> None:
    calls: list[int] = []

    def once() -> dict[str, object]:
        calls.append(1)
        return {"case": "p", "error": "rejected"}

    assert model_scale.repeated(once, 3) == {"case": "p", "error": "rejected"}
    assert len(calls) == 1


def test_goal_line_gives_the_ratio_and_the_verdict(model_scale: ModuleType) -> None:
    theirs = {"case": "p", "compile_s": 0.2, "compile_cpu_s": 0.1}
    within = model_scale.goal_line("p", {"compile_s": 0.5, "compile_cpu_s": 0.25}, theirs, "wall")
    assert "2.50x (ok, goal <= 3x)" in within
    above = model_scale.goal_line("p", {"compile_s": 0.5, "compile_cpu_s": 0.4}, theirs, "cpu")
    assert "4.00x (ABOVE GOAL" in above
    rejected = model_scale.goal_line("p", {"compile_s": 0.5}, {"case": "p", "error": "ParserError: x"}, "wall")
    assert "rejects it (ParserError: x)" in rejected


def test_upstream_venv_needs_the_checkout() -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARK), "--upstream-venv", "/nonexistent"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "--upstream-venv needs --upstream" in proc.stderr


def test_upstream_venv_must_be_a_venv(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, str(BENCHMARK), "--upstream", str(tmp_path), "--upstream-venv", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "no bin/python in it" in proc.stderr
