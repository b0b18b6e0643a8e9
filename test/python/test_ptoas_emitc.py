"""ptoas C++ emission (pypto.ptoas.emitc) and the CPU header (ptoas/include/pto_cpu.hpp).

- every upstream-build ``.pto`` and every valid corpus ``.pto`` becomes C++ that
  ``g++ -std=c++17 -O2 -fsyntax-only`` accepts (the few the emitter cannot handle are listed
  in UNSUPPORTED with the reason);
- add, softmax_rows, matmul_k and some corpus kernels are built into shared libraries, run on
  torch tensors' memory and compared with torch;
- the kernels/ wrapper has the markers and a working ``kernel_entry``;
- the header's checked sync: a wait_flag without its set_flag fails at run time with a clear message.

Inputs are read from ../shared (skipped when absent).
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pypto.ptoas.build import BuildError, build_shared, check_syntax
from pypto.ptoas.emitc import CODE_MARKER, ENTRY_MARKER, EmitError, emit_cpp, kernel_source
from pypto.ptoas.emitc.runner import KernelLibrary, KernelRuntimeError
from pypto.ptoas.pto_text import parse_pto, verify_pto

torch = pytest.importorskip("torch")

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPUS = SHARED / "corpus" / "pto"
UPSTREAM = SHARED / "reference" / "upstream-builds"

# Meant to be rejected by the verifier (corpus README): never reach the emitter.
REJECTED = {
    "pto_entry_nonvoid_rejected.pto",
    "tcvt_verify_invalid.pto",
    "tinsert_verify_a2a3_invalid_dtype.pto",
    "tstore_verify_shape_valid_mismatch_invalid.pto",
}
# Valid corpus files the emitter does not handle, with the reason. (None at the moment.)
UNSUPPORTED: dict[str, str] = {}

UPSTREAM_FILES = {
    "add": UPSTREAM / "add" / "kernels" / "aiv" / "add_incore_0.pto",
    "softmax_rows": UPSTREAM / "softmax_rows" / "kernels" / "aiv" / "softmax_rows_incore_0.pto",
    "matmul_k": UPSTREAM / "matmul_k" / "kernels" / "aic" / "k_blocked.pto",
}


def _inputs() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    corpus = [p for p in sorted(CORPUS.glob("*.pto")) if p.name not in REJECTED and p.name not in UNSUPPORTED]
    return [*UPSTREAM_FILES.values(), *corpus]


INPUTS = _inputs()
pytestmark = pytest.mark.skipif(not INPUTS, reason="../shared (PTO corpus) not available")


def _cpp(path: Path) -> str:
    module = parse_pto(path.read_text(encoding="utf-8"), str(path))
    verify_pto(module)
    return emit_cpp(module)


@pytest.fixture(scope="module")
def syntax_results() -> dict[str, str | None]:
    """Emit and syntax-check every input once, in parallel: name -> None (ok) or the error."""

    def one(path: Path) -> tuple[str, str | None]:
        try:
            check_syntax(_cpp(path))
            return path.name, None
        except (EmitError, BuildError) as e:
            return path.name, str(e)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, INPUTS))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_emitted_cpp_compiles(path: Path, syntax_results: dict[str, str | None]) -> None:
    assert syntax_results[path.name] is None, syntax_results[path.name]


def test_corpus_accepted_floor() -> None:
    """At most the listed files are unsupported; all 36 valid corpus files are emitted."""
    valid = [p for p in CORPUS.glob("*.pto") if p.name not in REJECTED]
    assert len(valid) - len(UNSUPPORTED) >= 36


def test_cpp_shape() -> None:
    cpp = _cpp(UPSTREAM_FILES["add"])
    assert "__global__ AICORE void add_incore_0(__gm__ float* v1, __gm__ float* v2, __gm__ float* v3) {" in cpp
    assert re.search(
        r"Tile<TileType::Vec, float, 128, 128, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, "
        r"PadValue::Null, CompactMode::Null> v\d+ = Tile<",
        cpp,
    )
    assert re.search(r"TASSIGN\(v\d+, v\d+\);", cpp)
    assert (
        "GlobalTensor<float, pto::Shape<1, 1, 1, 128, 128>, pto::Stride<16384, 16384, 16384, 128, 1>, pto::Layout::ND>"
        in cpp
    )
    assert re.search(r"TLOAD\(v\d+, v\d+\);", cpp) and re.search(r"TADD\(v\d+, v\d+, v\d+\);", cpp)
    assert re.search(r"TSTORE\(v\d+, v\d+\);", cpp)
    assert "#if defined(__DAV_VEC__)" in cpp and "ptoas_auto_sync_tail(PTOAutoSyncTailMode::kBarrierAll);" in cpp
    assert 'extern "C" int ptoas_call_add_incore_0(const int64_t* args)' in cpp


def test_kernel_source_layout() -> None:
    unit = _cpp(UPSTREAM_FILES["matmul_k"])
    text = kernel_source(unit, "k_blocked", "aic")
    head, rest = text.split(CODE_MARKER + "\n")
    body, entry = rest.split(ENTRY_MARKER + "\n")
    assert "#define __DAV_CUBE__ 1" in head
    assert body.strip() == unit.strip()
    assert entry.startswith('extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {')
    assert "__gm__ half* v1 = reinterpret_cast<__gm__ half*>(args[0]);" in entry
    with pytest.raises(EmitError):
        kernel_source(unit, "k_blocked", "gpu")


# ----------------------------------------------------------------------------- running kernels


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ptoas-kernels")


def _library(build_dir: Path, path: Path) -> KernelLibrary:
    return KernelLibrary(build_shared(_cpp(path), build_dir, name=path.stem))


def test_add_runs(build_dir: Path) -> None:
    lib = _library(build_dir, UPSTREAM_FILES["add"])
    a, b = torch.randn(128, 128), torch.randn(128, 128)
    out = torch.full((128, 128), float("nan"))
    lib.call("add_incore_0", a, b, out)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)


def test_softmax_rows_runs(build_dir: Path) -> None:
    lib = _library(build_dir, UPSTREAM_FILES["softmax_rows"])
    x = torch.randn(64, 128) * 3
    out = torch.zeros(64, 128)
    lib.call("softmax_rows_incore_0", x, out)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1), rtol=1e-5, atol=1e-6)


def test_matmul_k_runs(build_dir: Path) -> None:
    """fp16 [128,512] @ [512,128] -> fp32, K in 4 blocks (tmatmul + tmatmul.acc), fp32 accumulation."""
    lib = _library(build_dir, UPSTREAM_FILES["matmul_k"])
    a = torch.randn(128, 512).to(torch.float16)
    b = torch.randn(512, 128).to(torch.float16)
    c = torch.zeros(128, 128, dtype=torch.float32)
    lib.call("k_blocked", a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)


def test_kernel_entry_runs(build_dir: Path) -> None:
    unit = _cpp(UPSTREAM_FILES["add"])
    lib = KernelLibrary(build_shared(kernel_source(unit, "add_incore_0", "aiv"), build_dir, name="kernel_add"))
    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    lib.kernel_entry(a, b, out)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)


def test_corpus_vadd_and_addc(build_dir: Path) -> None:
    a, b, c = (torch.randn(32, 32) for _ in range(3))
    out = torch.zeros(32, 32)
    _library(build_dir, CORPUS / "vadd.pto").call("vec_add_kernel_2d", a, b, out)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)
    out = torch.zeros(32, 32)
    _library(build_dir, CORPUS / "addc.pto").call("vec_add_ternary_kernel_2d", a, b, c, out)
    torch.testing.assert_close(out, a + b + c, rtol=1e-6, atol=1e-6)


def test_corpus_add_scalar(build_dir: Path) -> None:
    x, out = torch.randn(16, 16), torch.zeros(16, 16)
    _library(build_dir, CORPUS / "orchestration_example_kernel_add_scalar.pto").call("kernel_add_scalar", x, 2.5, out)
    torch.testing.assert_close(out, x + 2.5, rtol=0, atol=0)


@pytest.mark.parametrize("with_bias", [True, False])
def test_corpus_matmul_split_k(build_dir: Path, with_bias: bool) -> None:
    """matmul.pto: fp32 [32,256] @ [256,32] over 8 K blocks, optional bias (scf.if on an i1 argument)."""
    lib = _library(build_dir, CORPUS / "matmul.pto")
    a, b, bias = torch.randn(32, 256), torch.randn(256, 32), torch.randn(1, 32)
    out = torch.zeros(32, 32)
    lib.call("RunTMATMULSplitK", out, a, b, bias, int(with_bias))
    expected = a @ b + (bias if with_bias else 0)
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("flag", [1, 0])
def test_corpus_if_else_tile_result(build_dir: Path, flag: int) -> None:
    """scf.if yielding tiles: out = x1 + x1 when flag == 1, else x1 * x1 (the second tload wins)."""
    lib = _library(build_dir, CORPUS / "test_if_else_tile_result.pto")
    x0, x1, out = torch.randn(256, 64), torch.randn(256, 64), torch.zeros(256, 64)
    lib.call("test_if_else_tile_result", x0, x1, flag, out)
    torch.testing.assert_close(out, x1 + x1 if flag == 1 else x1 * x1, rtol=0, atol=0)


def test_corpus_silu_bf16(build_dir: Path) -> None:
    """qwen3_decode_incore_14 (level 3 addresses): silu(gate) * up, stored as bf16 with row stride 25600."""
    lib = _library(build_dir, CORPUS / "qwen3_decode_incore_14.pto")
    gate, up = torch.randn(16, 256), torch.randn(16, 256)
    out = torch.zeros(16, 25600, dtype=torch.bfloat16)
    lib.call("qwen3_decode_incore_14", gate, up, out)
    expected = (gate * torch.sigmoid(gate) * up).to(torch.bfloat16)
    torch.testing.assert_close(out[:, :256].float(), expected.float(), rtol=1e-2, atol=1e-2)
    assert not out[:, 256:].any()


def test_corpus_softmax_prepare(build_dir: Path) -> None:
    """paged attention softmax prep: scaled row max/sum, exp, bf16 probabilities."""
    lib = _library(build_dir, CORPUS / "paged_attention_example_kernel_softmax_prepare.pto")
    s, scale = torch.randn(16, 128), 0.125
    p = torch.zeros(16, 128, dtype=torch.bfloat16)
    m, l_sum = torch.zeros(16, 1), torch.zeros(16, 1)
    lib.call("kernel_softmax_prepare", s, scale, p, m, l_sum)
    ref_m = (s * scale).amax(dim=1, keepdim=True)
    ref_p = torch.exp(s * scale - ref_m)
    torch.testing.assert_close(m, ref_m, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(p.float(), ref_p.to(torch.bfloat16).float(), rtol=1e-2, atol=1e-2)
    # The row sum is taken over the bf16-rounded probabilities or the fp32 ones: both within 1%.
    torch.testing.assert_close(l_sum, ref_p.sum(dim=1, keepdim=True), rtol=1e-2, atol=1e-2)


# ----------------------------------------------------------------------------- checked sync

_ADD_PTO = UPSTREAM_FILES["add"]


def _add_with(lines_before_tadd: list[str]) -> str:
    text = _ADD_PTO.read_text(encoding="utf-8")
    at = text.index("  pto.tadd ")
    return text[:at] + "".join(f"  {ln}\n" for ln in lines_before_tadd) + text[at:]


def _run_add_variant(build_dir: Path, text: str, name: str) -> None:
    module = parse_pto(text, name)
    verify_pto(module)
    lib = KernelLibrary(build_shared(emit_cpp(module), build_dir, name=name))
    a, b, out = torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)
    lib.call("add_incore_0", a, b, out)
    torch.testing.assert_close(out, a + b, rtol=0, atol=0)


def test_sync_pair_passes(build_dir: Path) -> None:
    flag = "[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]"
    _run_add_variant(build_dir, _add_with([f"pto.set_flag{flag}", f"pto.wait_flag{flag}"]), "add_synced")


def test_wait_without_set_fails(build_dir: Path) -> None:
    text = _add_with(["pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID0>]"])
    with pytest.raises(
        KernelRuntimeError, match=r"wait_flag\(PIPE_MTE2, PIPE_V, EVENT_ID0\) without a matching set_flag"
    ):
        _run_add_variant(build_dir, text, "add_wait_only")


def test_set_never_waited_fails(build_dir: Path) -> None:
    text = _add_with(["pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID3>]"])
    with pytest.raises(KernelRuntimeError, match=r"set_flag\(PIPE_MTE2, PIPE_V, EVENT_ID3\) is never waited for"):
        _run_add_variant(build_dir, text, "add_set_only")


def test_build_error_carries_gxx_message(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="error"):
        build_shared("int main() { return undefined_name; }\n", tmp_path, name="broken")


def test_build_is_cached(build_dir: Path) -> None:
    cpp = _cpp(CORPUS / "vadd.pto")
    first = build_shared(cpp, build_dir, name="vadd")
    assert build_shared(cpp, build_dir, name="vadd") == first


def test_set_validshape_tile_is_a_view_of_a_static_base(build_dir: Path) -> None:
    """PTOAS's lowering of a tile that ``set_validshape`` resizes: a static base tile owns the storage, the
    dynamic tile is TASSIGNed to ``base.data()`` (the CPU header takes that pointer as the base's offset)."""
    tile_t = (
        "!pto.tile_buf<loc=vec, dtype=f32, rows=128, cols=128, v_row=?, v_col=?, blayout=row_major, "
        "slayout=none_box, fractal=512, pad=0>"
    )
    text = _add_with([f"pto.set_validshape %b__tile, %c128_index, %c128_index : {tile_t}"])
    cpp = emit_cpp(parse_pto(text, "add_resized"))
    base = re.search(r"Tile<TileType::Vec, float, 128, 128, BLayout::RowMajor, 128, 128, [^>]*> (v\d+);", cpp)
    assert base is not None
    view = re.search(rf"__ubuf__ float\* (v\d+) = {base.group(1)}\.data\(\);", cpp)
    assert view is not None and f"reinterpret_cast<uint64_t>({view.group(1)});" in cpp
    assert re.search(r"v\d+\.SetValidShape\(v\d+, v\d+\);", cpp)
    _run_add_variant(build_dir, text, "add_resized")
