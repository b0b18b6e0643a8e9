"""Analyses and IR utilities shared by passes, backends and tools (ir core layer).

- :mod:`.liveness`: MLIR-style liveness of SSA values, generic over xDSL IR.
- :mod:`.buffers`: what a buffer is in the ``pl`` dialect (values by MemRef base) and its live range.
- :mod:`.memref`: read, retype and rename MemRefs; keep ``pl.tile.alloc`` in step.
- :mod:`.aliases`: values the semantics make one buffer (in-place, views, loop carries).
- :mod:`.calls`: call argument directions; call sites and callees agreeing on MemRefs.
- :mod:`.functions`: a module's functions by kind.
- :mod:`.constants`: constant operands.

May import :mod:`pypto.dialects`, :mod:`pypto.utils` and the target description;
never passes, the pipeline, ptoas or the device.
"""
