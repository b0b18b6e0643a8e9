"""Shared helpers for running the examples' kernels outside the runtime (g++ library, interpreter).

Used by test_examples_cpp.py and test_interp_vs_cpp.py:

- :data:`CASES` -- every example case by id (loaded by test_examples.py);
- :func:`single_kernel_call` -- whether a lowered program is "one kernel called once from the
  Orchestration function with the Orchestration's own parameters", and if so which kernel and
  which Orchestration parameter feeds each kernel parameter (else the reason it is not);
- :func:`compile_single` -- compile a case into a directory and return its :class:`SingleKernel`
  (or skip the test with the reason);
- :func:`cpp_library` -- build ``ptoas/<unit>.cpp`` into a shared library (pypto.ptoas.build).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from test_examples import CASES, Case, compile_case
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument

from pypto.dialects.enums import FunctionType, ParamDirection
from pypto.dialects.program import function_type, param_directions
from pypto.ptoas.build import build_shared
from pypto.ptoas.codegen.function import KERNEL_TYPES
from pypto.ptoas.emitc.runner import KernelLibrary

__all__ = ["CASES", "SingleKernel", "compile_single", "cpp_library", "single_kernel_call", "tolerance"]


@dataclass
class SingleKernel:
    """One example case lowered to a single kernel call.

    ``arg_index[i]`` is the Orchestration (= the case's) parameter passed as the kernel's
    parameter ``i``; ``pto`` / ``cpp`` are the unit's files in the build directory."""

    case: Case
    build_dir: Path
    kernel: str
    arg_index: list[int]
    inputs: tuple[torch.Tensor, ...]
    directions: list[ParamDirection]
    block_num: int = 1
    """The call's SPMD blocks (``with pl.spmd(n)``): the kernel runs once per block index."""

    def launch(self, lib: KernelLibrary, values: tuple[Any, ...] | list[Any]) -> None:
        """Run the kernel in ``lib`` on ``values`` as every block of its launch, in block order."""
        try:
            for block in range(self.block_num):
                lib.set_block(block, self.block_num)
                lib.call(self.kernel, *self.kernel_args(values))
        finally:
            lib.set_block(0, 1)

    @property
    def pto(self) -> Path:
        return self.build_dir / "ptoas" / f"{self.kernel}.pto"

    @property
    def cpp(self) -> Path:
        return self.build_dir / "ptoas" / f"{self.kernel}.cpp"

    def kernel_args(self, values: tuple[Any, ...] | list[Any]) -> list[Any]:
        """The kernel's arguments, taken from ``values`` (one per case parameter) by position."""
        return [values[i] for i in self.arg_index]

    def output_positions(self) -> dict[str, int]:
        """Output name -> its position among the case's parameters."""
        return {name: self.case.param_names.index(name) for name in self.case.outputs}

    def write_only(self, position: int) -> bool:
        """Whether the case's parameter at ``position`` is ``pl.Out`` (not read by the kernel)."""
        return self.directions[position] is ParamDirection.Out


def single_kernel_call(functions: dict[str, func.FuncOp]) -> tuple[str, list[int]] | str:
    """``(kernel name, orchestration parameter index per kernel parameter)`` or why not.

    The program qualifies when it has one Orchestration function whose body is exactly one
    ``func.call`` of an AIC/AIV/InCore function (the only kernel of the program) on the
    Orchestration's own parameters, followed by the return."""
    orchs = [f for f in functions.values() if function_type(f) is FunctionType.Orchestration]
    kernels = [n for n, f in functions.items() if function_type(f) in KERNEL_TYPES]
    if len(orchs) != 1:
        return f"{len(orchs)} Orchestration functions"
    others = sorted(n for n, f in functions.items() if f is not orchs[0] and n not in kernels)
    if others:
        return f"non-kernel functions besides the Orchestration: {others}"
    if len(kernels) != 1:
        return f"{len(kernels)} kernels ({', '.join(sorted(kernels))})"
    orch = orchs[0]
    ops = [op for op in orch.walk() if op is not orch]
    extra = sorted({op.name for op in ops if not isinstance(op, func.CallOp | func.ReturnOp)})
    if extra:
        return f"the Orchestration does more than one call: {', '.join(extra)}"
    calls = [op for op in ops if isinstance(op, func.CallOp)]
    if len(calls) != 1:
        return f"the Orchestration makes {len(calls)} calls"
    call = calls[0]
    if call.callee.root_reference.data != kernels[0]:
        return f"the Orchestration calls @{call.callee.root_reference.data}, not the kernel"
    entry = orch.body.block
    index: list[int] = []
    for operand in call.arguments:
        if not (isinstance(operand, BlockArgument) and operand.block is entry):
            return "a kernel argument is not an Orchestration parameter"
        index.append(operand.index)
    return kernels[0], index


_COMPILED: dict[str, SingleKernel | str] = {}
_LIBRARIES: dict[Path, KernelLibrary] = {}


def compile_single(case_id: str, build_dir: Path) -> SingleKernel:
    """Compile ``CASES[case_id]`` into ``build_dir`` (no pass dumps); skip when it is not a single kernel call.

    Compiled once per session: a later call for the same case returns the first build (its
    ``inputs`` are shared, so callers clone them before a kernel writes)."""
    if case_id not in _COMPILED:
        try:
            _COMPILED[case_id] = _compile_single(case_id, build_dir)
        except pytest.skip.Exception as e:
            _COMPILED[case_id] = str(e)
    found = _COMPILED[case_id]
    if isinstance(found, str):
        pytest.skip(found)
    return found


def _compile_single(case_id: str, build_dir: Path) -> SingleKernel:
    case = CASES[case_id]
    inputs = case.inputs()
    compiled = compile_case(case, build_dir, dump_passes=False, inputs=inputs)
    assert compiled.lowered is not None
    found = single_kernel_call(compiled.lowered.func_ops)
    if isinstance(found, str):
        pytest.skip(f"not a single kernel call: {found}")
    kernel, index = found
    assert len(compiled.param_names) == len(case.param_names), (compiled.param_names, case.param_names)
    orch = compiled.lowered.func_ops[compiled.orchestration_names[0]]
    (call,) = [op for op in orch.walk() if isinstance(op, func.CallOp)]
    blocks = call.attributes.get("pl.block_num")
    block_num = blocks.value.data if isinstance(blocks, IntegerAttr) else 1
    return SingleKernel(case, Path(compiled.output_dir), kernel, index, inputs, list(param_directions(orch)), block_num)


def cpp_library(unit: SingleKernel, lib_dir: Path) -> KernelLibrary:
    """``ptoas/<unit>.cpp`` built by g++ into a shared library in ``lib_dir`` and loaded (once per session)."""
    if unit.cpp not in _LIBRARIES:
        _LIBRARIES[unit.cpp] = KernelLibrary(build_shared(unit.cpp, lib_dir, name=unit.kernel))
    return _LIBRARIES[unit.cpp]


def tolerance(case: Case, dtype: torch.dtype) -> tuple[float, float]:
    """``(rtol, atol)``: the case's, widened to what the output dtype can resolve."""
    floor = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2)}.get(dtype, (0.0, 0.0))
    return max(case.rtol, floor[0]), max(case.atol, floor[1])
