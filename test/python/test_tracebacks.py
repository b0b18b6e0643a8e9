"""Tracebacks from the public API hide PyPTO's internal frames (as JAX does);
``PYPTO_BACKTRACE=1`` shows them."""

from __future__ import annotations

import traceback
from pathlib import Path

import pytest

import pypto.language as pl
from pypto.errors import ParserError
from pypto.utils.tracebacks import NOTE, filter_traceback, is_internal

BAD = "import pypto.language as pl\n\n\n@pl.program\nclass P:\n    x = 1\n"


def _frames(error: BaseException) -> list[str]:
    return [f.filename for f in traceback.extract_tb(error.__traceback__)]


def test_internal_frames_are_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYPTO_BACKTRACE", raising=False)
    monkeypatch.delenv("PTO_BACKTRACE", raising=False)
    path = tmp_path / "k.py"
    path.write_text(BAD)
    with pytest.raises(ParserError) as info:
        pl.loads(path)
    frames = _frames(info.value)
    assert frames == [__file__]  # the user's own line only
    assert NOTE in info.value.__notes__


def test_backtrace_env_shows_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_BACKTRACE", "1")
    path = tmp_path / "k.py"
    path.write_text(BAD)
    with pytest.raises(ParserError) as info:
        pl.loads(path)
    assert any(is_internal(f) for f in _frames(info.value))
    assert NOTE not in getattr(info.value, "__notes__", [])


def test_filter_keeps_foreign_frames() -> None:
    def inner() -> None:
        raise ValueError("x")

    try:
        inner()
    except ValueError as e:
        tb = e.__traceback__
    names = [f.name for f in traceback.extract_tb(filter_traceback(tb))]
    assert names == ["test_filter_keeps_foreign_frames", "inner"]
    assert is_internal(pl.__file__) and not is_internal(__file__) and not is_internal("<stdin>")
