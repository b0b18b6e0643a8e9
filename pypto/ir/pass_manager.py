"""``pypto.ir.pass_manager`` (upstream's module path): re-exports :mod:`pypto.pipeline.manager`."""

from pypto.pipeline.manager import MemoryPlanner, OptimizationStrategy, PassManager, PipelineOptions

__all__ = ["MemoryPlanner", "OptimizationStrategy", "PassManager", "PipelineOptions"]
