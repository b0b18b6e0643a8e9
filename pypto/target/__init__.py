"""The chip description: the ``npu`` dialect and the :class:`Target` read from it.

The bottom layer: it imports only xDSL, numpy and :mod:`pypto.utils`.
``load_target("a2a3")`` reads ``pypto/target/targets/a2a3.mlir`` (or a path to
an edited copy) and returns a :class:`Target`; see docs/target.md.
"""

from __future__ import annotations

from .dialect import NPU, TargetOp, make_npu_context
from .model import Target, TargetError, load_target, packaged_targets

__all__ = ["NPU", "Target", "TargetError", "TargetOp", "load_target", "make_npu_context", "packaged_targets"]
