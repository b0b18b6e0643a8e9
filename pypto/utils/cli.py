"""The one wrapper every command-line tool's ``main`` goes through.

``@cli_main("tool")`` on ``def main(argv=None) -> int`` maps what escapes it
to an exit code, so no tool has its own try/except:

- a failure caused by the input or the file system (:data:`USER_ERRORS`:
  PyPTO's error classes, located diagnostics, xDSL parse/verify errors,
  ``OSError``, undecodable text) prints one located line (a diagnostic keeps
  its source excerpt) and exits 1;
- anything else is a bug in PyPTO: ``tool: internal error: Type: message``,
  a note saying so, and exit 2 (the backtrace with ``PYPTO_BACKTRACE=1``);
- argparse usage errors keep argparse's exit 2 and message; Ctrl-C exits 130;
  a closed stdout (``tool | head``) exits quietly.
"""

from __future__ import annotations

import functools
import os
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from xdsl.utils.exceptions import DiagnosticException, ParseError

from pypto.diagnostics import Diagnostic, DiagnosticError
from pypto.errors import BUG_NOTE, Error, ParserError

from .tracebacks import NOTE as TRACEBACK_NOTE
from .tracebacks import backtrace_enabled

USER_ERRORS: tuple[type[BaseException], ...] = (
    Error,
    ParserError,
    DiagnosticError,
    DiagnosticException,
    ParseError,
    OSError,
    UnicodeError,
)
"""What a command-line user caused: bad input text, a bad path, a verifier
verdict. Anything else that escapes a ``main`` is a bug."""

EXIT_USER = 1
EXIT_INTERNAL = 2
EXIT_INTERRUPTED = 130

_LOCATED = re.compile(r"^\S.*?: (error|warning): |^[Ee]rror: |^usage: ")  # "Error: ": PTOAS's own messages

F = TypeVar("F", bound=Callable[..., int])


class InputError(Error):
    """An input file that cannot be used as it is (not text, ...); names the file."""


def read_input_text(path: str | os.PathLike[str], what: str = "input") -> str:
    """The UTF-8 text of ``path`` (``-``: stdin, named ``<stdin>``); undecodable bytes raise an
    :class:`InputError` naming the file and the offset, a missing or
    unreadable file the OSError naming it."""
    if os.fspath(path) == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # a text stream with no bytes under it (a test's StringIO): already text
            return sys.stdin.read()
        # stdin's bytes, not its text: the text layer decodes bad bytes to surrogates (surrogateescape)
        # and a parser would report them as an unexpected character, not as bytes that are not UTF-8
        name, data = "<stdin>", buffer.read()
    else:
        with open(path, "rb") as f:
            name, data = os.fspath(path), f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"{name}: {what} is not UTF-8 text ({utf8_fault(data, e)[2]})") from None


def utf8_fault(data: bytes, error: UnicodeDecodeError) -> tuple[int, int, str]:
    """Where ``data`` stops being UTF-8 (``error``: its decode's): the 1-based line and column of the first bad
    byte, and ``byte 0x.. at offset N`` for a message."""
    start = error.start
    line = data.count(b"\n", 0, start) + 1
    col = start - (data.rfind(b"\n", 0, start) + 1) + 1
    return line, col, f"byte 0x{data[start]:02x} at offset {start}"


STDOUT_NAME = "<stdout>"
"""How an error names standard output (``-o -``, or no ``-o``), as ``<stdin>`` names standard input."""


def write_stdout(text: str) -> None:
    """Write ``text`` to stdout and flush it. A failed write that names no file (``> full-disk-file``:
    ``No space left on device``) raises the OSError naming :data:`STDOUT_NAME`; a closed pipe stays a
    BrokenPipeError (:func:`run_cli` exits quietly on it)."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as e:
        if e.filename is not None or e.errno is None:
            raise
        raise type(e)(e.errno, e.strerror, STDOUT_NAME) from None


def check_output_not_input(
    output: str | os.PathLike[str] | None, inputs: Iterable[str | os.PathLike[str] | None], option: str = "-o"
) -> None:
    """Refuse an output path that names one of ``inputs`` (the same file by any name or link): writing
    the output there would replace the input, and a user's slip must never lose data. ``None`` and ``-``
    (stdout/stdin) are skipped; raises an :class:`InputError` naming both."""
    if output is None or os.fspath(output) == "-":
        return
    for path in inputs:
        if path is None or os.fspath(path) == "-":
            continue
        try:
            same = os.path.samefile(output, path)
        except OSError:  # either is missing (or unreadable): not the same existing file
            continue
        if same:
            raise InputError(
                f"{os.fspath(output)}: the output path ({option}) is the input file {os.fspath(path)}; "
                "writing there would overwrite the input: choose another output path"
            )


def user_error_text(prog: str, error: BaseException) -> str:
    """The located text of a user error: a diagnostic rendered with its
    excerpt, an OSError as ``prog: error: <file>: <reason>``, any other
    message as is when it is already located, else prefixed with
    ``prog: error:``."""
    diag = getattr(error, "diagnostic", None)
    if callable(diag):
        diag = diag()
    if isinstance(diag, Diagnostic):
        text = diag.render()
    elif isinstance(error, OSError) and error.strerror:
        names = [str(n) for n in (error.filename, error.filename2) if n is not None]
        text = f"{' -> '.join(names)}: {error.strerror}" if names else error.strerror
    elif isinstance(error, UnicodeDecodeError):
        text = f"input is not UTF-8 text (byte 0x{error.object[error.start]:02x} at offset {error.start})"
    else:
        text = str(error) or type(error).__name__
    notes = [n for n in getattr(error, "__notes__", []) if n not in text and n != TRACEBACK_NOTE]
    if notes:
        text += "".join(f"\nnote: {n}" for n in notes)
    return text if _LOCATED.match(text) else f"{prog}: error: {text}"


def report_internal_error(prog: str, error: BaseException) -> int:
    """Print a bug as ``prog: internal error[ in pass 'P']: Type: message``
    (the wrapped cause when the error asks for it) and return exit 2."""
    pass_name = getattr(error, "pass_name", None)
    where = f" in pass '{pass_name}'" if pass_name else ""
    cause = error.__cause__ if getattr(error, "show_cause", False) and error.__cause__ is not None else error
    sys.stderr.write(f"{prog}: internal error{where}: {type(cause).__name__}: {cause}\n")
    if backtrace_enabled():
        traceback.print_exception(cause)
    else:
        sys.stderr.write(f"{prog}: {BUG_NOTE}; set PYPTO_BACKTRACE=1 for a backtrace\n")
    return EXIT_INTERNAL


def run_cli(prog: str, body: Callable[[], int | None]) -> int:
    """Run ``body`` and map its outcome to an exit code (see the module doc)."""
    try:
        code = body()
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        sys.stderr.write(f"{e.code}\n")
        return EXIT_USER
    except KeyboardInterrupt:
        sys.stderr.write(f"{prog}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_USER
    except USER_ERRORS as e:
        if backtrace_enabled():
            traceback.print_exception(e)
        sys.stderr.write(user_error_text(prog, e) + "\n")
        return EXIT_USER
    except Exception as e:  # noqa: BLE001 - a bug: reported, never a bare traceback
        return report_internal_error(prog, e)
    return 0 if code is None else code


def cli_main(prog: str) -> Callable[[F], F]:
    """Decorate a tool's ``main(argv=None) -> int`` with :func:`run_cli`."""

    def wrap(main: F) -> F:
        @functools.wraps(main)
        def wrapped(argv: Sequence[str] | None = None, *args: object, **kwargs: object) -> int:
            return run_cli(prog, lambda: main(argv, *args, **kwargs))

        return wrapped  # type: ignore[return-value]

    return wrap


def _silence_stdout() -> None:
    """After EPIPE: point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
