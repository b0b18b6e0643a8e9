"""The one pass runner: a list of xDSL ``ModulePass``es over a module, with listeners.

The ``pl`` pipeline (:class:`pypto.pipeline.manager.PassManager`), ``pypto-opt`` and
``ptoas`` all run their passes through :class:`PassRunner`. What happens around
a pass (dumps, printing the IR, timing, diagnostics) is a :class:`PassListener`;
the runner itself only runs the passes, the check after each one, and the
error policy. It knows no pass in particular (it imports neither ``pl`` nor
``ptoas`` passes).

One dump naming rule for every tool (:func:`dump_file_name`)::

    00_input.mlir  00_frontend.py      the module before the first pass
    NN_after_<Pass><suffix>            after pass number NN (1-based)
    NN_failed_<Pass><suffix>           the input of pass NN, which failed

One error policy (:func:`classify_error`): only located diagnostics (the
:data:`USER_ERRORS`) are the user's mistake; anything else a pass raises is a
bug, an :class:`~pypto.errors.InternalError` naming the pass.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import Any, TextIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from pypto.diagnostics import DiagnosticError
from pypto.errors import BUG_NOTE, Error, InternalError, ParserError
from pypto.utils.atomic import atomic_write_text, is_temp_name
from pypto.utils.ir_fingerprint import fingerprint

USER_ERRORS: tuple[type[BaseException], ...] = (Error, DiagnosticError, ParserError, DiagnosticException)
"""Exceptions that are the user's mistake: located diagnostics (``error_at``,
front-end errors, verification failures, xDSL's verifier and pass failures).
Everything else raised inside a pass is a PyPTO bug."""


_DUMP_NAME = re.compile(r"^\d+_(?:after_|failed_|input|frontend).*$")
"""A pass dump (or its ``.log``) as :func:`dump_file_name` names them."""

_COMPILE_DUMP = re.compile(r"^\d+_(?:frontend|failed_)")
"""A dump only a compile writes (``00_frontend.py``, a failed pass's input): its ``passes_dump/``."""


def dump_file_name(
    index: int, pass_name: str | None = None, kind: str = "after", suffix: str = ".py", initial: str = "input"
) -> str:
    """The name of a pass dump: ``01_after_OutlineIncoreScopes.py`` (``index``
    is the 1-based pass position, ``kind`` ``after`` or ``failed``); with no
    pass, the module before the pipeline: ``00_<initial><suffix>``."""
    if pass_name is None:
        return f"{index:02d}_{initial}{suffix}"
    return f"{index:02d}_{kind}_{pass_name}{suffix}"


def pass_label(p: ModulePass | type[Any]) -> str:
    """A pass's PyPTO (CamelCase) name: its ``PASS_NAME``, else its xDSL
    ``name`` in CamelCase (``test-noop`` -> ``TestNoop``)."""
    name = getattr(p, "PASS_NAME", None)
    if isinstance(name, str) and name:
        return name
    kebab = getattr(p, "name", None)
    if not isinstance(kebab, str) or not kebab:
        return p.__name__ if isinstance(p, type) else type(p).__name__
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_]", kebab))


def classify_error(error: BaseException, pass_name: str, index: int) -> BaseException:
    """The exception to raise for a failure in pass ``pass_name``: user errors
    as they are (with a note naming the pass), anything else wrapped in an
    InternalError that says it is a bug (the original is its ``__cause__``)."""
    where = f"in pass {index:02d} {pass_name}"
    if isinstance(error, (InternalError, *USER_ERRORS)):
        if not any(where in n for n in getattr(error, "__notes__", [])):
            error.add_note(where)
        if not hasattr(error, "pass_name"):
            try:
                error.pass_name = pass_name  # type: ignore[attr-defined]
            except AttributeError:
                pass
        return error
    wrapped = InternalError(f"pass {pass_name} failed: {type(error).__name__}: {error}")
    wrapped.pass_name = pass_name  # type: ignore[attr-defined]
    wrapped.add_note(where)
    wrapped.add_note(BUG_NOTE)
    wrapped.__cause__ = error
    return wrapped


class PassListener:
    """Hooks around each pass (all optional; the base does nothing). ``index``
    is the pass's 1-based position in the whole pipeline."""

    def begin(self, module: ModuleOp) -> None:
        """Before the first pass."""

    def before_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        """Before pass ``index`` runs."""

    def after_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        """After it ran and its check passed."""

    def on_failure(self, index: int, pass_: ModulePass, module: ModuleOp, error: BaseException) -> None:
        """When the pass or its check raised; ``error`` is what will be raised."""


PassCheck = Callable[[ModulePass, ModuleOp], None]
"""Run after each pass, as part of it (a failure is the pass's failure)."""

ErrorPolicy = Callable[[BaseException, ModulePass, int], BaseException]
"""Maps what a pass raised to what the runner raises (``classify_error``'s shape)."""


class PassRunner:
    """Runs xDSL module passes in order over a module, in place."""

    def __init__(
        self,
        passes: Sequence[ModulePass],
        listeners: Sequence[PassListener] = (),
        *,
        first_index: int = 1,
        check: PassCheck | None = None,
        error_policy: ErrorPolicy | None = None,
    ):
        """``check`` runs after each pass (verification); ``error_policy``
        maps a failure to the exception raised (default: raise it as it is)."""
        self.passes = list(passes)
        self.listeners = list(listeners)
        self.first_index = first_index
        self.check = check
        self.error_policy = error_policy

    def run(self, ctx: Context, module: ModuleOp) -> ModuleOp:
        """Run every pass on ``module`` (modified in place) and return it."""
        for listener in self.listeners:
            listener.begin(module)
        for offset, p in enumerate(self.passes):
            index = self.first_index + offset
            for listener in self.listeners:
                listener.before_pass(index, p, module)
            try:
                p.apply(ctx, module)
                if self.check is not None:
                    self.check(p, module)
            except Exception as e:
                error = e if self.error_policy is None else self.error_policy(e, p, index)
                for listener in self.listeners:
                    listener.on_failure(index, p, module, error)
                if error is e:
                    raise
                raise error from e
            for listener in self.listeners:
                listener.after_pass(index, p, module)
        return module


Render = Callable[[ModuleOp], str]


class DumpListener(PassListener):
    """Writes ``00_<initial><suffix>`` before the passes and
    ``NN_after_<name><suffix>`` after each one into ``directory`` (created
    when the first file is written), each atomically."""

    def __init__(
        self,
        directory: str | PathLike[str],
        render: Render,
        suffix: str,
        *,
        name: Callable[[ModulePass], str] = pass_label,
        initial: str = "input",
        inputs: Sequence[str | PathLike[str]] = (),
    ):
        """``inputs``: the files the run reads (a folder holding one as a dump is refused)."""
        self.directory = Path(directory)
        self.render = render
        self.suffix = suffix
        self.name = name
        self.initial = initial
        self.inputs = [Path(p) for p in inputs]

    def _write(self, file_name: str, module: ModuleOp) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.directory / file_name, self.render(module))

    def begin(self, module: ModuleOp) -> None:
        self.clear()
        self._write(dump_file_name(0, None, suffix=self.suffix, initial=self.initial), module)

    def after_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        self._write(dump_file_name(index, self.name(pass_), suffix=self.suffix), module)

    def clear(self) -> None:
        """Delete an earlier run's dumps (and their logs and stranded temp files)
        from ``directory``, so one run's dumps never mix with another's; other
        files are left alone. A folder holding a compile's dumps (a ``passes_dump/``)
        or one of :attr:`inputs` as a dump is refused (an :class:`~pypto.errors.Error`,
        nothing deleted): clearing it would lose them."""
        if not self.directory.is_dir():
            return
        stale = [
            f for f in self.directory.iterdir() if f.is_file() and (_DUMP_NAME.match(f.name) or is_temp_name(f.name))
        ]
        compiled = sorted(f.name for f in stale if _COMPILE_DUMP.match(f.name))
        if compiled:
            raise Error(
                f"{self.directory}: the dump folder holds a compile's pass dumps ({compiled[0]}), which writing "
                "dumps there would delete: choose another folder"
            )
        for f in stale:
            if any(f.samefile(p) for p in self.inputs if p.exists()):
                raise Error(
                    f"{self.directory}: the dump folder holds the input file {f.name} as a dump of an earlier "
                    "run, which writing dumps there would delete: choose another folder"
                )
        for f in stale:
            f.unlink(missing_ok=True)


def ir_dump_header(pass_: ModulePass) -> str:
    """``// -----// IR Dump After TestNoop (test-noop) //----- //`` (MLIR's shape)."""
    return f"// -----// IR Dump After {pass_label(pass_)} ({pass_.name}) //----- //"


class PrintIRListener(PassListener):
    """Prints ``header(pass)``, the IR and a blank line to ``stream`` after each
    pass (``only_changed``: only after the passes that changed the IR)."""

    def __init__(
        self,
        stream: TextIO,
        render: Render,
        *,
        header: Callable[[ModulePass], str] = ir_dump_header,
        only_changed: bool = False,
    ):
        self.stream = stream
        self.render = render
        self.header = header
        self.only_changed = only_changed
        self._before: list[object] | None = None

    def begin(self, module: ModuleOp) -> None:
        if self.only_changed:
            self._before = fingerprint(module)

    def after_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        if self.only_changed:
            after = fingerprint(module)
            changed, self._before = after != self._before, after
            if not changed:
                return
        self.stream.write(f"{self.header(pass_)}\n{self.render(module)}\n")


class TimingListener(PassListener):
    """Wall time per pass (by xDSL name), plus any stage timed with
    :meth:`measure` (``(parser)``, ``(verifier)``...), in first-seen order; a
    stage measured while a pass runs is not counted in the pass's time."""

    def __init__(self) -> None:
        self.timings: dict[str, float] = {}
        self._start: float | None = None

    def _add(self, name: str, seconds: float) -> None:
        self.timings[name] = self.timings.get(name, 0.0) + seconds

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        """Time the body as ``name``."""
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            self._add(name, elapsed)
            if self._start is not None:
                self._start += elapsed

    def before_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        self._start = time.perf_counter()

    def _stop(self, pass_: ModulePass) -> None:
        if self._start is not None:
            self._add(pass_.name, time.perf_counter() - self._start)
            self._start = None

    def after_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        self._stop(pass_)

    def on_failure(self, index: int, pass_: ModulePass, module: ModuleOp, error: BaseException) -> None:
        self._stop(pass_)

    def report(self) -> str:
        """MLIR's ``-mlir-timing`` report shape."""
        total = sum(self.timings.values()) or 1e-12
        bar = "===" + "-" * 73 + "==="
        out = [bar, "... Pass execution timing report ...".center(79).rstrip(), bar]
        out.append(f"  Total Execution Time: {total:.4f} seconds")
        out.append("")
        out.append("  ----Wall Time----  ----Name----")
        for name, t in self.timings.items():
            out.append(f"  {t:10.4f} ({100 * t / total:5.1f}%)  {name}")
        out.append(f"  {total:10.4f} (100.0%)  Total")
        return "\n".join(out) + "\n"


__all__ = [
    "BUG_NOTE",
    "USER_ERRORS",
    "DumpListener",
    "ErrorPolicy",
    "PassCheck",
    "PassListener",
    "PassRunner",
    "PrintIRListener",
    "TimingListener",
    "classify_error",
    "dump_file_name",
    "ir_dump_header",
    "pass_label",
]
