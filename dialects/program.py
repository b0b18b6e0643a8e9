"""The program layer: scopes (``pl.at``) and the function/parameter attributes.

A program is a named ``builtin.module``; its functions are ``func.func`` ops
carrying ``pl.func_type``, ``pl.level`` and ``pl.role``; parameters carry
``pl.dir`` (In, Out, InOut); calls between functions are ``func.call``. A
``with pl.at(...)`` scope is a ``pl.at`` op whose region yields the values the
code after the scope reads.

Selective args dump (``pl.dump_tag`` / ``dumps=``, docs/runtime.md): a kernel call's
marked arguments are the discardable ``pl.dump_vars`` attribute of its
``func.call`` (the argument positions, printed ``attrs={"dump_vars": [q, out]}``
in the DSL); a ``pl.at`` scope's are its ``dumps`` operands (the outer tensors,
printed ``pl.at(..., dumps=[q])``), which OutlineIncoreScopes turns into the
outlined call's ``pl.dump_vars``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    lazy_traits_def,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException

from .enums import (
    DEFAULT_LEVEL,
    DEFAULT_ROLE,
    ForKind,
    ForKindAttr,
    FunctionType,
    FunctionTypeAttr,
    Level,
    LevelAttr,
    ParamDirection,
    ParamDirectionAttr,
    Role,
    RoleAttr,
)
from .types import TensorType

FUNC_TYPE = "pl.func_type"
FUNC_LEVEL = "pl.level"
FUNC_ROLE = "pl.role"
PARAM_DIR = "pl.dir"
FOR_KIND = "pl.for_kind"
FOR_STAGE = "pl.stage"
CALL_DUMP_VARS = "pl.dump_vars"


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a ``pl.at`` body, handing values to the code after the scope."""

    name = "pl.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(AtOp)))

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[list(values)])


@irdl_op_definition
class AtOp(IRDLOperation):
    """``with pl.at(level=..., name_hint=...):`` -- a scope outlined later
    (CORE_GROUP scopes become InCore functions)."""

    name = "pl.at"
    dumps = var_operand_def()
    """The outer tensors a partial args dump keeps when the scope becomes a task (``dumps=``, ``pl.dump_tag``)."""
    level = prop_def(LevelAttr)
    name_hint = opt_prop_def(StringAttr)
    res = var_result_def()
    body = region_def("single_block")
    traits = traits_def(SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        level: Level,
        body: Region,
        result_types: list[Attribute],
        name_hint: str | None = None,
        dumps: Sequence[SSAValue] = (),
    ):
        props: dict[str, Attribute] = {"level": LevelAttr(level)}
        if name_hint is not None:
            props["name_hint"] = StringAttr(name_hint)
        super().__init__(operands=[list(dumps)], properties=props, regions=[body], result_types=[result_types])

    @property
    def scope_level(self) -> Level:
        return self.level.data

    @property
    def block(self) -> Block:
        return self.body.block

    def verify_(self) -> None:
        term = self.body.block.last_op
        if not isinstance(term, YieldOp):
            raise VerifyException("pl.at: the body must end with pl.yield")
        got = [v.type for v in term.values]
        want = [r.type for r in self.res]
        if got != want:
            raise VerifyException(f"pl.at: yields {len(got)} values of types {got}, expected the result types {want}")
        for v in self.dumps:
            if not isinstance(v.type, TensorType):
                raise VerifyException(f"pl.at: dumps= lists a value of type {v.type}, expected tensors only")


# ---- function attributes -----------------------------------------------------


def function_type(f: func.FuncOp) -> FunctionType:
    a = f.attributes.get(FUNC_TYPE)
    return a.data if isinstance(a, FunctionTypeAttr) else FunctionType.Opaque


def function_level(f: func.FuncOp) -> Level | None:
    a = f.attributes.get(FUNC_LEVEL)
    return a.data if isinstance(a, LevelAttr) else None


def function_role(f: func.FuncOp) -> Role | None:
    a = f.attributes.get(FUNC_ROLE)
    return a.data if isinstance(a, RoleAttr) else None


def set_function_type(f: func.FuncOp, kind: FunctionType, level: Level | None = None, role: Role | None = None) -> None:
    """Set a function's kind, with the level/role it implies unless given."""
    f.attributes[FUNC_TYPE] = FunctionTypeAttr(kind)
    level = level or DEFAULT_LEVEL.get(kind)
    role = role or DEFAULT_ROLE.get(kind)
    for key, val in ((FUNC_LEVEL, level and LevelAttr(level)), (FUNC_ROLE, role and RoleAttr(role))):
        if val:
            f.attributes[key] = val
        else:
            f.attributes.pop(key, None)


def param_direction(f: func.FuncOp, index: int) -> ParamDirection:
    if f.arg_attrs is None:
        return ParamDirection.In
    d = f.arg_attrs.data[index].data.get(PARAM_DIR)
    return d.data if isinstance(d, ParamDirectionAttr) else ParamDirection.In


def param_directions(f: func.FuncOp) -> list[ParamDirection]:
    return [param_direction(f, i) for i in range(len(f.args))]


def set_param_directions(f: func.FuncOp, dirs: list[ParamDirection]) -> None:
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr

    f.arg_attrs = ArrayAttr(
        DictionaryAttr({} if d is ParamDirection.In else {PARAM_DIR: ParamDirectionAttr(d)}) for d in dirs
    )


# ---- selective args dump (on func.call) ------------------------------------


def call_dump_indices(call: func.CallOp) -> tuple[int, ...]:
    """The argument positions ``call`` marks for a partial args dump (``pl.dump_vars``), ascending."""
    a = call.attributes.get(CALL_DUMP_VARS)
    if not isinstance(a, ArrayAttr):
        return ()
    return tuple(sorted({d.value.data for d in a.data if isinstance(d, IntegerAttr)}))


def set_call_dump_indices(call: func.CallOp, indices: Iterable[int]) -> None:
    """Mark these argument positions of ``call`` (none: remove the attribute)."""
    marks = sorted({int(i) for i in indices})
    if not marks:
        call.attributes.pop(CALL_DUMP_VARS, None)
    else:
        call.attributes[CALL_DUMP_VARS] = ArrayAttr(IntegerAttr(i, i64) for i in marks)


def mark_dump_values(call: func.CallOp, values: Iterable[SSAValue]) -> None:
    """Add every argument position of ``call`` whose value is one of ``values`` (by identity)."""
    wanted = set(values)
    extra = [i for i, a in enumerate(call.arguments) if a in wanted]
    if extra:
        set_call_dump_indices(call, [*call_dump_indices(call), *extra])


# ---- task handles (``with pl.at(...) as t``, ``deps=[t]``) ---------------------

TASK_HANDLE = "pl.task_handle"
"""The label ``with pl.at(...) as <name>:`` gives the scope, then its task's call."""
USER_DEPS = "pl.user_deps"
"""The labels of the task handles a ``pl.at(..., deps=[...])`` scope (then its call) waits for."""


def task_handle(op: Operation) -> str | None:
    """The task-handle label of a scope or call (None when it has none)."""
    a = op.attributes.get(TASK_HANDLE)
    return a.data if isinstance(a, StringAttr) else None


def user_deps(op: Operation) -> list[str]:
    """The task-handle labels a scope or call explicitly waits for."""
    a = op.attributes.get(USER_DEPS)
    return [d.data for d in a.data if isinstance(d, StringAttr)] if isinstance(a, ArrayAttr) else []


def set_task_links(op: Operation, handle: str | None, deps: Sequence[str]) -> None:
    """Give ``op`` a task-handle label and/or explicit dependencies (copied from scope to call)."""
    if handle is not None:
        op.attributes[TASK_HANDLE] = StringAttr(handle)
    if deps:
        op.attributes[USER_DEPS] = ArrayAttr(StringAttr(d) for d in deps)


NO_DEP_ARGS = "pl.no_dep_args"
"""On a scope: the base names of the outer tensors ``pl.at(..., no_dep_args=[t])`` keeps out of dependency tracking."""
NO_DEP_INDICES = "pl.no_dep_indices"
"""On a call: the argument positions dependency tracking skips (``no_dep_args``, or all under ``pl.manual_scope``)."""
MANUAL_DEP = "pl.manual_dep"
"""On a scope / call inside ``with pl.manual_scope():``: no dependency is inferred, only ``deps=`` edges."""
EARLY_RESOLVE = "pl.allow_early_resolve"
"""On a scope / call: upstream's producer-side scheduling hint (timing only)."""


def no_dep_indices(op: Operation) -> frozenset[int]:
    """The argument positions of a call that dependency tracking skips."""
    if MANUAL_DEP in op.attributes:
        return frozenset(range(len(op.operands)))
    a = op.attributes.get(NO_DEP_INDICES)
    return (
        frozenset(d.value.data for d in a.data if isinstance(d, IntegerAttr))
        if isinstance(a, ArrayAttr)
        else frozenset()
    )


# ---- loop kinds (on scf.for) --------------------------------------------------


def for_kind(op: scf.ForOp) -> ForKind:
    a = op.attributes.get(FOR_KIND)
    return a.data if isinstance(a, ForKindAttr) else ForKind.Sequential


def for_stage(op: scf.ForOp) -> int | None:
    a = op.attributes.get(FOR_STAGE)
    return a.value.data if isinstance(a, IntegerAttr) else None


def set_for_kind(op: scf.ForOp, kind: ForKind, stage: int | None = None) -> None:
    if kind is ForKind.Sequential:
        op.attributes.pop(FOR_KIND, None)
    else:
        op.attributes[FOR_KIND] = ForKindAttr(kind)
    if stage is None:
        op.attributes.pop(FOR_STAGE, None)
    else:
        op.attributes[FOR_STAGE] = IntegerAttr(stage, i64)
