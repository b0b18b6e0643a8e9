"""The message of an xDSL ``ParseError``, for every layer that reports one.

Here, in the bottom layer, so the target parser (``pypto.target``) and the
MLIR / ``.pto`` tools (``pypto.core`` and up) word it the same way.
"""

from __future__ import annotations

from xdsl.utils.exceptions import ParseError


def parse_error_message(error: ParseError) -> str:
    """An xDSL ParseError's message, with the ``{first_char}`` xDSL 0.74 leaves unformatted filled in
    (``Expected suffix identifier after '#'``: a ``#``, ``%``, ``^`` or ``!`` not followed by a name)."""
    if "{first_char}" not in error.msg:
        return error.msg
    text, start = error.span.input.content, error.span.start
    char = text[start : start + 1] if isinstance(text, str) else ""
    return error.msg.replace("{first_char}", f"'{char}'" if char else "a prefix")


def parse_error_text(error: ParseError) -> str:
    """``str(error)`` (the located excerpt: file:line:col, the line, a caret, the message)
    with :func:`parse_error_message`'s message."""
    return error.span.print_with_context(parse_error_message(error))
