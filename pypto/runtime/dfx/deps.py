"""``deps.json`` (runtime-dfx-formats.md §4) and ``name_map_<build dir>.json`` (§1) for ``enable_dep_gen``.

What the file says, and where each value comes from on the simulated chip:

- **tasks**: one per task of the run's :class:`~pypto.runtime.orchestration.TaskGraph`, in submission
  order. ``task_id`` is the raw id ``(ring << 32) | local`` with ring 0 (the simulator has one ring), so
  the local id, as a string. ``scope`` is always ``"auto"``: the host interpreter derives every task's
  dependencies from its tensor arguments (explicit ``deps=`` / ``pl.task_deps`` are added on top, never
  instead), and the language has no manual-dependency scope. ``kernel_ids`` is ``[aic, aiv0, aiv1]``:
  the func_id of the task's AIC part in slot 0 and of its AIV parts in slots 1 and 2 (-1 where there is
  none). ``block_num`` is the task's SPMD block count (``with pl.spmd(n)``: ``n``; 1 for a plain task).
  ``args`` lists every argument
  (``type`` ``INPUT`` / ``OUTPUT_EXISTING`` / ``INOUT`` for tensors, whose buffers always exist before the
  task, ``SCALAR`` with ``tensor_id`` null otherwise); a tensor argument is its buffer, or a host slice's
  window of it (its shape, and its ``start_offset`` in elements; "0" for a whole buffer), contiguous element
  ``strides``.
- **func_ids**: :func:`kernel_func_ids`, the kernel functions (AIC / AIV / InCore; a Group is not one,
  its parts are) numbered in the program's order; the name map uses the same numbering.
- **tensors**: one per (buffer, version) an argument names. The simulator has no device addresses, so
  :func:`gm_addresses` lays the buffers out in GM from :data:`GM_BASE` in creation order, each aligned to
  :data:`GM_ALIGN` bytes. ``version`` counts the writes to the buffer submitted before: an INPUT names
  the version it reads, an OUTPUT_EXISTING / INOUT the version it makes (one more), so a consumer's
  input and its producer's output name one tensor. ``tensor_id`` is :func:`tensor_id`: FNV-1a 64 over
  the address then the version, each 8 bytes little-endian.
- **edges**: the runtime's real dependencies (``Task.dep_edges``), one per reason, so a pair may repeat.
  The runtime tracks the latest writers and the readers since of each window of memory, as upstream's
  tensormap tracks address ranges (a window is a contiguous element range: disjoint windows of one
  buffer have no edge): those edges (read-after-write, write-after-write and write-after-read) are
  ``source: "tensormap"``, ``flags ["wait"]``, ``overlap`` ``"covered"`` when the producer's window holds
  the consumer's, else ``"other"``, with ``arg`` the consumer's argument and the ``producer_*`` fields of
  the producer's argument on that window (``DepEdge.pred_arg``). ``pl.task_deps`` edges are
  ``"explicit"``, ``arg`` -1, ``flags ["wait", "retain"]``. No edge is ``"creator"``: tensors are
  created on the host, never by a task.

Every uint64 (task ids, tensor ids, addresses, offsets, element counts) is a JSON string.
"""

from __future__ import annotations

import functools
import weakref
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func

from pypto.dialects.dtypes import dtype_name
from pypto.dialects.enums import ParamDirection
from pypto.dialects.types import TensorType
from pypto.target.dtypes import BY_NAME

from .base import Collector, json_text, kernel_func_ids, per_run, register, write_artefact
from .jsonenc import Encoded, compact_encoder

GM_BASE = 0x1_0000_0000
"""The simulated GM address of the first buffer (the simulator itself has no addresses)."""

GM_ALIGN = 512
"""Each simulated buffer starts on this many bytes."""

RING = 0
"""The one ring of the simulator's task ids."""

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1

_ARG_TYPE = {ParamDirection.In: "INPUT", ParamDirection.Out: "OUTPUT_EXISTING", ParamDirection.InOut: "INOUT"}
_STORAGE_NAME = {}
for _name, _info in BY_NAME.items():
    if _info.numpy is not None:
        _STORAGE_NAME.setdefault(np.dtype(_info.numpy).name, _name)


def fnv1a64(data: bytes) -> int:
    """FNV-1a, 64 bit."""
    h = _FNV_OFFSET
    for b in data:
        h = ((h ^ b) * _FNV_PRIME) & _MASK64
    return h


@functools.lru_cache(maxsize=4096)
def tensor_id(addr: int, version: int) -> int:
    """A tensor's id: FNV-1a 64 of ``addr`` then ``version``, each 8 bytes little-endian."""
    return fnv1a64(addr.to_bytes(8, "little") + version.to_bytes(8, "little"))


def raw_task_id(local: int, ring: int = RING) -> int:
    """``(ring << 32) | local``."""
    return (ring << 32) | local


def name_map(module: Any) -> dict[str, Any]:
    """The §1 name map: ``{"level":2,"orchestrator_name":null,"callable_id_to_name":{"<func_id>":"<name>"}}``."""
    ids = kernel_func_ids(module)
    return {"level": 2, "orchestrator_name": None, "callable_id_to_name": {str(i): n for n, i in ids.items()}}


def write_name_map(result: Any, out_dir: Path) -> Path:
    """``out_dir/name_map_<build dir name>.json`` (``out_dir`` is ``<build>/dfx_outputs``), atomically; once
    per run when both the swimlane and dep_gen collectors ask for it."""

    def write() -> Path:
        path = out_dir / f"name_map_{out_dir.parent.name}.json"
        module = result.module
        text = _NAME_MAP_TEXT.get(module)
        if text is None:
            text = _NAME_MAP_TEXT[module] = json_text(name_map(module)) + "\n"
        return write_artefact(path, text)

    return per_run(result, ("name_map", out_dir), write)


_NAME_MAP_TEXT: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""A compiled module's name map file text (:func:`name_map` depends on the module alone)."""


def gm_addresses(buffers: list[Any]) -> dict[int, int]:
    """Buffer id -> simulated GM address (creation order from :data:`GM_BASE`, :data:`GM_ALIGN` apart)."""
    out: dict[int, int] = {}
    addr = GM_BASE
    for b in buffers:
        out[b.id] = addr
        addr += max(-(-b.nbytes // GM_ALIGN), 1) * GM_ALIGN
    return out


def _dtype(t: Any) -> str | None:
    """A parameter's element dtype name (``FP32``), a scalar's own (``INDEX``), else None."""
    try:
        return dtype_name(t.element_type if isinstance(t, TensorType) else t)
    except ValueError:  # a type with no pl dtype name
        return None


_PARAM_DTYPES: weakref.WeakKeyDictionary[Any, dict[str, list[str | None]]] = weakref.WeakKeyDictionary()
"""A compiled module's :func:`_param_dtypes` (a program runs many times; its module does not change)."""


def _param_dtypes(module: Any) -> dict[str, list[str | None]]:
    """Function name -> the element dtype of each parameter (a tensor's element type; None for a type with
    no pl dtype name), once per module."""
    known = _PARAM_DTYPES.get(module)
    if known is None:
        known = {op.sym_name.data: [_dtype(t) for t in op.function_type.inputs.data]
                 for op in module.body.block.ops if isinstance(op, func.FuncOp)}  # fmt: skip
        _PARAM_DTYPES[module] = known
    return known


def _layout(arr: np.ndarray) -> tuple[str, str, str, str]:
    """A buffer's shape and element strides as deps.json spells them (``[256,64]``), storage dtype name
    (``FP32``; numpy's ``dtype.name`` is slow) and element count (a uint64 string)."""
    shape = ",".join([str(int(d)) for d in arr.shape])
    strides = ",".join([str(int(s) // arr.itemsize) for s in arr.strides])
    return f"[{shape}]", f"[{strides}]", _storage_name(arr.dtype), str(int(arr.size))


@functools.lru_cache(maxsize=64)
def _storage_name(dtype: np.dtype) -> str:
    """The pl dtype name of a numpy storage dtype (``float32`` -> ``FP32``; else numpy's name upper-cased)."""
    return _STORAGE_NAME.get(dtype.name, dtype.name.upper())


def kernel_slots(task: Any, ids: dict[str, int]) -> tuple[int, int, int]:
    """A task's ``kernel_ids`` ``[aic, aiv0, aiv1]`` (-1 for an empty slot): its parts' func_ids (``ids``:
    :func:`.base.kernel_func_ids`) by core type, its AIV parts in order."""
    slots = [-1, -1, -1]
    aiv = 1
    for part in task.parts:
        if part.core_type == "aic":
            slots[0] = ids.get(part.func_name, -1)
        elif aiv <= 2:
            slots[aiv] = ids.get(part.func_name, -1)
            aiv += 1
    return slots[0], slots[1], slots[2]


def deps_document(result: Any) -> dict[str, list[Encoded]]:
    """The ``deps.json`` of a finished run (see the module docstring): its tasks, tensors and edges, each
    item formatted as its compact JSON line (the keys in their order, the values as ``json.dumps`` spells
    them) instead of built as a dict only to be encoded. An argument's text after its ``idx`` is the same
    wherever the run passes one buffer state the same way (a weight every task reads): spelled once."""
    graph = result.graph
    ids = kernel_func_ids(result.module)
    param_dtypes = _param_dtypes(result.module)
    addrs = gm_addresses(graph.buffers)
    spell = _Spelling()
    version: dict[int, int] = {}
    tensors: list[Encoded] = []
    arg_key: dict[tuple[int, int], tuple[int, int, Any, str | None]] = {}  # (task, arg idx) -> its spelled key
    spelled: dict[tuple[int, int, Any, str | None], tuple[str, str, str, str, str, str]] = {}
    """(id(buffer), version, direction, dtype) -> the argument's text after its idx; its tensor id, dtype, shape,
    strides and start offset as JSON (its edges repeat them)."""
    layouts: dict[int, tuple[str, str, str, str]] = {}  # id(buffer) -> _layout
    seen: set[int] = set()  # the tensor ids listed
    tasks: list[Encoded] = []
    in_dir = ParamDirection.In
    for t in graph.tasks:
        slots = kernel_slots(t, ids)
        dtypes = param_dtypes.get(t.func_name, [])
        args: list[str] = []
        written: list[int] = []
        tid_ = t.id
        for a in t.args:
            index = a.index
            dt = dtypes[index] if index < len(dtypes) else None
            b = a.buffer
            if b is None:
                args.append(f'{{"idx":{index},"type":"SCALAR","tensor_id":null,"dtype":{spell.text(dt)},"shape":[],'
                            f'"start_offset":"0","strides":[]}}')  # fmt: skip
                continue
            mem = b.id
            direction = a.direction
            if direction is in_dir:
                v = version.get(mem, 0)
            else:
                v = version.get(mem, 0) + 1
                written.append(mem)
            key = (id(b), v, direction, dt)
            known = spelled.get(key)
            if known is None:
                layout = layouts.get(id(b))
                if layout is None:  # a buffer's shape, strides, storage dtype and size: once per run
                    layout = layouts[id(b)] = _layout(b.array)
                dtype = spell.text(dt or layout[2])
                tid = tensor_id(addrs[mem], v)
                if tid not in seen:
                    seen.add(tid)
                    tensors.append(Encoded(f'{{"tensor_id":"{tid}","buffer_addr":"{addrs[mem]}","version":{v},'
                                           f'"dtype":{dtype},"buffer_numel":"{layout[3]}"}}'))  # fmt: skip
                offset = f'"{b.start_offset}"'
                known = spelled[key] = (
                    f',"type":"{_ARG_TYPE[direction]}","tensor_id":"{tid}","dtype":{dtype},'
                    f'"shape":{layout[0]},"start_offset":{offset},"strides":{layout[1]}}}',
                    f'"{tid}"', dtype, layout[0], layout[1], offset,
                )  # fmt: skip
            arg_key[(tid_, index)] = key
            args.append(f'{{"idx":{index}{known[0]}')
        for mem in set(written):
            version[mem] = version.get(mem, 0) + 1
        tasks.append(Encoded(f'{{"task_id":"{raw_task_id(tid_)}","scope":"auto","kernel_ids":[{slots[0]},{slots[1]},'
                             f'{slots[2]}],"block_num":{spell.number(t.block_num)},"args":[{",".join(args)}]}}'))  # fmt: skip
    raw = {t.id: f'"{raw_task_id(t.id)}"' for t in graph.tasks}  # each task's id, spelled once
    as_consumer: dict[tuple[int, int, Any, str | None], str] = {}  # an argument's consumer_* text, once
    as_producer: dict[tuple[int, int, Any, str | None], str] = {}  # and its producer_* text
    edges: list[Encoded] = []
    for t in graph.tasks:
        succ = raw[t.id]
        for e in t.dep_edges:
            pred = raw.get(e.pred) or f'"{raw_task_id(e.pred)}"'
            head = f'{{"pred":{pred},"succ":{succ},"arg":{spell.number(e.arg)}'
            if e.kind == "explicit":
                edges.append(Encoded(head + ',"source":"explicit","flags":["wait","retain"]}'))
                continue
            key = arg_key[(t.id, e.arg)]
            consumer = as_consumer.get(key)
            if consumer is None:
                _, tid, dtype, shape, strides, offset = spelled[key]
                consumer = as_consumer[key] = (
                    f'"tensor_id":{tid},"consumer_dtype":{dtype},"consumer_shape":{shape},'
                    f'"consumer_start_offset":{offset},"consumer_strides":{strides}'
                )
            key = arg_key[(e.pred, e.pred_arg)]  # the producer's argument on the region the edge is on
            producer = as_producer.get(key)
            if producer is None:
                _, _, _, shape, strides, offset = spelled[key]
                producer = as_producer[key] = (
                    f'"producer_shape":{shape},"producer_start_offset":{offset},"producer_strides":{strides}}}'
                )
            overlap = '"covered"' if e.covered else '"other"'
            edges.append(Encoded(f'{head},"source":"tensormap","flags":["wait"],"overlap":{overlap},{consumer},{producer}'))
    return {"tasks": tasks, "tensors": tensors, "edges": edges}


class _Spelling:
    """Values as ``json.dumps`` spells them (compact), each string once per document."""

    def __init__(self) -> None:
        self.value = compact_encoder()
        self._strings: dict[str | None, str] = {None: "null"}

    def text(self, x: str | None) -> str:
        """A string (or None) as JSON."""
        text = self._strings.get(x)
        if text is None:
            text = self._strings[x] = self.value(x)
        return text

    def number(self, x: Any) -> str:
        """An int as JSON (a plain int directly)."""
        return str(x) if type(x) is int else self.value(x)


def write_deps(result: Any, out_dir: Path) -> Path:
    """``out_dir/deps.json``, atomically."""
    path = out_dir / "deps.json"
    write_artefact(path, json_text(deps_document(result)) + "\n")
    return path


@register
class DepsCollector(Collector):
    """``enable_dep_gen``: ``deps.json`` and the run's name map (everything comes from the task graph,
    so nothing is watched per task)."""

    FLAG = "enable_dep_gen"
    OUTPUTS = ("deps.json", "name_map_*.json")

    def finish(self, result: Any) -> list[Path]:
        return [write_deps(result, self.out_dir), write_name_map(result, self.out_dir)]
