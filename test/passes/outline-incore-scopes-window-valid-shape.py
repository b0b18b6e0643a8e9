# RUN: pypto-opt %s -p outline-incore-scopes --emit mlir | filecheck %s

# A window with a run-time valid shape made in the Orchestration function and read in a CORE_GROUP
# scope: the kernel reads it through a slice of the whole window with the same valid shape, so the
# extent n is a kernel parameter and the window (not its source) stays the task's argument. Without
# it the kernel read all 16 rows of the window, the torch reference n.

import pypto.language as pl


@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, a: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
        s = pl.slice(a, [16, 32], [8, 0], valid_shape=[n, 32])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            out[:] = pl.exp(s)
        return out


# CHECK-LABEL: func.func @rows(
# CHECK-SAME:    %[[S:s]]: !pl.tensor<16x32xf32>, %[[N:n]]: index,
# CHECK:         %[[C32:.*]] = arith.constant 32 : index
# CHECK:         %[[C0:.*]] = arith.constant 0 : index
# CHECK:         %[[C0B:.*]] = arith.constant 0 : index
# CHECK:         %[[V:.*]] = "pl.tensor.slice"(%[[S]], %[[C0]], %[[C0B]], %[[N]], %[[C32]]) <{shape = array<i64: 16, 32>, operandSegmentSizes = array<i32: 1, 2, 2, 0>}>
# CHECK:         "pl.tensor.exp"(%[[V]])
# CHECK-LABEL: func.func @f(
# CHECK:         %[[W:.*]] = "pl.tensor.slice"(%a, %{{.*}}, %{{.*}}, %[[NF:n_1]], %{{.*}})
# CHECK:         func.call @rows(%[[W]], %[[NF]], %{{.*}})
