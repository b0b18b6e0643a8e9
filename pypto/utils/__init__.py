"""Small shared utilities (atomic file writes)."""

from .atomic import atomic_write_bytes, atomic_write_text

__all__ = ["atomic_write_bytes", "atomic_write_text"]
