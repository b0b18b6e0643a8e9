// RUN: pypto-opt %s -p outline-incore-scopes | filecheck %s
// RUN: pypto-opt %s -p outline-incore-scopes --emit=py | filecheck %s --check-prefix=PL

// A scope's dumps (pl.at(..., dumps=[b]), pl.dump_tag) become the outlined
// call's pl.dump_vars: the positions of those tensors among the call's
// arguments (the scope's captures, in first-use order). A scope without dumps
// gives a call without the attribute.

builtin.module @p {
  func.func @main(%a: !pl.tensor<128x128xf32>, %b: !pl.tensor<128x128xf32>, %out: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> {
    %r = "pl.at"(%b, %out) <{level = #pl<level CORE_GROUP>, name_hint = "k1"}> ({
      %c0 = arith.constant 0 : index
      %s = "pl.tensor.add"(%a, %b) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
      %out2 = "pl.tensor.assemble"(%out, %s, %c0, %c0) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32>
      "pl.yield"(%out2) : (!pl.tensor<128x128xf32>) -> ()
    }) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
    %r2 = "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "k2"}> ({
      %c0 = arith.constant 0 : index
      %s = "pl.tensor.add"(%a, %a) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>) -> !pl.tensor<128x128xf32>
      %out3 = "pl.tensor.assemble"(%r, %s, %c0, %c0) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32>
      "pl.yield"(%out3) : (!pl.tensor<128x128xf32>) -> ()
    }) : () -> !pl.tensor<128x128xf32>
    func.return %r2 : !pl.tensor<128x128xf32>
  }
}

// CHECK-LABEL: func.func @main(
// CHECK-NOT:     "pl.at"
// CHECK:         %[[R:.*]] = func.call @k1(%a{{[_0-9]*}}, %b{{[_0-9]*}}, %out{{[_0-9]*}}) {pl.dump_vars = [1 : i64, 2 : i64]}
// CHECK:         func.call @k2(%a{{[_0-9]*}}, %[[R]]) :

// PL:      self.k1(a, b, out, attrs={"dump_vars": [b, out]})
// PL:      self.k2(a, r)
// PL-NOT:  dump_vars
