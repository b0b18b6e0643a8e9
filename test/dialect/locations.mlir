// RUN: pypto-opt --print-debuginfo %s | filecheck %s
// RUN: pypto-opt --print-debuginfo %s | pypto-opt --print-debuginfo | filecheck %s
// RUN: not pypto-opt %s.missing 2>&1 | filecheck %s --check-prefix=MISSING

// Like mlir-opt, ops and block arguments without loc(...) get the location of
// their position in the input; an explicit loc(...) is kept.

// CHECK: func.func @f(%a: !pl.tensor<16x16xf32> loc("{{.*}}locations.mlir":[[# @LINE + 8]]:16))
// CHECK: %0 = "pl.tensor.exp"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> loc("{{.*}}locations.mlir":[[# @LINE + 8]]:5)
// CHECK: %1 = "pl.tensor.neg"(%0) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> loc("kernel.py":3:5)
// CHECK: func.return loc("{{.*}}locations.mlir":[[# @LINE + 8]]:5)

// MISSING: error: could not open input file '{{.*}}locations.mlir.missing': No such file or directory

builtin.module {
  func.func @f(%a: !pl.tensor<16x16xf32>) {
    %0 = "pl.tensor.exp"(%a) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    %1 = "pl.tensor.neg"(%0) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> loc("kernel.py":3:5)
    func.return
  }
}
