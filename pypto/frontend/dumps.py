"""Selective args dump in the DSL: ``pl.dump_tag(t)`` and ``pl.at(..., dumps=[t])``.

Upstream's two surfaces (its docs/en/dev/03-runtime-dfx.md, "Selective tensor dump"):

- ``pl.dump_tag(t)``, a statement in an Orchestration (or Inline, or untyped) function: every
  *later* kernel call or ``pl.at`` scope that consumes that exact value dumps it. Tracked by
  value, not name: ``t = self.k(t)`` makes a new, untagged ``t``. A loop that carries ``t``
  carries the tag to the value its body reads.
- ``dumps=[t, ...]`` on ``pl.at(...)``: the tensors that scope's task dumps; each must be a tensor
  the scope's body reads or writes.

A plain ``self.k(...)`` call takes no ``dumps=`` (upstream's rule: tag the tensor instead); its
marks are printed and read back as ``attrs={"dump_vars": [t, ...]}``, naming its arguments.
The IR forms are in :mod:`pypto.dialects.program` (``pl.dump_vars``, ``AtOp.dumps``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.ir import Block, SSAValue

from pypto.dialects.enums import FunctionType, Level
from pypto.dialects.op_base import describe_type
from pypto.dialects.types import TensorType
from pypto.errors import ParserSyntaxError, ParserTypeError, UndefinedVariableError

if TYPE_CHECKING:
    from .builder import FunctionBuilder

TAGGABLE = (FunctionType.Orchestration, FunctionType.Inline, FunctionType.Opaque)
"""Function kinds whose body may hold ``pl.dump_tag`` (an untyped function becomes the Orchestration
when its scopes are outlined); kernel bodies have no task arguments to mark."""

DUMP_VARS_KEY = "dump_vars"


def _is_inside(v: SSAValue, block: Block) -> bool:
    owner = v.owner
    b = owner if isinstance(owner, Block) else owner.parent_block()
    while b is not None:
        if b is block:
            return True
        parent = b.parent_op()
        b = parent.parent_block() if parent is not None else None
    return False


def captured(block: Block) -> list[SSAValue]:
    """The values defined outside ``block`` that its ops read, in first-use order."""
    seen: dict[SSAValue, None] = {}
    for op in block.walk():
        for v in op.operands:
            if v not in seen and not _is_inside(v, block):
                seen[v] = None
    return list(seen)


class DumpMixin:
    """``pl.dump_tag`` and ``dumps=`` for :class:`FunctionBuilder`."""

    dump_tagged: dict[SSAValue, None]

    def dump_tag_stmt(self: FunctionBuilder, call: ast.Call, stmt: ast.stmt) -> None:
        """``pl.dump_tag(t)``: tag the tensor value ``t`` is bound to now."""
        if self.kind not in TAGGABLE:
            raise self.fail(
                ParserSyntaxError,
                f"pl.dump_tag() is only valid inside an Orchestration or Inline function, not in the "
                f"{self.kind.value} function '{self.fdef.name}'",
                stmt,
                hint="tag the tensor in the Orchestration function whose kernel calls receive it",
            )
        if self.at_depth:
            raise self.fail(
                ParserSyntaxError,
                "pl.dump_tag() inside a pl.at scope: the scope's body becomes a kernel",
                stmt,
                hint="tag the tensor before the scope, or write pl.at(..., dumps=[t])",
            )
        if len(call.args) != 1 or call.keywords:
            raise self.fail(
                ParserSyntaxError,
                "pl.dump_tag() takes exactly one positional argument (no keywords)",
                call,
                hint="use: pl.dump_tag(tensor_var)",
            )
        arg = call.args[0]
        if not isinstance(arg, ast.Name):
            raise self.fail(
                ParserSyntaxError,
                "pl.dump_tag() argument must be a bare variable name",
                arg,
                hint="write pl.dump_tag(q), q a tensor bound in this function",
            )
        self.dump_tagged[self.dump_tensor(arg, "pl.dump_tag() argument")] = None

    def dump_tensor(self: FunctionBuilder, node: ast.Name, what: str) -> SSAValue:
        """The tensor value a dump list names (located errors otherwise)."""
        v = self.scope.lookup(node.id)
        if v is None:
            raise self.fail(
                UndefinedVariableError,
                f"{what} '{node.id}' is not defined at this point",
                node,
                hint="tag a tensor after it is bound (a parameter or an earlier assignment)",
            )
        if not isinstance(v.type, TensorType):
            raise self.fail(
                ParserTypeError,
                f"{what} '{node.id}' has type {describe_type(v.type)}, expected a tensor",
                node,
                hint="only tensors can be dumped selectively (scalars are dumped at enable_dump_args=2)",
            )
        return v

    def dump_list(self: FunctionBuilder, node: ast.expr, what: str) -> list[tuple[SSAValue, ast.Name]]:
        """``[t, u]``: each entry's tensor value and its node (entries are bare names)."""
        if not isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail(ParserTypeError, f"{what} must be a list of tensor variables", node,
                            hint="write dumps=[x, y]")  # fmt: skip
        out: list[tuple[SSAValue, ast.Name]] = []
        for elt in node.elts:
            if not isinstance(elt, ast.Name):
                raise self.fail(ParserTypeError, f"{what} entries must be tensor variables, got '{ast.unparse(elt)}'",
                                elt, hint="write dumps=[x, y]")  # fmt: skip
            out.append((self.dump_tensor(elt, f"{what} entry"), elt))
        return out

    def call_dump_marks(self: FunctionBuilder, op: func.CallOp, node: ast.Call, attrs: ast.expr | None) -> list[int]:
        """The argument positions of a kernel call a partial dump keeps: its arguments tagged by
        ``pl.dump_tag`` and those its ``attrs={"dump_vars": [...]}`` names (the printed form)."""
        listed: set[SSAValue] = set()
        if isinstance(attrs, ast.Dict):
            for k, v in zip(attrs.keys, attrs.values, strict=True):
                if isinstance(k, ast.Constant) and k.value == DUMP_VARS_KEY:
                    for val, elt in self.dump_list(v, 'attrs["dump_vars"]'):
                        if val not in op.arguments:
                            raise self.fail(
                                ParserTypeError,
                                f"attrs[\"dump_vars\"] entry '{elt.id}' is not an argument of this call",
                                elt,
                            )
                        listed.add(val)
        if self.at_depth:
            return []  # a call inside a kernel body is no task
        marked = listed | set(self.dump_tagged)
        return [i for i, a in enumerate(op.arguments) if a in marked]

    def at_dumps(self: FunctionBuilder, node: ast.expr | None, block: Block, level: Level) -> list[SSAValue]:
        """A ``pl.at`` scope's dumps: its ``dumps=`` list (each a tensor the body uses) and the tagged
        tensors the body uses. Only a CORE_GROUP scope becomes a task."""
        if level is not Level.CORE_GROUP:
            if node is not None:
                raise self.fail(
                    ParserTypeError,
                    f"pl.at dumps= needs level=pl.Level.CORE_GROUP (the scope that becomes a task), not {level.value}",
                    node,
                )
            return []
        caps = captured(block)
        out: dict[SSAValue, None] = {}
        if node is not None:
            for v, elt in self.dump_list(node, "pl.at dumps="):
                if v not in caps:
                    raise self.fail(
                        ParserTypeError,
                        f"pl.at dumps= entry '{elt.id}' is not used in this scope",
                        elt,
                        hint="list tensors the scope's body reads or writes",
                    )
                out[v] = None
        if not self.at_depth:
            for v in caps:
                if v in self.dump_tagged:
                    out[v] = None
        return list(out)

    def carry_dump_tags(self: FunctionBuilder, inits: list[SSAValue], carried: list[SSAValue]) -> None:
        """A loop's carried value is tagged when its initial value is."""
        for i, c in zip(inits, carried, strict=False):
            if i in self.dump_tagged:
                self.dump_tagged[c] = None
