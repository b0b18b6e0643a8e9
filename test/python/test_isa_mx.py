"""The mx (micro-scaled) cube ops on both engines (issue 18 item 2): ``tmatmul.mx[.acc|.bias]`` and
``tgemv.mx[.acc|.bias]``.

The documented meaning (``_MxOp``, docs/ptoas.md): f8 operands times their per-block-of-32 e8m0
scales, ``a(i,k) * a_scale(i, k/32)`` and ``b(k,j) * b_scale(k/32, j)``, summed in fp32 in k order
from 0, ``c_in`` or the bias row. Each case is a cube kernel (tload to mat, tmov to
left/right/scaling/bias, the op, tstore of the acc tile), run by the interpreter (both engines; the
a2a3 device model, whatever the module's arch) and as g++-built C++. Both sum in k order, so they agree bit for
bit; both match a float64 reference within the cube tolerance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pypto.device.interpreter import run_kernel
from pypto.device.interpreter.float8 import E4M3FN, E5M2, E8M0
from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto, verify_pto

LAYOUT = {  # loc -> blayout, slayout, fractal
    "mat": ("col_major", "row_major", 512),
    "left": ("col_major", "row_major", 512),
    "right": ("row_major", "col_major", 512),
    "acc": ("col_major", "row_major", 1024),
    "scaling": ("row_major", "none_box", 512),
    "bias": ("row_major", "none_box", 512),
}
FMT = {"f8E4M3FN": E4M3FN, "f8E5M2": E5M2, "f8E8M0FNU": E8M0}


def _tile(loc: str, dt: str, r: int, c: int) -> str:
    bl, sl, fr = LAYOUT[loc]
    return (
        f"!pto.tile_buf<loc={loc}, dtype={dt}, rows={r}, cols={c}, v_row={r}, v_col={c}, "
        f"blayout={bl}, slayout={sl}, fractal={fr}, pad=0>"
    )


def _kernel(
    op: str, m: int, k: int, n: int, dt: str, arch: str, a_dt: str = "", acc_dt: str = "f32"
) -> tuple[str, list[tuple[str, str, int, int]]]:
    """The .pto text and its GM arguments (name, dtype, rows, cols; y is the output)."""
    kb = -(-k // 32)
    args = [("a", a_dt or dt, m, k), ("sa", "f8E8M0FNU", m, kb), ("b", dt, k, n), ("sb", "f8E8M0FNU", kb, n)]
    form = op.rsplit(".", 1)[1]
    if form == "acc":
        args += [("a2", dt, m, k), ("sa2", "f8E8M0FNU", m, kb)]
    if form == "bias":
        args += [("bias", "f32", 1, n)]
    args += [("y", acc_dt, m, n)]
    dims = sorted({d for _, _, r, c in args for d in (r, c)} | {0, 1})
    lines = [f'module attributes {{pto.target_arch = "{arch}"}} {{']
    params = ", ".join(f"%{a}: !pto.ptr<{t}>" for a, t, _, _ in args)
    lines.append(f"  func.func @k({params}) attributes {{pto.kernel_kind = #pto.kernel_kind<cube>}} {{")
    lines += [f"    %c{d} = arith.constant {d} : index" for d in dims]
    dest = {"a": "left", "a2": "left", "sa": "scaling", "sa2": "scaling", "b": "right", "sb": "scaling", "bias": "bias"}
    for name, t, r, c in args:
        tv, pv = f"!pto.tensor_view<?x?x{t}>", f"!pto.partition_tensor_view<{r}x{c}x{t}>"
        lines += [
            f"    %{name}_tv = pto.make_tensor_view %{name}, shape = [%c{r}, %c{c}], strides = [%c{c}, %c1] : {tv}",
            f"    %{name}_pv = pto.partition_view %{name}_tv, offsets = [%c0, %c0], sizes = [%c{r}, %c{c}] : {tv} -> {pv}",
        ]
        if name == "y":
            continue
        mat, to = _tile("mat", t, r, c), _tile(dest[name], t, r, c)
        lines += [
            f"    %{name}_m = pto.alloc_tile : {mat}",
            f"    pto.tload ins(%{name}_pv : {pv}) outs(%{name}_m : {mat})",
            f"    %{name}_t = pto.alloc_tile : {to}",
            f"    pto.tmov ins(%{name}_m : {mat}) outs(%{name}_t : {to})",
        ]
    acc = _tile("acc", acc_dt, m, n)
    ty = {name: _tile(dest[name], t, r, c) for name, t, r, c in args if name != "y"}
    quad = "%a_t, %sa_t, %b_t, %sb_t"
    quad_t = f"{ty['a']}, {ty['sa']}, {ty['b']}, {ty['sb']}"
    base = op.rsplit(".", 1)[0] if form != "mx" else op
    lines.append(f"    %c_t = pto.alloc_tile : {acc}")
    if form == "mx":
        lines.append(f"    {op} ins({quad} : {quad_t}) outs(%c_t : {acc})")
    elif form == "bias":
        lines.append(f"    {op} ins({quad}, %bias_t : {quad_t}, {ty['bias']}) outs(%c_t : {acc})")
    else:  # c_in: a first plain mx product (a, sa), then a2 / sa2 accumulated onto it
        lines.append(f"    %c0_t = pto.alloc_tile : {acc}")
        lines.append(f"    {base} ins({quad} : {quad_t}) outs(%c0_t : {acc})")
        lines.append(
            f"    {op} ins(%c0_t, %a2_t, %sa2_t, %b_t, %sb_t : {acc}, {ty['a2']}, {ty['sa2']}, {ty['b']}, {ty['sb']}) "
            f"outs(%c_t : {acc})"
        )
    pv_y = f"!pto.partition_tensor_view<{m}x{n}x{acc_dt}>"
    lines += [f"    pto.tstore ins(%c_t : {acc}) outs(%y_pv : {pv_y})", "    return", "  }", "}"]
    return "\n".join(lines) + "\n", [(a, t, r, c) for a, t, r, c in args]


RNG = np.random.default_rng(18)


def _inputs(args: list[tuple[str, str, int, int]]) -> dict[str, np.ndarray]:
    """f8 codes of finite values (no NaN codes), e8m0 scales 2^-4 .. 2^3 (distinct per block), f32 bias."""
    out: dict[str, np.ndarray] = {}
    for name, t, r, c in args:
        if name == "y":
            out[name] = np.full((r, c), np.nan, np.float32)
        elif t == "f32":
            out[name] = RNG.standard_normal((r, c)).astype(np.float32)
        elif t == "f8E8M0FNU":
            out[name] = RNG.integers(127 - 4, 127 + 4, (r, c)).astype(np.uint8)
        else:
            fmt = FMT[t]
            codes = RNG.integers(0, 256, (r, c)).astype(np.uint8)
            out[name] = np.where(np.isfinite(fmt.values[codes]), codes, 0).astype(np.uint8)
    return out


def _reference(op: str, args: list[tuple[str, str, int, int]], x: dict[str, np.ndarray]) -> np.ndarray:
    """float64 reference of the documented meaning."""
    val = {name: (FMT[t].values[x[name]] if t in FMT else x[name]).astype(np.float64) for name, t, _, _ in args}

    def prod(a: str, sa: str) -> np.ndarray:
        k = val[a].shape[1]
        return (val[a] * np.repeat(val[sa], 32, axis=1)[:, :k]) @ (val["b"] * np.repeat(val["sb"], 32, axis=0)[:k])

    form = op.rsplit(".", 1)[1]
    out = prod("a", "sa")
    if form == "acc":
        out = out + prod("a2", "sa2")
    if form == "bias":
        out = out + val["bias"][0]
    return out


OPS = [
    "pto.tmatmul.mx",
    "pto.tmatmul.mx.acc",
    "pto.tmatmul.mx.bias",
    "pto.tgemv.mx",
    "pto.tgemv.mx.acc",
    "pto.tgemv.mx.bias",
]


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isa-mx")


def _run_both(op: str, m: int, k: int, n: int, dt: str, arch: str, build_dir: Path, tag: str) -> None:
    text, args = _kernel(op, m, k, n, dt, arch)
    module = parse_pto(text, f"{tag}.pto")
    verify_pto(module)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    inputs = _inputs(args)
    got_i = [v.copy() for v in inputs.values()]
    run = run_kernel(module, "k", got_i)
    assert run.races == [], run.race_messages
    assert run.problems == []
    lib = KernelLibrary(build_shared(emit_cpp(module), build_dir, name=tag))
    got_c = [v.copy() for v in inputs.values()]
    lib.call("k", *got_c)
    got_x = [v.copy() for v in inputs.values()]
    run_kernel(module, "k", got_x, engine="xdsl")  # the interpreter's other engine: the same numerics
    y_i, y_c = got_i[-1], got_c[-1]
    np.testing.assert_array_equal(y_i.view(np.uint32), got_x[-1].view(np.uint32), err_msg=f"{tag}: xdsl engine")
    np.testing.assert_array_equal(y_i.view(np.uint32), y_c.view(np.uint32), err_msg=f"{tag}: the engines differ")
    ref = _reference(op, args, inputs)
    np.testing.assert_allclose(
        y_i, ref, rtol=1e-5, atol=1e-5 * float(np.abs(ref).max()), err_msg=f"{tag}: not the reference"
    )


@pytest.mark.parametrize("op", OPS)
def test_mx_ops_agree_on_both_engines(op: str, build_dir: Path) -> None:
    m = 1 if "gemv" in op else 16
    _run_both(op, m, 64, 16, "f8E4M3FN", "a5", build_dir, op[4:].replace(".", "_"))


def test_mx_matmul_e5m2_with_a_partial_block_on_a2a3(build_dir: Path) -> None:
    """f8E5M2 operands, k = 48 (a last block of 16) and an a2a3 module: the matmul family verifies there."""
    _run_both("pto.tmatmul.mx", 16, 48, 16, "f8E5M2", "a2a3", build_dir, "mx_e5m2_a2a3")


def test_the_scales_matter() -> None:
    """The reference with the scales differs from the unscaled product (the test can fail)."""
    text, args = _kernel("pto.tmatmul.mx", 16, 64, 16, "f8E4M3FN", "a5")
    x = _inputs(args)
    scaled = _reference("pto.tmatmul.mx", args, x)
    x["sa"][:] = 127
    x["sb"][:] = 127
    assert not np.allclose(scaled, _reference("pto.tmatmul.mx", args, x))


# ----------------------------------------------------------------------------- the f8 tables


def test_the_f8_tables_hold_the_documented_values() -> None:
    assert E4M3FN.values[0x7E] == 448 and E4M3FN.values[0x01] == 2.0**-9 and E4M3FN.values[0x38] == 1
    assert np.isnan(E4M3FN.values[0x7F]) and np.isnan(E4M3FN.values[0xFF]) and E4M3FN.values[0xFE] == -448
    assert E5M2.values[0x7B] == 57344 and E5M2.values[0x7C] == np.inf and np.isnan(E5M2.values[0x7D])
    assert E5M2.values[0x01] == 2.0**-16 and E5M2.values[0xBC] == -1
    assert E8M0.values[0x7F] == 1 and E8M0.values[0x80] == 2 and E8M0.values[0] == 2.0**-127
    assert np.isnan(E8M0.values[0xFF])


@pytest.mark.parametrize("fmt", [E4M3FN, E5M2, E8M0], ids=lambda f: f.name)
def test_encoding_inverts_decoding_and_rounds_to_nearest_even(fmt: object) -> None:
    codes = np.arange(256, dtype=np.uint8)
    finite = ~np.isnan(fmt.values)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(fmt.encode(fmt.values[finite]), codes[finite])  # type: ignore[attr-defined]
    assert fmt.encode(np.float32(np.nan)) == fmt.nan_code  # type: ignore[attr-defined]
    if fmt is E4M3FN:  # 1.0625 lies halfway between 1 (0x38) and 1.125 (0x39): the even code
        assert E4M3FN.encode(np.float32(1.0625)) == 0x38 and E4M3FN.encode(np.float32(1.1875)) == 0x3A
        assert np.isnan(E4M3FN.values[E4M3FN.encode(np.float32(1e4))])  # no infinity: overflow is NaN
    if fmt is E5M2:
        assert E5M2.encode(np.float32(1e6)) == 0x7C and E5M2.encode(np.float32(-1e6)) == 0xFC


def test_the_f8_tables_agree_with_torch() -> None:
    torch = pytest.importorskip("torch")
    codes = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    for fmt, td in ((E4M3FN, "float8_e4m3fn"), (E5M2, "float8_e5m2"), (E8M0, "float8_e8m0fnu")):
        if not hasattr(torch, td):
            continue
        ref = codes.view(getattr(torch, td)).float().numpy()
        np.testing.assert_array_equal(fmt.values, ref, err_msg=fmt.name)
        x = RNG.standard_normal(4096).astype(np.float32) * np.float32(40)
        x = np.abs(x) if fmt is E8M0 else x
        want = torch.from_numpy(x).to(getattr(torch, td)).view(torch.uint8).numpy()
        np.testing.assert_array_equal(fmt.encode(x), want, err_msg=fmt.name)


# ----------------------------------------------------------------------------- verifier, costs, errors


def _verify(text: str) -> None:
    verify_pto(parse_pto(text, "mx.pto"))


def test_the_gemv_family_is_a5_only_and_the_matmul_family_verifies_on_a2a3() -> None:
    from pypto.ptoas.pto_text import PTOVerifyError

    with pytest.raises(PTOVerifyError, match="tgemv.mx is only supported on A5 targets"):
        _verify(_kernel("pto.tgemv.mx", 1, 64, 16, "f8E4M3FN", "a2a3")[0])
    with pytest.raises(PTOVerifyError, match="tgemv.mx.bias is only supported on A5 targets"):
        _verify(_kernel("pto.tgemv.mx.bias", 1, 64, 16, "f8E4M3FN", "a2a3")[0])
    _verify(_kernel("pto.tmatmul.mx.acc", 16, 64, 16, "f8E4M3FN", "a2a3")[0])


def test_a5_wants_f8_operands_and_an_f32_result() -> None:
    from pypto.ptoas.pto_text import PTOVerifyError

    with pytest.raises(PTOVerifyError, match="expects A5 mx operands a and b to use fp8 element types"):
        _verify(_kernel("pto.tmatmul.mx", 16, 64, 16, "f8E4M3FN", "a5", a_dt="f16")[0])
    with pytest.raises(PTOVerifyError, match="expects A5 mx result dst to use f32 element type"):
        _verify(_kernel("pto.tmatmul.mx", 16, 64, 16, "f8E4M3FN", "a5", acc_dt="f16")[0])
    _verify(_kernel("pto.tmatmul.mx", 16, 64, 16, "f8E4M3FN", "a2a3", a_dt="f16")[0])  # a2a3: no type rule


def test_the_e8m0_scale_type_prints_and_emits_as_pto_isa_spells_it() -> None:
    from pypto.ptoas.pto_text import print_pto

    module = parse_pto(_kernel("pto.tmatmul.mx", 16, 64, 16, "f8E4M3FN", "a5")[0], "mx.pto")
    assert "dtype=f8E8M0FNU" in print_pto(module)
    cpp = emit_cpp(module)
    assert "float8_e8m0_t" in cpp and "float8_e4m3_t" in cpp
    assert "TMATMUL_MX(" in cpp


@pytest.mark.parametrize("op", ["pto.tmatmul.mx.bias", "pto.tgemv.mx"])
def test_the_cost_is_the_non_mx_cube_row(op: str) -> None:
    """An a2a3 fallback: the cube formula of the op's shape and 1-byte operands (the scales are free)."""
    from pypto.target import load_target

    m = 1 if "gemv" in op else 16
    text, args = _kernel(op, m, 64, 16, "f8E4M3FN", "a5")
    module = parse_pto(text, "mx.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    run = run_kernel(module, "k", list(_inputs(args).values()))
    rec = next(r for r in run.records if r.op == op)
    assert rec.end - rec.start == load_target("a2a3").matmul_cycles(m, 64, 16, "fp8e4m3fn")
    assert rec.pipe == "CUBE" and rec.hw_pipe == "PIPE_M"


def test_too_few_scales_is_a_device_error_naming_them() -> None:
    from pypto.device.interpreter.memory import DeviceError

    text, args = _kernel("pto.tmatmul.mx", 16, 64, 16, "f8E4M3FN", "a5")
    for full, cut in (
        ("v_row=16, v_col=2", "v_row=16, v_col=1"),
        ("16x2xf8E8M0FNU", "16x1xf8E8M0FNU"),
        ("sizes = [%c16, %c2]", "sizes = [%c16, %c1]"),
    ):
        text = text.replace(full, cut)  # a_scale: one column of scales for k = 64
    module = parse_pto(text, "mx.pto")
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    with pytest.raises(
        DeviceError, match=r"pto.tmatmul.mx: the a_scale tile's valid 16x1 holds fewer than the 16x2 scales of k=64"
    ):
        run_kernel(module, "k", list(_inputs(args).values()))
