"""A small Pygments ``RegexLexer`` for MLIR text and ``.pto`` files (Pygments ships none).

It colours what a reader scans for: op names (``pto.tload``, ``arith.constant``),
SSA values (``%a__tile``), symbols (``@kernel``), types (``!pto.tile_buf<...>``,
``f32``, ``index``), attributes (``#pto.layout<nd>``), strings, numbers, comments
and the location suffix ``loc(...)``.
"""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

_ID = r"[A-Za-z_$][\w$.\-]*"


class MLIRLexer(RegexLexer):
    """MLIR / ``.pto`` text, one line at a time or whole files."""

    name = "MLIR (pypto)"
    aliases = ["pypto-mlir", "pto"]
    filenames = ["*.mlir", "*.pto"]

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            (r"//.*?$", Comment.Single),
            (r'"(?:\\.|[^"\\])*"', String),
            (r"%[\w$.\-]+(?:#\d+)?", Name.Variable),
            (r'@(?:"(?:\\.|[^"\\])*"|' + _ID + ")", Name.Function),
            (r"\^[\w$.\-]+", Name.Label),
            (r"!" + _ID, Keyword.Type),
            (r"#" + _ID, Name.Attribute),
            (r"\b(?:[iuf]\d+|si\d+|ui\d+|bf16|index|none)\b", Keyword.Type),
            (r"\b(loc)(\()", bygroups(Keyword, Punctuation)),
            (
                r"\b(?:module|func|attributes|ins|outs|to|step|iter_args|return|true|false|"
                r"shape|strides|offsets|sizes|addr|valid_row|valid_col)\b",
                Keyword,
            ),
            (r"\b[a-z_][\w]*(?:\.[\w]+)+\b", Name.Builtin),
            (r"0x[0-9a-fA-F]+", Number.Hex),
            (r"-?\d+\.\d*(?:[eE][+-]?\d+)?", Number.Float),
            (r"-?\d+", Number.Integer),
            (r"->|[=+*/-]", Operator),
            (r"[()\[\]{}<>,:?]", Punctuation),
            (_ID, Name),
            (r".", Text),
        ]
    }
