"""The compact JSON spelling the run-time artefacts share (no dependencies on the rest of the project: the
trace tools import it too), and the one place that chooses their JSON encoder: the standard library's C
encoder for the artefacts whose bytes follow ``json.dumps`` (:func:`compact_encoder`), PyPI ``orjson`` for
the run report's page data (:func:`script_json`), where its text is the same."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import orjson


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


_SCRIPT_ESCAPES = tuple((raw.encode("utf-8"), esc) for raw, esc in (
    ("<", b"\\u003c"), (">", b"\\u003e"), ("&", b"\\u0026"), ("\u2028", b"\\u2028"), ("\u2029", b"\\u2029"),
))  # fmt: skip


def script_json(payload: Any) -> bytes:
    """``payload`` as :func:`pypto.reports.embed_json` spells it (sorted keys, compact, UTF-8, ``<``, ``>``,
    ``&``, U+2028 and U+2029 escaped: safe inside ``<script>``), as UTF-8 bytes, through orjson (a run report's
    page data: 6x faster than json's C encoder with ``sort_keys``). Its text is ``json.dumps``'s for strings,
    ints, bools, None, lists and dicts with string keys; a float below 1e-4 is spelled without an exponent
    (``0.00001``, json ``1e-05``: the same number to any JSON reader), and NaN or an infinity as ``null``. What
    orjson does not take (a non-string key, an int beyond 64 bits, a numpy scalar) goes through json."""
    try:
        text = orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8")  # fmt: skip
    for raw, esc in _SCRIPT_ESCAPES:
        if raw in text:
            text = text.replace(raw, esc)
    return text


Raw = orjson.Fragment
"""JSON text already spelled, written as it is where :func:`plain_json` meets it (the merged trace's labels
and phase arguments, spelled once per run)."""


def plain_json(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"))`` of a value made of ints, ASCII strings, bools, None,
    lists and dicts with string keys (a swimlane record's row or scheduler phase), through orjson: 0.3 µs an
    item against json's 2.4. Its text is json's for those; a float below 1e-4 would lose json's exponent
    and a non-ASCII string its ``\\u`` escapes (the same values to a JSON reader). What orjson does not take
    (a non-string key, an int beyond 64 bits, a numpy scalar) goes through json."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, separators=(",", ":"))
