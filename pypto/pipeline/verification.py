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

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import VerifyException

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
        op.verify(verify_nested_ops=False)
    except VerifyException as e:
        return op, e
    return None


def verify_basic(module: ModuleOp, pass_name: str) -> None:
    """Run the verifiers; raise VerificationError at the failing op."""
    try:
        module.verify()
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

    After a pass that left the IR as it was last verified (every top-level op's
    :func:`~pypto.utils.ir_fingerprint.fingerprint` unchanged) nothing is checked, at any level
    (the text ROUNDTRIP would print is the one that round-tripped last time). When only the
    bodies of some top-level ops changed (the same ops, in the same order, with the same
    properties and attributes: names and signatures), BASIC verifies those ops and the module
    itself (not its other ops): an op's verifiers read its own subtree and the signatures of the
    symbols it names, which did not change. Anything else (an op added, removed, renamed or
    re-typed; ROUNDTRIP after any change) is the full check of :func:`verify_after_pass`. A failure is reported
    by the full check (the failing op, its location)."""

    def __init__(self, level: VerificationLevel):
        self.level = level
        self._ops: tuple[Operation, ...] | None = None
        self._prints: list[list[object]] = []

    def __call__(self, module: ModuleOp, pass_name: str) -> None:
        if self.level is VerificationLevel.NONE:
            return
        from pypto.utils.ir_fingerprint import fingerprint

        ops = tuple(module.body.block.ops)
        prints = [fingerprint(op) for op in ops]
        if ops == self._ops and prints == self._prints:
            return  # the IR is the one verified last (at any level: its printed text is the same too)
        if ops == self._ops and self.level is VerificationLevel.BASIC:
            changed = [(op, old) for op, old, new in zip(ops, self._prints, prints, strict=True) if old != new]
            if not changed:
                return
            if all(_same_head(op, old) for op, old in changed):
                try:
                    module.verify(verify_nested_ops=False)
                    for op, _ in changed:
                        op.verify()
                except VerifyException as e:
                    verify_basic(module, pass_name)  # locates the failing op
                    raise VerificationError(pass_name, str(e)) from e
                self._ops, self._prints = ops, prints
                return
        verify_after_pass(module, pass_name, self.level)
        self._ops, self._prints = ops, prints


def _same_head(op: Operation, old: list[object]) -> bool:
    """Whether ``op``'s properties and attributes are the ones its old fingerprint recorded (the
    fingerprint starts with the op, its location, its operands, its properties, its attributes)."""
    n = len(op.properties) + len(op.attributes)
    return old[3 : 3 + n] == [*op.properties.items(), *op.attributes.items()]
