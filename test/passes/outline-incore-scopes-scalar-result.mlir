// RUN: not pypto-opt %s -p outline-incore-scopes 2>&1 | filecheck %s

// A scalar computed inside a CORE_GROUP scope and used after it: the outlined
// kernel's call is a task whose results are the tensors it writes, so the
// scalar cannot reach the code after the scope. A located error at the value's
// definition, naming it (the run used to fail: "argument 0 is a scalar (index),
// got an array", or a TypeError comparing a DeviceBuffer with an int).

builtin.module @scalar_prog {
  func.func @orch(%a: !pl.tensor<128x128xf32>, %out: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> attributes {pl.func_type = #pl<func_type Orchestration>} {
    %k, %r = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
      %c0 = arith.constant 0 : index
      %two = arith.constant 2 : index loc("k.py":6:13)
      %e = "pl.tensor.exp"(%a) : (!pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32> loc("k.py":7:13)
      %w = "pl.tensor.assemble"(%out, %e, %c0, %c0) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32> loc("k.py":7:9)
      "pl.yield"(%two, %w) : (index, !pl.tensor<128x128xf32>) -> ()
    }) : () -> (index, !pl.tensor<128x128xf32>) loc("k.py":5:5)
    %r2 = "pl.at"() <{level = #pl<level CORE_GROUP>}> ({
      %e2 = "pl.tensor.exp"(%a) : (!pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
      %w2 = "pl.tensor.assemble"(%r, %e2, %k, %k) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32>
      "pl.yield"(%w2) : (!pl.tensor<128x128xf32>) -> ()
    }) : () -> !pl.tensor<128x128xf32>
    func.return %r2 : !pl.tensor<128x128xf32>
  }
}

// CHECK: k.py:6:13: error: 'k' is a pl.Scalar[pl.INDEX] computed inside the pl.at(level=pl.Level.CORE_GROUP) scope and used after it: a kernel gives back only the tensors it writes
// CHECK: hint: compute 'k' before the scope (a scalar from outside is passed in), or write it into a tensor
