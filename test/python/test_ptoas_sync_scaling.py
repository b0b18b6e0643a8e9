"""insert-sync grows linearly with the op count (issue 17 goal 3), counted, never timed.

The kernel is N independent load/add/store chains (what ``benchmarks/compile_scaling.py`` compiles; the text
is ``benchmarks/insert_sync_scaling.py``'s, which times what is counted here); from N to 2N ops the analysis
must transfer twice the ops and keep twice the memory in its per-op states, and placing the syncs must
execute twice the lines. With
frozensets every state held its own copy of the sets of all accesses issued so far (``issued``, the
pending set of an idle pipe): 3.5-3.7x the memory per doubling. The bit sets of
:mod:`pypto.ptoas.passes.access_set` keep it at about 2x.
"""

from __future__ import annotations

import gc
import random
import sys
import tracemalloc
from pathlib import Path

import pytest
from xdsl.dialects.func import FuncOp

from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.passes.access import Access, Buffer
from pypto.ptoas.passes.access_set import EMPTY, AccessIndex, AccessSet
from pypto.ptoas.passes.insert_sync import SyncAnalysis, insert_sync_func
from pypto.ptoas.pto_text import parse_pto

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from insert_sync_scaling import chains, chains_in_loop  # noqa: E402  (the benchmark's kernels)


def analyse(n: int) -> tuple[int, int]:
    """(ops transferred, bytes the analysis still holds) of one whole-function analysis of ``chains(n)``."""
    func = next(o for o in parse_pto(chains(n)).walk() if isinstance(o, FuncOp))
    transfers = 0
    analysis = SyncAnalysis(func, "a2a3")
    transfer = analysis.op

    def counted(op, state):  # type: ignore[no-untyped-def]
        nonlocal transfers
        transfers += 1
        return transfer(op, state)

    analysis.op = counted  # type: ignore[method-assign]
    gc.collect()
    tracemalloc.start()
    try:
        analysis.run()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert analysis.plan, "the chains need syncs"
    return transfers, held


def test_insert_sync_analysis_linear_in_op_count() -> None:
    analyse(8)  # lazy imports and caches out of the way
    (ops_n, bytes_n), (ops_2n, bytes_2n) = analyse(60), analyse(120)
    assert ops_2n / ops_n <= 2.05, (ops_n, ops_2n)
    # frozenset states: 3.5x (and 3.7x from 100 to 200); bit sets: 2.1x
    assert bytes_2n / bytes_n <= 2.4, (bytes_n, bytes_2n)


def insert_steps(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """Ops the analysis transfers while ``insert_sync_func`` places every sync of ``text``'s function."""
    func = next(o for o in parse_pto(text).walk() if isinstance(o, FuncOp))
    transfers = 0
    transfer = SyncAnalysis.op

    def counted(self, op, state):  # type: ignore[no-untyped-def]
        nonlocal transfers
        transfers += 1
        return transfer(self, op, state)

    with monkeypatch.context() as patch:
        patch.setattr(SyncAnalysis, "op", counted)
        added = insert_sync_func(func, "a2a3")
    assert added >= 6 * text.count("pto.tload"), "every chain in the loop gets its syncs"
    return transfers


def test_insert_sync_linear_inside_one_loop_body(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync placed in an ``scf.for`` body resumes the analysis inside the body: re-analysing the whole loop
    after each made one loop body quadratic (25 -> 50 -> 100 chains: 3.96x and 3.98x the op steps)."""
    steps = [insert_steps(chains_in_loop(n), monkeypatch) for n in (25, 50, 100)]
    assert steps[1] / steps[0] <= 2.1 and steps[2] / steps[1] <= 2.1, steps


def place_lines(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """Python lines ``SyncAnalysis.place`` (and what it calls) executes while ``insert_sync_func`` places every
    sync of ``text``'s function (``sys.settrace``: counted, not timed)."""
    func = next(o for o in parse_pto(text).walk() if isinstance(o, FuncOp))
    lines = 0

    def tracer(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal lines
        if event == "line":
            lines += 1
        return tracer

    place = SyncAnalysis.place

    def traced(self, b, src):  # type: ignore[no-untyped-def]
        previous = sys.gettrace()
        sys.settrace(tracer)
        try:
            return place(self, b, src)
        finally:
            sys.settrace(previous)

    with monkeypatch.context() as patch:
        patch.setattr(SyncAnalysis, "place", traced)
        insert_sync_func(func, "a2a3")
    assert lines, "syncs were placed"
    return lines


def test_insert_sync_placement_linear_inside_one_loop_body(monkeypatch: pytest.MonkeyPatch) -> None:
    """Placing a sync in an ``scf.for`` body looks the states up by op and walks from the wait back to the set:
    listing the body's ops and their states per placed sync (``block_snaps``) made placement quadratic
    (25 -> 50 -> 100 chains: 3.8x and 3.9x the lines ``place`` executes; now 2.0x)."""
    lines = [place_lines(chains_in_loop(n), monkeypatch) for n in (25, 50, 100)]
    assert lines[1] / lines[0] <= 2.1 and lines[2] / lines[1] <= 2.1, lines


def _access(i: int) -> Access:
    return Access(i, Buffer("vec", 64 * (i % 5), 64 * (i % 5) + 64), bool(i % 2), Pipe.PIPE_V)


@pytest.mark.parametrize("seed", range(5))
def test_access_set_is_a_set(seed: int) -> None:
    """Unions, differences, intersections, membership, order and equality as frozensets of the same accesses."""
    rng = random.Random(seed)
    index, pool = AccessIndex(), [_access(i) for i in range(70)]
    sets = [frozenset(rng.sample(pool, rng.randrange(0, 40))) for _ in range(6)] + [frozenset()]
    as_bits = [AccessSet.of(s, index) if s else EMPTY for s in sets]
    for a, x in zip(sets, as_bits, strict=True):
        assert set(x) == a and len(x) == len(a) and bool(x) == bool(a)
        assert all((p in x) == (p in a) for p in pool)
        for b, y in zip(sets, as_bits, strict=True):
            assert set(x | y) == a | b
            assert set(x - y) == a - b
            assert set(x & y) == a & b
            assert (x <= y) == (a <= b)
            assert (x == y) == (a == b)
            assert (hash(x) == hash(y)) or a != b


def test_access_sets_of_two_analyses_do_not_mix() -> None:
    a, b = AccessSet.of([_access(1)], AccessIndex()), AccessSet.of([_access(2)], AccessIndex())
    with pytest.raises(ValueError, match="two analyses"):
        _ = a | b
