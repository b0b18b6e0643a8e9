"""``pypto.backend.pto_backend`` (upstream's module path): the codegen error class."""

from pypto.errors import PartialCodegenError

__all__ = ["PartialCodegenError"]
