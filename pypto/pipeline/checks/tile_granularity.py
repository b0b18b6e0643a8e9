"""PH001 ``TileInnermostDimGranularity``: a ``tile.load`` / ``tile.store``
whose innermost dimension moves fewer bytes than the backend's recommended
DMA granularity (a2a3: 512 B, a5: 128 B; L2 cache line 512 B).

Message (upstream's, pl-dsl.md §6)::

    tile.load has innermost dim = 256B (tile fp16[128], target_memory=Mat); moves 32768B as 128 x 256B rows; recommended >= 512B for backend a2a3 (L2 cache line = 512B). Consider increasing tile shape on the innermost axis.

``<dt>[<n>]`` is the tile's dtype and innermost extent, ``target_memory`` the
tile's memory space (for a store: the stored tile's), ``moves <T>B as <R> x
<b>B rows`` the whole transfer (omitted when an extent is symbolic). Hints are
deduplicated per site: identical transfers at one source location (an
unrolled loop, a pipeline's stages) give one hint ending ``(<N> occurrences at
this source location)``; different transfers at one location keep their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation

from pypto.diagnostics import Diagnostic, Severity, op_span
from pypto.dialects.dtypes import dtype_bits, dtype_name
from pypto.dialects.types import DYNAMIC, TileType

RULE = "TileInnermostDimGranularity"
CODE = "PH001"
L2_CACHE_LINE = 512


@dataclass(frozen=True)
class Backend:
    """The thresholds of one backend."""

    arch: str
    recommended_bytes: int
    l2_cache_line: int = L2_CACHE_LINE


BACKENDS: dict[str, Backend] = {
    "a2a3": Backend("a2a3", 512),
    "a2a3sim": Backend("a2a3", 512),
    "Ascend910B": Backend("a2a3", 512),
    "a5": Backend("a5", 128),
    "a5sim": Backend("a5", 128),
    "Ascend950": Backend("a5", 128),
}
"""Backend / platform name -> thresholds (``GetRecommendedInnermostDimBytes``)."""


def backend_of(name: str) -> Backend:
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    return BACKENDS[name]


def transferred_tile(op: Operation) -> TileType | None:
    """The tile a load produces or a store stores (None for other ops)."""
    if op.name == "pl.tile.load" and op.results:
        t: Attribute = op.results[0].type
    elif op.name == "pl.tile.store" and op.operands:
        t = op.operands[0].type
    else:
        return None
    return t if isinstance(t, TileType) else None


@dataclass
class _Site:
    op: Operation
    message: str
    count: int = 1


@dataclass
class GranularityCheck:
    """Collects PH001 sites over a module."""

    backend: Backend
    sites: dict[tuple[object, ...], _Site] = field(default_factory=dict)

    def message(self, op_name: str, tile: TileType) -> str | None:
        shape = tile.get_shape()
        if not shape:
            return None
        inner = shape[-1]
        bits = dtype_bits(tile.element_type)
        elem_bytes = max((bits + 7) // 8, 1)
        if inner == DYNAMIC:
            return None
        inner_bytes = inner * elem_bytes
        if inner_bytes >= self.backend.recommended_bytes:
            return None
        dt = dtype_name(tile.element_type).lower()
        msg = (
            f"{op_name} has innermost dim = {inner_bytes}B (tile {dt}[{inner}], "
            f"target_memory={tile.memory_space.value})"
        )
        if DYNAMIC not in shape:
            rows = prod(shape[:-1]) if len(shape) > 1 else 1
            msg += f"; moves {rows * inner_bytes}B as {rows} x {inner_bytes}B rows"
        msg += (
            f"; recommended >= {self.backend.recommended_bytes}B for backend {self.backend.arch} "
            f"(L2 cache line = {self.backend.l2_cache_line}B). Consider increasing tile shape on the innermost axis."
        )
        return msg

    def visit(self, op: Operation) -> None:
        tile = transferred_tile(op)
        if tile is None:
            return
        op_name = op.name.removeprefix("pl.")
        msg = self.message(op_name, tile)
        if msg is None:
            return
        span = op_span(op)
        key: tuple[object, ...] = (op_name, msg, str(span) if span is not None else ("op", id(op)))
        site = self.sites.get(key)
        if site is None:
            self.sites[key] = _Site(op, msg)
        else:
            site.count += 1

    def diagnostics(self) -> list[tuple[Operation, Diagnostic]]:
        out: list[tuple[Operation, Diagnostic]] = []
        for site in self.sites.values():
            msg = site.message
            if site.count > 1:
                msg += f" ({site.count} occurrences at this source location)"
            out.append((site.op, Diagnostic(Severity.REMARK, msg, op_span(site.op), rule=RULE, code=CODE)))
        return out


def check_tile_granularity(module: ModuleOp, backend: str = "a2a3") -> list[tuple[Operation, Diagnostic]]:
    """PH001 hints for ``module`` (not emitted): (site op, diagnostic) pairs."""
    check = GranularityCheck(backend_of(backend))
    for op in module.walk():
        check.visit(op)
    return check.diagnostics()
