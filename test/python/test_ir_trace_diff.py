"""pypto-ir-trace diff model: line diff, replacement alignment, char emphasis, folding; function extraction."""

from __future__ import annotations

import random

from pypto.tools.ir_trace.diff import apply_ops, char_spans, diff_lines, fold, mlir_op_name, py_op_name
from pypto.tools.ir_trace.functions import mlir_functions, python_functions, short_labels


def rows(a: list[str], b: list[str]) -> list[tuple[str, int | None, int | None]]:
    return apply_ops(diff_lines(a, b).ops, a, b)


def test_identical_and_counts() -> None:
    a = ["x", "y", "z"]
    d = diff_lines(a, a)
    assert d.ops == [[0, 3]] and not d.changed
    d = diff_lines(a, ["x", "new", "y"])
    assert (d.inserted, d.deleted) == (1, 1)
    assert rows(a, ["x", "new", "y"]) == [("eq", 0, 0), ("ins", None, 1), ("eq", 1, 2), ("del", 2, None)]


def test_indentation_only_change_stays_a_replacement_row() -> None:
    a = ["def f():", "    x = pl.add(a, b)", "    return x"]
    b = ["def f():", "    with pl.at():", "        x = pl.add(a, b)", "    return x"]
    d = diff_lines(a, b)
    assert apply_ops(d.ops, a, b) == [("eq", 0, 0), ("ins", None, 1), ("rep", 1, 2), ("eq", 2, 3)]
    rep = [op for op in d.ops if op[0] == 3][0]
    assert rep[1] == [0, 4] and rep[2] == [0, 8]  # only the leading whitespace is emphasised


def test_calls_aligned_by_qualified_op_name() -> None:
    a = ["  a1 = pl.tensor.add(x, y)", "  e1 = pl.tensor.exp(a1)"]
    b = [
        "  t0 = pl.tile.load(x)",
        "  a2: T = pl.tensor.add(t0, y)",
        "  m = pl.tile.mul(a2, a2)",
        "  e2 = pl.tensor.exp(m)",
    ]
    assert apply_ops(diff_lines(a, b).ops, a, b) == [
        ("ins", None, 0),
        ("rep", 0, 1),
        ("ins", None, 2),
        ("rep", 1, 3),
    ]


def test_op_names() -> None:
    assert py_op_name("    t: pl.Tile[[16], pl.TileView(a=1)] = pl.tile.load(x, [0])") == "pl.tile.load"
    assert py_op_name("    return self.kernel(a)") == "self.kernel"
    assert py_op_name("    for i in pl.range(4):") is None
    assert py_op_name("    x = y") is None
    assert mlir_op_name('    %0 = "pl.tensor.add"(%a, %b) : (f32, f32) -> f32') == "pl.tensor.add"
    assert mlir_op_name("    func.return %1 : f32") == "func.return"
    assert mlir_op_name("  }") is None


def test_char_spans_by_token() -> None:
    sa, sb = char_spans("x = pl.add(a, b)", "x = pl.add(a__ssa_v0, b)")
    assert sa == [11, 12] and sb == [11, 20]
    assert char_spans("same", "same") == ([], [])


def test_fold_keeps_context() -> None:
    ops = [[0, 10], [2, 1], [0, 10]]
    assert fold(ops, 3) == [("fold", 0, 7), ("show", 7, 14), ("fold", 14, 21)]
    assert fold(ops, 0) == [("fold", 0, 10), ("show", 10, 11), ("fold", 11, 21)]
    assert fold(ops, 100) == [("show", 0, 21)]
    assert fold([[0, 5], [1, 1], [0, 4], [2, 1], [0, 5]], 2) == [("fold", 0, 3), ("show", 3, 13), ("fold", 13, 16)]
    assert fold([[0, 3], [3, [0, 1], [0, 1]], [0, 3]], 1) == [("fold", 0, 2), ("show", 2, 5), ("fold", 5, 7)]
    assert fold([[0, 4]], 3) == [("fold", 0, 4)]  # a no-op diff folds whole


def test_random_diffs_replay_exactly() -> None:
    rng = random.Random(7)
    vocab = [f"line {k}" for k in range(12)] + ["    return x", "", "x = pl.add(a, b)"]
    for _ in range(300):
        a = [rng.choice(vocab) for _ in range(rng.randrange(0, 30))]
        b = list(a)
        for _ in range(rng.randrange(0, 6)):
            op = rng.randrange(3)
            if op == 0 and b:
                del b[rng.randrange(len(b))]
            elif op == 1:
                b.insert(rng.randrange(len(b) + 1), rng.choice(vocab))
            elif b:
                k = rng.randrange(len(b))
                b[k] = "  " + b[k]
        d = diff_lines(a, b)
        got = apply_ops(d.ops, a, b)  # covers both sides exactly, in order
        assert sum(1 for r in got if r[0] in ("ins", "rep")) == d.inserted
        assert sum(1 for r in got if r[0] in ("del", "rep")) == d.deleted
        assert all(a[i] == b[j] for k, i, j in got if k == "eq")
        assert d.changed == (a != b)


def test_large_diff_is_fast() -> None:
    import time

    a = [f"    v{k} = pl.tile.add(v{k - 1}, a)" for k in range(5000)]
    b = list(a)
    b[100] = b[100].replace("add", "mul")
    b.insert(2500, "    extra = pl.tile.exp(v1)")
    start = time.perf_counter()
    d = diff_lines(a, b)
    assert time.perf_counter() - start < 2.0
    assert (d.inserted, d.deleted) == (2, 1)


PY = """# pypto.program: p
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a):
        return a

    def main(self, a):
        return self.k(a)

def free(x):
    return x
"""


def test_python_functions() -> None:
    fs = python_functions(PY)
    assert fs is not None
    assert [(f.key, f.start, f.end) for f in fs] == [("P.k", 5, 8), ("P.main", 9, 11), ("free", 12, 14)]
    assert python_functions("def f(:\n") is None
    assert python_functions("def f():\n    pass\ndef f():\n    pass\n") is None  # ambiguous keys


MLIR = """builtin.module @prog {
  func.func @add(%a: f32) -> f32 attributes {pl.func_type = #pl<func_type InCore>} {
    %0 = "pl.tensor.add"(%a, %a) {s = "}"} : (f32, f32) -> f32
    func.return %0 : f32
  }
  func.func private @decl(f32) -> f32
  func.func @main(%a: f32) -> f32 {
    func.return %a : f32
  }
}
"""


def test_mlir_functions() -> None:
    fs = mlir_functions(MLIR)
    assert fs is not None
    assert [(f.key, f.start, f.end) for f in fs] == [("@add", 1, 5), ("@decl", 5, 6), ("@main", 6, 9)]
    assert mlir_functions("func.func @f() {\n") is None
    two = "module @a {\n  func.func @f() {\n  }\n}\nmodule @b {\n  func.func @f() {\n  }\n}\n"
    assert [f.key for f in mlir_functions(two) or []] == ["@a::@f", "@b::@f"]


def test_short_labels() -> None:
    assert short_labels(["P.k", "P.main", "Q.k"], "py") == {"P.k": "P.k", "Q.k": "Q.k", "P.main": "main"}
    assert short_labels(["@a::@f", "@g"], "mlir") == {"@a::@f": "@f", "@g": "@g"}
