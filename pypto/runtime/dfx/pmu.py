"""``pmu.csv`` (runtime-dfx-formats.md §5): a2a3 PMU counters, derived from the interpreter's records.

``enable_pmu = N`` picks the event type (1, 2, 4, 5, 6, 7, 8; ``True`` is 2, RunConfig maps an unknown
type to 2, and a valid ``SIMPLER_PMU_EVENT_TYPE`` overrides it: ``config._pmu_env_override``). The file
has one row per completed task part, i.e. per core a task occupied (a Group task has a row for its AIC
part and one per AIV part), sorted by (task id, core id)::

    thread_id,core_id,task_id,func_id,core_type,pmu_total_cycles,<counters of the type>,event_type

``task_id`` is ``0x%016x`` of the raw id (ring 0: the local id); ``core_type`` 0 AIC / 1 AIV;
``pmu_total_cycles`` the kernel run's cycles (``KernelRun.cycles``); ``func_id`` the kernel's index in
the program's kernel functions in module order (:func:`.base.kernel_func_ids`: the numbering of
deps.json and the name map, independent of dispatch order); ``thread_id`` the AICPU scheduler thread
that drives the part's core (upstream's per-thread PMU queue index): ``RunResult.core_to_thread`` of the
core, the thread that dispatched the part, as a thread pops blocks only onto its own cores
(:mod:`pypto.runtime.scheduler`).

Every counter is computed from the part's ``kernel_run.records`` (:class:`InstrRecord`: pipe,
start/end, instr, kind, and the operand summary ``detail``: ``"<src>-><dst> <N>B"`` for a transfer,
``"<rows>x<cols> <dtype>"`` for a vector op, ``"<m>x<k>x<n> <dtype>"`` for a cube op). The model:

- **2 PIPE_UTILIZATION**: ``<pipe>_busy_cycles`` = the sum of ``end - start`` of the records on the
  target pipe (VECTOR, CUBE, SCALAR, MTE1, MTE2, MTE3), exactly ``KernelRun.per_pipe_busy``. FIXPIPE
  has no counter in the a2a3 set and is not reported. ``icache_req`` = one request per executed
  instruction (records, sync entries included); ``icache_miss`` = 0 (the model has no instruction
  cache: the kernel's code is taken as resident).
- **4 MEMORY / 5 MEMORY_L0**: requests = bytes moved at that memory level / :func:`request_bytes`,
  rounded up per instruction (a partial block is a whole request). The request size is the target's
  ``block_bytes`` (``npu.target ... block_bytes = 32`` in ``pypto/target/targets/a2a3.mlir``: the DMA
  block, ref a2a3-costs.md §1 ``kBlockBytes``). A transfer reads its source level and writes its
  destination level (``vec`` = UB, ``mat`` = L1, ``left``/``right``/``acc`` = L0A/L0B/L0C). GM
  traffic goes through L2: every GM read or write is an L2 request; main-memory requests follow the L2
  model below. A vector instruction reads and writes its main tile once (``rows x cols x dtype``; the
  records name only the main operand, so a binary op's second input is not counted). A cube instruction
  reads ``m*k`` A elements from L0A and ``k*n`` B elements from L0B (A's dtype) and writes ``m*n``
  4-byte accumulators to L0C (``*_ACC`` forms also read them).
- **1 ARITHMETIC_UTILIZATION**: cycles of the records by unit and dtype. ``cube_int8_exec``: CUBE
  compute on int8/uint8; ``cube_fp16_exec``: every other CUBE cycle (fp16/bf16, and fp32, which has no
  counter of its own on a2a3). ``vec_fp32_exec``: VECTOR compute on fp32; ``vec_fp16_64lane_exec``: a
  16-bit float conversion (``TCVT``, which runs half-width); ``vec_fp16_128lane_exec``: other fp16/bf16
  VECTOR compute; ``vec_int32_exec``: int32/uint32; ``vec_misc_exec``: the rest of the VECTOR pipe
  (other dtypes, moves, sync entries). The vec counters sum to ``vec_busy_cycles``, the cube ones to
  ``cube_busy_cycles``.
- **6 RESOURCE_CONFLICT**: all 0. The interpreter models no UB banks or bank groups (an access never
  waits for another) and runs each pipe as an in-order queue of one instruction at a time, so no
  vector resource is ever contended.
- **7 MEMORY_UB**: bandwidths in bytes per cycle over the kernel run (bytes / ``pmu_total_cycles``,
  printed with 4 decimals): UB bytes read/written by the MTEs (transfers; MTE1/MTE2/MTE3, FIXPIPE),
  by the vector unit (VECTOR compute) and by the scalar unit (SCALAR compute on a tile); L2 and main
  memory bytes written.
- **8 L2_CACHE** (requests): the model has no L2, so it assumes a cold, write-allocate, write-through
  L2: a GM read the kernel loads (port r0: TLOAD / DMA) misses and allocates; a read of a
  cube<->vector pipe (TPOP, port r1; on a2a3 the pipe goes through GM) hits, the peer having just
  written it; every write (TSTORE, TPUSH) misses and allocates (``write_cache_hit`` 0) and also goes to
  main memory. So ``main_read_req`` = the r0 misses and ``main_write_req`` = ``l2_write_req``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from .base import Collector, kernel_func_ids, per_run, register, write_artefact

EVENT_COUNTERS: dict[int, tuple[str, ...]] = {
    1: ("cube_fp16_exec", "cube_int8_exec", "vec_fp32_exec", "vec_fp16_128lane_exec", "vec_fp16_64lane_exec",
        "vec_int32_exec", "vec_misc_exec"),
    2: ("vec_busy_cycles", "cube_busy_cycles", "scalar_busy_cycles", "mte1_busy_cycles", "mte2_busy_cycles",
        "mte3_busy_cycles", "icache_miss", "icache_req"),
    4: ("ub_read_req", "ub_write_req", "l1_read_req", "l1_write_req", "l2_read_req", "l2_write_req",
        "main_read_req", "main_write_req"),
    5: ("l0a_read_req", "l0a_write_req", "l0b_read_req", "l0b_write_req", "l0c_read_req", "l0c_write_req"),
    6: ("bankgroup_stall_cycles", "bank_stall_cycles", "vec_resc_conflict_cycles"),
    7: ("ub_read_bw_mte", "l2_write_bw", "main_mem_write_bw", "ub_write_bw_mte", "ub_read_bw_vector",
        "ub_write_bw_vector", "ub_read_bw_scalar", "ub_write_bw_scalar"),
    8: ("write_cache_hit", "write_cache_miss_allocate", "r0_read_cache_hit", "r0_read_cache_miss_allocate",
        "r1_read_cache_hit", "r1_read_cache_miss_allocate"),
}  # fmt: skip
"""The a2a3 counters of each PMU event type, in column order (runtime-dfx-formats.md §5)."""

EVENT_NAMES: dict[int, str] = {
    1: "ARITHMETIC_UTILIZATION", 2: "PIPE_UTILIZATION", 4: "MEMORY", 5: "MEMORY_L0", 6: "RESOURCE_CONFLICT",
    7: "MEMORY_UB", 8: "L2_CACHE",
}  # fmt: skip

HEAD = ("thread_id", "core_id", "task_id", "func_id", "core_type", "pmu_total_cycles")
"""The columns before the counters (``event_type`` follows them)."""

BUSY_PIPES: dict[str, str] = {
    "vec": "VECTOR", "cube": "CUBE", "scalar": "SCALAR", "mte1": "MTE1", "mte2": "MTE2", "mte3": "MTE3",
}  # fmt: skip
"""Event type 2's pipe prefix -> the target pipe name the records carry."""

_BUSY_COLUMNS = tuple((f"{k}_busy_cycles", p) for k, p in BUSY_PIPES.items())
"""Event type 2's busy-cycle columns with their pipes, spelled once."""

DEFAULT_REQUEST_BYTES = 32
"""The request size when the run has no target at hand: a2a3's ``block_bytes`` (32 B, ref §1)."""

_LEVEL = {"vec": "ub", "mat": "l1", "left": "l0a", "right": "l0b", "acc": "l0c", "gm": "gm",
          "cube": "fifo", "vector": "fifo"}  # fmt: skip
"""pto memory space (or cube<->vector pipe end) in a record's detail -> memory level."""

_TRANSFER = re.compile(r"^(\w+)->(\w+) (\d+)B$")
_TILE = re.compile(r"^(\d+)x(\d+) (\w+)$")
_CUBE = re.compile(r"^(\d+)x(\d+)x(\d+) (\w+)$")


def columns(event_type: int) -> list[str]:
    """The header of ``pmu.csv`` for ``event_type``."""
    return [*HEAD, *EVENT_COUNTERS[event_type], "event_type"]


def request_bytes(target: Any) -> int:
    """Bytes per memory request: the target's ``block_bytes`` (a2a3: 32)."""
    return int(getattr(target, "block_bytes", 0) or DEFAULT_REQUEST_BYTES)


def dtype_bytes(name: str) -> int:
    """Bytes per element of a record's dtype name (``fp32`` 4, ``bf16`` 2, ``int8`` 1, ``bool`` 1)."""
    if name == "bool":
        return 1
    m = re.search(r"(\d+)$", name)
    return max(1, int(m.group(1)) // 8) if m else 1


@dataclass
class Traffic:
    """What one kernel run moved: requests and bytes per (agent, level, "r"|"w")."""

    req_size: int
    requests: dict[tuple[str, str, str], int] = field(default_factory=dict)
    bytes: dict[tuple[str, str, str], int] = field(default_factory=dict)

    def add(self, agent: str, level: str, rw: str, nbytes: int) -> None:
        """``agent`` (mte | vector | scalar | cube | r0 | r1) moved ``nbytes`` at ``level``, in
        ``ceil(nbytes / req_size)`` requests."""
        if nbytes <= 0:
            return
        key = (agent, level, rw)
        self.requests[key] = self.requests.get(key, 0) + -(-nbytes // self.req_size)
        self.bytes[key] = self.bytes.get(key, 0) + nbytes

    def req(self, level: str, rw: str, agent: str | None = None) -> int:
        """Requests at ``level`` (by ``agent`` only, when given)."""
        return sum(n for (a, lv, d), n in self.requests.items() if lv == level and d == rw and agent in (None, a))

    def nbytes(self, agent: str, level: str, rw: str) -> int:
        """Bytes ``agent`` moved at ``level``."""
        return self.bytes.get((agent, level, rw), 0)


def traffic(records: Iterable[Any], req_size: int) -> Traffic:
    """The memory traffic of one kernel run's records (the module docstring's model)."""
    t = Traffic(req_size)
    for r in records:
        if r.kind == "transfer":
            m = _TRANSFER.match(r.detail)
            if m is None:
                continue
            src, dst, nbytes = _LEVEL.get(m.group(1), m.group(1)), _LEVEL.get(m.group(2), m.group(2)), int(m.group(3))
            if src == "gm":
                t.add("r0", "gm", "r", nbytes)
            elif src == "fifo":
                t.add("r1", "gm", "r", nbytes)
            else:
                t.add("vector" if r.pipe == "VECTOR" else "mte", src, "r", nbytes)
            if dst in ("gm", "fifo"):
                t.add("mte", "gm", "w", nbytes)
            else:
                t.add("vector" if r.pipe == "VECTOR" else "mte", dst, "w", nbytes)
        elif r.kind == "compute":
            if r.pipe == "CUBE":
                m = _CUBE.match(r.detail)
                if m is None:
                    continue
                mm, k, n, size = int(m.group(1)), int(m.group(2)), int(m.group(3)), dtype_bytes(m.group(4))
                t.add("cube", "l0a", "r", mm * k * size)
                t.add("cube", "l0b", "r", k * n * size)
                t.add("cube", "l0c", "w", mm * n * 4)
                if "_ACC" in r.instr:
                    t.add("cube", "l0c", "r", mm * n * 4)
            elif r.pipe in ("VECTOR", "SCALAR"):
                m = _TILE.match(r.detail)
                if m is None:
                    continue
                nbytes = int(m.group(1)) * int(m.group(2)) * dtype_bytes(m.group(3))
                agent = "vector" if r.pipe == "VECTOR" else "scalar"
                t.add(agent, "ub", "r", nbytes)
                t.add(agent, "ub", "w", nbytes)
    return t


def _arith(records: Iterable[Any]) -> dict[str, int]:
    c = dict.fromkeys(EVENT_COUNTERS[1], 0)
    for r in records:
        cycles = r.end - r.start
        if r.pipe == "CUBE":
            m = _CUBE.match(r.detail) if r.kind == "compute" else None
            int8 = m is not None and m.group(4) in ("int8", "uint8")
            c["cube_int8_exec" if int8 else "cube_fp16_exec"] += cycles
        elif r.pipe == "VECTOR":
            m = _TILE.match(r.detail) if r.kind == "compute" else None
            dtype = m.group(3) if m is not None else ""
            if dtype == "fp32":
                key = "vec_fp32_exec"
            elif dtype in ("fp16", "bf16"):
                key = "vec_fp16_64lane_exec" if r.instr.startswith("TCVT") else "vec_fp16_128lane_exec"
            elif dtype in ("int32", "uint32"):
                key = "vec_int32_exec"
            else:
                key = "vec_misc_exec"
            c[key] += cycles
    return c


def counters(event_type: int, kernel_run: Any, req_size: int) -> dict[str, int | str]:
    """The counters of ``event_type`` for one kernel run (the module docstring's model)."""
    if event_type == 2:
        busy = kernel_run.timeline.pipe_busy()
        out: dict[str, int | str] = {column: busy.get(p, 0) for column, p in _BUSY_COLUMNS}
        out["icache_miss"] = 0
        out["icache_req"] = len(kernel_run.timeline.rows)  # one request per instruction
        return out
    records = kernel_run.records
    if event_type == 1:
        return dict(_arith(records))
    if event_type == 6:
        return dict.fromkeys(EVENT_COUNTERS[6], 0)
    t = traffic(records, req_size)
    gm_read_miss = t.req("gm", "r", "r0")  # loads miss (cold L2); pipe reads (r1) hit
    if event_type == 4:
        return {
            "ub_read_req": t.req("ub", "r"), "ub_write_req": t.req("ub", "w"),
            "l1_read_req": t.req("l1", "r"), "l1_write_req": t.req("l1", "w"),
            "l2_read_req": t.req("gm", "r"), "l2_write_req": t.req("gm", "w"),
            "main_read_req": gm_read_miss, "main_write_req": t.req("gm", "w"),
        }  # fmt: skip
    if event_type == 5:
        return {f"{lv}_{rw}_req": t.req(lv, rw[0]) for lv in ("l0a", "l0b", "l0c") for rw in ("read", "write")}
    if event_type == 7:
        cycles = max(int(kernel_run.cycles), 1)

        def bw(*parts: tuple[str, str, str]) -> str:
            return f"{sum(t.nbytes(*p) for p in parts) / cycles:.4f}"

        return {
            "ub_read_bw_mte": bw(("mte", "ub", "r")),
            "l2_write_bw": bw(("mte", "gm", "w")),
            "main_mem_write_bw": bw(("mte", "gm", "w")),
            "ub_write_bw_mte": bw(("mte", "ub", "w")),
            "ub_read_bw_vector": bw(("vector", "ub", "r")),
            "ub_write_bw_vector": bw(("vector", "ub", "w")),
            "ub_read_bw_scalar": bw(("scalar", "ub", "r")),
            "ub_write_bw_scalar": bw(("scalar", "ub", "w")),
        }
    if event_type == 8:
        return {
            "write_cache_hit": 0, "write_cache_miss_allocate": t.req("gm", "w"),
            "r0_read_cache_hit": 0, "r0_read_cache_miss_allocate": gm_read_miss,
            "r1_read_cache_hit": t.req("gm", "r", "r1"), "r1_read_cache_miss_allocate": 0,
        }  # fmt: skip
    raise ValueError(f"enable_pmu={event_type}: a2a3 event types are {', '.join(map(str, EVENT_COUNTERS))}")


class PartRow(NamedTuple):
    """One kernel run: a task part on one core, in one SPMD block (``block`` 0 for a plain task)."""

    rec: Any
    core: int
    kernel: str
    run: Any
    block: int


def part_rows(result: Any) -> list[PartRow]:
    """One row per task part and SPMD block, sorted by (task id, block, core id). A Group task's parts
    take its block's cores in order: AIC parts the AIC cores, AIV parts the AIV cores (as the
    scheduler picked them)."""
    parts_of = {t.id: t.parts for t in result.graph.tasks}
    core_types = result.core_types
    keyed: list[tuple[int, int, int, PartRow]] = []
    for rec in result.tasks:
        task_id = rec.task_id
        for b in rec.blocks:
            free: dict[str, list[int]] = {"aic": [], "aiv": []}  # the block's cores of each kind, in order
            for c in b.core_ids:
                cores = free.get(core_types[c])
                if cores is not None:
                    cores.append(c)
            block = b.block_idx
            for part, run in zip(parts_of[task_id], b.kernel_runs, strict=True):
                core = free[part.core_type].pop(0)
                keyed.append((task_id, block, core, PartRow(rec, core, part.func_name, run, block)))
    keyed.sort(key=lambda k: k[:3])
    return [k[3] for k in keyed]


def pmu_rows(result: Any, event_type: int) -> list[dict[str, int | str]]:
    """The rows of ``pmu.csv`` for a run (column -> value, in :func:`columns` order); built once per run
    for ``pmu.csv`` and the run report (:func:`.base.per_run`)."""
    return per_run(result, ("pmu_rows", event_type), lambda: _pmu_rows(result, event_type))


def _pmu_rows(result: Any, event_type: int) -> list[dict[str, int | str]]:
    if event_type not in EVENT_COUNTERS:
        raise ValueError(f"enable_pmu={event_type}: a2a3 event types are {', '.join(map(str, EVENT_COUNTERS))}")
    req = request_bytes(getattr(result, "target", None))
    ids = kernel_func_ids(result.module)  # as deps.json and the name map number them
    threads = result.core_to_thread  # the scheduler thread that owns (drives) each core
    out: list[dict[str, int | str]] = []
    for rec, core, name, run, _ in part_rows(result):
        row: dict[str, int | str] = {
            "thread_id": threads[core],
            "core_id": core,
            "task_id": f"0x{rec.task_id:016x}",
            "func_id": ids[name],
            "core_type": 0 if result.core_types[core] == "aic" else 1,
            "pmu_total_cycles": int(run.cycles),
        }
        row.update(counters(event_type, run, req))
        row["event_type"] = event_type
        out.append(row)
    return out


def pmu_csv(result: Any, event_type: int) -> str:
    """``pmu.csv`` text for a run."""
    cols = columns(event_type)
    lines = [",".join(cols)]
    lines += [",".join([str(row[c]) for c in cols]) for row in pmu_rows(result, event_type)]
    return "\n".join(lines) + "\n"


def write_pmu(result: Any, path: Path, event_type: int = 2) -> Path:
    """Write :func:`pmu_csv` atomically; returns the path."""
    write_artefact(path, pmu_csv(result, event_type))
    return path


@register
class PmuCollector(Collector):
    """``enable_pmu``: ``pmu.csv`` for the event type ``level``."""

    FLAG = "enable_pmu"
    OUTPUTS = ("pmu.csv",)

    def finish(self, result: Any) -> list[Path]:
        return [write_pmu(result, self.out_dir / "pmu.csv", self.level)]
