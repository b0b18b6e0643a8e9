"""The MLIR text form: one printer and one parser for every tool.

The printer keeps DSL names (``%a__ssa_v0``) and makes every SSA name unique
in its function, so text printed from any IR parses back; locations
(``loc("kernel.py":3:5)``) are printed by default, as with
``mlir-opt --mlir-print-debuginfo``.
"""

from __future__ import annotations

from collections.abc import Sequence
from io import StringIO
from typing import Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from pypto.utils.xdsl_threads import serialise_implicit_builder

from .context import make_context

serialise_implicit_builder()  # the parser adds scf.yield through ImplicitBuilder: threads parse at once

MAX_INTEGER_WIDTH = 16777215
"""The widest integer type (``i16777215``), as in MLIR."""


class CheckedParser(Parser):
    """xDSL's Parser, refusing a value used by the op whose region defines it.

    ``scf.for %i = %c0 to %c4 step %i {...}``: xDSL takes ``step %i`` as a forward reference and
    resolves it when the region defines ``%i``, before the op using it exists; the op is left holding
    a placeholder no pass can handle (a verifier's ``ValueError``). MLIR says ``use of undeclared SSA
    value``, at the use: so does this parser (a ``ParseError``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._forward_spans: dict[SSAValue, Span] = {}

    def resolve_operand(self, operand: UnresolvedOperand, type: Any) -> SSAValue:
        """xDSL's resolution; a new forward reference remembers where it was used."""
        value = super().resolve_operand(operand, type)
        if isinstance(value, ForwardDeclaredValue):
            self._forward_spans.setdefault(value, operand.span)
        return value

    def parse_operation(self) -> Operation:
        """xDSL's; an attribute the op's text builds that does not verify (``arith.constant
        99999999999999999999 : i64``: xDSL's VerifyException names no place) is a ParseError at the op."""
        start = self._current_token.span.start
        try:
            return super().parse_operation()
        except VerifyException as e:
            raise ParseError(self._line_span(start), str(e)) from None

    def parse_optional_attribute(self) -> Attribute | None:
        """xDSL's; an attribute that does not verify is a ParseError at it, as in :meth:`parse_operation`."""
        start = self._current_token.span.start
        try:
            return super().parse_optional_attribute()
        except VerifyException as e:
            raise ParseError(self._line_span(start), str(e)) from None

    def _parse_optional_integer_or_float_type(self) -> Attribute | None:
        """xDSL's; an integer type wider than MLIR's limit (``i99999999999``: xDSL computed its value range,
        a number of that many bits, and never finished) is a ParseError at it, in MLIR's words."""
        token = self._current_token
        match = self._builtin_integer_type_regex.match(token.text) if token.kind == MLIRTokenKind.BARE_IDENT else None
        if match is not None and (len(match.group(1)) > 8 or int(match.group(1)) > MAX_INTEGER_WIDTH):
            raise ParseError(token.span, f"integer bitwidth is limited to {MAX_INTEGER_WIDTH} bits")
        return super()._parse_optional_integer_or_float_type()

    def _parse_optional_builtin_attr(self) -> Attribute | None:
        """xDSL's; a builtin literal whose value its type cannot hold (``dense<99999999999999999999> :
        tensor<2xi8>``, ``0x7fffffffffffffffffff : f32``: xDSL raised a ValueError or an OverflowError, an
        internal error) is a ParseError at it."""
        start = self._current_token.span.start
        try:
            return super()._parse_optional_builtin_attr()
        except ValueError as e:
            raise ParseError(self._line_span(start), str(e)) from None
        except OverflowError as e:
            raise ParseError(self._line_span(start), f"the literal does not fit its type ({e})") from None

    def _parse_dialect_type_or_attribute_body(
        self, attr_name: str, is_type: bool, is_opaque: bool, starting_opaque_pos: int | None
    ) -> Attribute:
        """xDSL's; parameters in a number the attribute does not take (``!pl.ptr<f32>``: xDSL's construction
        raised ``zip() argument 2 is longer than argument 1``) are a ParseError at them, naming the count."""
        start = self._current_token.span.start
        try:
            return super()._parse_dialect_type_or_attribute_body(attr_name, is_type, is_opaque, starting_opaque_pos)
        except ValueError:
            attr_def = self.ctx.get_optional_type(attr_name) if is_type else self.ctx.get_optional_attr(attr_name)
            if attr_def is None or not issubclass(attr_def, ParametrizedAttribute):
                raise
            expected = [name for name, _ in attr_def.get_irdl_definition().parameters]
            self._resume_from(start)
            given = attr_def.parse_parameters(self)
            if len(given) == len(expected):
                raise
            sigil = "!" if is_type else "#"
            takes = f"{len(expected)} ({', '.join(expected)})" if expected else "no parameters"
            raise ParseError(
                Span(start, self._current_token.span.start, self.lexer.input),
                f"{sigil}{attr_name} takes {takes}, got {len(given)}",
            ) from None

    def _parse_alias_def(self) -> None:
        """xDSL's; an alias whose value does not verify is a ParseError at it, as in :meth:`parse_operation`."""
        start = self._current_token.span.start
        try:
            super()._parse_alias_def()
        except VerifyException as e:
            raise ParseError(self._line_span(start), str(e)) from None

    def _line_span(self, start: int) -> Span:
        """From ``start`` to the end of its line (the parser's position, if that comes first)."""
        content = self.lexer.input.content
        newline = content.find("\n" if isinstance(content, str) else b"\n", start)
        end = min(self._current_token.span.start, newline if newline >= 0 else len(content))
        return Span(start, max(end, start + 1), self.lexer.input)

    def _register_ssa_definition(self, name: str, values: Sequence[SSAValue], span: Span) -> None:
        """A forward reference this definition resolves must already be used by an op: one that is not
        is held by an op still being parsed, whose region holds the definition (not in scope there)."""
        for value in self.forward_ssa_references.get(name, {}).values():
            if not value.uses:
                use = self._forward_spans.get(value, span)
                raise ParseError(use, f"use of undeclared SSA value %{name} (defined only inside a region of its user)")
        super()._register_ssa_definition(name, values, span)


class UniqueNamePrinter(Printer):
    """A Printer whose SSA names never collide (``%t``, ``%t_1``, ``%t_1_1``)."""

    def _taken(self) -> set[str]:
        """Every name given so far (``_ssa_values``' values, kept as a set: linear printing)."""
        taken: set[str] | None = self.__dict__.get("_taken_names")
        if taken is None:
            taken = self.__dict__["_taken_names"] = set(self._ssa_values.values())
        return taken

    def print_ssa_value(self, value: SSAValue) -> str:
        if value in self._ssa_values:
            name = self._ssa_values[value]
        elif value.name_hint:
            taken = self._taken()
            name = hint = value.name_hint
            if name in taken:
                # ``hint_1`` .. ``hint_{n-1}`` were taken when ``hint_n`` was given (names are never given
                # back), so the search goes on from there: linear in the values of one hint, not quadratic
                suffixes: dict[str, int] = self.__dict__.setdefault("_hint_suffixes", {})
                n = suffixes.get(hint, 0)
                while name in taken:
                    n += 1
                    name = f"{hint}_{n}"
                suffixes[hint] = n
            self._ssa_values[value] = name
            taken.add(name)
        else:
            name = super().print_ssa_value(value)
            self._taken().add(name)
            return name
        self.print_string(f"%{name}")
        return name

    def _get_new_valid_name_id(self) -> str:
        taken = self._taken()
        while True:
            name = super()._get_new_valid_name_id()
            if name not in taken:
                return name


def print_mlir(op: Operation, *, generic: bool = False, debuginfo: bool = True) -> str:
    """Print an op (normally the program's module) as MLIR text."""
    out = StringIO()
    printer = UniqueNamePrinter(stream=out, print_generic_format=generic, print_debuginfo=debuginfo)
    printer.print_op(op)
    out.write("\n")
    return out.getvalue()


def parse_mlir(text: str, filename: str = "<mlir>") -> ModuleOp:
    """Parse MLIR text with the PyPTO dialects loaded; raises xDSL ParseError."""
    return CheckedParser(make_context(), text, filename).parse_module()
