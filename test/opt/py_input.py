# RUN: pypto-opt %s | filecheck %s --check-prefix=PY
# RUN: pypto-opt %s --emit=py | filecheck %s --check-prefix=PY
# RUN: pypto-opt %s --emit=mlir | filecheck %s --check-prefix=MLIR
# RUN: pypto-opt %s --emit=mlir --print-debuginfo | filecheck %s --check-prefix=LOC
# RUN: pypto-opt %s --emit=mlir | pypto-opt --emit=py | filecheck %s --check-prefix=PY

# A pl DSL file is accepted as input (parsed by the front end); the output is
# DSL text by default for .py input, MLIR with --emit=mlir.

import pypto.language as pl


@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
    def add(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(out, pl.tensor.add(a, b), [0, 0])
        return out


# PY:      @pl.program
# PY-NEXT: class K:
# PY-NEXT:     @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP, role=pl.Role.Orchestrator)
# PY-NEXT:     def add(self, a: pl.Tensor[[128, 128], pl.FP32], b: pl.Tensor[[128, 128], pl.FP32], out: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
# PY-NEXT:         with pl.at(level=pl.Level.CORE_GROUP):
# PY-NEXT:             out: pl.Tensor[[128, 128], pl.FP32] = pl.tensor.assemble(out, pl.tensor.add(a, b), [0, 0])
# PY-NEXT:         return out

# MLIR:      builtin.module @K {
# MLIR-NEXT:   func.func @add(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x128xf32>, %out: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
# MLIR-NEXT:     %out_1 = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
# MLIR:            "pl.tensor.add"(%a, %b)
# MLIR:            "pl.yield"
# MLIR:          func.return %out_1

# Ops keep the location of their DSL source.
# LOC: "pl.tensor.add"(%a, %b) {{.*}} loc("{{.*}}py_input.py":18:75)
