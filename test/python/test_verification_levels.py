"""VerificationLevel NONE / BASIC / ROUNDTRIP after each pass, errors naming
the pass and the op, PYPTO_VERIFY_LEVEL; logging levels and error classes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from test_pipeline_kernels import kernel
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

import pypto
from pypto.ir import PassManager, VerificationError, VerificationLevel, compile
from pypto.passes.base import PyPTOPass
from pypto.passes.registry import get_pass
from pypto.pipeline.verification import parse_verification_level


@dataclass(frozen=True)
class DropTerminator(PyPTOPass):
    """Test-only: breaks the IR (the function loses its return)."""

    PASS_NAME: ClassVar[str] = "DropTerminator"
    name: ClassVar[str] = "drop-terminator"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        f = next(o for o in op.ops if isinstance(o, func.FuncOp))
        f.body.block.last_op.detach()  # type: ignore[union-attr]


@dataclass(frozen=True)
class RenameArg(PyPTOPass):
    """Test-only: a name hint the printer cannot print back the same way."""

    PASS_NAME: ClassVar[str] = "RenameArg"
    name: ClassVar[str] = "rename-arg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        f = next(o for o in op.ops if isinstance(o, func.FuncOp))
        f.body.block.args[0].name_hint = "class"  # a Python keyword: does not parse back


def test_levels_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYPTO_VERIFY_LEVEL", raising=False)
    assert parse_verification_level(None) is VerificationLevel.BASIC
    monkeypatch.setenv("PYPTO_VERIFY_LEVEL", "roundtrip")
    assert parse_verification_level(None) is VerificationLevel.ROUNDTRIP
    assert PassManager.get_strategy().verification_level is VerificationLevel.ROUNDTRIP
    assert parse_verification_level("none") is VerificationLevel.NONE


def test_basic_names_pass_and_op(tmp_path: Path) -> None:
    with pytest.raises(VerificationError) as e:
        PassManager([get_pass("inline-functions"), DropTerminator]).run(kernel("add", tmp_path))
    assert e.value.pass_name == "DropTerminator" and e.value.op_name is not None
    assert f"after DropTerminator at op '{e.value.op_name}'" in str(e.value)
    assert isinstance(e.value, pypto.Error)
    PassManager([DropTerminator], verification_level="none").run(kernel("add", tmp_path))


def test_roundtrip_catches_unprintable_ir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pypto.core.dsl_printer as printer

    real = printer.print_program
    calls = iter(range(1000))

    def unstable(module: ModuleOp, explicit: bool = False) -> str:
        """A printer bug: the second print of the same IR differs on one line."""
        lines = real(module, explicit).splitlines()
        if next(calls) % 2:
            lines = [ln.replace("pl.tensor.add(", "pl.tensor.sub(") for ln in lines]
        return "\n".join(lines) + "\n"

    PassManager([RenameArg], verification_level="basic").run(kernel("add", tmp_path))
    monkeypatch.setattr(printer, "print_program", unstable)
    with pytest.raises(VerificationError) as e:
        PassManager([RenameArg], verification_level=VerificationLevel.ROUNDTRIP).run(kernel("add", tmp_path))
    assert e.value.pass_name == "RenameArg" and e.value.op_name == "pl.tensor.add"
    assert "print -> parse -> print changed line" in str(e.value)


@pytest.mark.parametrize("name", ["add", "elementwise", "softmax"])
def test_kernels_compile_at_roundtrip(tmp_path: Path, name: str) -> None:
    compile(kernel(name, tmp_path), output_dir=tmp_path / "o", dump_passes=False, verification_level="roundtrip")


def test_log_levels(monkeypatch: pytest.MonkeyPatch) -> None:
    old = pypto.get_log_level()
    try:
        pypto.set_log_level(pypto.LogLevel.WARN)
        assert pypto.get_log_level() is pypto.LogLevel.WARN and int(pypto.LogLevel.NONE) == 6
        pypto.set_log_level("debug")
        assert pypto.get_log_level() is pypto.LogLevel.DEBUG
    finally:
        pypto.set_log_level(old)


def test_error_classes() -> None:
    assert issubclass(pypto.InternalError, RuntimeError) and not issubclass(pypto.InternalError, pypto.Error)
    e = pypto.PartialCodegenError("half done", {"kernels/a.cpp": "x"})
    assert isinstance(e, RuntimeError) and e.files == {"kernels/a.cpp": "x"}
