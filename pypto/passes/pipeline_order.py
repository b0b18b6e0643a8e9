"""PyPTO's Default pipeline: the 49 pass names in order (pl-dsl.md §5), and
the kebab-case name each pass has in ``pypto-opt``."""

from __future__ import annotations

DEFAULT_PIPELINE: tuple[tuple[str, str], ...] = (
    ("InlineFunctions", "inline-functions"),
    ("UnrollLoops", "unroll-loops"),
    ("CtrlFlowTransform", "ctrl-flow-transform"),
    ("ConvertToSSA", "convert-to-ssa"),
    ("Simplify", "simplify"),
    ("NormalizeStmtStructure", "normalize-stmt-structure"),
    ("FlattenCallExpr", "flatten-call-expr"),
    ("OutlineHierarchyScopes", "outline-hierarchy-scopes"),
    ("OutlineIncoreScopes", "outline-incore-scopes"),
    ("OutlineClusterScopes", "outline-cluster-scopes"),
    ("ConvertTensorToTileOps", "convert-tensor-to-tile-ops"),
    ("OptimizeOrchTensors", "optimize-orch-tensors"),
    ("LowerCompositeOps", "lower-composite-ops"),
    ("FlattenTileNdTo2D", "flatten-tile-nd-to-2d"),
    ("LegalizeTileCast", "legalize-tile-cast"),
    ("AutoTileMatmulL0", "auto-tile-matmul-l0"),
    ("CanonicalizeTileSlice", "canonicalize-tile-slice"),
    ("InferTileMemorySpace", "infer-tile-memory-space"),
    ("InsertMxScaleAddr", "insert-mx-scale-addr"),
    ("ResolveBackendOpLayouts", "resolve-backend-op-layouts"),
    ("LowerAutoVectorSplit", "lower-auto-vector-split"),
    ("ExpandMixedKernel", "expand-mixed-kernel"),
    ("InjectGMPipeBuffer", "inject-gm-pipe-buffer"),
    ("SplitVectorKernel", "split-vector-kernel"),
    ("StampTfreeSplit", "stamp-tfree-split"),
    ("NormalizeReturnOrder", "normalize-return-order"),
    ("SkewCrossCorePipeline", "skew-cross-core-pipeline"),
    ("LowerPipelineToSlots", "lower-pipeline-to-slots"),
    ("LowerPipelineLoops", "lower-pipeline-loops"),
    ("CanonicalizeIOOrder", "canonicalize-io-order"),
    ("MaterializeTensorStrides", "materialize-tensor-strides"),
    ("InitMemRef", "init-memref"),
    ("MaterializeSemanticAliases", "materialize-semantic-aliases"),
    ("MemoryReuse", "memory-reuse"),
    ("AllocateMemoryAddr", "allocate-memory-addr"),
    ("FoldNoOpReshape", "fold-no-op-reshape"),
    ("FuseCreateAssembleToSlice", "fuse-create-assemble-to-slice"),
    ("DeriveCallDirections", "derive-call-directions"),
    ("AutoDeriveTaskDependencies", "auto-derive-task-dependencies"),
    ("ExpandManualPhaseFence", "expand-manual-phase-fence"),
    ("SynthesizeAllReduceSignals", "synthesize-all-reduce-signals"),
    ("MaterializeCommDomainScopes", "materialize-comm-domain-scopes"),
    ("LowerHostTensorCollectives", "lower-host-tensor-collectives"),
    ("MaterializeDistTensorCtx", "materialize-dist-tensor-ctx"),
    ("Simplify", "simplify"),
    ("MaterializeRuntimeScopes", "materialize-runtime-scopes"),
    ("ClassifyIterArgCarry", "classify-iter-arg-carry"),
    ("InsertCommFence", "insert-comm-fence"),
    ("MaterializeValidShapeSymbols", "materialize-valid-shape-symbols"),
)
"""(PyPTO name, pypto-opt name) of every pass the Default strategy runs."""

KEBAB_NAMES: dict[str, str] = dict(DEFAULT_PIPELINE)
"""PyPTO name -> pypto-opt name."""

SKIPPED_BY_PLANNER: dict[str, frozenset[str]] = {
    "PYPTO": frozenset(),
    "DSA_RP": frozenset({"MemoryReuse"}),
    "PTOAS": frozenset({"MemoryReuse", "AllocateMemoryAddr"}),
}
"""Passes each ``memory_planner`` leaves out (later numbers shift up)."""
