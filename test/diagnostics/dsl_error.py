# RUN: not pypto-opt %s 2>&1 | filecheck %s
# RUN: pypto-opt --verify-diagnostics %s

# A mistake in a DSL file given to pypto-opt is one located diagnostic: the
# file, line and column, the source line and a caret; exit 1, no traceback.

import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        b: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.exp(undefined_name)  # noqa: F821  expected-error {{undefined_name}}
        return b


# CHECK: dsl_error.py:14:{{[0-9]+}}: error: {{.*}}undefined_name
# CHECK-NEXT: 14 |         b: pl.Tensor[[16, 16], pl.FP32] = pl.tensor.exp(undefined_name)
# CHECK-NEXT: |{{ +}}^
# CHECK-NOT: Traceback
