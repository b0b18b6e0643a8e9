"""insert-sync: every cross-pipe hazard gets exactly one flag pair, through loops and branches.

The checker here is independent of the pass's own analysis: it unrolls loops
(3 iterations) and enumerates branch paths into straight-line traces, builds
the happens-before graph of the hardware model (program order per pipe,
``set_flag`` after earlier ops of its pipe, ``wait_flag`` after its matching
``set_flag``, ``pipe_barrier(PIPE_ALL)`` after everything) and reports every
pair of conflicting accesses on different pipes that is not ordered.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation

import pypto.language as pl
from pypto.ptoas.codegen import lower_program
from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.dialect.sync_ops import BarrierOp, SetFlagOp, WaitFlagOp
from pypto.ptoas.passes import InsertSyncPass, PlanMemoryPass, strip_sync, uncovered_hazards
from pypto.ptoas.passes.access import Access, accesses, op_pipe
from pypto.ptoas.pto_text import parse_pto, print_pto, verify_pto

SHARED = Path(__file__).resolve().parents[3] / "shared"
UPSTREAM = SHARED / "reference" / "upstream-builds"
CORPUS = SHARED / "corpus" / "pto"
REJECTED = {
    "tcvt_verify_invalid.pto",
    "tstore_verify_shape_valid_mismatch_invalid.pto",
    "pto_entry_nonvoid_rejected.pto",
    "tinsert_verify_a2a3_invalid_dtype.pto",
}

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared not available")

Item = tuple[str, Pipe | None, object]


def _paths(block: Block, unroll: int) -> list[list[Operation]]:
    """Straight-line op sequences of a block (loops unrolled, both branches of every if)."""
    seqs: list[list[Operation]] = [[]]
    for op in block.ops:
        if isinstance(op, scf.IfOp):
            alts = _paths(op.true_region.block, unroll)
            alts += _paths(op.false_region.block, unroll) if op.false_region.blocks else [[]]
        elif isinstance(op, scf.ForOp):
            body = _paths(op.body.block, unroll)[:4]
            alts = [sum(c, []) for c in itertools.product(body, repeat=unroll)][:16]
        elif op.regions:
            alts = [sum((_paths(b, unroll)[0] for r in op.regions for b in r.blocks), [])]
        else:
            alts = [[op]]
        seqs = [s + a for s in seqs for a in alts][:64]
    return seqs


def races(trace: list[Operation]) -> list[tuple[Operation, Operation]]:
    """Conflicting cross-pipe access pairs of a trace that no sync orders."""
    n = len(trace)
    succ: list[set[int]] = [set() for _ in range(n)]
    last_on: dict[Pipe, int] = {}
    open_sets: dict[tuple[object, ...], list[int]] = {}
    for i, op in enumerate(trace):
        pipe: Pipe | None = op_pipe(op)
        if isinstance(op, SetFlagOp):
            pipe = Pipe(op.src_pipe.data)
            open_sets.setdefault((op.src_pipe, op.dst_pipe, op.event_id), []).append(i)
        elif isinstance(op, WaitFlagOp):
            pipe = Pipe(op.dst_pipe.data)
            pending = open_sets.get((op.src_pipe, op.dst_pipe, op.event_id))
            if pending:
                succ[pending.pop(0)].add(i)
        elif isinstance(op, BarrierOp):
            pipe = Pipe(op.pipe_attr.data)
            if pipe == Pipe.PIPE_ALL:
                for j in range(i):
                    succ[j].add(i)
                last_on = {p: i for p in Pipe}
                continue
        if pipe is None:
            continue
        if pipe in last_on:
            succ[last_on[pipe]].add(i)
        last_on[pipe] = i
    reach: list[set[int]] = [set() for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for j in succ[i]:
            reach[i] |= {j} | reach[j]
    acc: list[list[Access]] = [accesses(op, i) for i, op in enumerate(trace)]
    found = []
    for i, j in itertools.combinations(range(n), 2):
        pi, pj = op_pipe(trace[i]), op_pipe(trace[j])
        if pi is None or pj is None or pi == pj:
            continue
        if any(a.conflicts(b) for a in acc[i] for b in acc[j]) and j not in reach[i]:
            found.append((trace[i], trace[j]))
    return found


def unbalanced(m: ModuleOp) -> list[str]:
    """Paths on which a wait_flag has no set_flag before it or a set_flag is never waited (per key)."""
    out = []
    for f in m.walk():
        if isinstance(f, FuncOp) and f.body.blocks:
            for trace in _paths(f.body.block, 3):
                count: dict[tuple[object, ...], int] = {}
                for op in trace:
                    if isinstance(op, SetFlagOp | WaitFlagOp):
                        key = (op.src_pipe.data, op.dst_pipe.data, op.event_id.data)
                        count[key] = count.get(key, 0) + (1 if isinstance(op, SetFlagOp) else -1)
                        if count[key] < 0:
                            out.append(f"{f.sym_name.data}: wait {key} without a set")
                out += [f"{f.sym_name.data}: set {k} never waited" for k, v in count.items() if v > 0]
    return out


def flag_pairs(m: ModuleOp) -> list[tuple[SetFlagOp, WaitFlagOp]]:
    """Each set_flag with the next wait_flag of its (src, dst, event) in program order."""
    ops = [op for op in m.walk() if isinstance(op, SetFlagOp | WaitFlagOp)]
    out = []
    for i, op in enumerate(ops):
        if isinstance(op, SetFlagOp):
            key = (op.src_pipe, op.dst_pipe, op.event_id)
            w = next(
                w for w in ops[i + 1 :] if isinstance(w, WaitFlagOp) and (w.src_pipe, w.dst_pipe, w.event_id) == key
            )
            out.append((op, w))
    return out


def all_races(m: ModuleOp) -> list[tuple[Operation, Operation]]:
    out = []
    for f in m.walk():
        if isinstance(f, FuncOp) and f.body.blocks:
            for trace in _paths(f.body.block, 3):
                out += races(trace)
    return out


def pairs(m: ModuleOp) -> list[tuple[str, str, str]]:
    return [
        (op.src_pipe.data.value, op.dst_pipe.data.value, op.event_id.data.value)
        for op in m.walk()
        if isinstance(op, SetFlagOp)
    ]


def sync(m: ModuleOp) -> ModuleOp:
    InsertSyncPass().apply(Context(), m)
    verify_pto(m)
    return m


def kernel(name: str) -> ModuleOp:
    prog = pl.loads(str(UPSTREAM / name / "passes_dump" / "49_after_MaterializeValidShapeSymbols.py"))
    return next(iter(lower_program(prog).values()))


@pytest.mark.parametrize("name", ["add", "softmax_rows", "matmul_k"])
def test_reference_kernels_race_free_after_sync(name: str) -> None:
    m = kernel(name)
    assert all_races(m), "the unsynchronised kernel must have hazards"
    sync(m)
    assert all_races(m) == []
    assert uncovered_hazards(m) == []
    assert unbalanced(m) == []
    assert all(int(e.removeprefix("EVENT_ID")) < 8 for _, _, e in pairs(m))


def test_softmax_gets_one_pair_per_pipe_pair() -> None:
    m = sync(kernel("softmax_rows"))
    assert sorted(pairs(m)) == sorted(
        [
            ("PIPE_MTE3", "PIPE_MTE2", "EVENT_ID0"),
            ("PIPE_MTE2", "PIPE_V", "EVENT_ID0"),
            ("PIPE_V", "PIPE_MTE3", "EVENT_ID0"),
        ]
    )
    loop = next(op for op in m.walk() if isinstance(op, scf.ForOp))
    first = next(op for op in loop.body.block.ops if isinstance(op, SetFlagOp))
    assert first.src_pipe.data == Pipe.PIPE_MTE3  # the back-edge WAR, before the loop's first tload


def test_add_chain_mte2_v_mte3() -> None:
    assert pairs(sync(kernel("add"))) == [("PIPE_MTE2", "PIPE_V", "EVENT_ID0"), ("PIPE_V", "PIPE_MTE3", "EVENT_ID0")]


@pytest.mark.parametrize("name", ["add", "softmax_rows", "matmul_k"])
def test_idempotent(name: str) -> None:
    m = sync(kernel(name))
    once = print_pto(m)
    assert print_pto(sync(m)) == once


@pytest.mark.parametrize("name", ["add", "softmax_rows", "matmul_k"])
def test_no_redundant_pair(name: str) -> None:
    """Dropping any one inserted pair (a set and the next wait of its key) leaves a race the independent checker sees."""
    text = print_pto(sync(kernel(name)))
    m = parse_pto(text)
    n = len([op for op in m.walk() if isinstance(op, SetFlagOp)])
    for k in range(n):
        m = parse_pto(text)
        s, w = flag_pairs(m)[k]
        for op in (s, w):
            op.detach()
            op.erase()
        assert all_races(m), f"pair {k} of {name} is redundant"


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*.pto") if p.name not in REJECTED)


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus_strip_and_reinsert(path: Path) -> None:
    m = parse_pto(path.read_text(), str(path))
    verify_pto(m)
    if any(op.name == "pto.alloc_tile" and not op.operands for op in m.walk()):
        PlanMemoryPass().apply(Context(), m)
    strip_sync(m)
    sync(m)
    assert uncovered_hazards(m) == []
    assert all_races(m) == []
    assert unbalanced(m) == []
    assert all(int(e.removeprefix("EVENT_ID")) < 8 for _, _, e in pairs(m))
    once = print_pto(m)
    assert print_pto(sync(m)) == once


def test_rar_needs_no_sync() -> None:
    m = parse_pto((CORPUS / "rar_optimization_test.pto").read_text())
    PlanMemoryPass().apply(Context(), m)
    assert pairs(sync(m)) == []


def test_nested_loop_back_edge() -> None:
    m = parse_pto((CORPUS / "nested_loop_confliect.pto").read_text())
    PlanMemoryPass().apply(Context(), m)
    sync(m)
    got = set(pairs(m))
    assert ("PIPE_MTE2", "PIPE_MTE3", "EVENT_ID0") in got
    assert ("PIPE_MTE3", "PIPE_MTE2", "EVENT_ID0") in got
    assert all_races(m) == []


def test_branch_then_join() -> None:
    m = parse_pto((CORPUS / "compensation_test.pto").read_text())
    PlanMemoryPass().apply(Context(), m)
    sync(m)
    store = next(op for op in m.walk() if op.name == "pto.tstore")
    assert isinstance(store.prev_op, WaitFlagOp) and store.prev_op.src_pipe.data == Pipe.PIPE_MTE2
    assert all_races(m) == []


def test_intra_pipe_barrier_and_tail() -> None:
    text = print_pto(sync(parse_pto((CORPUS / "test_inject_sync_intra_pipe_barrier.pto").read_text())))
    assert text.index("pto.barrier <PIPE_V>") < text.rindex("pto.tadd")
    assert "pto.barrier <PIPE_ALL>" in text
    a5 = parse_pto((CORPUS / "test_inject_sync_intra_pipe_barrier.pto").read_text())
    from xdsl.dialects.builtin import StringAttr

    a5.attributes["pto.target_arch"] = StringAttr("a5")
    assert "pto.barrier <PIPE_V>" not in print_pto(sync(a5))


def test_handwritten_syncs_are_kept_and_understood() -> None:
    m = parse_pto((CORPUS / "matmul.pto").read_text())
    before = len(pairs(m))
    PlanMemoryPass().apply(Context(), m)
    sync(m)
    assert len(pairs(m)) >= before
    assert all_races(m) == []


TILE = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=128, v_row=64, v_col=128, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
PV = "!pto.partition_tensor_view<64x128xf32>"


def _stage(buf: str, n: int, off: str) -> tuple[str, str, str]:
    load = f"""
      %r{n} = arith.muli {off}, %c64 : index
      %xp{n} = pto.partition_view %xv, offsets = [%r{n}, %c0], sizes = [%c64, %c128] : !pto.tensor_view<?x?xf32> -> {PV}
      pto.tload ins(%xp{n} : {PV}) outs({buf} : {TILE})"""
    exp = f"""
      pto.texp ins({buf} : {TILE}) outs({buf} : {TILE})"""
    store = f"""
      %yp{n} = pto.partition_view %yv, offsets = [%r{n}, %c0], sizes = [%c64, %c128] : !pto.tensor_view<?x?xf32> -> {PV}
      pto.tstore ins({buf} : {TILE}) outs(%yp{n} : {PV})"""
    return load, exp, store


def double_buffered() -> ModuleOp:
    """The load-exp-store loop as LowerPipelineLoops replicates it for stage=2 (buffers A, B), unsynchronised."""
    la, ea, sa = _stage("%A", 0, "%i")
    lb, eb, sb = _stage("%B", 1, "%i1")
    return parse_pto(f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @double_buffered(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %c512 = arith.constant 512 : index
    %a0 = arith.constant 0 : i64
    %a1 = arith.constant 32768 : i64
    %xv = pto.make_tensor_view %x, shape = [%c512, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xf32>
    %yv = pto.make_tensor_view %y, shape = [%c512, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xf32>
    %A = pto.alloc_tile addr = %a0 : {TILE}
    %B = pto.alloc_tile addr = %a1 : {TILE}
    scf.for %i = %c0 to %c8 step %c2 {{
      %i1 = arith.addi %i, %c1 : index{la}{lb}{ea}{eb}{sa}{sb}
    }}
    return
  }}
}}""")


def _names(block: Block) -> list[str]:
    out = []
    for op in block.ops:
        if isinstance(op, SetFlagOp | WaitFlagOp):
            kind = "set" if isinstance(op, SetFlagOp) else "wait"
            src, dst = op.src_pipe.data.value.removeprefix("PIPE_"), op.dst_pipe.data.value.removeprefix("PIPE_")
            out.append(f"{kind} {src}->{dst} {op.event_id.data.value.removeprefix('EVENT_ID')}")
        elif op.name in ("pto.tload", "pto.texp", "pto.tstore", "scf.for"):
            out.append(op.name.removeprefix("pto.").removeprefix("scf."))
    return out


def test_double_buffer_sets_after_producer_waits_before_consumer() -> None:
    """Each set right after its producer, each wait right before its consumer, one event id per buffer: the
    first exp waits only for its own load, each load only for the store that last read its buffer (a back-edge
    pair: set after the store, a prologue set before the loop, an epilogue wait after it)."""
    m = sync(double_buffered())
    func = next(op for op in m.walk() if isinstance(op, FuncOp))
    loop = next(op for op in m.walk() if isinstance(op, scf.ForOp))
    assert _names(loop.body.block) == [
        "wait MTE3->MTE2 0",
        "tload",  # A
        "set MTE2->V 0",
        "set MTE3->MTE2 1",  # B's last store is the last MTE3 op: a set here fires just as early
        "wait MTE3->MTE2 1",
        "tload",  # B
        "set MTE2->V 1",  # right after its producer, as PTOAS places it
        "wait MTE2->V 0",
        "texp",  # A: waits for load A only
        "set V->MTE3 0",
        "wait MTE2->V 1",
        "texp",  # B
        "set V->MTE3 1",
        "wait V->MTE3 0",
        "tstore",  # A
        "set MTE3->MTE2 0",  # the back edge: next iteration's load A waits for this store only
        "wait V->MTE3 1",
        "tstore",  # B
    ]
    assert _names(func.body.block) == ["set MTE3->MTE2 0", "for", "wait MTE3->MTE2 0"]
    assert all_races(m) == []
    assert uncovered_hazards(m) == []
    assert unbalanced(m) == []
    once = print_pto(m)
    assert print_pto(sync(m)) == once


def test_double_buffer_overlaps_on_the_simulator() -> None:
    """The synced double-buffered loop runs race-free and balanced, well below the serial schedule."""
    import numpy as np

    from pypto.device.interpreter import run_kernel

    x = np.random.default_rng(0).standard_normal((512, 128)).astype(np.float32)
    y = np.zeros_like(x)
    run = run_kernel(sync(double_buffered()), None, [x, y])
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-4, atol=1e-4)
    assert run.races == []
    serial = 8 * (560 + 288 + 300)  # load + exp + store per tile, one after the other
    assert run.cycles < 0.6 * serial, run.cycles


def test_flag_set_right_after_its_producer() -> None:
    """PTOAS's placement: the set right after its producer even when no op of its pipe follows (the consumer's
    alloc_tile lies between set and wait, as PTOAS's FileCheck lines expect)."""
    m = sync(kernel("add"))
    sets = [op for op in m.walk() if isinstance(op, SetFlagOp)]
    assert [s.prev_op.name for s in sets] == ["pto.tload", "pto.tadd"]
    assert not any(isinstance(s.next_op, WaitFlagOp) for s in sets)
