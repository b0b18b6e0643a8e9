"""Syntax highlighting for the IR-trace report: Pygments tokens as compact class runs.

Each distinct line is tokenised once (Pygments' Python lexer for DSL dumps, our
:class:`~.lexers.MLIRLexer` for MLIR and ``.pto``, Pygments' C++ lexer for kernels)
and encoded as a short string of runs ``<class letter><length>``, e.g. ``"K3_1N1"``;
``_`` is plain text. The viewer turns the runs of a line into ``<span class="hX">``
only when it shows that line.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from pygments.lexer import Lexer
from pygments.lexers.c_cpp import CppLexer
from pygments.lexers.python import PythonLexer
from pygments.token import (
    Comment,
    Keyword,
    Literal,
    Name,
    Number,
    Operator,
    String,
    Token,
    _TokenType,  # type: ignore[attr-defined]
)

from .lexers import MLIRLexer

PLAIN = "_"
# Token types (and their subtypes) -> class letter; the first match wins, most specific first.
CLASSES: tuple[tuple[_TokenType, str], ...] = (
    (Comment.Preproc, "P"),
    (Comment, "M"),
    (String, "S"),
    (Number, "N"),
    (Literal, "N"),
    (Keyword.Type, "T"),
    (Keyword.Constant, "K"),
    (Keyword, "K"),
    (Operator.Word, "K"),
    (Name.Builtin, "B"),
    (Name.Builtin.Pseudo, "B"),
    (Name.Function, "F"),
    (Name.Class, "C"),
    (Name.Decorator, "D"),
    (Name.Variable, "V"),
    (Name.Attribute, "A"),
    (Name.Label, "F"),
)
LEXERS = {"py": PythonLexer, "mlir": MLIRLexer, "cpp": CppLexer}


def class_of(ttype: _TokenType, cache: dict[_TokenType, str] = {}) -> str:  # noqa: B006 - a memo
    """The class letter of a Pygments token type (``_`` when not coloured)."""
    letter = cache.get(ttype)
    if letter is None:
        letter = next((c for t, c in CLASSES if ttype in t), PLAIN)
        cache[ttype] = letter
    return letter


def _lexer(fmt: str) -> Lexer:
    return LEXERS[fmt](stripnl=False, ensurenl=False, tabsize=0)


def _encode(runs: list[list[object]]) -> str:
    return "".join(f"{c}{n}" for c, n in runs)


def _split_runs(tokens: Iterable[tuple[_TokenType, str]]) -> Iterator[str]:
    """The encoded runs of each line of a token stream (lines end at ``\\n``)."""
    runs: list[list[object]] = []

    def add(letter: str, n: int) -> None:
        if n == 0:
            return
        if runs and runs[-1][0] == letter:
            runs[-1][1] = int(runs[-1][1]) + n  # type: ignore[call-overload]
        else:
            runs.append([letter, n])

    for ttype, value in tokens:
        letter = class_of(ttype) if ttype is not Token.Text.Whitespace else PLAIN
        parts = value.split("\n")
        for k, part in enumerate(parts):
            if k:
                yield _encode(runs)
                runs = []
            add(letter if part.strip() else PLAIN, len(part))
    yield _encode(runs)


_DIGIT = re.compile(r"\d")


def shape(line: str) -> str:
    """``line`` with every digit made ``0``: same length, same token classes (numbers stay
    numbers, names stay names), so lines that differ only in counters are tokenised once."""
    return _DIGIT.sub("0", line)


def tokenize_lines(lines: list[str], fmt: str) -> list[str]:
    """The encoded runs of each of ``lines`` (no line may contain a newline)."""
    if not lines:
        return []
    shapes = list(dict.fromkeys(shape(line) for line in lines))
    runs = list(_split_runs(_lexer(fmt).get_tokens("\n".join(shapes))))
    if len(runs) != len(shapes) or any(_length(r) != len(s) for r, s in zip(runs, shapes, strict=True)):
        # A lexer that changed the text (tabs, odd line breaks): tokenise line by line.
        runs = [_one(s, fmt) for s in shapes]
    by_shape = dict(zip(shapes, runs, strict=True))
    return [by_shape[shape(line)] for line in lines]


def _one(line: str, fmt: str) -> str:
    runs = list(_split_runs(_lexer(fmt).get_tokens(line)))
    return runs[0] if len(runs) == 1 and _length(runs[0]) == len(line) else f"{PLAIN}{len(line)}"


def _length(encoded: str) -> int:
    total, num = 0, ""
    for ch in encoded:
        if ch.isdigit():
            num += ch
        else:
            total += int(num or 0)
            num = ""
    return total + int(num or 0)


def distinct_lines(texts: Iterable[list[str]]) -> list[str]:
    """Every distinct line, in order of first appearance over ``texts`` (the viewer rebuilds
    the same order, so the payload needs no index per line)."""
    seen: dict[str, None] = {}
    for lines in texts:
        for line in lines:
            seen.setdefault(line, None)
    return list(seen)
