"""``args_dump/args_dump.json`` and ``args_dump/args.bin`` (runtime-dfx-formats.md §6).

``enable_dump_args`` 2 (full) captures every argument of every task; 1 (partial) only the tensors
the run marks. Two stages per task:

- ``before_dispatch`` (at the task's first part, before it is dispatched): the values going in,
  i.e. the ``input`` and ``inout`` tensors and the scalars;
- ``after_completion`` (after its last part completed, of its last SPMD block): the values coming out, the
  ``output`` and ``inout`` tensors. What a Group's earlier part or an SPMD task's earlier block left is not
  captured (nor copied when the next one writes over it).

The role is the argument's direction (In -> ``input``, Out -> ``output``, InOut -> ``inout``; a
scalar is an input). Rows are sorted by (task_id, stage, arg_index, role), stages in the order above
(not alphabetical) and roles input < output < inout. A task's view of a tensor is its device buffer on the simulated chip,
or a host slice's window of it (``start_offset``: where the window starts in the buffer, in elements; 0 for a whole
buffer), contiguous, row-major strides in elements. Payloads are the view's bytes,
row-major little-endian, at ``[bin_offset, +bin_size)`` of ``args.bin`` in manifest order; a BF16
payload is its ``uint16`` bits. ``func_id`` is the task's kernels (a Group: its AIC and AIV parts)
numbered per program: the kernel functions the run's task graph calls, sorted by name, from 0.

Partial dumps (level 1) keep only the tensors the program marks, as upstream's two surfaces do
(docs/runtime.md, "Selective args dump"): ``pl.dump_tag(t)`` in the Orchestration function marks
``t`` at every later kernel call or ``pl.at`` scope that receives it, and ``pl.at(..., dumps=[t])``
marks ``t`` at that scope's task. The compiler carries the marks to the task's call as
``pl.dump_vars`` (:attr:`Task.dumps`, argument positions); a marked tensor is dumped at both of its
stages. Scalars are never marked; level 2 dumps every argument and ignores the marks.

No arena: the simulator keeps every payload, so ``truncated``/``overwritten`` are false and
``truncated_args``/``dropped_records``/``dropped_overwrite`` 0. A payload is stored once per buffer
contents: an argument whose buffer no task has written since an earlier capture of it (an input every
task reads; an output read by the next task) points at that capture's bytes (the same ``bin_offset``),
which keeps ``args.bin`` to the distinct tensor states of the run. A captured state is copied only when a
task part is about to write its buffer (an In buffer counts too when the run does not check every launch
leaves its inputs unchanged); the others are written to ``args.bin`` from the buffers themselves when the
run ends.
"""

from __future__ import annotations

import math
import threading
from json.encoder import encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import numpy as np

from pypto.dialects.enums import ParamDirection

from .base import Collector, json_text, kernel_func_ids, register, when_written, write_artefact
from .jsonenc import Encoded, compact_encoder

ARGS_DUMP_DIR = "args_dump"
MANIFEST = "args_dump.json"
BIN_FILE = "args.bin"

STAGES = ("before_dispatch", "after_completion")
"""In sort order: a task's inputs before its outputs."""

ROLE_ORDER = ("input", "output", "inout")


def scalar_value(v: Any) -> Any:
    """A scalar as the manifest spells it: NaN -> None (null), +Inf -> ``"$Inf"``, -Inf -> ``"-$Inf"``;
    numpy scalars as Python's."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        if math.isnan(v):
            return None
        if math.isinf(v):
            return "$Inf" if v > 0 else "-$Inf"
    return v


def _scalar_dtype(v: Any) -> str:
    if isinstance(v, bool):
        return "BOOL"
    return "INT64" if isinstance(v, int) else "FP32"


def _payload(arr: np.ndarray) -> bytes:
    """Row-major, little-endian bytes of ``arr``."""
    a = np.ascontiguousarray(arr)
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and not np.little_endian):
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.tobytes(order="C")


def _little_contiguous(a: np.ndarray) -> bool:
    """Whether ``a``'s memory is already its payload (row-major, little-endian)."""
    order = a.dtype.byteorder
    return bool(a.flags.c_contiguous) and (order in "|<" or (order == "=" and np.little_endian))


SPARE_LIMIT = 64 << 20
"""The most bytes of copy blocks kept from one run for the next (:class:`_Spares`)."""


class _Spares:
    """The blocks a finished run's copies lived in, handed to the next run's copies of the same size. A
    flagged run copies about the same buffer states every time, and a fresh block costs a page fault per
    page at its first write (measured on the 2-core VM: a fresh 256 KiB copy several times a reused one)."""

    def __init__(self) -> None:
        self.blocks: dict[int, list[bytearray]] = {}
        self.total = 0
        self.lock = threading.Lock()

    def take(self, nbytes: int) -> bytearray:
        """A block of ``nbytes`` (a spare one, else a new one)."""
        with self.lock:
            free = self.blocks.get(nbytes)
            if free:
                self.total -= nbytes
                return free.pop()
        return bytearray(nbytes)

    def give(self, blocks: list[bytearray]) -> None:
        """Keep ``blocks`` for later runs (up to :data:`SPARE_LIMIT` bytes; nothing may use them after)."""
        with self.lock:
            for b in blocks:
                if self.total + len(b) <= SPARE_LIMIT:
                    self.blocks.setdefault(len(b), []).append(b)
                    self.total += len(b)


_SPARES = _Spares()


class _Payload:
    """One captured state of a buffer (shared by every capture of that state). It points at the live
    array until a task part is about to write the buffer (:meth:`freeze` copies it then): a state no
    later part overwrites (an input, the last value of an output) is never copied, and ``args.bin`` is
    written from the array itself. A run's buffers change only through its task parts."""

    __slots__ = ("array", "data", "nbytes")

    def __init__(self, array: np.ndarray):
        self.array: np.ndarray | None = array
        self.data: bytes | bytearray | None = None
        self.nbytes = int(array.nbytes)

    def freeze(self) -> None:
        """Copy the bytes now (the buffer is about to change)."""
        a = self.array
        if a is None:
            return
        if self.nbytes and _little_contiguous(a):
            block = _SPARES.take(self.nbytes)
            np.frombuffer(block, dtype=np.uint8)[:] = a.reshape(-1).view(np.uint8)
            self.data = block
        else:
            self.data = _payload(a)
        self.array = None

    def chunk(self) -> bytes | bytearray | memoryview:
        """The bytes for ``args.bin``: the copy, or a view of the unchanged array."""
        if self.data is not None:
            return self.data
        a = self.array
        assert a is not None
        return memoryview(a.reshape(-1).view(np.uint8)) if _little_contiguous(a) else _payload(a)


_STAGE_ROLE = tuple(tuple(f'"role":"{r}","stage":"{s}",' for r in ROLE_ORDER) for s in STAGES)
"""The row text of each (stage index, role index): ``"role":"input","stage":"before_dispatch",``."""

_ROLE_INDEX = {ParamDirection.In: 0, ParamDirection.Out: 1, ParamDirection.InOut: 2}
"""A tensor's direction -> its role's index in :data:`ROLE_ORDER` (anything else: input)."""

_ROW_END = ',"truncated":false,"overwritten":false}'

_DTYPE_NAMES: dict[Any, str] = {}
"""numpy dtype -> the manifest's spelling of its name (``FLOAT32``: numpy's ``str(dtype)`` costs µs)."""


def _dtype_name(dtype: Any) -> str:
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = str(dtype).upper()
    return name


@register
class ArgsDumpCollector(Collector):
    """``enable_dump_args``: ``args_dump/{args_dump.json,args.bin}`` (1 partial, 2 full).

    A capture is one row of the manifest, kept as ``(task_id, stage index, arg_index) -> (role index, the
    row's text from ``"kind"`` to ``"numel"``, its payload)``: the text between is the same for every capture
    of a buffer under one dtype, spelled once per run (:meth:`_body`); the rest is filled in when the run ends
    (:meth:`manifest`)."""

    FLAG = "enable_dump_args"
    OUTPUTS = (ARGS_DUMP_DIR,)

    def __init__(self, level: int, out_dir: Path):
        super().__init__(level, out_dir)
        self.config: Any = None
        self._checked: bool | None = None
        """Whether the run checks every launch leaves its In tensors unchanged (read at the first part)."""
        self._before: set[int] = set()
        self._parts_done: dict[int, int] = {}
        """Task id -> how many of its part launches completed (a task is each part once per SPMD block)."""
        self._rows: dict[tuple[int, int, int], tuple[int, str, _Payload | None]] = {}
        self._writes: dict[int, int] = {}
        """A buffer's memory (``DeviceBuffer.id``: a slice shares its source's) -> how many task parts wrote
        it so far (its version)."""
        self._payloads: dict[tuple[int, int], tuple[Any, _Payload]] = {}
        """(id(buffer), version) -> (the buffer, kept alive so its id stays its own; its captured state)."""
        self._live: dict[int, list[_Payload]] = {}
        """A buffer's memory -> its captured states that still point at the live array."""
        self._bodies: dict[tuple[int, str | None], str] = {}
        """(id(buffer), the argument's dtype) -> :meth:`_body` (the buffers stay alive in ``_payloads`` while
        the run lasts)."""
        self._kernels: dict[int, tuple[str, ...]] = {}
        """Task id -> its kernel names, sorted."""
        self._encode = compact_encoder(False)

    def _payload_of(self, buffer: Any) -> _Payload:
        """``buffer``'s captured state, shared with an earlier capture when no task wrote it since."""
        key = (id(buffer), self._writes.get(buffer.id, 0))
        known = self._payloads.get(key)
        if known is None:
            known = self._payloads[key] = (buffer, _Payload(buffer.array))
            self._live.setdefault(buffer.id, []).append(known[1])
        return known[1]

    def _inputs_checked(self) -> bool:
        """``RunConfig.check_inputs`` in effect for every launch (a kernel that wrote an In tensor would stop
        the run): then a part writes only its Out / InOut tensors."""
        config = self.config
        return config is not None and (
            config.check_inputs is True
            or (config.check_inputs is None and getattr(config, "kernel_engine", "interpreter") != "cpp")
        )

    def _body(self, buffer: Any, dtype: str | None) -> str:
        """A tensor row's text from ``"kind"`` to ``"numel"`` (its dtype -- the argument's, else the buffer's
        storage dtype -- and the buffer's shape, element strides and element count: the same for every
        capture of ``buffer`` in a run), comma-terminated."""
        key = (id(buffer), dtype)
        known = self._bodies.get(key)
        if known is None:
            arr = buffer.array
            shape = ",".join([str(int(d)) for d in arr.shape])
            strides = ",".join([str(int(s) // arr.itemsize) for s in arr.strides])
            known = self._bodies[key] = (
                f'"kind":"tensor","dtype":{encode_basestring_ascii(dtype or _dtype_name(arr.dtype))},"value":null,'
                f'"is_contiguous":true,"shape":[{shape}],"strides":[{strides}],"start_offset":{int(buffer.start_offset)},'
                f'"numel":{int(arr.size)},'
            )
        return known

    def _capture(self, task: Any, stage: int) -> None:
        """The rows of ``task`` at stage index ``stage`` (0 before dispatch: inputs, inouts and scalars; 1
        after completion: outputs and inouts)."""
        if task.id not in self._kernels:
            self._kernels[task.id] = tuple(sorted({p.func_name for p in task.parts}))
        rows = self._rows
        every = self.level >= 2
        for arg in task.args:
            buffer = arg.buffer
            if buffer is None:  # a scalar: an input, never marked (a partial dump skips it)
                if stage == 0 and every:
                    v = arg.scalar
                    dtype = encode_basestring_ascii(arg.dtype or _scalar_dtype(v))
                    value = scalar_value(v)
                    text = "null" if value is None else self._encode(value)
                    rows[(task.id, 0, arg.index)] = (
                        0, f'"kind":"scalar","dtype":{dtype},"value":{text},"is_contiguous":true,"shape":[],'
                        f'"strides":[],"start_offset":0,"numel":1,', None,
                    )  # fmt: skip
                continue
            role = _ROLE_INDEX.get(arg.direction, 0)
            if role == (1 if stage == 0 else 0):  # an output before dispatch, an input after completion
                continue
            if every or arg.index in task.dumps:  # partial: the marked tensors only
                rows[(task.id, stage, arg.index)] = (role, self._body(buffer, arg.dtype), self._payload_of(buffer))

    def before_task(self, task: Any, part: Any) -> None:
        if task.id not in self._before:  # a Group's first part: nothing of the task has run yet
            self._before.add(task.id)
            self._capture(task, 0)
        live = self._live
        if not live:
            return
        checked = self._checked
        if checked is None:
            checked = self._checked = self._inputs_checked()
        # the states this part may overwrite: copy them now. Its Out / InOut tensors, and its In tensors too
        # unless the run checks every launch leaves them unchanged, so that a before-dispatch state is what
        # the kernel was given
        for a in part.args:
            if a.buffer is not None and (a.direction is not ParamDirection.In or not checked):
                for payload in live.pop(a.buffer.id, ()):
                    payload.freeze()

    def after_task(self, task: Any, part: Any, kernel_run: Any) -> None:
        writes = self._writes
        for a in part.args:  # what the part may have written (Out / InOut) is a new version
            if a.buffer is not None and a.direction is not ParamDirection.In:
                mem = a.buffer.id
                writes[mem] = writes.get(mem, 0) + 1
        done = self._parts_done.get(task.id, 0) + 1
        self._parts_done[task.id] = done
        if done >= len(task.parts) * task.block_num:  # its last part of its last block: the task completed
            self._capture(task, 1)

    def manifest(self, result: Any) -> tuple[dict[str, Any], list[bytes | bytearray | memoryview]]:
        """The manifest (its ``args`` rows as their JSON text) and the payloads in ``args.bin`` order (the
        file is their concatenation). Rows sort by (task_id, stage, arg_index): an argument has one role."""
        func_ids = kernel_func_ids(result.module)
        payloads: list[bytes | bytearray | memoryview] = []
        offsets: dict[int, int] = {}  # id(payload) -> its bin_offset (a shared payload is stored once)
        end = 0
        args: list[Encoded] = []
        heads: dict[int, str] = {}  # task id -> its rows' text up to "arg_index":
        func_text: dict[tuple[str, ...], str] = {}  # a task's kernels -> its func_id list, spelled
        stages = [0, 0]
        roles = [0, 0, 0]
        for (task_id, stage, arg_index), (role, body, payload) in sorted(self._rows.items()):
            head = heads.get(task_id)
            if head is None:
                kernels = self._kernels[task_id]
                fids = func_text.get(kernels)
                if fids is None:
                    fids = func_text[kernels] = self._encode([func_ids.get(k, -1) for k in kernels] or [-1])
                head = heads[task_id] = f'{{"task_id":"0x{task_id:016x}","func_id":{fids},"arg_index":'
            if payload is None:
                offset, size = end, 0
            else:
                size = payload.nbytes
                offset = offsets.get(id(payload)) if size else end
                if offset is None:
                    offset = offsets[id(payload)] = end
                    payloads.append(payload.chunk())
                    end += size
            tail = f'"bin_offset":{offset},"bin_size":{size}{_ROW_END}'
            args.append(Encoded(f"{head}{arg_index},{_STAGE_ROLE[stage][role]}{body}{tail}"))
            stages[stage] += 1
            roles[role] += 1
        manifest = {
            "run_dir": str(self.out_dir.parent),
            "bin_format": {"type": "logical_contiguous", "byte_order": "little_endian"},
            "dump_args_level": self.level,
            "total_args": len(args),
            "before_dispatch": stages[0],
            "after_completion": stages[1],
            "input_args": roles[0],
            "output_args": roles[1],
            "inout_args": roles[2],
            "truncated_args": 0,
            "dropped_records": 0,
            "dropped_overwrite": 0,
            "bin_file": BIN_FILE,
            "args": args,
        }
        return manifest, payloads

    def finish(self, result: Any) -> list[Path]:
        manifest, payloads = self.manifest(result)
        d = self.out_dir / ARGS_DUMP_DIR
        write_artefact(d / BIN_FILE, payloads)
        del payloads
        write_artefact(d / MANIFEST, json_text(manifest, allow_nan=False) + "\n")
        # once the copies are written, their blocks go to the next run (this collector is done with them)
        blocks = [p.data for _, p in self._payloads.values() if isinstance(p.data, bytearray)]
        when_written(lambda: _SPARES.give(blocks))
        self._payloads.clear()
        self._rows.clear()
        self._bodies.clear()
        self._kernels.clear()
        return [d / MANIFEST, d / BIN_FILE]
