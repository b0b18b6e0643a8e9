"""xDSL's verification of an op, with what xDSL works out again for every op kept per op class.

:func:`verify_op` is ``op.verify(verify_nested_ops=False)`` and :func:`verify_tree` is ``op.verify()``:
the same checks, in a cheaper form. xDSL's generic IRDL verifier (``OpDef.verify``) recomputes, for
every op it checks, how its operands, results, regions and successors split among their definitions
(four ``verify_variadic_size`` calls, each scanning the definition's options), reads each operand
through its Python accessor, and looks each trait up by scanning the class's trait list. For an op
class with no variadic, optional or attribute-sized definition (most of them: ``arith.constant``,
``func.func``, the ``pl`` tile ops without index lists) those splits are fixed, so here the counts are
compared directly and each constraint is checked as xDSL checks it (the same constraint objects, the
same arguments, the same order, one ``VerificationContext``); the class's own verifier
(``custom_verify``, read from the closure ``irdl_op_definition`` made; xDSL is pinned) runs after, as
in xDSL. Any other class runs xDSL's own ``verify_``.

On any failure xDSL's own path runs again, so the exception raised (its type and message) is xDSL's;
if xDSL's path accepts what this one rejected, this one's exception is raised (a stricter answer, never
a laxer one). ``test_op_verify`` checks both against each other on valid and broken ops.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import ErasedSSAValue, Operation
from xdsl.irdl.operations import (
    IRDLOperation,
    OpDef,
    OptAttributeDef,
    OptPropertyDef,
    VariadicDef,
    VerificationContext,
    irdl_op_verify_regions,
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
        defs = (*op_def.operands, *op_def.results, *op_def.regions, *op_def.successors)
        if generated and not op_def.options and not any(isinstance(d, VariadicDef) for _, d in defs):
            plan = _fixed_arity_verifier(op_def, custom)
    _PLANS[cls] = plan
    return plan


def _fixed_arity_verifier(op_def: OpDef, custom: Callable[[Operation], None] | None) -> _Plan:
    """``OpDef.verify`` (then the class's own verifier) for a definition with no variadic parts."""
    operands = tuple(d.constr for _, d in op_def.operands)
    results = tuple(d.constr for _, d in op_def.results)
    n_regions, n_successors = len(op_def.regions), len(op_def.successors)
    properties = tuple((name, d.constr, isinstance(d, OptPropertyDef)) for name, d in op_def.properties.items())
    attributes = tuple((name, d.constr, isinstance(d, OptAttributeDef)) for name, d in op_def.attributes.items())
    known_properties = frozenset(op_def.properties)
    traits = tuple(op_def.traits)

    def verify(op: Operation) -> None:
        values, res = op._operands, op.results  # noqa: SLF001 -- the tuple behind ``operands``
        if len(values) != len(operands) or len(res) != len(results):
            raise VerifyException(f"'{op.name}': wrong number of operands or results")
        if len(op.regions) != n_regions or len(op.successors) != n_successors:
            raise VerifyException(f"'{op.name}': wrong number of regions or successors")
        ctx = VerificationContext()
        for value, constr in zip(values, operands, strict=True):
            constr.verify((value.type,), ctx)
        for value, constr in zip(res, results, strict=True):
            constr.verify((value.type,), ctx)
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


__all__ = ["has_trait", "verify_op", "verify_tree"]
