"""An L3 program's host arguments are checked in the caller against the parameters it was compiled for
(shape and dtype, as the single-chip run words it: ``argument 'a' has shape ...; the program was compiled
for ...``): a wrong one is refused before any rank runs, and a prepared worker stays usable after it."""

from __future__ import annotations

from pathlib import Path

import dist_l3_programs as p3
import dist_persist_programs as pp
import dist_worker_programs as pw
import pytest
import torch

from pypto import ir
from pypto.driver.host_trace import HostPlanError
from pypto.errors import ArgumentTypeError, InvalidArgumentError
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig

N = pp.N


def dc(world: int = 2) -> DistributedConfig:
    return DistributedConfig(device_ids=list(range(world)), timeout_s=60.0, num_sub_workers=0)


@pytest.fixture(scope="module")
def permuted(tmp_path_factory: pytest.TempPathFactory) -> DistributedCompiledProgram:
    """``host_orch(a, w, f)``, each ``[2, 2, N]`` float32."""
    return ir.compile(pp.PermutedAdd, distributed_config=dc(), output_dir=str(tmp_path_factory.mktemp("permuted")))


BAD = [
    # was: ran silently, row 2 ignored
    (torch.ones(3, 2, N), InvalidArgumentError, r"argument 'a' has shape \(3, 2, 64\); the program was compiled "
                                                r"for \(2, 2, 64\)"),
    # was: a DistributedRunError from both ranks (the chip's check), which ends a prepared worker's processes
    (torch.ones(2, 2, 8), InvalidArgumentError, r"argument 'a' has shape \(2, 2, 8\); the program was compiled "
                                                r"for \(2, 2, 64\)"),
    (torch.ones(2, 2, N, dtype=torch.float64), ArgumentTypeError,
     r"argument 'a' has dtype float64; the program expects float32"),
    ([[1.0] * N] * 2, ArgumentTypeError, r"argument 'a' must be a tensor .*got list"),
]  # fmt: skip


@pytest.mark.parametrize(("a", "error", "message"), BAD)
def test_a_call_with_a_wrong_argument_is_refused_before_any_rank_runs(
    permuted: DistributedCompiledProgram, a: object, error: type, message: str
) -> None:
    w, f = torch.ones(2, 2, N), torch.zeros(2, 2, N)
    permuted.last_run = None
    with pytest.raises(error, match=message):
        permuted(a, w, f)
    assert permuted.last_run is None and not f.any()


def test_a_prepared_worker_refuses_a_wrong_argument_in_the_caller_and_goes_on(
    permuted: DistributedCompiledProgram,
) -> None:
    a, w, f = torch.ones(2, 2, N), torch.stack([torch.full((2, N), 10.0), torch.full((2, N), 20.0)]), torch.zeros(2, 2, N)
    with permuted.prepare() as rt:
        pids = rt.pids
        for bad, error, message in BAD:
            with pytest.raises(error, match=message):
                rt(bad, w, f)
            with pytest.raises(error, match=message):
                rt.submit(permuted, bad, w, f)  # raised by submit itself, not by the handle
        with pytest.raises(InvalidArgumentError, match=r"argument 'f' has shape \(2, 2, 32\); the program was "
                                                       r"compiled for \(2, 2, 64\)"):
            rt(a, w, torch.zeros(2, 2, 32))  # an Out parameter too
        small = rt.alloc_stacked_tensor(w[:1], worker_ids=[1])  # a resident tensor is checked as a host one
        with pytest.raises(InvalidArgumentError, match=r"argument 'w' has shape \(1, 2, 64\); the program was "
                                                       r"compiled for \(2, 2, 64\)"):
            rt(a, small, f)
        half = rt.alloc_tensor((2, 2, N), torch.float16)
        with pytest.raises(ArgumentTypeError, match=r"argument 'w' has dtype float16; the program expects float32"):
            rt(a, half, f)
        assert not f.any()
        rt(a, w, f)  # the worker is usable: same processes, right result
        torch.testing.assert_close(f, a + w)
        assert rt.pids == pids


def test_dynamic_extents_are_bound_by_a_call_and_fixed_on_a_prepared_worker(tmp_path: Path) -> None:
    """A call binds ``pl.dynamic`` extents (a rebuild for other shapes); the checked shapes are then the
    rebuilt ones. A prepared worker runs its build as it is: another extent is refused there, saying so."""
    compiled = ir.compile(p3.CompositeDims, output_dir=tmp_path / "dims", distributed_config=dc())
    a, b, f, g = (torch.randn(16, 64) for _ in range(4))
    compiled(a, b, f, g)  # [M * 2, K] bound to M=8, K=64
    with pytest.raises(ArgumentTypeError, match=r"argument 'b' has dtype float64; the program expects float32"):
        compiled(a, b.double(), f, g)
    with pytest.raises(HostPlanError, match=r"parameter 'g' dimension 1: K is 64 .*the tensor has 32"):
        compiled(a, b, f, torch.zeros(16, 32))  # K is bound by a first: g does not fit it
    inspect = ir.compile(pw.AddThenInspect, distributed_config=dc(), output_dir=tmp_path / "inspect")
    x, y = torch.ones(2, 2, N), torch.zeros(2, 2, N)
    with inspect.prepare(callbacks={"inspect": lambda args: None}) as rt:
        with pytest.raises(InvalidArgumentError, match=r"argument 'x' has shape \(3, 2, 64\); the program was "
                                                       r"compiled for \(2, 2, 64\) \(a prepared worker runs the "
                                                       r"build it was prepared with"):
            rt(torch.ones(3, 2, N), torch.zeros(3, 2, N))  # was: ran on x[0] and x[1], x[2] ignored
        rt(x, y)
        torch.testing.assert_close(y, x + x)
