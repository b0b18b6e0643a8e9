"""The target as IR: the ``npu`` dialect, the packaged a2a3 description and its queries.

Facts checked against ../shared/reference/a2a3-costs.md and the CSVs beside it.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest
from xdsl.parser import Parser
from xdsl.printer import Printer

import pypto.language as pl
from pypto.core import target_caps
from pypto.core.context import make_context
from pypto.diagnostics import DiagnosticError
from pypto.dialects.enums import MemorySpace
from pypto.passes.allocate_memory_addr import AllocateMemoryAddr
from pypto.passes.registry import get_pass
from pypto.target import make_npu_context
from pypto.target.dialect import TargetOp, format_float
from pypto.target.model import (
    TARGETS_DIR,
    Target,
    TargetError,
    load_target,
    packaged_targets,
    parse_target_op,
    print_target_op,
    target_path,
)

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference"
A2A3 = TARGETS_DIR / "a2a3.mlir"
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason="shared reference tables not available")


@pytest.fixture(scope="module")
def t() -> Target:
    return load_target("a2a3")


def _edited(tmp_path: Path, old: str, new: str, name: str = "chip.mlir") -> Path:
    text = A2A3.read_text()
    assert old in text, old
    path = tmp_path / name
    path.write_text(text.replace(old, new, 1))
    return path


# ---- parse / print ----------------------------------------------------------------


def test_packaged() -> None:
    assert "a2a3" in packaged_targets()
    assert target_path("a2a3") == A2A3
    assert target_path("a2a3sim") == A2A3 and target_path("Ascend910B") == A2A3


def test_round_trip_custom_syntax() -> None:
    op = parse_target_op(A2A3.read_text(), str(A2A3))
    once = print_target_op(op)
    twice = print_target_op(parse_target_op(once))
    assert once == twice
    assert once.startswith("npu.target @a2a3 clock_hz = 1.85e9 block_bytes = 32 {\n")
    assert '  npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26\n' in once
    assert '  npu.compute_cost "TEXP" dtype = any cols = * slope = 0.0314 bias = 30.1\n' in once
    assert '  npu.fallback pipe = "MTE2" cycles = 3 + 2 * elems / 64\n' in once
    assert '  npu.op_pipe "TMOV", "TEXTRACT" src = "Mat" dst = "Vec" -> "MTE1"\n' in once


def test_round_trip_generic_syntax() -> None:
    op = parse_target_op(A2A3.read_text())
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True).print_op(op)
    generic = out.getvalue()
    assert '"npu.buffer"() <{' in generic
    back = Parser(make_npu_context(), generic).parse_module()
    (again,) = back.body.block.ops
    assert isinstance(again, TargetOp)
    assert print_target_op(again) == print_target_op(op)


def test_format_float() -> None:
    for v in (0.0313, 26.0, 30.1, 1.85e9, 1e-05, 247.16, 2.5e20):
        text = format_float(v)
        assert float(text) == v
        assert "." in text or "e" not in text
    assert format_float(1.85e9) == "1.85e9" and format_float(26.0) == "26"


# ---- the a2a3 facts --------------------------------------------------------------


def test_header(t: Target) -> None:
    assert t.name == "a2a3"
    assert t.clock_hz == 1.85e9
    assert (t.aic_cores, t.aiv_per_aic, t.aiv_cores) == (24, 2, 48)
    assert t.event_ids_per_pipe_pair == 8
    assert t.dispatch_latency_cycles >= 0
    assert t.block_bytes == target_caps.ALIGNMENT == 32
    assert t.cycles_to_us(1850) == pytest.approx(1.0)
    assert hash(t) == hash(load_target("a2a3"))  # usable as a cache key
    assert set(t.pipes) == {"MTE2", "MTE1", "CUBE", "VECTOR", "FIXPIPE", "MTE3", "SCALAR"}
    assert t.pipes["VECTOR"] == "PIPE_V" and t.pipes["CUBE"] == "PIPE_M" and t.pipes["FIXPIPE"] == "PIPE_FIX"


def test_capacities(t: Target) -> None:
    kib = 1024
    assert t.capacity["Vec"] == 192 * kib
    assert t.capacity["Mat"] == 512 * kib
    assert t.capacity["Left"] == t.capacity["Right"] == 64 * kib
    assert t.capacity["Acc"] == 128 * kib
    for space in MemorySpace:
        if space is not MemorySpace.DDR:
            assert target_caps.capacity(space) == t.capacity[space.value] > 0
    assert target_caps.capacity(MemorySpace.Vec, "Ascend910B") == 192 * kib
    with pytest.raises(ValueError, match="unknown backend 'Ascend950'"):
        target_caps.capacity(MemorySpace.Vec, "Ascend950")
    assert target_caps.A2A3_CAPACITY[MemorySpace.Vec] == 192 * kib
    assert target_caps.align(33) == 64


@needs_reference
def test_every_formula_row_present(t: Target) -> None:
    with open(REFERENCE / "a2a3_formula_params.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 274
    assert len(t.compute_rows) == 274
    for r in rows:
        cols = None if r["cols"] == "*" else int(r["cols"])
        assert t.compute_rows[(r["op"], r["dtype"], cols)] == (float(r["slope"]), float(r["bias"])), r


@needs_reference
def test_every_bandwidth_present(t: Target) -> None:
    with open(REFERENCE / "a2a3_bandwidth.csv") as f:
        rows = list(csv.DictReader(f))
    assert set(t.bandwidth) == {r["pipe_key"] for r in rows}
    for r in rows:
        bw = t.bandwidth[r["pipe_key"]]
        assert bw.gib_per_s == float(r["flat_bw"])
        if r["fitted_hill_peak_gibs"]:
            assert (bw.hill_peak_gib_per_s, bw.hill_k_bytes) == (
                float(r["fitted_hill_peak_gibs"]),
                float(r["fitted_hill_k_bytes"]),
            )
        else:
            assert bw.hill_peak_gib_per_s is None


@pytest.mark.parametrize(
    ("instr", "src", "dst", "pipe"),
    [
        ("TLOAD", None, "Vec", "MTE2"),
        ("TLOAD", None, "Mat", "MTE2"),
        ("TPREFETCH", None, None, "MTE2"),
        ("TSTORE", "Acc", None, "FIXPIPE"),
        ("TSTORE", "Vec", None, "MTE3"),
        ("TSTORE", "Mat", None, "MTE3"),
        ("TMOV", "Acc", "Vec", "FIXPIPE"),
        ("TMOV", "Acc", "Mat", "FIXPIPE"),
        ("TMOV", "Mat", "Vec", "MTE1"),
        ("TMOV", "Vec", "Vec", "VECTOR"),
        ("TMOV", "Vec", "Mat", "MTE3"),
        ("TMOV", "Mat", "Left", "MTE1"),
        ("TMOV", "Mat", "Right", "MTE1"),
        ("TMOV", "Mat", "Bias", "MTE1"),
        ("TEXTRACT", "Mat", "Left", "MTE1"),
        ("TEXTRACT", "Acc", "Vec", "FIXPIPE"),
        ("TEXTRACT", "Vec", "Vec", "VECTOR"),
        ("TTRANS", None, None, "MTE1"),
        ("TIMG2COL", None, None, "MTE1"),
        ("TMATMUL", None, None, "CUBE"),
        ("TMATMUL_ACC", None, None, "CUBE"),
        ("TMATMUL_BIAS", None, None, "CUBE"),
        ("TGEMV_ACC", None, None, "CUBE"),
        ("TSYNC", None, None, "SCALAR"),
        ("TASSIGN", None, None, "SCALAR"),
        ("TGET_SCALE_ADDR", None, None, "SCALAR"),
        ("TEXP", None, None, "VECTOR"),
        ("TADD", None, None, "VECTOR"),
        ("TROWSUM", None, None, "VECTOR"),
        ("TCVT", None, None, "VECTOR"),
    ],
)
def test_pipe_of(t: Target, instr: str, src: str | None, dst: str | None, pipe: str) -> None:
    assert t.pipe_of(instr, src, dst) == pipe


def test_pipe_of_spellings(t: Target) -> None:
    # pto's lower-case spaces, hardware names, MemorySpace values, pto op names
    assert t.pipe_of("TLOAD", dst_space="vec") == "MTE2"
    assert t.pipe_of("TSTORE", src_space="L0C") == "FIXPIPE"
    assert t.pipe_of("TMOV", MemorySpace.Mat, MemorySpace.Vec) == "MTE1"
    assert t.pipe_of("pto.tmatmul") == "CUBE"


@pytest.mark.parametrize(
    ("instr", "dtype", "rows", "cols", "cycles"),
    [
        ("TMUL", "fp32", 16, 64, 58),  # llround(0.0313*1024 + 26)
        ("TMULS", "fp32", 16, 64, 42),  # llround(0.0156*1024 + 26)
        ("TROWSUM", "fp32", 16, 64, 156),  # llround(0.1094*1024 + 44)
        ("TROWMAX", "fp32", 16, 128, 176),  # 0.0625*2048 + 48
        ("TEXP", "fp32", 16, 64, 62),  # wildcard: llround(0.0314*1024 + 30.1) = 62
        ("TSQRT", "fp16", 8, 8, 33),  # wildcard: llround(0.0314*64 + 31.1)
        ("TMUL", "FP32", 16, 64, 58),  # pl dtype spelling
        ("TMUL", "f32", 16, 64, 58),  # MLIR spelling
        ("TADD", "fp32", 16, 64, 34),  # no row: VECTOR fallback 2 + 1024/32
        ("TMUL", "fp32", 16, 65, 34),  # no row for cols 65 -> fallback 2 + 1040//32
        ("TMUL", "int32", 16, 64, 34),  # other dtypes not estimated -> fallback
        ("TDIVS", "int16", 16, 64, 4),  # fixed
        ("TDIVS", "int32", 16, 64, 4),
        ("TLOAD", "fp32", 16, 64, 35),  # MTE2 fallback 3 + 2*1024/64
        ("TSTORE", "fp32", 16, 64, 35),  # MTE3
        ("TMOV", "fp32", 16, 64, 34),  # perf_sim's static lookup puts TMOV on Vector
        ("TTRANS", "fp32", 16, 64, 17),  # MTE1 1 + 1024/64
        ("TMATMUL", "fp32", 16, 64, 68),  # Matrix 4 + 1024/16
        ("TASSIGN", "fp32", 16, 64, 1),  # Scalar
    ],
)
def test_compute_cycles(t: Target, instr: str, dtype: str, rows: int, cols: int, cycles: int) -> None:
    assert t.compute_cycles(instr, dtype, rows, cols) == cycles


@pytest.mark.parametrize(
    ("m", "k", "n", "dtype"),
    [
        (16, 16, 16, "fp16"),
        (16, 16, 16, "fp32"),
        (128, 128, 128, "fp32"),
        (64, 100, 48, "fp16"),
        (32, 64, 32, "int8"),
        (16, 32, 16, "bf16"),
    ],
)
def test_matmul_cycles(t: Target, m: int, k: int, n: int, dtype: str) -> None:
    size = {"fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}[dtype]
    c = 2 if dtype == "fp32" else 1
    want = 6 + c * math.ceil(m / 16) * math.ceil(k / (32 // size)) * math.ceil(n / 16)
    assert t.matmul_cycles(m, k, n, dtype) == want


def test_matmul_examples(t: Target) -> None:
    assert t.matmul_cycles(16, 16, 16, "fp16") == 7
    assert t.matmul_cycles(16, 16, 16, "fp32") == 10
    assert t.matmul_cycles(128, 128, 128, "fp32") == 2054


@pytest.mark.parametrize(
    ("instr", "src", "dst", "key"),
    [
        ("TLOAD", None, "Vec", "GM_TO_UB"),
        ("TLOAD", None, "Mat", "GM_TO_L1"),
        ("TSTORE", "Vec", None, "UB_TO_GM"),
        ("TSTORE", "Mat", None, "L1_TO_GM"),
        ("TSTORE", "Acc", None, "L0C_TO_GM"),
        ("TMOV", "Vec", "Vec", "UB_TO_UB"),
        ("TMOV", "Acc", "Mat", "L0C_TO_L1"),
        ("TMOV", "Mat", "Left", "L1_TO_L0A"),
        ("TMOV", "Mat", "Right", "L1_TO_L0B"),
        ("TMOV", "Mat", "Bias", "L1_TO_BT"),
        ("TMOV", "Mat", "Scaling", "L1_TO_FB"),
        ("TEXTRACT", "mat", "left", "L1_TO_L0A"),
    ],
)
def test_transfer_key(t: Target, instr: str, src: str | None, dst: str | None, key: str) -> None:
    assert t.transfer_key(instr, src, dst) == key


def test_transfer_key_unknown(t: Target) -> None:
    with pytest.raises(TargetError, match="no npu.transfer_key rule for TADD"):
        t.transfer_key("TADD", "Vec", "Vec")


# cycles per 4 KiB, the last column of a2a3-costs.md §6
PER_4KIB = {
    "GM_TO_UB": 69,
    "GM_TO_L1": 52,
    "UB_TO_GM": 37,
    "L1_TO_GM": 220,
    "UB_TO_UB": 6,
    "L0C_TO_GM": 100,
    "L0C_TO_L1": 55,
    "L1_TO_L0A": 16,
    "L1_TO_L0B": 32,
    "L1_TO_BT": 220,
    "L1_TO_FB": 220,
    "L1_FILL": 220,
}


@pytest.mark.parametrize(("key", "cycles"), sorted(PER_4KIB.items()))
def test_transfer_cycles(t: Target, key: str, cycles: int) -> None:
    assert t.transfer_cycles(key, 4096) == cycles
    bw = t.bandwidth[key].gib_per_s
    for nbytes in (0, 32, 1000, 65536, 123457):
        assert t.transfer_cycles(key, nbytes) == math.trunc(nbytes / 2**30 / bw * 1.85e9)


def test_transfer_cycles_fitted(t: Target) -> None:
    # bw(B) = 247.16 * B / (30643 + B) GiB/s for GM_TO_UB
    bw = 247.16 * 4096 / (30643 + 4096)
    assert t.transfer_cycles("GM_TO_UB", 4096, fitted=True) == math.trunc(4096 / 2**30 / bw * 1.85e9)
    assert t.transfer_cycles("UB_TO_UB", 4096, fitted=True) == 6  # flat: no fit for this key


def test_sync_cycles(t: Target) -> None:
    # perf_sim's 0-cycle signal / wait / barrier entries; the CCE-mock-only intrinsics cost 1
    for name in ("set_flag", "wait_flag", "pipe_barrier", "pto.set_flag", "pto.wait_flag_dyn", "pto.barrier"):
        assert t.sync_cycles(name) == 0
    for name in ("dsb", "ffts_cross_core_sync", "wait_flag_dev"):
        assert t.sync_cycles(name) == 1
    with pytest.raises(TargetError, match="no npu.sync_cost row"):
        t.sync_cycles("tadd")


# ---- a user's edited copy ------------------------------------------------------------

BIG = """
import pypto.language as pl


@pl.function(type=pl.FunctionType.AIV, level=pl.Level.AIV, role=pl.Role.SubWorker)
def k(a: pl.Tensor[[256, 256], pl.FP32], o: pl.Out[pl.Tensor[[256, 256], pl.FP32]]) -> pl.Tensor[[256, 256], pl.FP32]:
    big: pl.Tile[[256, 256], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [256, 256], [256, 256], target_memory=pl.Mem.Vec)
    o2: pl.Tensor[[256, 256], pl.FP32] = pl.tile.store(big, [0, 0], o)
    return o
"""


def _big_module():  # type: ignore[no-untyped-def]
    m = pl.parse(BIG, filename="big.py").module
    for name in ("init-memref", "materialize-semantic-aliases", "memory-reuse"):
        get_pass(name)().apply(make_context(), m)
    return m


def test_user_copy_doubles_ub(tmp_path: Path) -> None:
    path = _edited(tmp_path, 'npu.buffer "Vec" bytes = 196608', 'npu.buffer "Vec" bytes = 393216')
    user = load_target(path)
    assert user.capacity["Vec"] == 393216
    assert user.source == str(path.resolve())
    assert target_caps.capacity(MemorySpace.Vec, str(path)) == 393216
    assert target_caps.capacity(MemorySpace.Vec) == 196608  # the packaged one is untouched

    # 256x256 fp32 = 262144 bytes: too big for a2a3's UB, fits the doubled one.
    with pytest.raises(DiagnosticError, match="Vec capacity is 196608 bytes"):
        AllocateMemoryAddr().apply(make_context(), _big_module())
    m = _big_module()
    AllocateMemoryAddr(backend=str(path)).apply(make_context(), m)
    m.verify()


def test_user_copy_reloads_when_edited(tmp_path: Path) -> None:
    path = _edited(tmp_path, "npu.cores aic = 24", "npu.cores aic = 8")
    assert load_target(path).aic_cores == 8
    text = path.read_text().replace("npu.cores aic = 8", "npu.cores aic = 4")
    path.write_text(text + "\n")  # a different size, so the cache key changes even on coarse clocks
    assert load_target(path).aic_cores == 4


def test_user_copy_changes_costs(tmp_path: Path) -> None:
    path = _edited(
        tmp_path,
        'npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 26',
        'npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313 bias = 126',
    )
    assert load_target(path).compute_cycles("TMUL", "fp32", 16, 64) == 158


def test_unknown_target() -> None:
    with pytest.raises(TargetError, match="unknown target 'nope'"):
        load_target("nope")


# ---- verifier errors name the op and the field ----------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            'npu.buffer "Vec" bytes = 196608',
            'npu.buffer "Vec" bytes = 0',
            "npu.buffer \"Vec\": field 'bytes' must be positive, got 0",
        ),
        ("npu.cores aic = 24", "npu.cores aic = 0", "npu.cores: field 'aic' must be positive, got 0"),
        (
            'npu.op_pipe "TTRANS", "TIMG2COL" -> "MTE1"',
            'npu.op_pipe "TTRANS", "TIMG2COL" -> "MTE9"',
            'npu.op_pipe "TTRANS", "TIMG2COL": field \'pipe\' names "MTE9", which no npu.pipe declares',
        ),
        (
            'npu.transfer_key "TLOAD" dst = "Vec" -> "GM_TO_UB"',
            'npu.transfer_key "TLOAD" dst = "Vec" -> "GM_TO_XX"',
            'npu.transfer_key "TLOAD": field \'key\' names "GM_TO_XX", which no npu.transfer declares',
        ),
        (
            'npu.transfer "GM_TO_UB" gib_per_s = 100.9',
            'npu.transfer "GM_TO_UB" gib_per_s = -1.0',
            "npu.transfer \"GM_TO_UB\": field 'gib_per_s' must be positive, got -1.0",
        ),
        (
            'npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313',
            'npu.compute_cost "TMUL" dtype = fp32 cols = 0 slope = 0.0313',
            "npu.compute_cost \"TMUL\" dtype = fp32 cols = 0: field 'cols' must be positive, got 0",
        ),
        (
            'npu.compute_cost "TMUL" dtype = fp32 cols = 64 slope = 0.0313',
            'npu.compute_cost "TMUL" dtype = fp32 cols = 32 slope = 0.0313',
            "npu.compute_cost \"TMUL\" dtype = fp32 cols = 32: field 'op/dtype/cols' repeats an earlier row",
        ),
        (
            'npu.fallback pipe = "VECTOR" cycles = 2 + elems / 32',
            'npu.fallback pipe = "VECTOR" cycles = 2 + elems / 0',
            "npu.fallback pipe = \"VECTOR\": field 'div' must be positive, got 0",
        ),
        (
            'npu.fallback pipe = "MTE1" cycles = 1 + elems / 64',
            "",
            'npu.target @a2a3: pipe "MTE1" has no npu.fallback pipe = "MTE1" row',
        ),
        ("npu.events per_pipe_pair = 8", "", "npu.target @a2a3: needs exactly one npu.events, found 0"),
        (
            'npu.op_pipe "*" -> "VECTOR"',
            'npu.op_pipe "T*X" -> "VECTOR"',
            "npu.op_pipe \"T*X\": field 'ops' may use '*' only at the end of a pattern",
        ),
        (
            'npu.pipe "CUBE" pto = "PIPE_M"',
            'npu.pipe "CUBE" pto = "M"',
            "npu.pipe \"CUBE\": field 'pto' must be a PTO pipe name",
        ),
        ("clock_hz = 1.85e9", "clock_hz = 0.0", "npu.target @a2a3: field 'clock_hz' must be positive"),
        ("npu.aicpu threads = 3", "npu.aicpu threads = 0", "npu.aicpu: field 'threads' must be positive, got 0"),
        ("release = 19 dispatch", "release = -1 dispatch", "npu.aicpu: field 'release' must be a finite number >= 0, got -1"),
        ("dispatch = 37 drain = 74", "dispatch = 37 drain = -2", "npu.aicpu: field 'drain' must be a finite number >= 0, got -2"),
        (
            "npu.events per_pipe_pair",
            "npu.aicpu threads = 1 submit = 0 alloc = 0 complete = 0 release = 0 dispatch = 0\n  npu.events per_pipe_pair",
            "npu.target @a2a3: has more than one npu.aicpu",
        ),
    ],
)
def test_verifier_errors(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = _edited(tmp_path, old, new)
    with pytest.raises(TargetError) as err:
        load_target(path)
    assert str(err.value).startswith(f"{path.resolve()}: ")
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_parse_error_names_the_file(tmp_path: Path) -> None:
    path = _edited(tmp_path, "npu.cores aic = 24", "npu.cores aic 24")
    with pytest.raises(TargetError, match="cannot parse the target description") as err:
        load_target(path)
    assert str(path.resolve()) in str(err.value)


def test_parse_error_after_a_prefix_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A target file starting with a ``# comment`` line: xDSL's message had ``{first_char}`` unformatted
    (the same message the MLIR tools word through ``pypto.utils.parse_errors``)."""
    from pypto.target.__main__ import main

    path = tmp_path / "hc.pto"
    path.write_text("# a comment\n" + A2A3.read_text())
    assert main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "Expected suffix identifier after '#'" in err and "{first_char}" not in err, err
    assert f"{path}: cannot parse the target description" in err


def test_one_target_per_file() -> None:
    text = A2A3.read_text()
    with pytest.raises(TargetError, match="expected exactly one npu.target"):
        parse_target_op(text + text.replace("@a2a3", "@other"))


def test_npu_ops_must_be_in_a_target() -> None:
    with pytest.raises(Exception, match="expects parent op 'npu.target'"):
        Parser(make_npu_context(), "npu.cores aic = 1 aiv_per_aic = 1").parse_module().verify()
