"""xDSL dialects of PyPTO: ``pl`` (program, tensor and tile layers).

``PL`` is the dialect object to register in a context; ``pypto.core.context``
builds the context with ``builtin``, ``func``, ``arith`` and ``scf`` beside it.
"""

from xdsl.ir import Dialect

from .dtypes import ExtDType
from .enums import ENUM_ATTRS
from .program import AtOp, YieldOp
from .tensor_ops import TENSOR_OPS
from .tile_ops import TILE_OPS
from .types import MemRefAttr, PtrType, TensorType, TileType, TileViewAttr

PL = Dialect(
    "pl",
    [AtOp, YieldOp, *TENSOR_OPS, *TILE_OPS],
    [TensorType, TileType, MemRefAttr, TileViewAttr, PtrType, ExtDType, *ENUM_ATTRS.values()],
)

__all__ = ["PL"]
