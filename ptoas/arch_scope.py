"""PTOAS's parser arch scope: the target arch a ``.pto`` text is read under.

PTOAS's ``ptoas`` parses under an arch (``--pto-arch``, else the text's
``pto.target_arch``, else a3) and its tile_buf parser gives every ``loc=left``
tile the layout of that arch's Left tiles, whatever the text says: RowMajor on
a3, ColMajor on a5. :func:`apply_left_blayout` does the same on the text
before parsing (``row_major`` and ``col_major`` have the same length, so every
``file:line:col`` stays where it was).
"""

from __future__ import annotations

import re

LEFT_BLAYOUT = {"a2a3": "row_major", "a5": "col_major"}
_TARGET_ARCH = re.compile(r'"?pto\.target_arch"?\s*=\s*"(\w+)"')
_TILE_BUF = re.compile(r"!pto\.tile_buf<([^<>]*)>")
_IS_LEFT = re.compile(r"^\s*(?:loc\s*=\s*)?left\s*,")
_BLAYOUT = re.compile(r"(blayout\s*=\s*)(row_major|col_major)")


def text_arch(text: str) -> str | None:
    """The ``pto.target_arch`` a ``.pto`` text declares (a3 read as a2a3), if any."""
    m = _TARGET_ARCH.search(text)
    if m is None:
        return None
    arch = m.group(1).lower()
    return "a2a3" if arch in ("a3", "a2a3") else arch


def apply_left_blayout(text: str, arch: str) -> str:
    """``text`` with every Left tile_buf's ``blayout`` set to ``arch``'s (unchanged for other arches)."""
    layout = LEFT_BLAYOUT.get(arch)
    if layout is None:
        return text

    def fix(m: re.Match[str]) -> str:
        inner = m.group(1)
        if not _IS_LEFT.match(inner):
            return m.group(0)
        if _BLAYOUT.search(inner) is None:  # short form without blayout: the arch's default
            return "!pto.tile_buf<" + inner + f", blayout={layout}>"
        return "!pto.tile_buf<" + _BLAYOUT.sub(lambda b: b.group(1) + layout, inner) + ">"

    return _TILE_BUF.sub(fix, text)
