"""The examples' kernels as C++ (issue 5 item 5): compiled, built by g++, run on torch memory.

For every example case whose lowered program is one kernel called once from the Orchestration
function on the Orchestration's own parameters (see kernel_harness.single_kernel_call), the case
is compiled into tmp_path, ``ptoas/<kernel>.cpp`` is built into a shared library
(``pypto.ptoas.build.build_shared``), called on the data pointers of the case's torch inputs
(kernel parameter i <- the Orchestration argument in the call's position i), and every Out
tensor is compared with the case's torch reference (the case's rtol/atol, at least the dtype's).

Skipped (detected from the lowered program, not listed by hand), as of this writing:

- intermediate/01_fused_linear.py::fused_matmul_bias, ::fused_linear_relu -- the
  Orchestration creates an intermediate tensor (pl.tensor.create) and calls two kernels;
- intermediate/07_task_graph.py::inferred_edge -- two kernels (stage1, stage2);
- advanced/01_split_k.py::matmul_split_k -- two kernels (split_k, zero_init), one in an scf.for.

Those run end to end through the runtime in test_examples.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from kernel_harness import CASES, compile_single, cpp_library, tolerance


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("examples-cpp-libs")


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_example_kernel_cpp_matches_torch(case_id: str, tmp_path: Path, lib_dir: Path) -> None:
    unit = compile_single(case_id, tmp_path / "build")
    case = unit.case
    assert unit.cpp.is_file(), f"ptoas did not write {unit.cpp}"
    lib = cpp_library(unit, lib_dir)

    args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in unit.inputs)
    for a in args:
        assert not isinstance(a, torch.Tensor) or a.is_contiguous()
    expected = case.expected(args)
    # pl.Out buffers start as NaN so an element the kernel never writes cannot pass as a zero.
    for pos in unit.output_positions().values():
        if unit.write_only(pos) and args[pos].is_floating_point():
            args[pos].fill_(float("nan"))
    unit.launch(lib, args)  # every SPMD block (one call for a plain kernel)

    for i, (name, a) in enumerate(zip(case.param_names, args, strict=True)):
        if name not in case.outputs and isinstance(a, torch.Tensor):
            assert torch.equal(a, unit.inputs[i]), f"the kernel wrote its input '{name}'"
    for name, pos in unit.output_positions().items():
        got, want = args[pos], expected[name]
        rtol, atol = tolerance(case, got.dtype)
        torch.testing.assert_close(got, want.to(got.dtype), rtol=rtol, atol=atol, msg=lambda m, n=name: f"{n}: {m}")
