// RUN: pypto-opt %inputs/add.mlir --load-pass-plugin %inputs/plugin_passes.py -p 'test-name-values{prefix=t}' | filecheck %s
// RUN: not pypto-opt %inputs/add.mlir --load-pass-plugin %inputs/plugin_passes.py -p 'test-name-values{nope=1}' 2>&1 | filecheck %s --check-prefix=BADOPT
// RUN: not pypto-opt %inputs/add.mlir -p test-nam-values 2>&1 | filecheck %s --check-prefix=UNKNOWN

// Pass options use xDSL's pipeline syntax; unknown passes and options are
// user errors (exit 1, one diagnostic).

// CHECK: %t = "pl.tensor.add"(%a, %b)
// CHECK: %t_1 = "pl.tensor.exp"(%t)

// BADOPT: error: invalid options for pass 'test-name-values'
// BADOPT-NOT: Traceback

// UNKNOWN: error: unknown pass 'test-nam-values'
// UNKNOWN-NEXT: note: known passes: {{.*}}outline-incore-scopes
// UNKNOWN-NOT: Traceback
