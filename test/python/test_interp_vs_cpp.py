"""Interpreter vs g++-compiled C++, bit for bit, on the examples' fp32 vector kernels (issue 6 item 6).

Each fp32 AIV example kernel (one kernel called once from the Orchestration, see
kernel_harness.single_kernel_call) is compiled; its ``ptoas/<kernel>.pto`` unit goes through the
ptoas pipeline (insert-sync, as codegen does before emitting C++) and runs in the interpreter on
numpy copies of the case's inputs, while ``ptoas/<kernel>.cpp`` is built by g++ and runs on torch
copies of the same inputs. Every output must be equal bit for bit (compared as uint32).

Known gaps (strict xfails, so fixing them turns these tests red until the mark is removed):

- ``texp`` (every kernel with exp: the activations silu/gelu/swiglu/geglu, the double-buffer
  exp kernels, softmax): the interpreter computes ``np.exp`` on float32 -- numpy's own SIMD
  float32 exp (up to 2 ulp, and dispatch-dependent: AVX512F / AVX2 / baseline differ) -- while
  pto_cpu.hpp's ``std::exp(float)`` is glibc ``expf``; about 40% of the elements differ by 1-2 ulp.
  Computing exp in float64 on one side only is not enough (glibc expf is not correctly rounded:
  about 1 element in 2000 still differs). Verified fix, on both sides: exp in float64, one
  rounding to the element type --
  ``pypto/device/interpreter/numerics.py``: ``UNARY["exp"] = lambda a:
  np.exp(a.astype(np.float64)).astype(a.dtype)`` and ``BINARY["expdif"] = lambda a, b:
  np.exp((a - b).astype(np.float64)).astype(np.result_type(a, b))``;
  ``ptoas/include/pto_cpu.hpp``: ``PTO_CPU_UNARY(TEXP, static_cast<decltype(x)>(std::exp(
  static_cast<double>(x))))`` and the same for ``TROWEXPANDEXPDIF`` / ``TCOLEXPANDEXPDIF``
  (``std::exp(x - y)`` -> ``static_cast<decltype(x)>(std::exp(static_cast<double>(x - y)))``).
- ``trowsum`` (softmax, rms_norm, layer_norm): the interpreter's ``ROW_REDUCE["sum"]`` is
  ``a.sum(axis=1, dtype=a.dtype)``, numpy's pairwise summation along a contiguous row, while the
  header's ``row_reduce`` adds left to right; the sums differ in the last bits (up to 512 ulp on
  layer_norm's output after the mean is subtracted). Verified fix in numerics.py: a sequential
  row sum, e.g. ``acc = a[:, 0].copy(); for j in range(1, a.shape[1]): acc += a[:, j]; return
  acc[:, None]`` (vectorised over rows, the header's order).

With both fixes applied (checked by patching a copy of the header and the interpreter's tables),
all 20 fp32 vector kernels below agree bit for bit. Cube (matmul) kernels are not element-wise
and are skipped (their fp32 sums also differ in order: numpy matmul vs the header's loop).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from kernel_harness import CASES, SingleKernel, compile_single, cpp_library
from test_interpreter import synced

from pypto.device.interpreter import run_kernel

EXP = (
    "texp: interpreter np.exp on float32 (numpy SIMD expf, <= 2 ulp) != pto_cpu.hpp std::exp(float) "
    "(glibc expf); fix both to exp in float64 rounded once (numerics.py UNARY['exp']/BINARY['expdif'], "
    "pto_cpu.hpp TEXP/TROWEXPANDEXPDIF/TCOLEXPANDEXPDIF) -- see the module docstring"
)
ROWSUM = (
    "trowsum: interpreter a.sum(axis=1) is numpy's pairwise summation, pto_cpu.hpp row_reduce adds "
    "left to right; fix numerics.py ROW_REDUCE['sum'] to a sequential row sum -- see the module docstring"
)

KNOWN_GAPS: dict[str, str] = {
    "advanced/07_double_buffer.py::single_buffer": EXP,
    "advanced/07_double_buffer.py::pipelined": EXP,
    "advanced/07_double_buffer.py::pipelined_tail": EXP,
    "beginner/04_activation.py::silu": EXP,
    "beginner/04_activation.py::gelu": EXP,
    "beginner/04_activation.py::swiglu": EXP,
    "beginner/04_activation.py::geglu": EXP,
    "intermediate/02_softmax.py::tile_softmax": f"{EXP}; {ROWSUM}",
    "intermediate/02_softmax.py::softmax_rows": f"{EXP}; {ROWSUM}",
    "intermediate/03_normalization.py::rms_norm": ROWSUM,
    "intermediate/03_normalization.py::layer_norm": ROWSUM,
}

# Must be covered (and run, not skipped): add, mul, scalar ops, relu, exp chains, softmax.
REQUIRED = {
    "beginner/01_hello_world.py::hello_world",
    "beginner/02_elementwise.py::tile_mul_128",
    "beginner/03_scalar_ops.py::fused_add_scale",
    "beginner/03_scalar_ops.py::tensor_scale",
    "beginner/04_activation.py::fused_add_relu",
    "beginner/04_activation.py::silu",
    "intermediate/02_softmax.py::tile_softmax",
}


def _params() -> list[object]:
    return [
        pytest.param(cid, marks=pytest.mark.xfail(reason=KNOWN_GAPS[cid], raises=pytest.fail.Exception, strict=True))
        if cid in KNOWN_GAPS
        else cid
        for cid in sorted(CASES)
    ]


def _fp32_vector(unit: SingleKernel) -> str | None:
    """Why the unit is out of scope (None when it is an fp32 vector kernel)."""
    if not (unit.build_dir / "kernels" / "aiv" / f"{unit.kernel}.cpp").is_file():
        return "not a vector (AIV) kernel"
    dtypes = {a.dtype for a in unit.inputs if isinstance(a, torch.Tensor)}
    return None if dtypes == {torch.float32} else f"not fp32 ({sorted(map(str, dtypes))})"


def test_required_cases_exist() -> None:
    assert REQUIRED <= set(CASES), sorted(REQUIRED - set(CASES))


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("interp-vs-cpp-libs")


@pytest.mark.parametrize("case_id", _params())
def test_interpreter_and_cpp_agree_bitwise(case_id: str, tmp_path: Path, lib_dir: Path) -> None:
    unit = compile_single(case_id, tmp_path / "build")
    why = _fp32_vector(unit)
    if why is not None:
        assert case_id not in REQUIRED, f"{case_id} is required but {why}"
        pytest.skip(why)

    cpp_args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in unit.inputs)
    cpp_library(unit, lib_dir).call(unit.kernel, *unit.kernel_args(cpp_args))

    np_args = [a.numpy().copy() if isinstance(a, torch.Tensor) else a for a in unit.inputs]
    module, positions, name = synced(unit.pto)
    run = run_kernel(module, unit.kernel, unit.kernel_args(np_args), positions=positions, pto_file=name)
    assert run.races == [], run.race_messages

    for out, pos in unit.output_positions().items():
        got_cpp = cpp_args[pos].numpy().view(np.uint32)
        got_interp = np_args[pos].view(np.uint32)
        differ = got_cpp != got_interp
        if differ.any():
            ulps = np.abs(got_cpp.view(np.int32).astype(np.int64) - got_interp.view(np.int32).astype(np.int64))
            pytest.fail(
                f"{out}: {int(differ.sum())} of {differ.size} elements differ between the interpreter and "
                f"the C++ (max {int(ulps.max())} ulp; ops: {sorted({r.op for r in run.records})})"
            )
