"""Load a chip description (an ``npu.target`` in a ``.mlir`` file) and query it.

``load_target("a2a3")`` reads the packaged ``targets/a2a3.mlir``;
``load_target(path)`` reads a user's edited copy (docs/target.md). Targets are
cached by file path and modification time, so an edited file is re-read.

The queries follow pto-isa's cost model (../shared/reference/a2a3-costs.md):

- :meth:`Target.pipe_of`: the ``npu.op_pipe`` rules (§3).
- :meth:`Target.compute_cycles`: the ``npu.compute_cost`` formula rows (§4),
  else the perf_sim fallback (``npu.fallback``: op-specific rows first, then
  the row of the op's pipe as perf_sim's static lookup sees it, i.e. without
  tile spaces).
- :meth:`Target.matmul_cycles`: ``npu.matmul_cost`` (§5).
- :meth:`Target.transfer_key` / :meth:`Target.transfer_cycles`: the
  ``npu.transfer_key`` rules and the CCE-mock bandwidth formula (§6).
- :meth:`Target.sync_cycles`: ``npu.sync_cost`` (§8).

Memory spaces are matched case-insensitively by their pl name (``Vec``) or
their hardware name (``UB``), so pto's ``vec`` works as well. dtypes are
pto-isa's names (``fp32``, ``fp16``, ``bf16``, ``int8`` ...); the pl/MLIR
spellings (``FP32``, ``f32``, ``float32``) are accepted too.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException

from pypto.errors import Error
from pypto.utils.parse_errors import parse_error_text

from .dialect import (
    AicpuOp,
    BufferOp,
    ComputeCostOp,
    CoresOp,
    DispatchLatencyOp,
    EventsOp,
    FallbackOp,
    LinkOp,
    MatmulCostOp,
    OpPipeOp,
    PipeOp,
    SyncCostOp,
    TargetOp,
    TransferKeyOp,
    TransferOp,
    make_npu_context,
)
from .dtypes import ROWS, pto_aliases

TARGETS_DIR = Path(__file__).parent / "targets"
"""Where the packaged targets live (``<name>.mlir``)."""

ALIASES: dict[str, str] = {"a2a3sim": "a2a3", "Ascend910B": "a2a3"}
"""Platform / backend names that mean a packaged target."""

BYTES_PER_GIB = 2**30

DTYPE_BYTES: dict[str, int] = {r.pto: r.bits // 8 for r in ROWS if r.pto is not None}
"""Element size of each pto-isa dtype (for the matmul k fractal)."""

_DTYPE_ALIASES: dict[str, str] = pto_aliases()


class TargetError(Error, ValueError):
    """A target file that is missing, does not parse or does not verify, or a
    query the target cannot answer."""


def normalize_dtype(dtype: str) -> str:
    """pto-isa's spelling of a dtype: ``FP32``/``f32``/``float32`` -> ``fp32``."""
    d = str(dtype).strip().lower()
    return _DTYPE_ALIASES.get(d, d)


def _instr_name(instr: str) -> str:
    """``TLOAD`` from ``tload``, ``pto.tload`` or ``TLOAD``."""
    return str(instr).rsplit(".", 1)[-1].upper()


def _matches(pattern: str, name: str) -> bool:
    if pattern == "*":
        return True
    if pattern.endswith("*"):
        return name.startswith(pattern[:-1])
    return name == pattern


@dataclass(frozen=True)
class Rule:
    """One ``npu.op_pipe`` / ``npu.transfer_key`` row: op patterns, optional spaces, answer."""

    ops: tuple[str, ...]
    src: str | None
    dst: str | None
    result: str

    def matches(self, instr: str, src: str | None, dst: str | None) -> bool:
        """Does the row apply to ``instr`` moving ``src`` -> ``dst`` (spaces already canonical)?"""
        if not any(_matches(p, instr) for p in self.ops):
            return False
        if self.src is not None and (src is None or src.lower() != self.src.lower()):
            return False
        return not (self.dst is not None and (dst is None or dst.lower() != self.dst.lower()))


@dataclass(frozen=True)
class Fallback:
    """One ``npu.fallback`` row: ``base + mul * elems // div``."""

    pipe: str | None
    op: str | None
    dtype: str | None
    base: int
    mul: int
    div: int

    def cycles(self, elems: int) -> int:
        """Cycles for ``elems`` elements (integer maths as in perf_sim)."""
        return self.base + self.mul * elems // self.div


@dataclass(frozen=True)
class MatmulRow:
    """One ``npu.matmul_cost`` row."""

    head: int
    per_fractal: int
    fractal_m: int
    fractal_k_bytes: int
    fractal_n: int


@dataclass(frozen=True)
class Bandwidth:
    """One ``npu.transfer`` row (GiB/s; optional Hill fit ``peak * B / (k + B)``)."""

    gib_per_s: float
    hill_peak_gib_per_s: float | None = None
    hill_k_bytes: float | None = None


@dataclass(frozen=True)
class AicpuCosts:
    """The ``npu.aicpu`` row: AICPU scheduler threads and each step's cost in core cycles (the default,
    no row: one thread, every step free, so a task starts a fixed dispatch latency after it is ready)."""

    threads: int = 1
    submit: int = 0
    alloc: int = 0
    complete: int = 0
    release: int = 0
    dispatch: int = 0
    drain: int = 0
    """The prepare step of a ``drain`` phase (a ``sync_start`` SPMD launch), once per drain."""


@dataclass(frozen=True)
class LinkCosts:
    """One chip-to-chip hop (``npu.link``): bandwidth in GB/s (1e9 B/s) and a fixed latency in cycles."""

    gb_per_s: float
    latency_cycles: int

    def hop_cycles(self, nbytes: int, clock_hz: float) -> int:
        """Cycles of one hop carrying ``nbytes``: latency plus ``ceil(nbytes / bandwidth * clock)``."""
        return self.latency_cycles + self.busy_cycles(nbytes, clock_hz)

    def busy_cycles(self, nbytes: int, clock_hz: float) -> int:
        """Cycles the link is occupied by ``nbytes``: ``ceil(nbytes / bandwidth * clock)``, the hop without its
        latency (the latency of back-to-back transfers overlaps; only the bytes queue behind each other)."""
        return math.ceil(nbytes / (self.gb_per_s * 1e9) * clock_hz)


@dataclass(frozen=True)
class Target:
    """A chip: core counts, clock, buffers and the cost tables.

    The first fields are the interface other components rely on; the tables
    after them are read by the query methods."""

    name: str
    clock_hz: float
    aic_cores: int
    aiv_per_aic: int
    dispatch_latency_cycles: int
    capacity: dict[str, int]
    """Bytes per pl memory space (``Vec``, ``Mat``, ``Left``, ``Right``, ``Acc``, ``Bias`` ...)."""
    event_ids_per_pipe_pair: int
    block_bytes: int = 32
    pipes: dict[str, str] = field(default_factory=dict)
    """Pipe name -> PTO pipe (``"VECTOR"`` -> ``"PIPE_V"``), in declaration order."""
    hw_names: dict[str, str] = field(default_factory=dict)
    """pl memory space -> hardware buffer name (``"Vec"`` -> ``"UB"``)."""
    alignment: dict[str, int] = field(default_factory=dict)
    """pl memory space -> the byte alignment of a planned address (``align``, else ``block_bytes``)."""
    op_pipe_rules: tuple[Rule, ...] = ()
    transfer_rules: tuple[Rule, ...] = ()
    compute_rows: dict[tuple[str, str, int | None], tuple[float, float]] = field(default_factory=dict)
    """``(op, dtype, cols or None)`` -> ``(slope, bias)``."""
    matmul_rows: dict[str, MatmulRow] = field(default_factory=dict)
    fallbacks: tuple[Fallback, ...] = ()
    bandwidth: dict[str, Bandwidth] = field(default_factory=dict)
    sync_costs: dict[str, int] = field(default_factory=dict)
    aicpu: AicpuCosts = AicpuCosts()
    """The AICPU scheduler and orchestrator costs (``npu.aicpu``)."""
    link: LinkCosts | None = None
    """The chip-to-chip hop (``npu.link``), None when the target has none."""
    source: str | None = None
    """The file the target was read from."""

    def __hash__(self) -> int:
        """Hashable (usable as a cache key) although its tables are dicts."""
        return hash((self.name, self.source, self.clock_hz, tuple(sorted(self.capacity.items()))))

    # ---- derived ---------------------------------------------------------

    @property
    def aiv_cores(self) -> int:
        """Vector cores on the chip (``aic_cores * aiv_per_aic``)."""
        return self.aic_cores * self.aiv_per_aic

    def cycles_to_us(self, cycles: float) -> float:
        """Microseconds of ``cycles`` core cycles."""
        return cycles * 1e6 / self.clock_hz

    def _space(self, space: str | None) -> str | None:
        """The declared pl name of ``space`` (matched by pl or hardware name, any case)."""
        if space is None:
            return None
        s = str(getattr(space, "value", space))
        low = s.lower()
        for pl_name in self.capacity:
            if low in (pl_name.lower(), self.hw_names.get(pl_name, "").lower()):
                return pl_name
        return s

    def space_name(self, space: str) -> str:
        """The declared name of a memory space given by its pl name (``Vec``), its pto
        address space (``vec``) or its hardware name (``UB``); TargetError if undeclared.
        The declared names are also pto-isa's C++ ``TileType`` names."""
        name = self._space(space)
        if name not in self.capacity:
            raise TargetError(f"target {self.name}: no npu.buffer for memory space {str(space)!r}")
        return name

    def capacity_of(self, space: str) -> int:
        """Bytes of a memory space (any spelling :meth:`space_name` accepts)."""
        return self.capacity[self.space_name(space)]

    def alignment_of(self, space: str) -> int:
        """Byte alignment of a planned address in a memory space: its ``align``, else ``block_bytes``."""
        return self.alignment.get(self.space_name(space), self.block_bytes)

    def has_space(self, space: str) -> bool:
        """Does the target declare this memory space (any spelling :meth:`space_name` accepts)?"""
        return self._space(space) in self.capacity

    # ---- queries -----------------------------------------------------------

    def pipe_of(self, instr: str, src_space: str | None = None, dst_space: str | None = None) -> str:
        """The pipe ``instr`` occupies (``"MTE2"``, ``"VECTOR"`` ...): the first
        ``npu.op_pipe`` rule that matches. Spaces are the tile spaces (dst for
        TLOAD, src for TSTORE, both for TMOV/TEXTRACT)."""
        name = _instr_name(instr)
        src, dst = self._space(src_space), self._space(dst_space)
        for rule in self.op_pipe_rules:
            if rule.matches(name, src, dst):
                return rule.result
        raise TargetError(f"target {self.name}: no npu.op_pipe rule for {name} (src={src}, dst={dst})")

    def compute_cycles(self, instr: str, dtype: str, rows: int, cols: int) -> int:
        """Cycles of a compute instruction on a ``rows x cols`` tile: the
        formula row ``llround(slope * rows * cols + bias)`` picked by exact
        (op, dtype, cols), then (op, dtype, *), (op, any, cols), (op, any, *);
        else the perf_sim fallback."""
        name, dt = _instr_name(instr), normalize_dtype(dtype)
        for key in ((name, dt, cols), (name, dt, None), (name, "any", cols), (name, "any", None)):
            row = self.compute_rows.get(key)
            if row is not None:
                slope, bias = row
                cycles = math.floor(slope * rows * cols + bias + 0.5)  # llround (values are >= 0)
                if cycles > 0:
                    return cycles
        return self.fallback_cycles(name, dt, rows, cols)

    def fallback_cycles(self, instr: str, dtype: str, rows: int, cols: int) -> int:
        """perf_sim's fallback: an op-specific ``npu.fallback`` row (matching
        dtype when it names one), else the row of the op's pipe."""
        name, dt = _instr_name(instr), normalize_dtype(dtype)
        elems = rows * cols
        for fb in self.fallbacks:
            if fb.op is not None and _matches(fb.op, name) and (fb.dtype is None or fb.dtype == dt):
                return fb.cycles(elems)
        pipe = self.pipe_of(name)
        for fb in self.fallbacks:
            if fb.pipe == pipe:
                return fb.cycles(elems)
        raise TargetError(f"target {self.name}: no npu.fallback row for pipe {pipe}")

    def matmul_cycles(self, m: int, k: int, n: int, a_dtype: str) -> int:
        """``head + per_fractal * ceil(m/fm) * ceil(k/(fk_bytes/sizeof(A))) * ceil(n/fn)``
        from the ``npu.matmul_cost`` row of ``a_dtype`` (else ``any``)."""
        dt = normalize_dtype(a_dtype)
        row = self.matmul_rows.get(dt) or self.matmul_rows.get("any")
        if row is None:
            raise TargetError(f"target {self.name}: no npu.matmul_cost row for {dt} and no 'any' row")
        size = DTYPE_BYTES.get(dt)
        if size is None:
            raise TargetError(f"target {self.name}: unknown element size of dtype {str(a_dtype)!r}")
        k_block = max(1, row.fractal_k_bytes // size)
        fractals = math.ceil(m / row.fractal_m) * math.ceil(k / k_block) * math.ceil(n / row.fractal_n)
        return row.head + row.per_fractal * fractals

    def transfer_key(self, instr: str, src_space: str | None, dst_space: str | None) -> str:
        """The bandwidth key of a data move (``"GM_TO_UB"`` ...): the first
        ``npu.transfer_key`` rule that matches."""
        name = _instr_name(instr)
        src, dst = self._space(src_space), self._space(dst_space)
        for rule in self.transfer_rules:
            if rule.matches(name, src, dst):
                return rule.result
        raise TargetError(f"target {self.name}: no npu.transfer_key rule for {name} (src={src}, dst={dst})")

    def transfer_cycles(self, key: str, nbytes: int, fitted: bool = False) -> int:
        """``trunc(nbytes / 2^30 / bw * clock_hz)`` with the flat bandwidth of
        ``key`` (CCE mock); ``fitted=True`` uses the Hill fit where given."""
        bw_row = self.bandwidth.get(key)
        if bw_row is None:
            raise TargetError(f"target {self.name}: no npu.transfer row for key {key!r}")
        bw = bw_row.gib_per_s
        if fitted and bw_row.hill_peak_gib_per_s is not None and bw_row.hill_k_bytes is not None and nbytes > 0:
            bw = bw_row.hill_peak_gib_per_s * nbytes / (bw_row.hill_k_bytes + nbytes)
        return int(nbytes / BYTES_PER_GIB / bw * self.clock_hz)

    def sync_cycles(self, instr: str) -> int:
        """Cycles of a sync intrinsic (``set_flag``, ``wait_flag``,
        ``pipe_barrier``, ...; ``pto.set_flag``, ``pto.barrier`` and the
        ``_dyn`` forms are accepted)."""
        name = str(instr).lower()
        name = name.removeprefix("pto.")
        name = name.removesuffix("_dyn")
        name = {"barrier": "pipe_barrier"}.get(name, name)
        cycles = self.sync_costs.get(name)
        if cycles is None:
            raise TargetError(f"target {self.name}: no npu.sync_cost row for {instr!r}")
        return cycles


# ---- building a Target from IR -------------------------------------------------


def verify_target_op(op: TargetOp) -> None:
    """Verify ``op``'s body, then ``op``, raising a one-line VerifyException
    that names the op and field at fault (not xDSL's dump of the whole module)."""
    for child in [*op.body.block.ops, op]:
        try:
            child.verify_()
        except VerifyException as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            describe = getattr(child, "describe", None)
            prefix = describe() if callable(describe) else child.name
            raise VerifyException(msg if msg.startswith(child.name) else f"{prefix}: {msg}") from None


def target_from_op(op: TargetOp, source: str | None = None) -> Target:
    """The :class:`Target` an ``npu.target`` op describes (the op must verify)."""
    cores = op.body_ops(CoresOp)[0]
    buffers = op.body_ops(BufferOp)

    def rules(kind: type[OpPipeOp] | type[TransferKeyOp]) -> tuple[Rule, ...]:
        return tuple(
            Rule(
                tuple(r.op_names()),
                r.src.data if r.src is not None else None,
                r.dst.data if r.dst is not None else None,
                r.result_name(),
            )
            for r in op.body_ops(kind)
        )

    compute_rows: dict[tuple[str, str, int | None], tuple[float, float]] = {}
    for c in op.body_ops(ComputeCostOp):
        cols = None if c.cols is None else c.cols.value.data
        compute_rows[(c.op.data.upper(), normalize_dtype(c.dtype.data), cols)] = (c.slope.value.data, c.bias.value.data)
    matmul_rows = {
        normalize_dtype(r.a_dtype.data): MatmulRow(*(r.field(f) for f in MatmulCostOp.INT_FIELDS))
        for r in op.body_ops(MatmulCostOp)
    }
    fallbacks = tuple(
        Fallback(
            f.pipe.data if f.pipe is not None else None,
            f.op.data.upper() if f.op is not None else None,
            normalize_dtype(f.dtype.data) if f.dtype is not None else None,
            f.base.value.data,
            f.mul.value.data,
            f.div.value.data,
        )
        for f in op.body_ops(FallbackOp)
    )
    bandwidth = {
        t.key.data: Bandwidth(
            t.gib_per_s.value.data,
            t.hill_peak_gib_per_s.value.data if t.hill_peak_gib_per_s is not None else None,
            t.hill_k_bytes.value.data if t.hill_k_bytes is not None else None,
        )
        for t in op.body_ops(TransferOp)
    }
    sync_costs = {n.data.lower(): s.cycles.value.data for s in op.body_ops(SyncCostOp) for n in s.ops.data}
    aicpu_rows = op.body_ops(AicpuOp)
    links = op.body_ops(LinkOp)
    return Target(
        name=op.sym_name.data,
        clock_hz=op.clock_hz.value.data,
        aic_cores=cores.aic.value.data,
        aiv_per_aic=cores.aiv_per_aic.value.data,
        dispatch_latency_cycles=op.body_ops(DispatchLatencyOp)[0].cycles.value.data,
        capacity={b.space.data: b.size.value.data for b in buffers},
        event_ids_per_pipe_pair=op.body_ops(EventsOp)[0].per_pipe_pair.value.data,
        block_bytes=op.block_bytes.value.data,
        pipes={p.pipe.data: p.pto.data for p in op.body_ops(PipeOp)},
        hw_names={b.space.data: b.hw.data for b in buffers if b.hw is not None},
        alignment={b.space.data: (b.align or op.block_bytes).value.data for b in buffers},
        op_pipe_rules=rules(OpPipeOp),
        transfer_rules=rules(TransferKeyOp),
        compute_rows=compute_rows,
        matmul_rows=matmul_rows,
        fallbacks=fallbacks,
        bandwidth=bandwidth,
        sync_costs=sync_costs,
        aicpu=AicpuCosts(**{f: aicpu_rows[0].field(f) for f in (*AicpuOp.FIELDS, *AicpuOp.OPTIONAL)})
        if aicpu_rows
        else AicpuCosts(),
        link=LinkCosts(links[0].gb_per_s.value.data, links[0].latency_cycles.value.data) if links else None,
        source=source,
    )


# ---- parsing, printing, loading ----------------------------------------------


def parse_target_op(text: str, source: str = "<target>") -> TargetOp:
    """Parse and verify the one ``npu.target`` in ``text``; errors are
    :class:`TargetError` naming ``source``."""
    try:
        module = Parser(make_npu_context(), text, name=source).parse_module()
    except ParseError as e:
        raise TargetError(f"{source}: cannot parse the target description:\n{parse_error_text(e)}") from None
    ops = list(module.body.block.ops) if isinstance(module, ModuleOp) else [module]
    targets = [o for o in ops if isinstance(o, TargetOp)]
    if len(targets) != 1 or len(ops) != 1:
        raise TargetError(f"{source}: expected exactly one npu.target op, found {len(targets)} among {len(ops)} ops")
    try:
        verify_target_op(targets[0])
    except VerifyException as e:
        raise TargetError(f"{source}: {e}") from None
    return targets[0]


def print_target_op(op: TargetOp) -> str:
    """The custom-syntax text of ``op`` (what :func:`parse_target_op` reads back)."""
    import io

    out = io.StringIO()
    Printer(stream=out).print_op(op)
    return out.getvalue() + "\n"


def packaged_targets() -> list[str]:
    """Names of the targets shipped with the package."""
    return sorted(p.stem for p in TARGETS_DIR.glob("*.mlir"))


def target_path(target: str | os.PathLike[str] = "a2a3") -> Path:
    """The file of a packaged target name (or alias), or ``target`` as a path."""
    if isinstance(target, str):
        name = ALIASES.get(target, target)
        packaged = TARGETS_DIR / f"{name}.mlir"
        if os.sep not in name and "/" not in name and not name.endswith(".mlir") and packaged.exists():
            return packaged
    path = Path(target)
    if not path.is_file():
        raise TargetError(
            f"unknown target {str(target)!r}: not a packaged target ({', '.join(packaged_targets())}) "
            "nor a readable .mlir file"
        )
    return path


_CACHE: dict[tuple[str, int, int], Target] = {}
_PACKAGED_PATHS: dict[str, str] = {}
"""A packaged target's name (or alias) -> its resolved file (the package's files do not move)."""


def load_target(target: str | os.PathLike[str] = "a2a3") -> Target:
    """The :class:`Target` named ``target`` (a packaged target such as
    ``"a2a3"``, or ``"a2a3sim"`` / ``"Ascend910B"``) or read from a path to a
    user's ``.mlir`` copy. Cached until the file changes (in the process, and on disk:
    :mod:`pypto.target.disk_cache`)."""
    path = _PACKAGED_PATHS.get(target) if isinstance(target, str) else None
    if path is None:
        resolved = target_path(target).resolve()
        path = str(resolved)
        if isinstance(target, str) and resolved.parent == TARGETS_DIR.resolve():
            _PACKAGED_PATHS[target] = path
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    cached = _CACHE.get(key)
    if cached is not None:
        return cached
    from . import disk_cache  # a fresh process reads the parsed target back (pypto.target.disk_cache)

    result = disk_cache.load(key, Target)
    if result is None:
        op = parse_target_op(Path(path).read_text(), path)
        result = target_from_op(op, path)
        disk_cache.store(key, result)
    _CACHE[key] = result
    return result


def is_packaged_name(name: str) -> bool:
    """Whether :func:`load_target` found ``name`` among the packaged targets (it names that file from any
    directory)."""
    return name in _PACKAGED_PATHS


def loaded_key(target: Target) -> tuple[str, int, int] | None:
    """The (path, mtime_ns, size) of the file :func:`load_target` read ``target`` from (None: not from there)."""
    return next((key for key, t in _CACHE.items() if t is target), None)
