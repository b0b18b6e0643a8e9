"""Multi-rank runs (``pypto.runtime.distributed.launch``) given a user's mistake: the launch ends within
its timeout with a :class:`DistributedRunError` naming the rank and what was wrong, never a crashed
process, a hang or silently wrong data."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from pypto.runtime.distributed import (
    DistributedConfig,
    DistributedRunError,
    RankComm,
    allgather,
    allreduce,
    broadcast,
    launch,
)

TIMEOUT = 20.0
"""Every wait's bound; ``dispatch_timeout_s`` bounds each whole launch, so no test here can hang."""


def _cfg(world: int = 2) -> DistributedConfig:
    return DistributedConfig(world_size=world, timeout_s=TIMEOUT, dispatch_timeout_s=60.0)


def _allreduce_rank_sized(comm: RankComm, mode: str) -> torch.Tensor:
    """Rank 0 reduces 4 elements, the others 8."""
    return allreduce(comm, torch.ones(4 if comm.rank == 0 else 8), "Sum", mode)


def _broadcast_rank_sized(comm: RankComm) -> torch.Tensor:
    return broadcast(comm, torch.zeros(4 if comm.rank == 0 else 8), 0)


def _allgather_rank_dtype(comm: RankComm) -> torch.Tensor:
    return allgather(comm, torch.zeros(4, dtype=torch.float32 if comm.rank == 0 else torch.float16))


@pytest.mark.parametrize(
    ("fn", "args", "message"),
    [
        # in the ring both ranks receive a wrong size; the first to fail may exit before its own send went out
        (_allreduce_rank_sized, ("ring",), r"ring rs 0: rank (0 sent 8 bytes, rank 1 expects 16 \(a \[4\] float32|"
                                           r"1 sent 16 bytes, rank 0 expects 8 \(a \[2\] float32)"),
        # in the mesh every rank receives from every other: either may be the first to see the wrong size
        (_allreduce_rank_sized, ("mesh",), r"allreduce mesh: rank (0 sent 16 bytes, rank 1 expects 32 \(a \[8\] float32|"
                                           r"1 sent 32 bytes, rank 0 expects 16 \(a \[4\] float32)"),
        (_broadcast_rank_sized, (), r"broadcast: rank 0 sent 16 bytes, rank 1 expects 32"),
        (_allgather_rank_dtype, (), r"allgather: rank (1 sent 8 bytes, rank 0 expects 16|0 sent 16 bytes, rank 1 expects 8)"),
    ],
)
def test_ranks_with_different_shapes_are_named(fn: object, args: tuple, message: str) -> None:
    """A receive of a message larger than its buffer aborted the rank's process in gloo ("exited with code -6
    (killed or crashed)"); one smaller than its buffer returned the buffer's uninitialised bytes as data
    (a broadcast of 4 floats into 8 gave ``6.4e11``)."""
    with pytest.raises(DistributedRunError) as e:
        launch(fn, _cfg(), *args)
    texts = [text for _, text in e.value.failures.values()]
    assert any(re.search(message, t) and "shapes or dtypes differ" in t for t in texts), str(e.value)
    assert all("killed or crashed" not in t for t in texts), str(e.value)


def _returns_a_lock(comm: RankComm) -> object:
    return threading.Lock()


def _bad_reduce_op(comm: RankComm) -> torch.Tensor:
    return allreduce(comm, torch.zeros(4), "Avg", "ring")  # the line the error names


def test_a_return_value_that_cannot_be_sent_is_named() -> None:
    """It was reported as ``TypeError: cannot pickle '_thread.lock' object (launch.py:116)``: our line, not
    what the user did."""
    with pytest.raises(DistributedRunError) as e:
        launch(_returns_a_lock, _cfg())
    for _, text in e.value.failures.values():
        assert text.startswith("its return value (lock) cannot be sent to the launcher: TypeError"), text
        assert "launch.py" not in text


def test_a_bad_argument_to_a_collective_names_the_users_line() -> None:
    """The location was the innermost frame, ``enum.py:1135``."""
    line = _bad_reduce_op.__code__.co_firstlineno + 1
    with pytest.raises(DistributedRunError) as e:
        launch(_bad_reduce_op, _cfg())
    for _, text in e.value.failures.values():
        assert text == f"ValueError: 'Avg' is not a valid ReduceOp (test_distributed_bad_input.py:{line})", text


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"dispatch_timeout_s": -1}, ValueError, r"dispatch_timeout_s must be positive and finite .*got -1"),
        ({"dispatch_timeout_s": 0}, ValueError, r"dispatch_timeout_s must be positive"),
        ({"dispatch_timeout_s": float("nan")}, ValueError, r"dispatch_timeout_s must be positive .*got nan"),
        ({"timeout_s": float("inf")}, ValueError, r"timeout_s must be positive and finite"),
        ({"timeout_s": "5"}, TypeError, r"timeout_s must be a number of seconds, got '5'"),
        ({"world_size": "2"}, TypeError, r"world_size must be an int, got '2'"),
    ],
)
def test_bad_timeouts_and_world_sizes_are_named(kwargs: dict, error: type, message: str) -> None:
    """A negative dispatch timeout reported every rank as hung at once, NaN turned it off silently, an
    infinite ``timeout_s`` overflowed ``timedelta`` in the ranks, a string was a bare ``TypeError: '>' not
    supported`` and ``world_size='2'`` said ``world_size=2 but device_ids=[0, 1]``."""
    with pytest.raises(error, match=message):
        DistributedConfig(**{"world_size": 2, **kwargs})


def test_a_function_spawn_cannot_pickle_is_named() -> None:
    """It was pickle's own ``PicklingError: Can't pickle <function <lambda> ...>``."""
    with pytest.raises(ValueError, match=r"start_method='spawn'\) sends each rank its function .* module-level"):
        launch(lambda comm: comm.rank, DistributedConfig(world_size=2, timeout_s=TIMEOUT, start_method="spawn"))


def test_an_output_dir_that_is_a_file_is_refused_before_the_ranks_run(tmp_path: Path) -> None:
    """It failed after the whole run, writing ``<file>/dfx_outputs/rank0`` (``Not a directory``): the run's
    results were lost."""
    file = tmp_path / "out"
    file.write_text("keep")
    started = time.monotonic()
    with pytest.raises(NotADirectoryError, match="output_dir is not a directory"):
        launch(_sleeps_then_returns, DistributedConfig(world_size=2, timeout_s=TIMEOUT, output_dir=file))
    assert time.monotonic() - started < 3.0 and file.read_text() == "keep"


def _sleeps_then_returns(comm: RankComm) -> int:
    time.sleep(5.0)
    return comm.rank


_TORCHRUN_PROBE = """
import sys
from pypto.runtime.distributed import DistributedConfig, launch
def step(comm):
    return comm.rank
try:
    launch(step, DistributedConfig(world_size=int(sys.argv[1]), timeout_s=3))
except Exception as e:
    print(type(e).__name__ + ": " + str(e))
"""


@pytest.mark.parametrize(
    ("env", "world", "message"),
    [
        ({"MASTER_PORT": "notaport"}, 1, r"InvalidArgumentError: torchrun environment: MASTER_PORT='notaport' is not an integer"),
        ({"RANK": "abc"}, 1, r"InvalidArgumentError: torchrun environment: RANK='abc' is not an integer"),
        ({"RANK": "3", "WORLD_SIZE": "2"}, 2, r"RANK=3 is not a rank of WORLD_SIZE=2 \(0 to 1\)"),
        ({"MASTER_PORT": "70000"}, 1, r"MASTER_PORT=70000 is not a TCP port"),
        ({"WORLD_SIZE": "2"}, 2, r"rank 0, task 'connect': did not join torchrun's rendezvous at 127\.0\.0\.1:\d+ "
                                 r"\(MASTER_ADDR:MASTER_PORT\) within the 3 s timeout"),
    ],
)
def test_a_wrong_torchrun_environment_is_named(env: dict[str, str], world: int, message: str) -> None:
    """``invalid literal for int() with base 10: 'abc'`` named no variable; a rank outside the world waited
    for a connect timeout (``DistNetworkError``); a peer that never came was torch's bare ``DistStoreError``."""
    port = str(_free_port())
    full = {**os.environ, "RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, **env}
    proc = subprocess.run([sys.executable, "-c", _TORCHRUN_PROBE, str(world)], capture_output=True, text=True,
                          timeout=120, env=full, check=False)
    assert re.search(message, proc.stdout), proc.stdout + proc.stderr[-2000:]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
