"""Verification after each pass: ``VerificationLevel.{NONE, BASIC, ROUNDTRIP}``.

- ``NONE``: nothing.
- ``BASIC`` (default): the xDSL verifiers of every op (which re-run the pl
  ops' type inference).
- ``ROUNDTRIP``: BASIC, then print the program as DSL text, parse it back with
  ``pypto.language.parse``, print again and compare the two texts.

The default comes from ``PYPTO_VERIFY_LEVEL`` (``none``/``basic``/``roundtrip``
or ``0``/``1``/``2``), else BASIC. A failure raises :class:`VerificationError`
naming the pass and the op (its name and DSL location).
"""

from __future__ import annotations

import os
from enum import IntEnum

from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator
from xdsl.utils.exceptions import VerifyException

from pypto.core.op_verify import has_trait, verify_alone, verify_op, verify_tree
from pypto.diagnostics import op_span
from pypto.errors import Error, InvalidArgumentError

ENV_VAR = "PYPTO_VERIFY_LEVEL"


class VerificationLevel(IntEnum):
    """How much is checked after each pass."""

    NONE = 0
    BASIC = 1
    ROUNDTRIP = 2


def parse_verification_level(value: VerificationLevel | int | str | None) -> VerificationLevel:
    """An explicit level, else ``PYPTO_VERIFY_LEVEL``, else BASIC."""
    if value is None:
        value = os.environ.get(ENV_VAR) or VerificationLevel.BASIC
    if isinstance(value, VerificationLevel):
        return value
    if isinstance(value, int) or str(value).strip().isdigit():
        return VerificationLevel(int(value))
    try:
        return VerificationLevel[str(value).strip().upper()]
    except KeyError:
        raise InvalidArgumentError(f"unknown verification level {value!r}; expected none, basic or roundtrip") from None


class VerificationError(Error):
    """The IR failed verification after a pass; names the pass and the op."""

    def __init__(self, pass_name: str, detail: str, op: Operation | None = None, op_name: str | None = None):
        self.pass_name = pass_name
        self.detail = detail
        self.op = op
        self.op_name = op_name or (op.name if op is not None else None)
        span = op_span(op) if op is not None else None
        self.location = str(span) if span is not None else None
        where = ""
        if self.op_name:
            where = f" at op '{self.op_name}'" + (f" ({self.location})" if self.location else "")
        super().__init__(f"IR verification failed after {pass_name}{where}: {detail}")


def find_failing_op(op: Operation) -> tuple[Operation, VerifyException] | None:
    """The innermost op (first in program order) whose own verification
    fails, with its error; None if every op verifies on its own."""
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                found = find_failing_op(child)
                if found is not None:
                    return found
    try:
        verify_alone(op)
    except VerifyException as e:
        return op, e
    return None


def verify_basic(module: ModuleOp, pass_name: str) -> None:
    """Run the verifiers; raise VerificationError at the failing op."""
    try:
        verify_tree(module)
    except VerifyException as e:
        found = find_failing_op(module)
        op, err = found if found is not None else (None, e)
        raise VerificationError(pass_name, str(err), op) from e


def _ops_in_order(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if op is not module]


def _op_at_line(module: ModuleOp, line: int) -> Operation | None:
    """The first op of a parsed module located at ``line`` (or the last before it)."""
    best: Operation | None = None
    for op in _ops_in_order(module):
        span = op_span(op)
        if span is None:
            continue
        if span.line == line:
            return op
        if span.line < line:
            best = op
    return best


def verify_roundtrip(module: ModuleOp, pass_name: str, explicit: bool = False) -> None:
    """Print -> parse -> print; the two texts must be equal."""
    from pypto.core.dsl_printer import print_program
    from pypto.frontend.parser import parse

    first = print_program(module, explicit=explicit)
    filename = f"<roundtrip after {pass_name}>"
    try:
        reparsed = parse(first, filename=filename)
    except Exception as e:  # noqa: BLE001 - any parse failure is a roundtrip failure
        line = getattr(getattr(e, "location", None), "line", None)
        op_name = _line_op_name(first, line)
        raise VerificationError(
            pass_name, f"the printed IR does not parse: {type(e).__name__}: {e}", op_name=op_name
        ) from e
    second = print_program(reparsed.module, explicit=explicit)
    if first == second:
        return
    a, b = first.splitlines(), second.splitlines()
    n = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    parsed_op = _op_at_line(reparsed.module, n + 1)
    original = _matching_op(module, reparsed.module, parsed_op)
    got_a = a[n].strip() if n < len(a) else "<end>"
    got_b = b[n].strip() if n < len(b) else "<end>"
    raise VerificationError(
        pass_name,
        f"print -> parse -> print changed line {n + 1}: {got_a!r} became {got_b!r}",
        original,
        op_name=parsed_op.name if parsed_op is not None else None,
    )


def _matching_op(module: ModuleOp, reparsed: ModuleOp, op: Operation | None) -> Operation | None:
    """The op of ``module`` at the same walk position as ``op`` in ``reparsed``."""
    if op is None:
        return None
    ops, rops = _ops_in_order(module), _ops_in_order(reparsed)
    i = next((k for k, o in enumerate(rops) if o is op), None)
    if i is None or i >= len(ops) or ops[i].name != op.name:
        return None
    return ops[i]


def _line_op_name(text: str, line: int | None) -> str | None:
    """The ``pl.x.y`` call on a line of printed DSL, if any."""
    if line is None:
        return None
    lines = text.splitlines()
    if not 0 < line <= len(lines):
        return None
    import re

    m = re.search(r"\b(pl\.[\w.]+)\(", lines[line - 1])
    return m.group(1) if m else None


def verify_after_pass(module: ModuleOp, pass_name: str, level: VerificationLevel) -> None:
    """The checks of ``level`` after pass ``pass_name``."""
    if level is VerificationLevel.NONE:
        return
    verify_basic(module, pass_name)
    if level is VerificationLevel.ROUNDTRIP:
        verify_roundtrip(module, pass_name)


class PassVerifier:
    """The verification after each pass of one pipeline run, done only where the IR changed.

    After each check it keeps every op's :func:`op_key` (what its own verifier reads: its place,
    operands and their types, properties, attributes, result types, successors, and the shape of its
    regions). After the next pass, when the module's top-level ops are the same ones with the same
    properties and attributes (names and signatures), BASIC verifies, each on its own
    (``verify_nested_ops=False``), only the ops whose key changed or that are new, the users of
    their results, and the ancestors of both (whose verifiers read their bodies: terminators,
    yields, isolation). Any other op's verifiers read nothing that changed, except the symbols it
    names: when a top-level op was added, removed, renamed or re-typed, every op holding a symbol
    reference (the calls) is verified too. The first check, and every ROUNDTRIP check, is the full check of
    :func:`verify_after_pass`, except after a pass that left every key as it was: then nothing
    is checked, at any level (ROUNDTRIP would print and parse the text it checked last time).
    A failure is reported by the full check (the failing op, its location)."""

    def __init__(self, level: VerificationLevel):
        self.level = level
        self._keys: dict[Operation, tuple[object, ...]] | None = None
        self.checked: list[Operation] = []
        """The ops verified on their own by the last incremental check (for tests)."""

    def __call__(self, module: ModuleOp, pass_name: str) -> None:
        if self.level is VerificationLevel.NONE:
            return
        keys = op_keys(module)
        old = self._keys
        if old is not None and keys == old:
            self.checked = []
            return  # the IR verified last time, unchanged
        if old is not None and self.level is VerificationLevel.BASIC:
            same_top = _same_top_level(module, old, keys)
            todo, isolation = _changed_with_ancestors(keys, old, module if same_top else None)
            if not same_top:
                seen = set(todo)
                todo += [op for op, key in keys.items() if op not in seen and _names_a_symbol(key)]
            self.checked = todo
            try:
                for op in todo:
                    verify_shallow(op)
                for op, isolated in isolation:
                    check_isolation(op, isolated)
            except VerifyException as e:
                verify_basic(module, pass_name)  # locates the failing op
                raise VerificationError(pass_name, str(e)) from e
        else:
            verify_after_pass(module, pass_name, self.level)
        self._keys = keys


def op_key(op: Operation, children: tuple[object, ...]) -> tuple[object, ...]:
    """What ``op``'s own verifiers read, as objects compared by identity or value (xDSL attributes
    are immutable; xDSL replaces an op's operand tuple on every operand update; passes retype values
    in place, so the types are read too). ``children``: its regions' shape (blocks, their argument
    types, their ops). (``_operands``, ``_type``, ``_successors``: xDSL's fields, read without its
    property layers; xDSL is pinned.)"""
    operands = op._operands  # noqa: SLF001
    return (
        op.parent,
        op._next_op is None,  # noqa: SLF001
        operands,
        tuple([v._type for v in operands]),  # noqa: SLF001
        tuple(op.properties.items()),
        tuple(op.attributes.items()),
        tuple([r._type for r in op.results]),  # noqa: SLF001
        op._successors,  # noqa: SLF001
        children,
    )


def op_keys(module: Operation) -> dict[Operation, tuple[object, ...]]:
    """:func:`op_key` of every op under ``module`` and of ``module`` (a hand-rolled walk: xDSL's
    generator-based ``walk`` costs several times more per op)."""
    keys: dict[Operation, tuple[object, ...]] = {}
    stack = [module]
    while stack:
        o = stack.pop()
        shape: list[object] = []
        for region in o.regions:
            for block in region.blocks:
                ops: list[Operation] = []
                inner = block._first_op  # noqa: SLF001
                while inner is not None:
                    ops.append(inner)
                    inner = inner._next_op  # noqa: SLF001
                stack.extend(ops)
                shape.append((region, block, tuple([a._type for a in block._args]), tuple(ops)))  # noqa: SLF001
        keys[o] = op_key(o, tuple(shape))
    return keys


_HEAD = slice(4, 6)  # properties, attributes
_OWN = slice(4, 7)  # properties, attributes, result types: what a terminator reads of its parent


def _same_top_level(
    module: ModuleOp, old: dict[Operation, tuple[object, ...]], new: dict[Operation, tuple[object, ...]]
) -> bool:
    """Whether the module holds the same top-level ops as before, with the same properties and
    attributes (names, signatures)."""
    if old.get(module) != new[module]:
        return False
    for op in module.body.block.ops:
        before = old.get(op)
        if before is None or before[_HEAD] != new[op][_HEAD]:
            return False
    return True


def _names_a_symbol(key: tuple[object, ...]) -> bool:
    """Whether an op's key holds a symbol reference (a call's callee: its verifier reads that symbol)."""
    return any(isinstance(v, SymbolRefAttr) for items in key[_HEAD] for _, v in items)  # type: ignore[union-attr]


def _changed_with_ancestors(
    new: dict[Operation, tuple[object, ...]], old: dict[Operation, tuple[object, ...]], same_module: ModuleOp | None
) -> tuple[list[Operation], list[tuple[Operation, Operation]]]:
    """The ops to verify on their own: those that are new or whose key changed, the users of their
    results (a verifier may read an operand's defining op, e.g. a constant's value), the terminators
    of an op whose properties, attributes or result types changed (``func.return`` reads its
    function's type), and the ancestors of all
    these, each once -- except an ancestor that only reads its body through ``IsolatedFromAbove``
    (:func:`_reads_only_isolation`: a ``func.func`` whose own key is unchanged; the module when its
    key and its top-level ops' names and signatures are unchanged, ``same_module``). For those, the
    second list pairs each changed op (or, for a changed op with regions, each op nested in it) with
    its nearest isolated ancestor, when that ancestor is not verified itself: what the ancestor's
    isolation check would read of it (:func:`check_isolation`)."""
    todo: dict[Operation, None] = {}
    skipped: set[Operation] = set()

    def add(o: Operation | None) -> None:
        while o is not None and o not in todo and o not in skipped:
            if old.get(o) == new[o] and _reads_only_isolation(o, same_module):
                skipped.add(o)
            else:
                todo[o] = None
            o = o.parent_op()

    direct: dict[Operation, None] = {}
    for op, key in new.items():
        before = old.get(op)
        if before != key:
            direct[op] = None
            for r in op.results:
                for use in r.uses:
                    direct[use.operation] = None
            if before is not None and before[_OWN] != key[_OWN]:  # its properties, attributes, result types
                for region in op.regions:
                    for block in region.blocks:
                        last = block._last_op  # noqa: SLF001
                        if last is not None and has_trait(type(last), IsTerminator):
                            direct[last] = None
    for op in direct:
        todo[op] = None
    for op in direct:
        add(op.parent_op())
    isolation: list[tuple[Operation, Operation]] = []
    if skipped:
        for op in direct:
            isolated = _nearest_isolated(op)
            if isolated in skipped:
                isolation.append((op, isolated))
            if op.regions and not _is_isolated(type(op)):  # its body may have moved in whole
                isolation += [(inner, isolated) for inner in _nested_to_isolated(op) if isolated in skipped]
    return list(todo), isolation


def _is_isolated(cls: type[Operation]) -> bool:
    return has_trait(cls, IsolatedFromAbove)


def _reads_only_isolation(op: Operation, same_module: ModuleOp | None) -> bool:
    """Whether ``op``'s own verifiers read nothing of its body beyond its key except through
    ``IsolatedFromAbove``: ``func.func`` (its entry block's argument types are in its key), and the
    module whose top-level ops kept their names and signatures (its symbol table)."""
    return type(op) is FuncOp or op is same_module


def _nearest_isolated(op: Operation) -> Operation | None:
    parent = op.parent_op()
    while parent is not None and not _is_isolated(type(parent)):
        parent = parent.parent_op()
    return parent


def _nested_to_isolated(op: Operation) -> list[Operation]:
    """The ops nested in ``op``, not descending into isolated ops (they check their own bodies)."""
    out: list[Operation] = []
    stack = [op]
    while stack:
        o = stack.pop()
        for region in o.regions:
            for block in region.blocks:
                for inner in block.ops:
                    out.append(inner)
                    if inner.regions and not _is_isolated(type(inner)):
                        stack.append(inner)
    return out


def check_isolation(op: Operation, isolated: Operation) -> None:
    """``IsolatedFromAbove``'s check of ``isolated`` (xDSL's), for the operands of one op inside it."""
    for operand in op.operands:
        if not isolated.is_ancestor(operand.owner) or operand.owner is isolated:
            raise VerifyException(f"Operation using value defined out of its IsolatedFromAbove parent: {op}")


def verify_shallow(op: Operation) -> None:
    """``op``'s own verifiers (not its nested ops'), and the block checks xDSL makes only when it
    verifies the parent: each nested op's parent pointer, no empty single block that needs a
    terminator."""
    verify_op(op)
    for region in op.regions:
        for block in region.blocks:
            if block.parent is not region:
                raise VerifyException("Parent pointer of block does not refer to containing region")
            if block.first_op is None and len(region.blocks) == 1 and not has_trait(type(op), NoTerminator):
                raise VerifyException(
                    f"Operation {op.name} contains empty block in single-block region that expects at least a terminator"
                )
