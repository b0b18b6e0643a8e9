"""The simulated device: the chip described as IR (the ``npu`` dialect) and its queries.

``load_target("a2a3")`` (or a path to an edited copy of
``pypto/device/targets/a2a3.mlir``) returns a :class:`Target`; see docs/target.md.
"""

from __future__ import annotations

from .npu_dialect import NPU, TargetOp, make_npu_context
from .target import Target, TargetError, load_target, packaged_targets

__all__ = ["NPU", "Target", "TargetError", "TargetOp", "load_target", "make_npu_context", "packaged_targets"]
