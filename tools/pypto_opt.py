"""``pypto-opt``: the PyPTO pass driver, an ``mlir-opt`` for PyPTO on xDSL.

Built on xDSL's :class:`~xdsl.xdsl_opt_main.xDSLOptMain`, with only the PyPTO
context's dialects (builtin, func, arith, scf, pl) and every pass of
:func:`pypto.passes.registry.all_passes`::

    pypto-opt kernel.mlir -p outline-incore-scopes,convert-tensor-to-tile-ops
    pypto-opt kernel.py --emit=mlir --print-ir-after-all
    pypto-opt tests.mlir --split-input-file --verify-diagnostics

Input is MLIR text (``.mlir``; ops without ``loc(...)`` get the location of
their position in the file, like ``mlir-opt``) or a ``pl`` DSL file (``.py``).
Output is MLIR (printed by :class:`pypto.core.mlir_text.UniqueNamePrinter`) or
DSL text (``--emit=py``).

Passes run through the shared :class:`pypto.pipeline.pass_runner.PassRunner` (as in
``compile`` and ``ptoas``): ``--dump-passes``, ``--print-ir-after-all/-change``
and ``--time-passes`` are its listeners.

xDSL's options are used as xDSL defines them (``-p``, ``-t``, ``-o``, ``-f``,
``--print-op-generic``, ``--print-debuginfo``, ``--disable-verify``,
``--allow-unregistered-dialect``, ``--no-implicit-module``, ``--version`` ...).
Three keep xDSL's flags with MLIR's behaviour, because xDSL 0.74's differs:
``--split-input-file`` cuts only at lines that are ``// -----`` (xDSL cuts at
the marker anywhere, also inside a comment); ``--print-between-passes`` and
``--time-passes`` write to stderr, after every pass and as MLIR's timing report
(xDSL prints them to stdout, between the output IR). ``--verify-diagnostics`` is
MLIR's (checks ``// expected-error {{...}}`` comments); ``--parsing-diagnostics``,
``--print-no-properties``, ``--syntax-highlight`` and ``--shrink`` are accepted and
change nothing (their ``--help`` says so: :data:`XDSL_OPTION_HELP`).

A user mistake (bad syntax, a verifier failure, a located pass error, an
unknown pass, a missing file) prints one located diagnostic and exits 1; any
other exception is a bug in PyPTO: ``pypto-opt: internal error: ...`` and exit 2
(with a backtrace when ``PYPTO_BACKTRACE=1``); :func:`pypto.utils.cli.cli_main` maps them.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib.util
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from pypto.core.context import make_context
from pypto.core.mlir_text import print_mlir
from pypto.core.op_verify import verify_tree
from pypto.diagnostics import Diagnostic, DiagnosticError, Severity, collecting, op_span
from pypto.errors import Error, ParserError
from pypto.pipeline.pass_runner import (
    DumpListener,
    PassListener,
    PassRunner,
    PrintIRListener,
    TimingListener,
    classify_error,
)
from pypto.pipeline.verification import find_failing_op
from pypto.utils.atomic import atomic_write_text
from pypto.utils.cli import check_output_not_input, cli_main, read_input_text, write_stdout

from .located_parser import parse_error_diagnostic, parse_located_module
from .verify_diagnostics import parse_expectations, verify

SPLIT_MARKER = "// -----"
"""The line that separates the chunks of ``--split-input-file`` input and output."""

_SPLIT_LINE = re.compile(r"^\s*// -----\s*$")

EMIT_SUFFIX = {"mlir": ".mlir", "py": ".py"}

_NO_EFFECT = "accepted for xdsl-opt compatibility (no effect)"
XDSL_OPTION_HELP = {
    "disable_verify": "do not verify the IR after parsing and after each pass",
    "print_between_passes": "print the IR (to stderr) after every pass",
    "time_passes": "print the time of each pass (to stderr, as MLIR's timing report)",
    "verify_diagnostics": "check the diagnostics against the input's '// expected-error {{...}}' comments "
    "(also -warning, -remark, -note; @+N, @-N), as mlir-opt does: exit 0 when they match, else 1 naming each "
    "mismatch",
    "parsing_diagnostics": f"{_NO_EFFECT}: a parse error is reported as every error, exit 1",
    "print_no_properties": _NO_EFFECT,
    "syntax_highlight": _NO_EFFECT,
    "shrink": _NO_EFFECT,
}
"""The help of xDSL's options whose xDSL help does not say what pypto-opt does with them (xDSL's
``--verify-diagnostics`` prints a verifier error and exits 0; several are not used here)."""


class UserError(Error):
    """A mistake of the user (input or command line), reported as one diagnostic."""

    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic
        super().__init__(diagnostic.render())


def verify_module(module: ModuleOp, after_pass: str | None = None) -> None:
    """Verify ``module``; raise a DiagnosticError located at the failing op."""
    try:
        verify_tree(module)  # xDSL's checks and the few it lacks (pypto.core.op_verify)
    except VerifyException as e:
        found = find_failing_op(module)
        op, error = found if found is not None else (None, e)
        note = f"the IR after pass '{after_pass}' does not verify" if after_pass else None
        raise DiagnosticError(Diagnostic(Severity.ERROR, str(error), op_span(op), note=note)) from e


def load_pass_plugin(path: str) -> None:
    """Import a Python file that registers passes (``@register_pass``)."""
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise UserError(Diagnostic(Severity.ERROR, f"could not open pass plugin '{path}'"))
    module_name = "pypto_opt_plugin_" + re.sub(r"\W", "_", str(resolved))
    if module_name in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    if spec is None or spec.loader is None:
        raise UserError(Diagnostic(Severity.ERROR, f"could not load pass plugin '{path}'"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:  # a plugin calling sys.exit() at import fails to load, too
        del sys.modules[module_name]
        raise UserError(
            Diagnostic(Severity.ERROR, f"could not load pass plugin '{path}': {type(e).__name__}: {e}")
        ) from e


class PyptoOptMain(xDSLOptMain):
    """xDSL's opt driver with PyPTO's dialects, passes, printer, locations and
    diagnostics."""

    version_format: ClassVar[str] = "pypto-opt (PyPTO on xDSL), xdsl version {xdsl_version}"

    def __init__(self, args: Sequence[str] | None = None):
        self._pass_load_error: Exception | None = None
        self._timer = TimingListener()
        self._input_name = "<stdin>"
        self._lines: list[str] = []
        super().__init__(description="PyPTO pass driver (mlir-opt for PyPTO on xDSL)", args=args)

    # ---- registration ---------------------------------------------------

    def register_all_dialects(self) -> None:
        """Only the PyPTO context's dialects: builtin, func, arith, scf, pl."""
        self.ctx = make_context()

    def register_all_frontends(self) -> None:
        """``.mlir`` (located MLIR parser) and ``.py`` (the ``pl`` front end)."""
        self.available_frontends["mlir"] = lambda io: self._parse_text(io.read().decode("utf-8"), "mlir")
        self.available_frontends["py"] = lambda io: self._parse_text(io.read().decode("utf-8"), "py")

    def register_all_passes(self) -> None:
        """Every pass of the PyPTO pass registry."""
        from pypto.passes import registry

        try:
            passes = registry.all_passes()
        except ImportError as e:
            # A built-in pass module is missing or broken: still offer the
            # passes that did register, and say why others are absent.
            self._pass_load_error = e
            passes = {name: (lambda c=cls: c) for name, cls in sorted(registry._PASSES.items())}
        self.available_passes = {}
        for name, factory in passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        """``-t mlir`` and ``-t py`` (the same as ``--emit``)."""
        self.available_targets["mlir"] = lambda module, out: out.write(self.render(module, "mlir"))
        self.available_targets["py"] = lambda module, out: out.write(self.render(module, "py"))

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        """xDSL's options (the help of those pypto-opt runs otherwise, or ignores, says so) plus PyPTO's."""
        super().register_all_arguments(arg_parser)
        for action in arg_parser._actions:
            action.help = XDSL_OPTION_HELP.get(action.dest, action.help)
        arg_parser.add_argument(
            "--print-ir-after-all",
            dest="print_between_passes",
            action="store_true",
            help="print the IR (to stderr) after every pass; alias of --print-between-passes",
        )
        arg_parser.add_argument(
            "--print-ir-after-change",
            action="store_true",
            help="print the IR (to stderr) after each pass that changed it",
        )
        arg_parser.add_argument(
            "--dump-passes",
            metavar="DIR",
            default=None,
            help="write the IR before the passes and after each pass into DIR "
            "(00_input.mlir, 01_after_<Pass>.mlir, ...)",
        )
        arg_parser.add_argument(
            "--emit",
            choices=sorted(EMIT_SUFFIX),
            default=None,
            help="output form: MLIR text or pl DSL text (default: mlir for .mlir input, py for .py input)",
        )
        arg_parser.add_argument(
            "--resume",
            action="store_true",
            help="the input is a pass dump passes_dump/NN_after_<Pass>.py: run passes NN+1.. of the Default "
            "pipeline and print the final program",
        )
        arg_parser.add_argument(
            "--memory-planner",
            choices=["PYPTO", "DSA_RP", "PTOAS"],
            default=None,
            help="with --resume: the memory planner the dumps were compiled with (default PYPTO)",
        )
        arg_parser.add_argument(
            "--run-reproducer",
            metavar="FILE",
            default=None,
            help="replay a passes_dump/reproducer file (the failing pass's input and the rest of the pipeline)",
        )
        arg_parser.add_argument(
            "--load-pass-plugin",
            metavar="FILE",
            action="append",
            default=[],
            help="import a Python file that registers extra passes (repeatable)",
        )

    def setup_pipeline(self) -> None:
        """Build the pass pipeline from ``-p``; an unknown pass or a bad option
        is a user error."""
        for plugin in self.args.load_pass_plugin:
            load_pass_plugin(plugin)
        if self.args.load_pass_plugin:
            self.register_all_passes()
        try:
            specs = list(parse_pipeline(self.args.passes))
        except ArgSpecParseError as e:
            raise UserError(
                Diagnostic(Severity.ERROR, f"invalid pass pipeline '{self.args.passes}'", note=str(e))
            ) from None
        passes: list[ModulePass] = []
        for spec in specs:
            factory = self.available_passes.get(spec.name)
            if factory is None:
                close = difflib.get_close_matches(spec.name, list(self.available_passes), n=1)
                hint = f"did you mean '{close[0]}'?" if close else None
                known = ", ".join(self.available_passes) or "(none)"
                note = f"known passes: {known}"
                if self._pass_load_error is not None:
                    note += f"; some passes failed to load: {self._pass_load_error}"
                raise UserError(Diagnostic(Severity.ERROR, f"unknown pass '{spec.name}'", hint=hint, note=note))
            try:
                passes.append(factory().from_pass_spec(spec))
            except (ValueError, TypeError) as e:
                raise UserError(Diagnostic(Severity.ERROR, f"invalid options for pass '{spec.name}': {e}")) from None
        self.pipeline = PassPipeline(tuple(passes))

    # ---- input ----------------------------------------------------------

    def _read_input(self) -> tuple[str, str]:
        """The input text and its kind (``mlir`` or ``py``)."""
        path = self.args.input_file
        if path is None or path == "-":
            self._input_name = "<stdin>"
            text = read_input_text("-")
            kind = "mlir"
        else:
            self._input_name = path
            try:
                text = read_input_text(path)
            except OSError as e:
                reason = e.strerror or str(e)
                raise UserError(Diagnostic(Severity.ERROR, f"could not open input file '{path}': {reason}")) from None
            kind = "py" if path.endswith(".py") else "mlir"
        if self.args.frontend:
            kind = self.args.frontend
        self._lines = text.splitlines()
        return text, kind

    def _chunks(self, text: str, kind: str) -> list[str]:
        """The inputs to process: with ``--split-input-file`` (not for ``.py``
        input), the chunks between lines that are only ``// -----`` (MLIR's
        rule; xDSL's splitter also cuts at the marker inside a comment line);
        each keeps the whole file's line numbers (earlier lines are blanked)."""
        if not self.args.split_input_file or kind == "py":
            return [text]
        lines = text.splitlines(keepends=True)
        chunks: list[str] = []
        start = 0
        for i, line in enumerate(lines + [SPLIT_MARKER]):
            if i == len(lines) or _SPLIT_LINE.match(line):
                chunks.append("\n" * start + "".join(lines[start:i]))
                start = i + 1
        return chunks

    def _parse_text(self, text: str, kind: str) -> ModuleOp:
        if kind == "py":
            from pypto.frontend.parser import parse

            program = parse(text, filename=self._input_name)
            return program.module
        return parse_located_module(
            self.ctx, text, self._input_name, allow_implicit_module=not self.args.no_implicit_module
        )

    # ---- output ---------------------------------------------------------

    def render(self, module: ModuleOp, emit: str) -> str:
        """The module as MLIR (our printer) or as ``pl`` DSL text."""
        if emit == "py":
            from pypto.core.dsl_printer import print_program

            text = print_program(module, explicit=False)
            return text if text.endswith("\n") else text + "\n"
        return print_mlir(module, generic=self.args.print_op_generic, debuginfo=self.args.print_debuginfo)

    def _emit_kind(self, kind: str) -> str:
        if self.args.emit:
            return self.args.emit
        if self.args.target in EMIT_SUFFIX and self.args.target != "mlir":
            return self.args.target
        return "py" if kind == "py" else "mlir"

    def _to_stdout(self) -> bool:
        """No ``-o``, or ``-o -`` (stdout, as for mlir-opt and ptoas)."""
        return self.args.output_file in (None, "-")

    def _write_output(self, text: str) -> None:
        if self._to_stdout():
            write_stdout(text)
        else:
            atomic_write_text(self.args.output_file, text)

    # ---- the pipeline ---------------------------------------------------

    def _verify_after(self, pass_: ModulePass, module: ModuleOp) -> None:
        with self._timer.measure("(verifier)"):
            verify_module(module, after_pass=pass_.name)

    def _listeners(self, emit: str, dump_dir: Path | None) -> list[PassListener]:
        """Timing, ``--print-ir-after-all/-change`` and ``--dump-passes``."""
        listeners: list[PassListener] = [self._timer]
        render: Callable[[ModuleOp], str] = lambda module: self.render(module, emit)  # noqa: E731
        if self.args.print_between_passes or self.args.print_ir_after_change:
            only_changed = not self.args.print_between_passes
            listeners.append(PrintIRListener(sys.stderr, render, only_changed=only_changed))
        if dump_dir is not None:
            inputs = [self.args.input_file] if self.args.input_file not in (None, "-") else []
            listeners.append(DumpListener(dump_dir, render, EMIT_SUFFIX[emit], inputs=inputs))
        return listeners

    def apply_passes(self, prog: ModuleOp, emit: str = "mlir", dump_dir: Path | None = None) -> None:  # type: ignore[override]
        """Run the pipeline on ``prog`` through the shared pass runner: verify
        after each pass, print, dump and time as asked; a pass's exception
        that is not a user error becomes an InternalError naming the pass."""
        runner = PassRunner(
            self.pipeline.passes,
            self._listeners(emit, dump_dir),
            check=None if self.args.disable_verify else self._verify_after,
            error_policy=_opt_error_policy,
        )
        runner.run(self.ctx, prog)

    def _diagnostic_of(self, error: BaseException) -> Diagnostic | None:
        """The user diagnostic an exception stands for (``None``: a bug)."""
        pass_name = getattr(error, "pass_name", None)
        diag: Diagnostic | None
        if isinstance(error, DiagnosticError):
            diag = error.diagnostic
        elif isinstance(error, ParserError):
            diag = error.diagnostic()
        elif isinstance(error, ParseError):
            diag = parse_error_diagnostic(error, self._lines)
        elif isinstance(error, DiagnosticException):
            # VerifyException (OpTypeError) or PassFailedException from a pass.
            diag = Diagnostic(Severity.ERROR, str(error))
            if pass_name is not None:
                diag.note = f"raised by pass '{pass_name}'"
        else:
            return None
        return self._with_lines(diag)

    def _with_lines(self, diag: Diagnostic) -> Diagnostic:
        if diag.span is not None and diag.source_lines is None and diag.span.filename == self._input_name:
            return replace(diag, source_lines=self._lines)
        return diag

    def process_chunk(
        self, text: str, kind: str, emit: str, dump_dir: Path | None
    ) -> tuple[str | None, list[Diagnostic]]:
        """Parse, verify, transform and print one input; returns the output
        (``None`` on error) and the diagnostics produced, in order."""
        output: str | None = None
        error: Diagnostic | None = None
        with collecting() as collected:
            try:
                with self._timer.measure("(parser)"):
                    module = self._parse_text(text, kind)
                if not self.args.disable_verify:
                    with self._timer.measure("(verifier)"):
                        verify_module(module)
                self.apply_passes(module, emit, dump_dir)
                with self._timer.measure("(printer)"):
                    output = self.render(module, emit)
            except Exception as e:
                error = self._diagnostic_of(e)
                if error is None:
                    raise
        diags = [self._with_lines(d) for d in collected.items]
        if error is not None:
            diags.append(error)
        return output, diags

    def _pipeline_mode(self) -> int:
        """``--resume`` / ``--run-reproducer``: run PyPTO's PassManager and
        print the final program as DSL text (exit 1 on a user error)."""
        from pypto.driver.resume import resume, run_reproducer

        for plugin in self.args.load_pass_plugin:
            load_pass_plugin(plugin)
        with collecting() as collected:
            try:
                if self.args.run_reproducer:
                    self._input_name = self.args.run_reproducer
                    program = run_reproducer(self.args.run_reproducer)
                else:
                    if self.args.input_file is None:
                        raise UserError(Diagnostic(Severity.ERROR, "--resume needs a pass dump as input file"))
                    self._input_name = self.args.input_file
                    program = resume(self.args.input_file, memory_planner=self.args.memory_planner)
            finally:
                for d in collected.items:
                    sys.stderr.write(d.render() + "\n")
        text = program.as_python()
        self._write_output(text if text.endswith("\n") else text + "\n")
        return 0

    def _check_mode_options(self) -> None:
        """An option the mode asked for does not use is refused (one diagnostic), not ignored."""
        a = self.args
        if not (a.run_reproducer or a.resume):
            if a.memory_planner is not None:
                raise UserError(Diagnostic(Severity.ERROR, "--memory-planner applies only with --resume"))
            return
        mode = "--run-reproducer" if a.run_reproducer else "--resume"
        unused = {
            "-p": a.passes,
            "--dump-passes": a.dump_passes,
            "--emit=mlir": a.emit == "mlir",
            "--split-input-file": a.split_input_file,
            "--verify-diagnostics": a.verify_diagnostics,
            "--print-ir-after-all": a.print_between_passes,
            "--print-ir-after-change": a.print_ir_after_change,
            "--time-passes": a.time_passes,
            "--resume": a.run_reproducer and a.resume,
            "--memory-planner": a.run_reproducer and a.memory_planner is not None,
        }
        given = [flag for flag, on in unused.items() if on]
        if given:
            raise UserError(
                Diagnostic(
                    Severity.ERROR,
                    f"{given[0]} does not apply with {mode}",
                    note=f"{mode} runs the rest of the Default pipeline and prints the program as pl DSL text",
                )
            )

    def _clear_other_dumps(self, root: Path, used: list[Path]) -> None:
        """Delete the dumps of an earlier run in ``root`` that this run does not write over: the
        ``chunk_NN`` folders of a ``--split-input-file`` run with more chunks (or all of them without
        ``--split-input-file``), and the root's own dumps when this run writes chunk folders. As
        :meth:`DumpListener.clear`: only dump files go (a chunk folder left empty is removed)."""
        if not root.is_dir():
            return
        inputs = [self.args.input_file] if self.args.input_file not in (None, "-") else []
        stale = sorted(d for d in root.glob("chunk_[0-9][0-9]*") if d.is_dir() and d not in used)
        for d in [*stale, *([root] if root not in used else [])]:
            DumpListener(d, str, ".mlir", inputs=inputs).clear()
            if d != root:
                with contextlib.suppress(OSError):
                    d.rmdir()

    def run(self) -> int:  # type: ignore[override]
        """Process the input; returns the exit code (0, or 1 after a user error)."""
        inputs = [self.args.input_file, self.args.run_reproducer, *self.args.load_pass_plugin]
        check_output_not_input(self.args.output_file, inputs)
        self._check_mode_options()
        if self.args.run_reproducer or self.args.resume:
            return self._pipeline_mode()
        text, kind = self._read_input()
        emit = self._emit_kind(kind)
        chunks = self._chunks(text, kind)
        dump_root = Path(self.args.dump_passes) if self.args.dump_passes else None
        dump_dirs = [
            dump_root / f"chunk_{i:02d}" if dump_root is not None and len(chunks) > 1 else dump_root
            for i in range(len(chunks))
        ]
        if dump_root is not None:
            self._clear_other_dumps(dump_root, [d for d in dump_dirs if d is not None])
        outputs: list[str] = []
        produced: list[Diagnostic] = []
        for chunk, dump_dir in zip(chunks, dump_dirs, strict=True):
            output, diags = self.process_chunk(chunk, kind, emit, dump_dir)
            outputs.append(output or "")
            produced.extend(diags)
            if not self.args.verify_diagnostics:
                for d in diags:
                    sys.stderr.write(d.render() + "\n")
        failed = any(d.severity is Severity.ERROR for d in produced)
        failures: list[Diagnostic] = []
        if self.args.verify_diagnostics:  # the verdict is whether the expected diagnostics were produced
            expectations, malformed = parse_expectations(text, self._input_name)
            failures = malformed + verify(expectations, produced, self._input_name, self._lines)
            failed = bool(failures)
        if not failed or self._to_stdout():
            # -o FILE appears only when the command succeeds (a failure leaves it as it was).
            self._write_output(f"{SPLIT_MARKER}\n".join(outputs))
        if self.args.time_passes:
            sys.stderr.write(self._timer.report())
        for f in failures:
            sys.stderr.write(f.render() + "\n")
        return 1 if failed else 0


def _opt_error_policy(error: BaseException, pass_: ModulePass, index: int) -> BaseException:
    """The shared error policy, the pass named by its ``-p`` name; a bug is
    reported as the exception the pass raised."""
    classified = classify_error(error, pass_.name, index)
    if classified is not error:
        classified.show_cause = True  # type: ignore[attr-defined]
    return classified


@cli_main("pypto-opt")
def main(argv: Sequence[str] | None = None) -> int:
    """Run ``pypto-opt`` with ``argv`` (default: the command line); returns
    the exit code: 0 success, 1 user error, 2 internal error (argparse usage
    errors also exit 2); the mapping is :func:`pypto.utils.cli.run_cli`'s."""
    # --disable-verify patches Attribute.__post_init__ globally; undo it so an
    # in-process call leaves the interpreter as it found it.
    post_init: Callable[..., None] = Attribute.__post_init__
    try:
        return PyptoOptMain(args=list(argv) if argv is not None else None).run()
    finally:
        Attribute.__post_init__ = post_init  # type: ignore[method-assign]


if __name__ == "__main__":
    sys.exit(main())
