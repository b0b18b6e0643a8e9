"""The one pass runner (pypto.pipeline.pass_runner): order of the hooks, the error
policy, the dump naming rule and the listeners shared by the three tools."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from pypto.diagnostics import DiagnosticError, error_at
from pypto.errors import InternalError
from pypto.pipeline.pass_runner import (
    BUG_NOTE,
    DumpListener,
    PassListener,
    PassRunner,
    PrintIRListener,
    TimingListener,
    classify_error,
    dump_file_name,
    pass_label,
)


@dataclass(frozen=True)
class Tag(ModulePass):
    """Sets the module attribute ``tag`` to ``value`` (changes the IR when the value is new)."""

    name = "tag-module"
    value: str = "x"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.attributes["tag"] = StringAttr(self.value)


@dataclass(frozen=True)
class Raise(ModulePass):
    name = "raise-it"
    PASS_NAME: ClassVar[str] = "RaiseIt"
    error: Exception = ValueError("bad index")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise self.error


class Record(PassListener):
    def __init__(self) -> None:
        self.events: list[str] = []

    def begin(self, module: ModuleOp) -> None:
        self.events.append("begin")

    def before_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        self.events.append(f"before {index} {pass_.name}")

    def after_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        self.events.append(f"after {index} {pass_.name}")

    def on_failure(self, index: int, pass_: ModulePass, module: ModuleOp, error: BaseException) -> None:
        self.events.append(f"failed {index} {pass_.name} {type(error).__name__}")


def test_dump_names_of_the_three_tools() -> None:
    assert dump_file_name(0, None, initial="frontend") == "00_frontend.py"  # pl pipeline
    assert dump_file_name(12, "MemoryReuse") == "12_after_MemoryReuse.py"
    assert dump_file_name(3, "TestBoom", "failed") == "03_failed_TestBoom.py"
    assert dump_file_name(4, "MemoryReuse", suffix=".log") == "04_after_MemoryReuse.log"
    assert dump_file_name(0, None, suffix=".mlir") == "00_input.mlir"  # pypto-opt, ptoas
    assert dump_file_name(2, "plan-memory", suffix=".mlir") == "02_after_plan-memory.mlir"
    assert pass_label(Tag()) == "TagModule" and pass_label(Raise) == "RaiseIt"


def test_hooks_in_order_and_check_after_each_pass() -> None:
    rec, checked = Record(), []
    runner = PassRunner([Tag("a"), Tag("b")], [rec], first_index=5, check=lambda p, m: checked.append(p.value))
    module = ModuleOp([])
    assert runner.run(Context(), module) is module
    assert rec.events == ["begin", "before 5 tag-module", "after 5 tag-module", "before 6 tag-module", "after 6 tag-module"]
    assert checked == ["a", "b"] and module.attributes["tag"] == StringAttr("b")


def test_a_python_error_in_a_pass_is_an_internal_error() -> None:
    rec = Record()
    policy = PassRunner([Raise()], [rec], error_policy=lambda e, p, i: classify_error(e, pass_label(p), i))
    with pytest.raises(InternalError, match="pass RaiseIt failed: ValueError: bad index") as e:
        policy.run(Context(), ModuleOp([]))
    assert isinstance(e.value.__cause__, ValueError)
    assert BUG_NOTE in e.value.__notes__ and "in pass 01 RaiseIt" in e.value.__notes__
    assert rec.events == ["begin", "before 1 raise-it", "failed 1 raise-it InternalError"]


def test_a_located_diagnostic_stays_a_user_error() -> None:
    module = ModuleOp([])
    error = error_at(module, "tile does not fit")
    runner = PassRunner([Raise(error)], error_policy=lambda e, p, i: classify_error(e, pass_label(p), i))
    with pytest.raises(DiagnosticError) as e:
        runner.run(Context(), module)
    assert e.value is error and e.value.__notes__ == ["in pass 01 RaiseIt"]


def test_without_a_policy_the_error_is_raised_as_it_is() -> None:
    with pytest.raises(ValueError, match="bad index"):
        PassRunner([Raise()]).run(Context(), ModuleOp([]))


def test_dump_print_and_timing_listeners(tmp_path: Path) -> None:
    stream = io.StringIO()
    timer = TimingListener()
    render = lambda m: f"tag={m.attributes.get('tag')}\n"  # noqa: E731
    listeners = [timer, PrintIRListener(stream, render, only_changed=True), DumpListener(tmp_path / "d", render, ".txt")]
    PassRunner([Tag("a"), Tag("a"), Tag("b")], listeners).run(Context(), ModuleOp([]))
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        "00_input.txt", "01_after_TagModule.txt", "02_after_TagModule.txt", "03_after_TagModule.txt"
    ]
    assert (tmp_path / "d" / "00_input.txt").read_text() == "tag=None\n"
    # the second pass set the same value: not a change, not printed
    assert stream.getvalue().count("IR Dump After TagModule (tag-module)") == 2
    assert list(timer.timings) == ["tag-module"]
    with timer.measure("(printer)"):
        pass
    assert "(printer)" in timer.report() and "(100.0%)  Total" in timer.report()
