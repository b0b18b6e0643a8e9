// RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s

// A tensor the scope makes itself and yields to a later scope (upstream's
// qwen3 MLP: gate_acc from one pl.at, read by the next) becomes an Out
// parameter: the parent creates it (pl.tensor.create, before the call), the
// body assembles the value into it and returns that parameter.

builtin.module @local_out {
  func.func @f(%x: !pl.tensor<16x128xf32>, %out: !pl.tensor<16x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<16x128xf32> {
    %g = "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "gate"}> ({
      %e = "pl.tensor.exp"(%x) : (!pl.tensor<16x128xf32>) -> !pl.tensor<16x128xf32> loc("mlp.py":5:17)
      "pl.yield"(%e) : (!pl.tensor<16x128xf32>) -> ()
    }) : () -> !pl.tensor<16x128xf32> loc("mlp.py":4:5)
    "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "use"}> ({
      %c0 = arith.constant 0 : index
      %m = "pl.tensor.mul"(%g, %x) : (!pl.tensor<16x128xf32>, !pl.tensor<16x128xf32>) -> !pl.tensor<16x128xf32> loc("mlp.py":7:17)
      %o = "pl.tensor.assemble"(%out, %m, %c0, %c0) : (!pl.tensor<16x128xf32>, !pl.tensor<16x128xf32>, index, index) -> !pl.tensor<16x128xf32> loc("mlp.py":8:13)
      "pl.yield"() : () -> ()
    }) : () -> () loc("mlp.py":6:5)
    func.return %out : !pl.tensor<16x128xf32>
  }
}

// CHECK-LABEL: func.func @gate(%x: !pl.tensor<16x128xf32>, %e_out: !pl.tensor<16x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<16x128xf32>
// CHECK:         %e = "pl.tensor.exp"(%x)
// CHECK:         %{{.*}} = "pl.tensor.assemble"(%e_out, %e, %{{.*}}, %{{.*}})
// CHECK-NEXT:    func.return %e_out : !pl.tensor<16x128xf32>
// CHECK-LABEL: func.func @f(
// CHECK-NEXT:    %[[BUF:[a-z_0-9]+]] = "pl.tensor.create"() <{shape = array<i64: 16, 128>, dtype = f32}> : () -> !pl.tensor<16x128xf32>
// CHECK-NEXT:    %[[G:[a-z_0-9]+]] = func.call @gate(%{{.*}}, %[[BUF]])
// CHECK-NEXT:    func.call @use(%[[G]],
