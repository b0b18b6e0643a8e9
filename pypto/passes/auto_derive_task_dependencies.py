"""AutoDeriveTaskDependencies (pass 39): in every Orchestration function, each
kernel call is a task; compute which earlier tasks each one must wait for.

Tasks are the ``func.call`` ops of the function (nested loops and ifs
included) numbered 0, 1, ... in program order. A task reads its ``In`` and
``InOut`` tensor arguments and writes its ``Out`` and ``InOut`` ones (the
directions come from DeriveCallDirections' ``pl.arg_directions`` when present,
else from the callee's ``pl.dir``). Task *j* depends on an earlier task *i*
when

- *j* reads a tensor *i* wrote last (read after write), or
- *j* writes a tensor *i* wrote last (write after write), or
- *j* writes a tensor *i* read since its last write (write after read).

Two values are the same tensor when their MemRefs name the same DDR buffer
(after InitMemRef a call's result carries the MemRef of the ``Out`` argument
the callee writes); without MemRefs, a call's *k*-th tensor result is the
tensor of its *k*-th ``Out``/``InOut`` argument (NormalizeReturnOrder's
order), and other values are told apart by SSA identity.

Recorded as discardable attributes on each call:

- ``pl.task_id = <n> : i64`` -- the task's number;
- ``pl.task_deps = [<i>, ...]`` -- ``ArrayAttr`` of ``i64`` task numbers it
  depends on, ascending (empty when none).

A call outlined from ``with pl.at(...) as t:`` carries the handle label ``t``
(``pl.task_handle``); one from ``pl.at(..., deps=[t])`` (``pl.user_deps``) also
depends on the latest earlier task labelled ``t``: explicit edges are added to
the derived ones, not instead of them (upstream's ``deps=`` semantics). They are also listed in
``pl.explicit_deps`` (which may name the task itself or a later call: a loop-carried handle
of an earlier iteration); the runtime resolves them to run-time tasks. The
arguments of ``pl.no_dep_indices`` (``no_dep_args=``), and all of a call's
arguments under ``pl.manual_dep`` (``pl.manual_scope``), take no part in the
derivation.

Program order is static: a call inside a loop is one task whose dependencies
are on the calls textually before it (cross-iteration ordering is the
runtime's, which serialises writers of one tensor).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import SSAValue

from pypto.core.analysis.calls import call_directions
from pypto.core.analysis.functions import calls_in, functions_by_name
from pypto.core.analysis.memref import memref_of
from pypto.dialects.enums import FunctionType, ParamDirection
from pypto.dialects.program import function_type, no_dep_indices, param_directions, task_handle, user_deps
from pypto.dialects.types import TensorType

from .base import PyPTOPass
from .registry import register_pass

TASK_ID = "pl.task_id"
TASK_DEPS = "pl.task_deps"
EXPLICIT_DEPS = "pl.explicit_deps"
"""The tasks of ``pl.task_deps`` named by ``deps=`` (handles), which may include the task itself
(an earlier iteration's instance) or a later call of a loop body."""


class _Tensors:
    """Tensor identities: DDR buffer name, else an alias-resolved SSA value."""

    def __init__(self) -> None:
        self.alias: dict[int, object] = {}

    def key(self, v: SSAValue) -> object:
        m = memref_of(v.type)
        if m is not None:
            return ("buf", m.base.data)
        return self.alias.get(id(v), ("ssa", id(v)))

    def same_as(self, v: SSAValue, key: object) -> None:
        if memref_of(v.type) is None:
            self.alias[id(v)] = key


def derive_function(f: func.FuncOp, funcs: dict[str, func.FuncOp]) -> list[list[int]]:
    """Annotate the calls of one function; returns each task's dependencies."""
    tensors = _Tensors()
    last_writer: dict[object, int] = {}
    readers: dict[object, set[int]] = {}
    all_deps: list[list[int]] = []
    calls = list(calls_in(f, funcs))
    # Every labelled task, whatever its position: a loop-carried handle may name a call later in the
    # loop body, or the call itself (its instance of an earlier iteration).
    handles = {label: i for i, (op, _) in enumerate(calls) if (label := task_handle(op)) is not None}
    task = 0
    for op, callee in calls:
        dirs = call_directions(op) or param_directions(callee)
        deps: set[int] = set()
        reads: list[object] = []
        writes: list[object] = []
        untracked = no_dep_indices(op)
        for i, (v, d) in enumerate(zip(op.arguments, dirs, strict=False)):
            if not isinstance(v.type, TensorType) or i in untracked:
                continue
            k = tensors.key(v)
            if d in (ParamDirection.In, ParamDirection.InOut):
                reads.append(k)
            if d in (ParamDirection.Out, ParamDirection.InOut):
                writes.append(k)
        for k in reads:
            if k in last_writer:
                deps.add(last_writer[k])
        for k in writes:
            if k in last_writer:
                deps.add(last_writer[k])
            deps.update(readers.get(k, set()))
        explicit = sorted({handles[label] for label in user_deps(op) if label in handles})
        deps.update(i for i in explicit if i < task)
        deps.discard(task)
        for k in reads:
            readers.setdefault(k, set()).add(task)
        for k in writes:
            last_writer[k] = task
            readers[k] = set()
        out_keys = [tensors.key(v) for v, d in zip(op.arguments, dirs, strict=False)
                    if isinstance(v.type, TensorType) and d in (ParamDirection.Out, ParamDirection.InOut)]
        tensor_results = [r for r in op.results if isinstance(r.type, TensorType)]
        for r, k in zip(tensor_results, out_keys, strict=False):
            tensors.same_as(r, k)
        ordered = sorted(deps)
        op.attributes[TASK_ID] = IntegerAttr(task, i64)
        op.attributes[TASK_DEPS] = ArrayAttr([IntegerAttr(i, i64) for i in ordered])
        if explicit:
            op.attributes[EXPLICIT_DEPS] = ArrayAttr([IntegerAttr(i, i64) for i in explicit])
        all_deps.append(ordered)
        task += 1
    return all_deps


def derive_dependencies(module: ModuleOp) -> dict[str, list[list[int]]]:
    """Annotate every Orchestration function; returns name -> per-task deps."""
    funcs = functions_by_name(module)
    return {
        name: derive_function(f, funcs)
        for name, f in funcs.items()
        if function_type(f) is FunctionType.Orchestration
    }


@register_pass
@dataclass(frozen=True)
class AutoDeriveTaskDependencies(PyPTOPass):
    """``pl.task_id`` / ``pl.task_deps`` on the kernel calls of Orchestration functions."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        derive_dependencies(op)
