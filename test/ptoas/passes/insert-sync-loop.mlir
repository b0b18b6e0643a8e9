// RUN: ptoas %shared/corpus/pto/nested_loop_confliect.pto --emit pto --enable-insert-sync | filecheck %s

// PTOAS's insert-sync (what `ptoas --enable-insert-sync` runs): a tload in the outer loop and a
// tstore of the same UB tile in the inner loop. The RAW pair's wait leaves the inner loop (its set
// is outside it: sync motion), the inner loop's tstore-after-tstore on the same GM view gets a
// PIPE_MTE3 barrier, and the loop-carried WAR pair (the next iteration's load overwriting what the
// stores still read) is a back-edge pair on a VEC buffer: two event ids, both set before the loop
// and waited after it, the first one set and waited in the loop.

// CHECK-LABEL: func.func @nested_loop_sync
// CHECK:      pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
// CHECK-NEXT: pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID1>]
// CHECK-NEXT: scf.for
// CHECK-NEXT:   pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
// CHECK-NEXT:   pto.tload
// CHECK-NEXT:   pto.set_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
// CHECK-NEXT:   pto.wait_flag[<PIPE_MTE2>, <PIPE_MTE3>, <EVENT_ID0>]
// CHECK-NEXT:   scf.for
// CHECK-NEXT:     pto.barrier <PIPE_MTE3>
// CHECK-NEXT:     pto.tstore
// CHECK-NEXT:   }
// CHECK-NEXT:   pto.set_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
// CHECK-NEXT: }
// CHECK-NEXT: pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID0>]
// CHECK-NEXT: pto.wait_flag[<PIPE_MTE3>, <PIPE_MTE2>, <EVENT_ID1>]
// CHECK-NEXT: pto.barrier <PIPE_ALL>
