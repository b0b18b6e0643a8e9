# RUN: not pypto-opt %s -p convert-tensor-to-tile-ops 2>&1 | filecheck %s

# A matmul result read by another matmul on tensors: the cube reads it back only through a narrowing cast
# folded into its write-back. The error names the tensor as written and says what to write (it named the
# converted 'x__tile' and hinted at pl.move, which a tensor does not take).

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def chain(self, a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        x = pl.matmul(a, b)
        c = pl.assemble(c, pl.matmul(x, b), [0, 0])
        return c


# CHECK: convert-tensor-to-tile-ops-acc-to-mat.py:16:28: error: pl.tensor.matmul: operand 'x' is a matmul result (pl.Mem.Acc); on tensors a matmul reads another's result only narrowed to pl.FP16 / pl.BF16 by the cube's write-back
# CHECK: hint: pl.cast(x, pl.BF16, mode="rint") before this matmul, or out_dtype=pl.BF16 on the matmul making it
