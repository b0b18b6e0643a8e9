"""The merged swimlane in Perfetto's native protobuf (``.pftrace``), built with the PyPI ``perfetto``
package's trace builder (``perfetto.trace_builder.proto_builder``, the ``dfx`` extra; its trace processor,
which downloads a binary, is not used).

:func:`perfetto_trace` turns the Chrome trace of :func:`.trace.chrome_trace` (``{"traceEvents": [...]}``)
into the same tracks, slices, flows and counters: a process track per ``process_name``, a thread track
per (pid, tid) lane, an ``X`` event as a slice begin/end pair on its lane (args as debug annotations), an
``s``/``f`` flow pair as ``flow_ids`` on the slice that holds the ``s`` and ``terminating_flow_ids`` on
the slice that holds the ``f`` (the slice on that lane that started last at or before the flow's time),
and a ``C`` event as one value per ``args`` key on a counter track of its process (``name`` for a
``value`` key, else ``name.key``). Times are the trace's µs in integer ns. The output is deterministic.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from .trace import TraceInputError

SEQUENCE_ID = 1
"""The one trusted packet sequence every event is written on."""


def _pb() -> Any:
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2
        from perfetto.trace_builder.proto_builder import TraceProtoBuilder
    except ImportError as e:  # the dfx extra is not installed
        raise TraceInputError(
            f"Perfetto's protobuf needs the PyPI 'perfetto' package (pip install -e '.[dfx]'): {e}"
        ) from None
    return perfetto_trace_pb2, TraceProtoBuilder


def _ns(us: Any) -> int:
    return int(round(float(us) * 1000))


def _annotate(event: Any, args: Mapping[str, Any]) -> None:
    for key in sorted(args):
        value = args[key]
        ann = event.debug_annotations.add()
        ann.name = str(key)
        if isinstance(value, bool):
            ann.bool_value = value
        elif isinstance(value, int):
            ann.int_value = value
        elif isinstance(value, float):
            ann.double_value = value
        else:
            ann.string_value = str(value)


def perfetto_trace(trace: Mapping[str, Any]) -> bytes:
    """The serialized ``Trace`` proto of a Chrome trace (see the module docstring)."""
    pb, builder_cls = _pb()
    events = trace.get("traceEvents")
    if not isinstance(events, list):
        raise TraceInputError("the trace has no 'traceEvents' list")
    builder = builder_cls()
    first = [True]

    def packet(ts: int | None = None) -> Any:
        p = builder.add_packet()
        p.trusted_packet_sequence_id = SEQUENCE_ID
        if first[0]:
            p.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            first[0] = False
        if ts is not None:
            p.timestamp = ts
        return p

    process_names = {
        e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    thread_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
                    if e.get("ph") == "M" and e.get("name") == "thread_name"}  # fmt: skip
    pids = sorted({e["pid"] for e in events if "pid" in e} | set(process_names))
    lanes = sorted({(e["pid"], e["tid"]) for e in events if e.get("ph") in ("X", "s", "f")} | set(thread_names))
    uuids: dict[Any, int] = {}
    for pid in pids:  # process tracks, then their lanes, then counter tracks
        uuids[pid] = len(uuids) + 1
        p = packet()
        p.track_descriptor.uuid = uuids[pid]
        p.track_descriptor.process.pid = pid
        p.track_descriptor.process.process_name = process_names.get(pid, f"pid {pid}")
    for pid, tid in lanes:
        uuids[(pid, tid)] = len(uuids) + 1
        p = packet()
        d = p.track_descriptor
        d.uuid, d.parent_uuid = uuids[(pid, tid)], uuids[pid]
        d.thread.pid, d.thread.tid = pid, tid
        d.thread.thread_name = thread_names.get((pid, tid), f"tid {tid}")
    counters = sorted({(e["pid"], e["name"] if key == "value" else f"{e['name']}.{key}")
                       for e in events if e.get("ph") == "C" for key in e.get("args", {})})  # fmt: skip
    for pid, name in counters:
        uuids[("C", pid, name)] = len(uuids) + 1
        p = packet()
        d = p.track_descriptor
        d.uuid, d.parent_uuid, d.name = uuids[("C", pid, name)], uuids[pid], name
        d.counter.SetInParent()

    # slices per lane, in start order: flows bind to the one holding their time
    slices: dict[tuple[int, int], list[tuple[int, int, int]]] = {}  # lane -> [(begin ns, -end ns, event index)]
    for i, e in enumerate(events):
        if e.get("ph") == "X":
            b = _ns(e["ts"])
            slices.setdefault((e["pid"], e["tid"]), []).append((b, -(b + _ns(e.get("dur", 0))), i))
    for lane in slices.values():
        lane.sort()
    starts = {k: [s[0] for s in v] for k, v in slices.items()}
    out_flows: dict[int, list[int]] = {}
    in_flows: dict[int, list[int]] = {}
    for e in events:
        if e.get("ph") not in ("s", "f"):
            continue
        lane = (e["pid"], e["tid"])
        k = bisect.bisect_right(starts.get(lane, []), _ns(e["ts"])) - 1
        if k < 0:
            raise TraceInputError(f"flow {e.get('id')} at {e['ts']} µs has no slice on pid {lane[0]} tid {lane[1]}")
        target = slices[lane][k][2]
        (out_flows if e["ph"] == "s" else in_flows).setdefault(target, []).append(int(e["id"]))

    timed: list[tuple[int, int, int, int, dict[str, Any]]] = []  # (ns, order, event index, part, event)
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph == "X":
            b = _ns(e["ts"])
            end = b + _ns(e.get("dur", 0))
            timed.append((b, 1, i, 0, e))
            timed.append((end, 0 if end > b else 2, i, 1, e))  # ends before begins at one time, but after its own
        elif ph == "C":
            timed.append((_ns(e["ts"]), 3, i, 0, e))
    timed.sort(key=lambda t: t[:4])
    for ns, _, i, part, e in timed:
        if e["ph"] == "C":
            for key in sorted(e.get("args", {})):
                p = packet(ns)
                p.track_event.type = pb.TrackEvent.TYPE_COUNTER
                p.track_event.track_uuid = uuids[("C", e["pid"], e["name"] if key == "value" else f"{e['name']}.{key}")]
                p.track_event.double_counter_value = float(e["args"][key])
            continue
        p = packet(ns)
        ev = p.track_event
        ev.track_uuid = uuids[(e["pid"], e["tid"])]
        if part == 0:
            ev.type = pb.TrackEvent.TYPE_SLICE_BEGIN
            ev.name = str(e.get("name", ""))
            if e.get("cat"):
                ev.categories.append(str(e["cat"]))
            _annotate(ev, e.get("args", {}))
            ev.flow_ids.extend(out_flows.get(i, []))
            ev.terminating_flow_ids.extend(in_flows.get(i, []))
        else:
            ev.type = pb.TrackEvent.TYPE_SLICE_END
    return builder.serialize()
