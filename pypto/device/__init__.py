"""The simulated device: the pto interpreter and the race detector.

The chip description lives in :mod:`pypto.target`; ``Target`` and
``load_target`` are re-exported here for users.
"""

from __future__ import annotations

from pypto.target import NPU, Target, TargetError, TargetOp, load_target, make_npu_context, packaged_targets

__all__ = ["NPU", "Target", "TargetError", "TargetOp", "load_target", "make_npu_context", "packaged_targets"]
