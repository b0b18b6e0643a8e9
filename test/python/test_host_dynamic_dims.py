"""A HOST orchestrator's ``pl.dynamic`` extents other than the rank count (upstream's
``test_l3_composite_shape_dim``: ``[M * 2, N]`` parameters) are bound from the call's tensors: a bare
``M`` is its extent, ``M * 2`` is solved for ``M``; a program whose world-size binding does not compile
is built at its first call, and a call whose tensors fit no binding is a clear error."""

from __future__ import annotations

from pathlib import Path

import dist_l3_programs as p3
import pytest
import torch

import pypto.language as pl
from pypto.driver.host_trace import HostPlanError, bind_dynamic_dims
from pypto.ir.distributed_compiled_program import DistributedConfig

M, N = pl.dynamic("M"), pl.dynamic("N")
ANNS = {"a": pl.Tensor[[M * 2, N], pl.FP32], "b": pl.Out[pl.Tensor[[M * 2, N], pl.FP32]]}


def test_bare_and_composite_extents_bind_from_the_tensors() -> None:
    assert bind_dynamic_dims(["a", "b"], ANNS, [torch.zeros(128, 64), torch.zeros(128, 64)]) == {"M": 64, "N": 64}


@pytest.mark.parametrize(
    ("shapes", "message"),
    [([(128, 64), (128, 32)], r"parameter 'b' dimension 1: N is 64 \(M=64, N=64\), the tensor has 32"),
     ([(127, 64), (127, 64)], r"parameter 'a' dimension 0: no value of M makes \(M \* 2\) equal 127"),
     ([(128, 64), (128, 64, 1)], r"parameter 'b': a tensor of rank 2 \(\(M \* 2\), N\), got shape \[128, 64, 1\]")],
)  # fmt: skip
def test_tensors_that_fit_no_binding_are_named(shapes: list[tuple[int, ...]], message: str) -> None:
    with pytest.raises(HostPlanError, match=message):
        bind_dynamic_dims(["a", "b"], ANNS, [torch.zeros(s) for s in shapes])


def test_composite_dims_build_at_the_first_call_and_run(tmp_path: Path) -> None:
    from pypto import ir

    dc = DistributedConfig(device_ids=[0, 1], num_sub_workers=0, timeout_s=60.0)
    compiled = ir.compile(p3.CompositeDims, output_dir=tmp_path / "l3", distributed_config=dc)
    assert not compiled.built  # [M * 2, K] bound to the world size (4 x 2) cannot hold a 16 x 64 window
    a, b = torch.randn(16, 64), torch.randn(16, 64)
    f, g = torch.zeros(16, 64), torch.zeros(16, 64)
    compiled(a, b, f, g)
    assert compiled.built and [p["shape"] for p in compiled.params] == [[16, 64]] * 4
    assert torch.allclose(f, a + b) and torch.allclose(g, a - b)
    assert (tmp_path / "l3" / "next_levels" / "add").is_dir()
    a, b = torch.randn(32, 64), torch.randn(32, 64)  # another binding: rebuilt in the same directory (was:
    f, g = torch.zeros(32, 64), torch.zeros(32, 64)  # OutputDirError, the L3 build there taken for no build)
    compiled(a, b, f, g)
    assert [p["shape"] for p in compiled.params] == [[32, 64]] * 4
    assert torch.allclose(f[:16], a[:16] + b[:16]) and torch.allclose(g[:16], a[:16] - b[:16])  # 16-row tiles
    with pytest.raises(HostPlanError, match="no value of M"):
        compiled(torch.zeros(15, 64), b, f, g)
