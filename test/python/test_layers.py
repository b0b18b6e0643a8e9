"""The layering (docs/architecture.md, Layers): the runtime's protocol instead of the driver, the
``pypto.ir`` / ``pypto.language`` facades, and no ``import_module`` of a named module."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import torch

import pypto.ir as ir
import pypto.language as pl
from pypto.driver.compiled import CompiledProgram
from pypto.driver.jit import JITFunction
from pypto.pipeline.lower import lower_program
from pypto.runtime import RunConfig, Runnable, RunSpec, run
from pypto.runtime.run import prepare

ROOT = Path(__file__).resolve().parents[2]
SOURCE_FOLDERS = ("pypto", "dialects", "ptoas", "tools")


@pl.jit
def double(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="double_k"):
        out[:] = pl.add(a, a)
    return out


class LoweredOnly:
    """A Runnable that is not the driver's: the runtime needs only ``run_spec()``."""

    def __init__(self, spec: RunSpec):
        self._spec = spec
        self.calls = 0

    def run_spec(self, args: object, config: object) -> RunSpec:
        self.calls += 1
        return self._spec


def test_runtime_runs_any_runnable_and_prepares_it_once() -> None:
    a, out = torch.randn(16, 64), torch.zeros(16, 64)
    lowered = lower_program(double.specialize(a, out))
    target = LoweredOnly(RunSpec(lowered, param_names=["a", "out"]))
    assert isinstance(target, Runnable)
    config = RunConfig(check_races=False)
    first = prepare(target, (a, out), config)
    result = run(target, a, out, config=config)
    torch.testing.assert_close(out, 2 * a)
    assert result.total_cycles > 0
    assert target.calls == 2
    assert prepare(target, (a, out), config) is first  # prepared once per spec
    out.zero_()
    run(target, a, out, config=config)
    torch.testing.assert_close(out, 2 * a)


def test_driver_objects_implement_the_runtime_protocol(tmp_path: Path) -> None:
    a, out = torch.randn(16, 64), torch.zeros(16, 64)
    assert isinstance(double, JITFunction) and isinstance(double, Runnable)
    config = RunConfig(save_kernels_dir=str(tmp_path))
    spec = double.run_spec([a, out], config)
    compiled = double.compile(a, out, config=config)
    assert isinstance(compiled, CompiledProgram) and isinstance(compiled, Runnable)
    assert spec is compiled.run_spec() is compiled.run_spec()
    assert spec.program is compiled.lowered
    assert spec.output_dir == compiled.output_dir and spec.param_names == ["a", "out"]


def test_ir_compile_is_the_function_whatever_is_imported_first() -> None:
    assert callable(ir.compile) and ir.compile.__module__ == "pypto.driver.compile"
    code = (
        "import types, pypto.ir.compile; from pypto.ir.compile import CompiledProgram, lower_program; "
        "import pypto.ir as ir; assert not isinstance(ir.compile, types.ModuleType), ir.compile; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_facades_export_the_public_api() -> None:
    for name in ir.__all__:
        assert hasattr(ir, name), name
    for name in pl.__all__:
        assert hasattr(pl, name), name
    assert pl.jit.__module__ == "pypto.driver.jit" and ir.PassManager.__module__ == "pypto.pipeline.manager"


def test_no_import_module_of_a_named_module() -> None:
    """``importlib.import_module("pypto....")`` would hide an import from the layer contracts."""
    found = []
    for folder in SOURCE_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                func = node.func if isinstance(node, ast.Call) else None
                name = getattr(func, "attr", getattr(func, "id", None))
                if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
