"""The compact JSON spelling the run-time artefacts share (no dependencies on the rest of the project: the
trace tools import it too), and the one place that chooses their encoder: the standard library's C encoder
for the artefacts whose bytes follow ``json.dumps`` (:func:`compact_encoder`), PyPI ``orjson`` for the swimlane
records' rows and phases and the merged trace (:func:`plain_json`), whose values it spells as json does.
(A report page's data: :func:`pypto.reports.embed_json_bytes`.)"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]
from typing import Any

import orjson


def compact_encoder(allow_nan: bool = True, separators: tuple[str, str] = (",", ":")) -> Callable[[Any], str]:
    """``json.dumps(value, separators=separators, allow_nan=allow_nan)`` as one reusable function: the
    standard library's C encoder built once per thread and spelling (``JSONEncoder.encode`` builds a new one
    per call, which was most of the cost of an artefact's many small items; building one per document cost a
    flagged run a dozen builds). Not re-entrant: its encoder keeps the containers it is inside of (forgotten
    when a call fails). ``separators=(", ", ": ")``: plain ``json.dumps``'s spelling."""
    cache = getattr(_ENCODERS, "by_spelling", None)
    if cache is None:
        cache = _ENCODERS.by_spelling = {}
    key = (allow_nan, separators)
    encode = cache.get(key)
    if encode is None:
        encode = cache[key] = _build_encoder(allow_nan, separators)
    return encode


_ENCODERS = threading.local()
"""``by_spelling``: this thread's :func:`compact_encoder` functions by ``(allow_nan, separators)``."""


def _build_encoder(allow_nan: bool, separators: tuple[str, str]) -> Callable[[Any], str]:
    proto = json.JSONEncoder(allow_nan=allow_nan, separators=separators)
    if c_make_encoder is None:  # a Python without the C accelerator
        return proto.encode
    item, key = separators
    markers: dict[int, Any] = {}
    encoder = c_make_encoder(markers, proto.default, encode_basestring_ascii, None, key, item, False, False, allow_nan)

    def encode(value: Any) -> str:
        try:
            return "".join(encoder(value, 0))
        except BaseException:
            markers.clear()  # a failed call leaves the containers it was inside of marked
            raise

    return encode


_EXACT = float(1 << 40)
"""Below this, ``x * 1e6`` is within 2**-14 of the exact product (half its ulp): its nearest integer is the exact
one's unless the product sits within :data:`_TIE_BAND` of a tie (:func:`round6`)."""

_TIE_BAND = 0.4999
"""How close to an integer ``x * 1e6`` must be for :func:`round6`'s short way: the exact product is then within
0.4999 + 2**-14 < 0.5 of that integer. (A quarter, before, sent 137 of a flagged 01_ffn run pair's 674 values
through ``round``, now 17: at 1.85 GHz a cycle is 540.54 ps, so a time in µs lands anywhere between two millionths;
a midpoint of two times an odd number of millionths apart is an exact decimal tie and still goes through it.)"""


def round6(x: float) -> float:
    """``round(x, 6)`` of a float, the same value: ``round`` with digits spells ``x`` in decimal and reads it
    back (about 2000 instructions; a flagged 01_ffn run pair rounds ~680 times, the merged trace's µs and the
    run report's ratios). When ``x * 1e6`` is clearly nearest one integer ``n`` (within :data:`_TIE_BAND`,
    below 2**40), ``round(x, 6)`` is the double nearest ``n / 10**6``, which ``n / 1e6`` is (both exact,
    the division correctly rounded); a zero keeps ``x``'s sign. Anything else (a near tie, a huge value,
    NaN, an infinity) goes through ``round``."""
    n = x * 1e6
    if -_EXACT < n < _EXACT:
        r = round(n)
        if -_TIE_BAND <= n - r <= _TIE_BAND:
            return r / 1e6 if r else 0.0 * x
    return round(x, 6)


class Encoded(str):
    """A value already spelled as its compact JSON (``json.dumps(v, separators=(",", ":"))``'s text): an item
    of an artefact's outer levels that ``dfx.base.json_text`` writes as it is (a collector that formats its
    rows from a template builds no dict only to encode it). Anywhere deeper it would be encoded as a string."""

    __slots__ = ()


Raw = orjson.Fragment
"""JSON text already spelled, written as it is where :func:`plain_json` meets it (the merged trace's labels
and phase arguments, spelled once per run)."""


def plain_json(value: Any) -> str:
    """``json.dumps(value, separators=(",", ":"))`` of a value made of ints, ASCII strings, bools, None,
    lists and dicts with string keys (a swimlane record's row or scheduler phase), through orjson: 0.3 µs an
    item against json's 2.4. Its text is json's for those; a float below 1e-4 would lose json's exponent,
    a non-ASCII string its ``\\u`` escapes (the same values to a JSON reader) and NaN or an infinity would be
    ``null``. What orjson does not take (a non-string key, an int beyond 64 bits, a numpy scalar) goes through
    json, which cannot write a :data:`Raw` (``TypeError``)."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson.JSONEncodeError
        return json.dumps(value, separators=(",", ":"))
