"""Generated ``pl`` programs for the fuzzer (issue 16, "Fuzzing"): the program model, its DSL
source text and its torch reference, and the hypothesis strategy that draws one.

A :class:`Kernel` is one ``@pl.program`` whose Orchestration function holds one
``pl.at(CORE_GROUP)`` scope. The scope walks the rows of the inputs in ``tiles`` row tiles
(straight-line for one tile, else ``pl.range`` or ``pl.pipeline(n, stage=2)``). Per row tile it
starts from a vector load of ``a`` or, for a cube / mixed kernel, from ``a @ w`` on the cube unit
(Mat -> Left / Right -> Acc); a mixed kernel moves the product to Vec and continues there. Then
a chain of :class:`Step`: element-wise (binary, unary, with a scalar), row reductions
(``row_sum`` / ``row_max`` broadcast back with ``row_expand_*``) and column reductions
(``col_sum`` / ``col_max`` broadcast with ``col_expand_mul``). Every step reads the previous value
(one chain, nothing dead). A magnitude bound per value keeps the numbers finite in fp16/bf16.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from hypothesis import strategies as st

DTYPES = {"FP32": torch.float32, "FP16": torch.float16, "BF16": torch.bfloat16}
ELEM_BYTES = {"FP32": 4, "FP16": 2, "BF16": 2}
BINARY = {
    "add": lambda x, y: x + y,
    "sub": lambda x, y: x - y,
    "mul": lambda x, y: x * y,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
}
UNARY = {"exp": torch.exp, "relu": torch.relu, "neg": torch.neg}
SCALAR = {"add": lambda x, s: x + s, "mul": lambda x, s: x * s}
SCALARS = (0.5, 2.0, -1.5)
ROW_REDUCE = {"row_sum": lambda x: x.sum(dim=1, keepdim=True), "row_max": lambda x: x.amax(dim=1, keepdim=True)}
ROW_EXPAND = {
    "row_expand_sub": lambda x, r: x - r,
    "row_expand_mul": lambda x, r: x * r,
}
COL_REDUCE = {"col_sum": lambda x: x.sum(dim=0, keepdim=True), "col_max": lambda x: x.amax(dim=0, keepdim=True)}
MAX_BOUND = 256.0  # |value| stays below this: finite in fp16, a sum error well inside the tolerance
TILE_BYTES = 16384  # one Vec tile; a chain of eight fits in UB with room for scratch


@dataclass(frozen=True)
class Step:
    """One chain step over the earlier values (index 0 is the start value): ``kind`` is
    ``binary`` / ``unary`` / ``scalar`` / ``row`` / ``col``; ``op`` the ``pl`` op (``row``/``col``:
    ``"reduce,expand"``); ``args`` value indices (the first is always the previous value);
    ``scalar`` the Python constant of a ``scalar`` step."""

    kind: str
    op: str
    args: tuple[int, ...]
    scalar: float = 0.0


@dataclass(frozen=True)
class Kernel:
    """One generated program (see the module docstring)."""

    start: str  # "vector" | "cube" | "mixed" | "premix"
    dtype: str  # the dtype of a, b (vector, premix) or of a, w (cube / mixed: the chain is then FP32)
    tile_rows: int
    cols: int
    k: int  # the contraction size of a cube / mixed kernel
    tiles: int
    loop: str  # "none" | "range" | "pipeline"
    steps: tuple[Step, ...] = field(default_factory=tuple)

    @property
    def rows(self) -> int:
        return self.tile_rows * self.tiles

    @property
    def chain_dtype(self) -> str:
        return self.dtype if self.start in ("vector", "premix") else "FP32"

    @property
    def chain_cols(self) -> int:
        """The width of the chain's tiles: ``k`` for premix (the chain feeds the matmul), else ``cols``."""
        return self.k if self.start == "premix" else self.cols

    def params(self) -> dict[str, tuple[list[int], str]]:
        """Parameter name -> (shape, dtype), in order; ``out`` last."""
        r, c, k, dt, ct = self.rows, self.cols, self.k, self.dtype, self.chain_dtype
        if self.start == "vector":
            ps = {"a": ([r, c], dt), "b": ([r, c], dt)}
        elif self.start == "cube":
            ps = {"a": ([r, k], dt), "w": ([k, c], dt)}
        elif self.start == "premix":
            return {"a": ([r, k], dt), "b": ([r, k], dt), "w": ([k, c], dt), "out": ([r, c], "FP32")}
        else:
            ps = {"a": ([r, k], dt), "w": ([k, c], dt), "b": ([r, c], "FP32")}
        return ps | {"out": ([r, c], ct)}

    # ---- the DSL text ----

    def source(self) -> str:
        def ty(name: str) -> str:
            shape, dt = self.params()[name]
            t = f"pl.Tensor[[{shape[0]}, {shape[1]}], pl.{dt}]"
            return f"pl.Out[{t}]" if name == "out" else t

        sig = ", ".join(f"{n}: {ty(n)}" for n in self.params())
        ret = ty("out")[len("pl.Out[") : -1]
        lines = [
            "import pypto.language as pl",
            "",
            "",
            "@pl.program",
            "class Fuzz:",
            "    @pl.function(type=pl.FunctionType.Orchestration)",
            f"    def f(self, {sig}) -> {ret}:",
            "        with pl.at(level=pl.Level.CORE_GROUP):",
        ]
        if self.loop == "none":
            pad, row = " " * 12, "0"
        else:
            head = f"pl.range({self.tiles})" if self.loop == "range" else f"pl.pipeline({self.tiles}, stage=2)"
            lines.append(f"            for i in {head}:")
            pad, row = " " * 16, f"i * {self.tile_rows}"
        tr, c, k = self.tile_rows, self.cols, self.k
        body: list[str] = []
        if self.start in ("vector", "premix"):
            body.append(f"v0 = pl.load(a, [{row}, 0], [{tr}, {self.chain_cols}])")
        else:
            body += [
                f"xa = pl.load(a, [{row}, 0], [{tr}, {k}], target_memory=pl.Mem.Mat)",
                f"xw = pl.load(w, [0, 0], [{k}, {c}], target_memory=pl.Mem.Mat)",
                "acc = pl.matmul(pl.move(xa, target_memory=pl.Mem.Left), pl.move(xw, target_memory=pl.Mem.Right))",
            ]
            body.append("v0 = pl.move(acc, target_memory=pl.Mem.Vec)" if self.start == "mixed" else "v0 = acc")
        if any(-1 in s.args for s in self.steps):
            body.append(f"vb = pl.load(b, [{row}, 0], [{tr}, {self.chain_cols}])")
        for i, s in enumerate(self.steps, start=1):
            body += self._step_lines(i, s)
        last = f"v{len(self.steps)}"
        if self.start == "premix":  # vector -> cube: the chain's result is the matmul's left operand
            body += [
                f"xa = pl.move({last}, target_memory=pl.Mem.Mat)",
                f"xw = pl.load(w, [0, 0], [{k}, {c}], target_memory=pl.Mem.Mat)",
                "acc = pl.matmul(pl.move(xa, target_memory=pl.Mem.Left), pl.move(xw, target_memory=pl.Mem.Right))",
            ]
            last = "acc"
        body.append(f"pl.store({last}, [{row}, 0], out)")
        lines += [pad + line for line in body]
        lines += ["        return out", ""]
        return "\n".join(lines)

    def _name(self, j: int) -> str:
        """Value ``j`` of the chain; ``-1`` is the tile of ``b``."""
        return "vb" if j < 0 else f"v{j}"

    def _step_lines(self, i: int, s: Step) -> list[str]:
        x = self._name(s.args[0])
        if s.kind == "binary":
            return [f"v{i} = pl.{s.op}({x}, {self._name(s.args[1])})"]
        if s.kind == "unary":
            return [f"v{i} = pl.{s.op}({x})"]
        if s.kind == "scalar":
            return [f"v{i} = pl.{s.op}({x}, {s.scalar!r})"]
        red, expand = s.op.split(",")
        y = self._name(s.args[1])
        if s.kind == "row":
            return [
                f"s{i} = pl.create_tile([{self.tile_rows}, {self.chain_cols}], dtype=pl.{self.chain_dtype},"
                " target_memory=pl.Mem.Vec)",
                f"r{i} = pl.{red}({x}, s{i})",
                f"v{i} = pl.{expand}({y}, r{i})",
            ]
        return [f"r{i} = pl.{red}({x})", f"v{i} = pl.{expand}({y}, r{i})"]

    # ---- the torch reference ----

    def inputs(self, seed: int = 0) -> dict[str, torch.Tensor]:
        """Inputs in [-1, 1) (exact in every dtype: multiples of 1/64) and a zero ``out``."""
        gen = torch.Generator().manual_seed(seed)
        out: dict[str, torch.Tensor] = {}
        for name, (shape, dt) in self.params().items():
            if name == "out":
                out[name] = torch.zeros(shape, dtype=DTYPES[dt])
            else:
                q = torch.randint(-64, 64, shape, generator=gen).to(torch.float32) / 64
                out[name] = q.to(DTYPES[dt])
        return out

    def reference(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """``out`` as the kernel computes it: per row tile, each op rounded to the chain dtype."""
        ct = DTYPES[self.chain_dtype]
        tiles = []
        for t in range(self.tiles):
            rows = slice(t * self.tile_rows, (t + 1) * self.tile_rows)
            if self.start in ("vector", "premix"):
                v0 = inputs["a"][rows]
            else:
                v0 = (inputs["a"][rows].to(torch.float32) @ inputs["w"].to(torch.float32)).to(ct)
            vb = inputs["b"][rows] if "b" in inputs else None
            values = [v0]
            for s in self.steps:
                args = [vb if j < 0 else values[j] for j in s.args]
                values.append(_apply(s, args).to(ct))
            if self.start == "premix":
                values.append(values[-1].to(torch.float32) @ inputs["w"].to(torch.float32))
            tiles.append(values[-1])
        return torch.cat(tiles)

    def tolerance(self) -> float:
        """rtol and atol of the comparisons: the dtype's, with room for the reductions."""
        return {"FP32": 1e-3, "FP16": 1e-2, "BF16": 4e-2}[self.chain_dtype]


def _apply(s: Step, args: list[torch.Tensor]) -> torch.Tensor:
    if s.kind == "binary":
        return BINARY[s.op](*args)
    if s.kind == "unary":
        return UNARY[s.op](args[0])
    if s.kind == "scalar":
        return SCALAR[s.op](args[0], s.scalar)
    red, expand = s.op.split(",")
    if s.kind == "row":
        return ROW_EXPAND[expand](args[1], ROW_REDUCE[red](args[0]))
    return args[1] * COL_REDUCE[red](args[0])


# ---- the strategy ----


def _bound(s: Step, bounds: list[float], k: Kernel) -> float:
    """An upper bound of ``|value|`` after step ``s`` (``bounds[-1]`` is ``b``'s)."""
    b = [bounds[j] for j in s.args]
    if s.kind == "binary":
        return b[0] * b[1] if s.op == "mul" else b[0] + b[1] if s.op in ("add", "sub") else max(b)
    if s.kind == "unary":
        return math.exp(b[0]) if s.op == "exp" else b[0]
    if s.kind == "scalar":
        return b[0] * abs(s.scalar) if s.op == "mul" else b[0] + abs(s.scalar)
    red, expand = s.op.split(",")
    n = k.chain_cols if s.kind == "row" else k.tile_rows
    r = b[0] * n if red.endswith("sum") else b[0]
    return b[1] * r if expand.endswith("mul") else b[1] + r


STARTS = ("vector", "vector", "cube", "mixed")
"""The default test's mix (its derandomized sequence depends on it); ``premix`` has its own test."""


@st.composite
def kernels(draw: st.DrawFn, starts: tuple[str, ...] = STARTS) -> Kernel:
    """A :class:`Kernel` that fits on chip and stays finite, starting as one of ``starts``."""
    start = draw(st.sampled_from(list(starts)))
    dtype = draw(st.sampled_from(sorted(DTYPES)))
    cols = draw(st.sampled_from([16, 32, 64, 128]))
    chain_bytes = ELEM_BYTES[dtype if start == "vector" else "FP32"]
    rows_ok = [r for r in (8, 16, 32, 64) if r * cols * chain_bytes <= TILE_BYTES and (start == "vector" or r >= 16)]
    tile_rows = draw(st.sampled_from(rows_ok))
    k = draw(st.sampled_from([16, 32, 64])) if start != "vector" else 0
    tiles = draw(st.integers(1, 4))
    loop = "none" if tiles == 1 else draw(st.sampled_from(["range", "pipeline"]))
    kernel = Kernel(start, dtype, tile_rows, cols, k, tiles, loop)
    start_bound = float(k) if start in ("cube", "mixed") else 1.0
    bounds = [start_bound]
    b_bound = 1.0
    has_b = start != "cube"
    steps: list[Step] = []
    n_steps = 0 if start == "cube" else draw(st.integers(1, 5))
    for i in range(n_steps):
        last = i
        others = list(range(i + 1)) + ([-1] if has_b else [])
        kind = draw(st.sampled_from(["binary", "unary", "scalar", "row", "col"]))
        if kind == "binary":
            step = Step(kind, draw(st.sampled_from(sorted(BINARY))), (last, draw(st.sampled_from(others))))
        elif kind == "unary":
            step = Step(kind, draw(st.sampled_from(sorted(UNARY))), (last,))
        elif kind == "scalar":
            step = Step(kind, draw(st.sampled_from(sorted(SCALAR))), (last,), draw(st.sampled_from(SCALARS)))
        elif kind == "row":
            op = f"{draw(st.sampled_from(sorted(ROW_REDUCE)))},{draw(st.sampled_from(sorted(ROW_EXPAND)))}"
            step = Step(kind, op, (last, draw(st.sampled_from(others))))
        else:
            step = Step(kind, f"{draw(st.sampled_from(sorted(COL_REDUCE)))},col_expand_mul", (last, draw(st.sampled_from(others))))
        bound = _bound(step, [*bounds, b_bound], kernel)
        if bound > MAX_BOUND:  # would leave the finite range: a unary relu keeps the chain going
            step, bound = Step("unary", "relu", (last,)), bounds[last]
        steps.append(step)
        bounds.append(bound)
    return Kernel(start, dtype, tile_rows, cols, k, tiles, loop, tuple(steps))
