"""A multi-chip run's outputs in ``<output_dir>/dfx_outputs`` and the earlier run's: the ``previous/`` rule.

A run (a :func:`~.launch.launch`, a dispatch of a prepared worker) first sets the earlier run's outputs aside
(renamed into a hidden ``dfx_outputs/.previous-<host>-<pid>-<random>/``), before any rank writes, so a run that
fails midway neither overwrites them nor mixes its partial files with them. Then:

- the run succeeds: its outputs are the current ones; the set-aside outputs and an older ``previous/`` are
  removed (a successful run replaces the earlier run's outputs, as it always did);
- the run fails (a rank raised, died or hung, or its artefacts could not be written): what it wrote is removed
  (partial: a reader would take it for a whole run's), and the earlier run's outputs are moved to
  ``dfx_outputs/previous/`` (replacing an older ``previous/``), so nothing in ``dfx_outputs/`` looks current
  and nothing is lost; the :class:`~.launch.DistributedRunError` names the folder. A failed run after a failed
  run leaves the ``previous/`` it found.

A run's outputs are ``merged_comm_trace.json``, ``cross_rank_report.html``, ``run_report.html``, each rank's
``rank{r}/comm_events.json`` and ``rank{r}/d{k}/`` (:meth:`EarlierOutputs.units`); anything else in
``dfx_outputs/`` is the user's and stays. A process killed between the two steps leaves its hidden folder; the
next run into the folder puts those outputs back in place of the killed run's partial ones first.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import socket
from collections.abc import Collection
from pathlib import Path

from pypto.runtime.dfx.base import DFX_DIR, PREVIOUS
from pypto.utils.atomic import _pid_alive

from .report import REPORT_NAME
from .trace import DISPATCH_PROGRAM, MERGED_TRACE, RANK_EVENTS

RUN_FILES = frozenset({MERGED_TRACE, REPORT_NAME, "run_report.html"})
"""The files a multi-chip run writes at the top of ``dfx_outputs/``."""

_RANK, _DISPATCH = re.compile(r"rank(\d+)"), re.compile(r"d\d+")
_ASIDE = re.compile(r"\.previous-(.+)-(\d+)-[0-9a-f]{8}")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname()) or "host"


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _prune(folder: Path) -> None:
    """Remove the empty folders in ``folder`` (a run's ``rank{r}/`` once its outputs moved), and ``folder``
    itself when it ends up empty."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            _prune(Path(entry.path))
    try:
        folder.rmdir()
    except OSError:
        pass  # not empty: the user's files, or another rank's


def _move(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.rename(src, dst)


class EarlierOutputs:
    """The earlier run's outputs in ``<out_dir>/dfx_outputs``, set aside while one run writes its own (module
    docstring). A run's output is a unit moved whole: a file at the top (:data:`RUN_FILES`), a rank's
    ``rank{r}/comm_events.json`` and each ``rank{r}/d{k}/`` holding ``dispatch_program.json``, and the whole
    ``rank{r}/`` (holding ``comm_events.json``) of a rank ``r >= world`` the run does not have (what
    :func:`.trace.remove_stale_ranks` removes); what is not marked so is the user's and stays. ``ranks``: the
    ranks whose folders this process owns (None: all); ``top``: it owns the top files and the other ranks'
    folders too. Under ``torchrun`` each rank owns its own folder and rank 0 the rest."""

    def __init__(self, out_dir: str | os.PathLike[str], world: int, *, ranks: Collection[int] | None = None,
                 top: bool = True):
        self.root = Path(out_dir) / DFX_DIR
        self.world, self.ranks, self.top = world, ranks, top
        self.aside: Path | None = None
        self.moved: list[str] = []

    def units(self, base: Path) -> list[str]:
        """The run outputs this process owns in ``base`` (``dfx_outputs/`` or a copy of its layout), as paths
        relative to it."""
        try:
            names = sorted(os.listdir(base))
        except OSError:
            return []
        out: list[str] = []
        for name in names:
            path = base / name
            if name in RUN_FILES:
                if self.top and path.is_file():
                    out.append(name)
                continue
            m = _RANK.fullmatch(name)
            if m is None or not path.is_dir() or path.is_symlink():
                continue
            r = int(m.group(1))
            if r >= self.world:
                if self.top and (path / RANK_EVENTS).is_file():
                    out.append(name)
                continue
            if self.ranks is not None and r not in self.ranks:
                continue
            for sub in sorted(os.listdir(path)):
                inner = path / sub
                if sub == RANK_EVENTS and inner.is_file():
                    out.append(f"{name}/{sub}")
                elif _DISPATCH.fullmatch(sub) and (inner / DISPATCH_PROGRAM).is_file():
                    out.append(f"{name}/{sub}")
        return out

    def _drop(self, base: Path) -> None:
        """Remove the run outputs this process owns in ``base`` (and the rank folders left empty)."""
        for rel in self.units(base):
            _remove(base / rel)
            if "/" in rel:
                _prune(base / rel.split("/")[0])

    def set_aside(self) -> None:
        """Before the run writes anything: move the earlier run's outputs into a hidden folder."""
        self._restore_killed()
        units = self.units(self.root)
        if not units:
            return
        aside = self.root / f".previous-{_host()}-{os.getpid()}-{secrets.token_hex(4)}"
        aside.mkdir()
        self.aside = aside
        for rel in units:
            _move(self.root / rel, aside / rel)
            self.moved.append(rel)
            if "/" in rel:
                _prune(self.root / rel.split("/")[0])

    def _restore_killed(self) -> None:
        """A hidden folder of a killed run on this host: its outputs (the run before it) back in place of what
        the killed run wrote."""
        try:
            names = os.listdir(self.root)
        except OSError:
            return
        for name in names:
            m = _ASIDE.fullmatch(name)
            if m is None or m.group(1) != _host() or _pid_alive(int(m.group(2))):
                continue
            dead = self.root / name
            self._drop(self.root)
            for rel in self.units(dead):
                _move(dead / rel, self.root / rel)
            _prune(dead)

    def succeeded(self) -> None:
        """The run's outputs are written: drop the set-aside outputs and an older ``previous/``."""
        if self.aside is not None:
            shutil.rmtree(self.aside, ignore_errors=True)
            self.aside = None
        previous = self.root / PREVIOUS
        if previous.is_dir():
            self._drop(previous)
            _prune(previous)

    def failed(self) -> Path | None:
        """The run failed: remove what it wrote and move the earlier run's outputs to ``previous/``. Where the
        earlier outputs now are (None: there were none)."""
        self._drop(self.root)
        previous = self.root / PREVIOUS
        if self.aside is None:
            return previous if previous.is_dir() and any(previous.iterdir()) else None
        self._drop(previous)  # an older previous/: superseded by the outputs set aside now
        for rel in self.moved:
            _move(self.aside / rel, previous / rel)
        shutil.rmtree(self.aside, ignore_errors=True)
        self.aside = None
        return previous
