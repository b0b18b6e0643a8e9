"""Perf hints and warnings of a compilation: the policy, the checks, the report.

A perf hint is a :class:`~pypto.diagnostics.Diagnostic` with a ``code``
(``PH001``) whose ``rule`` is its check name (``TileInnermostDimGranularity``);
a warning has a rule and no code. Passes emit both through
``pypto.diagnostics.emit``; checks that look at the whole program register
with :func:`register_check` for a :class:`DiagnosticPhase`.

Policy (:class:`DiagnosticPolicy`): ``diagnostic_phase=NONE`` mutes warnings
and hints; ``disabled_diagnostics`` silences checks by name
(``UnusedControlFlowResult`` is off by default); ``werror`` names hints (by
code or check) that become a user error (:class:`PerfHintError`).

Report: ``report/perf_hints.log`` is always written -- one line per hint site
(:func:`format_hint`, ``(N occurrences at this source location)`` when a site
repeats), or the single line :data:`EMPTY_HEADER` -- and stderr gets
``[perf_hint] <N> hints across <M> sites; see <path>``. Without a report
directory (``lower()``) every hint line goes to stderr instead.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum
from pathlib import Path
from typing import TextIO

from xdsl.dialects.builtin import ModuleOp

from pypto.diagnostics import Diagnostic, Severity
from pypto.errors import Error, InvalidArgumentError
from pypto.utils.atomic import atomic_write_text

PERF_HINTS_FILE = "perf_hints.log"
EMPTY_HEADER = "# PyPTO perf hints: none"
WARNING_ENV = "PYPTO_WARNING_LEVEL"


class DiagnosticPhase(IntEnum):
    """When warning checks run; NONE mutes every warning and hint."""

    NONE = 0
    PRE_PIPELINE = 1
    POST_PASS = 2
    POST_PIPELINE = 3


class DiagnosticCheck(StrEnum):
    """The named checks (``disabled_diagnostics`` takes these or their names)."""

    UnusedVariable = "UnusedVariable"
    UnusedControlFlowResult = "UnusedControlFlowResult"
    TileInnermostDimGranularity = "TileInnermostDimGranularity"
    OutParamWriteDropped = "OutParamWriteDropped"


DISABLED_BY_DEFAULT: frozenset[str] = frozenset({DiagnosticCheck.UnusedControlFlowResult.value})


def parse_phase(value: DiagnosticPhase | int | str | None) -> DiagnosticPhase:
    """An explicit phase, else ``PYPTO_WARNING_LEVEL``, else PRE_PIPELINE."""
    if value is None:
        value = os.environ.get(WARNING_ENV) or DiagnosticPhase.PRE_PIPELINE
    if isinstance(value, DiagnosticPhase):
        return value
    if isinstance(value, int) or str(value).strip().isdigit():
        return DiagnosticPhase(int(value))
    try:
        return DiagnosticPhase[str(value).strip().upper()]
    except KeyError:
        raise InvalidArgumentError(f"unknown diagnostic phase {value!r}") from None


def known_diagnostic_names() -> frozenset[str]:
    """Every name ``disabled_diagnostics`` and ``werror`` accept: the :class:`DiagnosticCheck` names, the
    registered checks' names and codes, and each pass's ``DIAGNOSTICS`` (check name and code)."""
    import pypto.pipeline.checks  # noqa: F401 - its checks register themselves
    from pypto.passes.registry import all_passes

    names = {c.value for c in DiagnosticCheck}
    for c in _CHECKS:
        names |= {c.name, c.code} - {None}  # type: ignore[arg-type]
    for get in all_passes().values():
        for rule, code in getattr(get(), "DIAGNOSTICS", {}).items():
            names |= {rule, code}
    return frozenset(names)  # type: ignore[arg-type]


def _names(items: Iterable[object] | None, option: str) -> frozenset[str]:
    """The names of ``items``; an unknown name is an :class:`InvalidArgumentError` naming ``option``,
    the closest known name and all of them."""
    if isinstance(items, str):
        items = [items]  # one name, not its letters
    names = frozenset(str(getattr(i, "value", i)) for i in (items or ()))
    if not names:
        return names
    known = known_diagnostic_names()
    for name in sorted(names - known):
        close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InvalidArgumentError(f"unknown diagnostic {name!r} in {option}{hint} (known: {', '.join(sorted(known))})")
    return names


@dataclass(frozen=True)
class DiagnosticPolicy:
    """Which warnings and hints are kept, and which hints are errors."""

    phase: DiagnosticPhase = DiagnosticPhase.PRE_PIPELINE
    disabled: frozenset[str] = DISABLED_BY_DEFAULT
    werror: frozenset[str] = frozenset()

    @classmethod
    def make(
        cls,
        diagnostic_phase: DiagnosticPhase | int | str | None = None,
        disabled_diagnostics: Iterable[object] | None = None,
        werror: Iterable[object] | None = None,
    ) -> DiagnosticPolicy:
        """From compile options (``disabled_diagnostics`` adds to the defaults)."""
        disabled = _names(disabled_diagnostics, "disabled_diagnostics")
        return cls(parse_phase(diagnostic_phase), DISABLED_BY_DEFAULT | disabled, _names(werror, "werror"))

    @property
    def muted(self) -> bool:
        return self.phase is DiagnosticPhase.NONE

    def keeps(self, d: Diagnostic) -> bool:
        """Whether a warning/hint is reported (errors always are)."""
        if d.severity is Severity.ERROR:
            return True
        if self.muted:
            return False
        return not (d.rule in self.disabled or d.code in self.disabled)

    def is_error(self, d: Diagnostic) -> bool:
        """Whether a kept hint is turned into an error by ``werror``."""
        return is_hint(d) and (d.code in self.werror or d.rule in self.werror)


def is_hint(d: Diagnostic) -> bool:
    """A perf hint: a diagnostic with a code."""
    return d.code is not None


def is_warning(d: Diagnostic) -> bool:
    return d.severity is Severity.WARNING and d.code is None


# ---- checks over a whole program ------------------------------------------------

Check = Callable[[ModuleOp], None]


@dataclass
class _Registered:
    name: str
    phase: DiagnosticPhase
    fn: Check
    hint: bool
    code: str | None = None


_CHECKS: list[_Registered] = []


def register_check(
    name: str, phase: DiagnosticPhase, *, hint: bool = False, code: str | None = None
) -> Callable[[Check], Check]:
    """Decorator: ``fn(module)`` emits the diagnostics of check ``name``.

    A hint check (``hint=True``) runs at ``phase`` unless diagnostics are
    muted; a warning check runs only when the compile's ``diagnostic_phase``
    is ``phase`` (PRE_PIPELINE: on the input; POST_PASS: after every pass,
    into the pass's ``.log``; POST_PIPELINE: on the final IR). ``code``: the
    hint's code (``PH001``), a name ``disabled_diagnostics`` / ``werror`` accept too.
    """

    def deco(fn: Check) -> Check:
        _CHECKS[:] = [c for c in _CHECKS if c.name != name]
        _CHECKS.append(_Registered(name, phase, fn, hint, code))
        return fn

    return deco


def registered_checks() -> list[_Registered]:
    """The registered checks, in registration order (run by :func:`pypto.pipeline.checks.run_checks`)."""
    return list(_CHECKS)


# ---- rendering ------------------------------------------------------------------------


def _site(d: Diagnostic) -> tuple[str, int, int] | None:
    return (d.span.filename, d.span.line, d.span.col) if d.span is not None else None


def _where(d: Diagnostic) -> str:
    if d.span is None:
        return "<unknown>"
    return f"{os.path.basename(d.span.filename)}:{d.span.line}:{d.span.col}"


def format_hint(d: Diagnostic, count: int = 1) -> str:
    """``[perf_hint PH001] <Check>: <message>[ (N occurrences at this source location)] at <file>:<l>:<c>``."""
    times = f" ({count} occurrences at this source location)" if count > 1 else ""
    return f"[perf_hint {d.code}] {d.rule}: {d.message}{times} at {_where(d)}"


def format_warning(d: Diagnostic) -> str:
    """``[warning] [<Rule>] (<pass>) <message> at <file>:<l>:<c>``."""
    where = f" ({d.pass_name})" if d.pass_name else ""
    at = f" at {_where(d)}" if d.span is not None else ""
    return f"[warning] [{d.rule}]{where} {d.message}{at}"


def dedupe(hints: Iterable[Diagnostic]) -> list[tuple[Diagnostic, int]]:
    """Hints grouped per site (code, check, message, location), first-seen order."""
    groups: dict[tuple[object, ...], list[Diagnostic]] = {}
    for d in hints:
        groups.setdefault((d.code, d.rule, d.message, _site(d)), []).append(d)
    return [(ds[0], len(ds)) for ds in groups.values()]


class PerfHintError(Error):
    """Perf hints named by ``werror`` fired (a user error, e.g. a CI gate)."""

    def __init__(self, hints: list[Diagnostic]):
        self.hints = hints
        lines = [format_hint(d, n) for d, n in dedupe(hints)]
        super().__init__("perf hints treated as errors (werror):\n" + "\n".join(lines))


@dataclass
class DiagnosticReport:
    """The warnings and hints of one compilation, filtered by a policy."""

    policy: DiagnosticPolicy = field(default_factory=DiagnosticPolicy)
    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Keep what the policy keeps; returns the kept ones."""
        kept = [d for d in diagnostics if self.policy.keeps(d)]
        self.items.extend(kept)
        return kept

    @property
    def hints(self) -> list[Diagnostic]:
        return [d for d in self.items if is_hint(d)]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.items if is_warning(d)]

    def hint_lines(self) -> list[str]:
        return [format_hint(d, n) for d, n in dedupe(self.hints)]

    def write(self, report_dir: str | os.PathLike[str], stream: TextIO | None = None) -> Path:
        """Write ``perf_hints.log``; print the one summary line when there are hints."""
        d = Path(report_dir)
        d.mkdir(parents=True, exist_ok=True)
        path = d / PERF_HINTS_FILE
        lines = self.hint_lines()
        atomic_write_text(path, "\n".join(lines or [EMPTY_HEADER]) + "\n", durable=False)
        hints = self.hints
        if hints:
            sites = len({_site(h) for h in hints})
            out = stream or sys.stderr
            out.write(f"[perf_hint] {len(hints)} hints across {sites} sites; see {path}\n")
        return path

    def print_hints(self, stream: TextIO | None = None) -> None:
        """Every hint line to stderr (no report directory: ``lower()``)."""
        out = stream or sys.stderr
        for line in self.hint_lines():
            out.write(line + "\n")

    def print_warnings(self, stream: TextIO | None = None) -> None:
        out = stream or sys.stderr
        for w in self.warnings:
            out.write(format_warning(w) + "\n")

    def raise_werror(self) -> None:
        """Raise PerfHintError when a hint named by ``werror`` fired."""
        bad = [d for d in self.hints if self.policy.is_error(d)]
        if bad:
            raise PerfHintError(bad)
