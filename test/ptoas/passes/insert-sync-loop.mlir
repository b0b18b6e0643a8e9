// RUN: ptoas %shared/corpus/pto/nested_loop_confliect.pto --emit pto --enable-insert-sync | filecheck %s

// A tload in the outer loop and a tstore of the same UB tile in the inner
// loop: the RAW pair sits before the store, the loop-carried WAR pair (the
// next iteration's load overwriting what the store still reads) before the load.

// CHECK-LABEL: func.func @nested_loop_sync
// CHECK:      scf.for
// CHECK-NEXT:   pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
// CHECK-NEXT:   pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
// CHECK-NEXT:   pto.tload
// CHECK-NEXT:   scf.for
// CHECK-NEXT:     pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
// CHECK-NEXT:     pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
// CHECK-NEXT:     pto.tstore
// CHECK:      pto.barrier <PIPE_ALL>
