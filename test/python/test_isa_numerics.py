"""Interpreter vs g++-built C++ on the ISA additions (issue 18 item 2).

Each case is a small vector kernel: tload its inputs, run one (or two) of the new ops, tstore the
result. It goes through insert-sync, runs in the interpreter (it must not race) and, emitted to C++
and built with g++ against ``pto_cpu.hpp``, on copies of the same inputs. Outputs must agree bit for
bit (fp32 compared as uint32) and match a numpy reference, so neither side can be wrong the same way
as the other by accident.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from pypto.device.interpreter import run_kernel
from pypto.ptoas.build import build_shared
from pypto.ptoas.emitc import emit_cpp
from pypto.ptoas.emitc.runner import KernelLibrary
from pypto.ptoas.passes import PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import parse_pto, verify_pto

NP = {
    "f32": np.float32,
    "i32": np.int32,
    "i8": np.int8,
    "ui32": np.uint32,
    "ui8": np.uint8,
    "i16": np.int16,
    "ui16": np.uint16,
}


def tile(dt: str, r: int, c: int) -> str:
    return (
        f"!pto.tile_buf<loc=vec, dtype={dt}, rows={r}, cols={c}, v_row={r}, v_col={c}, "
        "blayout=row_major, slayout=none_box, fractal=512, pad=0>"
    )


@dataclass
class Case:
    """GM arguments (name, dtype, rows, cols, is_output), the op lines, the numpy reference of the outputs."""

    args: list[tuple[str, str, int, int, bool]]
    body: str
    inputs: dict[str, np.ndarray] = field(default_factory=dict)
    expect: dict[str, np.ndarray] = field(default_factory=dict)
    arch: str = "a2a3"
    gm: tuple[str, ...] = ()
    """Arguments the body uses as GM views (``%<name>_pv``): neither tloaded nor tstored (an output's
    initial contents may be given in ``inputs``)."""
    tiles: dict[str, str] = field(default_factory=dict)
    """Tile types other than :func:`tile`'s row-major one, by argument name."""

    def text(self) -> str:
        params = ", ".join(f"%{n}: !pto.ptr<{dt}>" for n, dt, *_ in self.args)
        lines = [
            f'module attributes {{pto.target_arch = "{self.arch}"}} {{',
            f"  func.func @k({params}) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{",
            "    %c0 = arith.constant 0 : index",
            "    %c1 = arith.constant 1 : index",
        ]
        dims = sorted({d for _, _, r, c, _ in self.args for d in (r, c)})
        lines += [f"    %c{d} = arith.constant {d} : index" for d in dims if d not in (0, 1)]
        for n, dt, r, c, out in self.args:
            tv, pv = f"!pto.tensor_view<?x?x{dt}>", f"!pto.partition_tensor_view<{r}x{c}x{dt}>"
            tt = self.tiles.get(n, tile(dt, r, c))
            lines += [
                f"    %{n}_tv = pto.make_tensor_view %{n}, shape = [%c{r}, %c{c}], strides = [%c{c}, %c1] : {tv}",
                f"    %{n}_pv = pto.partition_view %{n}_tv, offsets = [%c0, %c0], sizes = [%c{r}, %c{c}] : {tv} -> {pv}",
            ]
            if n in self.gm:
                continue
            lines.append(f"    %{n}_t = pto.alloc_tile : {tt}")
            if not out:
                lines.append(f"    pto.tload ins(%{n}_pv : {pv}) outs(%{n}_t : {tt})")
        lines += ["    " + ln.strip() for ln in self.body.strip().splitlines()]
        for n, dt, r, c, out in self.args:
            if out and n not in self.gm:
                pv = f"!pto.partition_tensor_view<{r}x{c}x{dt}>"
                lines.append(f"    pto.tstore ins(%{n}_t : {self.tiles.get(n, tile(dt, r, c))}) outs(%{n}_pv : {pv})")
        lines += ["    return", "  }", "}"]
        return "\n".join(lines) + "\n"


RNG = np.random.default_rng(18)
A = RNG.standard_normal((16, 16)).astype(np.float32) * 4
B = (RNG.uniform(0.5, 2.0, (16, 16)) * RNG.choice([-1, 1], (16, 16))).astype(np.float32)
NEAR1 = RNG.uniform(0.8, 1.25, (16, 16)).astype(np.float32)
PERM = RNG.permutation(256).astype(np.int32).reshape(16, 16)
MASK = RNG.integers(0, 2, (16, 16)).astype(np.int8)
F16 = tile("f32", 16, 16)
I16 = tile("i32", 16, 16)


def _colprod(x: np.ndarray) -> np.ndarray:
    acc = x[0].copy()
    for r in range(1, x.shape[0]):
        acc = acc * x[r]
    return acc[None, :]


def _tri(lower: bool, k: int) -> np.ndarray:
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    return ((j <= i + k) if lower else (j >= i + k)).astype(np.int32)


def _scatter(src: np.ndarray, idx: np.ndarray) -> np.ndarray:
    out = np.zeros(256, np.float32)
    out[idx.reshape(-1)] = src.reshape(-1)
    return out.reshape(16, 16)


def _setval(a: np.ndarray) -> np.ndarray:
    out = a.copy()
    out.flat[3] = a.flat[17]
    return out


I8SRC = RNG.integers(-128, 128, (16, 16)).astype(np.int8)
SCALE8 = RNG.uniform(0.01, 0.1, (16, 8)).astype(np.float32)
OFF8 = RNG.uniform(-3, 3, (16, 8)).astype(np.float32)

SORTV = RNG.integers(-20, 20, (1, 128)).astype(np.float32) * np.float32(0.5)  # ties on purpose
SORTI = (RNG.permutation(128).astype(np.uint32) + 1000)[None, :]


def _pairs(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """(value, u32 index) pairs as one f32 row: value bits, then index bits."""
    out = np.empty((values.shape[0], 2 * values.shape[1]), np.uint32)
    out[:, 0::2] = values.astype(np.float32).view(np.uint32)
    out[:, 1::2] = index.astype(np.uint32)
    return out.view(np.float32)


def _sorted_blocks(v: np.ndarray, ix: np.ndarray, block: int) -> np.ndarray:
    order = np.concatenate([b + np.argsort(-v[0, b : b + block], kind="stable") for b in range(0, v.shape[1], block)])
    return _pairs(v[:, order], ix[:, order])


MV = [RNG.integers(-8, 8, (1, n)).astype(np.float32) for n in (32, 32, 16)]  # ties across lists too
MI = [(RNG.permutation(n).astype(np.uint32) + 100 * (k + 1))[None, :] for k, n in enumerate((32, 32, 16))]


def _merged(k: int, exhausted: bool, width: int) -> np.ndarray:
    """The first ``k`` lists, stably sorted descending as one (ties: the earlier list); with ``exhausted``
    only up to the pair that uses up a list first; as a ``width``-column f32 row, zeros after."""
    v, ix = np.concatenate(MV[:k], axis=1), np.concatenate(MI[:k], axis=1)
    src = np.concatenate([np.full(m.shape[1], j) for j, m in enumerate(MV[:k])])
    order = np.argsort(-v[0], kind="stable")
    if exhausted:
        used = np.zeros(k, int)
        for n, o in enumerate(order):
            used[src[o]] += 1
            if used[src[o]] == MV[src[o]].shape[1]:
                order = order[: n + 1]
                break
    out = np.zeros((1, width), np.float32)
    pairs = _pairs(v[:, order], ix[:, order])
    out[:, : pairs.shape[1]] = pairs
    return out


def _sort_lists() -> str:
    lines = []
    for k, n in enumerate((32, 32, 16)):
        lines += [
            f"%s{k} = pto.alloc_tile : {tile('f32', 1, 2 * n)}",
            f"pto.tsort32 ins(%v{k}_t, %i{k}_t : {tile('f32', 1, n)}, {tile('ui32', 1, n)}) outs(%s{k} : {tile('f32', 1, 2 * n)})",
        ]
    s64, s32, t128, t160 = (tile("f32", 1, n) for n in (64, 32, 128, 160))
    return "\n".join(
        lines
        + [
            "%ex = arith.constant dense<0> : vector<4xi16>",
            "%z = arith.constant 0.0 : f32",
            f"%tmp2 = pto.alloc_tile : {t128}",
            f"%tmp3 = pto.alloc_tile : {t160}",
            f"pto.tmrgsort ins(%s0, %s1, %tmp2 {{exhausted = false}} : {s64}, {s64}, {t128}) outs(%m2_t, %ex : {t128}, vector<4xi16>)",
            f"pto.texpands ins(%z : f32) outs(%m3_t : {t160})",
            f"pto.tmrgsort ins(%s0, %s1, %s2, %tmp3 {{exhausted = true}} : {s64}, {s64}, {s32}, {t160}) outs(%m3_t, %ex : {t160}, vector<4xi16>)",
        ]
    )


SMALL = RNG.integers(-3, 4, (16, 16)).astype(np.float32)


def _cmp_gather(x: np.ndarray, hit: np.ndarray, offset: int) -> tuple[np.ndarray, np.ndarray]:
    d, c = np.zeros((16, 16), np.int32), np.zeros((16, 8), np.int32)
    for i in range(x.shape[0]):
        cols = [j for j in range(x.shape[1]) if hit[i, j]]
        d[i, : len(cols)] = np.array(cols, np.int32) + offset
        c[i, 0] = len(cols)
    return d, c


CMP_GT = _cmp_gather(SMALL, SMALL > 1.0, 5)
CMP_EQ = _cmp_gather(SMALL, SMALL == 0.0, 0)


BOFF = (RNG.permutation(32)[:16].astype(np.uint32) * 32)[:, None] + np.array([[0, 32 * 8]], np.uint32)  # 16x2
BOFF = np.concatenate([BOFF, np.zeros((16, 6), np.uint32)], axis=1)


def _gatherb(src: np.ndarray, off: np.ndarray) -> np.ndarray:
    """dst row i = the 32-byte blocks of src's bytes at off[i, 0], off[i, 1] (16 f32 = 64 bytes a row)."""
    b = src.reshape(-1).view(np.uint8)
    return np.stack([np.concatenate([b[o : o + 32] for o in off[i, :2]]) for i in range(16)]).view(np.float32)


GB_SRC = RNG.standard_normal((32, 16)).astype(np.float32)


QX = (A * 10).astype(np.float32)
QX[0, :8] = [2.5, -2.5, 3.5, -0.5, 0.5, 1.5, 127.5, -128.5]  # ties to even, at the range ends too
QFP = RNG.uniform(0.5, 2.0, (16, 8)).astype(np.float32)
QFP[0, 0] = 1.0
QOFF = RNG.uniform(100, 140, (16, 8)).astype(np.float32)
QOFF[0, 0] = 0.0


def _quant(fp: np.ndarray, off: np.ndarray | None) -> np.ndarray:
    v = QX.astype(np.float64) * fp[:, :1].astype(np.float64)
    if off is None:
        return np.clip(np.rint(v), -128, 127).astype(np.int8)
    return np.clip(np.rint(v + off[:, :1].astype(np.float64)), 0, 255).astype(np.uint8)


CVX = (RNG.standard_normal((16, 16)) * 3e5).astype(np.float32)
CVX[1] *= np.float32(3e4)  # beyond 2^32 and 2^63: wraps of huge values
CVX[0, :10] = [np.nan, np.inf, -np.inf, 2.5, -2.5, 32767.5, -32768.5, 255.7, -0.7, 65536.0 * 3 + 1.5]


def _wrap_ref(x: np.ndarray, mode: str, dt: type) -> np.ndarray:
    """Python-integer reference: round, then modulo 2^bits (two's complement); NaN, +-inf -> 0."""
    info = np.iinfo(dt)
    rnd = {"rint": lambda v: int(np.rint(v)), "trunc": math.trunc, "floor": math.floor}[mode]
    out = np.zeros(x.shape, dt)
    for ij, v in np.ndenumerate(x.astype(np.float64)):
        if math.isfinite(v):
            k = rnd(v) % 2**info.bits
            out[ij] = k - 2**info.bits if info.min < 0 and k > info.max else k
    return out


def _cvt(name: str, dt: str, attrs: str) -> str:
    return f"pto.tcvt ins(%x_t {{{attrs}}} : {F16}) outs(%{name}_t : {tile(dt, 16, 16)})"


CASES: dict[str, Case] = {
    "tcvt_sat_off": Case(
        [
            ("x", "f32", 16, 16, False),
            ("w16", "i16", 16, 16, True),
            ("s16", "i16", 16, 16, True),
            ("w8", "i8", 16, 16, True),
            ("wu8", "ui8", 16, 16, True),
            ("w32", "i32", 16, 16, True),
        ],
        "\n".join(
            [
                _cvt("w16", "i16", "rmode = #pto<round_mode RINT>, sat_mode = #pto<saturation_mode OFF>"),
                _cvt("s16", "i16", "rmode = #pto<round_mode RINT>, sat_mode = #pto<saturation_mode ON>"),
                _cvt("w8", "i8", "rmode = #pto<round_mode TRUNC>, sat_mode = #pto<saturation_mode OFF>"),
                _cvt("wu8", "ui8", "rmode = #pto<round_mode FLOOR>, sat_mode = #pto<saturation_mode OFF>"),
                _cvt("w32", "i32", "rmode = #pto<round_mode RINT>, sat_mode = #pto<saturation_mode OFF>"),
            ]
        ),
        {"x": CVX},
        {
            "w16": _wrap_ref(CVX, "rint", np.int16),
            "s16": np.clip(np.nan_to_num(np.rint(CVX.astype(np.float64)), nan=0, posinf=32767, neginf=-32768), -32768, 32767),
            "w8": _wrap_ref(CVX, "trunc", np.int8),
            "wu8": _wrap_ref(CVX, "floor", np.uint8),
            "w32": _wrap_ref(CVX, "rint", np.int32),
        },
    ),
    "tquant": Case(
        [
            ("x", "f32", 16, 16, False),
            ("fp", "f32", 16, 8, False),
            ("of", "f32", 16, 8, False),
            ("s", "i8", 16, 16, True),
            ("u", "ui8", 16, 16, True),
        ],
        f"pto.tquant ins(%x_t, %fp_t : {F16}, {tile('f32', 16, 8)}) outs(%s_t : {tile('i8', 16, 16)}) "
        "{quant_type = #pto<quant_type INT8_SYM>}\n"
        f"pto.tquant ins(%x_t, %fp_t, %of_t : {F16}, {tile('f32', 16, 8)}, {tile('f32', 16, 8)}) "
        f"outs(%u_t : {tile('ui8', 16, 16)}) {{quant_type = #pto<quant_type INT8_ASYM>}}",
        {"x": QX, "fp": QFP, "of": QOFF},
        {"s": _quant(QFP, None), "u": _quant(QFP, QOFF)},
    ),
    "tgatherb": Case(
        [("a", "f32", 32, 16, False), ("o", "ui32", 16, 8, False), ("d", "f32", 16, 16, True)],
        f"pto.tgatherb ins(%a_t, %o_t : {tile('f32', 32, 16)}, {tile('ui32', 16, 8)}) outs(%d_t : {F16})",
        {"a": GB_SRC, "o": BOFF},
        {"d": _gatherb(GB_SRC, BOFF)},
    ),
    "tgather_mask": Case(
        [
            ("a", "f32", 16, 16, False),
            ("e", "f32", 16, 8, True),
            ("o", "f32", 16, 8, True),
            ("q", "i32", 16, 4, True),
            ("all", "f32", 16, 16, True),
        ],
        f"pto.tgather ins(%a_t, {{maskPattern = #pto.mask_pattern<P0101>}} : {F16}) outs(%e_t : {tile('f32', 16, 8)})\n"
        f"pto.tgather ins(%a_t, {{maskPattern = #pto.mask_pattern<P1010>}} : {F16}) outs(%o_t : {tile('f32', 16, 8)})\n"
        f"pto.tgather ins(%a_t, {{maskPattern = #pto.mask_pattern<P1000>}} : {F16}) outs(%q_t : {tile('i32', 16, 4)})\n"
        f"pto.tgather ins(%a_t, {{maskPattern = #pto.mask_pattern<P1111>}} : {F16}) outs(%all_t : {F16})",
        {"a": A},
        {"e": A[:, 0::2], "o": A[:, 1::2], "q": A[:, 3::4].view(np.int32), "all": A},
    ),
    "tgather_cmp": Case(
        [
            ("a", "f32", 16, 16, False),
            ("g", "i32", 16, 16, True),
            ("gc", "i32", 16, 8, True),
            ("z", "i32", 16, 16, True),
            ("zc", "i32", 16, 8, True),
        ],
        "%k1 = arith.constant 1.0 : f32\n%k0 = arith.constant 0.0 : f32\n%zero = arith.constant 0 : i32\n"
        f"%tmp = pto.alloc_tile : {tile('i8', 16, 16)}\n"
        + "\n".join(f"pto.texpands ins(%zero : i32) outs(%{n}_t : {tile('i32', 16, c)})" for n, c in (("g", 16), ("gc", 8), ("z", 16), ("zc", 8)))
        + f"\npto.tgather ins(%a_t, %k1, %tmp : {F16}, f32, {tile('i8', 16, 16)}) outs(%g_t, %gc_t : {I16}, {tile('i32', 16, 8)}) "
        "{cmpMode = #pto<cmp gt>, offset = 5 : i32}\n"
        f"pto.tgather ins(%a_t, %k0, %tmp : {F16}, f32, {tile('i8', 16, 16)}) outs(%z_t, %zc_t : {I16}, {tile('i32', 16, 8)})",
        {"a": SMALL},
        {"g": CMP_GT[0], "gc": CMP_GT[1], "z": CMP_EQ[0], "zc": CMP_EQ[1]},
    ),
    "tmrgsort_lists": Case(
        [
            *[(f"v{k}", "f32", 1, n, False) for k, n in enumerate((32, 32, 16))],
            *[(f"i{k}", "ui32", 1, n, False) for k, n in enumerate((32, 32, 16))],
            ("m2", "f32", 1, 128, True),
            ("m3", "f32", 1, 160, True),
        ],
        _sort_lists(),
        {**{f"v{k}": MV[k] for k in range(3)}, **{f"i{k}": MI[k] for k in range(3)}},
        {"m2": _merged(2, False, 128), "m3": _merged(3, True, 160)},
    ),
    "tsort32_tmrgsort": Case(
        [
            ("v", "f32", 1, 128, False),
            ("ix", "ui32", 1, 128, False),
            ("s", "f32", 1, 256, True),
            ("m", "f32", 1, 256, True),
        ],
        f"pto.tsort32 ins(%v_t, %ix_t : {tile('f32', 1, 128)}, {tile('ui32', 1, 128)}) outs(%s_t : {tile('f32', 1, 256)})\n"
        "%bl = arith.constant 64 : i32\n"
        f"pto.tmrgsort ins(%s_t, %bl : {tile('f32', 1, 256)}, i32) outs(%m_t : {tile('f32', 1, 256)})",
        {"v": SORTV, "ix": SORTI},
        # 32-value blocks sorted; then the four 32-pair lists merged (ties: earlier list = stable)
        {"s": _sorted_blocks(SORTV, SORTI, 32), "m": _sorted_blocks(SORTV, SORTI, 128)},
    ),
    "tdequant": Case(
        [
            ("x", "i8", 16, 16, False),
            ("sc", "f32", 16, 8, False),
            ("of", "f32", 16, 8, False),
            ("d", "f32", 16, 16, True),
        ],
        f"pto.tdequant ins(%x_t, %sc_t, %of_t : {tile('i8', 16, 16)}, {tile('f32', 16, 8)}, {tile('f32', 16, 8)}) "
        f"outs(%d_t : {F16})",
        {"x": I8SRC, "sc": SCALE8, "of": OFF8},
        {"d": (I8SRC.astype(np.float32) - OFF8[:, :1]) * SCALE8[:, :1]},
    ),
    "tfmod": Case(
        [("a", "f32", 16, 16, False), ("b", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        f"pto.tfmod ins(%a_t, %b_t : {F16}, {F16}) outs(%d_t : {F16})",
        {"a": A, "b": B},
        {"d": np.fmod(A, B)},
    ),
    "tfmods": Case(
        [("a", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        f"%s = arith.constant 0.7 : f32\npto.tfmods ins(%a_t, %s : {F16}, f32) outs(%d_t : {F16})",
        {"a": A},
        {"d": np.fmod(A, np.float32(0.7))},
    ),
    "trem_tmp": Case(
        [("a", "f32", 16, 16, False), ("b", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        f"%t = pto.alloc_tile : {F16}\npto.trem ins(%a_t, %b_t, %t : {F16}, {F16}, {F16}) outs(%d_t : {F16})",
        {"a": A, "b": B},
        {"d": np.fmod(A, B)},
    ),
    "trems_tmp": Case(
        [("a", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        f"%s = arith.constant 1.5 : f32\n%t = pto.alloc_tile : {F16}\n"
        f"pto.trems ins(%a_t, %s, %t : {F16}, f32, {F16}) outs(%d_t : {F16})",
        {"a": A},
        {"d": np.fmod(A, np.float32(1.5))},
    ),
    "tcolprod": Case(
        [("a", "f32", 16, 16, False), ("d", "f32", 1, 16, True)],
        f"pto.tcolprod ins(%a_t : {F16}) outs(%d_t : {tile('f32', 1, 16)})",
        {"a": NEAR1},
        {"d": _colprod(NEAR1)},
    ),
    "tcolargmax_argmin": Case(
        [("a", "f32", 16, 16, False), ("mx", "i32", 1, 16, True), ("mn", "i32", 1, 16, True)],
        f"%t = pto.alloc_tile : {F16}\n"
        f"pto.tcolargmax ins(%a_t, %t : {F16}, {F16}) outs(%mx_t : {tile('i32', 1, 16)})\n"
        f"pto.tcolargmin ins(%a_t, %t : {F16}, {F16}) outs(%mn_t : {tile('i32', 1, 16)})",
        {"a": A},
        {"mx": A.argmax(axis=0)[None, :].astype(np.int32), "mn": A.argmin(axis=0)[None, :].astype(np.int32)},
    ),
    "tconcat": Case(
        [("a", "f32", 16, 8, False), ("b", "f32", 16, 8, False), ("d", "f32", 16, 16, True)],
        f"pto.tconcat ins(%a_t, %b_t : {tile('f32', 16, 8)}, {tile('f32', 16, 8)}) outs(%d_t : {F16})",
        {"a": A[:, :8].copy(), "b": B[:, :8].copy()},
        {"d": np.concatenate([A[:, :8], B[:, :8]], axis=1)},
    ),
    "tci_ttri": Case(
        [("ci", "i32", 1, 16, True), ("lo", "i32", 16, 16, True), ("up", "i32", 16, 16, True)],
        f"%s = arith.constant 100 : i32\n%k = arith.constant 1 : i32\n"
        f"pto.tci ins(%s {{descending = true}} : i32) outs(%ci_t : {tile('i32', 1, 16)})\n"
        f"pto.ttri ins(%k : i32) outs(%lo_t : {I16})\n"
        f"pto.ttri ins(%k {{upperOrLower = 1 : i32}} : i32) outs(%up_t : {I16})",
        {},
        {"ci": (100 - np.arange(16, dtype=np.int32))[None, :], "lo": _tri(True, 1), "up": _tri(False, 1)},
    ),
    "tsels": Case(
        [("m", "i8", 16, 16, False), ("a", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        f"%s = arith.constant -3.0 : f32\n%t = pto.alloc_tile : {F16}\n"
        f"pto.tsels ins(%m_t, %a_t, %t, %s : {tile('i8', 16, 16)}, {F16}, {F16}, f32) outs(%d_t : {F16})",
        {"m": MASK, "a": A},
        {"d": np.where(MASK != 0, A, np.float32(-3.0))},
    ),
    "tgetval_tsetval": Case(
        [("a", "f32", 16, 16, False), ("d", "f32", 16, 16, True)],
        f"%i17 = arith.constant 17 : index\n%i3 = arith.constant 3 : index\n"
        f"%v = pto.tgetval ins(%a_t, %i17 : {F16}, index) outs : f32\n"
        f"pto.tsetval ins(%i3, %v : index, f32) outs(%a_t : {F16})\n"
        f"pto.tfillpad_expand ins(%a_t : {F16}) outs(%d_t : {F16})",
        {"a": A},
        {"d": _setval(A)},
    ),
    "tscatter_tgather": Case(
        [
            ("a", "f32", 16, 16, False),
            ("ix", "i32", 16, 16, False),
            ("s", "f32", 16, 16, True),
            ("g", "f32", 16, 16, True),
        ],
        f"pto.tscatter ins(%a_t, %ix_t : {F16}, {I16}) outs(%s_t : {F16})\n"
        f"pto.tgather ins(%a_t, %ix_t : {F16}, {I16}) outs(%g_t : {F16})",
        {"a": A, "ix": PERM},
        {"s": _scatter(A, PERM), "g": A.reshape(-1)[PERM]},
    ),
}


# -- the A5-only ops (run by the simulator whatever the arch; PTOAS verifies them on a5 only) ------

HSRC = (RNG.integers(0, 4, (8, 32)) * 256 + RNG.integers(0, 256, (8, 32))).astype(np.uint16)
HSRC[0, :4] = [0xFFFF, 0x0300, 0x03FF, 0]  # the ends of both bytes
HIDX = RNG.integers(0, 4, (8, 1)).astype(np.uint8)


def _hist(x: np.ndarray, sel: np.ndarray | None) -> np.ndarray:
    out = np.zeros((x.shape[0], 256), np.uint32)
    for r in range(x.shape[0]):
        for v in x[r].astype(int):
            if sel is None:
                out[r, v >> 8] += 1
            elif v >> 8 == sel[r, 0]:
                out[r, v & 0xFF] += 1
    return out


PK32 = RNG.integers(-(2**31), 2**31, (16, 16), dtype=np.int64).astype(np.int32)
PK16 = RNG.integers(-(2**15), 2**15, (16, 16)).astype(np.int16)

GTAB = RNG.standard_normal((16, 16)).astype(np.float32)
GOOB = PERM.copy()
GOOB[0, :4] = [256, 300, 511, 1000]  # out of bounds: clamp / wrap / zero
GROW = RNG.permutation(32)[:16].astype(np.int32)[:, None]  # row form: distinct rows of a 32x16 table
GTAB32 = RNG.standard_normal((32, 16)).astype(np.float32)
SDUP = RNG.integers(0, 64, (16, 16)).astype(np.int32)  # collisions on purpose: 256 values into 64 places
SVAL = RNG.integers(-1000, 1000, (16, 16)).astype(np.int32)
SINIT = RNG.integers(-1000, 1000, (8, 8)).astype(np.int32)


def _oob(k: int, cap: int, mode: str) -> int | None:
    if mode == "clamp":
        return min(k, cap - 1)
    if mode == "wrap":
        return k % cap
    return k if k < cap else None


def _gather(tab: np.ndarray, idx: np.ndarray, mode: str) -> np.ndarray:
    flat = tab.reshape(-1)
    out = np.zeros(idx.shape, tab.dtype)
    for ij, k in np.ndenumerate(idx):
        at = _oob(int(k), flat.size, mode)
        out[ij] = 0 if at is None else flat[at]
    return out


def _scatter_into(init: np.ndarray, src: np.ndarray, idx: np.ndarray, atomic: str, mode: str = "undefined") -> np.ndarray:
    out = init.copy().reshape(-1)
    for ij, k in np.ndenumerate(idx):
        at = _oob(int(k), out.size, mode)
        if at is None:
            continue
        v = src[ij]
        out[at] = {"none": v, "add": out[at] + v, "max": max(out[at], v), "min": min(out[at], v)}[atomic]
    return out.reshape(init.shape)


def _mem(op: str, n: str, dt: str, r: int, c: int, attrs: str = "") -> str:
    """The GM operand of mgather / mscatter: ``%<n>_pv``."""
    return f"%{n}_pv : !pto.partition_tensor_view<{r}x{c}x{dt}>"


def _philox_ref(key: tuple[int, int], ctr: list[int], rows: int, cols: int, rounds: int) -> np.ndarray:
    """PTO-ISA's A5 TRANDOM layout, written out plainly (the generator: ``isa_impls.philox4x32``,
    checked against Random123's known answers in test_philox_known_answers)."""
    from pypto.device.interpreter.isa_impls import philox4x32

    c = sum(w << (32 * i) for i, w in enumerate(ctr))
    out = np.zeros((rows, cols), np.uint32)
    for r in range(rows):
        col = 0
        while col < cols:
            for lane in range(64):
                words = philox4x32((c + lane) % 2**128, key, rounds)
                for w in range(4):
                    if col + 4 * lane + w < cols:
                        out[r, col + 4 * lane + w] = words[w]
            col += 256
            c += 64 if col < cols else (cols - 1) % 64 + 1
    return out


A5_CASES: dict[str, Case] = {
    "thistogram": Case(
        [
            ("s", "ui16", 8, 32, False),
            ("ix", "ui8", 8, 1, False),
            ("hm", "ui32", 8, 256, True),
            ("hl", "ui32", 8, 256, True),
        ],
        f"pto.thistogram ins(%s_t, %ix_t : {tile('ui16', 8, 32)}, {tile('ui8', 8, 1).replace('row_major', 'col_major')}) "
        f"outs(%hm_t : {tile('ui32', 8, 256)})\n"
        f"pto.thistogram ins(%s_t, %ix_t : {tile('ui16', 8, 32)}, {tile('ui8', 8, 1).replace('row_major', 'col_major')}) "
        f"outs(%hl_t : {tile('ui32', 8, 256)}) {{isMSB = false}}",
        {"s": HSRC, "ix": HIDX},
        {"hm": _hist(HSRC, None), "hl": _hist(HSRC, HIDX)},
        arch="a5",
        tiles={"ix": tile("ui8", 8, 1).replace("row_major", "col_major")},
    ),
    "tpack": Case(
        [
            ("a", "i32", 16, 16, False),
            ("h", "i16", 16, 16, False),
            ("f", "f32", 16, 16, False),
            ("a16", "i16", 16, 16, True),
            ("a8", "i8", 16, 16, True),
            ("h8", "i8", 16, 16, True),
            ("f16", "i16", 16, 16, True),
        ],
        f"pto.tpack ins(%a_t : {I16}) outs(%a16_t : {tile('i16', 16, 16)})\n"
        f"pto.tpack ins(%a_t : {I16}) outs(%a8_t : {tile('i8', 16, 16)})\n"
        f"pto.tpack ins(%h_t : {tile('i16', 16, 16)}) outs(%h8_t : {tile('i8', 16, 16)})\n"
        f"pto.tpack ins(%f_t : {F16}) outs(%f16_t : {tile('i16', 16, 16)})",
        {"a": PK32, "h": PK16, "f": A},
        {
            "a16": PK32.astype(np.int16),
            "a8": PK32.astype(np.int8),
            "h8": PK16.astype(np.int8),
            "f16": A.view(np.uint32).astype(np.uint16).view(np.int16),
        },
        arch="a5",
    ),
    "mgather": Case(
        [
            ("tab", "f32", 16, 16, False),
            ("t32", "f32", 32, 16, False),
            ("ix", "i32", 16, 16, False),
            ("io", "i32", 16, 16, False),
            ("ir", "i32", 16, 1, False),
            ("g", "f32", 16, 16, True),
            ("gc", "f32", 16, 16, True),
            ("gw", "f32", 16, 16, True),
            ("gz", "f32", 16, 16, True),
            ("gr", "f32", 16, 16, True),
        ],
        "\n".join(
            [
                f"pto.mgather ins({_mem('g', 'tab', 'f32', 16, 16)}, %ix_t : {I16}) outs(%g_t : {F16})",
                *(
                    f"pto.mgather ins({_mem('g', 'tab', 'f32', 16, 16)}, %io_t : {I16}) outs(%{n}_t : {F16}) "
                    f"{{gatherOob = #pto<gather_oob {m}>}}"
                    for n, m in (("gc", "clamp"), ("gw", "wrap"), ("gz", "zero"))
                ),
                f"pto.mgather ins({_mem('g', 't32', 'f32', 32, 16)}, %ir_t : {tile('i32', 16, 1)}) outs(%gr_t : {F16})",
            ]
        ),
        {"tab": GTAB, "t32": GTAB32, "ix": PERM, "io": GOOB, "ir": GROW},
        {
            "g": _gather(GTAB, PERM, "undefined"),
            "gc": _gather(GTAB, GOOB, "clamp"),
            "gw": _gather(GTAB, GOOB, "wrap"),
            "gz": _gather(GTAB, GOOB, "zero"),
            "gr": GTAB32[GROW[:, 0]],
        },
        arch="a5",
        gm=("tab", "t32"),
    ),
    "mscatter": Case(
        [
            ("a", "f32", 16, 16, False),
            ("v", "i32", 16, 16, False),
            ("ix", "i32", 16, 16, False),
            ("io", "i32", 16, 16, False),
            ("id", "i32", 16, 16, False),
            ("ir", "i32", 16, 1, False),
            ("t1", "f32", 16, 16, True),
            ("sk", "f32", 16, 16, True),
            ("ad", "i32", 8, 8, True),
            ("mx", "i32", 8, 8, True),
            ("mn", "i32", 8, 8, True),
            ("rw", "f32", 32, 16, True),
        ],
        "\n".join(
            [
                f"pto.mscatter ins(%a_t, %ix_t : {F16}, {I16}) outs({_mem('s', 't1', 'f32', 16, 16)})",
                f"pto.mscatter ins(%a_t, %io_t : {F16}, {I16}) outs({_mem('s', 'sk', 'f32', 16, 16)}) "
                "{scatterOob = #pto<scatter_oob skip>}",
                *(
                    f"pto.mscatter ins(%v_t, %id_t : {I16}, {I16}) outs({_mem('s', n, 'i32', 8, 8)}) "
                    f"{{scatterAtomicOp = #pto<scatter_atomic_op {m}>}}"
                    for n, m in (("ad", "add"), ("mx", "max"), ("mn", "min"))
                ),
                f"pto.mscatter ins(%a_t, %ir_t : {F16}, {tile('i32', 16, 1)}) outs({_mem('s', 'rw', 'f32', 32, 16)})",
            ]
        ),
        {
            "a": A,
            "v": SVAL,
            "ix": PERM,
            "io": GOOB,
            "id": SDUP,
            "ir": GROW,
            "t1": np.zeros((16, 16), np.float32),
            "sk": np.full((16, 16), 9.0, np.float32),
            "ad": SINIT,
            "mx": SINIT,
            "mn": SINIT,
            "rw": np.zeros((32, 16), np.float32),
        },
        {
            "t1": _scatter_into(np.zeros((16, 16), np.float32), A, PERM, "none"),
            "sk": _scatter_into(np.full((16, 16), 9.0, np.float32), A, GOOB, "none", "skip"),
            "ad": _scatter_into(SINIT, SVAL, SDUP, "add"),
            "mx": _scatter_into(SINIT, SVAL, SDUP, "max"),
            "mn": _scatter_into(SINIT, SVAL, SDUP, "min"),
            "rw": np.zeros((32, 16), np.float32),
        },
        arch="a5",
        gm=("t1", "sk", "ad", "mx", "mn", "rw"),
    ),
    "trandom": Case(
        [("r1", "ui32", 3, 264, True), ("r2", "i32", 2, 16, True)],
        "%k0 = arith.constant 305419896 : i32\n%k1 = arith.constant -1698898192 : i32\n"
        "%q0 = arith.constant -1 : i32\n%q1 = arith.constant -1 : i32\n%q2 = arith.constant 7 : i32\n"
        "%q3 = arith.constant 0 : i32\n"
        f"pto.trandom ins(%k0, %k1, %q0, %q1, %q2, %q3 : i32, i32, i32, i32, i32, i32) outs(%r1_t : {tile('ui32', 3, 264)})\n"
        f"pto.trandom ins(%k0, %k1, %q3, %q3, %q3, %q3 {{rounds = 7 : i32}} : i32, i32, i32, i32, i32, i32) "
        f"outs(%r2_t : {tile('i32', 2, 16)})",
        {},
        {
            "r1": _philox_ref((305419896, 0x9ABCDEF0), [0xFFFFFFFF, 0xFFFFFFFF, 7, 0], 3, 264, 10),  # carries
            "r2": _philox_ref((305419896, 0x9ABCDEF0), [0, 0, 0, 0], 2, 16, 7).view(np.int32),
        },
        arch="a5",
    ),
}
_rw = A5_CASES["mscatter"].expect["rw"]
_rw[GROW[:, 0]] = A
CASES.update(A5_CASES)


def _synced(case: Case, name: str):  # type: ignore[no-untyped-def]
    module = parse_pto(case.text(), f"{name}.pto")
    verify_pto(module)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    return module


def _arrays(case: Case) -> list[np.ndarray]:
    out = []
    for n, dt, r, c, is_out in case.args:
        if is_out and n not in case.inputs:
            fill = np.nan if dt == "f32" else (7 if dt.startswith("u") else -7)
            out.append(np.full((r, c), fill, dtype=NP[dt]))
        else:
            out.append(case.inputs[n].astype(NP[dt]).copy())
    return out


def _bits(x: np.ndarray) -> np.ndarray:
    return x.view(np.uint32) if x.dtype == np.float32 else x


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isa-numerics")


def check_both_engines(case: Case, name: str, build_dir: Path, prefix: str) -> None:
    """Run ``case`` in the interpreter (no races, no problems) and as g++-built C++ on copies of its
    inputs: every output the same bits in both, and equal to its reference."""
    interp_args = _arrays(case)
    run = run_kernel(_synced(case, name), "k", interp_args)
    assert run.races == [], run.race_messages
    assert run.problems == []

    cpp_args = _arrays(case)
    lib = KernelLibrary(build_shared(emit_cpp(_synced(case, name)), build_dir, name=f"{prefix}_{name}"))
    lib.call("k", *cpp_args)

    for (n, _dt, _r, _c, is_out), got_i, got_c in zip(case.args, interp_args, cpp_args, strict=True):
        if not is_out:
            continue
        np.testing.assert_array_equal(_bits(got_i), _bits(got_c), err_msg=f"{name}: output {n} differs")
        assert n in case.expect, f"{name}: no reference for output {n}"
        np.testing.assert_array_equal(got_i, case.expect[n].astype(got_i.dtype), err_msg=f"{name}: {n}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_interpreter_and_cpp_agree(name: str, build_dir: Path) -> None:
    check_both_engines(CASES[name], name, build_dir, "isa")


def test_philox_known_answers() -> None:
    """trandom's generator is Philox-4x32-10: Random123's known-answer vectors."""
    from pypto.device.interpreter.isa_impls import philox4x32

    assert philox4x32(0, (0, 0), 10) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    ones = (1 << 128) - 1
    assert philox4x32(ones, (0xFFFFFFFF, 0xFFFFFFFF), 10) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
    pi = 0x243F6A88 | 0x85A308D3 << 32 | 0x13198A2E << 64 | 0x03707344 << 96
    assert philox4x32(pi, (0xA4093822, 0x299F31D0), 10) == (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)


def test_trem_tmp_matches_fmod_on_both_sides() -> None:
    """trem with a tmp tile computes what trem without one does (the interpreter's rem)."""
    case = CASES["trem_tmp"]
    args = _arrays(case)
    run_kernel(_synced(case, "trem_tmp"), "k", args)
    no_tmp = Case(case.args, f"pto.trem ins(%a_t, %b_t : {F16}, {F16}) outs(%d_t : {F16})", case.inputs)
    ref = _arrays(no_tmp)
    run_kernel(_synced(no_tmp, "trem"), "k", ref)
    np.testing.assert_array_equal(_bits(args[-1]), _bits(ref[-1]))
    assert not np.isnan(args[-1]).any()


GM128 = "memref<128xf32, #pto.address_space<gm>>"
SCRATCH = tile("i8", 1, 256)
INTERP_ONLY = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%ws: memref<1024xi8, #pto.address_space<gm>>, %dst: {GM128}, %src: {GM128}, %p: !pto.ptr<f32>) {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c5 = arith.constant 5 : index
    %s = pto.alloc_tile : {SCRATCH}
    %ses = pto.build_async_session(%s, %ws : {SCRATCH}, memref<1024xi8, #pto.address_space<gm>>) -> !pto.async_session
    %ev = pto.tget_async(%dst, %src, %ses : {GM128}, {GM128}, !pto.async_session) -> !pto.async_event
    %ok = pto.wait_async_event(%ev, %ses : !pto.async_event, !pto.async_session) -> i1
    %x = pto.load_scalar %p[%c1] : !pto.ptr<f32> -> f32
    pto.store_scalar %x, %p[%c0] : !pto.ptr<f32>, f32
    %arr = pto.declare_eventid_array -> !pto.eventid_array<4>
    pto.eventid_array_set %arr[%c1], %c5 : !pto.eventid_array<4>
    %e = pto.eventid_array_get %arr[%c1] : !pto.eventid_array<4>
    %ei = arith.index_cast %e : index to i32
    pto.print ins("event %d", %ei : i32)
    pto.set_ffts %ws : memref<1024xi8, #pto.address_space<gm>>
    return
  }}
}}
"""


def test_interpreter_only_ops_run() -> None:
    """Async DMA completes at once, GM scalars, event-id arrays, print; set_ffts is a no-op."""
    module = parse_pto(INTERP_ONLY, "interp_only.pto")
    verify_pto(module)
    src = np.arange(128, dtype=np.float32)
    dst = np.zeros(128, np.float32)
    p = np.array([1.0, 2.5, 3.0], np.float32)
    run = run_kernel(module, "k", [np.zeros(1024, np.int8), dst, src, p])
    np.testing.assert_array_equal(dst, src)
    assert p.tolist() == [2.5, 2.5, 3.0]
    assert run.prints == ["event 5"]


def test_trap_stops_the_kernel() -> None:
    module = parse_pto("module {\n  func.func @k() {\n    pto.trap\n    return\n  }\n}\n", "trap.pto")
    with pytest.raises(Exception, match="the kernel trapped"):
        run_kernel(module, "k", [])


def test_trap_in_cpp_fails_the_launch(build_dir: Path) -> None:
    from pypto.ptoas.emitc.runner import KernelRuntimeError

    text = "module {\n  func.func @k(%p: !pto.ptr<f32>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {\n    pto.trap\n    return\n  }\n}\n"
    lib = KernelLibrary(build_shared(emit_cpp(parse_pto(text, "trap.pto")), build_dir, name="isa_trap"))
    with pytest.raises(KernelRuntimeError, match="trapped"):
        lib.call("k", np.zeros(4, np.float32))


UNMODELLED = f"""module attributes {{pto.target_arch = "a2a3"}} {{
  func.func @k(%p: !pto.ptr<f32>) attributes {{pto.kernel_kind = #pto.kernel_kind<vector>}} {{
    %k = arith.constant 1 : i32
    %lo = pto.alloc_tile : {I16}
    pto.ttri ins(%k : i32) outs(%lo : {I16})
    %ci = pto.alloc_tile : {tile("i32", 1, 16)}
    pto.tci ins(%k {{descending = true}} : i32) outs(%ci : {tile("i32", 1, 16)})
    %a = pto.alloc_tile : {F16}
    %fp = pto.alloc_tile : {F16}
    %q = pto.alloc_tile : {tile("i8", 16, 16)}
    pto.tquant ins(%a, %fp : {F16}, {F16}) outs(%q : {tile("i8", 16, 16)}) {{quant_type = #pto<quant_type INT8_SYM>}}
    %s = pto.alloc_tile : {tile("f32", 1, 32)}
    %ix = pto.alloc_tile : {tile("ui32", 1, 32)}
    %d = pto.alloc_tile : {tile("f32", 1, 64)}
    pto.tsort32 ins(%s, %ix : {tile("f32", 1, 32)}, {tile("ui32", 1, 32)}) outs(%d : {tile("f32", 1, 64)})
    return
  }}
}}
"""


def test_ptoas_call_shapes_compile_and_run(build_dir: Path) -> None:
    """TTRI<Tile, 0>(d, k), TCI<Tile, int32_t, 1>(d, s), TQUANT<pto::QuantType::...>, TSORT32(d, s, idx) as PTOAS
    emits them; g++ builds them and the launch runs them all."""
    cpp = emit_cpp(_load_text(UNMODELLED))
    assert "TTRI<Tile<TileType::Vec, int32_t, 16, 16," in cpp and ", 0>(" in cpp
    assert "TCI<Tile<TileType::Vec, int32_t, 1, 16," in cpp and ", int32_t, 1>(" in cpp
    assert "TQUANT<pto::QuantType::INT8_SYM>(" in cpp
    assert "TSORT32(" in cpp
    lib = KernelLibrary(build_shared(cpp, build_dir, name="isa_unmodelled"))
    lib.call("k", np.zeros(4, np.float32))


def _load_text(text: str):  # type: ignore[no-untyped-def]
    module = parse_pto(text, "u.pto")
    verify_pto(module)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    return module


def _race_kernel(synced: bool):  # type: ignore[no-untyped-def]
    """tput_async stages through the session's scratch (MTE3); a texpands then overwrites it (V)."""
    text = INTERP_ONLY.replace(
        "    %ok = pto.wait_async_event",
        f"    %c7 = arith.constant 7 : i8\n    pto.texpands ins(%c7 : i8) outs(%s : {SCRATCH})\n    %ok = pto.wait_async_event",
    )
    module = parse_pto(text, "race.pto")
    verify_pto(module)
    if synced:
        run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    return module


def _race_args() -> list[np.ndarray]:
    return [
        np.zeros(1024, np.int8),
        np.zeros(128, np.float32),
        np.arange(128, dtype=np.float32),
        np.ones(3, np.float32),
    ]


def test_async_scratch_takes_part_in_the_race_detector_and_insert_sync() -> None:
    racy = run_kernel(_race_kernel(False), "k", _race_args())
    assert any("tget_async" in m and "texpands" in m for m in racy.race_messages), racy.race_messages
    clean = run_kernel(_race_kernel(True), "k", _race_args())
    assert clean.races == [], clean.race_messages


FIFO = Case(
    [("x", "f32", 16, 16, False), ("y", "f32", 16, 16, True)],
    # one function pushes and pops: no peer pair over a reserved buffer (PTOAS requires one), so a
    # fixed local address and an explicit flag_base
    "%r = arith.constant 0 : i32\n"
    "%p = pto.initialize_l2l_pipe {dir_mask = 1, slot_size = 1024, slot_num = 8, flag_base = 0}(%r : i32) -> !pto.pipe\n"
    f"pto.tpush(%x_t, %p : {F16}, !pto.pipe) {{split = 0}}\n"
    f"%t = pto.declare_tile -> {F16}\n"
    f"pto.tpop(%t, %p : {F16}, !pto.pipe) {{split = 0}}\n"
    "%one = arith.constant 1.0 : f32\n"
    f"pto.tadds ins(%t, %one : {F16}, f32) outs(%y_t : {F16})\n"
    "pto.tfree(%p : !pto.pipe) {split = 0}",
    {"x": A},
    {"y": A + np.float32(1)},
)


def test_frontend_fifo_runs_in_the_interpreter_race_free_after_sync() -> None:
    """initialize_l2l_pipe / tpush / declare_tile / tpop / tfree: the tile goes through the interpreter's channel;
    after insert-sync the pop (MTE2) -> tadds (V) and tload (MTE2) -> push (MTE3) hazards are ordered."""
    args = _arrays(FIFO)
    run = run_kernel(_synced(FIFO, "fifo"), "k", args)
    assert run.races == [], run.race_messages
    np.testing.assert_array_equal(args[1], FIFO.expect["y"])
    racy = run_kernel(parse_pto(FIFO.text(), "fifo_racy.pto"), "k", _arrays(FIFO))
    assert racy.races, "without insert-sync the FIFO's pipes race"


def _taken(k: int, exhausted: bool, width: int) -> list[int]:
    """Pairs :func:`_merged` takes from each of the first ``k`` lists (tmrgsort's executed counts)."""
    v = np.concatenate(MV[:k], axis=1)
    src = np.concatenate([np.full(m.shape[1], j) for j, m in enumerate(MV[:k])])
    used = [0] * 4
    for o in np.argsort(-v[0], kind="stable")[: width // 2]:
        used[src[o]] += 1
        if exhausted and used[src[o]] == MV[src[o]].shape[1]:
            break
    return used


def test_tmrgsort_writes_its_executed_counts_on_both_engines(build_dir: Path) -> None:
    """Format 2 reports the pairs it took from each list: the interpreter into a writable list (a kernel
    argument), pto_cpu.hpp into its MrgSortExecutedNumList (read here through a global the test binds
    it to). The last tmrgsort of the case (3 lists, exhausted) wins."""
    import ctypes
    import re

    case = CASES["tmrgsort_lists"]
    want = _taken(3, True, 160)
    assert sum(want) < 80 and 0 < want[2] <= 16  # exhausted stopped it early, list 2 took part

    text = case.text().replace("func.func @k(", "func.func @k(%ex: vector<4xi16>, ")
    text = text.replace("    %ex = arith.constant dense<0> : vector<4xi16>\n", "")
    module = parse_pto(text, "ex.pto")
    verify_pto(module)
    run_ptoas_pipeline(module, PtoasOptions(insert_sync=True))
    executed = np.full(4, 9, np.int16)
    run_kernel(module, "k", [executed, *_arrays(case)])
    assert executed.tolist() == want

    cpp, n = re.subn(
        r"pto::MrgSortExecutedNumList (v\d+) = pto::MrgSortExecutedNumList\{[^}]*\};",
        r"pto::MrgSortExecutedNumList& \1 = g_executed;",
        emit_cpp(_synced(case, "tmrgsort_ex")),
    )
    assert n == 1, "the executed list is no longer emitted as one local"
    cpp = cpp.replace(
        "__global__ AICORE void k(",
        'static pto::MrgSortExecutedNumList g_executed;\nextern "C" uint64_t executed_counts() {\n'
        "    uint64_t r = 0;\n    for (int i = 0; i < 4; ++i) r |= uint64_t(g_executed.counts[i]) << (16 * i);\n"
        "    return r;\n}\n__global__ AICORE void k(",
        1,
    )
    path = build_shared(cpp, build_dir, name="isa_tmrgsort_ex")
    KernelLibrary(path).call("k", *_arrays(case))
    fn = ctypes.CDLL(str(path)).executed_counts
    fn.restype = ctypes.c_uint64
    packed = fn()
    assert [(packed >> (16 * i)) & 0xFFFF for i in range(4)] == want


def test_sort_and_gatherb_are_priced_per_repeat_of_their_intrinsic() -> None:
    """a2a3 CCE intrinsic costs (head + slope * repeats, tail 0): vbitsort 6/2 a 32-value block, vmrgsort4
    20/78 a group of 4 lists (format 1) or one merge (format 2), vgatherb 6/2 per 256 B of dst."""
    got: dict[str, list[int]] = {}
    for name in ("tsort32_tmrgsort", "tmrgsort_lists", "tgatherb"):
        run = run_kernel(_synced(CASES[name], name), "k", _arrays(CASES[name]))
        for r in run.records:
            if r.instr in ("TSORT32", "TMRGSORT", "TGATHERB"):
                got.setdefault(f"{name}:{r.instr}", []).append(r.end - r.start)
    assert got == {
        "tsort32_tmrgsort:TSORT32": [6 + 2 * 4],  # 128 values: 4 blocks of 32
        "tsort32_tmrgsort:TMRGSORT": [20 + 78 * 1],  # 256 elements, blockLen 64: one group of 4 lists
        "tmrgsort_lists:TSORT32": [6 + 2 * 1] * 3,
        "tmrgsort_lists:TMRGSORT": [20 + 78] * 2,  # format 2: one merge each
        "tgatherb:TGATHERB": [6 + 2 * 4],  # 16x16 f32 dst: 1024 B = 4 repeats
    }, got


@pytest.mark.parametrize(
    ("name", "instr", "pipe", "elems", "cycles"),
    [
        ("thistogram", "THISTOGRAM", "VECTOR", 8 * 32, lambda n: 2 + n // 8),
        ("tpack", "TPACK", "VECTOR", 16 * 16, lambda n: 2 + n // 32),
        ("mgather", "MGATHER", "MTE2", 16 * 16, lambda n: 3 + 4 * n),
        ("mscatter", "MSCATTER", "MTE3", 16 * 16, lambda n: 3 + 4 * n),
        ("trandom", "TRANDOM", "VECTOR", 3 * 264, lambda n: 2 + 90 * n // 256),
    ],
)
def test_a5_only_ops_are_timed_by_their_a2a3_fallback_rows(name: str, instr: str, pipe: str, elems: int, cycles) -> None:  # type: ignore[no-untyped-def]
    """Each A5-only op costs its documented ``npu.fallback op = ...`` row of the a2a3 target (not the
    pipe's generic row), on its pipe."""
    run = run_kernel(_synced(CASES[name], name), "k", _arrays(CASES[name]))
    recs = [r for r in run.records if r.instr == instr]
    assert recs and all(r.pipe == pipe for r in recs), [(r.instr, r.pipe) for r in recs]
    assert recs[0].end - recs[0].start == cycles(elems), (recs[0].detail, recs[0].end - recs[0].start)


def test_gm_gather_scatter_call_shapes_are_ptoas() -> None:
    """PTOAS's MGATHER / MSCATTER template forms: the out-of-bounds and atomic modes only when not default."""
    import re

    g = emit_cpp(_synced(CASES["mgather"], "mgather"))
    s = emit_cpp(_synced(CASES["mscatter"], "mscatter"))
    assert re.search(r"\bMGATHER\(v\d+, v\d+, v\d+\);", g), g
    for m in ("Clamp", "Wrap", "Zero"):
        assert f"MGATHER<pto::GatherOOB::{m}>(" in g
    assert re.search(r"\bMSCATTER\(v\d+, v\d+, v\d+\);", s), s
    assert "MSCATTER<pto::ScatterAtomicOp::None, pto::ScatterOOB::Skip>(" in s
    for a in ("Add", "Max", "Min"):
        assert f"MSCATTER<pto::ScatterAtomicOp::{a}>(" in s
