// RUN: pypto-opt %s -p convert-tensor-to-tile-ops | filecheck %s

// pl.tensor.write of a GM element in a kernel stays a tensor op (codegen: pto.store_scalar), as
// pl.tensor.read does; its value and indices are scalars and are kept as they are. pl.tensor.dim of a
// parameter (a pl.dynamic extent used as a value: pl.range(NR)) stays too (codegen: its constant).

builtin.module @write_prog {
  func.func @k(%src: !pl.tensor<4x2xi32>, %y: !pl.tensor<4x2xi32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<4x2xi32> attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = "pl.tensor.dim"(%src) <{axis = 0 : i64}> : (!pl.tensor<4x2xi32>) -> i64 loc("w.py":3:13)
    %v = "pl.tensor.read"(%src, %c0, %c1) : (!pl.tensor<4x2xi32>, index, index) -> i32 loc("w.py":4:13)
    %y1 = "pl.tensor.write"(%y, %c1, %c0, %v) : (!pl.tensor<4x2xi32>, index, index, i32) -> !pl.tensor<4x2xi32> loc("w.py":5:9)
    func.return %y1 : !pl.tensor<4x2xi32>
  }
}

// CHECK-LABEL: func.func @k(
// CHECK:         "pl.tensor.dim"(%src{{[_0-9]*}}) <{axis = 0 : i64}> : (!pl.tensor<4x2xi32>) -> i64
// CHECK:         %[[V:.*]] = "pl.tensor.read"(%src{{[_0-9]*}}, %{{.*}}, %{{.*}}) : (!pl.tensor<4x2xi32>, index, index) -> i32
// CHECK-NEXT:    %[[Y:.*]] = "pl.tensor.write"(%y{{[_0-9]*}}, %{{.*}}, %{{.*}}, %[[V]]) : (!pl.tensor<4x2xi32>, index, index, i32) -> !pl.tensor<4x2xi32>
// CHECK-NOT:     "pl.tile.
// CHECK:         func.return %[[Y]]
