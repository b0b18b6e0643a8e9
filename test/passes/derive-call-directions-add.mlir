// RUN: pypto-opt %shared/reference/upstream-builds/add/passes_dump/37_after_FuseCreateAssembleToSlice.py -p derive-call-directions --emit=mlir | filecheck %s

// Each call records its arguments' directions from the callee's pl.dir
// (upstream prints them as pl.adir.input / output_existing).

// CHECK: func.call @add_incore_0({{.*}}) {pl.arg_directions = [#pl<dir In>, #pl<dir In>, #pl<dir Out>]}
