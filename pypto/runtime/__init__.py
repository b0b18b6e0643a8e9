"""The PyPTO runtime side: :class:`RunConfig` (the device runtime comes later)."""

from __future__ import annotations

from .config import PLATFORMS, RunConfig, backend_for_platform

__all__ = ["PLATFORMS", "RunConfig", "backend_for_platform"]
