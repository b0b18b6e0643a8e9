"""Task handles in Orchestration code: ``with pl.at(...) as t``, ``out, t = pl.submit(self.k, ...)``,
``pl.array.create(n, pl.TASK_ID)`` arrays (``arr[i] = t``, carried through ``pl.range(init_values=)``),
``pl.system.task_dummy(deps=[...])`` and ``deps=[...]``.

A handle is a compile-time label of one ``pl.at`` scope or ``pl.submit`` call (its task's call
carries it as ``pl.task_handle``); an array or a dummy is a :class:`TaskSet` of labels. ``deps=``
are resolved when the function is complete (a loop-carried array also holds what the body stores
into it on the previous iteration), into the ``pl.user_deps`` labels of the scope / call.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Operation

from pypto.dialects.enums import FunctionType
from pypto.dialects.program import EARLY_RESOLVE, MANUAL_DEP, set_call_dump_indices, set_task_links
from pypto.errors import InvalidOperationError, ParserSyntaxError, ParserTypeError, UnsupportedFeatureError

from .constexpr import evaluate
from .source import dotted

if TYPE_CHECKING:
    from .builder import FunctionBuilder


@dataclass(eq=False)
class TaskSet:
    """The task handles an array (or a dummy) may hold: labels stored into it, plus other sets
    (a loop-carried array: its init and what the body yields)."""

    labels: list[str] = field(default_factory=list)
    members: list[TaskSet] = field(default_factory=list)

    def resolve(self, seen: set[int] | None = None) -> list[str]:
        seen = set() if seen is None else seen
        if id(self) in seen:
            return []
        seen.add(id(self))
        out = list(self.labels)
        for m in self.members:
            out += [label for label in m.resolve(seen) if label not in out]
        return out


Dep = str | TaskSet
"""One ``deps=`` entry: a handle's label or a set."""


class TaskMixin:
    """Task-handle handling for :class:`FunctionBuilder`."""

    def new_task_handle(self: FunctionBuilder, name: str) -> str:
        """Bind ``name`` to a fresh task-handle label (``with pl.at(...) as name:``, ``_, name = pl.submit(...)``)."""
        label = name
        taken = set(self.task_handles.values())
        n = 1
        while label in taken:
            label, n = f"{name}_{n}", n + 1
        self.task_handles[name] = label
        self.task_arrays.pop(name, None)
        return label

    def is_task_name(self: FunctionBuilder, name: str) -> bool:
        return name in self.task_handles or name in self.task_arrays

    def task_array_create(self: FunctionBuilder, name: str, call: ast.Call) -> None:
        """``arr = pl.array.create(n, pl.TASK_ID)``: an array of task handles (a compile-time set of the
        scopes / submits stored into it; ``deps=[arr]`` waits for each)."""
        dtype = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "dtype"), None)
        if dtype is None or dotted(dtype) != "pl.TASK_ID":
            raise self.fail(
                UnsupportedFeatureError,
                "pl.array.create is supported for task handles only: pl.array.create(n, pl.TASK_ID)",
                call,
            )
        if self.kind is not FunctionType.Orchestration:
            raise self.fail(UnsupportedFeatureError, "pl.array.create of task handles belongs in Orchestration code", call)
        self.task_arrays[name] = TaskSet()
        self.task_handles.pop(name, None)

    def task_array_store(self: FunctionBuilder, target: ast.Subscript, value: ast.expr) -> None:
        """``arr[i] = t`` (a handle from ``pl.at(...) as t`` / ``pl.submit``): the task joins the array's set."""
        name = target.value.id  # type: ignore[attr-defined]
        if not isinstance(value, ast.Name) or value.id not in self.task_handles:
            raise self.fail(
                ParserTypeError,
                f"'{name}' holds task handles: store one bound by 'with pl.at(...) as t:' or '_, t = pl.submit(...)'",
                value,
            )
        label = self.task_handles[value.id]
        arr = self.task_arrays[name]
        if label not in arr.labels:
            arr.labels.append(label)

    def task_deps(self: FunctionBuilder, node: ast.expr, what: str = "pl.at") -> list[Dep]:
        """``deps=[t, arr]``: handles bound earlier and arrays / dummies of them."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail(ParserTypeError, f"{what} deps= takes a list of task handles, e.g. deps=[first]", node)
        deps: list[Dep] = []
        for e in node.elts:
            if isinstance(e, ast.Constant) and e.value is None:
                continue  # upstream skips None entries
            if isinstance(e, ast.Name) and e.id in self.task_arrays:
                deps.append(self.task_arrays[e.id])
            elif isinstance(e, ast.Name) and e.id in self.task_handles:
                deps.append(self.task_handles[e.id])
            else:
                raise self.fail(
                    ParserTypeError,
                    f"{what} deps=: '{ast.unparse(e)}' is not a task handle",
                    e,
                    hint="bind one first with 'with pl.at(...) as name:' or '_, name = pl.submit(...)'",
                )
        return deps

    def link_tasks(self: FunctionBuilder, op: Operation, handle: str | None, deps: list[Dep]) -> None:
        """Give ``op`` its handle now and its ``deps=`` when the function is complete."""
        set_task_links(op, handle, [])
        if deps:
            self.pending_deps.append((op, deps))

    def resolve_task_deps(self: FunctionBuilder) -> None:
        """Write every ``deps=`` as labels (arrays are complete once the whole body is read)."""
        for op, deps in self.pending_deps:
            labels: list[str] = []
            for d in deps:
                for label in [d] if isinstance(d, str) else d.resolve():
                    if label not in labels:
                        labels.append(label)
            set_task_links(op, None, labels)
        self.pending_deps = []

    def task_dummy(self: FunctionBuilder, name: str, call: ast.Call) -> None:
        """``b = pl.system.task_dummy(deps=[...])``: a handle ready once every dep is; waiting for it
        waits for those deps (no task of its own)."""
        if call.args or [k.arg for k in call.keywords] != ["deps"]:
            raise self.fail(InvalidOperationError, "pl.system.task_dummy takes one keyword argument: deps=[...]", call)
        if self.kind is not FunctionType.Orchestration:
            raise self.fail(UnsupportedFeatureError, "pl.system.task_dummy belongs in Orchestration code", call)
        deps = self.task_deps(call.keywords[0].value, "pl.system.task_dummy")
        dummy = TaskSet(labels=[d for d in deps if isinstance(d, str)], members=[d for d in deps if isinstance(d, TaskSet)])
        self.task_handles.pop(name, None)
        self.task_arrays[name] = dummy

    def submit(self: FunctionBuilder, target: ast.expr, call: ast.Call) -> None:
        """``result, tid = pl.submit(self.kernel, *args, deps=[...], dumps=[...], allow_early_resolve=...)``:
        the kernel call, and ``tid`` a task handle of its task."""
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[1], ast.Name)):
            raise self.fail(
                UnsupportedFeatureError, "unpack pl.submit into two names: 'result, tid = pl.submit(self.kernel, ...)'", target
            )
        if self.kind is not FunctionType.Orchestration:
            raise self.fail(UnsupportedFeatureError, "pl.submit belongs in Orchestration code", call)
        kernel = call.args[0] if call.args else None
        kpath = dotted(kernel) if kernel is not None else None
        if kpath is None or not kpath.startswith("self.") or kpath.count(".") != 1:
            raise self.fail(ParserSyntaxError, "pl.submit's first argument must be a kernel written self.<kernel>", kernel or call)
        deps: list[Dep] = []
        dumps: list[str] = []
        early = False
        for k in call.keywords:
            if k.arg == "deps":
                deps = self.task_deps(k.value, "pl.submit")
            elif k.arg == "dumps":
                if not isinstance(k.value, (ast.List, ast.Tuple)) or not all(isinstance(e, ast.Name) for e in k.value.elts):
                    raise self.fail(ParserTypeError, "pl.submit dumps= takes a list of tensor arguments", k.value)
                dumps = [e.id for e in k.value.elts]  # type: ignore[attr-defined]
            elif k.arg == "allow_early_resolve":
                early = evaluate(k.value, self.src.globals) if isinstance(k.value, ast.Constant) else None
                if not isinstance(early, bool):
                    raise self.fail(ParserTypeError, "pl.submit allow_early_resolve= takes True or False", k.value)
            else:
                raise self.fail(InvalidOperationError, f"pl.submit has no argument '{k.arg}'", k.value)
        inner = ast.copy_location(ast.Call(func=kernel, args=call.args[1:], keywords=[]), call)
        callee = self.program.callee(kpath[5:], inner, self)
        args = [self.value(a) for a in inner.args]
        res = self.emit_call(callee, args, inner, None)
        op = self.block.last_op
        assert isinstance(op, func.CallOp)
        if dumps:
            names = [a.id if isinstance(a, ast.Name) else None for a in inner.args]
            missing = [d for d in dumps if d not in names]
            if missing:
                raise self.fail(ParserTypeError, f"pl.submit dumps=: '{missing[0]}' is not a tensor argument of this submit", call)
            set_call_dump_indices(op, [i for i, n in enumerate(names) if n in dumps])
        if early:
            op.attributes[EARLY_RESOLVE] = UnitAttr()
        if self.manual_depth:
            op.attributes[MANUAL_DEP] = UnitAttr()
        tid = target.elts[1].id  # type: ignore[attr-defined]
        self.link_tasks(op, self.new_task_handle(tid), deps)
        results = res if isinstance(res, list) else ([] if res is None else [res])
        first = target.elts[0]
        names = self.target_names(first)
        if len(names) != len(results):
            raise self.fail(ParserTypeError, f"'{callee.sym_name.data}' gives {len(results)} results, unpacked into {len(names)} names", first)
        for n, v in zip(names, results, strict=True):
            self.bind(n, v)
