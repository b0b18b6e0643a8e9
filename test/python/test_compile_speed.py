"""The compile-speed mechanisms of issue 17: the target disk cache, verification skipped on an
unchanged IR, progress bars (silent off a terminal). Figures are in benchmarks/compile_speed.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pypto.target import disk_cache
from pypto.target import model as target_model


def test_target_disk_cache_round_trip_and_invalidation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(disk_cache.ENV_VAR, str(tmp_path / "cache"))
    copy = tmp_path / "mine.mlir"
    shutil.copy(target_model.target_path("a2a3"), copy)
    monkeypatch.setattr(target_model, "_CACHE", {})
    parsed = target_model.load_target(str(copy))
    assert len(list((tmp_path / "cache").glob("target-*.pickle"))) == 1
    monkeypatch.setattr(target_model, "_CACHE", {})
    calls: list[str] = []
    real = target_model.parse_target_op
    monkeypatch.setattr(target_model, "parse_target_op", lambda *a: calls.append("parse") or real(*a))
    again = target_model.load_target(str(copy))
    assert calls == [] and again == parsed  # read back, not parsed
    copy.write_text(copy.read_text().replace("block_bytes = 32", "block_bytes = 64"))
    monkeypatch.setattr(target_model, "_CACHE", {})
    edited = target_model.load_target(str(copy))
    assert calls == ["parse"] and edited.block_bytes == 64 != parsed.block_bytes
    monkeypatch.setenv(disk_cache.ENV_VAR, "0")
    assert disk_cache.cache_dir() is None
    (tmp_path / "cache").joinpath("junk").write_text("x")
    for f in (tmp_path / "cache").glob("target-*.pickle"):
        f.write_bytes(b"not a pickle")
    monkeypatch.setenv(disk_cache.ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setattr(target_model, "_CACHE", {})
    assert target_model.load_target(str(copy)).block_bytes == 64  # a corrupt file is parsed again


def test_verification_only_where_a_pass_changed_the_ir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One full check (the first); after it, nothing after a pass that changed nothing (the
    placeholders), and after the others only the ops that changed and their ancestors, each on its
    own."""
    from test_pipeline_kernels import kernel

    from pypto.core import op_verify
    from pypto.core.dsl_printer import print_program
    from pypto.passes.pipeline_order import DEFAULT_PIPELINE, KEBAB_NAMES
    from pypto.passes.registry import get_pass
    from pypto.pipeline import verification
    from pypto.pipeline.lower import lower_program

    full: list[str] = []
    real = verification.verify_after_pass
    monkeypatch.setattr(verification, "verify_after_pass", lambda m, name, level: full.append(name) or real(m, name, level))
    booked: list[tuple[str, str]] = []  # (pass, op) of every op verified, in the full check or on its own
    real_op_verify = op_verify._verify_op
    calls = iter(())

    def counting(op) -> None:
        booked.append((next(calls, "?"), op.name))
        real_op_verify(op)

    real_call = verification.PassVerifier.__call__
    ops_after: dict[str, int] = {}

    def per_pass(self, module, pass_name: str) -> None:
        nonlocal calls
        calls = iter(lambda: pass_name, None)  # every op checked is booked to this pass
        real_call(self, module, pass_name)
        ops_after[pass_name] = len(verification.op_keys(module))

    lowered = lower_program(kernel("add", tmp_path))
    monkeypatch.setattr(op_verify, "_verify_op", counting)
    monkeypatch.setattr(verification.PassVerifier, "__call__", per_pass)
    full.clear()
    again = lower_program(kernel("add", tmp_path))
    monkeypatch.undo()
    placeholders = {n for n, _ in DEFAULT_PIPELINE if getattr(get_pass(KEBAB_NAMES[n]), "IS_PLACEHOLDER", False)}
    assert len(full) == 1 and sum(name == full[0] for name, _ in booked) == ops_after[full[0]]  # the first, once per op
    shallow = [(name, op) for name, op in booked if name != full[0]]
    checked = {name for name, _ in shallow}
    assert placeholders and not placeholders & (checked | set(ops_after))  # identity passes: not even looked at
    assert {"OutlineIncoreScopes", "ConvertTensorToTileOps", "InitMemRef"} <= checked  # passes that changed the IR
    memory = [op for name, op in shallow if name == "AllocateMemoryAddr"]  # addresses: a few tile ops change
    assert memory and "arith.constant" not in memory and len(memory) < ops_after["AllocateMemoryAddr"] / 2
    assert print_program(again.module) == print_program(lowered.module)


def test_a_broken_body_is_still_located(tmp_path: Path) -> None:
    """A pass that breaks one function's body (only) fails verification naming the pass and the op."""
    from test_pipeline_kernels import kernel
    from xdsl.dialects import func

    from pypto.passes.base import PyPTOPass
    from pypto.pipeline.lower import lower_program
    from pypto.pipeline.verification import VerificationError

    class Touch(PyPTOPass):
        name = "test-touch"
        PASS_NAME = "TestTouch"

        def apply(self, ctx, module) -> None:  # a harmless body change: verified op by op
            f = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp))
            ret = f.body.block.last_op
            ret.detach()
            f.body.block.add_op(ret)

    class Break(PyPTOPass):
        name = "test-break"
        PASS_NAME = "TestBreak"

        def apply(self, ctx, module) -> None:  # the function's terminator goes: its body no longer verifies
            f = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp))
            f.body.block.last_op.detach()

    lower_program(kernel("add", tmp_path), passes=[Touch, Touch])
    with pytest.raises(VerificationError, match="TestBreak"):
        lower_program(kernel("add", tmp_path), passes=[Touch, Break])


def test_an_unchanged_call_to_a_renamed_function_is_checked(tmp_path: Path) -> None:
    """A pass that renames a function (a top-level change) gets its unchanged callers verified."""
    from test_pipeline_kernels import kernel
    from xdsl.dialects import func
    from xdsl.dialects.builtin import StringAttr

    from pypto.passes.base import PyPTOPass
    from pypto.passes.registry import get_pass
    from pypto.pipeline.lower import lower_program
    from pypto.pipeline.verification import VerificationError

    class Rename(PyPTOPass):
        name = "test-rename"
        PASS_NAME = "TestRename"

        def apply(self, ctx, module) -> None:  # the callee's new name: the call in the other function dangles
            called = {op.callee.string_value() for op in module.walk() if isinstance(op, func.CallOp)}
            f = next(op for op in module.body.block.ops if isinstance(op, func.FuncOp) and op.sym_name.data in called)
            f.sym_name = StringAttr(f.sym_name.data + "_renamed")

    outline = get_pass("outline-incore-scopes")
    assert lower_program(kernel("add", tmp_path), passes=[outline]) is not None
    with pytest.raises(VerificationError, match="TestRename"):
        lower_program(kernel("add", tmp_path), passes=[outline, Rename])


def test_a_value_from_another_function_is_caught_though_the_functions_are_not_reverified(tmp_path: Path) -> None:
    """A function whose own key is unchanged is not verified again when an op inside it changes, but
    what its ``IsolatedFromAbove`` check would read of that op is: an operand defined in another
    function fails, naming the pass."""
    from test_pipeline_kernels import kernel
    from xdsl.dialects import func

    from pypto.passes.base import PyPTOPass
    from pypto.passes.registry import get_pass
    from pypto.pipeline.lower import lower_program
    from pypto.pipeline.verification import VerificationError

    class Leak(PyPTOPass):
        name = "test-leak"
        PASS_NAME = "TestLeak"

        def apply(self, ctx, module) -> None:  # an op of one function reads a value of the other
            first, second = [op for op in module.body.block.ops if isinstance(op, func.FuncOp)][:2]
            user = next(op for op in second.body.block.ops if op.operands)
            outside = next(v for op in first.body.block.ops for v in op.results if v.type == user.operands[0].type)
            user.operands = [outside, *user.operands[1:]]

    outline = get_pass("outline-incore-scopes")
    with pytest.raises(VerificationError, match="TestLeak"):
        lower_program(kernel("add", tmp_path), passes=[outline, Leak])


def test_a_function_retyped_without_its_return_is_caught(tmp_path: Path) -> None:
    """``func.return`` reads its function's type: a pass that changes a function's result types but
    not its return fails, though the return itself did not change."""
    from test_pipeline_kernels import kernel
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, i1

    from pypto.passes.base import PyPTOPass
    from pypto.passes.registry import get_pass
    from pypto.pipeline.lower import lower_program
    from pypto.pipeline.verification import VerificationError

    class Retype(PyPTOPass):
        name = "test-retype"
        PASS_NAME = "TestRetype"

        def apply(self, ctx, module) -> None:
            called = {op.callee.string_value() for op in module.walk() if isinstance(op, func.CallOp)}
            f = next(  # no call reads its type: only its return does
                op
                for op in module.body.block.ops
                if isinstance(op, func.FuncOp) and op.function_type.outputs.data and op.sym_name.data not in called
            )
            f.function_type = FunctionType.from_lists(f.function_type.inputs.data, [i1] * len(f.function_type.outputs))

    outline = get_pass("outline-incore-scopes")
    with pytest.raises(VerificationError, match="TestRetype"):
        lower_program(kernel("add", tmp_path), passes=[outline, Retype])


class _Tty:
    """A stderr stand-in that says it is a terminal and keeps what was drawn."""

    def __init__(self) -> None:
        self.parts: list[str] = []

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.parts.append(text)
        return len(text)

    def flush(self) -> None:
        pass

    @property
    def text(self) -> str:
        return "".join(self.parts)


def test_progress_bar_after_the_delay_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import time

    from pypto.utils import progress as prog

    monkeypatch.delenv(prog.ENV_VAR, raising=False)
    tty = _Tty()
    with prog.progress("compile", total=3, stream=tty, delay=0.05) as bar:
        bar.advance("ConvertToSSA")
        deadline = time.monotonic() + 10
        while not bar.shown and time.monotonic() < deadline:
            time.sleep(0.02)
        assert bar.shown
        bar.name("Simplify")
        with prog.progress("inner", stream=tty) as nested:  # names its step in the outer bar
            nested.advance("step")
            assert not nested.shown and bar.current == "inner step"
    assert not bar.shown and "compile" in tty.text
    quick = _Tty()
    with prog.progress("compile", total=3, stream=quick, delay=5) as bar:  # short work: nothing drawn
        bar.advance("x")
    assert quick.text == "" and not bar.shown
    plain = io.StringIO()  # not a terminal
    with prog.progress("compile", stream=plain, delay=0) as bar:
        time.sleep(0.1)
        assert not bar.shown
    assert plain.getvalue() == ""
    monkeypatch.setenv(prog.ENV_VAR, "0")
    off = _Tty()
    with prog.progress("compile", stream=off, delay=0) as bar:
        time.sleep(0.1)
        assert not bar.shown
    assert off.text == "" and not prog.enabled(off)


def test_compile_names_each_pass_in_its_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    from test_pipeline_kernels import kernel

    compile_module = importlib.import_module("pypto.driver.compile")
    from pypto.ir import compile

    seen: list[tuple[str, int]] = []

    class Bar:
        shown = False

        def advance(self, label: str = "", steps: int = 1) -> None:
            seen.append((label, steps))

        def name(self, label: str) -> None:
            self.advance(label, 0)

    import contextlib

    @contextlib.contextmanager
    def fake(description: str, total: int | None = None, **_: object):
        assert description == "compile" and total == 50
        yield Bar()

    monkeypatch.setattr(compile_module, "progress", fake)
    compile(kernel("add", tmp_path), output_dir=tmp_path / "o", dump_passes=False)
    assert sum(steps for _, steps in seen) == 50  # 49 passes and the codegen
    assert ("ConvertToSSA", 0) in seen and seen[-1] == ("codegen", 1)


def test_dumps_reuse_the_text_of_unchanged_functions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A function a pass left unchanged is not printed again; the dumps are the same bytes as when
    every function is printed each time."""
    from test_pipeline_kernels import kernel

    from pypto.core import dsl_printer
    from pypto.ir import compile

    printed: list[str] = []
    real_init = dsl_printer._FunctionPrinter.__init__

    def counting(self, f, *args, **kwargs) -> None:
        printed.append(f.sym_name.data)
        real_init(self, f, *args, **kwargs)

    monkeypatch.setattr(dsl_printer._FunctionPrinter, "__init__", counting)
    cached = compile(kernel("add", tmp_path), output_dir=tmp_path / "cached", dump_passes=True).output_dir
    with_cache = len(printed)
    real_lines = dsl_printer.FunctionTextCache.lines
    monkeypatch.setattr(dsl_printer.FunctionTextCache, "lines", lambda self, f, e, c, now=None: real_lines(type(self)(), f, e, c))
    printed.clear()
    fresh = compile(kernel("add", tmp_path), output_dir=tmp_path / "fresh", dump_passes=True).output_dir
    assert 0 < with_cache < len(printed)
    names = sorted(p.name for p in (cached / "passes_dump").iterdir())
    assert names == sorted(p.name for p in (fresh / "passes_dump").iterdir()) and len(names) > 40
    for name in names:
        assert (cached / "passes_dump" / name).read_bytes() == (fresh / "passes_dump" / name).read_bytes(), name


def test_the_collector_runs_less_often_during_a_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a compile the gen0 threshold is raised; the thresholds before are restored after, also
    after a failure, and a disabled collector is left alone."""
    import gc

    from test_pipeline_kernels import kernel

    from pypto.ir import compile
    from pypto.passes.base import PyPTOPass
    from pypto.pipeline import verification
    from pypto.utils.gc_policy import COMPILE_THRESHOLDS, fewer_collections

    seen: list[tuple[int, int, int]] = []
    real = verification.PassVerifier.__call__
    monkeypatch.setattr(verification.PassVerifier, "__call__", lambda s, m, n: seen.append(gc.get_threshold()) or real(s, m, n))
    before = gc.get_threshold()
    compile(kernel("add", tmp_path), output_dir=tmp_path / "o", dump_passes=False)
    assert seen and all(t[0] >= COMPILE_THRESHOLDS[0] for t in seen) and gc.get_threshold() == before

    class Boom(PyPTOPass):
        name = "test-boom"
        PASS_NAME = "TestBoom"

        def apply(self, ctx, module) -> None:
            raise ValueError("boom")

    with pytest.raises(Exception, match="boom"):
        compile(kernel("add", tmp_path), output_dir=tmp_path / "p", dump_passes=False, passes=[Boom])
    assert gc.get_threshold() == before
    gc.disable()
    try:
        with fewer_collections():
            assert gc.get_threshold() == before
    finally:
        gc.enable()


def test_the_run_path_of_a_bare_program_compiles_under_the_same_collector_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run(program)`` lowers it (``lower_program``) and builds each kernel unit under
    ``fewer_collections``, as ``ir.compile`` runs: a full collection of what a run made is not paid inside
    the next unit's build. The thresholds before are restored."""
    import gc

    import torch
    from test_pipeline_kernels import kernel

    from pypto.pipeline import verification
    from pypto.ptoas import passes as ptoas_passes
    from pypto.runtime import run
    from pypto.utils.gc_policy import COMPILE_THRESHOLDS

    seen: dict[str, list[int]] = {"passes": [], "unit": []}
    real_verify = verification.PassVerifier.__call__
    monkeypatch.setattr(
        verification.PassVerifier, "__call__", lambda s, m, n: seen["passes"].append(gc.get_threshold()[0]) or real_verify(s, m, n)
    )
    real_pipeline = ptoas_passes.run_ptoas_pipeline
    monkeypatch.setattr(
        ptoas_passes, "run_ptoas_pipeline", lambda *a, **k: seen["unit"].append(gc.get_threshold()[0]) or real_pipeline(*a, **k)
    )
    before = gc.get_threshold()
    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    run(kernel("add", tmp_path), a, b, out)
    assert torch.allclose(out, a + b)
    assert seen["passes"] and all(t >= COMPILE_THRESHOLDS[0] for t in seen["passes"])
    assert seen["unit"] and all(t >= COMPILE_THRESHOLDS[0] for t in seen["unit"])
    assert gc.get_threshold() == before


def test_the_users_of_an_op_changed_in_place_are_verified() -> None:
    """An op whose verifier reads its operand's defining op is checked again when that op changes in
    place, though its own operands did not change."""
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
    from xdsl.ir import Block, Region
    from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def
    from xdsl.utils.exceptions import VerifyException

    from pypto.pipeline.verification import PassVerifier, VerificationError, VerificationLevel

    @irdl_op_definition
    class NonNegative(IRDLOperation):
        name = "test.non_negative"
        value = operand_def(i32)

        def verify_(self) -> None:
            owner = self.value.owner
            if isinstance(owner, arith.ConstantOp) and owner.value.value.data < 0:
                raise VerifyException("a negative constant")

    const = arith.ConstantOp(IntegerAttr(1, i32))
    user = NonNegative.create(operands=[const.result])
    module = ModuleOp(Region(Block([const, user])))
    check = PassVerifier(VerificationLevel.BASIC)
    check(module, "First")
    check(module, "Nothing")
    assert check.checked == []
    const.properties["value"] = IntegerAttr(-1, i32)  # in place: the user's operands are the same
    with pytest.raises(VerificationError, match="Negate"):
        check(module, "Negate")


COLD_PROCESS = """
import gc, json, sys, torch
full = []
gc.callbacks.append(lambda phase, info: full.append(1) if phase == "stop" and info["generation"] == 2 else None)
before = set(sys.modules)
import pypto.language as pl
after_import = set(sys.modules) - before
full_in_import = len(full)

@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out

from pypto.runtime import RunConfig
add.compile(torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128),
            config=RunConfig(save_kernels_dir=sys.argv[1]))
print(json.dumps({"import": sorted(after_import), "compile": sorted(set(sys.modules) - before),
                  "full_collections": [full_in_import, len(full)]}))
"""


def test_a_fresh_process_loads_only_what_the_add_kernel_uses(tmp_path: Path) -> None:
    """``import pypto.language`` brings no codegen, runtime, report or tool module; the first compile
    of the add kernel builds no ISA-addition op class, no memref dialect and no run-time collector;
    neither runs a full cycle collection (of torch's objects too: ``gc_policy``)."""
    script = tmp_path / "cold.py"  # a file: the jit front end reads the kernel's source
    script.write_text(COLD_PROCESS)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "out")], capture_output=True, text=True,
                          check=True, cwd=tmp_path)  # fmt: skip
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    heavy = ("pypto.ptoas", "pypto.runtime", "pypto.reports", "pypto.tools", "pypto.debug", "pypto.device")
    assert [m for m in loaded["import"] if m.startswith(heavy)] == []
    assert "pypto.dialects.distributed_ops" not in loaded["compile"]  # the multi-chip dialect: on first use
    never = ("pypto.ptoas.dialect.isa_tile_ops", "pypto.ptoas.emitc.isa", "pypto.ptoas.emitc.memref",
             "xdsl.dialects.memref", "pypto.runtime.dfx.swimlane", "pypto.reports", "pypto.device",
             "pypto.ptoas.dialect.comm_ops", "pypto.ptoas.emitc.comm", "pypto.ptoas.codegen.comm_ops")  # fmt: skip
    assert [m for m in loaded["compile"] if m.startswith(never)] == []
    assert "pypto.ptoas.dialect.vector_ops" in loaded["compile"]  # the compile did emit pto
    assert loaded["full_collections"] == [0, 0]


def test_lazy_handlers_and_dialect_are_complete() -> None:
    """What the cold path defers is still found: the ISA op classes by name, their C++ handlers,
    the ``pto`` dialect in a parsing context, the pld ops in the front end's table and context."""
    from pypto.core.context import make_context
    from pypto.frontend.sugar import OPS
    from pypto.ptoas.context import make_pto_context
    from pypto.ptoas.dialect import PTO_OPS, op_class
    from pypto.ptoas.emitc.context import load_all_handlers

    assert op_class("pto.tfmod") is not None and op_class("pto.no_such_op") is None
    handlers = load_all_handlers()
    assert any(cls.name == "pto.tfmod" for cls in handlers) and any(cls.name == "memref.alloc" for cls in handlers)
    assert make_pto_context().get_optional_op("pto.tfmod") is op_class("pto.tfmod")
    assert len({cls.name for cls in PTO_OPS}) == len(PTO_OPS)
    assert "pld.tensor.allreduce" in OPS and OPS["pld.tensor.allreduce"].name == "pld.tensor.allreduce"
    assert make_context().get_optional_op("pld.tensor.allreduce") is OPS["pld.tensor.allreduce"]


def test_long_lived_blocks_collect_nothing_and_move_what_they_made_to_the_oldest_generation() -> None:
    """``gc_policy.long_lived`` (``import pypto.language``, the first load of the passes and the codegen):
    no collection inside, the new objects end in generation 2 (not traversed by young collections), the
    thresholds are restored; a caller's frozen objects stay frozen; a disabled collector is left alone."""
    import gc

    from pypto.utils.gc_policy import long_lived

    class Node:
        def __init__(self) -> None:
            self.me = self

    before = gc.get_threshold()
    runs: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            runs.append(info["generation"])

    gc.callbacks.append(count)
    try:
        with long_lived():
            made = [Node() for _ in range(20_000)]
    finally:
        gc.callbacks.remove(count)
    assert runs == [] and gc.get_threshold() == before
    young = {id(o) for o in gc.get_objects(0)} | {id(o) for o in gc.get_objects(1)}
    assert not any(id(o) in young for o in made[:100])
    assert any(o is made[0] for o in gc.get_objects(2))

    gc.freeze()
    try:
        with long_lived():
            later = Node()
        assert gc.get_freeze_count() > 0 and any(o is later for o in gc.get_objects(0))
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        with long_lived():
            assert gc.get_threshold() == before
    finally:
        gc.enable()


def _recording_progress(seen: list[tuple[str, str, int]]):
    """A stand-in for :func:`pypto.utils.progress.progress` that records (description, label, steps)."""
    import contextlib

    class Bar:
        shown = False

        def __init__(self, description: str) -> None:
            self.description = description

        def advance(self, label: str = "", steps: int = 1) -> None:
            seen.append((self.description, label, steps))

        def name(self, label: str) -> None:
            self.advance(label, 0)

    @contextlib.contextmanager
    def fake(description: str, total: int | None = None, **_: object):
        seen.append((description, "<total>", total or 0))
        yield Bar(description)

    return fake


def test_run_and_ir_trace_name_each_task_and_snapshot_in_their_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17 goal 7 beyond the compile: a run's bar counts its tasks and names each one running; the
    ir-trace payload's bar names each snapshot it diffs."""
    import importlib

    import torch

    import pypto.language as pl
    from pypto.runtime import RunConfig

    run_module = importlib.import_module("pypto.runtime.run")
    seen: list[tuple[str, str, int]] = []
    monkeypatch.setattr(run_module, "progress", _recording_progress(seen))

    @pl.jit
    def add_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out

    a, b, out = torch.randn(32, 32), torch.randn(32, 32), torch.zeros(32, 32)
    add_kernel(a, b, out, config=RunConfig(save_kernels_dir=str(tmp_path / "b")))
    assert torch.allclose(out, a + b)
    run_bar = [s for s in seen if s[0] == "run"]
    assert run_bar[0] == ("run", "<total>", 1)  # one task
    assert run_bar[1:] == [("run", "t0 @add_kernel_incore_0", 1)]  # the task running, counted once

    from pypto.tools.ir_trace import payload as payload_module
    from pypto.tools.ir_trace.discovery import discover

    seen.clear()
    monkeypatch.setattr(payload_module, "progress", _recording_progress(seen))
    dump = discover("/work/shared/reference/upstream-builds/softmax_rows/passes_dump")
    payload_module.build_payload(dump, 3)
    assert seen[0] == ("ir-trace", "<total>", len(dump.snapshots))
    assert [label for _, label, _ in seen[1:]] == [s.name or s.file for s in dump.snapshots]


EXIT_CHILD = """
import atexit, gc, sys

def after_pypto_handler() -> None:  # registered before ``import pypto``: runs after its handler
    print(f"frozen={gc.get_freeze_count()}", flush=True)

atexit.register(after_pypto_handler)
import pypto

class Holder:
    def __init__(self, path: str) -> None:
        self.me, self.path = self, path  # a reference cycle: only a collection frees it

    def __del__(self) -> None:
        with open(self.path, "w") as file:
            file.write("finalized")

gc.set_threshold(0)  # no automatic collection before exit (the collector stays enabled)
Holder(sys.argv[1])
"""


@pytest.mark.parametrize("env_value", [None, "0"])
def test_exit_collects_the_garbage_then_freezes_the_rest(tmp_path: Path, env_value: str | None) -> None:
    """``import pypto`` registers an exit handler (gc_policy.collect_then_freeze_at_exit): the garbage
    at exit is collected, so the finalizer of an object in an unreachable cycle runs, and the rest is frozen, so
    CPython's finalization does not traverse it again. ``PYPTO_EXIT_FREEZE=0`` leaves the exit to CPython."""
    import os

    script, data = tmp_path / "child.py", tmp_path / "data.txt"
    script.write_text(EXIT_CHILD)
    env = {k: v for k, v in os.environ.items() if k != "PYPTO_EXIT_FREEZE"}
    if env_value is not None:
        env["PYPTO_EXIT_FREEZE"] = env_value
    done = subprocess.run([sys.executable, str(script), str(data)], capture_output=True, text=True, env=env, check=True)
    frozen = int(done.stdout.strip().rpartition("frozen=")[2])
    assert (frozen > 10_000) if env_value is None else (frozen == 0), done.stdout
    assert data.read_text() == "finalized"
