"""The Ascend operator simulator's ``visualize_data.bin`` (``msprof op simulator``), read per upstream
PyPTO's documented block format (docs/en/dev/04-simulator-trace-cleaning.md), so a dump of the real
simulator opens in the same clean trace as the device model's runs.

The file is a flat sequence of blocks, each a 12-byte header -- ``contentSize`` (uint64 LE, the payload
with its padding), ``type`` (uint8: 1 SOURCE, 2 TRACE, 4 API_INSTR, ...), ``paddingLength`` (uint8),
``instrVersion`` (uint8), ``reserve`` (uint8, always ``0x5A``) -- then the payload: JSON, with
``paddingLength`` trailing zero bytes; a SOURCE payload starts with a fixed 4096-byte file path.

The TRACE block is a Chrome trace: ``pid`` a core, ``tid`` a lane name (``MTE2``, ``VECTOR``, ...,
``CACHEMISS``, ``FLOWCTRL``, ``ALL``), instructions as ``X`` events, ``SET_FLAG`` / ``WAIT_FLAG`` as
``B``/``E`` pairs whose ``args.detail`` reads ``PIPE:<producer>,TRIGGERPIPE:<consumer>,FLAGID:<n>,``
(``VEC`` names the VECTOR lane). :func:`trace_slices` pairs the n-th SET_FLAG of a (core, detail) with
its n-th WAIT_FLAG and anchors the arrow on the last instruction of the producer lane starting by the
set_flag and the first of the consumer lane starting after the wait; :func:`.cleantrace.clean_trace`
does the rest (timestamps stay the simulator's µs). The API_INSTR block holds per-instruction
metrics, each an array indexed by its ``Cores`` list; :func:`reshape_metrics` gives one record list per
core, the block's ``Instructions Dtype`` as ``column_types``.
"""

from __future__ import annotations

import bisect
import json
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pypto.errors import Error

from .cleantrace import Slice, clean_trace

HEADER = struct.Struct("<QBBBB")
MAGIC = 0x5A
SOURCE, TRACE, API_INSTR = 1, 2, 4
SOURCE_PATH_BYTES = 4096
SYNC_NAMES = frozenset({"SET_FLAG", "WAIT_FLAG", "BAR"})
LANE_ALIAS = {"VEC": "VECTOR"}


class DumpError(Error, ValueError):
    """A ``visualize_data.bin`` that does not have the documented shape (one line)."""


def blocks(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(type, payload without padding or SOURCE path) per block."""
    off = 0
    while off < len(data):
        if off + HEADER.size > len(data):
            raise DumpError(f"truncated block header at byte {off}")
        size, kind, padding, _version, reserve = HEADER.unpack_from(data, off)
        body = off + HEADER.size
        if reserve != MAGIC:
            raise DumpError(
                f"block at byte {off}: reserve byte {reserve:#04x}, expected 0x5a (not a visualize_data.bin?)"
            )
        if size > len(data) - body or padding > size:
            raise DumpError(f"block at byte {off}: size {size} (padding {padding}) runs past the end of the file")
        payload = data[body : body + size - padding]
        yield kind, payload[SOURCE_PATH_BYTES:] if kind == SOURCE else payload
        off = body + size


def read_dump(path: Path) -> dict[int, Any]:
    """The JSON of the TRACE and API_INSTR blocks of ``path`` (the last of each), by type."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise DumpError(f"{path}: cannot read: {e.strerror or e}") from None
    out: dict[int, Any] = {}
    try:
        for kind, payload in blocks(data):
            if kind in (TRACE, API_INSTR):
                try:
                    out[kind] = json.loads(payload.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as e:
                    name = "TRACE" if kind == TRACE else "API_INSTR"
                    raise DumpError(f"the {name} block is not JSON ({e})") from None
    except DumpError as e:
        raise DumpError(f"{path}: {e}") from None
    if TRACE not in out:
        raise DumpError(f"{path}: no TRACE block (type 2)")
    return out


def _detail(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def _flag_spans(events: list[dict[str, Any]], name: str) -> list[tuple[Any, str, float, float]]:
    """(pid, detail, begin, end) of each B/E pair of ``name`` (per pid/tid, innermost first)."""
    open_: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = {}
    out: list[tuple[Any, str, float, float]] = []
    for i, e in enumerate(events):
        if e.get("name") != name:
            continue
        key = (str(e.get("pid")), str(e.get("tid")))
        if e.get("ph") == "B":
            open_.setdefault(key, []).append((i, e))
        elif e.get("ph") == "E" and open_.get(key):
            n, b = open_[key].pop()
            out.append((str(e.get("pid")), str((b.get("args") or {}).get("detail", "")), _ts(b, n), _ts(e, i)))
    return out


def _ts(e: dict[str, Any], i: int) -> float:
    """Event ``i``'s ``ts`` as a number of µs."""
    try:
        return float(e["ts"])
    except (KeyError, TypeError, ValueError):
        raise DumpError(f"TRACE event {i} ({e.get('name')!r}) has no numeric ts") from None


def trace_slices(raw: dict[str, Any]) -> tuple[list[str], list[Slice], list[tuple[Any, Any, str]]]:
    """(core names, instruction slices, flag pairs) of a TRACE block."""
    events = raw.get("traceEvents") if isinstance(raw, dict) else None
    if not isinstance(events, list):
        raise DumpError("the TRACE block has no traceEvents list")
    for i, e in enumerate(events):  # each an object; its name text and its args an object when present
        if not isinstance(e, dict):
            raise DumpError(f"TRACE event {i} is {json.dumps(e)[:40]}, expected an object")
        if not isinstance(e.get("name", ""), str) or not isinstance(e.get("args") or {}, dict):
            raise DumpError(f"TRACE event {i}: expected a text name and an args object, got {json.dumps(e)[:80]}")
    insts = [e for e in events if e.get("ph") == "X" and e.get("name") not in SYNC_NAMES]
    cores = sorted({str(e.get("pid", "")) for e in insts})
    core_of = {c: i for i, c in enumerate(cores)}
    slices: list[Slice] = []
    by_lane: dict[tuple[str, str], list[Slice]] = {}
    for i, e in enumerate(insts):
        try:
            ts, dur = float(e["ts"]), float(e.get("dur", 0.0))
        except (KeyError, TypeError, ValueError):
            raise DumpError(f"TRACE event {i} ({e.get('name')!r}) has no numeric ts/dur") from None
        lane = LANE_ALIAS.get(str(e.get("tid", "")), str(e.get("tid", "")))
        s = Slice(
            i, core_of[str(e.get("pid", ""))], lane, str(e.get("name", "?")), ts, ts + dur, dict(e.get("args") or {})
        )
        slices.append(s)
        by_lane.setdefault((str(e.get("pid", "")), lane), []).append(s)
    starts: dict[tuple[str, str], list[float]] = {}
    for key, lane in by_lane.items():
        lane.sort(key=lambda s: (s.start, s.key))
        starts[key] = [s.start for s in lane]
    waits: dict[tuple[str, str], list[tuple[Any, str, float, float]]] = {}
    for w in sorted(_flag_spans(events, "WAIT_FLAG"), key=lambda w: w[2]):
        waits.setdefault((str(w[0]), w[1]), []).append(w)
    pairs: list[tuple[Any, Any, str]] = []
    for pid, detail, begin, _end in sorted(_flag_spans(events, "SET_FLAG"), key=lambda s: s[2]):
        queue = waits.get((str(pid), detail))
        d = _detail(detail)
        label = f"{d.get('PIPE', '?')}->{d.get('TRIGGERPIPE', '?')} flag{d.get('FLAGID', '?')}"
        if not queue:
            pairs.append((None, None, label))  # no wait consumed it: counted as skipped
            continue
        wait = queue.pop(0)
        prod_key = (str(pid), LANE_ALIAS.get(d.get("PIPE", ""), d.get("PIPE", "")))
        cons_key = (str(pid), LANE_ALIAS.get(d.get("TRIGGERPIPE", ""), d.get("TRIGGERPIPE", "")))
        prod_i = bisect.bisect_right(starts.get(prod_key, []), begin) - 1
        cons_i = bisect.bisect_left(starts.get(cons_key, []), wait[3])
        prod = by_lane[prod_key][prod_i] if prod_i >= 0 else None
        cons = by_lane[cons_key][cons_i] if cons_key in by_lane and cons_i < len(by_lane[cons_key]) else None
        pairs.append((prod.key if prod else None, cons.key if cons else None, label))
    return cores, slices, pairs


def clean_dump_trace(raw: dict[str, Any], keep_scalar: bool = False) -> dict[str, Any]:
    """The clean trace of a TRACE block (timestamps kept: µs in, µs out)."""
    cores, slices, pairs = trace_slices(raw)
    return clean_trace(cores, slices, pairs, 1.0, keep_scalar, {"source": "visualize_data.bin"})


def reshape_metrics(api_instr: Any) -> dict[str, Any]:
    """The API_INSTR block as ``{"version", "source", "cores", "instructions": {core: [records]},
    "column_types"}``: field names lower-cased, spaces to ``_``, a per-core array to its core's value."""
    if not isinstance(api_instr, dict):
        raise DumpError("the API_INSTR block is not a JSON object")
    if not isinstance(api_instr.get("Cores", []), list):
        raise DumpError("API_INSTR.Cores is not a list")
    cores = [str(c) for c in api_instr.get("Cores", [])]
    rows = api_instr.get("Instructions", [])
    if not isinstance(rows, list):
        raise DumpError("API_INSTR.Instructions is not a list")
    by_core: dict[str, list[dict[str, Any]]] = {c: [] for c in cores}
    for rec in rows:
        if not isinstance(rec, dict):
            raise DumpError("an API_INSTR instruction is not an object")
        for n, core in enumerate(cores):
            by_core[core].append({
                k.lower().replace(" ", "_"): v[n] if isinstance(v, list) and len(v) == len(cores) else v
                for k, v in rec.items()
            })  # fmt: skip
    return {"version": 1, "source": "visualize_data.bin", "cores": cores, "instructions": by_core,
            "column_types": api_instr.get("Instructions Dtype", {})}  # fmt: skip


def find_dump(path: Path) -> Path | None:
    """``path`` if it is a file, else its ``simulator/visualize_data.bin`` (an ``OPPROF_*`` folder)."""
    if path.is_file():
        return path
    for candidate in (path / "simulator" / "visualize_data.bin", path / "visualize_data.bin"):
        if candidate.is_file():
            return candidate
    return None
