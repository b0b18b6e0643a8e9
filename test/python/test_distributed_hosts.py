"""Window buffers across hosts (issue 19): ranks on different hosts (``PYPTO_HOST_ID``) reach each other's
window regions through the window servers over torch.distributed (gloo), ranks on one host through the
shared files; results match torch.distributed's own and the simulated cycles are the same-host run's."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import dist_coll_programs as pc
import dist_host_programs as dh
import dist_l3_programs as p3
import pytest
import torch

from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.distributed import DistributedRunError, launch
from pypto.runtime.distributed.transport import HOST_ID_ENV, host_id

TIMEOUT = 60.0  # generous: the suite shares 2 cores with other runs


def config(tmp_path: Path, world: int = 2, **kw: object) -> RunConfig:
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=float(kw.pop("timeout_s", TIMEOUT)),
                           num_sub_workers=0)
    return RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "build"), **kw)


def cycles(compiled: object) -> list[int]:
    return [rk.cycles for rk in compiled.last_run.ranks]  # type: ignore[attr-defined]


def test_the_host_id_is_the_hostname_or_the_env_var_by_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(HOST_ID_ENV, raising=False)
    assert host_id(3) == socket.gethostname()
    monkeypatch.setenv(HOST_ID_ENV, "nodeA")
    assert host_id(0) == host_id(5) == "nodeA"
    monkeypatch.setenv(HOST_ID_ENV, "h0,h0,h1,h1")
    assert [host_id(r) for r in range(4)] == ["h0", "h0", "h1", "h1"]
    with pytest.raises(ValueError, match="names 4 hosts by rank; it has none for rank 4"):
        host_id(4)


def test_put_get_atomic_add_notify_wait_and_barrier_reach_a_window_on_another_host(
        monkeypatch: pytest.MonkeyPatch, window_dir: Path) -> None:
    monkeypatch.setenv(HOST_ID_ENV, "h0,h1")
    run = launch(dh.window_rma, DistributedConfig(world_size=2, timeout_s=TIMEOUT), 64)
    for r, v in enumerate(run.values):
        assert v["kinds"] == (["SharedFileRegion", "RemoteRegion"] if r == 0 else ["RemoteRegion", "SharedFileRegion"])
        assert torch.equal(v["got"], dh.mine(1 - r, 64))  # the peer's put, seen after its notify
        assert torch.equal(v["acc"], dh.mine(0, 64) + dh.mine(1, 64))  # both ranks' atomic adds
        assert v["cell"] == 1 and torch.equal(v["back"], dh.mine(r, 64))  # the get read the peer's window
        assert v["stopped"]  # the window server ended with the windows
    monkeypatch.setenv(HOST_ID_ENV, "h0")  # one host: the same bytes and the same clocks through the files
    same = launch(dh.window_rma, DistributedConfig(world_size=2, timeout_s=TIMEOUT), 64)
    assert same.values[0]["kinds"] == ["SharedFileRegion"] * 2
    assert [r.cycles for r in same.ranks] == [r.cycles for r in run.ranks]
    assert all(torch.equal(a["acc"], b["acc"]) for a, b in zip(same.values, run.values, strict=True))


@pytest.mark.parametrize("program", ["put_host", "pull_host"])
def test_kernel_rma_and_the_kernel_barrier_across_two_hosts_match_the_same_host_run(
        program: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """put / notify / wait (put_host) and barrier + remote_load (pull_host) as pto.comm ops on the chips."""
    torch.manual_seed(1)
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled = getattr(p3, program).compile(x, y, config=config(tmp_path))
    want = torch.roll(x + 1, 1, dims=0) if program == "put_host" else torch.roll(x, 1, dims=0) * 2
    compiled(x, y)
    assert torch.equal(y, want)
    local = cycles(compiled)
    monkeypatch.setenv(HOST_ID_ENV, "h0,h1")
    y.zero_()
    compiled(x, y)
    assert torch.equal(y, want)
    assert cycles(compiled) == local  # the link model prices the hop, not the transport


def test_mesh_and_ring_allreduce_across_two_hosts_match_torch_and_the_same_host_cycles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    x = torch.randn(2, 1, p3.N)
    y, z, g = torch.zeros(2, 1, p3.N), torch.zeros(2, 1, p3.N), torch.zeros(2, 2, p3.N)
    compiled = p3.collective_host.compile(x, y, z, g, config=config(tmp_path))
    compiled(x, y, z, g)
    local = cycles(compiled)
    monkeypatch.setenv(HOST_ID_ENV, "h0,h1")
    y.zero_(), z.zero_(), g.zero_()
    compiled(x, y, z, g)
    ref = launch(p3.torch_reference_collectives, DistributedConfig(world_size=2, timeout_s=TIMEOUT), x)
    for r, (mx, sm, rows) in enumerate(ref.values):  # mesh Max, ring Sum, allgather
        assert torch.equal(y[r], mx) and torch.allclose(z[r], sm, atol=1e-6) and torch.equal(g[r], rows)
    assert cycles(compiled) == local


def test_a_host_level_allreduce_on_window_views_across_two_hosts(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """publish (a chip run into the window), pld.tensor.allreduce on the host, consume (a chip run reading it)."""
    from pypto import ir

    compiled = ir.compile(p3.HostAllreduce, output_dir=tmp_path / "l3",
                          distributed_config=DistributedConfig(device_ids=[0, 1], timeout_s=TIMEOUT))
    x, y = torch.randn(2, 1, p3.N), torch.zeros(2, 1, p3.N)
    compiled(x, y)
    local = cycles(compiled)
    monkeypatch.setenv(HOST_ID_ENV, "h0,h1")
    y.zero_()
    compiled(x, y)
    assert torch.equal(y, x.max(0, keepdim=True).values.expand_as(y))
    assert cycles(compiled) == local


def test_four_ranks_on_two_hosts_mix_both_paths_with_the_same_result_and_cycles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = 4
    torch.manual_seed(world)
    x = torch.randn(world, world, pc.C)
    outs = [torch.zeros(world, 1, pc.C) for _ in range(3)] + [torch.zeros(world, world, pc.C) for _ in range(3)]
    compiled = pc.make(world).compile(x, *outs, config=config(tmp_path, world))
    compiled(x, *outs)
    local, same = cycles(compiled), [o.clone() for o in outs]
    monkeypatch.setenv(HOST_ID_ENV, "h0,h0,h1,h1")
    for o in outs:
        o.zero_()
    compiled(x, *outs)
    ref = launch(pc.torch_reference, DistributedConfig(world_size=world, timeout_s=TIMEOUT), x)
    pc.assert_matches_reference(outs, ref.values)
    assert all(torch.equal(a, b) for a, b in zip(outs, same, strict=True))  # bit for bit the same-host run's
    assert cycles(compiled) == local


def test_a_prepared_workers_window_servers_stop_after_a_run_and_after_a_dropped_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Segmented runs (HOST callbacks between dispatches) on two "hosts": the windows live across the
    callbacks; the servers end with the run, and with a run dropped because a callback failed."""
    import dist_worker_programs as pw

    from pypto import ir

    monkeypatch.setenv(HOST_ID_ENV, "h0,h1")
    compiled = ir.compile(pw.WindowedInspect, output_dir=str(tmp_path / "build"),
                          distributed_config=DistributedConfig(device_ids=[0, 1], timeout_s=TIMEOUT))
    x, y = torch.ones(2, 2, pw.N), torch.zeros(2, 2, pw.N)
    seen: list[float] = []
    with compiled.prepare(callbacks={"inspect": lambda args: seen.append(float(args[0][0, 0]))}) as rt:
        rt(x, y)
        assert seen == [2.0, 2.0]
        assert rt.pool.run(dh.window_servers).values == [0, 0]

        def bad(args: list[torch.Tensor]) -> None:
            raise RuntimeError("bad sample")

        rt.callbacks["inspect"] = bad
        with pytest.raises(DistributedRunError, match="callback inspect"):
            rt(x, y)
        assert rt.pool.run(dh.window_servers).values == [0, 0]  # dropped together: the servers stopped


def test_a_peer_killed_on_the_remote_path_is_named_within_the_timeout(
        monkeypatch: pytest.MonkeyPatch, window_dir: Path) -> None:
    monkeypatch.setenv(HOST_ID_ENV, "h0,h1")
    t0 = time.monotonic()
    with pytest.raises(DistributedRunError) as err:
        launch(dh.peer_dies_during_a_remote_write, DistributedConfig(world_size=2, timeout_s=5.0), 64)
    assert time.monotonic() - t0 < 5.0 + 10.0
    assert "exited with code 9" in err.value.failures[1][1]
    task0, why0 = err.value.failures[0]
    assert task0 == "put to rank 1"
    assert "window write on rank 1 (another host) failed within the 5 s timeout" in why0, why0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_l3_program_runs_unchanged_on_two_torchrun_nodes(tmp_path: Path) -> None:
    """Two torchrun invocations as two nodes on localhost (c10d rendezvous), each its own "host": the put /
    notify / wait program of the single-node torchrun test, its windows reached across the nodes."""
    script = tmp_path / "prog.py"
    script.write_text(p3.put_host_script(str(Path(__file__).parent), str(tmp_path), HOST_ID_ENV))
    torchrun = Path(sys.executable).parent / "torchrun"
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    port = _free_port()
    procs = [subprocess.Popen([str(torchrun), "--nnodes", "2", "--node-rank", str(node), "--nproc-per-node", "1",
                               "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", str(script)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env={**env, HOST_ID_ENV: f"node{node}"})
             for node in range(2)]  # fmt: skip
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err[-3000:]
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    assert all(r["ok"] for r in results)  # each process has every rank's output slice
    assert sorted(r["host"] for r in results) == ["node0", "node1"]
    assert results[0]["cycles"] == results[1]["cycles"] > 0


def test_a_server_applies_a_strided_add_in_the_element_type_and_refuses_bytes_outside_the_region(
        tmp_path: Path) -> None:
    """The window server's side of a request, without a group: a bf16 atomic add on a 2x2 tile of a 4x4
    window (through f32, as the chip adds), a read of it, and a read past the region's end."""
    import numpy as np

    from pypto.device.interpreter.memory import bf16_to_f32, f32_to_bf16
    from pypto.runtime.distributed import transport as tr

    path = tmp_path / "region"
    path.write_bytes(bytes(32))  # a 4x4 bf16 window
    region = tr.SharedFileRegion(path, 32)
    server = tr.WindowServer.__new__(tr.WindowServer)
    server.own, server.rank = [region], 0
    tile = region.array.view(np.uint16).reshape(4, 4)[1:3, 2:4]
    offset, shape, strides = tr._describe(tile, region.array)
    ones = f32_to_bf16(np.full((2, 2), 1.5, np.float32))
    for _ in range(2):
        reply = server._apply(tr._ADD, 0, offset, 2, "bf16", shape, strides, ones.view(np.uint8).reshape(-1))
        assert int(reply[:8].view(torch.int64)[0]) == 0
    grid = bf16_to_f32(region.array.view(np.uint16).reshape(4, 4))
    assert (grid[1:3, 2:4] == 3.0).all() and grid.sum() == 12.0  # only the tile's bytes moved
    read = server._apply(tr._READ, 0, offset, 2, "", shape, strides, np.empty(0, np.uint8))
    assert np.array_equal(bf16_to_f32(read[8:].numpy().view(np.uint16)), np.full(4, 3.0, np.float32))
    bad = server._apply(tr._READ, 0, 30, 2, "", (2,), (2,), np.empty(0, np.uint8))
    assert int(bad[:8].view(torch.int64)[0]) == 1 and bad.numel() == 8 + 4  # refused, at the size asked for
