"""Passes 32-35 (InitMemRef, MaterializeSemanticAliases, MemoryReuse,
AllocateMemoryAddr), 38-39 (DeriveCallDirections, AutoDeriveTaskDependencies)
and the post-pipeline PH001 check.

The memory passes run on upstream's ``31_after_MaterializeTensorStrides``
dumps and must reproduce upstream's 32..35 dumps: same allocs (names, spaces,
sizes, order), same MemRef on every value, same sharing and addresses.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64

import pypto.language as pl
from pypto.core.analysis.memref import function_values, memref_of
from pypto.core.context import make_context
from pypto.diagnostics import DiagnosticError, Severity, collecting
from pypto.dialects.enums import ParamDirection, ParamDirectionAttr
from pypto.dialects.tile_ops import TileAllocOp
from pypto.dialects.types import TensorType, TileType
from pypto.passes.pipeline_order import KEBAB_NAMES
from pypto.passes.registry import get_pass
from pypto.pipeline.checks import run_post_pipeline_checks
from pypto.pipeline.perf_hints import format_hint

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream-builds"
EXAMPLES = ("add", "softmax_rows", "matmul_k")
MEMORY_PASSES = (
    (32, "InitMemRef"),
    (33, "MaterializeSemanticAliases"),
    (34, "MemoryReuse"),
    (35, "AllocateMemoryAddr"),
)

needs_upstream = pytest.mark.skipif(not UPSTREAM.is_dir(), reason="upstream reference builds not available")


def run(module: ModuleOp, *names: str) -> ModuleOp:
    for name in names:
        get_pass(KEBAB_NAMES.get(name, name))().apply(make_context(), module)
        module.verify()
    return module


def dump(example: str, n: int) -> Path:
    (path,) = (UPSTREAM / example / "passes_dump").glob(f"{n:02d}_after_*.py")
    return path


def structure(module: ModuleOp) -> dict[str, object]:
    """What the memory passes decide, per function: the allocs and every named
    value's MemRef (tiles) -- compared structurally, not as text."""
    out: dict[str, object] = {}
    for f in module.ops:
        if not isinstance(f, func.FuncOp):
            continue
        allocs = [(a.base.data, str(a.space), a.size) for a in f.body.walk() if isinstance(a, TileAllocOp)]
        refs = []
        for v in function_values(f):
            m = memref_of(v.type)
            if m is not None and isinstance(v.type, TileType):
                refs.append((v.name_hint, m.base.data, m.offset.data, m.size.data))
        params = [memref_of(a.type) for a in f.args]
        out[f.sym_name.data] = (allocs, refs, params)
    return out


@needs_upstream
@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("upto", [n for n, _ in MEMORY_PASSES])
def test_memory_passes_reproduce_upstream(example: str, upto: int) -> None:
    ours = pl.loads(str(dump(example, 31))).module
    run(ours, *[name for n, name in MEMORY_PASSES if n <= upto])
    theirs = pl.loads(str(dump(example, upto))).module
    assert structure(ours) == structure(theirs)


@needs_upstream
def test_softmax_sharing_and_addresses() -> None:
    m = run(pl.loads(str(dump("softmax_rows", 31))).module, "init-memref", "materialize-semantic-aliases", "memory-reuse", "allocate-memory-addr")
    refs = {
        v.name_hint: (mr.base.data, mr.offset.data)
        for v in function_values(next(iter(m.ops)))  # type: ignore[arg-type]
        if (mr := memref_of(v.type)) is not None and isinstance(v.type, TileType)
    }
    for name in ("t__ssa_v0", "t__tmp_v0", "e__ssa_v0", "t__tmp_v1"):
        assert refs[name] == ("mem_vec_2", 0)
    assert refs["tmp__ssa_v0"] == ("mem_vec_3", 8192)
    assert refs["mx__ssa_v0"] == refs["s__ssa_v0"] == ("mem_vec_4", 16384)


@needs_upstream
def test_dsl_text_of_35_equals_upstream() -> None:
    for example in EXAMPLES:
        ours = pl.loads(str(dump(example, 31)))
        run(ours.module, *[name for _, name in MEMORY_PASSES])
        assert ours.as_python() == pl.loads(str(dump(example, 35))).as_python()


TWO_KERNELS = '''
import pypto.language as pl


@pl.program
class Two:
    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def k1(self, a: pl.Tensor[[64, 128], pl.FP32], o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        x: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        y: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(x)
        o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(y, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
    def k2(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32], o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        x: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        z: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(b, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        y: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(x, z)
        o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(y, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def main(self, a: pl.Tensor[[64, 128], pl.FP32], b: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
        t: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.create([64, 128], dtype=pl.FP32)
        u: pl.Tensor[[64, 128], pl.FP32] = pl.tensor.create([64, 128], dtype=pl.FP32)
        t1: pl.Tensor[[64, 128], pl.FP32] = self.k1(a, t)
        u1: pl.Tensor[[64, 128], pl.FP32] = self.k1(b, u)
        r: pl.Tensor[[64, 128], pl.FP32] = self.k2(t1, u1, out)
        return r
'''

ONE_CALL_EACH = TWO_KERNELS.replace(
    "        u1: pl.Tensor[[64, 128], pl.FP32] = self.k1(b, u)\n", ""
).replace("self.k2(t1, u1, out)", "self.k2(t1, b, out)")


def two_kernels() -> ModuleOp:
    return pl.parse(TWO_KERNELS).module


def funcs(m: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in m.ops if isinstance(f, func.FuncOp)}


def test_init_memref_reconciles_ddr_names_across_calls() -> None:
    m = run(pl.parse(ONE_CALL_EACH).module, "init-memref")
    fs = funcs(m)
    main = fs["main"]
    calls = [op for op in main.walk() if isinstance(op, func.CallOp)]
    # call results carry the MemRef of the Out argument the callee writes
    assert memref_of(calls[0].results[0].type) == memref_of(calls[0].arguments[1].type)
    assert memref_of(calls[1].results[0].type) == memref_of(main.args[2].type)
    # the callee's parameters took the caller's names (t is mem_ddr_3 in main)
    assert memref_of(fs["k1"].args[1].type) == memref_of(calls[0].arguments[1].type)
    assert memref_of(calls[0].arguments[1].type).base.data == "mem_ddr_3"  # type: ignore[union-attr]
    # every value has a MemRef; every tile's base is an alloc of its function
    for f in fs.values():
        bases = {a.base.data for a in f.walk() if isinstance(a, TileAllocOp)}
        for v in function_values(f):
            if isinstance(v.type, (TileType, TensorType)):
                mr = memref_of(v.type)
                assert mr is not None
                if isinstance(v.type, TileType):
                    assert mr.base.data in bases


TWO_SLICES = Path(__file__).resolve().parents[1] / "passes" / "init-memref-shared-slices.py"
"""The lit test's program (a kernel called with two slices of one tensor), read from its file."""


def test_init_memref_two_views_of_one_buffer() -> None:
    """Regression (upstream's qwen3 decode, #15): a call passes two slices of
    one tensor; the callee parameter already named like that buffer used to be
    moved aside and renamed back every round, leaving the call's operand types
    unlike the callee's (VerificationError after InitMemRef)."""
    m = run(pl.loads(TWO_SLICES).module, "init-memref")  # run() verifies the module
    fs = funcs(m)
    (call,) = [op for op in fs["main"].walk() if isinstance(op, func.CallOp)]
    x, out = (memref_of(a.type) for a in fs["main"].args)
    assert x is not None and out is not None
    assert [memref_of(a.type).base.data for a in call.arguments] == [x.base.data, x.base.data, out.base.data]  # type: ignore[union-attr]
    assert [memref_of(a.type) for a in fs["k"].args] == [memref_of(a.type) for a in call.arguments]


def test_init_memref_multi_site_callee_drops_ddr_memref() -> None:
    """k1 is called with two different tensors: no single parameter type can
    satisfy func.call's verifier, so that tensor goes without a DDR MemRef."""
    m = run(two_kernels(), "init-memref")
    k1 = funcs(m)["k1"]
    assert memref_of(k1.args[0].type) is None and memref_of(k1.args[1].type) is None
    assert memref_of(funcs(m)["main"].args[2].type) is not None  # out: one call site


def test_init_memref_numbering_follows_upstream() -> None:
    m = run(pl.parse(ONE_CALL_EACH).module, "init-memref")
    k2 = funcs(m)["k2"]
    assert [a.base.data for a in k2.walk() if isinstance(a, TileAllocOp)] == ["mem_vec_3", "mem_vec_4", "mem_vec_5"]
    main = funcs(m)["main"]
    assert [memref_of(a.type).base.data for a in main.args] == ["mem_ddr_0", "mem_ddr_1", "mem_ddr_2"]  # type: ignore[union-attr]


def test_materialize_aliases_loop_carry_with_copy() -> None:
    """``acc = acc + x`` where ``acc`` is read again after the add: the new
    value cannot be written over the carried buffer, so a move copies it."""
    src = '''
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
    acc0: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
    for i, (acc,) in pl.range(4, init_values=(acc0,)):
        x: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(acc)
        y: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.add(acc, x)
        z: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.mul(y, acc)
        acc_out: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.yield_(z)
    o2: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(acc_out, [0, 0], o)
    return o
'''
    m = run(pl.parse(src).module, "init-memref", "materialize-semantic-aliases")
    f = next(iter(funcs(m).values()))
    names = {v.name_hint: memref_of(v.type) for v in function_values(f) if isinstance(v.type, TileType)}
    # z is written after acc's last read (mul reads acc and writes z): retargeted
    assert names["z"].base == names["acc0"].base  # type: ignore[union-attr]
    assert names["acc_out"] == names["acc0"]


def test_materialize_aliases_inserts_move_when_unsafe() -> None:
    src = '''
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
    acc0: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
    for i, (acc,) in pl.range(4, init_values=(acc0,)):
        y: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(acc)
        z: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.mul(y, acc)
        o2: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(z, [0, 0], o)
        acc_out: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.yield_(y)
    return o
'''
    m = run(pl.parse(src).module, "init-memref")
    f = next(iter(funcs(m).values()))
    moves = [op for op in f.walk() if op.name == "pl.tile.move"]
    assert len(moves) == 1  # acc is read after y is written: y is copied into acc's buffer
    loads = [op for op in f.walk() if op.name == "pl.tile.load"]
    assert memref_of(moves[0].results[0].type) == memref_of(loads[0].results[0].type)


def test_memory_reuse_respects_loop_lifetimes() -> None:
    """A tile defined before a loop and read inside it lives to the loop's
    end: a tile defined inside the loop may not take its buffer."""
    src = '''
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[16, 128], pl.FP32], o: pl.Out[pl.Tensor[[64, 128], pl.FP32]]) -> pl.Tensor[[64, 128], pl.FP32]:
    w: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
    for i in pl.range(4):
        x: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
        y: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.mul(x, w)
        o2: pl.Tensor[[64, 128], pl.FP32] = pl.tile.store(y, [i * 16, 0], o)
    return o
'''
    m = run(pl.parse(src).module, "init-memref", "materialize-semantic-aliases", "memory-reuse")
    f = next(iter(funcs(m).values()))
    refs = {v.name_hint: memref_of(v.type).base.data for v in function_values(f) if isinstance(v.type, TileType)}  # type: ignore[union-attr]
    assert refs["x"] != refs["w"] and refs["y"] != refs["w"]
    assert refs["y"] == refs["x"]  # x dies where y is born
    assert len([op for op in f.walk() if isinstance(op, TileAllocOp)]) == 2


def test_memory_reuse_did_something() -> None:
    m = run(two_kernels(), "init-memref", "materialize-semantic-aliases")
    before = len([op for op in m.walk() if isinstance(op, TileAllocOp)])
    run(m, "memory-reuse")
    after = len([op for op in m.walk() if isinstance(op, TileAllocOp)])
    assert after < before


BIG = '''
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[256, 256], pl.FP32], o: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
    big: pl.Tile[[256, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [256, 256], [256, 256], target_memory=pl.Mem.Vec)
    o2: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store(big, [0, 0], o)
    return o
'''


def test_overflow_names_the_tile() -> None:
    m = run(pl.parse(BIG, filename="big.py").module, "init-memref", "materialize-semantic-aliases", "memory-reuse")
    with pytest.raises(DiagnosticError) as err:
        run(m, "allocate-memory-addr")
    d = err.value.diagnostic
    assert d.severity is Severity.ERROR
    assert "'big'" in d.message and "262144 bytes" in d.message
    assert "Vec" in d.message and "196608" in d.message and "exceeds platform limit" in d.message
    assert d.span is not None and d.span.line == 7  # the load defining big


def test_derive_call_directions() -> None:
    m = run(two_kernels(), "derive-call-directions")
    calls = [op for op in funcs(m)["main"].walk() if isinstance(op, func.CallOp)]
    dirs = calls[2].attributes["pl.arg_directions"]
    assert isinstance(dirs, ArrayAttr)
    assert [d.data for d in dirs.data if isinstance(d, ParamDirectionAttr)] == [
        ParamDirection.In,
        ParamDirection.In,
        ParamDirection.Out,
    ]


@pytest.mark.parametrize("with_memrefs", [False, True])
def test_task_dependencies(with_memrefs: bool) -> None:
    m = two_kernels()
    if with_memrefs:
        run(m, "init-memref")
    run(m, "derive-call-directions", "auto-derive-task-dependencies")
    calls = [op for op in funcs(m)["main"].walk() if isinstance(op, func.CallOp)]

    def deps(c: func.CallOp) -> list[int]:
        a = c.attributes["pl.task_deps"]
        assert isinstance(a, ArrayAttr)
        return [int(x.value.data) for x in a.data if isinstance(x, IntegerAttr)]

    assert [deps(c) for c in calls] == [[], [], [0, 1]]
    assert [c.attributes["pl.task_id"] for c in calls] == [IntegerAttr(i, i64) for i in range(3)]
    # no task attributes outside Orchestration functions
    assert all("pl.task_deps" not in op.attributes for op in funcs(m)["k1"].walk())


PH001_SRC = '''
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[64, 16], pl.FP32], o: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
    for i in pl.unroll(2):
        x: pl.Tile[[32, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [32, 16], [32, 16], target_memory=pl.Mem.Vec)
    y: pl.Tile[[64, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 16], [64, 16], target_memory=pl.Mem.Vec)
    o2: pl.Tensor[[64, 16], pl.FP32] = pl.tile.store(y, [0, 0], o)
    return o
'''


def test_ph001_for_16_fp32_innermost() -> None:
    m = pl.parse(PH001_SRC, filename="kernels.py").module
    with collecting() as c:
        hints = run_post_pipeline_checks(m, backend="a2a3")
    assert c.items == hints
    assert len(hints) == 3
    load = hints[0]
    assert load.code == "PH001" and load.rule == "TileInnermostDimGranularity" and load.severity is Severity.REMARK
    assert load.message == (
        "tile.load has innermost dim = 64B (tile fp32[16], target_memory=Vec); moves 2048B as 32 x 64B rows; "
        "recommended >= 512B for backend a2a3 (L2 cache line = 512B). Consider increasing tile shape on the innermost axis."
    )
    assert format_hint(load) == f"[perf_hint PH001] TileInnermostDimGranularity: {load.message} at kernels.py:8:53"
    store = hints[2]
    assert store.message.startswith("tile.store has innermost dim = 64B (tile fp32[16], target_memory=Vec); moves 4096B as 64 x 64B rows;")
    # a5 threshold is 128B: still below
    assert len(run_post_pipeline_checks(m, backend="a5")) == 3
    assert run_post_pipeline_checks(m, disabled=["TileInnermostDimGranularity"]) == []


def test_ph001_dedupes_per_site() -> None:
    src = PH001_SRC.replace("pl.unroll(2)", "pl.range(2)")
    m = pl.parse(src, filename="kernels.py").module
    # duplicate the in-loop load at the same location, as an unrolled loop would
    load = next(op for op in m.walk() if op.name == "pl.tile.load")
    clone = load.clone()
    load.parent_block().insert_op_after(clone, load)  # type: ignore[union-attr]
    with collecting():
        hints = run_post_pipeline_checks(m)
    msgs = [h.message for h in hints]
    assert any(msg.endswith("(2 occurrences at this source location)") for msg in msgs)


@needs_upstream
def test_ph001_matches_upstream_matmul_k() -> None:
    m = pl.loads(str(dump("matmul_k", 49))).module
    with collecting():
        hints = run_post_pipeline_checks(m)
    upstream = (UPSTREAM / "matmul_k" / "report" / "perf_hints.log").read_text().splitlines()
    expected = upstream[0].split("] TileInnermostDimGranularity: ", 1)[1].split(" (2 occurrences")[0]
    assert {h.message for h in hints} == {expected}
