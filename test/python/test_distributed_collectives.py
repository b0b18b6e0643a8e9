"""In-kernel collectives (issue 19) on the simulated chips: every ``pld.tensor.*`` collective compiles into
``pto.comm`` ops (LowerCompositeOps, ``pypto/passes/lower_composite_ops/collectives.py``), runs on each rank's chip and
matches torch.distributed's own result on the same data, with 2 and 4 ranks; the link cycles of its
remote reads follow the link model (a mesh reads whole windows, a ring ``1 / W`` segments)."""

from __future__ import annotations

import json
from pathlib import Path

import dist_coll_programs as pc
import pytest
import torch

from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig
from pypto.runtime.distributed import launch

TIMEOUT = 90.0


@pytest.mark.parametrize("world", [2, 4])
def test_every_kernel_collective_runs_on_the_chips_and_matches_torch(world: int, tmp_path: Path) -> None:
    from pypto.driver.compiled import CompiledProgram
    from pypto.target.model import load_target

    torch.manual_seed(world)
    x = torch.randn(world, world, pc.C)
    outs = [torch.zeros(world, 1, pc.C) for _ in range(3)] + [torch.zeros(world, world, pc.C) for _ in range(3)]
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)
    cfg = RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / "build"))
    compiled = pc.make(world).compile(x, *outs, config=cfg)
    assert isinstance(compiled.programs["coll"], CompiledProgram)  # on the chip, not the torch form
    pto = (compiled.output_dir / "next_levels/coll/ptoas/coll_k.pto").read_text()
    assert "pld." not in pto and pto.count("pto.comm.tput(") == 2 * world + 2 * (world - 1)  # gather, a2a, ring
    assert pto.count("pto.comm.tget(") == 1 and "pto.tmul" in pto and "pto.tmax" in pto
    compiled(x, *outs)
    ref = launch(pc.torch_reference, DistributedConfig(world_size=world, timeout_s=TIMEOUT), x)
    pc.assert_matches_reference(outs, ref.values)
    for o in outs[:2]:  # every rank ends with the same bits (one combination order)
        assert all(torch.equal(o[0], o[r]) for r in range(world))
    target = load_target("a2a3")
    assert target.link is not None
    busy4 = target.link.busy_cycles(4, target.clock_hz)
    for r in range(world):
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        arrivals = [e for e in events if e["cat"] == "notify" and e["task"].startswith("chip run")][:world]
        remote = [e for e in arrivals if e["peer"] != r]  # the mesh's first barrier: one arrival per rank
        assert len(remote) == world - 1  # back to back on PIPE_MTE3, the rank's own (a local store) among them
        assert [e["start"] for e in remote] == [remote[0]["start"] + k * busy4 for k in range(world - 1)]
        row = pc.C * 4
        gets = [e["bytes"] for e in events if e["cat"] == "get" and e["name"].startswith("remote tload")]
        assert gets == [row] * (2 * (world - 1))  # the mesh and reduce_scatter read every peer's whole row
        segs = [e for e in events if e["cat"] == "put" and e["bytes"] == row // world]
        assert len(segs) == 2 * (world - 1)  # the Sum ring pushes a 1 / W segment per round to one neighbour
        assert {e["peer"] for e in segs} == {(r + 1) % world}


def test_ring_and_mesh_transfers_follow_the_pipelined_link_model(tmp_path: Path) -> None:
    """Each remote tile load is a get that lands ``latency + hop(bytes)`` after it starts (the request, then the
    data). A Sum-ring put is not waited for: its notify, issued right behind it on PIPE_MTE3, starts once the link
    took the put's bytes (``busy(bytes)``) and lands one 4-byte hop later, so after the put; the right neighbour's
    next round starts when that notify landed."""
    from pypto.target.model import load_target

    world = 2
    x = torch.randn(world, world, pc.C)
    outs = [torch.zeros(world, 1, pc.C) for _ in range(3)] + [torch.zeros(world, world, pc.C) for _ in range(3)]
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)
    compiled = pc.make(world).compile(x, *outs, config=RunConfig(distributed_config=dc,
                                                                  save_kernels_dir=str(tmp_path / "b")))
    compiled(x, *outs)
    target = load_target("a2a3")
    link = target.link
    assert link is not None

    def hop(n: int) -> int:
        return link.hop_cycles(n, target.clock_hz)

    events = json.loads((compiled.output_dir / "dfx_outputs/rank0/comm_events.json").read_text())["events"]
    gets = [e for e in events if e["cat"] == "get" and e["name"].startswith("remote tload")]
    assert gets
    for e in gets:
        assert e["end"] - e["start"] == link.latency_cycles + hop(e["bytes"])
    seg = pc.C * 4 // world
    checked = 0
    for i, e in enumerate(events):
        if e["cat"] != "put" or e["name"] != "tput -> r1" or e["bytes"] != seg:
            continue
        assert e["end"] - e["start"] == hop(seg)  # the put lands one hop after it starts
        notify = events[i + 1]  # the round's notify, issued right behind the put
        assert notify["cat"] == "notify" and notify["peer"] == 1
        assert notify["start"] == e["start"] + link.busy_cycles(seg, target.clock_hz) < e["end"]  # not waited for
        assert notify["remote"]["ts"] == notify["start"] + hop(4) > e["end"]  # lands after the put
        checked += 1
    assert checked == 2 * (world - 1)  # every round of the Sum ring


def test_a_ring_allreduce_on_upstreams_ring_signal_takes_its_world_size_from_the_last_extent(tmp_path: Path) -> None:
    """Upstream's ring signal is ``[2 * (W - 1)(+ 1), W]``: W ranks, not its rows (here 3, with 2 ranks). Odd
    columns take the mesh, whose barriers then count on the signal's last column; two calls on one signal (the
    credits clear)."""
    world, n = 2, 17
    x = torch.randn(world, 1, n)
    out = torch.zeros(world, 1, n)
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)
    compiled = pc.make_ring_signal(world, n, 2 * (world - 1) + 1).compile(x, out, config=RunConfig(
        distributed_config=dc, save_kernels_dir=str(tmp_path / "b")))
    pto = (compiled.output_dir / "next_levels/ring/ptoas/ring_k.pto").read_text()
    assert "pld." not in pto and pto.count("pto.comm.twait(") == 4 * world  # two barriers per call, on the chip
    compiled(x, out)
    want = 2 * x.max(dim=0).values
    for r in range(world):
        assert torch.equal(out[r], want)


@pytest.mark.parametrize("world", [2, 4])
def test_a_mesh_allreduce_over_64_kib_runs_chunked_on_the_chips_and_matches_torch(world: int, tmp_path: Path) -> None:
    """80 KiB (over ``MESH_UB_BYTES``): five 16 KiB chunks, read from every peer in groups of up to 64 KiB, a
    barrier, then the group's stores (upstream's chunked mesh); it compiles to ``.pto`` instead of running as
    its torch form."""
    from pypto.dialects.distributed_ops import AllreduceOp
    from pypto.driver.compiled import CompiledProgram
    from pypto.passes.lower_composite_ops.collectives import CHUNK_BYTES

    rows, cols = 5, CHUNK_BYTES // 4  # a row is one chunk
    assert rows * cols * 4 > AllreduceOp.MESH_UB_BYTES
    torch.manual_seed(world)
    x, out = torch.randn(world, rows, cols), torch.zeros(world, rows, cols)
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)
    compiled = pc.make_big_mesh(world, rows, cols).compile(x, out, config=RunConfig(
        distributed_config=dc, save_kernels_dir=str(tmp_path / "b")))
    assert isinstance(compiled.programs["mesh"], CompiledProgram)  # on the chip, not the torch form
    pto = (compiled.output_dir / "next_levels/mesh/ptoas/mesh_k.pto").read_text()
    groups = -(-rows // (AllreduceOp.MESH_UB_BYTES // CHUNK_BYTES))  # 2: four chunks, then one
    assert "pld." not in pto and pto.count("pto.comm.twait(") == (groups + 1) * world  # a barrier first and per group
    compiled(x, out)
    ref = launch(pc.torch_allreduce, DistributedConfig(world_size=world, timeout_s=TIMEOUT), x)
    for r in range(world):
        assert torch.allclose(out[r], ref.values[r], rtol=1e-5, atol=1e-5)
        assert torch.equal(out[r], out[0])  # one combination order on every rank
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        gets = [e for e in events if e["cat"] == "get" and e["name"].startswith("remote tload")]
        assert [e["bytes"] for e in gets] == [CHUNK_BYTES] * (rows * (world - 1))  # every peer's chunk, once
        assert {e["peer"] for e in gets} == set(range(world)) - {r}


@pytest.mark.parametrize("world", [2, 4])
def test_an_allreduce_with_core_num_2_runs_as_two_spmd_blocks_on_the_chips_and_matches_torch(
        world: int, tmp_path: Path) -> None:
    """``core_num=2`` in a kernel launched ``with pl.spmd(2)``: each block reads its half of every peer's
    window (barriers on its own signal lane) instead of the program running as its torch form."""
    from pypto.driver.compiled import CompiledProgram

    blocks, rows, cols = 2, 2, 1024
    torch.manual_seed(world)
    x, out = torch.randn(world, rows, cols), torch.zeros(world, rows, cols)
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)
    compiled = pc.make_blocks(world, blocks, rows, cols).compile(x, out, config=RunConfig(
        distributed_config=dc, save_kernels_dir=str(tmp_path / "b")))
    assert isinstance(compiled.programs["blocks"], CompiledProgram)  # on the chip, not the torch form
    pto = (compiled.output_dir / "next_levels/blocks/ptoas/blocks_k.pto").read_text()
    assert "pld." not in pto and "pto.get_block_idx" in pto and pto.count("pto.comm.twait(") == 2 * world
    compiled(x, out)
    ref = launch(pc.torch_allreduce, DistributedConfig(world_size=world, timeout_s=TIMEOUT), x, op="PRODUCT")
    share = rows * cols // blocks * 4
    for r in range(world):
        assert torch.allclose(out[r], ref.values[r], rtol=1e-5, atol=1e-6)
        events = json.loads((compiled.output_dir / f"dfx_outputs/rank{r}/comm_events.json").read_text())["events"]
        gets = [e for e in events if e["cat"] == "get" and e["name"].startswith("remote tload")]
        assert sorted(e["bytes"] for e in gets) == [share] * (blocks * (world - 1))  # each block: its share per peer
        assert sorted(e["peer"] for e in gets) == sorted([p for p in range(world) if p != r] * blocks)


def test_core_num_without_a_lane_per_block_or_an_spmd_launch_says_why_it_runs_as_torch() -> None:
    """The verifier-level reason (``pto_blocker``) names what is missing."""
    import pypto.language as pl
    import pypto.language.distributed as pld
    from pypto.dialects.distributed_ops import AllreduceOp

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, d: pld.DistributedTensor[[1, 64], pl.FP32], s: pld.DistributedTensor[[2, 2], pl.INT32],
              t: pld.DistributedTensor[[2, 1], pl.INT32], o: pld.DistributedTensor[[1, 63], pl.FP32]):
            d = pld.tensor.allreduce(d, s, core_num=2)
            d = pld.tensor.allreduce(d, t, core_num=2)
            o = pld.tensor.allreduce(o, s, core_num=2)
            return d

    ops = [o for o in P.module.walk() if isinstance(o, AllreduceOp)]
    why = [o.pto_blocker() for o in ops]
    assert why[0] is not None and "launched as 2 blocks (with pl.spmd(2)" in why[0] and "no launch" in why[0]
    assert why[1] is not None and "at least 2 lanes" in why[1] and "[2, 1]" in why[1]
    assert why[2] is not None and "divides the 63 columns" in why[2]


@pytest.mark.parametrize("world", [2, 4])
def test_a_kernel_of_dynamic_rank_count_and_rows_is_specialized_per_launch_and_lowers(world: int,
                                                                                       tmp_path: Path) -> None:
    """``pl.dynamic`` world size and rows: the launch's samples make them static (``[world, 1]`` signal), so
    the allreduce expands into ``pto.comm`` ops for that world size (no torch form) and matches torch."""
    from pypto.driver.compiled import CompiledProgram

    torch.manual_seed(world)
    x, out = torch.randn(world, 2, pc.C), torch.zeros(world, 2, pc.C)
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)
    compiled = pc.any_ranks_host.compile(x, out, config=RunConfig(distributed_config=dc,
                                                                   save_kernels_dir=str(tmp_path / "b")))
    assert isinstance(compiled.programs["any_ranks"], CompiledProgram)  # on the chip, not the torch form
    pto = (compiled.output_dir / "next_levels/any_ranks/ptoas/any_ranks_k.pto").read_text()
    assert "pld." not in pto and pto.count("pto.comm.twait(") == 2 * world  # two barriers over this world size
    compiled(x, out)
    ref = launch(pc.torch_allreduce, DistributedConfig(world_size=world, timeout_s=TIMEOUT), x, op="MAX")
    for r in range(world):
        assert torch.equal(out[r], ref.values[r])


def test_a_kernel_whose_core_num_is_not_its_launch_runs_as_torch_and_its_build_says_why(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """``core_num=4`` in a kernel launched as 2 blocks does not lower: the per-rank program is its torch form,
    stderr says so and ``comm_meta.json`` names the op, its source line and what it needs."""
    from pypto.driver.comm_program import CommProgram

    world = 2
    x, out = torch.zeros(world, 2, 1024), torch.zeros(world, 2, 1024)
    dc = DistributedConfig(device_ids=list(range(world)), timeout_s=TIMEOUT, num_sub_workers=0)
    compiled = pc.make_blocks(world, 2, 2, 1024, K=4).compile(x, out, config=RunConfig(
        distributed_config=dc, save_kernels_dir=str(tmp_path / "b")))
    assert isinstance(compiled.programs["blocks"], CommProgram)
    meta = json.loads((compiled.output_dir / "next_levels/blocks/comm_meta.json").read_text())
    [why] = meta["torch_form_because"]
    assert "dist_coll_programs.py:" in why and "pld.tensor.allreduce" in why
    assert "at least 4 lanes" in why  # the [2, 2] signal has a lane for 2 blocks, not 4
    err = capfd.readouterr().err
    assert "remark: blocks: runs as its torch form" in err and "at least 4 lanes" in err
