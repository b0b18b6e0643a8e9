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


class _Tty:
    """A stderr stand-in that says it is a terminal and keeps what was drawn."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    @property
    def text(self) -> str:
        return "".join(self.parts)


def test_progress_bar_after_the_delay_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import time

    from pypto.utils import progress as prog

    monkeypatch.delenv(prog.ENV_VAR, raising=False)
    tty = _Tty()
    with prog.progress("compile", total=3, stream=tty, delay=0.05) as bar:
        bar.advance("ConvertToSSA")
        deadline = time.monotonic() + 10
        while not bar.shown and time.monotonic() < deadline:
            time.sleep(0.02)
        assert bar.shown
        bar.name("Simplify")
        with prog.progress("inner", stream=tty) as nested:  # names its step in the outer bar
            nested.advance("step")
            assert not nested.shown and bar.current == "inner step"
    assert not bar.shown and "compile" in tty.text
    quick = _Tty()
    with prog.progress("compile", total=3, stream=quick, delay=5) as bar:  # short work: nothing drawn
        bar.advance("x")
    assert quick.text == "" and not bar.shown
    plain = io.StringIO()  # not a terminal
    with prog.progress("compile", stream=plain, delay=0) as bar:
        time.sleep(0.1)
        assert not bar.shown
    assert plain.getvalue() == ""
    monkeypatch.setenv(prog.ENV_VAR, "0")
    off = _Tty()
    with prog.progress("compile", stream=off, delay=0) as bar:
        time.sleep(0.1)
        assert not bar.shown
    assert off.text == "" and not prog.enabled(off)


def test_compile_names_each_pass_in_its_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from test_pipeline_kernels import kernel

    compile_module = importlib.import_module("pypto.driver.compile")
    from pypto.ir import compile

    seen: list[tuple[str, int]] = []

    class Bar:
        shown = False

        def advance(self, label: str = "", steps: int = 1) -> None:
            seen.append((label, steps))

        def name(self, label: str) -> None:
            self.advance(label, 0)

    import contextlib

    @contextlib.contextmanager
    def fake(description: str, total: int | None = None, **_: object):
        assert description == "compile" and total == 50
        yield Bar()

    monkeypatch.setattr(compile_module, "progress", fake)
    compile(kernel("add", tmp_path), output_dir=tmp_path / "o", dump_passes=False)
    assert sum(steps for _, steps in seen) == 50  # 49 passes and the codegen
    assert ("ConvertToSSA", 0) in seen and seen[-1] == ("codegen", 1)
