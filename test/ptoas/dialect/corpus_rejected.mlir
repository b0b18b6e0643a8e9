// The four deliberately invalid corpus files are rejected with file:line:col, the op and the operand.
// RUN: not python -m pypto.ptoas.pto_text %shared/corpus/pto/tcvt_verify_invalid.pto 2>&1 | filecheck %s --check-prefix=TCVT
// RUN: not python -m pypto.ptoas.pto_text %shared/corpus/pto/tstore_verify_shape_valid_mismatch_invalid.pto 2>&1 | filecheck %s --check-prefix=TSTORE
// RUN: not python -m pypto.ptoas.pto_text %shared/corpus/pto/pto_entry_nonvoid_rejected.pto 2>&1 | filecheck %s --check-prefix=ENTRY
// RUN: not python -m pypto.ptoas.pto_text %shared/corpus/pto/tinsert_verify_a2a3_invalid_dtype.pto 2>&1 | filecheck %s --check-prefix=TINSERT

// TCVT: tcvt_verify_invalid.pto:24:3: error: 'pto.tcvt' op expects src and dst to have compatible shapes
// TSTORE: tstore_verify_shape_valid_mismatch_invalid.pto:9:5: error: 'pto.tstore' op expects dst static element count
// ENTRY: pto_entry_nonvoid_rejected.pto:4:3: error: 'func.func' op @kernel: PTO entry functions must return void
// TINSERT: tinsert_verify_a2a3_invalid_dtype.pto:10:5: error: 'pto.tinsert' op expects A2/A3 tinsert element types to be src=f32, dst=f16/bf16
