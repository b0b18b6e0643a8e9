"""pypto.runtime.file_watch: the generation moves when a file in a watched directory changes, and the
watch gives up (None: check stamps every time) when a watched directory goes away."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pypto.runtime import file_watch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")


@pytest.fixture
def fresh_watch(monkeypatch: pytest.MonkeyPatch) -> file_watch._Watch:
    w = file_watch._Watch()
    monkeypatch.setattr(file_watch, "_WATCH", w)
    yield w
    w._lose()


def test_the_generation_moves_only_when_a_watched_file_changes(tmp_path: Path, fresh_watch: file_watch._Watch) -> None:
    src = tmp_path / "k.cpp"
    src.write_text("int x;\n")
    other = tmp_path.parent / f"{tmp_path.name}-other"
    other.mkdir()
    gen = file_watch.watch([str(tmp_path)])
    if gen is None:
        pytest.skip("no inotify here")
    assert file_watch.generation() == gen  # nothing happened
    (other / "x.txt").write_text("not watched\n")
    assert file_watch.generation() == gen
    with src.open("a") as f:  # an edit in place
        f.write("int y;\n")
    moved = file_watch.generation()
    assert moved is not None and moved != gen
    assert file_watch.generation() == moved
    os.utime(src)  # a touch
    assert file_watch.generation() not in (moved, None)
    tmp = tmp_path / "k.cpp.tmp"  # an atomic rewrite (write a copy, rename it over)
    tmp.write_text("int z;\n")
    before = file_watch.generation()
    tmp.replace(src)
    assert file_watch.generation() not in (before, None)


def test_a_removed_directory_ends_the_watch(tmp_path: Path, fresh_watch: file_watch._Watch) -> None:
    d = tmp_path / "kernels"
    d.mkdir()
    if file_watch.watch([str(d)]) is None:
        pytest.skip("no inotify here")
    d.rmdir()
    assert file_watch.generation() is None
    assert file_watch.watch([str(tmp_path)]) is None  # stamps every time from now on
