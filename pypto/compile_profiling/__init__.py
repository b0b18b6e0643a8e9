"""Compile profiling: wall-clock time per compilation stage (seed 003).

``with CompileProfiler() as prof:`` makes ``prof`` the active profiler;
``with prof.stage("passes"):`` records a stage, nested under the stage open
at the time. ``ir.compile`` records ``passes`` (one child per pass run, in
order, repeats kept) and ``codegen`` (``kernel_codegen:<name>``,
``orchestration_codegen``). With no active profiler the cost of a stage
boundary is one :meth:`CompileProfiler.current` null check.

Outputs (pl-dsl.md §6, exactly upstream's): :meth:`~CompileProfiler.summary`
(``pipeline_profile.txt``) and :meth:`~CompileProfiler.to_dict` /
:meth:`~CompileProfiler.to_json` (``pipeline_profile.json``,
``{"total_seconds", "stages": [{"name", "seconds", "children"}]}``, rounded to
6 decimals). Beyond upstream, every :class:`Stage` has ``self_seconds`` (its
time minus its children's), shown by ``python -m pypto.compile_profiling show
A.json``; ``python -m pypto.compile_profiling diff A.json B.json`` prints
per-stage deltas.

Nothing is left out silently: the profiler's own outputs (:meth:`~CompileProfiler.summary`,
:meth:`~CompileProfiler.to_dict`) end with an ``(unattributed)`` stage, the wall time of the
profiler not inside a top-level stage.

``PYPTO_COMPILE_PROFILING=1|true|yes`` turns profiling on for every
``ir.compile`` / ``@pl.jit`` call / ``runtime.run`` (each gets its own profiler and report, see
:func:`owned_profiler`); :func:`get_active_profiler` is the process-wide one for user code.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

ENV_VAR = "PYPTO_COMPILE_PROFILING"
TXT_FILE = "pipeline_profile.txt"
JSON_FILE = "pipeline_profile.json"
UNATTRIBUTED = "(unattributed)"
"""The stage holding the profiler's wall time outside every top-level stage."""
NAME_WIDTH = 28
TIME_WIDTH = 10


@dataclass
class Stage:
    """One timed stage: its name, its wall time and its sub-stages in order."""

    name: str
    seconds: float = 0.0
    children: list[Stage] = field(default_factory=list)

    @property
    def self_seconds(self) -> float:
        """Time not spent in a child stage."""
        return max(self.seconds - sum(c.seconds for c in self.children), 0.0)

    def to_dict(self, self_time: bool = False) -> dict[str, Any]:
        """``{"name", "seconds", "children"}`` (6 decimals); ``self_time`` adds
        ``"self_seconds"`` (not part of upstream's format)."""
        d: dict[str, Any] = {"name": self.name, "seconds": round(self.seconds, 6)}
        if self_time:
            d["self_seconds"] = round(self.self_seconds, 6)
        d["children"] = [c.to_dict(self_time) for c in self.children]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Stage:
        """The inverse of :meth:`to_dict`."""
        return cls(str(d["name"]), float(d["seconds"]), [cls.from_dict(c) for c in d.get("children", [])])


def format_seconds(t: float) -> str:
    """``139us`` below 1 ms, ``11.4ms`` below 1 s, else ``2.847s``."""
    if t < 1e-3:
        return f"{t * 1e6:.0f}us"
    if t < 1.0:
        return f"{t * 1e3:.1f}ms"
    return f"{t:.3f}s"


def format_summary(total: float, stages: list[Stage]) -> str:
    """The ``pipeline_profile.txt`` text (no trailing newline)."""
    lines = ["PyPTO Compile Profile", "=" * 22, f"Total: {format_seconds(total)}", ""]

    def add(stage: Stage, depth: int) -> None:
        pct = 100.0 * stage.seconds / total if total > 0 else 0.0
        lines.append(
            "  " * depth
            + stage.name.ljust(NAME_WIDTH)
            + " "
            + format_seconds(stage.seconds).rjust(TIME_WIDTH)
            + f"  ({pct:5.1f}%)"
        )
        for c in stage.children:
            add(c, depth + 1)

    for s in stages:
        add(s, 1)
    return "\n".join(lines)


def env_enabled() -> bool:
    """Whether ``PYPTO_COMPILE_PROFILING`` asks for profiling."""
    return os.environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "yes")


class CompileProfiler:
    """Records nested stages while active (a context manager; re-entrant use
    of one profiler is not supported)."""

    _stack: ClassVar[list[CompileProfiler]] = []

    def __init__(self) -> None:
        self.root = Stage("<root>")
        self._open: list[Stage] = [self.root]
        self._start: float | None = None
        self._end: float | None = None

    # ---- activation ----------------------------------------------------

    @classmethod
    def current(cls) -> CompileProfiler | None:
        """The innermost active profiler, or None (the one check when off)."""
        return cls._stack[-1] if cls._stack else None

    def __enter__(self) -> CompileProfiler:
        self._start = time.perf_counter()
        self._end = None
        CompileProfiler._stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        self._end = time.perf_counter()
        if self in CompileProfiler._stack:
            CompileProfiler._stack.remove(self)

    # ---- recording -----------------------------------------------------

    @contextmanager
    def stage(self, name: str) -> Iterator[Stage]:
        """Time the body as stage ``name``, a child of the open stage."""
        node = Stage(name)
        self._open[-1].children.append(node)
        self._open.append(node)
        start = time.perf_counter()
        try:
            yield node
        finally:
            node.seconds = time.perf_counter() - start
            self._open.pop()

    def add_stage(self, name: str, seconds: float) -> Stage:
        """Record an already measured stage under the open stage."""
        node = Stage(name, seconds)
        self._open[-1].children.append(node)
        return node

    # ---- results -------------------------------------------------------

    @property
    def stages(self) -> list[Stage]:
        """The top-level stages, in order."""
        return self.root.children

    @property
    def open_stage(self) -> str | None:
        """The name of the innermost open stage (None at the top)."""
        return self._open[-1].name if len(self._open) > 1 else None

    def reported_stages(self, total: float | None = None) -> list[Stage]:
        """:attr:`stages`, then ``(unattributed)`` (the wall time outside them, of ``total``:
        default :attr:`total_seconds`) when the profiler was entered: what :meth:`summary` and
        :meth:`to_dict` show."""
        if self._start is None:
            return list(self.stages)
        total = self.total_seconds if total is None else total
        rest = total - sum(s.seconds for s in self.stages)
        return [*self.stages, Stage(UNATTRIBUTED, max(rest, 0.0))]

    @property
    def attributed_fraction(self) -> float:
        """The share of the total inside named stages (1.0 for an empty profile)."""
        total = self.total_seconds
        return min(sum(s.seconds for s in self.stages) / total, 1.0) if total > 0 else 1.0

    @property
    def total_seconds(self) -> float:
        """Wall time from entering the profiler to leaving it (or now); the
        sum of the stages when it was never entered."""
        if self._start is None:
            return sum(s.seconds for s in self.stages)
        end = self._end if self._end is not None else time.perf_counter()
        return max(end - self._start, sum(s.seconds for s in self.stages))

    def to_dict(self, self_time: bool = False) -> dict[str, Any]:
        """``{"total_seconds", "stages"}`` (the JSON report's content)."""
        total = self.total_seconds
        return {
            "total_seconds": round(total, 6),
            "stages": [s.to_dict(self_time) for s in self.reported_stages(total)],
        }

    def to_json(self, path: str | os.PathLike[str] | None = None, indent: int = 2) -> str:
        """The JSON text; also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path is not None:
            from pypto.utils.atomic import atomic_write_text

            atomic_write_text(path, text + "\n")
        return text

    def summary(self) -> str:
        """The human-readable table (``pipeline_profile.txt``)."""
        total = self.total_seconds
        return format_summary(total, self.reported_stages(total))

    def write_report(
        self, directory: str | os.PathLike[str], data: dict[str, Any] | None = None
    ) -> tuple[Path, Path]:
        """Write ``pipeline_profile.txt`` and ``.json`` into ``directory`` (of ``data``, a
        :meth:`to_dict` taken earlier, when given; else of one snapshot taken now)."""
        from pypto.utils.atomic import atomic_write_text

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        txt, js = d / TXT_FILE, d / JSON_FILE
        data = self.to_dict() if data is None else data  # one snapshot for both files
        stages = [Stage.from_dict(s) for s in data["stages"]]
        atomic_write_text(txt, format_summary(float(data["total_seconds"]), stages) + "\n", durable=False)
        atomic_write_text(js, json.dumps(data, indent=2) + "\n", durable=False)
        return txt, js


_env_profiler: CompileProfiler | None = None


def get_active_profiler() -> CompileProfiler | None:
    """The active profiler: the innermost ``with CompileProfiler()``, else --
    when ``PYPTO_COMPILE_PROFILING`` is set -- a process-wide profiler
    (activated on first use), else None."""
    global _env_profiler
    prof = CompileProfiler.current()
    if prof is not None or not env_enabled():
        return prof
    if _env_profiler is None:
        _env_profiler = CompileProfiler().__enter__()
    return _env_profiler


@contextmanager
def owned_profiler(wanted: bool) -> Iterator[tuple[CompileProfiler | None, bool]]:
    """``(profiler, owned)`` for one compile / run: the active profiler (``with CompileProfiler()``)
    when there is one (``owned`` False), else -- when ``wanted`` or ``PYPTO_COMPILE_PROFILING`` is
    set -- a new one, active inside the block (``owned`` True: the caller writes its report), else
    ``(None, False)``."""
    prof = CompileProfiler.current()
    if prof is not None or not (wanted or env_enabled()):
        yield prof, False
        return
    with CompileProfiler() as own:
        yield own, True


def profiling_wanted(wanted: bool) -> bool:
    """Whether :func:`owned_profiler` would give a profiler: one is active, or ``wanted``, or
    ``PYPTO_COMPILE_PROFILING`` asks for one."""
    return bool(CompileProfiler._stack or wanted or env_enabled())


def current() -> CompileProfiler | None:
    """``CompileProfiler.current()``."""
    return CompileProfiler.current()


@contextmanager
def stage(name: str) -> Iterator[Stage | None]:
    """Record stage ``name`` in the active profiler, if any (else do nothing)."""
    prof = CompileProfiler.current()
    if prof is None:
        yield None
        return
    with prof.stage(name) as node:
        yield node


__all__ = [
    "UNATTRIBUTED",
    "CompileProfiler",
    "Stage",
    "current",
    "env_enabled",
    "format_seconds",
    "format_summary",
    "get_active_profiler",
    "owned_profiler",
    "profiling_wanted",
    "stage",
]
