"""The collector protocol and registry of the run-time DFX artefacts."""

from __future__ import annotations

import fnmatch
import gc
import os
import pickle
import shutil
import threading
import weakref
from collections.abc import Callable, Collection, Hashable, Iterator, Sequence
from contextlib import contextmanager
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from xdsl.dialects import func

from pypto.dialects.enums import FunctionType
from pypto.dialects.program import function_type
from pypto.utils.atomic import KeptFiles, atomic_write_files

from .jsonenc import Encoded, compact_encoder

T = TypeVar("T")

DFX_DIR = "dfx_outputs"
"""The folder of the run-time artefacts inside a build directory."""

RECORDED_LEVEL = 4
"""The highest swimlane level the simulated chip records."""


def write_artefact(path: Path, data: str | bytes | Sequence[bytes | bytearray | memoryview]) -> Path:
    """Write a run-time artefact atomically (``pypto.utils.atomic``, text as UTF-8, a list of byte strings
    as their concatenation), without fsync as the pass dumps: a reader never sees it half-written and a
    failure leaves the old file. A missing folder is made when the write finds it missing (the first run
    into a build folder), not looked for before every write. While :func:`finish_all` runs, the write waits
    for the other collectors' and goes with them (:func:`pypto.utils.atomic.atomic_write_files`). Returns
    ``path``."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    pending = getattr(_BATCH, "pending", None)
    if pending is not None:
        pending.append((path, payload))
    else:
        atomic_write_files([(path, payload)], make_folders=True, kept=WRITTEN)
    return path


WRITTEN = KeptFiles()
"""The artefacts this process wrote: a run whose artefact is the same bytes as the last run's (the simulated
timing does not depend on the data) leaves that file as it is (:class:`pypto.utils.atomic.KeptFiles`)."""


def when_written(release: Callable[[], None]) -> None:
    """Call ``release`` once the artefacts written so far are in their files (at once outside :func:`finish_all`):
    for what a pending write still reads (the blocks of ``args.bin``'s copies) and what a new file supersedes
    (an earlier run's merged trace). Not called when the writes failed: the old files are then still there."""
    releases = getattr(_BATCH, "releases", None)
    if releases is None:
        release()
    else:
        releases.append(release)


def remove_superseded(folder: Path, keep: Collection[str], ours: Callable[[Path], bool]) -> list[Path]:
    """Remove what an earlier run left in ``folder`` that this run did not write: every entry not named in
    ``keep`` that ``ours`` recognises as a run's (a file, or a folder with all it holds); anything else there is
    the user's and stays. Beside this run's artefacts an earlier run's would read as its own. A missing folder,
    or an entry another process removed first, is no error. The removed paths. (Call it through
    :func:`when_written`, so a failed write removes nothing.)"""
    try:
        names = sorted(os.listdir(folder))  # names, not Paths: a run's trace looks here every time
    except OSError:
        return []
    removed = []
    for name in names:
        if name in keep or not ours(path := folder / name):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue  # another process's run is using it, or removed it first
        removed.append(path)
    return removed


_BATCH = threading.local()
"""``pending``: the artefacts written while :func:`finish_all` runs in this thread (written when it ends);
``releases``: :func:`when_written`'s calls waiting for them."""


JSON_OUTER_LEVELS = 2
"""How many levels of an artefact's JSON are laid out one item per line (see :func:`json_text`)."""


def json_text(obj: Any, *, allow_nan: bool = True) -> str:
    """An artefact's JSON text (the one encoder of every artefact): the outer :data:`JSON_OUTER_LEVELS`
    levels one item per line, indented by one space a level, and everything deeper compact on its item's
    line, so a record, a task or a trace event reads as one line. An :class:`~.jsonenc.Encoded` item there
    is written as it is (its text is already that compact JSON). The values are ``json.dumps``'s, and
    all but the outer lines go through its C encoder (``indent`` would send the whole document through
    the pure-Python one, which cost a flagged run a third of its collection time)."""
    return _layout(obj, 0, "", compact_encoder(allow_nan))


def _layout(value: Any, depth: int, pad: str, encode: Callable[[Any], str]) -> str:
    """:func:`json_text` of ``value`` at ``depth`` (indented by ``pad``). A module function, not a closure of
    :func:`json_text`: a recursive closure is a reference cycle, garbage only the cyclic collector frees, and
    each run's cycles made it sweep the process's whole heap (a full collection every hundred flagged runs)."""
    if type(value) is Encoded:
        return value
    if depth >= JSON_OUTER_LEVELS or not value or not isinstance(value, dict | list | tuple):
        return encode(value)
    inner = pad + " "
    if isinstance(value, dict):
        items = [f"{inner}{_key_text(key, encode)}: {_layout(v, depth + 1, inner, encode)}" for key, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if depth + 1 >= JSON_OUTER_LEVELS:  # the last outer level: each item compact on its line
        lines = [v if type(v) is Encoded else encode(v) for v in value]
        return "[\n" + inner + (",\n" + inner).join(lines) + "\n" + pad + "]"
    items = [inner + _layout(v, depth + 1, inner, encode) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


def _key_text(key: Any, encode: Callable[[Any], str]) -> str:
    if type(key) is str:
        return encode_basestring_ascii(key)
    return encode({key: 0})[1:-3]  # json's own key conversion (int, float, bool, None; else a TypeError)


class Collector:
    """Watches one run for one flag (``FLAG``, a ``RunConfig`` field) at ``level`` and writes its
    artefact(s) under ``out_dir`` (``<build>/dfx_outputs``) when the run ends."""

    FLAG: ClassVar[str] = ""
    OUTPUTS: ClassVar[tuple[str, ...]] = ()
    """What it writes at the top of ``dfx_outputs/`` (``fnmatch`` patterns of the files and folders there):
    what a failed run moves to ``previous/`` (:func:`earlier_artefacts_aside_on_failure`)."""

    def __init__(self, level: int, out_dir: Path):
        self.level = level
        self.out_dir = out_dir

    def before_task(self, task: Any, part: Any) -> None:
        """Before ``part`` of ``task`` is dispatched (its arguments hold their inputs)."""

    def after_task(self, task: Any, part: Any, kernel_run: Any) -> None:
        """After ``part`` of ``task`` completed (``kernel_run``: the interpreter's result)."""

    def finish(self, result: Any) -> list[Path]:
        """Write the artefact(s) for the finished run (a :class:`~pypto.runtime.run.RunResult`)."""
        return []


COLLECTORS: dict[str, type[Collector]] = {}
"""RunConfig flag -> the collector that serves it."""


def register(cls: type[Collector]) -> type[Collector]:
    """Class decorator: ``cls`` serves ``cls.FLAG``."""
    COLLECTORS[cls.FLAG] = cls
    return cls


def any_enabled(config: Any) -> bool:
    """Whether a flag some collector serves is on in ``config`` (:func:`collectors_for` then makes one,
    given a directory to write into)."""
    return any(getattr(config, flag, 0) for flag in COLLECTORS)


def collectors_for(config: Any, build_dir: Path | None) -> list[Collector]:
    """A collector per flag enabled in ``config`` (levels as normalized by RunConfig), writing into
    ``<build_dir>/dfx_outputs`` or ``config.extra["dfx_dir"]``; none without either."""
    levels = [(cls, int(getattr(config, flag, 0) or 0)) for flag, cls in COLLECTORS.items()]
    if not any(level for _, level in levels):  # every flag off: nothing more to look at
        return []
    out = _dfx_dir(config, build_dir)
    if out is None:
        return []
    return [cls(level, out) for cls, level in levels if level]


def _dfx_dir(config: Any, build_dir: Path | None) -> Path | None:
    """Where a run's artefacts go: ``config.extra["dfx_dir"]``, else ``<build_dir>/dfx_outputs`` (None: neither)."""
    override = (getattr(config, "extra", None) or {}).get("dfx_dir")  # a multi-chip rank: dfx_outputs/rank{r}/d{k}
    if build_dir is None and override is None:
        return None
    return Path(override) if override else Path(build_dir) / DFX_DIR


PREVIOUS = "previous"
"""Where a failed run leaves the earlier run's artefacts it would have replaced: ``dfx_outputs/previous/`` (the
multi-chip runs' rule too, :mod:`pypto.runtime.distributed.outputs`)."""


@contextmanager
def earlier_artefacts_aside_on_failure(config: Any, build_dir: Path | None) -> Iterator[None]:
    """Run the block; when it raises, the earlier run's artefacts that this run's flags would have replaced
    (each enabled collector's :attr:`Collector.OUTPUTS`) move to ``dfx_outputs/previous/`` (an older
    ``previous/`` is replaced; with nothing to move it stays), and the error gets a note naming the folder. A
    failed run writes none of its own (:func:`finish_all` writes them all at its end), so without this the
    earlier run's would stay where they were, read as this run's."""
    try:
        yield
    except BaseException as error:
        out = _dfx_dir(config, build_dir) if any_enabled(config) else None
        moved = _set_aside(out, [c for flag, c in COLLECTORS.items() if getattr(config, flag, 0)]) if out else []
        if moved:
            error.add_note(f"the earlier run's DFX artefacts in {out} ({', '.join(moved)}) were moved to "
                           f"{out / PREVIOUS}: this run wrote none")  # fmt: skip
        raise


def _set_aside(out: Path, classes: Sequence[type[Collector]]) -> list[str]:
    """Move the entries of ``out`` that ``classes`` write into ``out/previous/`` (replacing an older one): the
    names moved (none moved: ``previous/`` left as it is). A file another process removes meanwhile is skipped."""
    try:
        names = sorted(os.listdir(out))
    except OSError:
        return []
    patterns = [p for cls in classes for p in cls.OUTPUTS]
    names = [n for n in names if n != PREVIOUS and any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    if not names:
        return []
    previous = out / PREVIOUS
    if previous.is_dir() and not previous.is_symlink():
        shutil.rmtree(previous, ignore_errors=True)
    previous.mkdir(exist_ok=True)
    moved = []
    for name in names:
        try:
            os.replace(out / name, previous / name)
        except OSError:
            continue
        moved.append(name)
    return moved


def task_hooks(collectors: Sequence[Collector]) -> tuple[list[Callable[..., None]], list[Callable[..., None]]]:
    """The ``before_task`` and ``after_task`` methods of the collectors that watch tasks (override them): a
    run calls only those around each task part (most collectors read the finished run only)."""
    before = [c.before_task for c in collectors if type(c).before_task is not Collector.before_task]
    after = [c.after_task for c in collectors if type(c).after_task is not Collector.after_task]
    return before, after


def finish_all(collectors: Sequence[Collector], result: Any) -> dict[str, list[Path]]:
    """Every collector's artefacts, by flag. While they finish, what several of them read from the run
    (its swimlane records, PMU rows, func ids, the name map) is built once (:func:`per_run`). The files are
    written together once every collector has finished (also when one failed: the others' files are written
    as they would have been): their system calls, done between the collectors' formatting, cost a flagged
    run about 0.5 ms more (01_ffn). The cyclic garbage collector pauses meanwhile: what the collectors build
    is acyclic and freed by reference counting once written, and its passes over the process's objects cost
    a flagged run about as much as a file."""
    if not collectors:  # every flag off: the run pays nothing for DFX
        return {}
    result._dfx_memo = {}
    collecting = gc.isenabled()  # the artefacts are acyclic, freed as they are written: no cycle to look for
    if collecting:
        gc.disable()
    pending: list[tuple[Path, bytes | Sequence[bytes | bytearray | memoryview]]] = []
    releases: list[Callable[[], None]] = []
    outer = getattr(_BATCH, "pending", None), getattr(_BATCH, "releases", None)
    _BATCH.pending, _BATCH.releases = pending, releases
    try:
        return {c.FLAG: c.finish(result) for c in collectors}
    finally:
        _BATCH.pending, _BATCH.releases = outer
        del result._dfx_memo
        written = False
        try:
            atomic_write_files(pending, make_folders=True, kept=WRITTEN)
            written = True
        finally:
            pending.clear()
            if written:
                for release in releases:
                    release()
            if collecting:
                gc.enable()


def per_run(result: Any, key: Hashable, build: Callable[[], T]) -> T:
    """``build()``, once per ``key`` while :func:`finish_all` runs for ``result`` (the collectors share it:
    read it, never change it); outside :func:`finish_all` a call builds afresh."""
    memo = getattr(result, "_dfx_memo", None)
    if memo is None:
        return build()
    if key not in memo:
        memo[key] = build()
    return memo[key]


def across_runs(slot: Hashable, key: Any, build: Callable[[], T], *, keep: bool = True) -> T:
    """``build()``, or what it built for ``slot`` on an earlier call with an equal ``key``: for an artefact's
    text, a pure function of plain data (lists, dicts, numbers, strings) given whole as ``key``. The simulated
    timing of a program does not depend on its data, so a program run again usually has the same records, and
    its trace and analyses are the same text. ``key`` is kept as its pickle (equal pickles: equal values of the
    same types), bytes the cyclic garbage collector does not track: kept containers were promoted to its oldest
    generation on every run whose key changed, and made it sweep the whole heap every few dozen runs. One value a
    slot, the :data:`ACROSS_RUNS_SLOTS` slots used last; ``keep=False`` (a large run) keeps nothing. Read the
    value, never change it (keep it to text: a container would be tracked)."""
    try:
        fingerprint = pickle.dumps(key, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError):
        return build()
    with _ACROSS_RUNS_LOCK:
        last = _ACROSS_RUNS.pop(slot, None)
        if last is not None and last[0] == fingerprint:
            _ACROSS_RUNS[slot] = last
            return last[1]
    value = build()
    if keep:
        with _ACROSS_RUNS_LOCK:
            _ACROSS_RUNS[slot] = (fingerprint, value)
            while len(_ACROSS_RUNS) > ACROSS_RUNS_SLOTS:
                del _ACROSS_RUNS[next(iter(_ACROSS_RUNS))]
    return value


ACROSS_RUNS_SLOTS = 64
"""How many :func:`across_runs` slots are kept (the least recently used is dropped first)."""

ACROSS_RUNS_MAX_TASKS = 2048
"""A run of more tasks keeps nothing in :func:`across_runs` (its records would stay alive after it: many MB)."""


def kept_across_runs(result: Any) -> bool:
    """Whether what ``result``'s artefacts are built from is kept across runs (:func:`across_runs`'s ``keep``):
    a run of at most :data:`ACROSS_RUNS_MAX_TASKS` tasks."""
    return len(result.tasks) <= ACROSS_RUNS_MAX_TASKS

_ACROSS_RUNS: dict[Hashable, tuple[bytes, Any]] = {}
_ACROSS_RUNS_LOCK = threading.Lock()


def forget_earlier_runs() -> None:
    """Drop what :func:`across_runs` and :data:`WRITTEN` keep: the next run builds and writes every artefact
    as a program's first run does (``benchmarks/dfx_overhead.py`` times that too)."""
    with _ACROSS_RUNS_LOCK:
        _ACROSS_RUNS.clear()
    WRITTEN.forget_all()


def kernel_func_ids(module: Any) -> dict[str, int]:
    """Kernel function name -> func_id: the program's AIC / AIV / InCore functions in module order (the one
    numbering of deps.json, the name map, pmu.csv and args_dump). Once per compiled module (a program runs
    many times; its module does not change): read it, never change it."""
    known = _FUNC_IDS.get(module)
    if known is None:
        kinds = (FunctionType.AIC, FunctionType.AIV, FunctionType.InCore)
        names = [
            op.sym_name.data
            for op in module.body.block.ops
            if isinstance(op, func.FuncOp) and function_type(op) in kinds
        ]
        known = _FUNC_IDS[module] = {n: i for i, n in enumerate(names)}
    return known


_FUNC_IDS: weakref.WeakKeyDictionary[Any, dict[str, int]] = weakref.WeakKeyDictionary()
"""A compiled module's :func:`kernel_func_ids` (walking its functions and reading their kinds cost a flagged
01_ffn run pair about 0.05 ms)."""
