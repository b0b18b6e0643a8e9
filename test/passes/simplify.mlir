// RUN: pypto-opt %s -p simplify | filecheck %s
// RUN: pypto-opt %s -p simplify,simplify | filecheck %s
// RUN: pypto-opt %s -p simplify --print-debuginfo | filecheck %s --check-prefix=LOC

// Simplify folds arith on constants (the constant keeps the folded op's
// location and, for a named value, its name), folds trivial identities
// (x + 0, x * 1, x * 0), replaces an scf.if on a constant by the taken arm and
// a zero-trip scf.for by its initial values, and erases dead scalar code.
// Stores, assembles and tile/tensor ops stay. Running it twice is the same.

builtin.module @s {
  func.func @f(%x: !pl.tensor<64x128xf32>, %out: !pl.tensor<64x128xf32> {pl.dir = #pl<dir Out>}, %n: index) -> !pl.tensor<64x128xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c16 = arith.constant 16 : index
    %k0 = arith.muli %c2, %c16 : index loc("k.py":5:10)
    %a = arith.addi %n, %c0 : index
    %b = arith.muli %a, %c1 : index
    %z = arith.muli %n, %c0 : index
    %dead = arith.addi %n, %c16 : index
    %dead2 = arith.muli %dead, %c2 : index
    %cmp = arith.cmpi slt, %c2, %c16 : index
    %t = "pl.tile.load"(%x, %k0, %b, %c16, %c16) <{shapes = array<i64: 16, 128>, target_memory = #pl<mem Vec>, operandSegmentSizes = array<i32: 1, 2, 2>}> : (!pl.tensor<64x128xf32>, index, index, index, index) -> !pl.tile<16x128xf32, Vec>
    %r = scf.if %cmp -> (!pl.tile<16x128xf32, Vec>) {
      %e = "pl.tile.exp"(%t) : (!pl.tile<16x128xf32, Vec>) -> !pl.tile<16x128xf32, Vec>
      scf.yield %e : !pl.tile<16x128xf32, Vec>
    } else {
      %g = "pl.tile.neg"(%t) : (!pl.tile<16x128xf32, Vec>) -> !pl.tile<16x128xf32, Vec>
      scf.yield %g : !pl.tile<16x128xf32, Vec>
    }
    %o2 = scf.for %i = %c16 to %c2 step %c1 iter_args(%acc = %out) -> (!pl.tensor<64x128xf32>) {
      %s = "pl.tile.store"(%r, %i, %c0, %acc) : (!pl.tile<16x128xf32, Vec>, index, index, !pl.tensor<64x128xf32>) -> !pl.tensor<64x128xf32>
      scf.yield %s : !pl.tensor<64x128xf32>
    }
    %o3 = "pl.tile.store"(%r, %z, %c0, %o2) : (!pl.tile<16x128xf32, Vec>, index, index, !pl.tensor<64x128xf32>) -> !pl.tensor<64x128xf32>
    %unused = "pl.tile.store"(%r, %c0, %c0, %out) : (!pl.tile<16x128xf32, Vec>, index, index, !pl.tensor<64x128xf32>) -> !pl.tensor<64x128xf32>
    func.return %o3 : !pl.tensor<64x128xf32>
  }
}

// CHECK-LABEL: func.func @f(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: !pl.tensor<64x128xf32>, %[[OUT:[a-z0-9_]+]]: !pl.tensor<64x128xf32> {pl.dir = #pl<dir Out>}, %[[N:[a-z0-9_]+]]: index)
// CHECK-NOT:     arith.muli
// CHECK-NOT:     arith.addi
// CHECK-NOT:     arith.cmpi
// CHECK-NOT:     scf.if
// CHECK-NOT:     scf.for
// CHECK-DAG:     %[[K0:k0]] = arith.constant 32 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C16:.*]] = arith.constant 16 : index
// CHECK:         %[[T:.*]] = "pl.tile.load"(%[[X]], %[[K0]], %[[N]], %[[C16]], %[[C16]])
// CHECK-NEXT:    %[[E:.*]] = "pl.tile.exp"(%[[T]])
// CHECK-NOT:     pl.tile.neg
// CHECK:         %[[O3:.*]] = "pl.tile.store"(%[[E]], %{{.*}}, %{{.*}}, %[[OUT]])
// CHECK-NEXT:    "pl.tile.store"(%[[E]], %{{.*}}, %{{.*}}, %[[OUT]])
// CHECK-NEXT:    func.return %[[O3]]

// LOC: %k0 = arith.constant 32 : index loc("k.py":5:10)
