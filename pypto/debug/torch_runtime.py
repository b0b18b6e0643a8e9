"""Helpers of the torch code emitted by ``pypto.debug.torch_codegen``.

This module's source is inlined verbatim at the top of every generated script
(so a script is self-contained: it needs only ``torch``). Tiles are torch
tensors; a tile may carry its *valid shape* as the attribute
``_pypto_valid_shape`` (set by :func:`_tile_load`, followed by the element-wise
helpers and the matmuls, honoured by :func:`_tile_store` and the reductions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

_VALID = "_pypto_valid_shape"


def _valid_shape(t: torch.Tensor) -> tuple[int, ...]:
    """The valid shape of a tile (its full shape when it carries none)."""
    return tuple(getattr(t, _VALID, tuple(t.shape)))


def _tag(t: torch.Tensor, valid: Sequence[int] | None) -> torch.Tensor:
    """Record ``valid`` (clipped to ``t``'s shape) as ``t``'s valid shape."""
    if valid is not None:
        clipped = tuple(max(0, min(int(v), int(n))) for v, n in zip(valid, t.shape, strict=False))
        if clipped != tuple(t.shape):
            setattr(t, _VALID, clipped)
    return t


def _like(result: Any, source: Any) -> Any:
    """``result`` with the valid shape of ``source`` (element-wise tile ops)."""
    if isinstance(result, torch.Tensor) and isinstance(source, torch.Tensor) and hasattr(source, _VALID):
        if tuple(result.shape) == tuple(source.shape):
            _tag(result, _valid_shape(source))
    return result


def _window(shape: Sequence[int], offsets: Sequence[int], extent: Sequence[int]) -> tuple[tuple[slice, ...], tuple[slice, ...]]:
    """The in-range part of a window ``offsets + extent`` of a tensor of
    ``shape``: (slices into the tensor, slices into the window)."""
    src: list[slice] = []
    dst: list[slice] = []
    for n, o, e in zip(shape, offsets, extent, strict=True):
        o, e, n = int(o), int(e), int(n)
        lo, hi = min(max(o, 0), n), min(max(o + e, 0), n)
        hi = max(hi, lo)
        src.append(slice(lo, hi))
        dst.append(slice(lo - o, hi - o))
    return tuple(src), tuple(dst)


_BLOCK: list[int] = [0, 1]
"""The SPMD block the running kernel is (index, count): set by a ``pl.block_num`` launch, else 0 of 1."""


def _spmd(n: int):  # noqa: ANN202 - a generator of block indices
    """Run a launch's body once per block, with ``_BLOCK`` naming it; back to 0 of 1 after."""
    try:
        for b in range(n):
            _BLOCK[:] = [b, n]
            yield b
    finally:
        _BLOCK[:] = [0, 1]


_PIPES: dict[str, list[torch.Tensor]] = {"c2v": [], "v2c": []}
"""The cube -> vector / vector -> cube pipes of this script (FIFOs of pushed tiles)."""


def _tpush(direction: str, tile: torch.Tensor) -> torch.Tensor:
    """``tpush_to_aiv`` (``c2v``) / ``tpush_to_aic`` (``v2c``): a copy of the tile into the pipe."""
    _PIPES[direction].append(_tag(tile.clone(), _valid_shape(tile)))
    return tile


_TOGETHER: list[Any] = []
"""The interleaved run of a Group's parts that push to each other, while it runs (:func:`_interleaved`)."""


def _tpop(direction: str) -> torch.Tensor:
    """``tpop_from_aic`` (``c2v``) / ``tpop_from_aiv`` (``v2c``): the oldest pushed tile. A Group function
    calls its pushing part before its popping part (see torch_codegen), so a pipe is never empty here
    unless nothing pushes it; parts that push to each other run interleaved, and a pop of an empty pipe
    hands over to the other part."""
    if not _PIPES[direction] and _TOGETHER:
        _TOGETHER[-1].wait(_PIPES[direction])
    if not _PIPES[direction]:
        raise RuntimeError(f"tpop ({direction}): nothing was pushed into the pipe")
    return _PIPES[direction].pop(0)


def _interleaved(names: Sequence[str], parts: Sequence[Any]) -> list[Any]:
    """A Group's calls that push to each other (the cube and the vector part of attention in one scope):
    run as the device model runs them, one at a time, handing over at a pop of an empty pipe
    (``Interleaved``, whose source follows this module's in a generated script)."""
    together = Interleaved(names)  # noqa: F821 -- inlined after this module (torch_codegen.runtime_source)
    _TOGETHER.append(together)
    try:
        return together.run(parts)
    finally:
        _TOGETHER.pop()


def _tile_load(t: torch.Tensor, offsets: Sequence[int], shape: Sequence[int], valid: Sequence[int] | None = None) -> torch.Tensor:
    """A DDR window as a new tile: the valid region is copied, everything else
    (including any part of the window outside ``t``) is zero. A valid shape outside 0..the tile's extent
    (a run-time ``valid_shape=[n, 32]`` with ``n`` too big or negative) is an error, as on the device."""
    if valid and any(not 0 <= int(v) <= int(s) for v, s in zip(valid, shape, strict=True)):
        raise ValueError(
            f"tile.load: valid_shape {[int(v) for v in valid]} is outside the tile's shape {[int(s) for s in shape]} "
            "(each extent must be between 0 and the tile's)"
        )
    tile = torch.zeros(tuple(int(s) for s in shape), dtype=t.dtype)
    extent = [min(int(v), int(s)) for v, s in zip(valid, shape, strict=True)] if valid else list(shape)
    src, dst = _window(t.shape, offsets, extent)
    tile[dst] = t[src]
    return _tag(tile, valid if valid else shape)


def _tile_store(tile: torch.Tensor, offsets: Sequence[int], out: torch.Tensor, atomic: bool = False) -> torch.Tensor:
    """Write the valid region of ``tile`` into ``out`` at ``offsets`` (in
    place, clipped to ``out``); ``+=`` when ``atomic``. Returns ``out``. A 2-D tile into an N-D ``out``
    fills the last two dimensions (the window's others have extent 1)."""
    lead = (1,) * (out.dim() - tile.dim())
    src, dst = _window(out.shape, offsets, lead + _valid_shape(tile))
    tile = tile.reshape(lead + tuple(tile.shape))
    value = tile[dst].to(out.dtype)
    if atomic:
        out[src] += value
    else:
        out[src] = value
    return out


def _assemble(dst: torch.Tensor, src: torch.Tensor, offsets: Sequence[int], atomic: bool = False, copy: bool = False) -> torch.Tensor:
    """Write ``src`` into a window of ``dst``: in place for DDR tensors, into a
    copy for tiles (``copy=True``, SSA semantics). Returns the result."""
    target = dst.clone() if copy else dst
    if copy and hasattr(dst, _VALID):
        _tag(target, _valid_shape(dst))
    return _tile_store(src, offsets, target, atomic)


def _slice(x: torch.Tensor, shape: Sequence[int], offsets: Sequence[int], valid: Sequence[int] | None = None) -> torch.Tensor:
    """A window of ``x``: a view when it lies inside ``x``, else a zero-padded copy."""
    inside = all(0 <= int(o) and int(o) + int(s) <= int(n) for o, s, n in zip(offsets, shape, x.shape, strict=True))
    if inside:
        view = x[tuple(slice(int(o), int(o) + int(s)) for o, s in zip(offsets, shape, strict=True))]
        return _tag(view, valid) if valid else view
    clipped = [max(0, min(int(v), int(s))) for v, s in zip(valid, shape, strict=True)] if valid else None
    return _tile_load(x, offsets, shape, clipped)


def _div(a: Any, b: Any) -> Any:
    """Element-wise division; integer operands truncate toward zero."""
    if isinstance(a, torch.Tensor) and not a.dtype.is_floating_point:
        return torch.div(a, b, rounding_mode="trunc").to(a.dtype)
    return a / b


def _reduce(x: torch.Tensor, kind: str, dim: int) -> torch.Tensor:
    """row_* (``dim=-1``) / col_* (``dim=-2``) reduction over the valid region."""
    valid = _valid_shape(x)
    region = x[tuple(slice(0, v) for v in valid)]
    if kind == "sum":
        acc = region.double() if region.dtype.is_floating_point else region.long()
        r = acc.sum(dim=dim, keepdim=True).to(x.dtype)
    elif kind == "max":
        r = region.amax(dim=dim, keepdim=True)
    else:
        r = region.amin(dim=dim, keepdim=True)
    shape = list(x.shape)
    shape[dim] = 1
    if list(r.shape) == shape:
        return r
    out = torch.zeros(shape, dtype=x.dtype)
    out[tuple(slice(0, n) for n in r.shape)] = r
    return _tag(out, list(r.shape))


def _expand(vec: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """``row_expand`` / ``col_expand``: ``vec`` broadcast to ``like``'s shape."""
    return _like(vec.expand(like.shape).clone(), like)


def _swapped(valid: tuple[int, ...], trans: bool) -> tuple[int, ...]:
    """``valid`` with its last two dims swapped when ``trans``."""
    return (*valid[:-2], valid[-1], valid[-2]) if trans and len(valid) >= 2 else valid


def _matmul(a: torch.Tensor, b: torch.Tensor, dtype: torch.dtype, a_trans: bool = False, b_trans: bool = False) -> torch.Tensor:
    """``a @ b`` accumulated in fp32 (int64 for integers), cast to ``dtype``. As the device's ``tmatmul``: when
    an operand carries a valid shape, K is the valid extent both share (``a``'s valid columns, ``b``'s valid
    rows: the padding takes no part) and the result is ``a``'s valid rows by ``b``'s valid columns."""
    x = a.transpose(-1, -2) if a_trans else a
    y = b.transpose(-1, -2) if b_trans else b
    tagged = x.dim() >= 2 and y.dim() >= 2 and (hasattr(a, _VALID) or hasattr(b, _VALID))
    if tagged:
        va, vb = _swapped(_valid_shape(a), a_trans), _swapped(_valid_shape(b), b_trans)
        k = min(va[-1], vb[-2])
        x, y = x[..., :k], y[..., :k, :]
    if x.dtype.is_floating_point:
        out = torch.matmul(x.float(), y.float()).to(dtype)
    else:
        out = torch.matmul(x.long(), y.long()).to(dtype)
    if tagged and out.dim() == 2:  # the device: a's valid rows by b's valid columns
        _tag(out, (va[-2], vb[-1]))
    return out


def _matmul_acc(acc: torch.Tensor, a: torch.Tensor, b: torch.Tensor, a_trans: bool = False, b_trans: bool = False) -> torch.Tensor:
    """``acc + a @ b`` (a new value; the accumulation is in fp32 / int64)."""
    wide = torch.float32 if acc.dtype.is_floating_point else torch.int64
    return _like((acc.to(wide) + _matmul(a, b, wide, a_trans, b_trans)).to(acc.dtype), acc)


def _cast(x: torch.Tensor, dtype: torch.dtype, mode: str = "round") -> torch.Tensor:
    """``cast(x, dtype, mode)``; ``mode`` rounds float -> integer conversions
    (round: half away from zero, floor, ceil, trunc; rint, odd, none: half to even), which
    saturate as the chip's ``tcvt`` does: out-of-range values (and infinities) clamp to the
    integer range, NaN is 0."""
    source = x
    if x.dtype.is_floating_point and not dtype.is_floating_point and dtype != torch.bool:
        x = x.double()
        if mode == "round":
            x = torch.sign(x) * torch.floor(x.abs() + 0.5)
        elif mode == "floor":
            x = torch.floor(x)
        elif mode == "ceil":
            x = torch.ceil(x)
        elif mode == "trunc":
            x = torch.trunc(x)
        else:
            x = torch.round(x)
        info = torch.iinfo(dtype)
        x = torch.nan_to_num(x, nan=0.0)
        low, high = torch.tensor(info.min, dtype=dtype), torch.tensor(info.max, dtype=dtype)
        inside = x.clamp(info.min, info.max).to(dtype)  # ends: exact in float64 below 2**53 only
        return _like(torch.where(x >= info.max, high, torch.where(x <= info.min, low, inside)), source)
    return _like(x.to(dtype), source)


def _transpose(x: torch.Tensor, axis1: int, axis2: int) -> torch.Tensor:
    """``transpose``: a transposed copy; a valid shape is transposed with it (``pto.ttrans``)."""
    out = x.transpose(axis1, axis2).contiguous()
    if hasattr(x, _VALID):
        valid = list(_valid_shape(x))
        valid[axis1], valid[axis2] = valid[axis2], valid[axis1]
        _tag(out, valid)
    return out


def _fillpad(x: torch.Tensor, pad: str = "zero") -> torch.Tensor:
    """``tile.fillpad``: ``x`` valid everywhere, what lies outside its valid shape set to ``pad`` (``zero``;
    ``max`` / ``min``: +-inf for floats, the integer range's ends otherwise; ``null``: left as it is), as
    ``pto.tfillpad`` does."""
    out = x.clone()
    valid = _valid_shape(x)
    if pad == "null" or tuple(valid) == tuple(x.shape):
        return out
    if pad == "zero":
        fill: float | int = 0
    elif x.dtype.is_floating_point:
        fill = float("inf") if pad == "max" else float("-inf")
    else:
        info = torch.iinfo(x.dtype)
        fill = info.max if pad == "max" else info.min
    outside = torch.ones(x.shape, dtype=torch.bool)
    outside[tuple(slice(0, int(v)) for v in valid)] = False
    out[outside] = fill
    return out


def _move(x: torch.Tensor) -> torch.Tensor:
    """``tile.move``: an on-chip copy (keeps the valid shape)."""
    return _like(x.clone(), x)


def _read(x: torch.Tensor, indices: Sequence[int]) -> Any:
    """One element as a Python number."""
    return x[tuple(int(i) for i in indices)].item()


def _write(x: torch.Tensor, indices: Sequence[int], value: Any) -> torch.Tensor:
    """Set one element (in place); returns ``x``."""
    x[tuple(int(i) for i in indices)] = value
    return x


def _divsi(a: int, b: int) -> int:
    """Signed integer division truncating toward zero (``arith.divsi``)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _remsi(a: int, b: int) -> int:
    """Signed remainder with the sign of ``a`` (``arith.remsi``)."""
    return a - b * _divsi(a, b)


def _write_out(param: Any, value: Any) -> None:
    """At a return: copy a returned tensor into its Out/InOut parameter when it
    is a different buffer (so the caller sees it in place)."""
    if isinstance(param, torch.Tensor) and isinstance(value, torch.Tensor) and value is not param:
        if tuple(param.shape) == tuple(value.shape):
            param.copy_(value.to(param.dtype))


def _check(x: Any, shape: Sequence[int], dtype: torch.dtype, name: str) -> None:
    """``check_shapes``: ``x`` is a tensor of the IR's shape (-1 = any) and dtype."""
    if not isinstance(x, torch.Tensor):
        raise AssertionError(f"{name}: expected a torch.Tensor, got {type(x).__name__}")
    if len(x.shape) != len(shape) or any(s >= 0 and s != n for s, n in zip(shape, x.shape, strict=False)):
        raise AssertionError(f"{name}: shape {list(x.shape)} does not match the IR shape {list(shape)}")
    if x.dtype != dtype:
        raise AssertionError(f"{name}: dtype {x.dtype} does not match the IR dtype {dtype}")
