"""The compile-speed mechanisms of issue 17: the target disk cache, verification skipped on an
unchanged IR, progress bars (silent off a terminal). Figures are in benchmarks/compile_speed.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pypto.target import disk_cache
from pypto.target import model as target_model


def test_target_disk_cache_round_trip_and_invalidation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(disk_cache.ENV_VAR, str(tmp_path / "cache"))
    copy = tmp_path / "mine.mlir"
    shutil.copy(target_model.target_path("a2a3"), copy)
    monkeypatch.setattr(target_model, "_CACHE", {})
    parsed = target_model.load_target(str(copy))
    assert len(list((tmp_path / "cache").glob("target-*.pickle"))) == 1
    monkeypatch.setattr(target_model, "_CACHE", {})
    calls: list[str] = []
    real = target_model.parse_target_op
    monkeypatch.setattr(target_model, "parse_target_op", lambda *a: calls.append("parse") or real(*a))
    again = target_model.load_target(str(copy))
    assert calls == [] and again == parsed  # read back, not parsed
    copy.write_text(copy.read_text().replace("block_bytes = 32", "block_bytes = 64"))
    monkeypatch.setattr(target_model, "_CACHE", {})
    edited = target_model.load_target(str(copy))
    assert calls == ["parse"] and edited.block_bytes == 64 != parsed.block_bytes
    monkeypatch.setenv(disk_cache.ENV_VAR, "0")
    assert disk_cache.cache_dir() is None
    (tmp_path / "cache").joinpath("junk").write_text("x")
    for f in (tmp_path / "cache").glob("target-*.pickle"):
        f.write_bytes(b"not a pickle")
    monkeypatch.setenv(disk_cache.ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setattr(target_model, "_CACHE", {})
    assert target_model.load_target(str(copy)).block_bytes == 64  # a corrupt file is parsed again


def test_verification_skipped_when_a_pass_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_pipeline_kernels import kernel

    from pypto.pipeline import manager
    from pypto.pipeline.lower import lower_program

    verified: list[str] = []
    real = manager.verify_after_pass
    monkeypatch.setattr(manager, "verify_after_pass", lambda m, name, level: verified.append(name) or real(m, name, level))
    lower_program(kernel("add", tmp_path))
    from pypto.passes.pipeline_order import DEFAULT_PIPELINE, KEBAB_NAMES
    from pypto.passes.registry import get_pass

    placeholders = {n for n, _ in DEFAULT_PIPELINE if getattr(get_pass(KEBAB_NAMES[n]), "IS_PLACEHOLDER", False)}
    assert placeholders and verified and not placeholders & set(verified)  # identity passes: no re-verification
    assert len(verified) < len(DEFAULT_PIPELINE)
