// RUN: pypto-opt %inputs/add.mlir --load-pass-plugin %inputs/plugin_passes.py -p test-noop,test-name-values --print-ir-after-all 2>&1 >/dev/null | filecheck %s
// RUN: pypto-opt %inputs/add.mlir --load-pass-plugin %inputs/plugin_passes.py -p test-noop,test-name-values --print-between-passes 2>&1 >/dev/null | filecheck %s
// RUN: pypto-opt %inputs/add.mlir --load-pass-plugin %inputs/plugin_passes.py -p test-noop,test-name-values --print-ir-after-change 2>&1 >/dev/null | filecheck %s --check-prefix=CHANGE

// --print-ir-after-all (alias --print-between-passes) prints the IR to stderr
// after every pass; --print-ir-after-change only after passes that changed it.

// CHECK:      // -----// IR Dump After TestNoop (test-noop) //----- //
// CHECK-NEXT: builtin.module @prog {
// CHECK:        %0 = "pl.tensor.add"(%a, %b)
// CHECK:      // -----// IR Dump After TestNameValues (test-name-values) //----- //
// CHECK-NEXT: builtin.module @prog {
// CHECK:        %v = "pl.tensor.add"(%a, %b)
// CHECK-NEXT:   %v_1 = "pl.tensor.exp"(%v)

// CHANGE-NOT:  After TestNoop
// CHANGE:      // -----// IR Dump After TestNameValues (test-name-values) //----- //
// CHANGE:        %v = "pl.tensor.add"(%a, %b)
