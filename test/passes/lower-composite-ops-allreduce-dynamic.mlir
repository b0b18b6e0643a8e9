// RUN: pypto-opt %s -p lower-composite-ops --emit=py | filecheck %s

// A collective whose world size or window is still dynamic at LowerCompositeOps stays as it is (its
// pto_blocker names the static shape it needs). A per-rank program of a launch never has one: the
// launch's arguments bind every pl.dynamic dim first (test_distributed_collectives.py runs a kernel of
// pl.dynamic rank count and rows on 2 and 4 ranks); the static one next to them expands.

builtin.module @dyn {
  func.func @k(%data: !pl.tensor<1x64xf32> {pl.dir = #pl<dir InOut>}, %sig: !pl.tensor<?x1xi32> {pl.dir = #pl<dir InOut>}, %rows: !pl.tensor<?x64xf32> {pl.dir = #pl<dir InOut>}, %fixed: !pl.tensor<2x1xi32> {pl.dir = #pl<dir InOut>}) -> !pl.tensor<1x64xf32> attributes {pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>} {
    %a = "pld.tensor.allreduce"(%data, %sig) : (!pl.tensor<1x64xf32>, !pl.tensor<?x1xi32>) -> !pl.tensor<1x64xf32>
    %b = "pld.tensor.allreduce"(%rows, %fixed) : (!pl.tensor<?x64xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<?x64xf32>
    %c = "pld.tensor.allreduce"(%a, %fixed) : (!pl.tensor<1x64xf32>, !pl.tensor<2x1xi32>) -> !pl.tensor<1x64xf32>
    func.return %c : !pl.tensor<1x64xf32>
  }
}

// CHECK:      pld.tensor.allreduce(data, sig)
// CHECK-NEXT: pld.tensor.allreduce(rows, fixed)
// CHECK-NEXT: pld.tensor.barrier(fixed)
// CHECK-NOT:  pld.tensor.allreduce
