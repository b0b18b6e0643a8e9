"""The tile passes 13..30 with real logic: LowerCompositeOps, FlattenTileNdTo2D,
AutoTileMatmulL0, CanonicalizeTileSlice, InferTileMemorySpace,
ExpandMixedKernel, NormalizeReturnOrder, LowerPipelineLoops and
CanonicalizeIOOrder."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects import func, scf

import pypto.language as pl
from pypto.core.context import make_context
from pypto.core.program import Program
from pypto.diagnostics import collecting
from pypto.dialects.enums import ForKind, FunctionType, Level
from pypto.dialects.program import for_kind, for_stage, function_level, function_type
from pypto.passes.pipeline_order import KEBAB_NAMES
from pypto.passes.registry import get_pass

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream-builds"

MINE = (
    "LowerCompositeOps",
    "FlattenTileNdTo2D",
    "AutoTileMatmulL0",
    "CanonicalizeTileSlice",
    "InferTileMemorySpace",
    "ExpandMixedKernel",
    "NormalizeReturnOrder",
    "LowerPipelineLoops",
    "CanonicalizeIOOrder",
)


def run(prog: Program, *names: str) -> Program:
    for n in names:
        get_pass(KEBAB_NAMES[n])().apply(make_context(), prog.module)
        prog.module.verify()
    return prog


def functions(prog: Program) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in prog.module.ops if isinstance(f, func.FuncOp)}


def roundtrips(prog: Program) -> bool:
    text = prog.as_python()
    return pl.parse(text).as_python() == text


def program(body: str) -> Program:
    return pl.parse("import pypto.language as pl\n\n\n@pl.program\nclass P:\n" + body)


@pytest.mark.parametrize("name", MINE)
def test_registered_under_pipeline_names(name: str) -> None:
    cls = get_pass(KEBAB_NAMES[name])
    assert cls.PASS_NAME == name
    assert cls.name == KEBAB_NAMES[name]


@pytest.mark.skipif(not UPSTREAM.exists(), reason="upstream builds not available")
@pytest.mark.parametrize("kernel", ["add", "softmax_rows", "matmul_k"])
def test_upstream_11_to_30(kernel: str) -> None:
    """Our passes 13..30 turn upstream's 11 dump into its 30 dump (structurally)."""
    dumps = UPSTREAM / kernel / "passes_dump"
    prog = run(pl.loads(str(dumps / "11_after_ConvertTensorToTileOps.py")), *MINE)
    assert prog.as_python() == pl.loads(str(dumps / "30_after_CanonicalizeIOOrder.py")).as_python()
    assert roundtrips(prog)


@pytest.mark.skipif(not UPSTREAM.exists(), reason="upstream builds not available")
def test_infer_tile_memory_space_matches_upstream_18() -> None:
    dumps = UPSTREAM / "matmul_k" / "passes_dump"
    prog = run(pl.loads(str(dumps / "11_after_ConvertTensorToTileOps.py")), "InferTileMemorySpace")
    assert prog.as_python() == pl.loads(str(dumps / "18_after_InferTileMemorySpace.py")).as_python()


MIXED = """
    @pl.function(type=pl.FunctionType.InCore)
    def mixed(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        x_mat: pl.Tile[[16, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Mat)
        y_mat: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(y, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
        z: pl.Tile[[16, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(x_mat, y_mat)
        z_vec: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.move(z, target_memory=pl.Mem.Vec)
        e: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(z_vec)
        out: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(e, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.BF16], y: pl.Tensor[[128, 128], pl.BF16], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        r: pl.Tensor[[16, 128], pl.FP32] = self.mixed(x, y, out)
        return r
"""


def test_expand_mixed_kernel_splits() -> None:
    prog = run(program(MIXED), "InferTileMemorySpace", "ExpandMixedKernel")
    fs = functions(prog)
    assert set(fs) == {"mixed", "mixed_aic", "mixed_aiv", "main"}
    assert function_type(fs["mixed"]) is FunctionType.Group
    assert function_level(fs["mixed"]) is Level.CORE_GROUP
    assert function_type(fs["mixed_aic"]) is FunctionType.AIC
    assert function_type(fs["mixed_aiv"]) is FunctionType.AIV
    assert not fs["mixed_aic"].function_type.outputs.data
    aic_ops = {op.name for op in fs["mixed_aic"].body.walk()}
    aiv_ops = {op.name for op in fs["mixed_aiv"].body.walk()}
    assert "pl.tile.tpush_to_aiv" in aic_ops and "pl.tile.matmul" in aic_ops
    assert "pl.tile.exp" not in aic_ops and "pl.tile.store" not in aic_ops
    assert "pl.tile.tpop_from_aic" in aiv_ops and "pl.tile.exp" in aiv_ops
    assert "pl.tile.matmul" not in aiv_ops and "pl.tile.load" not in aiv_ops
    calls = [op.callee.root_reference.data for op in fs["mixed"].body.walk() if isinstance(op, func.CallOp)]
    assert calls == ["mixed_aic", "mixed_aiv"]
    assert roundtrips(prog)
    assert not any(function_type(f) is FunctionType.InCore for f in fs.values())


def test_expand_mixed_kernel_vector_to_cube_pops_into_mat_then_moves() -> None:
    prog = run(
        program("""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP16], y: pl.Tensor[[16, 16], pl.FP16], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        v: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        r: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec] = pl.tile.relu(v)
        left: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.tile.move(r, target_memory=pl.Mem.Left)
        ym: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.load(y, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Mat)
        yr: pl.Tile[[16, 16], pl.FP16, pl.Mem.Right] = pl.tile.move(ym, target_memory=pl.Mem.Right)
        c: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(left, yr)
        out: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out
"""),
        "ExpandMixedKernel",
    )
    text = prog.as_python()
    assert "pl.tile.tpush_to_aic(r, split=0)" in text
    assert "left_mat: pl.Tile[[16, 16], pl.FP16, pl.Mem.Mat] = pl.tile.tpop_from_aiv(shape=[16, 16], dtype=pl.FP16, split=0)" in text
    assert "left: pl.Tile[[16, 16], pl.FP16, pl.Mem.Left] = pl.tile.move(left_mat, target_memory=pl.Mem.Left)" in text
    # The AIV half returns the output (written by the cube half) through its parameter.
    aiv = functions(prog)["k_aiv"]
    ret = aiv.body.block.last_op
    assert isinstance(ret, func.ReturnOp) and ret.operands[0] is aiv.body.block.args[2]


BIG_MM = """
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[__M__, __K__], pl.FP16], b: pl.Tensor[[__K__, __N__], pl.FP16], out: pl.Out[pl.Tensor[[__M__, __N__], pl.FP32]]) -> pl.Tensor[[__M__, __N__], pl.FP32]:
        ta: pl.Tile[[__M__, __K__], pl.FP16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [__M__, __K__], [__M__, __K__], target_memory=pl.Mem.Mat)
        tb: pl.Tile[[__K__, __N__], pl.FP16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [__K__, __N__], [__K__, __N__], target_memory=pl.Mem.Mat)
        c: pl.Tile[[__M__, __N__], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta, tb)
        out: pl.Tensor[[__M__, __N__], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out
"""


def _mm(m: int, n: int, k: int) -> Program:
    return program(BIG_MM.replace("__M__", str(m)).replace("__N__", str(n)).replace("__K__", str(k)))


def test_auto_tile_leaves_fitting_matmul() -> None:
    prog = _mm(128, 128, 128)
    before = prog.as_python()
    assert run(prog, "AutoTileMatmulL0").as_python() == before


def test_auto_tile_splits_k_and_fits_l0() -> None:
    with collecting() as c:
        prog = run(_mm(128, 128, 1024), "AutoTileMatmulL0", "InferTileMemorySpace")
    assert not c.items
    ops = list(functions(prog)["k"].body.walk())
    extracts = [o for o in ops if o.name == "pl.tile.extract"]
    assert extracts and all(o.results[0].type.num_bytes() <= 64 * 1024 for o in extracts)
    assert not [o for o in ops if o.name == "pl.tile.move"]  # operands already in L0
    loops = [o for o in ops if isinstance(o, scf.ForOp)]
    assert len(loops) == 1
    assert roundtrips(prog)


def test_auto_tile_blocks_large_accumulator() -> None:
    prog = run(_mm(512, 256, 64), "AutoTileMatmulL0")
    ops = list(functions(prog)["k"].body.walk())
    accs = [o for o in ops if o.name in ("pl.tile.matmul", "pl.tile.matmul_acc")]
    assert accs and all(o.results[0].type.num_bytes() <= 128 * 1024 for o in accs)
    assert sum(isinstance(o, scf.ForOp) for o in ops) >= 1
    assert roundtrips(prog)


def test_auto_tile_emits_ph002_when_it_cannot() -> None:
    with collecting() as c:
        run(_mm(1000, 16, 1000), "AutoTileMatmulL0")
    assert [d.code for d in c.items] == ["PH002"]
    assert c.items[0].rule == "AutoTileMatmulL0"
    assert "could not be tiled" in c.items[0].message


PIPE = """
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[__ROWS__, 128], pl.FP32], out: pl.Out[pl.Tensor[[__ROWS__, 128], pl.FP32]]) -> pl.Tensor[[__ROWS__, 128], pl.FP32]:
        for i in pl.pipeline(__TRIPS__, stage=__STAGES__):
            t: pl.Tile[[__H__, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * __H__, 0], [__H__, 128], [__H__, 128], target_memory=pl.Mem.Vec)
            e: pl.Tile[[__H__, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
            out: pl.Tensor[[__ROWS__, 128], pl.FP32] = pl.tile.store(e, [i * __H__, 0], out)
        return out
"""


def _pipe(trips: int, stages: int, h: int = 16) -> Program:
    src = PIPE.replace("__ROWS__", str(trips * h)).replace("__TRIPS__", str(trips)).replace("__STAGES__", str(stages))
    return program(src.replace("__H__", str(h)))


def _load_rows(prog: Program) -> int:
    return sum(1 for o in prog.module.walk() if o.name == "pl.tile.load")


@pytest.mark.parametrize(("trips", "stages", "loads"), [(8, 2, 2), (5, 2, 3), (7, 4, 7), (3, 4, 3)])
def test_lower_pipeline_replicates_with_tail(trips: int, stages: int, loads: int) -> None:
    prog = run(_pipe(trips, stages), "LowerPipelineLoops")
    # stages clones in the main loop (if it runs at all) + (trips % stages) tail clones
    assert _load_rows(prog) == loads
    for loop in [o for o in prog.module.walk() if isinstance(o, scf.ForOp)]:
        assert for_kind(loop) is ForKind.Pipeline and for_stage(loop) == 1
    assert roundtrips(prog)
    run(prog, "CanonicalizeIOOrder")
    assert not [o for o in prog.module.walk() if isinstance(o, scf.ForOp) and for_kind(o) is ForKind.Pipeline]
    assert roundtrips(prog)


def test_lower_pipeline_lowers_depth_when_buffers_do_not_fit() -> None:
    with collecting() as c:
        prog = run(_pipe(8, 4, h=128), "LowerPipelineLoops")
    assert [d.code for d in c.items] == ["PH-MR-001"]
    msg = c.items[0].message
    assert "stage=4" in msg and "got stage=1" in msg and "131072 B" in msg and "196608 B" in msg and "lower stage=" in msg
    assert _load_rows(prog) == 1


def test_lower_pipeline_dynamic_bounds() -> None:
    prog = run(
        program("""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[80, 128], pl.FP32], n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[80, 128], pl.FP32]]) -> pl.Tensor[[80, 128], pl.FP32]:
        for i in pl.pipeline(n, stage=2):
            t: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [i * 16, 0], [16, 128], [16, 128], target_memory=pl.Mem.Vec)
            out: pl.Tensor[[80, 128], pl.FP32] = pl.tile.store(t, [i * 16, 0], out)
        return out
"""),
        "LowerPipelineLoops",
    )
    loops = [o for o in prog.module.walk() if isinstance(o, scf.ForOp)]
    assert len(loops) == 2  # the replicated main loop and the remainder loop
    assert _load_rows(prog) == 3
    assert roundtrips(prog)


def test_normalize_return_order_permutes_returns_and_calls() -> None:
    prog = run(
        program("""
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Vec)
        s1: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(t, [0, 0], o1)
        s2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(t, [0, 0], o2)
        return s2, s1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32], o1: pl.Out[pl.Tensor[[16, 16], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> tuple[pl.Tensor[[16, 16], pl.FP32], pl.Tensor[[16, 16], pl.FP32]]:
        r2, r1 = self.k(a, o1, o2)
        return r2, r1
"""),
        "NormalizeReturnOrder",
    )
    fs = functions(prog)
    ret = fs["k"].body.block.last_op
    assert [v.name_hint for v in ret.operands] == ["s1", "s2"]
    main_ret = fs["main"].body.block.last_op
    assert [v.name_hint for v in main_ret.operands] == ["r2", "r1"]
    call = next(o for o in fs["main"].body.walk() if isinstance(o, func.CallOp))
    assert [r.name_hint for r in call.results] == ["r1", "r2"]
    assert roundtrips(prog)


def test_flatten_and_composite() -> None:
    prog = run(
        program("""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[4, 8, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t: pl.Tile[[4, 8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0, 0], [4, 8, 32], [4, 8, 32], target_memory=pl.Mem.Vec)
        e: pl.Tile[[4, 8, 32], pl.FP32, pl.Mem.Vec] = pl.tile.exp(t)
        f: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(e, [32, 32])
        c: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.concat(f, f)
        out: pl.Tensor[[32, 64], pl.FP32] = pl.tile.store(c, [0, 0], out)
        return out
"""),
        "LowerCompositeOps",
        "FlattenTileNdTo2D",
    )
    names = {o.name for o in prog.module.walk()}
    assert "pl.tile.concat" not in names and "pl.tile.assemble" in names
    exp = next(o for o in prog.module.walk() if o.name == "pl.tile.exp")
    assert exp.results[0].type.get_shape() == (32, 32)
    assert roundtrips(prog)


def test_canonicalize_tile_slice_keeps_aligned_views() -> None:
    prog = run(
        program("""
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]) -> pl.Tensor[[16, 128], pl.FP32]:
        t: pl.Tile[[64, 128], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Vec)
        s: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 128], [16, 0])
        u: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.slice(s, [16, 8], [0, 8])
        v: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.exp(s)
        out: pl.Tensor[[16, 128], pl.FP32] = pl.tile.store(v, [0, 0], out)
        return out
"""),
        "CanonicalizeTileSlice",
    )
    text = prog.as_python()
    assert "s: pl.Tile[[16, 128], pl.FP32, pl.Mem.Vec] = pl.tile.slice(t, [16, 128], [16, 0])" in text
    # the chained column window is peeled onto t and copied
    assert "u: pl.Tile[[16, 8], pl.FP32, pl.Mem.Vec] = pl.tile.extract(t, [16, 8], [16, 8], target_memory=pl.Mem.Vec)" in text
