builtin.module @prog {
  func.func @add(%a: !pl.tensor<16x16xf32>, %b: !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32> attributes {pl.func_type = #pl<func_type InCore>} {
    %0 = "pl.tensor.add"(%a, %b) : (!pl.tensor<16x16xf32>, !pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    %1 = "pl.tensor.exp"(%0) : (!pl.tensor<16x16xf32>) -> !pl.tensor<16x16xf32>
    func.return %1 : !pl.tensor<16x16xf32>
  }
}
