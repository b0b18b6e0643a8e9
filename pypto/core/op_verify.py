"""xDSL's verification of an op, with what xDSL works out again for every op kept per op class.

:func:`verify_op` is ``op.verify(verify_nested_ops=False)`` and :func:`verify_tree` is ``op.verify()``:
the same checks, in a cheaper form. xDSL's generic IRDL verifier (``OpDef.verify``) recomputes, for
every op it checks, how its operands, results, regions and successors split among their definitions
(four ``verify_variadic_size`` calls, each scanning the definition's options), reads each operand
through its Python accessor, and looks each trait up by scanning the class's trait list. Here the
split is worked out once per op class (every definition single; one variadic or optional definition
taking what the others leave; or the sizes of an ``AttrSized*Segments`` attribute, which xDSL's own
``verify_variadic_attr_size`` checks first), and each constraint is checked as xDSL checks it (the same
constraint objects, the same arguments, one ``VerificationContext``, the same order); the class's own
verifier (``custom_verify``, read from the closure ``irdl_op_definition`` made; xDSL is pinned) runs
after, as in xDSL. Any other layout (several variadic definitions without a sizes attribute, variadic
regions or successors, other options) runs xDSL's own ``verify_``.

On any failure xDSL's own path runs again, so the exception raised (its type and message) is xDSL's;
if xDSL's path accepts what this one rejected, this one's exception is raised (a stricter answer, never
a laxer one). ``test_op_verify`` checks both against each other on valid and broken ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.dialects import scf
from xdsl.ir import ErasedSSAValue, Operation
from xdsl.irdl.operations import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    IRDLOperation,
    IRDLOption,
    OpDef,
    OptAttributeDef,
    OptionalDef,
    OptPropertyDef,
    VariadicDef,
    VarIRConstruct,
    VerificationContext,
    get_attr_size_option,
    irdl_op_verify_regions,
    verify_variadic_attr_size,
)
from xdsl.traits import IsTerminator, NoTerminator, OpTrait
from xdsl.utils.exceptions import VerifyException

_TRAITS: dict[tuple[type[Operation], type[OpTrait]], bool] = {}


def has_trait(cls: type[Operation], trait: type[OpTrait]) -> bool:
    """``cls.has_trait(trait)``, kept per class (xDSL's lookup scans the class's traits every time)."""
    found = _TRAITS.get((cls, trait))
    if found is None:
        found = _TRAITS[cls, trait] = cls.has_trait(trait)
    return found


_Plan = Callable[[Operation], None]
_PLANS: dict[type[Operation], _Plan | None] = {}


def _custom_verify(cls: type[IRDLOperation]) -> tuple[bool, Callable[[Operation], None] | None]:
    """Whether ``cls.verify_`` is the one ``irdl_op_definition`` made, and the class's own verifier it
    calls after ``OpDef.verify`` (None: none)."""
    fn = cls.verify_
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None)
    if code is None or cells is None or "op_def" not in code.co_freevars:
        return False, None
    names = code.co_freevars
    if (
        set(names) - {"op_def", "custom_verify"}
        or cells[names.index("op_def")].cell_contents is not cls.get_irdl_definition()
    ):
        return False, None
    custom = cells[names.index("custom_verify")].cell_contents if "custom_verify" in names else None
    return True, custom


def _plan(cls: type[Operation]) -> _Plan | None:
    """The fast ``verify_`` of an op class, None when it must run xDSL's own."""
    if cls in _PLANS:
        return _PLANS[cls]
    plan: _Plan | None = None
    if issubclass(cls, IRDLOperation):
        op_def = cls.get_irdl_definition()
        generated, custom = _custom_verify(cls)
        if generated:
            plan = _verifier(op_def, custom)
    _PLANS[cls] = plan
    return plan


_Split = Callable[[Operation, tuple[object, ...]], list[tuple[object, ...]]]
"""An op and its operands (or results) -> the values of each definition, in order."""


def _split(
    defs: list[tuple[str, Any]], options: list[IRDLOption], construct: VarIRConstruct, op_def: OpDef
) -> _Split | None:
    """How the operands (or results) of an op of this definition split among ``defs``, as xDSL splits
    them (its count checks included): every definition single; or one variadic (or optional) one, which
    takes what the others leave; or sizes from an ``AttrSized*Segments`` option (xDSL's own check of
    that attribute, ``verify_variadic_attr_size``, runs first). None: any other layout (xDSL's path)."""
    n = len(defs)
    variadic = [i for i, (_, d) in enumerate(defs) if isinstance(d, VariadicDef)]
    attr_option = get_attr_size_option(construct)
    sized = [o for o in options if isinstance(o, attr_option)]
    if sized:
        option = sized[0]

        def by_attribute(op: Operation, values: tuple[object, ...]) -> list[tuple[object, ...]]:
            verify_variadic_attr_size(op, op_def, construct, option)
            out, at = [], 0
            for size in option.container(op)[option.attribute_name].get_values():  # type: ignore[attr-defined]
                out.append(values[at : at + size])
                at += size
            return out

        return by_attribute
    if not variadic:

        def fixed(op: Operation, values: tuple[object, ...]) -> list[tuple[object, ...]]:
            if len(values) != n:
                raise VerifyException(f"'{op.name}': expected {n} values, got {len(values)}")
            return [(v,) for v in values]

        return fixed
    if len(variadic) > 1:
        return None
    k, optional = variadic[0], isinstance(defs[variadic[0]][1], OptionalDef)

    def one_variadic(op: Operation, values: tuple[object, ...]) -> list[tuple[object, ...]]:
        extra = len(values) - (n - 1)
        if extra < 0 or (optional and extra > 1):
            raise VerifyException(f"'{op.name}': {len(values)} values for {n} definitions")
        return [(v,) for v in values[:k]] + [values[k : k + extra]] + [(v,) for v in values[k + extra :]]

    return one_variadic


def _verifier(op_def: OpDef, custom: Callable[[Operation], None] | None) -> _Plan | None:
    """``OpDef.verify`` (then the class's own verifier) for a definition whose operands and results
    split as :func:`_split` can, and whose regions and successors are all single; None otherwise."""
    operand_options = [o for o in op_def.options if isinstance(o, AttrSizedOperandSegments)]
    result_options = [o for o in op_def.options if isinstance(o, AttrSizedResultSegments)]
    if len(operand_options) + len(result_options) != len(op_def.options):
        return None
    if any(isinstance(d, VariadicDef) for _, d in (*op_def.regions, *op_def.successors)):
        return None
    split_operands = _split(op_def.operands, operand_options, VarIRConstruct.OPERAND, op_def)
    split_results = _split(op_def.results, result_options, VarIRConstruct.RESULT, op_def)
    if split_operands is None or split_results is None:
        return None
    operands = tuple(d.constr for _, d in op_def.operands)
    results = tuple(d.constr for _, d in op_def.results)
    n_regions, n_successors = len(op_def.regions), len(op_def.successors)
    properties = tuple((name, d.constr, isinstance(d, OptPropertyDef)) for name, d in op_def.properties.items())
    attributes = tuple((name, d.constr, isinstance(d, OptAttributeDef)) for name, d in op_def.attributes.items())
    known_properties = frozenset(op_def.properties)
    traits = tuple(op_def.traits)

    def verify(op: Operation) -> None:
        ctx = VerificationContext()
        groups = split_operands(op, op._operands)  # noqa: SLF001 -- the tuple behind ``operands``
        for values, constr in zip(groups, operands, strict=True):
            constr.verify(tuple([v.type for v in values]), ctx)  # type: ignore[attr-defined]
        groups = split_results(op, tuple(op.results))
        for values, constr in zip(groups, results, strict=True):
            constr.verify(tuple([v.type for v in values]), ctx)  # type: ignore[attr-defined]
        if len(op.regions) != n_regions or len(op.successors) != n_successors:
            raise VerifyException(f"'{op.name}': wrong number of regions or successors")
        if n_regions:
            irdl_op_verify_regions(op, op_def, ctx)
        props = op.properties
        for name, constr, optional in properties:
            if name in props:
                constr.verify(props[name], ctx)
            elif not optional:
                raise VerifyException(f"property '{name}' expected in operation '{op.name}'")
        for name in props:
            if name not in known_properties:
                raise VerifyException(f"property '{name}' is not defined by the operation '{op.name}'")
        attrs = op.attributes
        for name, constr, optional in attributes:
            if name in attrs:
                constr.verify(attrs[name], ctx)
            elif not optional:
                raise VerifyException(f"attribute '{name}' expected in operation '{op.name}'")
        for trait in traits:
            trait.verify(op)
        if custom is not None:
            custom(op)

    return verify


def _verify_op(op: Operation) -> None:
    """``Operation.verify(verify_nested_ops=False)``'s checks (xDSL's code), with the fast ``verify_``."""
    for operand in op._operands:  # noqa: SLF001
        if isinstance(operand, ErasedSSAValue):
            raise ValueError("Erased SSA value is used by the operation")
    parent_block = op.parent
    parent_region = None if parent_block is None else parent_block.parent
    if op.successors:
        if parent_block is None or parent_region is None:
            raise VerifyException(f"Operation {op.name} with block successors does not belong to a block or a region")
        if parent_block.last_op is not op:
            raise VerifyException(f"Operation {op.name} with block successors must terminate its parent block")
        for succ in op.successors:
            if succ.parent != parent_block.parent:
                raise VerifyException(f"Operation {op.name} is branching to a block of a different region")
    if parent_block is not None and parent_region is not None and parent_block.last_op is op:
        blocks = len(parent_region.blocks)
        if blocks == 1:
            parent_op = parent_region.parent
            if (
                parent_op is not None
                and not has_trait(type(parent_op), NoTerminator)
                and not has_trait(type(op), IsTerminator)
            ):
                raise VerifyException(
                    f"Operation {op.name} terminates block in single-block region but is not a terminator"
                )
        elif blocks > 1 and not has_trait(type(op), IsTerminator):
            raise VerifyException(f"Operation {op.name} terminates block in multi-block region but is not a terminator")
    plan = _plan(type(op))
    if plan is None:
        op.verify_()
    else:
        plan(op)
    if isinstance(op, scf.IfOp):
        _verify_if_yields(op)


def _verify_if_yields(op: scf.IfOp) -> None:
    """What xDSL 0.74's ``scf.if`` leaves unchecked (MLIR checks it): an ``scf.if`` with results has an
    else region, and each region yields values of its result types. Without it a wrong yield was taken
    and a pass crashed on it (simplify: ``Erased SSA value is used``)."""
    want = [r.type for r in op.results]
    for which, region in (("then", op.true_region), ("else", op.false_region)):
        if not region.blocks:
            if want:
                raise VerifyException("'scf.if' op must have an else region when it returns values")
            continue
        term = region.blocks.first.last_op if region.blocks.first is not None else None
        if isinstance(term, scf.YieldOp):
            from pypto.dialects.op_base import same_kind_shape_dtype  # noqa: PLC0415 - dialects import core

            got = [v.type for v in term.operands]
            if len(got) != len(want) or not all(map(same_kind_shape_dtype, got, want)):  # up to MemRef and view
                raise VerifyException(
                    f"'scf.if' op {which} region yields ({', '.join(map(str, got))}) but the op returns "
                    f"({', '.join(map(str, want))})"
                )


def verify_op(op: Operation) -> None:
    """``op.verify(verify_nested_ops=False)``, faster (the module docstring); xDSL's exception on failure."""
    try:
        _verify_op(op)
    except Exception:
        op.verify(verify_nested_ops=False)  # raises xDSL's own exception for it
        raise


def _verify_blocks(op: Operation) -> None:
    """The checks xDSL's ``Region.verify`` / ``Block.verify`` make of ``op``'s regions (not of their ops)."""
    for region in op.regions:
        for block in region.blocks:
            if block.parent is not region:
                raise ValueError("Parent pointer of block does not refer to containing region")
            if block.first_op is None:
                if len(region.blocks) == 1 and not has_trait(type(op), NoTerminator):
                    raise VerifyException(
                        f"Operation {op.name} contains empty block in single-block region that expects at least a terminator"
                    )
                continue
            for inner in block.ops:
                if inner.parent is not block:
                    raise ValueError("Parent pointer of operation does not refer to containing region")


def verify_tree(root: Operation) -> None:
    """``root.verify()`` (``root`` and every op nested in it), faster; xDSL's exception on failure."""
    try:
        stack = [root]
        while stack:
            op = stack.pop()
            _verify_blocks(op)
            _verify_op(op)
            for region in op.regions:
                for block in region.blocks:
                    stack.extend(block.ops)
    except Exception:
        root.verify()  # raises xDSL's own exception
        raise


def verify_alone(op: Operation) -> None:
    """:func:`verify_op` (``op.verify(verify_nested_ops=False)``) and xDSL's check of ``op``'s empty blocks (a single block
    that needs a terminator and holds no op), which xDSL runs only while verifying the block: every check
    whose failure is located at ``op``. Raises xDSL's VerifyException."""
    verify_op(op)
    for region in op.regions:
        for block in region.blocks:
            if not block.ops:
                block.verify()


__all__ = ["has_trait", "verify_alone", "verify_op", "verify_tree"]
