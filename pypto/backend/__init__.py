"""``pypto.backend`` (upstream's module path; a facade): the code generation target.

``BackendType`` names the target (``Ascend910B`` for a2a3, ``Ascend950`` for a5). Upstream's
process-wide backend setting is kept as a recorded value: ``set_backend_type`` /
``get_backend_type`` / ``is_backend_configured`` / ``reset_for_testing``. Compilation here takes
its target from ``ir.compile(platform=..., backend_type=...)`` (or ``RunConfig``), not from this
setting.
"""

from __future__ import annotations

from pypto.pipeline.backend import BackendType

_configured: BackendType | None = None


def set_backend_type(backend_type: BackendType | str) -> None:
    """Record the process's backend; setting a different one once configured is an error (as upstream)."""
    global _configured
    value = BackendType(getattr(backend_type, "value", backend_type))
    if _configured is not None and _configured is not value:
        raise ValueError(
            f"the backend is already configured as {_configured.value}; cannot change it to {value.value} "
            "(reset_for_testing() clears it)"
        )
    _configured = value


def get_backend_type() -> BackendType:
    """The configured backend (a RuntimeError when none is)."""
    if _configured is None:
        raise RuntimeError("no backend configured; call pypto.backend.set_backend_type(BackendType.Ascend910B)")
    return _configured


def is_backend_configured() -> bool:
    """True once :func:`set_backend_type` ran."""
    return _configured is not None


def reset_for_testing() -> None:
    """Forget the configured backend."""
    global _configured
    _configured = None


__all__ = ["BackendType", "get_backend_type", "is_backend_configured", "reset_for_testing", "set_backend_type"]
