"""insert-sync grows linearly with the op count (issue 17 goal 3), counted, never timed.

The kernel is N independent load/add/store chains (what ``benchmarks/compile_scaling.py`` compiles); from N
to 2N ops the analysis must transfer twice the ops and keep twice the memory in its per-op states. With
frozensets every state held its own copy of the sets of all accesses issued so far (``issued``, the
pending set of an idle pipe): 3.5-3.7x the memory per doubling. The bit sets of
:mod:`pypto.ptoas.passes.access_set` keep it at about 2x.
"""

from __future__ import annotations

import gc
import random
import tracemalloc

import pytest
from xdsl.dialects.func import FuncOp

from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.passes.access import Access, Buffer
from pypto.ptoas.passes.access_set import EMPTY, AccessIndex, AccessSet
from pypto.ptoas.passes.insert_sync import SyncAnalysis, insert_sync_func
from pypto.ptoas.pto_text import parse_pto

TILE = (
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=16, v_row=?, v_col=?, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>"
)
VIEW = "!pto.partition_tensor_view<16x16xf32>"
TENSOR = "!pto.tensor_view<?x?xf32>"


def chains(n: int) -> str:
    """A vector kernel of ``n`` load/add/store chains, every tile at address 0 (as MemoryReuse leaves them)."""
    consts = "".join(f"    %r{i} = arith.constant {16 * i} : index\n" for i in range(n))
    body = "".join(
        f"    %x{i} = pto.alloc_tile addr = %c0_i64 valid_row = %c16 valid_col = %c16 : {TILE}\n"
        f"    %a{i} = pto.partition_view %av, offsets = [%r{i}, %c0], sizes = [%c16, %c16] : {TENSOR} -> {VIEW}\n"
        f"    pto.tload ins(%a{i} : {VIEW}) outs(%x{i} : {TILE})\n"
        f"    %t{i} = pto.alloc_tile addr = %c0_i64 valid_row = %c16 valid_col = %c16 : {TILE}\n"
        f"    pto.tadd ins(%x{i}, %x{i} : {TILE}, {TILE}) outs(%t{i} : {TILE})\n"
        f"    %o{i} = pto.partition_view %ov, offsets = [%r{i}, %c0], sizes = [%c16, %c16] : {TENSOR} -> {VIEW}\n"
        f"    pto.tstore ins(%t{i} : {TILE}) outs(%o{i} : {VIEW})\n"
        for i in range(n)
    )
    views = "".join(
        f"    %{v} = pto.make_tensor_view %{arg}, shape = [%rows, %c16], strides = [%c16, %c1] "
        f"{{layout = #pto.layout<nd>}} : {TENSOR}\n"
        for v, arg in (("av", "arg0"), ("ov", "arg1"))
    )
    return (
        'module attributes {pto.target_arch = "a2a3"} {\n'
        "  func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>) "
        "attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n"
        "    %c0_i64 = arith.constant 0 : i64\n    %c0 = arith.constant 0 : index\n"
        f"    %c1 = arith.constant 1 : index\n    %c16 = arith.constant 16 : index\n"
        f"    %rows = arith.constant {16 * n} : index\n{consts}{views}{body}    return\n  }}\n}}\n"
    )


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


def chains_in_loop(n: int) -> str:
    """``chains(n)`` with the chains as the body of one ``scf.for`` (16 trips)."""
    head, rest = chains(n).split("    %x0 = ", 1)
    body, tail = rest.rsplit("    return\n", 1)
    nested = "".join(f"  {line}\n" for line in f"    %x0 = {body}".splitlines())
    return f"{head}    scf.for %i = %c0 to %c16 step %c1 {{\n{nested}    }}\n    return\n{tail}"


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
