"""``scope_stats/scope_stats.jsonl`` (runtime-dfx-formats.md §7, schema version 6) for ``enable_scope_stats``.

Line 1 is the run's metadata ``{version, fatal, dropped, total, task_window_max[], heap_max[],
dep_pool_max[], tensormap_max}``; every later line is one scope boundary ``{site, phase, depth, ring,
task_window_start, task_window_end, heap_start, heap_end, dep_pool_start, dep_pool_end, tensormap}``,
in the order the orchestration crossed them (a scope's ``begin`` before anything it issues, its ``end``
after). How the simulated runtime fills it in:

- **Scopes.** The host interpreter (:mod:`pypto.runtime.orchestration`) records a scope around the entry
  function's body (depth 0, the root scope upstream's executor opens), around each iteration of an
  ``scf.for`` (``pl.range`` / ``pl.parallel`` loops), around the taken branch of an ``scf.if`` and
  around the body of each inlined Orchestration / Opaque / Inline call: where upstream PyPTO's
  MaterializeRuntimeScopes puts a ``PTO2_SCOPE()``. ``with pl.at(...)`` regions are not runtime
  scopes: they are outlined into InCore kernels before the run, so each is a task of the enclosing
  scope. ``with pl.scope()`` leaves no op (it marks the function), so its body is the function's scope.
- **site** is ``basename:line`` of the op that opens the scope in the DSL source (the ``for`` / ``if``
  statement, the function's ``def``), as upstream writes ``basename:line`` of its ``PTO2_SCOPE()``;
  ``"?:0"`` where the op has no location.
- **ring** is ``min(depth, MAX_RING_DEPTH - 1)`` with :data:`MAX_RING_DEPTH` = 4, upstream's
  ``PTO2_MAX_RING_DEPTH`` of the tensormap_and_ringbuffer runtime (hw-native-sys/simpler
  docs/dfx/scope-stats.md: the capacity arrays are indexed by ring ``0..3``). A task, a buffer and a
  dependency entry belong to the ring of the innermost scope open when it is issued.
- **Heads** (``*_end``) are monotonic counters per ring: ``task_window_end`` the tasks submitted in the
  ring so far; ``heap_end`` the bytes (``nbytes``, no alignment) of the device buffers ``pl.tensor.create``
  made in the ring so far (the runtime's heap allocations: parameters are the caller's tensors and
  take no heap); ``dep_pool_end`` the dependency entries so far, one per (task, distinct predecessor)
  (``len(Task.deps)``, the fan-in edges the runtime wires).
- **Tails** (``*_start``) are 0: the simulator's orchestration walks the whole program on the host and
  builds the full task graph before the first task is dispatched, and keeps every task, buffer and
  dependency until the run ends, so nothing is reclaimed while a scope is open or closed. Hence a
  scope's high water equals its live-at-exit value here; the report's alloc column is what it adds.
- **tensormap** is the live tensormap entries: the buffers whose last producer task the runtime tracks
  (a buffer written by some task so far); the simulator never retires one, so it only grows.
- **Capacities**: ``RunConfig.ring_task_window`` / ``ring_heap`` / ``ring_dep_pool`` (an int for every
  ring, or a sequence per ring) where set, else upstream's defaults ``PTO2_TASK_WINDOW_SIZE`` 16384,
  ``PTO2_HEAP_SIZE`` 256 MiB and ``PTO2_DEP_LIST_POOL_SIZE`` 16384 per ring; ``tensormap_max`` is
  ``PTO2_TENSORMAP_POOL_SIZE`` 65536 (pto_runtime2_types.h). The simulator does not enforce them.
- ``fatal`` is false and ``dropped`` 0 (the simulator neither stops on a full ring nor loses records);
  ``total`` is the number of scope records.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from .base import Collector, register, write_artefact
from .jsonenc import compact_encoder

VERSION = 6
MAX_RING_DEPTH = 4
"""Upstream's ``PTO2_MAX_RING_DEPTH``: rings ``0..3``; deeper scopes share ring 3."""
DEFAULT_TASK_WINDOW = 16384
DEFAULT_HEAP = 256 * 1024 * 1024
DEFAULT_DEP_POOL = 16384
TENSORMAP_MAX = 65536
RESOURCES = ("task_window", "heap", "dep_pool")
"""The per-ring resources (each has ``<name>_start`` / ``<name>_end``); ``tensormap`` is one global count."""


def ring_of(depth: int) -> int:
    """``min(depth, MAX_RING_DEPTH - 1)``."""
    return min(depth, MAX_RING_DEPTH - 1)


def site_of(loc: str | None) -> str:
    """``basename:line`` of a ``file:line:col`` location, ``"?:0"`` without one."""
    if not loc:
        return "?:0"
    parts = loc.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return f"{os.path.basename(parts[0])}:{parts[1]}"
    return os.path.basename(loc)


def _caps(value: Any, default: int, name: str) -> list[int]:
    if value is None:
        return [default] * MAX_RING_DEPTH
    if isinstance(value, int) and not isinstance(value, bool):
        vals = [value] * MAX_RING_DEPTH
    elif isinstance(value, Sequence) and not isinstance(value, str) and 0 < len(value) <= MAX_RING_DEPTH:
        vals = [int(v) for v in value] + [default] * (MAX_RING_DEPTH - len(value))
    else:
        raise ValueError(f"RunConfig.{name} takes an int or up to {MAX_RING_DEPTH} ints (one per ring), got {value!r}")
    if any(v <= 0 for v in vals):
        raise ValueError(f"RunConfig.{name} must be positive, got {value!r}")
    return vals


def metadata(config: Any, total: int) -> dict[str, Any]:
    """Line 1 of the file."""
    return {
        "version": VERSION,
        "fatal": False,
        "dropped": 0,
        "total": total,
        "task_window_max": _caps(getattr(config, "ring_task_window", None), DEFAULT_TASK_WINDOW, "ring_task_window"),
        "heap_max": _caps(getattr(config, "ring_heap", None), DEFAULT_HEAP, "ring_heap"),
        "dep_pool_max": _caps(getattr(config, "ring_dep_pool", None), DEFAULT_DEP_POOL, "ring_dep_pool"),
        "tensormap_max": TENSORMAP_MAX,
    }


def scope_lines(graph: Any) -> list[str]:
    """One JSON line per scope boundary of ``graph.scopes`` (see the module docstring), as ``json.dumps``
    spells the record ``{site, phase, depth, ring, <resource>_start, <resource>_end ..., tensormap}`` (its
    keys in that order), formatted from a template rather than built as a dict only to be encoded."""
    tasks_end, heap_end, pool_end = ([0] * MAX_RING_DEPTH for _ in RESOURCES)  # each resource's heads by ring
    stack: list[int] = []  # the rings of the open scopes
    tasks_seen = 0
    buffers_seen = None  # the buffers before the root scope are the parameters
    sites: dict[str | None, str] = {}  # a location -> its site as JSON
    out: list[str] = []
    for ev in graph.scopes:
        if buffers_seen is None:
            buffers_seen = ev.buffers
        if stack:  # what the innermost open scope issued since the last boundary
            ring = stack[-1]
            for t in graph.tasks[tasks_seen : ev.tasks]:
                tasks_end[ring] += 1
                pool_end[ring] += len(t.deps)
            for b in graph.buffers[buffers_seen : ev.buffers]:
                if b.origin.startswith("tensor.create"):
                    heap_end[ring] += b.nbytes
        tasks_seen, buffers_seen = ev.tasks, ev.buffers
        ring = ring_of(ev.depth)
        if ev.phase == "begin":
            stack.append(ring)
        else:
            stack.pop()
        site = sites.get(ev.loc)
        if site is None:
            site = sites[ev.loc] = encode_basestring_ascii(site_of(ev.loc))
        out.append(
            f'{{"site": {site}, "phase": {encode_basestring_ascii(ev.phase)}, "depth": {int(ev.depth)}, '
            f'"ring": {ring}, "task_window_start": 0, "task_window_end": {tasks_end[ring]}, "heap_start": 0, '
            f'"heap_end": {heap_end[ring]}, "dep_pool_start": 0, "dep_pool_end": {pool_end[ring]}, '
            f'"tensormap": {int(ev.tensormap)}}}'
        )
    return out


def scope_stats_lines(result: Any, config: Any = None) -> list[str]:
    """The file's lines (metadata first), each one JSON object."""
    records = scope_lines(result.graph)
    encode = compact_encoder(separators=(", ", ": "))  # json.dumps's spelling, its C encoder built once
    return [encode(metadata(config, len(records))), *records]


def write_scope_stats(result: Any, path: Path, config: Any = None) -> Path:
    """Write the file atomically; returns its path."""
    write_artefact(path, "\n".join(scope_stats_lines(result, config)) + "\n")
    return path


@register
class ScopeStatsCollector(Collector):
    """``enable_scope_stats``: ``scope_stats/scope_stats.jsonl``."""

    FLAG = "enable_scope_stats"
    OUTPUTS = ("scope_stats",)

    def finish(self, result: Any) -> list[Path]:
        path = self.out_dir / "scope_stats" / "scope_stats.jsonl"
        return [write_scope_stats(result, path, getattr(self, "config", None))]
