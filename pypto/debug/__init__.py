"""Compile-time correctness tools: run the IR's semantics on the host.

- :func:`torch_codegen` turns IR at any point of the pipeline into runnable
  Python/torch source.
- :func:`validate_pass_ir_codegen_results` runs every pass dump that way and
  compares the outputs with expected tensors (pl-dsl.md §7).
- ``python -m pypto.debug.bisect BUILD_DIR`` finds the first pass whose
  results diverge (see :mod:`pypto.debug.bisect`).
"""

from .torch_codegen import TorchCodegenError, torch_codegen
from .validate import validate_pass_ir_codegen_results

__all__ = ["TorchCodegenError", "torch_codegen", "validate_pass_ir_codegen_results"]
