"""Run a ``@pl.jit.host`` orchestrator on the host and record what it dispatches (the L3 plan).

Upstream's host orchestrator is Python on the host CPU (``orchestration/host_orch.py``): it
allocates window buffers, takes one window view per rank and dispatches a per-device ``@pl.jit``
program to each rank (``device=r``). Here the body runs once, at compile time, with stand-ins:

- each tensor parameter is a :class:`HostTensor`; ``x[r]`` is the slice a rank gets;
- ``pld.world_size()`` is the configured rank count, ``pl.range`` is Python's ``range``;
- ``pld.alloc_window_buffer`` / ``pld.window`` give a :class:`WindowBuffer` / :class:`WindowView`;
- a call of a ``@pl.jit`` function with ``device=r`` is a :class:`Dispatch` (without ``device=``: round-robin
  over the ranks in submit order, as upstream's comm-less dispatch);
- ``self.<f>(...)`` of a HOST ``SubWorker`` ``f`` is a callback step ``!f`` (run on the host by the L3 worker).

The recorded :class:`HostPlan` is what every run replays on the ranks
(:mod:`pypto.driver.distributed`); it is stored in ``distributed_meta.json``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pypto.frontend.dsl_objects import HOST_CALLS
from pypto.target.dtypes import ROWS

WINDOW_FLOOR_BYTES = 4096
"""A window buffer takes at least 4 KiB (upstream's floor), even for less data."""

TORCH_OF: dict[str, str] = {r.name: r.torch for r in ROWS if r.torch is not None}
"""PyPTO dtype name -> torch dtype name."""
PYPTO_OF: dict[str, str] = {v: k for k, v in TORCH_OF.items()}


class HostPlanError(ValueError):
    """The host orchestrator did something the L3 plan cannot hold (named in the message)."""


def _dtype_name(dtype: Any) -> str:
    name = getattr(dtype, "dtype_name", None)
    if name is None or name not in TORCH_OF:
        raise HostPlanError(f"expected a dtype such as pl.FP32, got {dtype!r}")
    return str(name)


def _is_dynamic(d: Any) -> bool:
    """A ``pl.dynamic`` extent or arithmetic on one (duck-typed: the host plan imports no front end)."""
    return hasattr(d, "value") and hasattr(d, "name") and not isinstance(d, (int, str))


def resolve_dynamic(x: Any, world_size: int) -> Any:
    """``x`` (an extent, or a list of them) with each ``pl.dynamic`` extent bound to the world size (the
    leading rank dimension, as upstream's ``NR``): ``NR * 64`` -> 128 on 2 ranks."""
    if isinstance(x, (list, tuple)):
        return [resolve_dynamic(d, world_size) for d in x]
    return x.value(lambda _v: world_size) if _is_dynamic(x) else x


def _shape(shape: Any, what: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise HostPlanError(f"{what}: the shape must be a list of ints, got {shape!r}") from None
    if not dims or any(d <= 0 for d in dims):
        raise HostPlanError(f"{what}: the shape must be non-empty and positive, got {list(dims)}")
    return dims


def itemsize(dtype: str) -> int:
    """Bytes per element of a PyPTO dtype name."""
    return next(r.bits for r in ROWS if r.name == dtype) // 8


@dataclass(frozen=True)
class WindowBuffer:
    """``pld.alloc_window_buffer(shape, dtype=)``: one window per rank, of ``nbytes`` (>= 4 KiB)."""

    index: int
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return max(WINDOW_FLOOR_BYTES, math.prod(self.shape) * itemsize(self.dtype))


@dataclass(frozen=True)
class WindowView:
    """``pld.window(buf, shape, dtype=)``: a ``pld.DistributedTensor`` over the rank's own window."""

    buffer: int
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class HostTensor:
    """A host tensor parameter (or a slice ``x[r]`` of one) as the orchestrator sees it."""

    param: int
    name: str
    full_shape: tuple[int, ...]
    dtype: str
    index: tuple[int, ...] = ()

    @property
    def shape(self) -> tuple[int, ...]:
        return self.full_shape[len(self.index):]

    def __getitem__(self, i: Any) -> HostTensor:
        if isinstance(i, tuple):  # x[r, k]: one int per dim
            t = self
            for j in i:
                t = t[j]
            return t
        if not isinstance(i, int) or isinstance(i, bool):
            raise HostPlanError(f"{self.name}[{i!r}]: a host orchestrator indexes a tensor by one int per dim")
        if not self.shape:
            raise HostPlanError(f"{self.name}: indexed past its {len(self.full_shape)} dims")
        if not 0 <= i < self.shape[0]:
            raise HostPlanError(f"{self.name}[{i}]: index out of range for dim of size {self.shape[0]}")
        return HostTensor(self.param, self.name, self.full_shape, self.dtype, (*self.index, i))


@dataclass
class Dispatch:
    """One per-device program call: ``program(*args, device=rank)``."""

    rank: int
    program: str
    args: list[Any]
    after: list[int] = field(default_factory=list)
    """Dispatches on other ranks to wait for first (:mod:`.host_order`)."""
    outputs: set[int] = field(default_factory=set)
    """Its Out/InOut argument indices (while tracing; not stored)."""


@dataclass
class HostPlan:
    """What a host orchestrator does, rank by rank."""

    world_size: int
    windows: list[WindowBuffer] = field(default_factory=list)
    dispatches: list[Dispatch] = field(default_factory=list)
    programs: dict[str, Any] = field(default_factory=dict)
    """name -> the ``@pl.jit`` function (at compile time only; not stored)."""
    commless: int = 0
    """Dispatches without ``device=`` so far (they go round-robin over the ranks)."""
    params: int = 0
    """The orchestrator's parameter count (while tracing: a created tensor's ``param`` follows them)."""
    locals: list[tuple[tuple[int, ...], str]] = field(default_factory=list)
    """``pl.create_tensor(shape, dtype=)`` in the orchestrator: (shape, dtype) of each host intermediate, the
    call's parameters ``params + k`` (zeroed per call by the caller, after its own arguments)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "world_size": self.world_size,
            "windows": [{"shape": list(w.shape), "dtype": w.dtype, "nbytes": w.nbytes} for w in self.windows],
            "dispatches": [{"rank": d.rank, "program": d.program, "args": [_arg_json(a) for a in d.args],
                            **({"after": d.after} if d.after else {})} for d in self.dispatches],
            **({"locals": [{"shape": list(sh), "dtype": dt} for sh, dt in self.locals]} if self.locals else {}),
        }  # fmt: skip

    def window_groups(self) -> list[tuple[int, ...]]:
        """Each window buffer's comm domain (upstream's MaterializeCommDomainScopes): the ranks dispatched with
        a view of it, in order (all ranks when none is). A kernel's ``peer`` on that buffer is an index into it."""
        used: list[set[int]] = [set() for _ in self.windows]
        for d in self.dispatches:
            for a in d.args:
                if isinstance(a, WindowView):
                    used[a.buffer].add(d.rank)
        return [tuple(sorted(u)) if u else tuple(range(self.world_size)) for u in used]

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HostPlan:
        plan = cls(int(data["world_size"]))
        plan.windows = [WindowBuffer(i, tuple(w["shape"]), w["dtype"]) for i, w in enumerate(data["windows"])]
        plan.dispatches = [Dispatch(int(d["rank"]), str(d["program"]), [_arg_from(a) for a in d["args"]],
                                    [int(j) for j in d.get("after", ())]) for d in data["dispatches"]]  # fmt: skip
        plan.locals = [(tuple(int(x) for x in t["shape"]), str(t["dtype"])) for t in data.get("locals", ())]
        return plan

    def new_locals(self) -> list[Any]:
        """Zeroed torch tensors for the plan's ``pl.create_tensor`` intermediates (one call's worth)."""
        import torch

        return [torch.zeros(shape, dtype=getattr(torch, TORCH_OF[dt])) for shape, dt in self.locals]


def _arg_json(a: Any) -> dict[str, Any]:
    if isinstance(a, HostTensor):
        return {"kind": "host", "param": a.param, "name": a.name, "shape": list(a.full_shape), "dtype": a.dtype,
                "index": list(a.index)}  # fmt: skip
    if isinstance(a, WindowView):
        return {"kind": "window", "buffer": a.buffer, "shape": list(a.shape), "dtype": a.dtype}
    return {"kind": "scalar", "value": a}


def _arg_from(d: dict[str, Any]) -> Any:
    if d["kind"] == "host":
        return HostTensor(int(d["param"]), str(d["name"]), tuple(d["shape"]), str(d["dtype"]), tuple(d["index"]))
    if d["kind"] == "window":
        return WindowView(int(d["buffer"]), tuple(d["shape"]), str(d["dtype"]))
    if d["kind"] == "scalar":
        return d["value"]
    raise HostPlanError(f"unknown dispatch argument kind {d['kind']!r}")


HOST_TRACE: ContextVar[HostPlan | None] = ContextVar("pypto_host_trace", default=None)
"""The plan being recorded while a host orchestrator body runs (None otherwise)."""


def current_plan(what: str) -> HostPlan:
    """The plan being recorded; a clear error for ``what`` called outside a host orchestrator."""
    plan = HOST_TRACE.get()
    if plan is None:
        raise RuntimeError(f"{what} can only be used inside a @pl.jit.host orchestrator "
                           "(compiled with RunConfig(distributed_config=DistributedConfig(...)))")
    return plan


def world_size() -> int:
    """``pld.world_size()`` (upstream's full path: ``pld.system.world_size()``): the number of ranks the
    host orchestrator is compiled for."""
    return current_plan("pld.world_size()").world_size


def alloc_window_buffer(shape: Any, dtype: Any = None, name: str = "") -> WindowBuffer:
    """``pld.alloc_window_buffer(shape, dtype=)`` or ``pld.alloc_window_buffer(size_in_bytes)``: a window
    on every rank."""
    plan = current_plan("pld.alloc_window_buffer(...)")
    shape = resolve_dynamic(shape, plan.world_size)
    if isinstance(shape, int) and not isinstance(shape, bool) and dtype is None:  # the size-in-bytes form
        shape, dtype_name = [shape], "UINT8"
    else:
        dtype_name = _dtype_name(dtype)
    buf = WindowBuffer(len(plan.windows), _shape(shape, "pld.alloc_window_buffer"), dtype_name)
    plan.windows.append(buf)
    return buf


def window(buf: Any, shape: Any, dtype: Any = None) -> WindowView:
    """``pld.window``: a ``pld.DistributedTensor`` view of ``buf`` (it must fit in the buffer)."""
    plan = current_plan("pld.window(...)")
    if not isinstance(buf, WindowBuffer) or buf.index >= len(plan.windows):
        raise HostPlanError(f"pld.window: expected a buffer of pld.alloc_window_buffer, got {buf!r}")
    view = WindowView(buf.index, _shape(resolve_dynamic(shape, plan.world_size), "pld.window"), _dtype_name(dtype))
    need = math.prod(view.shape) * itemsize(view.dtype)
    if need > buf.nbytes:
        raise HostPlanError(f"pld.window: a {list(view.shape)} {view.dtype} view needs {need} bytes, "
                            f"the window buffer has {buf.nbytes}")
    return view


def dispatch(program: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A ``@pl.jit`` call in a host orchestrator: ``program(*args, device=r)`` runs on rank ``r``. Returns the
    call's Out/InOut argument(s) (a ``@pl.program`` entry's), so the orchestrator can hand them on."""
    plan = current_plan(f"{program.__name__}(..., device=)")
    kwargs = dict(kwargs)
    if kwargs.get("device") is None:  # comm-less: round-robin over the chips in submit order (upstream)
        kwargs.pop("device", None)
        rank = plan.commless % plan.world_size
        plan.commless += 1
    else:
        rank = kwargs.pop("device")
    if not isinstance(rank, int) or not 0 <= rank < plan.world_size:
        raise HostPlanError(f"{program.__name__}(..., device={rank!r}): expected a rank in 0..{plan.world_size - 1}")
    bound = program._bind(args, kwargs)
    for a in bound:
        if not isinstance(a, HostTensor | WindowView | int | float | bool):
            raise HostPlanError(f"{program.__name__}(...): cannot pass {type(a).__name__} from the host orchestrator "
                                "(expected a host tensor slice, a pld.window view or a number)")
    known = plan.programs.setdefault(program.__name__, program)
    if known is not program:
        raise HostPlanError(f"two different programs are named {program.__name__!r}")
    out_params = list(getattr(program, "output_params", ()))
    plan.dispatches.append(Dispatch(rank, program.__name__, list(bound), outputs=set(out_params)))
    outs = [bound[i] for i in out_params]
    return outs[0] if len(outs) == 1 else tuple(outs) if outs else None


def sub_worker_call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """``self.<sub_worker>(...)`` in a host orchestrator: a HOST callback step (``!<name>``) run by the L3
    worker between the dispatches, on the host tensors; it belongs to the chip of the last dispatch."""
    plan = current_plan(f"self.{name}(...)")
    if kwargs:
        raise HostPlanError(f"self.{name}(...): a SubWorker callback takes positional arguments only")
    for a in args:
        if not isinstance(a, HostTensor | int | float | bool):
            raise HostPlanError(f"self.{name}(...): cannot pass {type(a).__name__} to a HOST callback "
                                "(expected a host tensor or a number)")
    chips = [d.rank for d in plan.dispatches if not d.program.startswith(("@", "!"))]
    plan.dispatches.append(Dispatch(chips[-1] if chips else 0, f"!{name}", list(args)))


COLLECTIVES = ("allreduce", "broadcast", "barrier", "allgather", "reduce_scatter", "all_to_all", "all_to_all_v")
"""``pld.tensor.<name>`` a host orchestrator may call: one step on every rank, between its dispatches."""


def _host_collective(name: str) -> Callable[..., Any]:
    """``pld.tensor.<name>(...)`` in a host orchestrator: recorded as a ``@<name>`` step on every rank
    (window views and numbers as arguments, the keywords kept by name); returns its in-place operand."""

    def call(*args: Any, **kwargs: Any) -> Any:
        plan = current_plan(f"pld.tensor.{name}(...)")
        for a in (*args, *kwargs.values()):
            if isinstance(a, HostTensor):
                raise HostPlanError(f"pld.tensor.{name}: a host-level collective works on pld.window views, "
                                    f"not on the host tensor {a.name!r}")
        opts = {k: getattr(v, "value", v) for k, v in kwargs.items() if not isinstance(v, WindowView)}
        views = [a for a in args if isinstance(a, WindowView)] + [v for v in kwargs.values()
                                                                  if isinstance(v, WindowView)]  # fmt: skip
        nums = [a for a in args if not isinstance(a, WindowView)]
        for r in range(plan.world_size):
            plan.dispatches.append(Dispatch(r, f"@{name}", [*views, {"options": opts, "numbers": nums}]))
        if name == "all_to_all_v" and len(views) != 5:
            raise HostPlanError("pld.tensor.all_to_all_v(input, target, signal, send_counts, recv_counts): expected "
                                f"5 pld.window views, got {len(views)}")
        if name in ("allgather", "all_to_all", "all_to_all_v"):
            return views[1] if len(views) > 1 else views[0]
        return views[0] if views else None

    return call


def _host_create_tensor(shape: Any, dtype: Any = None, **kwargs: Any) -> HostTensor:
    """``pl.create_tensor(shape, dtype=)`` in a host orchestrator: a host intermediate (zeroed per call) that
    dispatches write and read like a parameter."""
    plan = current_plan("pl.create_tensor(...)")
    if dtype is None:
        raise HostPlanError("pl.create_tensor(shape, dtype=...): a host tensor needs its dtype")
    dims = _shape(resolve_dynamic(shape, plan.world_size), "pl.create_tensor")
    dt = _dtype_name(dtype)
    plan.locals.append((dims, dt))
    k = len(plan.locals) - 1
    return HostTensor(plan.params + k, f"create_tensor{k}", dims, dt)


def _host_range(*args: Any, **kwargs: Any) -> Iterator[int]:
    kwargs.pop("init_values", None)
    return iter(range(*(int(a) for a in args), *(int(v) for v in kwargs.values())))


@contextmanager
def recording(plan: HostPlan) -> Iterator[HostPlan]:
    """Record ``plan`` while the host orchestrator body runs."""
    calls: dict[str, Callable[..., Any]] = {n: _host_range for n in ("pl.range", "pl.parallel", "pl.unroll")}
    calls.update({f"pld.tensor.{n}": _host_collective(n) for n in COLLECTIVES})
    calls["pl.create_tensor"] = _host_create_tensor
    # upstream's full paths of the short forms pld.world_size / alloc_window_buffer / window (its 02-primitives.md)
    calls.update({"pld.system.world_size": world_size, "pld.tensor.alloc_window_buffer": alloc_window_buffer,
                  "pld.tensor.window": window})
    t1, t2 = HOST_TRACE.set(plan), HOST_CALLS.set(calls)
    try:
        yield plan
    finally:
        HOST_TRACE.reset(t1)
        HOST_CALLS.reset(t2)


def _located(exc: HostPlanError, fn: Callable[..., Any]) -> HostPlanError:
    """``exc`` with the orchestrator's line that raised it: ``file:line: message``."""
    code = getattr(fn, "__code__", None)
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code is code:
            line = tb.tb_lineno
        tb = tb.tb_next
    if code is None or line is None:
        return exc
    return HostPlanError(f"{code.co_filename}:{line}: error: {exc}")


def trace_host(fn: Callable[..., Any], names: list[str], args: list[Any], world_size: int,
               self_obj: Any = None) -> HostPlan:
    """Run the host orchestrator ``fn`` on stand-ins of ``args`` (and ``self_obj`` first, for a
    ``@pl.program`` method) and return its plan."""
    proxies: list[Any] = []
    for i, (n, a) in enumerate(zip(names, args, strict=True)):
        if isinstance(a, HostTensor):
            proxies.append(a)
        elif hasattr(a, "shape") and hasattr(a, "dtype"):
            dt = str(a.dtype).removeprefix("torch.")
            if dt not in PYPTO_OF:
                raise HostPlanError(f"parameter {n!r}: torch dtype {a.dtype} has no PyPTO dtype")
            proxies.append(HostTensor(i, n, tuple(int(d) for d in a.shape), PYPTO_OF[dt]))
        else:
            proxies.append(a)
    with recording(HostPlan(world_size, params=len(names))) as plan:
        try:
            fn(*proxies) if self_obj is None else fn(self_obj, *proxies)
        except HostPlanError as exc:
            raise _located(exc, fn) from None
    if not any(not d.program.startswith(("@", "!")) for d in plan.dispatches):
        raise HostPlanError(f"{getattr(fn, '__name__', 'the host orchestrator')} dispatched nothing "
                            "(expected calls such as per_rank(x[r], y[r], device=r))")
    from .host_order import cross_rank_order

    for d, after in zip(plan.dispatches, cross_rank_order(plan.dispatches, [d.outputs for d in plan.dispatches]),
                        strict=True):
        d.after = after
    return plan


def _tensor_annotation(name: str, ann: Any) -> Any:
    """The ``pl.Tensor[[...], dtype]`` of a host orchestrator parameter (unwrapping ``pl.Out``/``pl.InOut``)."""
    while getattr(ann, "kind", None) in ("Out", "InOut"):
        ann = ann.args[0]
    if getattr(ann, "kind", None) != "Tensor" or len(ann.args) < 2:
        raise HostPlanError(f"host orchestrator parameter {name!r}: expected a pl.Tensor[[...], dtype] annotation, "
                            f"got {ann!r}")
    return ann


def annotation_tensor(index: int, name: str, ann: Any, world_size: int,
                      bind: dict[str, int] | None = None) -> HostTensor:
    """The stand-in of a host orchestrator parameter from its annotation (``pl.Tensor[[NR, 1, 64],
    pl.FP32]``, maybe in ``pl.Out``/``pl.InOut``); a ``pl.dynamic`` extent takes its value in ``bind``
    (by name: the call's arguments, :func:`bind_dynamic_dims`), else the world size."""
    ann = _tensor_annotation(name, ann)
    values = bind or {}
    dims = tuple(int(d.value(lambda v: values.get(v.name, world_size))) if _is_dynamic(d) else int(d)
                 for d in ann.args[0])  # fmt: skip
    return HostTensor(index, name, dims, _dtype_name(ann.args[1]))


def has_dynamic_dims(anns: dict[str, Any], names: list[str]) -> bool:
    """True when a host parameter's annotation has a ``pl.dynamic`` extent."""
    return any(_is_dynamic(d) for n in names for d in _tensor_annotation(n, anns.get(n)).args[0])


def _named(d: Any) -> list[str]:
    """The names of the ``pl.dynamic`` dimensions an extent expression uses."""
    if not _is_dynamic(d):
        return []
    if not hasattr(d, "op"):
        return [d.name]
    return [*_named(d.lhs), *_named(d.rhs)]


def bind_dynamic_dims(names: list[str], anns: dict[str, Any], args: list[Any]) -> dict[str, int]:
    """Each ``pl.dynamic`` dimension of the host parameters bound to the call's tensors (upstream: "resolved
    when the program is invoked"): a bare ``M`` is its extent; ``M * 2`` with ``M`` otherwise unbound is
    solved from its extent (an affine expression in one unknown). Every extent is then checked."""
    pairs = []  # (parameter, axis, expression, extent)
    for n, a in zip(names, args, strict=True):
        ann = _tensor_annotation(n, anns.get(n))
        shape = getattr(a, "shape", None)
        if shape is None:
            raise HostPlanError(f"parameter {n!r}: expected a tensor, got {type(a).__name__}")
        if len(shape) != len(ann.args[0]):
            raise HostPlanError(f"parameter {n!r}: a tensor of rank {len(ann.args[0])} ({_dims_text(ann.args[0])}), "
                                f"got shape {list(shape)}")
        pairs += [(n, i, d, int(e)) for i, (d, e) in enumerate(zip(ann.args[0], shape, strict=True))]
    bound: dict[str, int] = {}
    for _n, _i, d, e in pairs:
        if _is_dynamic(d) and not hasattr(d, "op") and d.name not in bound:
            bound[d.name] = e
    for n, i, d, e in pairs:
        free = sorted(set(_named(d)) - set(bound))
        if len(free) == 1:
            bound[free[0]] = _solve(d, free[0], e, bound, f"parameter {n!r} dimension {i}")
    for n, i, d, e in pairs:
        if _is_dynamic(d) and set(_named(d)) <= set(bound):
            want = d.value(lambda v: bound[v.name])
        else:
            want = d if not _is_dynamic(d) else e
        if int(want) != e:
            raise HostPlanError(f"parameter {n!r} dimension {i}: {_dims_text([d])} is {want} "
                                f"({', '.join(f'{k}={v}' for k, v in sorted(bound.items()))}), the tensor has {e}")
    return bound


def _solve(d: Any, var: str, extent: int, bound: dict[str, int], what: str) -> int:
    """``var`` such that ``d`` is ``extent`` (``d`` affine in ``var``: ``a + b * var``)."""
    def at(x: int) -> int:
        return int(d.value(lambda v: x if v.name == var else bound[v.name]))

    a, b = at(0), at(1) - at(0)
    if b == 0 or (extent - a) % b:
        raise HostPlanError(f"{what}: no value of {var} makes {_dims_text([d])} equal {extent}")
    return (extent - a) // b


def _dims_text(dims: Any) -> str:
    return ", ".join(getattr(d, "name", str(d)) for d in dims)


class _Entry:
    """One function of a ``@pl.program`` as a dispatch target: ``self.chip_orch(..., device=r)``."""

    def __init__(self, program: Any, name: str):
        self.program, self.__name__ = program, name
        fn = program.func_ops[name]
        self.param_names = [a.name_hint or f"arg{i}" for i, a in enumerate(fn.body.block.args)]
        from pypto.dialects.enums import ParamDirection
        from pypto.dialects.program import param_directions

        self.output_params = [i for i, d in enumerate(param_directions(fn))
                              if d in (ParamDirection.Out, ParamDirection.InOut)]  # fmt: skip

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        bound = list(args) + [kwargs.pop(n) for n in self.param_names[len(args):] if n in kwargs]
        if kwargs or len(bound) != len(self.param_names):
            raise HostPlanError(f"self.{self.__name__}(...): expected the arguments ({', '.join(self.param_names)})")
        return bound

    def specialize(self, *samples: Any) -> Any:
        """The program this entry runs: the module without the host orchestrator and other entries."""
        return entry_only(_bound_to(self.program, self.__name__, samples), self.__name__)


def entry_only(program: Any, name: str) -> Any:
    """A copy of ``program`` with only entry ``name`` and the functions it reaches (no host orchestrator,
    no other Orchestration entry), named ``name``."""
    from pypto.dialects.enums import FunctionType
    from pypto.dialects.program import function_type

    prog = program.clone()
    prog.host_orchestrators = {}
    reached = _reachable(prog, name)
    for n, f in prog.func_ops.items():
        other_entry = n != name and function_type(f) is FunctionType.Orchestration
        if other_entry or n not in reached:
            f.detach()
            f.erase()
    prog.name = name
    return prog


def _reachable(program: Any, name: str) -> set[str]:
    """The functions ``name`` refers to (calls, or names in any op's symbol attribute), directly or not,
    and itself: a dispatched program keeps only these (another entry's kernels may keep their
    ``pl.dynamic`` shapes, which no dispatch binds)."""
    from xdsl.dialects.builtin import SymbolRefAttr

    seen, work = {name}, [name]
    while work:
        for op in program.func_ops[work.pop()].walk():
            for attr in (*op.properties.values(), *op.attributes.values()):
                callee = attr.root_reference.data if isinstance(attr, SymbolRefAttr) else None
                if callee is not None and callee not in seen and callee in program.func_ops:
                    seen.add(callee)
                    work.append(callee)
    return seen


def _bound_to(program: Any, name: str, samples: tuple[Any, ...]) -> Any:
    """``program`` parsed again with function ``name``'s ``pl.dynamic`` dimensions bound to the
    dispatched tensors' extents (and the kernels it calls to its arguments'), so kernels get static
    shapes, as a single-chip run specializes its entry; ``program`` itself when nothing is dynamic."""
    from pypto.dialects.types import DYNAMIC, TensorType
    from pypto.frontend.jit import torch_type
    from pypto.runtime.tensors import is_torch

    hook = getattr(program, "respecialize", None)
    if hook is None:
        return program
    types = {}
    for p, s in zip(program.func_ops[name].body.block.args, samples, strict=False):
        if p.name_hint and isinstance(p.type, TensorType) and DYNAMIC in p.type.get_shape() and is_torch(s):
            types[p.name_hint] = torch_type(s)
    return hook(name, types) if types else program


class ProgramSelf:
    """``self`` of a ``@pl.program`` HOST orchestrator run on the host: ``self.f(...)`` dispatches ``f``."""

    def __init__(self, program: Any):
        self._program = program
        self._entries: dict[str, _Entry] = {}

    def __getattr__(self, name: str) -> Any:
        if name in getattr(self._program, "sub_workers", {}):
            return lambda *args, **kwargs: sub_worker_call(name, args, kwargs)
        if name.startswith("_") or name not in self._program.func_ops:
            raise AttributeError(f"the program has no function {name!r}")
        entry = self._entries.setdefault(name, _Entry(self._program, name))
        return lambda *args, **kwargs: dispatch(entry, args, kwargs)
