// RUN: not pypto-opt --load-pass-plugin %inputs/plugin_passes.py -p test-crash %s 2>&1 | filecheck %s
// RUN: env PTO_BACKTRACE=1 not pypto-opt --load-pass-plugin %inputs/plugin_passes.py -p test-crash %s 2>&1 | filecheck %s --check-prefix=TRACE

// A bug (an unexpected exception) is an internal error (exit 2), without a
// Python traceback unless PTO_BACKTRACE=1.

// CHECK: pypto-opt: internal error in pass 'test-crash': RuntimeError: boom
// CHECK-NOT: Traceback

// TRACE: pypto-opt: internal error in pass 'test-crash': RuntimeError: boom
// TRACE: Traceback
// TRACE: RuntimeError: boom

builtin.module {
}
