"""The device interpreter: numerics against torch, per-pipe timing, records, determinism, memory errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from pypto.device.interpreter import DeviceError, bf16_to_f32, example_args, f32_to_bf16, run_kernel
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto_with_source_map

CORPUS = Path("/work/shared/corpus/pto")
UPSTREAM = Path("/work/shared/reference/upstream-builds")
ADD = UPSTREAM / "add/kernels/aiv/add_incore_0.pto"
SOFTMAX = UPSTREAM / "softmax_rows/kernels/aiv/softmax_rows_incore_0.pto"
MATMUL_K = UPSTREAM / "matmul_k/kernels/aic/k_blocked.pto"

pytestmark = pytest.mark.skipif(not CORPUS.is_dir() or not UPSTREAM.is_dir(), reason="shared corpus not available")


def synced(path: Path):  # type: ignore[no-untyped-def]
    """(module after insert-sync, op positions, file name) of a .pto file."""
    module, source_map = parse_pto_with_source_map(path.read_text(), path.name)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    return module, source_map.positions, path.name


def run_synced(path: Path, args: list, func: str | None = None):  # type: ignore[no-untyped-def]
    """Run a kernel after insert-sync; it must not race."""
    module, positions, name = synced(path)
    run = run_kernel(module, func, args, positions=positions, pto_file=name)
    assert run.races == [], run.race_messages
    assert run.problems == []
    return run


def rng_f32(*shape: int, seed: int = 0) -> np.ndarray:
    """Standard normal float32."""
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# -- upstream kernels ------------------------------------------------------------------------------


def test_upstream_add_matches_torch() -> None:
    a, b = rng_f32(128, 128, seed=1), rng_f32(128, 128, seed=2)
    out = np.zeros_like(a)
    run_synced(ADD, [a, b, out])
    np.testing.assert_array_equal(out, (torch.from_numpy(a) + torch.from_numpy(b)).numpy())


def test_upstream_kernel_without_syncs_runs_and_races() -> None:
    """The raw upstream .pto (no insert-sync) computes the same numbers but is reported racy."""
    a, b = rng_f32(128, 128, seed=1), rng_f32(128, 128, seed=2)
    out = np.zeros_like(a)
    run = run_kernel(ADD, None, [a, b, out])
    np.testing.assert_array_equal(out, a + b)
    assert run.races and all(m.endswith("(kernels.py:32)") for m in run.race_messages)


def test_upstream_softmax_rows_matches_torch() -> None:
    x = rng_f32(64, 128, seed=3) * 4
    out = np.zeros_like(x)
    run_synced(SOFTMAX, [x, out])
    ref = torch.softmax(torch.from_numpy(x), dim=1).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_upstream_matmul_k_fp16_accumulates_in_fp32() -> None:
    a = rng_f32(128, 512, seed=4).astype(np.float16)
    b = rng_f32(512, 128, seed=5).astype(np.float16)
    c = np.zeros((128, 128), np.float32)
    run = run_synced(MATMUL_K, [a, b, c])
    ref = (torch.from_numpy(a).float() @ torch.from_numpy(b).float()).numpy()
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3)
    assert {r.pipe for r in run.records} >= {"MTE2", "MTE1", "CUBE", "FIXPIPE"}


# -- corpus kernels --------------------------------------------------------------------------------


def test_corpus_vadd_addc_add_scalar() -> None:
    a, b = rng_f32(32, 32, seed=6), rng_f32(32, 32, seed=7)
    out = np.zeros_like(a)
    run_synced(CORPUS / "vadd.pto", [a, b, out])
    np.testing.assert_array_equal(out, a + b)
    args = example_args(CORPUS / "addc.pto")
    run_synced(CORPUS / "addc.pto", args)
    ins = [x.reshape(32, 32) for x in args[:3]]
    np.testing.assert_allclose(args[3].reshape(32, 32), ins[0] + ins[1] + ins[2], rtol=1e-6)
    x, y = rng_f32(16, 16, seed=9), np.zeros((16, 16), np.float32)
    run_synced(CORPUS / "orchestration_example_kernel_add_scalar.pto", [x, 1.5, y])
    np.testing.assert_array_equal(y, x + np.float32(1.5))


@pytest.mark.parametrize("bias", [0, 1])
def test_corpus_matmul_split_k_with_and_without_bias(bias: int) -> None:
    out, a, b, bvec = (
        np.zeros((32, 32), np.float32),
        rng_f32(32, 256, seed=10),
        rng_f32(256, 32, seed=11),
        rng_f32(1, 32, seed=12),
    )
    run_synced(CORPUS / "matmul.pto", [out, a, b, bvec, bias])
    ref = torch.from_numpy(a).double() @ torch.from_numpy(b).double() + (torch.from_numpy(bvec).double() if bias else 0)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-4, atol=1e-4)


def test_corpus_flash_attention_qk_fp32_matmul() -> None:
    q, kt, s = rng_f32(32, 32, seed=13), rng_f32(32, 32, seed=14), np.zeros((32, 32), np.float32)
    run_synced(CORPUS / "flash_attention_qk.pto", [q, kt, s])
    np.testing.assert_allclose(s, (torch.from_numpy(q) @ torch.from_numpy(kt)).numpy(), rtol=1e-5, atol=1e-5)


def test_corpus_qwen_silu_bf16_output() -> None:
    gate, up = rng_f32(16, 256, seed=15), rng_f32(16, 256, seed=16)
    out = np.zeros(15 * 25600 + 256, np.uint16)
    run_synced(CORPUS / "qwen3_decode_incore_14.pto", [gate, up, out])
    got = torch.from_numpy(bf16_to_f32(out[np.arange(16)[:, None] * 25600 + np.arange(256)]))
    g, u = torch.from_numpy(gate), torch.from_numpy(up)
    ref = (g * torch.sigmoid(g) * u).to(torch.bfloat16).float()
    torch.testing.assert_close(got, ref, rtol=1.6e-2, atol=1e-2)


def test_corpus_qwen_bf16_input_cvt_add() -> None:
    args = example_args(CORPUS / "qwen3_decode_incore_10.pto", scalar=0)
    run_synced(CORPUS / "qwen3_decode_incore_10.pto", args)
    assert np.isfinite(args[2]).all()


def test_corpus_partition5d_copies_through_l1() -> None:
    args = example_args(CORPUS / "partition5d.pto")
    src, dst = args
    dst[:] = 0
    run_synced(CORPUS / "partition5d.pto", args)
    idx = np.arange(16)[:, None, None] * 1048576 + np.arange(16)[None, :, None] * 1024 + np.arange(16)
    np.testing.assert_array_equal(dst[idx], src[idx])
    assert not dst[16:1024].any()  # only the 16x16x16 window is written


@pytest.mark.parametrize("func, dtype", [("tcvt_f32_to_f16_run", "f16"), ("tcvt_f32_to_bf16_run", "bf16")])
def test_corpus_tcvt(func: str, dtype: str) -> None:
    args = example_args(CORPUS / "tcvt_e2e.pto", func)
    run_synced(CORPUS / "tcvt_e2e.pto", args, func)
    src, dst = args
    n = dst.size
    if dtype == "f16":
        np.testing.assert_array_equal(dst, src[:n].astype(np.float16))
    else:
        ref = torch.from_numpy(src[:n]).to(torch.bfloat16).float().numpy()
        np.testing.assert_allclose(bf16_to_f32(dst), ref, rtol=8e-3)


# -- dtypes ----------------------------------------------------------------------------------------


def _binary_kernel(op: str, dtype: str) -> str:
    t = (
        f"!pto.tile_buf<loc=vec, dtype={dtype}, rows=16, cols=64, v_row=16, v_col=64, blayout=row_major, "
        "slayout=none_box, fractal=512, pad=0>"
    )
    p = f"!pto.partition_tensor_view<16x64x{dtype}>"
    v = f"!pto.tensor_view<?x?x{dtype}>"
    lines = [
        "module {",
        f"  func.func @k(%a: !pto.ptr<{dtype}>, %b: !pto.ptr<{dtype}>, %o: !pto.ptr<{dtype}>) {{",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        "    %c16 = arith.constant 16 : index",
        "    %c64 = arith.constant 64 : index",
    ]
    for name in ("a", "b", "o"):
        lines.append(f"    %{name}v = pto.make_tensor_view %{name}, shape = [%c16, %c64], strides = [%c64, %c1] : {v}")
        lines.append(
            f"    %{name}p = pto.partition_view %{name}v, offsets = [%c0, %c0], sizes = [%c16, %c64] : {v} -> {p}"
        )
        lines.append(f"    %{name}t = pto.alloc_tile : {t}")
    lines += [
        f"    pto.tload ins(%ap : {p}) outs(%at : {t})",
        f"    pto.tload ins(%bp : {p}) outs(%bt : {t})",
        f"    pto.{op} ins(%at, %bt : {t}, {t}) outs(%ot : {t})",
        f"    pto.tstore ins(%ot : {t}) outs(%op : {p})",
        "    return",
        "  }",
        "}",
    ]
    return "\n".join(lines)


TORCH_OPS = {"tadd": torch.add, "tmul": torch.mul, "tmax": torch.maximum, "tsub": torch.sub}
DTYPES = {
    "f32": (np.float32, torch.float32, 0.0),
    "f16": (np.float16, torch.float16, 1e-3),
    "bf16": (np.uint16, torch.bfloat16, 8e-3),
    "i32": (np.int32, torch.int32, 0.0),
}


@pytest.mark.parametrize("dtype", sorted(DTYPES))
@pytest.mark.parametrize("op", sorted(TORCH_OPS))
def test_elementwise_dtypes_match_torch(op: str, dtype: str) -> None:
    np_t, torch_t, tol = DTYPES[dtype]
    rng = np.random.default_rng(17)
    if dtype == "i32":
        xs = [rng.integers(-1000, 1000, (16, 64)).astype(np.int32) for _ in range(2)]
        ts = [torch.from_numpy(x) for x in xs]
    elif dtype == "bf16":
        xs = [f32_to_bf16(rng.standard_normal((16, 64)).astype(np.float32)) for _ in range(2)]
        ts = [torch.from_numpy(bf16_to_f32(x)).to(torch.bfloat16) for x in xs]
    else:
        xs = [rng.standard_normal((16, 64)).astype(np_t) for _ in range(2)]
        ts = [torch.from_numpy(x) for x in xs]
    out = np.zeros((16, 64), np_t)
    module, positions = parse_pto_with_source_map(_binary_kernel(op, dtype), f"{op}_{dtype}.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    run = run_kernel(module, "k", [xs[0], xs[1], out], positions=positions.positions)
    assert run.races == []
    ref = TORCH_OPS[op](ts[0], ts[1])
    got = torch.from_numpy(bf16_to_f32(out)).to(torch.bfloat16) if dtype == "bf16" else torch.from_numpy(out)
    torch.testing.assert_close(got, ref, rtol=tol, atol=tol)


# -- timing and records ----------------------------------------------------------------------------

TWO_EXP = """module {
  func.func @two_exp(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %xv = pto.make_tensor_view %x, shape = [%c128, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xf32>
    %yv = pto.make_tensor_view %y, shape = [%c128, %c128], strides = [%c128, %c1] : !pto.tensor_view<?x?xf32>
    %x0 = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%c64, %c128] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<64x128xf32>
    %x1 = pto.partition_view %xv, offsets = [%c64, %c0], sizes = [%c64, %c128] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<64x128xf32>
    %y0 = pto.partition_view %yv, offsets = [%c0, %c0], sizes = [%c64, %c128] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<64x128xf32>
    %y1 = pto.partition_view %yv, offsets = [%c64, %c0], sizes = [%c64, %c128] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<64x128xf32>
    %a = pto.alloc_tile : T
    %b = pto.alloc_tile : T
    %c = pto.alloc_tile : T
    %d = pto.alloc_tile : T
    pto.tload ins(%x0 : !pto.partition_tensor_view<64x128xf32>) outs(%a : T)
    pto.tload ins(%x1 : !pto.partition_tensor_view<64x128xf32>) outs(%b : T)
    pto.texp ins(%a : T) outs(%c : T)
    pto.tstore ins(%c : T) outs(%y0 : !pto.partition_tensor_view<64x128xf32>)
    pto.texp ins(%b : T) outs(%d : T)
    pto.tstore ins(%d : T) outs(%y1 : !pto.partition_tensor_view<64x128xf32>)
    return
  }
}
""".replace(
    ": T",
    ": !pto.tile_buf<loc=vec, dtype=f32, rows=64, cols=128, v_row=64, v_col=128, blayout=row_major, slayout=none_box, fractal=512, pad=0>",
)


def _two_exp():  # type: ignore[no-untyped-def]
    module, source_map = parse_pto_with_source_map(TWO_EXP, "two_exp.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    x = rng_f32(128, 128, seed=18)
    y = np.zeros_like(x)
    return run_kernel(module, None, [x, y], positions=source_map.positions, pto_file="two_exp.pto"), x, y


def test_pipes_overlap_and_records_are_complete() -> None:
    run, x, y = _two_exp()
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    assert run.races == []
    data = [r for r in run.records if r.kind in ("compute", "transfer")]
    assert [r.instr for r in data] == ["TLOAD", "TLOAD", "TEXP", "TSTORE", "TEXP", "TSTORE"]
    for r in run.records:
        assert 0 <= r.start <= r.end <= run.cycles
    for r in data:  # the syncs insert-sync added have no position in the parsed text
        assert r.end > r.start
        assert r.pto_loc is not None and r.pto_loc.startswith("two_exp.pto:")
    store0, exp1 = data[3], data[4]
    assert store0.pipe == "MTE3" and exp1.pipe == "VECTOR"
    assert store0.start < exp1.end and exp1.start < store0.end, "MTE3 store and the second VECTOR exp overlap"
    busy = run.per_pipe_busy
    assert sum(busy.values()) > run.cycles  # concurrency: more busy cycles than elapsed
    assert run.cycles == max(r.end for r in run.records)
    # in-order per pipe
    for pipe in busy:
        mine = [r for r in run.records if r.pipe == pipe]
        assert all(a.end <= b.start for a, b in zip(mine, mine[1:], strict=False))


def test_flag_orders_consumer_after_producer() -> None:
    run, _, _ = _two_exp()
    loads = [r for r in run.records if r.instr == "TLOAD"]
    first_exp = next(r for r in run.records if r.instr == "TEXP")
    assert first_exp.start >= loads[0].end  # its own load (insert-sync sets the flag right after it) ...
    assert first_exp.start < loads[1].end  # ... not the second one, which it overlaps


def test_dsl_locations_reach_records() -> None:
    x, out = rng_f32(64, 128, seed=19), np.zeros((64, 128), np.float32)
    run = run_synced(SOFTMAX, [x, out])
    texp = [r for r in run.records if r.instr == "TEXP"]
    assert len(texp) == 4 and all(r.dsl_loc == "kernels.py:13:13" for r in texp)
    assert all(r.pto_loc and r.pto_loc.startswith("softmax_rows_incore_0.pto:") for r in texp)


def test_deterministic() -> None:
    first, _, y1 = _two_exp()
    second, _, y2 = _two_exp()
    assert [r.to_json() for r in first.records] == [r.to_json() for r in second.records]
    np.testing.assert_array_equal(y1, y2)


# -- memory model ----------------------------------------------------------------------------------


def test_gm_out_of_bounds_is_an_error() -> None:
    a, b = rng_f32(16, 16), rng_f32(16, 16)
    out = np.zeros((16, 16), np.float32)
    with pytest.raises(Exception, match="outside the argument"):
        run_kernel(CORPUS / "vadd.pto", None, [a, b, out])  # vadd needs 32x32


def test_tile_past_capacity_is_an_error() -> None:
    from pypto.device.interpreter.memory import F32, CoreMemory, TileRef

    mem = CoreMemory.for_target({"Vec": 4096})
    with pytest.raises(DeviceError, match="exceeds"):
        mem.raw(TileRef("vec", 2048, F32, 16, 64, (16, 64)))


def test_aliasing_tiles_share_bytes() -> None:
    from pypto.device.interpreter.memory import F16, F32, CoreMemory, TileRef

    mem = CoreMemory.for_target(None)
    wide = TileRef("vec", 0, F32, 1, 4, (1, 4))
    halves = TileRef("vec", 0, F16, 1, 8, (1, 8))
    mem.write(wide, np.array([[1.0, 2.0, 3.0, 4.0]], np.float32))
    assert mem.raw(halves).tobytes() == np.array([1.0, 2.0, 3.0, 4.0], np.float32).tobytes()
    shifted = TileRef("vec", 4, F32, 1, 2, (1, 2))
    np.testing.assert_array_equal(mem.read(shifted), [[2.0, 3.0]])


def test_unwritten_bytes_read_zero_and_written_bytes_stay() -> None:
    """On-chip bytes are zeroed a tile's range at a time (the buffer is allocated uninitialised): whatever
    overlapping, adjacent or nested tiles are viewed in whatever order, a byte reads 0 until written and keeps
    what was written (checked against a byte model; the buffer is filled with garbage where not zeroed)."""
    from pypto.device.interpreter import memory as mm

    rng = np.random.default_rng(7)
    for _ in range(40):
        mem = mm.CoreMemory.for_target({"Vec": 512})
        mem._bytes("vec", 0, 0)  # allocates the space (uninitialised), zeroes nothing
        mem.buffers["vec"][:] = 0xAB  # what an uninitialised buffer may hold
        model = np.zeros(512, np.uint8)
        for _ in range(12):
            lo = int(rng.integers(0, 500))
            n = int(rng.integers(1, min(128, 512 - lo) + 1))
            tile = mm.TileRef("vec", lo, mm.dtype_named("uint8"), 1, n, (1, n))
            np.testing.assert_array_equal(mem.raw(tile)[0], model[lo : lo + n])
            if rng.random() < 0.6:
                values = rng.integers(1, 255, n).astype(np.uint8)
                mem.raw(tile)[0] = values
                model[lo : lo + n] = values
        np.testing.assert_array_equal(mem.buffer("vec"), model)  # the whole buffer: untouched bytes zeroed too


def test_tensor_view_array_is_the_whole_window() -> None:
    """A tensor view's array (built directly in the common 2-D case) is its whole window, or None exactly when
    that window is not inside the argument (offsets, shapes and strides drawn at random, some out of range)."""
    from pypto.device.interpreter.memory import F32, DeviceError, GmPtr, PartitionView, TensorView

    rng = np.random.default_rng(3)
    flat = np.arange(200, dtype=np.float32)
    for _ in range(300):
        ptr = GmPtr(flat if rng.random() < 0.8 else flat[::2], int(rng.integers(-2, 40)), F32)
        shape = tuple(int(d) for d in rng.integers(0, 12, 2))
        strides = tuple(int(st) for st in rng.integers(-3, 15, 2))
        got = TensorView(ptr, shape, strides).array()  # type: ignore[arg-type]
        try:
            want = PartitionView(ptr, 0, shape, strides).window() if min(shape) > 0 else None  # type: ignore[arg-type]
        except DeviceError:
            want = None
        assert (got is None) == (want is None), (ptr.offset, shape, strides)
        if got is not None:
            np.testing.assert_array_equal(got, want)  # type: ignore[arg-type]
            assert np.shares_memory(got, flat)
    fits = TensorView(GmPtr(flat, 0, F32), (10, 20), (20, 1))  # its last element is the argument's last
    assert fits.array() is not None and fits.array()[-1, -1] == 199
    assert TensorView(GmPtr(flat, 1, F32), (10, 20), (20, 1)).array() is None  # one past the end


def test_bad_argument_dtype_is_an_error() -> None:
    with pytest.raises(Exception, match="needs float32"):
        run_kernel(CORPUS / "vadd.pto", None, [np.zeros(1024, np.float64)] * 3)
