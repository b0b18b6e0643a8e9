"""The message of an xDSL ``ParseError``, for every layer that reports one.

Here, in the bottom layer, so the target parser (``pypto.target``) and the
MLIR / ``.pto`` tools (``pypto.core`` and up) word it the same way.
"""

from __future__ import annotations

from xdsl.utils.exceptions import ParseError

NOT_ENTIRE_INPUT = "Could not parse entire input!"
"""xDSL's message where a top-level operation was expected (an empty or comment-only input, a stray token)."""

NO_OPERATION = "expected a module or an operation, found the end of the input: it holds no operation"
"""The message of an input that holds no operation at all (empty, or only comments and aliases)."""


def parse_error_message(error: ParseError) -> str:
    """An xDSL ParseError's message, with the ``{first_char}`` xDSL 0.74 leaves unformatted filled in
    (``Expected suffix identifier after '#'``: a ``#``, ``%``, ``^`` or ``!`` not followed by a name),
    and ``Could not parse entire input!`` saying what was expected: an operation (:data:`NO_OPERATION`
    at the end of the input, else ``expected an operation, found '}'``)."""
    text, span = error.span.input.content, error.span
    if error.msg == NOT_ENTIRE_INPUT and isinstance(text, str):
        found = text[span.start : span.end]
        return f"expected an operation, found '{found}'" if found else NO_OPERATION
    if "{first_char}" not in error.msg:
        return error.msg
    char = text[span.start : span.start + 1] if isinstance(text, str) else ""
    return error.msg.replace("{first_char}", f"'{char}'" if char else "a prefix")


def parse_error_text(error: ParseError) -> str:
    """``str(error)`` (the located excerpt: file:line:col, the line, a caret, the message)
    with :func:`parse_error_message`'s message."""
    return error.span.print_with_context(parse_error_message(error))
