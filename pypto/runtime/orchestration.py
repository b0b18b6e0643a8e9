"""The host side of a run: interpret an Orchestration function into a task graph.

An Orchestration function only creates tensors, passes them to kernels and
loops; it never reads tensor data. :func:`build_task_graph` therefore walks it
once on the host with the run's tensors (numpy arrays in simulated device
memory) and records every kernel call as a :class:`Task`:

- ``pl.tensor.create`` allocates a zero-filled device tensor;
- a ``func.call`` to an AIC / AIV / InCore / Group function is a task whose
  tensor arguments are :class:`TaskArg` s with the directions of the call's
  ``pl.arg_directions`` (DeriveCallDirections), else the callee's ``pl.dir``;
  its results are the tensors of the callee's returned parameters (else its
  Out/InOut arguments in order); a call marked ``pl.block_num = n`` (inside ``with pl.spmd(n)``) is
  one task of ``n`` SPMD blocks (:attr:`Task.block_num`, ``pl.sync_start``: :attr:`Task.sync_start`);
- a call to another Orchestration / Opaque / Inline function is walked inline;
- ``scf.for`` / ``scf.if`` / ``scf.yield`` and integer/float ``arith`` ops run on
  the host (so a loop issues one task per iteration).

The walk also records its runtime scopes (:class:`ScopeEvent`, in ``TaskGraph.scopes``): the entry
function's body (depth 0), each loop iteration, the taken branch of an ``if`` and each inlined
function's body, as upstream's generated orchestration opens a ``PTO2_SCOPE`` for each.

Dependencies are computed per region of device memory from the directions (upstream's tensormap): a
task waits for the latest writers of every region its tensors overlap, read or written (RAW, WAW), and for
the readers since then of every region it writes (WAR). A host slice is a contiguous window of its
memory (:attr:`DeviceBuffer.window`), so two windows overlap exactly when their element ranges do: tasks
writing disjoint rows of one output (upstream's 04_paged_attention, a batch each) do not wait for each
other. A whole tensor is the window of all its memory.
The static ``pl.task_deps`` of AutoDeriveTaskDependencies are added on top
(an edge to the latest instance of each listed ``pl.task_id``), so an explicit
``deps=[...]`` is honoured too.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from pypto.dialects.dtypes import dtype_name
from pypto.dialects.enums import ForKind, FunctionType, ParamDirection, ParamDirectionAttr
from pypto.dialects.program import (
    call_dump_indices,
    for_kind,
    function_type,
    no_dep_indices,
    param_directions,
    task_handle,
    user_deps,
)
from pypto.dialects.tensor_ops import TensorDimOp, TensorRefineShapeOp, TensorSliceOp
from pypto.dialects.types import TensorType
from pypto.errors import Error
from pypto.target.dtypes import BY_NAME

KERNEL_TYPES = (FunctionType.AIC, FunctionType.AIV, FunctionType.InCore, FunctionType.Group)
"""Function types whose calls are device tasks."""


class OrchestrationError(Error, RuntimeError):
    """The Orchestration function uses something the host interpreter cannot run."""


@dataclass(eq=False)
class DeviceBuffer:
    """A tensor in simulated device memory (GM): a contiguous numpy array.

    ``origin`` says where it came from (``"param a"``, ``"tensor.create mm_out"``)."""

    id: int
    name: str
    array: np.ndarray
    origin: str
    read_only: bool = False
    """A padded copy of a window past its source's end: tasks may read it only."""
    start_offset: int = 0
    """Where it starts in its memory, in elements (a host slice's window; 0 for a whole buffer)."""

    @property
    def nbytes(self) -> int:
        """Size in bytes."""
        return int(self.array.nbytes)

    @property
    def window(self) -> tuple[int, int]:
        """The elements of its memory it covers, ``[start, end)`` (a view is contiguous; a padded copy past
        its source's end claims its whole extent from its start, which over-approximates safely)."""
        return self.start_offset, self.start_offset + int(self.array.size)


def _window_start(src: DeviceBuffer, offsets: list[int]) -> int:
    """The element offset in ``src``'s memory of the window of ``src`` at ``offsets``."""
    item = src.array.itemsize
    return src.start_offset + sum(o * (s // item) for o, s in zip(offsets, src.array.strides, strict=True))


@dataclass
class TaskArg:
    """One argument of a task: a tensor with its direction, or a scalar."""

    index: int
    direction: ParamDirection
    buffer: DeviceBuffer | None = None
    scalar: int | float | bool | None = None
    dtype: str | None = None
    """The callee parameter's DSL dtype (``"FP32"``; a tensor's element type), None when unknown."""

    @property
    def is_tensor(self) -> bool:
        """True for tensor arguments."""
        return self.buffer is not None

    def value(self) -> Any:
        """What the kernel receives: the array or the scalar."""
        return self.buffer.array if self.buffer is not None else self.scalar


@dataclass
class KernelPart:
    """One kernel a task runs: the function and its arguments (a Group task has several)."""

    func_name: str
    core_type: str  # "aic" | "aiv"
    args: list[TaskArg]


class DepEdge(NamedTuple):
    """Why a task waits for ``pred``: ``kind`` ``"raw"`` / ``"waw"`` (``pred`` is a latest writer of a
    region the tensor of argument ``arg`` overlaps), ``"war"`` (``pred`` read such a region since and this
    task writes it) or ``"explicit"`` (a ``pl.task_deps`` entry; ``arg`` is -1). ``pred_arg``: the
    argument of ``pred`` on that region (-1 for explicit); ``covered``: its window holds all of this
    task's (deps.json's ``overlap``: covered, else other)."""

    pred: int
    arg: int
    kind: str
    pred_arg: int = -1
    covered: bool = True


@dataclass
class Task:
    """One kernel call of the Orchestration function.

    ``core_type`` is ``"aic"``, ``"aiv"`` or ``"mix"`` (a Group: its AIC and AIV
    parts launch together on one core cluster); ``deps`` are the ids of the
    tasks it waits for; ``static_id`` is the call's ``pl.task_id``."""

    id: int
    func_name: str
    core_type: str
    args: list[TaskArg]
    parts: list[KernelPart]
    deps: set[int] = field(default_factory=set)
    static_id: int | None = None
    loc: str | None = None
    dep_edges: list[DepEdge] = field(default_factory=list)
    """One entry per reason behind ``deps`` (a pair may repeat), in the order they were found."""
    dumps: frozenset[int] = frozenset()
    """The argument indices the call marks for a partial args dump (``pl.dump_tag``, ``dumps=``)."""
    block_num: int = 1
    """SPMD blocks (``with pl.spmd(n)``: ``n``): the task runs once per block, each block on its own
    core(s) reading its index with ``pl.tile.get_block_idx()``; 1 for a plain task."""
    sync_start: bool = False
    """``pl.spmd(..., sync_start=True)``: every block is dispatched at once, or none."""

    @property
    def label(self) -> str:
        """``t<id>`` (runtime-dfx-formats.md task label, ring 0)."""
        return f"t{self.id}"


@dataclass(frozen=True)
class ScopeEvent:
    """A runtime scope boundary of the walk (``pypto.runtime.dfx.scope_stats``): ``phase`` ``"begin"`` /
    ``"end"`` of the scope at nesting ``depth`` (0: the entry function's body) opened by the op at ``loc``
    (a loop iteration, the taken branch of an ``if``, an inlined function's body), with the number of
    tasks, buffers and tensormap entries (tensors with a producer task) issued so far."""

    phase: str
    depth: int
    loc: str | None
    tasks: int
    buffers: int
    tensormap: int


@dataclass
class TaskGraph:
    """The tasks of one run, in submission order, and the tensors they touch."""

    tasks: list[Task]
    buffers: list[DeviceBuffer]
    returns: list[Any]
    scopes: list[ScopeEvent] = field(default_factory=list)
    """The scope boundaries of the walk, in order (each ``begin`` matched by its ``end``)."""

    def successors(self) -> dict[int, list[int]]:
        """Task id -> ids of the tasks that depend on it."""
        succ: dict[int, list[int]] = {t.id: [] for t in self.tasks}
        for t in self.tasks:
            for d in sorted(t.deps):
                succ[d].append(t.id)
        return succ

    def edges(self) -> list[tuple[int, int]]:
        """(producer, consumer) pairs."""
        return [(d, t.id) for t in self.tasks for d in sorted(t.deps)]


def numpy_dtype(element_type: Any) -> Any:
    """The numpy storage dtype of a pl element type (``f32`` -> ``float32``)."""
    name = dtype_name(element_type)
    storage = BY_NAME[name].numpy
    if storage is None:
        raise OrchestrationError(f"dtype {name} has no device storage in the simulator")
    return np.dtype(storage)


def _loc(op: Operation) -> str | None:
    loc = getattr(op, "location", None)
    return None if loc is None else _loc_text(loc)


@functools.lru_cache(maxsize=4096)
def _loc_text(loc: Any) -> str | None:
    """A location attribute as ``file:line:col`` (printing it costs more than a launch's other host work)."""
    text = str(loc)
    if not text or "unknown" in text:
        return None
    return text.removeprefix("loc(").removesuffix(")").replace('"', "")


def _core_type(f: func.FuncOp) -> str:
    kind = function_type(f)
    if kind is FunctionType.AIC:
        return "aic"
    if kind is FunctionType.AIV:
        return "aiv"
    if kind is FunctionType.Group:
        return "mix"
    from pypto.ptoas.codegen.function import kernel_kind
    from pypto.ptoas.dialect.attrs import KernelKind

    return "aic" if kernel_kind(f) == KernelKind.cube else "aiv"


def _call_directions(call: func.CallOp, callee: func.FuncOp) -> list[ParamDirection]:
    a = call.attributes.get("pl.arg_directions")
    if isinstance(a, ArrayAttr) and len(a.data) == len(call.arguments):
        return [d.data if isinstance(d, ParamDirectionAttr) else ParamDirection.In for d in a.data]
    return param_directions(callee)


def _set_dtypes(args: list[TaskArg], callee: func.FuncOp) -> None:
    """Each argument's dtype from the callee's parameter types (args_dump)."""
    for a, t in zip(args, callee.function_type.inputs.data, strict=False):
        try:
            a.dtype = dtype_name(t.element_type if isinstance(t, TensorType) else t)
        except ValueError:
            a.dtype = None


def _dump_marks(call: func.CallOp, callee: func.FuncOp) -> frozenset[int]:
    """The argument positions the call marks for a partial args dump (its ``pl.dump_vars``, set from
    ``pl.dump_tag`` / ``pl.at(..., dumps=)``)."""
    marks = call_dump_indices(call)
    bad = [i for i in marks if i >= len(call.arguments)]
    if bad:
        raise OrchestrationError(
            f"pl.dump_vars marks argument {bad[0]} of a call to @{callee.sym_name.data}, which takes "
            f"{len(call.arguments)}" + (f" (at {_loc(call)})" if _loc(call) else "")
        )
    return frozenset(marks)


def _int_attr(op: Operation, name: str) -> int | None:
    a = op.attributes.get(name)
    return a.value.data if isinstance(a, IntegerAttr) else None


def _innermost_loop(op: Operation) -> scf.ForOp | None:
    p = op.parent_op()
    while p is not None and not isinstance(p, scf.ForOp | func.FuncOp):
        p = p.parent_op()
    return p if isinstance(p, scf.ForOp) else None


def _static_deps(op: Operation, attr: str = "pl.task_deps") -> list[int]:
    a = op.attributes.get(attr)
    if not isinstance(a, ArrayAttr):
        return []
    return [d.value.data for d in a.data if isinstance(d, IntegerAttr)]


_ARITH: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.AddfOp: operator.add,
    arith.SubfOp: operator.sub,
    arith.MulfOp: operator.mul,
    arith.DivfOp: operator.truediv,
    arith.FloorDivSIOp: operator.floordiv,
    arith.DivSIOp: lambda a, b: int(a / b),
    arith.DivUIOp: operator.floordiv,
    arith.RemSIOp: lambda a, b: a - b * int(a / b),
    arith.RemUIOp: operator.mod,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.MaxSIOp: max,
    arith.MinSIOp: min,
    arith.MaximumfOp: max,
    arith.MinimumfOp: min,
    arith.AndIOp: operator.and_,
    arith.OrIOp: operator.or_,
    arith.XOrIOp: operator.xor,
}

_CMPI = {0: operator.eq, 1: operator.ne, 2: operator.lt, 3: operator.le, 4: operator.gt, 5: operator.ge,
         6: operator.lt, 7: operator.le, 8: operator.gt, 9: operator.ge}  # fmt: skip


_KINDS: tuple[tuple[Any, str], ...] = (
    (func.ReturnOp | scf.YieldOp, "return"),
    (func.CallOp, "call"),
    (TensorRefineShapeOp, "refine"),
    (TensorDimOp, "dim"),
    (TensorSliceOp, "slice"),
    (arith.ConstantOp, "constant"),
    (arith.CmpiOp, "cmpi"),
    (arith.IndexCastOp | arith.ExtSIOp | arith.ExtUIOp | arith.TruncIOp | arith.FPToSIOp, "to_int"),
    (arith.SIToFPOp, "to_float"),
    (scf.ForOp, "for"),
    (scf.IfOp, "if"),
)
"""The host interpreter's op kinds by class (disjoint classes)."""


@functools.cache
def _op_kind(cls: type[Operation], name: str) -> str:
    """What the host interpreter does with an op of class ``cls`` named ``name``: one answer per class
    (``isinstance`` on xDSL's abstract op classes costs more than the rest of a host op)."""
    if name == "pl.yield":
        return "return"
    if name in ("pl.tensor.create", "pl.tensor.read"):
        return name.removeprefix("pl.tensor.")
    if cls in _ARITH:
        return "arith"
    return next((kind for classes, kind in _KINDS if issubclass(cls, classes)), "other")


class _HostInterpreter:
    """Walks Orchestration functions, issuing tasks."""

    def __init__(self, module: ModuleOp):
        self.funcs: dict[str, func.FuncOp] = {
            op.sym_name.data: op for op in module.body.block.ops if isinstance(op, func.FuncOp)
        }
        self.tasks: list[Task] = []
        self.buffers: list[DeviceBuffer] = []
        self._regions = RegionTracker()
        self._by_static: dict[int, int] = {}
        self._by_handle: dict[str, int] = {}  # ``pl.at(...) as t`` label -> its latest task
        # Calls whose innermost loop is a pl.parallel: the tasks of that loop's current / last finished run.
        self._par_loop: dict[int, scf.ForOp] = {}
        self._run_now: dict[int, list[int]] = {}
        self._run_done: dict[int, list[int]] = {}
        self.scopes: list[ScopeEvent] = []
        self._depth = 0

    @contextmanager
    def scope(self, loc: str | None) -> Iterator[None]:
        """A runtime scope around what the body issues (its begin/end in :attr:`scopes`)."""
        depth = self._depth
        self.scopes.append(ScopeEvent("begin", depth, loc, len(self.tasks), len(self.buffers), len(self._regions.writes)))
        self._depth += 1
        yield
        self._depth = depth
        self.scopes.append(ScopeEvent("end", depth, loc, len(self.tasks), len(self.buffers), len(self._regions.writes)))

    # ---- buffers ---------------------------------------------------------------

    def new_buffer(self, name: str, array: np.ndarray, origin: str) -> DeviceBuffer:
        """Register a device tensor."""
        buf = DeviceBuffer(len(self.buffers), name, array, origin)
        self.buffers.append(buf)
        return buf

    # ---- walking ---------------------------------------------------------------

    def call_function(self, f: func.FuncOp, args: Sequence[Any]) -> list[Any]:
        """Walk ``f``'s body with ``args`` bound to its parameters; returns its results."""
        env: dict[SSAValue, Any] = dict(zip(f.body.block.args, args, strict=True))
        return self.run_block(list(f.body.block.ops), env)

    def run_block(self, ops: list[Operation], env: dict[SSAValue, Any]) -> list[Any]:
        """Run ``ops`` in order; returns the operands of the terminator (return/yield)."""
        for op in ops:
            if _op_kind(type(op), op.name) == "return":
                return [env[v] for v in op.operands]
            self.run_op(op, env)
        return []

    def run_op(self, op: Operation, env: dict[SSAValue, Any]) -> None:
        """One host op."""
        kind = _op_kind(type(op), op.name)
        if kind == "call":
            results = self.call(op, [env[v] for v in op.arguments])  # type: ignore[attr-defined]
        elif kind == "create":
            t = op.results[0].type
            assert isinstance(t, TensorType)
            shape = self.extents(op, env)
            name = op.results[0].name_hint or f"tensor{len(self.buffers)}"
            arr = np.zeros(shape, dtype=numpy_dtype(t.element_type))
            results = [self.new_buffer(name, arr, f"tensor.create {name}")]
        elif kind == "refine":
            results = [self.refine(op, env[op.input])]  # type: ignore[arg-type,attr-defined]
        elif kind == "dim":
            src = env[op.input]
            if not isinstance(src, DeviceBuffer):
                raise OrchestrationError(f"pl.tensor.dim of a non-tensor at {_loc(op)}")
            results = [int(src.array.shape[op.axis_index()])]  # type: ignore[attr-defined]
        elif kind == "read":
            results = [self.read(op, env[op.operands[0]], [env[v] for v in op.operands[1:]])]
        elif kind == "slice":
            results = [self.slice(op, env)]  # type: ignore[arg-type]
        elif kind == "constant":
            v = op.value
            if isinstance(v, IntegerAttr):
                results = [v.value.data]
            elif isinstance(v, FloatAttr):
                results = [float(v.value.data)]
            else:
                raise OrchestrationError(f"arith.constant of {v} in Orchestration at {_loc(op)}")
        elif kind == "arith":
            a, b = (env[v] for v in op.operands)
            results = [_ARITH[type(op)](a, b)]
        elif kind == "cmpi":
            a, b = (env[v] for v in op.operands)
            results = [_CMPI[op.predicate.value.data](a, b)]
        elif kind == "to_int":
            results = [int(env[op.operands[0]])]
        elif kind == "to_float":
            results = [float(env[op.operands[0]])]
        elif kind == "for":
            results = self.run_for(op, env)  # type: ignore[arg-type]
        elif kind == "if":
            region = op.true_region if env[op.cond] else op.false_region
            results = []
            if region.blocks:
                with self.scope(_loc(op)):
                    results = self.run_block(list(region.block.ops), env)
        else:
            raise OrchestrationError(
                f"the host interpreter cannot run '{op.name}' in an Orchestration function"
                + (f" (at {_loc(op)})" if _loc(op) else "")
            )
        for r, v in zip(op.results, results, strict=True):
            env[r] = v

    def read(self, op: Operation, buf: Any, indices: list[Any]) -> Any:
        """``pl.tensor.read`` on the host (a run-time config or length): an element of a tensor no task
        has written yet (the graph is built before any kernel runs)."""
        if not isinstance(buf, DeviceBuffer):
            raise OrchestrationError(f"pl.tensor.read of a non-tensor at {_loc(op)}")
        if buf.id in self._regions.writes:
            raise OrchestrationError(
                f"pl.tensor.read at {_loc(op)} reads '{buf.name}', which a kernel writes: the host builds the "
                "task graph before kernels run, so it reads only tensors passed in or created (read it in a kernel)"
            )
        return buf.array[tuple(int(i) for i in indices)].item()

    @staticmethod
    def extents(op: Operation, env: dict[SSAValue, Any]) -> tuple[int, ...]:
        """The ``shape`` of a create / slice with its run-time extents (the ``sizes`` operands) filled in."""
        sizes = iter(int(env[v]) for v in getattr(op, "sizes", ()))
        shape = tuple(next(sizes) if d < 0 else d for d in op.properties["shape"].get_values())  # type: ignore[attr-defined]
        if any(d <= 0 for d in shape):
            raise OrchestrationError(f"{op.name} at {_loc(op)}: run-time shape {list(shape)} has an extent that is not positive")
        return shape

    def refine(self, op: TensorRefineShapeOp, src: Any) -> DeviceBuffer:
        """A tensor with run-time extents passed to a kernel parameter of static shape: the extents must match."""
        want = tuple(op.properties["shape"].get_values())  # type: ignore[attr-defined]
        if not isinstance(src, DeviceBuffer) or any(w not in (-1, g) for w, g in zip(want, src.array.shape, strict=True)):
            got = list(src.array.shape) if isinstance(src, DeviceBuffer) else src
            raise OrchestrationError(
                f"at {_loc(op)}: the kernel parameter has shape {list(want)}, but the tensor passed has the run-time "
                f"shape {got}"
            )
        return src

    def slice(self, op: TensorSliceOp, env: dict[SSAValue, Any]) -> DeviceBuffer:
        """``pl.tensor.slice`` on the host (a window a task reads or writes, e.g. a row of a table
        picked by a run-time position): a view of the source's array under the source's buffer id; its
        dependencies are those of its window (:attr:`DeviceBuffer.window`). The window must be contiguous
        (kernels see flat GM)."""
        src = env[op.input]
        if not isinstance(src, DeviceBuffer):
            raise OrchestrationError(f"pl.tensor.slice of a non-tensor at {_loc(op)}")
        offsets = [int(env[v]) for v in op.offset]
        shape = self.extents(op, env)
        full = src.array.shape
        if any(o < 0 or o >= n for o, n in zip(offsets, full, strict=True)):
            raise OrchestrationError(
                f"pl.tensor.slice at {_loc(op)}: window {list(shape)} at {offsets} is outside '{src.name}' {list(full)}"
            )
        if any(o + d > n for o, d, n in zip(offsets, shape, full, strict=True)):
            return self.overrun(op, src, offsets, shape)
        view = src.array[tuple(slice(o, o + d) for o, d in zip(offsets, shape, strict=True))]
        if not view.flags.c_contiguous:
            raise OrchestrationError(
                f"pl.tensor.slice at {_loc(op)}: window {list(shape)} at {offsets} of '{src.name}' {list(full)} is not "
                "contiguous; the host passes tasks contiguous tensors only (slice it inside the kernel's pl.at scope)"
            )
        name = op.result.name_hint or f"{src.name}_slice"
        return DeviceBuffer(src.id, name, view, f"slice of {src.name}", start_offset=_window_start(src, offsets))

    def overrun(self, op: TensorSliceOp, src: DeviceBuffer, offsets: list[int], shape: tuple[int, ...]) -> DeviceBuffer:
        """A window that starts inside ``src`` but runs past its end (upstream's 07 example: ``n_unroll``
        block-table entries at the last group, of which the kernel reads the valid ones): a read-only copy
        padded with zeros, under the source's buffer id (a task writing it is an OrchestrationError)."""
        inside = tuple(slice(o, min(o + d, n)) for o, d, n in zip(offsets, shape, src.array.shape, strict=True))
        part = src.array[inside]
        arr = np.zeros(shape, dtype=src.array.dtype)
        arr[tuple(slice(0, n) for n in part.shape)] = part
        name = op.result.name_hint or f"{src.name}_slice"
        return DeviceBuffer(src.id, name, arr, f"slice of {src.name} past its end", read_only=True,
                            start_offset=_window_start(src, offsets))  # fmt: skip

    def run_for(self, op: scf.ForOp, env: dict[SSAValue, Any]) -> list[Any]:
        """``scf.for`` on the host: one walk of the body per iteration."""
        lb, ub, step = env[op.lb], env[op.ub], env[op.step]
        carried = [env[v] for v in op.iter_args]
        body = op.body.block
        ops = list(body.ops)
        parallel = for_kind(op) is ForKind.Parallel
        if parallel:
            for s in [s for s, lp in self._par_loop.items() if lp is op]:
                self._run_now[s] = []
        i = lb
        while i < ub:
            inner = dict(env)
            inner[body.args[0]] = i
            inner.update(zip(body.args[1:], carried, strict=True))
            with self.scope(_loc(op)):
                carried = self.run_block(ops, inner)
            i += step
        if parallel:
            for s in [s for s, lp in self._par_loop.items() if lp is op]:
                self._run_done[s] = self._run_now.pop(s, [])
        return carried

    def _explicit_preds(self, static_id: int) -> list[int]:
        """The run-time tasks a ``deps=`` handle naming call ``static_id`` stands for: its latest task, or,
        when the call sits directly in a ``pl.parallel`` loop (a fan-out stored into a task-id array), every
        task of that loop's last finished run."""
        if static_id in self._par_loop:
            return self._run_done.get(static_id, [])
        return [self._by_static[static_id]] if static_id in self._by_static else []

    # ---- calls and tasks -------------------------------------------------------

    def call(self, op: func.CallOp, args: list[Any]) -> list[Any]:
        """A call: a task for a kernel, an inline walk otherwise."""
        name = op.callee.root_reference.data
        callee = self.funcs.get(name)
        if callee is None:
            raise OrchestrationError(f"call to @{name}, which is not in the program")
        if function_type(callee) not in KERNEL_TYPES:
            with self.scope(_loc(callee)):
                return self.call_function(callee, args)
        dirs = _call_directions(op, callee)
        task_args = [self._task_arg(i, d, a) for i, (d, a) in enumerate(zip(dirs, args, strict=True))]
        _set_dtypes(task_args, callee)
        static_id = _int_attr(op, "pl.task_id")
        loop = _innermost_loop(op)
        if static_id is not None and loop is not None and for_kind(loop) is ForKind.Parallel:
            self._par_loop.setdefault(static_id, loop)
        task = self.issue(
            callee,
            task_args,
            static_id,
            _static_deps(op),
            _loc(op),
            no_dep_indices(op),
            _static_deps(op, "pl.explicit_deps"),
        )
        if "pl.explicit_deps" not in op.attributes:  # a reparsed build (no derived ids): its deps= by label
            for pred in sorted({self._by_handle[h] for h in user_deps(op) if h in self._by_handle} - task.deps):
                task.deps.add(pred)
                task.dep_edges.append(DepEdge(pred, -1, "explicit"))
        if (label := task_handle(op)) is not None:
            self._by_handle[label] = task.id
        task.dumps = _dump_marks(op, callee)
        task.block_num = max(_int_attr(op, "pl.block_num") or 1, 1)
        sync = op.attributes.get("pl.sync_start")
        task.sync_start = isinstance(sync, IntegerAttr) and bool(sync.value.data)
        return self._results(callee, op, args, dirs)

    @staticmethod
    def _task_arg(index: int, direction: ParamDirection, value: Any) -> TaskArg:
        if isinstance(value, DeviceBuffer):
            if value.read_only and direction is not ParamDirection.In:
                raise OrchestrationError(
                    f"argument {index} ('{value.name}') is a window past the end of its tensor, which a task may only "
                    f"read, but the kernel's parameter is {direction.value}"
                )
            return TaskArg(index, direction, buffer=value)
        if isinstance(value, np.generic):
            value = value.item()
        return TaskArg(index, ParamDirection.In, scalar=value)

    def _results(self, callee: func.FuncOp, op: func.CallOp, args: list[Any], dirs: list[ParamDirection]) -> list[Any]:
        """The tensors a kernel call returns: its returned parameters, else its Out/InOut args in order."""
        outs = [
            a for a, d in zip(args, dirs, strict=True) if d is not ParamDirection.In and isinstance(a, DeviceBuffer)
        ]
        ret = callee.body.block.last_op
        results: list[Any] = []
        for k in range(len(op.results)):
            value = None
            if isinstance(ret, func.ReturnOp) and k < len(ret.operands):
                v = ret.operands[k]
                if v in callee.body.block.args:
                    value = args[callee.body.block.args.index(v)]  # type: ignore[arg-type]
            if value is None:
                if k >= len(outs):
                    raise OrchestrationError(f"cannot tell which tensor result {k} of @{callee.sym_name.data} is")
                value = outs[k]
            results.append(value)
        return results

    def _parts(self, callee: func.FuncOp, args: list[TaskArg]) -> list[KernelPart]:
        """The kernels a task runs: the callee, or the AIC/AIV functions a Group calls."""
        if function_type(callee) is not FunctionType.Group:
            return [KernelPart(callee.sym_name.data, _core_type(callee), args)]
        env: dict[SSAValue, Any] = dict(zip(callee.body.block.args, args, strict=True))
        parts: list[KernelPart] = []
        for op in callee.body.block.ops:
            if isinstance(op, func.CallOp):
                sub = self.funcs[op.callee.root_reference.data]
                dirs = _call_directions(op, sub)
                sub_args = []
                for i, (d, v) in enumerate(zip(dirs, op.arguments, strict=True)):
                    a = env.get(v)
                    if not isinstance(a, TaskArg):
                        raise OrchestrationError(
                            f"Group @{callee.sym_name.data}: argument {i} of @{sub.sym_name.data} is not a parameter"
                        )
                    sub_args.append(TaskArg(i, d, a.buffer, a.scalar))
                parts.append(KernelPart(sub.sym_name.data, _core_type(sub), sub_args))
        parts.sort(key=lambda p: p.core_type != "aic")  # AIC first, then the AIVs
        if not parts:
            raise OrchestrationError(f"Group @{callee.sym_name.data} calls no kernel")
        return parts

    def issue(
        self,
        callee: func.FuncOp,
        args: list[TaskArg],
        static_id: int | None,
        static_deps: list[int],
        loc: str | None,
        untracked: frozenset[int] = frozenset(),
        explicit: Sequence[int] = (),
    ) -> Task:
        """Record a task and its dependencies (``untracked``: argument positions kept out of tracking,
        ``no_dep_args=`` / ``pl.manual_scope``; ``explicit``: the calls its ``deps=`` handles name)."""
        tid = len(self.tasks)
        task = Task(
            tid, callee.sym_name.data, _core_type(callee), args, self._parts(callee, args), static_id=static_id, loc=loc
        )
        tracked = [(a.buffer.id, *a.buffer.window, a.index, a.direction) for a in args
                   if a.buffer is not None and a.index not in untracked]  # fmt: skip
        for e in self._regions.edges(tracked):
            task.deps.add(e.pred)
            task.dep_edges.append(e)
        for s in static_deps:
            if s in self._by_static and s not in explicit:
                task.deps.add(self._by_static[s])
                task.dep_edges.append(DepEdge(self._by_static[s], -1, "explicit"))
        for s in explicit:
            for pred in self._explicit_preds(s):
                if pred not in task.deps:
                    task.deps.add(pred)
                    task.dep_edges.append(DepEdge(pred, -1, "explicit"))
        task.deps.discard(tid)
        task.dep_edges = [e for e in task.dep_edges if e.pred != tid]
        self._regions.record(tid, tracked)
        if static_id is not None:
            self._by_static[static_id] = tid
            if static_id in self._par_loop:
                self._run_now.setdefault(static_id, []).append(tid)
        self.tasks.append(task)
        return task


Access = tuple[int, int, int, int, ParamDirection]
"""A task argument's access to device memory: ``(memory, lo, hi, arg, direction)``, the elements ``[lo, hi)``
of memory ``memory`` (``DeviceBuffer.id``) through argument ``arg``."""


class RegionTracker:
    """The dependencies of device memory by region, as upstream's tensormap tracks address ranges: per memory,
    its latest writes (no later write covers their windows) and the reads since (no later write covers them
    either), each ``(lo, hi, task, arg)``. A task waits for every latest write its window overlaps (RAW, WAW)
    and, where it writes, for every such read (WAR); its own write then supersedes what its window covers.
    Whole buffers are windows of all their memory, so for them this is "the last writer and the readers
    since". Entries are plain tuples: a graph makes one per tensor argument of every task."""

    def __init__(self) -> None:
        self.writes: dict[int, list[tuple[int, int, int, int]]] = {}
        self.reads: dict[int, list[tuple[int, int, int, int]]] = {}

    def edges(self, accesses: Sequence[Access]) -> list[DepEdge]:
        """A new task's dependencies on the earlier ones, argument by argument (``covered``: the earlier
        access's window holds the new one's); one WAR edge per reading task."""
        out: list[DepEdge] = []
        for mem, lo, hi, arg, direction in accesses:
            kind = "waw" if direction is ParamDirection.Out else "raw"
            writes = self.writes.get(mem)
            if writes:
                for w_lo, w_hi, w_task, w_arg in _overlapping(writes, lo, hi):
                    out.append(DepEdge(w_task, arg, kind, w_arg, w_lo <= lo and hi <= w_hi))
            reads = self.reads.get(mem)
            if reads and direction is not ParamDirection.In:
                readers: dict[int, tuple[int, int, int, int]] = {}  # a reading task's first read of the region
                for r in _overlapping(reads, lo, hi):
                    readers.setdefault(r[2], r)
                for tid_r, (r_lo, r_hi, _, r_arg) in sorted(readers.items()):
                    out.append(DepEdge(tid_r, arg, "war", r_arg, r_lo <= lo and hi <= r_hi))
        return out

    def record(self, task: int, accesses: Sequence[Access]) -> None:
        """``task`` made ``accesses`` (in argument order): a read joins its memory's reads; a write
        supersedes the writes and reads its window covers (whoever comes later waits for it instead) and
        is the latest write there (an InOut also a read)."""
        for mem, lo, hi, arg, direction in accesses:
            access = (lo, hi, task, arg)
            if direction is ParamDirection.In:
                self.reads.setdefault(mem, []).append(access)
                continue
            writes = self.writes.get(mem)
            if writes:
                writes[:] = [w for w in writes if not (lo <= w[0] and w[1] <= hi)]
                writes.append(access)
            else:
                self.writes[mem] = [access]
            reads = self.reads.get(mem)
            if reads:
                reads[:] = [r for r in reads if not (lo <= r[0] and r[1] <= hi)]
            if direction is ParamDirection.InOut:
                self.reads.setdefault(mem, []).append(access)


def _overlapping(accesses: list[tuple[int, int, int, int]], lo: int, hi: int) -> list[tuple[int, int, int, int]]:
    """The accesses whose windows share an element with ``[lo, hi)``, by task then argument."""
    found = [x for x in accesses if x[0] < hi and lo < x[1]]
    if len(found) > 1:
        found.sort(key=_by_task)
    return found


def _by_task(x: tuple[int, int, int, int]) -> tuple[int, int]:
    return x[2], x[3]


def entry_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function a run starts from: ``name``, else the first Orchestration
    function, else the only kernel function."""
    funcs = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, func.FuncOp)}
    if name is not None:
        if name not in funcs:
            raise OrchestrationError(f"no function @{name} in the program")
        return funcs[name]
    for f in funcs.values():
        if function_type(f) is FunctionType.Orchestration:
            return f
    kernels = [f for f in funcs.values() if function_type(f) in KERNEL_TYPES]
    if len(kernels) == 1:
        return kernels[0]
    raise OrchestrationError("the program has no Orchestration function and more than one kernel")


def build_task_graph(
    module: ModuleOp, entry: func.FuncOp, args: Sequence[Any], names: Sequence[str] | None = None
) -> TaskGraph:
    """Interpret ``entry`` on ``args`` (numpy arrays for tensors, Python scalars)
    and return its tasks. A kernel entry (no Orchestration) is one task."""
    host = _HostInterpreter(module)
    params = entry.body.block.args
    if len(args) != len(params):
        raise TypeError(f"@{entry.sym_name.data} takes {len(params)} arguments, got {len(args)}")
    values: list[Any] = []
    for i, (p, a) in enumerate(zip(params, args, strict=True)):
        if isinstance(a, np.ndarray):
            name = (names[i] if names is not None and i < len(names) else None) or p.name_hint or f"arg{i}"
            values.append(host.new_buffer(name, a, f"param {name}"))
        else:
            values.append(a)
    with host.scope(_loc(entry)):  # the root scope
        if function_type(entry) in KERNEL_TYPES:
            dirs = param_directions(entry)
            task_args = [host._task_arg(i, d, v) for i, (d, v) in enumerate(zip(dirs, values, strict=True))]
            _set_dtypes(task_args, entry)
            host.issue(entry, task_args, None, [], _loc(entry))
            returns = [
                v
                for v, d in zip(values, dirs, strict=True)
                if d is not ParamDirection.In and isinstance(v, DeviceBuffer)
            ]
        else:
            returns = host.call_function(entry, values)
    return TaskGraph(host.tasks, host.buffers, returns, host.scopes)
