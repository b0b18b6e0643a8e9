"""The compact JSON spelling the run-time artefacts share (no dependencies: the trace tools import it too)."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any


def compact_encoder(allow_nan: bool = True, separators: tuple[str, str] = (",", ":")) -> Callable[[Any], str]:
    """``json.dumps(value, separators=separators, allow_nan=allow_nan)`` as one reusable function: the
    standard library's C encoder built once for a whole document (``JSONEncoder.encode`` builds a new one per
    call, which was most of the cost of an artefact's many small items). One document at a time: its encoder
    keeps the containers it is inside of. ``separators=(", ", ": ")``: plain ``json.dumps``'s spelling."""
    proto = json.JSONEncoder(allow_nan=allow_nan, separators=separators)
    if c_make_encoder is None:  # a Python without the C accelerator
        return proto.encode
    item, key = separators
    encoder = c_make_encoder({}, proto.default, encode_basestring_ascii, None, key, item, False, False, allow_nan)

    def encode(value: Any) -> str:
        return "".join(encoder(value, 0))

    return encode


class Encoded(str):
    """A value already spelled as its compact JSON (``json.dumps(v, separators=(",", ":"))``'s text): an item
    of an artefact's outer levels that ``dfx.base.json_text`` writes as it is (a collector that formats its
    rows from a template builds no dict only to encode it). Anywhere deeper it would be encoded as a string."""

    __slots__ = ()
