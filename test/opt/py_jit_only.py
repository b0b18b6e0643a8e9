# RUN: not pypto-opt %s 2>&1 | filecheck %s

# A .py input must hold one @pl.program class or one @pl.function; a file with
# only a @pl.jit kernel is a user error located at the kernel's decorator
# (exit 1), not an internal error.

# CHECK:      py_jit_only.py:[[# @LINE + 8]]:2: error: a pl file needs exactly one @pl.program class or one @pl.function; a @pl.jit kernel is not a program until it is specialized on sample arguments
# CHECK-NEXT: @pl.jit
# CHECK:      hint: call the kernel
# CHECK-NOT:  internal error

import pypto.language as pl


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]) -> pl.Tensor:
    out = pl.add(a, b)
    return out
