"""A prepared L3 worker's persistent windows (``prepare(persistent=True)``), stacked shards placed by
``worker_ids``, ``inherited_host_tensors``, window buffers in comm domains of their own ranks, and L2
builds of several Orchestration entries (``compiled[name]``) (issue 19)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import dist_persist_programs as pp
import pytest
import torch

from pypto import ir
from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig
from pypto.runtime import DistributedWorker
from pypto.runtime.distributed import DistributedRunError
from pypto.runtime.distributed.windows import SharedWindows

TIMEOUT = 60.0  # generous: the suite shares 2 cores with other runs


def dc(world: int = 2) -> DistributedConfig:
    return DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> object:
    return ir.compile(pp.CountSignals, distributed_config=dc(), output_dir=str(tmp_path_factory.mktemp("count")))


def epochs(k: int) -> torch.Tensor:
    return torch.full((2, 1, 8), k, dtype=torch.int32)


# ---- persistent windows ---------------------------------------------------------------------------


def test_windows_kept_without_a_reset_carry_their_signals_into_the_next_dispatch(counter: object,
                                                                                 window_dir: Path) -> None:
    out = torch.zeros(2, 1, 1, dtype=torch.int32)
    with counter.prepare(persistent=True, reset_persistent_windows=False) as rt:
        for k in (1, 2, 3):  # each dispatch adds 1 to each cell and waits for >= k: only a kept count gets there
            out.zero_()
            rt(epochs(k), out)
            assert out.flatten().tolist() == [k, k]
        assert rt.window_allocations == 1 and rt._w._next_alloc_id == 1  # made once, at the first dispatch
        assert len(list(window_dir.glob("pypto-*"))) == 2  # one region per rank, kept between dispatches
    assert not list(window_dir.glob("pypto-*"))  # closing the worker removes them


def test_persistent_windows_are_cleared_before_each_dispatch_by_default(counter: object, window_dir: Path) -> None:
    out = torch.zeros(2, 1, 1, dtype=torch.int32)
    with counter.prepare(persistent=True) as rt:
        for _ in range(3):
            rt(epochs(1), out)
            assert out.flatten().tolist() == [1, 1]  # a kept, uncleared cell would read 2, then 3
        assert rt.window_allocations == 1
    with counter.prepare() as rt:  # not persistent: every dispatch makes (and removes) its own windows
        for _ in range(2):
            rt(epochs(1), out)
            assert out.flatten().tolist() == [1, 1]
        assert rt.window_allocations == 2
        assert not list(window_dir.glob("pypto-*"))


def test_a_reset_without_persistence_is_refused_before_anything_starts(counter: object) -> None:
    with pytest.raises(ValueError, match="reset_persistent_windows=True requires persistent=True"):
        counter.prepare(reset_persistent_windows=True)


# ---- stacked shards placed by worker_ids, inherited host tensors -----------------------------------


def test_stacked_shards_follow_worker_ids_to_the_ranks_the_program_dispatches_them_to(tmp_path: Path) -> None:
    compiled = ir.compile(pp.PermutedAdd, distributed_config=dc(), output_dir=str(tmp_path / "build"))
    w = torch.stack([torch.full((2, pp.N), 10.0), torch.full((2, pp.N), 20.0)])
    a, f = torch.ones(2, 2, pp.N), torch.zeros(2, 2, pp.N)
    with compiled.prepare() as rt:
        for bad, match in (([0, 0], "distinct"), ([0, 2], r"out of range \[0, 2\)"), ([1], "1 entries")):
            with pytest.raises(ValueError, match=match):
                rt.alloc_stacked_tensor(w, worker_ids=bad)
        weight = rt.alloc_stacked_tensor(w, worker_ids=[1, 0])  # w[0] is used on rank 1, w[1] on rank 0
        assert weight.worker_ids == (1, 0) and weight.full_shape == (2, 2, pp.N)
        rt(a, weight, f)
        torch.testing.assert_close(f, a + w)
        assert torch.equal(rt.read_tensor(weight, 1), w[0])  # rank 1 holds shard 0
        back = torch.zeros_like(w)
        rt.copy_stacked_from(weight, back)
        torch.testing.assert_close(back, w)
        identity = rt.alloc_stacked_tensor(w)  # range(B): shard 0 on rank 0, but the program uses it on rank 1
        with pytest.raises(DistributedRunError, match=r"shard 0 of a StackedDeviceTensor lives on rank 0, not on rank 1"):
            rt(a, identity, f)


def test_inherited_host_tensors_are_checked_kept_and_released(counter: object) -> None:
    with pytest.raises(TypeError, match=r"inherited_host_tensors\[0\]: expected a torch.Tensor, got list"):
        DistributedWorker(counter, inherited_host_tensors=[[1.0]])
    with pytest.raises(ValueError, match=r"inherited_host_tensors\[1\]: expected a contiguous CPU tensor"):
        DistributedWorker(counter, inherited_host_tensors=[torch.zeros(2), torch.zeros(4, 4).t()])
    host = torch.zeros(2, 1, 8, dtype=torch.int32)
    with DistributedWorker(counter, inherited_host_tensors=[host]) as rt:
        assert rt.inherited_host_tensors == (host,)
        rt.release_inherited_host_tensor_refs()
        assert rt.inherited_host_tensors == ()


# ---- comm domains ---------------------------------------------------------------------------------


def test_two_comm_domains_on_overlapping_ranks_keep_their_windows_apart(tmp_path: Path) -> None:
    compiled = ir.compile(pp.TwoDomains, distributed_config=dc(3), output_dir=str(tmp_path / "build"))
    assert compiled.plan.window_groups() == [(0, 1), (0, 1), (1, 2), (1, 2)]
    inp = torch.stack([torch.full((1, pp.N), 10.0 + r) for r in range(3)])
    out_a, out_b = torch.zeros(3, 1, pp.N), torch.zeros(3, 1, pp.N)
    compiled(inp, out_a, out_b)
    assert torch.equal(out_a[:2], inp[[1, 0]]) and not out_a[2].any()  # domain A: ranks 0 and 1 swap
    assert torch.equal(out_b[1:], inp[[2, 1]]) and not out_b[0].any()  # domain B: peer 1 of rank 1 is rank 2


def test_a_peer_outside_its_buffers_comm_domain_is_named() -> None:
    windows = SharedWindows.__new__(SharedWindows)
    windows.groups = [(1, 2)]
    windows.comm = SimpleNamespace(error=lambda message: ValueError(message))
    assert windows.global_rank(0, 1) == 2
    with pytest.raises(ValueError, match=r"peer rank 2 out of range \(the comm domain of window buffer 0 has "
                                         r"2 ranks: \[1, 2\]\)"):
        windows.global_rank(0, 2)


# ---- L2 builds of several Orchestration entries -----------------------------------------------------


def test_each_orchestration_entry_is_built_and_called_on_its_own(tmp_path: Path) -> None:
    compiled = ir.compile(pp.AddSub, output_dir=str(tmp_path))
    assert compiled.orchestration_names == ["add", "sub"]
    assert not (tmp_path / "orchestration").exists()
    for name, kernel in (("add", "add_k"), ("sub", "sub_k")):
        sub = compiled[name]
        assert sub is getattr(compiled, name) and sub.name == name
        assert sub.output_dir == tmp_path.resolve() / "next_levels" / name and sub.param_names == ["a", "b", "f"]
        assert (sub.output_dir / "orchestration" / f"{name}.py").is_file()
        assert {p.stem for p in (sub.output_dir / "ptoas").glob("*.pto")} == {kernel}  # only what it reaches
    a, b = torch.full((2, pp.N), 5.0), torch.full((2, pp.N), 3.0)
    f = torch.zeros(2, pp.N)
    compiled.sub(a, b, f)
    torch.testing.assert_close(f, a - b)
    with pytest.raises(TypeError, match=r"several Orchestration entries \['add', 'sub'\]; select one explicitly"):
        compiled(a, b, f)
    with pytest.raises(KeyError, match=r"no orchestration 'mul'.*available: \['add', 'sub'\]"):
        compiled["mul"]
    with pytest.raises(AttributeError, match="no attribute 'mul'"):
        compiled.mul  # noqa: B018 - the lookup is the test


# ---- a single-chip HOST orchestrator with distributed_config= ---------------------------------------


def test_a_single_chip_host_orchestrator_with_a_distributed_config_is_an_l3_program(tmp_path: Path) -> None:
    assert pp.HostAdd.host_functions and not pp.HostAdd.host_orchestrators
    compiled = ir.compile(pp.HostAdd, distributed_config=dc(1), output_dir=str(tmp_path / "build"))
    assert isinstance(compiled, DistributedCompiledProgram) and compiled.plan.world_size == 1
    assert [d.program for d in compiled.plan.dispatches] == ["add"]
    a, f = torch.full((2, pp.N), 2.0), torch.zeros(2, pp.N)
    with compiled.prepare() as rt:
        weight = rt.alloc_tensor((2, pp.N), torch.float32, init=torch.full((2, pp.N), 3.0))
        rt.submit(compiled, a, weight, f).result()
        torch.testing.assert_close(f, torch.full((2, pp.N), 5.0))
    single = ir.compile(pp.HostAdd, output_dir=str(tmp_path / "l2"))  # without one: the chip program as before
    assert not isinstance(single, DistributedCompiledProgram)
