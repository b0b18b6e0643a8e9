"""A prepared L3 worker used wrongly: wrong arguments to its resident-tensor calls, a failed dispatch, calls
after close. Each is a clear error in the caller's process, and a user's mistake never ends the worker's
rank processes (nor hangs, nor copies silently to no rank)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
import torch

from pypto.runtime import DistributedWorker
from pypto.runtime.distributed import DistributedConfig, DistributedRunError, allreduce
from pypto.runtime.distributed.pool import RankPool

TIMEOUT = 30.0  # generous: the suite shares 2 cores with other runs


def program(world: int = 2, **kw: object) -> SimpleNamespace:
    """What a worker needs of a compiled L3 program (no plan is dispatched here)."""
    config = DistributedConfig(device_ids=list(range(world)), timeout_s=float(kw.pop("timeout_s", TIMEOUT)), **kw)
    return SimpleNamespace(distributed_config=config, sub_worker_names=set, required_callbacks=set)


@pytest.fixture(scope="module")
def rt() -> Iterator[DistributedWorker]:
    with DistributedWorker(program()) as worker:
        yield worker


def test_a_worker_id_outside_the_world_is_a_value_error_and_the_worker_goes_on(rt: DistributedWorker) -> None:
    t = rt.alloc_tensor((2, 4), torch.float32)
    pids = rt.pids
    with pytest.raises(ValueError, match=r"copy_to: worker_id 5 out of range \[0, 2\)"):
        rt.copy_to(t, torch.ones(2, 4), worker_id=5)  # was: copied to no rank, silently
    for bad in (5, -1):
        with pytest.raises(ValueError, match=rf"read_tensor: worker_id {bad} out of range \[0, 2\)"):
            rt.read_tensor(t, bad)  # was: IndexError, or rank 1's copy for -1
    with pytest.raises(ValueError, match=r"copy_from: worker_id 2 out of range"):
        rt.copy_from(torch.zeros(2, 4), t, worker_id=2)
    with pytest.raises(TypeError, match="worker_id must be an int"):
        rt.read_tensor(t, "0")
    rt.copy_to(t, torch.full((2, 4), 3.0), worker_id=1)
    assert torch.equal(rt.read_tensor(t, 1), torch.full((2, 4), 3.0)) and not rt.read_tensor(t, 0).any()
    assert rt.pids == pids


def test_a_copy_larger_than_either_side_is_a_value_error_and_the_worker_goes_on(rt: DistributedWorker) -> None:
    t = rt.alloc_tensor((2, 4), torch.float32)
    pids = rt.pids
    with pytest.raises(ValueError, match=r"copy_to: copying 64 bytes, but DistributedDeviceTensor.* holds 32"):
        rt.copy_to(t, torch.ones(4, 4))  # was: a failure on rank 0 that ended the worker's processes
    with pytest.raises(ValueError, match="copy_to: copying 40 bytes, but the host tensor src holds 32"):
        rt.copy_to(t, torch.ones(2, 4), nbytes=40)
    with pytest.raises(ValueError, match="copy_from: copying 64 bytes, but DistributedDeviceTensor.* holds 32"):
        rt.copy_from(torch.zeros(4, 4), t)  # was: a torch size-mismatch RuntimeError
    with pytest.raises(ValueError, match="copy_from: copying 1000 bytes, but the host tensor dst holds 8"):
        rt.copy_from(torch.zeros(2), t, nbytes=1000)
    rt.copy_to(t, torch.arange(8, dtype=torch.float32).reshape(2, 4))
    assert torch.equal(rt.read_tensor(t), torch.arange(8, dtype=torch.float32).reshape(2, 4))
    assert rt.pids == pids


def test_a_stacked_tensor_is_copied_only_where_its_shards_live(rt: DistributedWorker) -> None:
    s = rt.alloc_stacked_tensor(torch.ones(1, 2, 4), worker_ids=[1])
    with pytest.raises(ValueError, match=r"has no shard on rank 0 \(its worker_ids: \[1\]\)"):
        rt.copy_to(s, torch.zeros(2, 4), worker_id=0)  # was: a KeyError on rank 0 that ended the worker
    with pytest.raises(ValueError, match="has no shard on rank 0"):
        rt.read_tensor(s, 0)
    rt.copy_to(s, torch.full((2, 4), 7.0), worker_id=1)
    assert torch.equal(rt.read_tensor(s, 1), torch.full((2, 4), 7.0))


def test_copy_from_into_a_strided_host_tensor_lands_there(rt: DistributedWorker) -> None:
    t = rt.alloc_tensor((2, 4), torch.float32, init=torch.arange(8, dtype=torch.float32).reshape(2, 4))
    dst = torch.zeros(4, 2).t()  # not contiguous: a reshape of it is a copy
    rt.copy_from(dst, t)
    assert torch.equal(dst, torch.arange(8, dtype=torch.float32).reshape(2, 4))  # was: all zeros


def test_a_worker_closes_twice_and_refuses_calls_after(tmp_path: object) -> None:
    worker = DistributedWorker(program())
    pids = worker.pids
    t = worker.alloc_tensor((2,), torch.float32)
    worker.close()
    worker.close()
    assert not [p for p in pids if os.path.exists(f"/proc/{p}")]
    with pytest.raises(RuntimeError, match="closed"):
        worker.alloc_tensor((2,), torch.float32)
    with pytest.raises(ValueError, match="not a live tensor"):
        worker.read_tensor(t)


def test_a_wrong_shape_dtype_or_init_of_alloc_tensor_is_named_and_the_worker_goes_on(rt: DistributedWorker) -> None:
    pids = rt.pids
    with pytest.raises(ValueError, match=r"alloc_tensor: shape \[-1, 4\] has a negative dimension"):
        rt.alloc_tensor((-1, 4), torch.float32)  # was: a failure on every rank that ended the worker's processes
    with pytest.raises(TypeError, match="alloc_tensor: shape must be a sequence of ints, got \\(2.5,\\)"):
        rt.alloc_tensor((2.5,), torch.float32)  # was: a [2] tensor
    with pytest.raises(TypeError, match="alloc_tensor: dtype must be a torch.dtype"):
        rt.alloc_tensor((2, 4), "float32")  # was: accepted, a tensor whose dtype is a string
    with pytest.raises(ValueError, match=r"alloc_tensor: init has 3 elements \[3\], the tensor \[2, 4\] has 8"):
        rt.alloc_tensor((2, 4), torch.float32, init=torch.ones(3))
    assert rt.alloc_tensor(3, torch.int32).shape == (3,)  # one dimension, as torch.zeros(3)
    assert rt.pids == pids


def raise_after_a_collective(comm: object, *, state: dict) -> torch.Tensor:
    """Rank 1 raises between two allreduces; rank 0 is then blocked receiving from it."""
    x = torch.ones(8)
    allreduce(comm, x, "Sum", "ring")
    if comm.rank == 1:  # type: ignore[attr-defined]
        raise RuntimeError("after a collective")
    return allreduce(comm, x, "Sum", "ring")


def test_a_rank_failing_after_a_collective_fails_its_peer_at_once_not_at_its_timeout() -> None:
    pool = RankPool(program(timeout_s=40.0).distributed_config)
    try:
        t0 = time.monotonic()
        with pytest.raises(DistributedRunError) as err:
            pool.run(raise_after_a_collective)
        assert time.monotonic() - t0 < 20.0  # was 40 s: the failed rank's process stayed up, rank 0 timed out
        assert err.value.failures[1] == ("main", "RuntimeError: after a collective (test_distributed_worker_misuse.py:"
                                         f"{raise_after_a_collective.__code__.co_firstlineno + 5})")
        assert "the connection was closed" in err.value.failures[0][1]
        with pytest.raises(RuntimeError, match="prepare a new worker"):
            pool.run(raise_after_a_collective)
    finally:
        pool.close()
    assert not [p for p in pool.pids if os.path.exists(f"/proc/{p}")]


def _failing_dispatch(worker: object, args: list, config: object) -> None:
    raise ValueError("the dispatch failed")


def test_leaving_a_with_block_on_its_own_error_keeps_that_error_and_notes_the_unasked_dispatchs() -> None:
    prog = program()
    prog.dispatch_on = _failing_dispatch
    with pytest.raises(KeyError, match="mine") as err:  # was: the dispatch's ValueError, the KeyError its context
        with DistributedWorker(prog) as rt:
            rt.submit(prog)
            raise KeyError("mine")
    assert any("also failed: ValueError: the dispatch failed" in note for note in err.value.__notes__)
    with pytest.raises(ValueError, match="the dispatch failed"):  # no error of its own: close raises the dispatch's
        with DistributedWorker(prog) as rt:
            rt.submit(prog)
