"""A writer SIGKILLed mid-write (issue 16, "Artefacts"): the target keeps its old contents, the hidden
temporary file it left is removed by the next successful write of the same file, and a live
writer's temporary file is left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pypto.utils.atomic import atomic_write_text, is_temp_name, remove_stale_temps

# The child writes report.html with a slow fsync: it signals when the temporary file holds the bytes,
# then hangs until it is killed.
CHILD = """
import os, sys, time
from pypto.utils import atomic
ready = sys.argv[2]
def hang(fd):
    open(ready, "w").close()
    time.sleep(120)
atomic.os.fsync = hang
atomic.atomic_write_text(sys.argv[1], "<html>new</html>")
"""


def _temps(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if is_temp_name(p.name))


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_sigkill_mid_write_leaves_nothing_after_the_next_write(tmp_path: Path) -> None:
    out, ready = tmp_path / "report.html", tmp_path / "ready"
    out.write_text("<html>old</html>")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(out), str(ready)])
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert child.poll() is None and time.monotonic() < deadline, "the writer did not start"
            time.sleep(0.02)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    stale = _temps(tmp_path)
    assert stale == [f".report.html.{child.pid}.{stale[0].split('.')[4]}.tmp"]  # hidden, and names its writer
    assert out.read_text() == "<html>old</html>"  # the kill left the old file whole
    atomic_write_text(out, "<html>next</html>")
    assert out.read_text() == "<html>next</html>"
    assert _temps(tmp_path) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["ready", "report.html"]


def test_a_live_writers_temp_and_other_files_temps_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "a.json"
    live = tmp_path / f".a.json.{os.getpid()}.abcdefgh.tmp"  # ours: a write in flight in another thread
    parent = tmp_path / f".a.json.{os.getppid()}.abcdefgh.tmp"  # a live process
    other = tmp_path / ".b.json.999999999.abcdefgh.tmp"  # another file's
    for p in (live, parent, other):
        p.write_text("x")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = tmp_path / f".a.json.{int(dead.stdout)}.abcdefgh.tmp"
    gone.write_text("x")
    assert remove_stale_temps(out) == [gone]
    assert live.exists() and parent.exists() and other.exists() and not gone.exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (a folder no file can be created in)")
@pytest.mark.parametrize("chunks", [False, True])
def test_a_failed_write_names_the_users_path_not_the_temporary_file(chunks: bool) -> None:
    """Creating the temporary file fails in /proc (even as root): the error names the path asked for."""
    from pypto.utils.atomic import atomic_write_bytes, atomic_write_files

    target = Path("/proc/self/pypto_atomic_test.json")
    with pytest.raises(OSError) as err:
        if chunks:
            atomic_write_files([(target, [b"{", b"}"])])
        else:
            atomic_write_bytes(target, b"{}")
    assert err.value.filename == str(target) and ".tmp" not in str(err.value)
