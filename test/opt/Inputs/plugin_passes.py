"""Test-only passes for pypto-opt's lit and pytest tests.

Loaded with ``pypto-opt --load-pass-plugin test/opt/Inputs/plugin_passes.py``;
they exercise the driver (printing, dumping, diagnostics) independently of
the real passes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

from pypto.diagnostics import Severity, emit_at, error_at
from pypto.dialects.types import TensorType
from pypto.passes.base import PyPTOPass
from pypto.passes.registry import register_pass


@register_pass
@dataclass(frozen=True)
class TestNoop(PyPTOPass):
    """Changes nothing."""

    PASS_NAME: ClassVar[str] = "TestNoop"
    name: ClassVar[str] = "test-noop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        return None


@register_pass
@dataclass(frozen=True)
class TestNameValues(PyPTOPass):
    """Names every unnamed op result ``<prefix>`` (printed ``%v``, ``%v_1``, ...)."""

    PASS_NAME: ClassVar[str] = "TestNameValues"
    name: ClassVar[str] = "test-name-values"
    prefix: str = "v"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in op.walk():
            for r in o.results:
                if not r.name_hint:
                    r.name_hint = self.prefix


@register_pass
@dataclass(frozen=True)
class TestRemarkOps(PyPTOPass):
    """Emits a remark at every op named ``op`` and a warning at the first."""

    PASS_NAME: ClassVar[str] = "TestRemarkOps"
    name: ClassVar[str] = "test-remark-ops"
    op: str = "pl.tensor.add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        first = True
        for o in op.walk():
            if o.name == self.op:
                if first:
                    emit_at(o, Severity.WARNING, f"first {self.op}")
                    first = False
                emit_at(o, Severity.REMARK, f"saw {self.op}")


@register_pass
@dataclass(frozen=True)
class TestErrorAt(PyPTOPass):
    """Fails with a located error at the first op named ``op``."""

    PASS_NAME: ClassVar[str] = "TestErrorAt"
    name: ClassVar[str] = "test-error-at"
    op: str = "pl.tensor.add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in op.walk():
            if o.name == self.op:
                raise error_at(o, f"test error at {self.op}", hint="this pass always fails")


@register_pass
@dataclass(frozen=True)
class TestBreakIr(PyPTOPass):
    """Gives the first ``pl.tensor.add`` a wrong result type (fails verification)."""

    PASS_NAME: ClassVar[str] = "TestBreakIr"
    name: ClassVar[str] = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for o in op.walk():
            if o.name == "pl.tensor.add":
                t = o.results[0].type
                assert isinstance(t, TensorType)
                Rewriter.replace_value_with_new_type(o.results[0], TensorType.get([1, 1], t.element_type))
                return


@register_pass
@dataclass(frozen=True)
class TestCrash(PyPTOPass):
    """Raises an unexpected exception (an internal error)."""

    PASS_NAME: ClassVar[str] = "TestCrash"
    name: ClassVar[str] = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("boom")
