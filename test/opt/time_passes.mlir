// RUN: pypto-opt %inputs/add.mlir --load-pass-plugin %inputs/plugin_passes.py -p test-noop,test-name-values --time-passes 2>&1 >/dev/null | filecheck %s

// CHECK:      Pass execution timing report
// CHECK:      Total Execution Time: {{[0-9.]+}} seconds
// CHECK:      (parser)
// CHECK:      test-noop
// CHECK:      test-name-values
// CHECK:      {{[0-9.]+}} (100.0%)  Total
