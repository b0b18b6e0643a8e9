"""``args_dump/args_dump.json`` and ``args_dump/args.bin`` (runtime-dfx-formats.md §6).

``enable_dump_args`` 2 (full) captures every argument of every task; 1 (partial) only the tensors
the run marks. Two stages per task:

- ``before_dispatch`` (at the task's first part, before it is dispatched): the values going in,
  i.e. the ``input`` and ``inout`` tensors and the scalars;
- ``after_completion`` (after its last part completed): the values coming out, the ``output`` and
  ``inout`` tensors.

The role is the argument's direction (In -> ``input``, Out -> ``output``, InOut -> ``inout``; a
scalar is an input). Rows are sorted by (task_id, stage, arg_index, role), stages in the order above
(not alphabetical) and roles input < output < inout. A task's view of a tensor is the whole device buffer on the simulated chip
(``start_offset`` 0, contiguous, row-major strides in elements). Payloads are the buffer's bytes,
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pypto.dialects.enums import ParamDirection

from .base import Collector, json_text, register, result_func_ids, write_artefact
from .jsonenc import Encoded, compact_encoder

ARGS_DUMP_DIR = "args_dump"
MANIFEST = "args_dump.json"
BIN_FILE = "args.bin"

STAGES = ("before_dispatch", "after_completion")
"""In sort order: a task's inputs before its outputs."""

ROLES = {ParamDirection.In: "input", ParamDirection.Out: "output", ParamDirection.InOut: "inout"}
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


@dataclass(slots=True)
class _Capture:
    task_id: int
    stage: str
    arg_index: int
    role: str
    kernels: tuple[str, ...]
    kind: str
    dtype: str
    value: Any
    shape_text: str
    """The shape as the manifest spells it (``[256,64]``; a scalar's ``[]``)."""
    strides_text: str
    numel: int
    payload: _Payload | None

    def key(self) -> tuple[int, int, int, int]:
        return (self.task_id, STAGES.index(self.stage), self.arg_index, ROLE_ORDER.index(self.role))


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


def _arg_row(c: _Capture, func_ids: str, offset: int, size: int, encode: Callable[[Any], str]) -> Encoded:
    """One ``args`` row of the manifest as its compact JSON (the keys of runtime-dfx-formats.md §6 in their
    order; the values as ``json.dumps`` spells them, ``func_ids`` already spelled): formatted from a template
    instead of a dict encoded (a run has a row per argument and stage)."""
    return Encoded(
        f'{{"task_id":"0x{c.task_id:016x}","func_id":{func_ids},"arg_index":{_int(c.arg_index, encode)},'
        f'"role":"{c.role}","stage":"{c.stage}","kind":"{c.kind}","dtype":{encode(c.dtype)},'
        f'"value":{"null" if c.value is None else encode(c.value)},"is_contiguous":true,"shape":{c.shape_text},'
        f'"strides":{c.strides_text},"start_offset":0,"numel":{_int(c.numel, encode)},"bin_offset":{offset},'
        f'"bin_size":{size},"truncated":false,"overwritten":false}}'
    )


def _int(x: Any, encode: Callable[[Any], str]) -> str:
    """``x`` as ``json.dumps`` spells it (a plain int directly)."""
    return str(x) if type(x) is int else encode(x)


@register
class ArgsDumpCollector(Collector):
    """``enable_dump_args``: ``args_dump/{args_dump.json,args.bin}`` (1 partial, 2 full)."""

    FLAG = "enable_dump_args"

    def __init__(self, level: int, out_dir: Path):
        super().__init__(level, out_dir)
        self.config: Any = None
        self._before: set[int] = set()
        self._captures: dict[tuple[int, str, int], _Capture] = {}
        self._writes: dict[int, int] = {}
        """A buffer's memory (``DeviceBuffer.id``: a slice shares its source's) -> how many task parts wrote
        it so far (its version)."""
        self._payloads: dict[tuple[int, int], tuple[Any, _Payload]] = {}
        """(id(buffer), version) -> (the buffer, kept alive so its id stays its own; its captured state)."""
        self._live: dict[int, list[_Payload]] = {}
        """A buffer's memory -> its captured states that still point at the live array."""
        self._layouts: dict[int, tuple[str, str, str, int]] = {}
        """id(buffer) -> :meth:`_layout` (the buffers stay alive in ``_payloads`` while the run lasts)."""
        self._kernels: dict[int, tuple[str, ...]] = {}
        """Task id -> its kernel names, sorted."""

    def _payload_of(self, buffer: Any) -> _Payload:
        """``buffer``'s captured state, shared with an earlier capture when no task wrote it since."""
        key = (id(buffer), self._writes.get(buffer.id, 0))
        known = self._payloads.get(key)
        if known is None:
            known = self._payloads[key] = (buffer, _Payload(buffer.array))
            self._live.setdefault(buffer.id, []).append(known[1])
        return known[1]

    def _written_by(self, part: Any) -> list[int]:
        """The buffer memories ``part`` may write: its Out / InOut tensors, and its In tensors too unless the
        run checks every launch leaves them unchanged (``RunConfig.check_inputs``: a kernel that wrote one
        would stop the run), so that a before-dispatch state is what the kernel was given."""
        config = self.config
        checked = config is not None and (
            config.check_inputs is True
            or (config.check_inputs is None and getattr(config, "kernel_engine", "interpreter") != "cpp")
        )
        return [a.buffer.id for a in part.args
                if a.buffer is not None and (a.direction is not ParamDirection.In or not checked)]  # fmt: skip

    def _versioned_by(self, part: Any) -> list[int]:
        """The buffer memories ``part`` writes by its signature (Out / InOut): each gets a new version."""
        return [a.buffer.id for a in part.args if a.buffer is not None and a.direction is not ParamDirection.In]

    def _wanted(self, task: Any, arg: Any) -> bool:
        if self.level >= 2:
            return True
        return arg.buffer is not None and arg.index in task.dumps  # partial: the marked tensors only

    def _layout(self, buffer: Any) -> tuple[str, str, str, int]:
        """A buffer's storage dtype name, shape and element strides (as the manifest spells them) and element
        count (once per buffer a run: they do not change)."""
        known = self._layouts.get(id(buffer))
        if known is None:
            arr = buffer.array
            shape = ",".join([str(int(d)) for d in arr.shape])
            strides = ",".join([str(int(s) // arr.itemsize) for s in arr.strides])
            known = (str(arr.dtype).upper(), f"[{shape}]", f"[{strides}]", int(arr.size))
            self._layouts[id(buffer)] = known
        return known

    def _capture(self, task: Any, stage: str) -> None:
        kernels = self._kernels.get(task.id)
        if kernels is None:
            kernels = self._kernels[task.id] = tuple(sorted({p.func_name for p in task.parts}))
        for arg in task.args:
            role = ROLES.get(arg.direction, "input") if arg.buffer is not None else "input"
            if stage == "before_dispatch" and role == "output":
                continue
            if stage == "after_completion" and (role == "input" or arg.buffer is None):
                continue
            if not self._wanted(task, arg):
                continue
            if arg.buffer is not None:
                dtype, shape, strides, numel = self._layout(arg.buffer)
                cap = _Capture(
                    task.id, stage, arg.index, role, kernels, "tensor",
                    arg.dtype or dtype, None, shape, strides, numel, self._payload_of(arg.buffer),
                )  # fmt: skip
            else:
                v = arg.scalar
                cap = _Capture(
                    task.id, stage, arg.index, role, kernels, "scalar",
                    arg.dtype or _scalar_dtype(v), scalar_value(v), "[]", "[]", 1, None,
                )  # fmt: skip
            self._captures[(task.id, stage, arg.index)] = cap

    def before_task(self, task: Any, part: Any) -> None:
        if task.id not in self._before:  # a Group's first part: nothing of the task has run yet
            self._before.add(task.id)
            self._capture(task, "before_dispatch")
        for mem in self._written_by(part):  # the states this part may overwrite: copy them now
            for payload in self._live.pop(mem, ()):
                payload.freeze()

    def after_task(self, task: Any, part: Any, kernel_run: Any) -> None:
        for mem in self._versioned_by(part):  # what the part may have written is a new version
            self._writes[mem] = self._writes.get(mem, 0) + 1
        self._capture(task, "after_completion")  # each part overwrites: the last part's is kept

    def manifest(self, result: Any) -> tuple[dict[str, Any], list[bytes | bytearray | memoryview]]:
        """The manifest (its ``args`` rows as their JSON text: :func:`_arg_row`) and the payloads in
        ``args.bin`` order (the file is their concatenation)."""
        func_ids = result_func_ids(result)
        caps = sorted(self._captures.values(), key=_Capture.key)
        payloads: list[bytes | bytearray | memoryview] = []
        offsets: dict[int, int] = {}  # id(payload) -> its bin_offset (a shared payload is stored once)
        end = 0
        args: list[Encoded] = []
        func_text: dict[tuple[str, ...], str] = {}  # a task's kernels -> its func_id list, spelled
        encode = compact_encoder(False)
        stages = dict.fromkeys(STAGES, 0)
        roles = dict.fromkeys(ROLE_ORDER, 0)
        for c in caps:
            size = c.payload.nbytes if c.payload is not None else 0
            offset = offsets.get(id(c.payload)) if size else end
            if offset is None:
                offset = offsets[id(c.payload)] = end
                payloads.append(c.payload.chunk())  # type: ignore[union-attr]
                end += size
            fids = func_text.get(c.kernels)
            if fids is None:
                fids = func_text[c.kernels] = encode([func_ids.get(k, -1) for k in c.kernels] or [-1])
            args.append(_arg_row(c, fids, offset, size, encode))
            stages[c.stage] += 1
            roles[c.role] += 1
        manifest = {
            "run_dir": str(self.out_dir.parent),
            "bin_format": {"type": "logical_contiguous", "byte_order": "little_endian"},
            "dump_args_level": self.level,
            "total_args": len(args),
            "before_dispatch": stages["before_dispatch"],
            "after_completion": stages["after_completion"],
            "input_args": roles["input"],
            "output_args": roles["output"],
            "inout_args": roles["inout"],
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
        # the copies are written: their blocks go to the next run (this collector is done with them)
        _SPARES.give([p.data for _, p in self._payloads.values() if isinstance(p.data, bytearray)])
        self._payloads.clear()
        self._captures.clear()
        self._layouts.clear()
        self._kernels.clear()
        return [d / MANIFEST, d / BIN_FILE]
