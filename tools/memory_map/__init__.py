"""The memory map: what is on chip, where, and for how long (pl-dsl.md §8).

``python -m pypto.tools.memory_map DUMP|passes_dump/|BUILD_DIR [-o OUT.html] [-p PASS] [-b BACKEND]``
draws one kernel function's on-chip tiles per memory space: address across,
lifetime down, the IR beside. See docs/memory_map.md.
"""

from .model import MemoryMap, MemoryMapError, build_map
from .render import build_payload, render_map

__all__ = ["MemoryMap", "MemoryMapError", "build_map", "build_payload", "render_map"]
