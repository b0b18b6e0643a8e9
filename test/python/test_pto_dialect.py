"""The ``pto`` dialect: corpus round trips, upstream-MLIR compatibility, verifiers, syntax forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.ptoas.dialect import PTO, TileBufType
from pypto.ptoas.dialect.attrs import Pipe
from pypto.ptoas.dialect.sync_ops import RecordEventOp
from pypto.ptoas.dialect.tile_ops import TInsertOp, TLoadOp, TMovOp, TStoreOp
from pypto.ptoas.pto_text import (
    PTOVerifyError,
    format_diagnostic,
    parse_pto,
    parse_pto_with_source_map,
    print_pto,
    verify_pto,
)

SHARED = Path(__file__).resolve().parents[3] / "shared"
CORPUS = SHARED / "corpus" / "pto"
UPSTREAM = sorted((SHARED / "reference" / "upstream-builds").glob("*/kernels/*/*.pto"))

# file -> (op named in the message, operand or symbol named in the message, message fragment)
REJECTED = {
    "tcvt_verify_invalid.pto": ("'pto.tcvt'", "dst (%dst)", "expects src and dst to have compatible shapes"),
    "tstore_verify_shape_valid_mismatch_invalid.pto": ("'pto.tstore'", "dst (%part)", "expects dst static element count"),
    "pto_entry_nonvoid_rejected.pto": ("'func.func'", "@kernel", "PTO entry functions must return void"),
    "tinsert_verify_a2a3_invalid_dtype.pto": (
        "'pto.tinsert'",
        "src (%src)",
        "expects A2/A3 tinsert element types to be src=f32, dst=f16/bf16",
    ),
}
# Upstream MLIR rejects a memref memory space from an unregistered dialect (#pto.address_space<vec>).
MLIR_GENERIC_UNSUPPORTED = {"test_inject_sync_intra_pipe_barrier.pto"}

ALL_CORPUS = sorted(CORPUS.glob("*.pto")) if CORPUS.is_dir() else []
VALID = [p for p in ALL_CORPUS if p.name not in REJECTED] + UPSTREAM

needs_shared = pytest.mark.skipif(not ALL_CORPUS, reason="../shared/corpus/pto not present")


def _mlir_parses(text: str) -> None:
    ir = pytest.importorskip("mlir.ir")
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    ir.Module.parse(text, ctx)


@needs_shared
def test_corpus_is_complete() -> None:
    """The four rejected files exist and at least 36 files are meant to be valid."""
    names = {p.name for p in ALL_CORPUS}
    assert set(REJECTED) <= names
    assert len(VALID) >= 36 + len(UPSTREAM)


@needs_shared
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_file_round_trips(path: Path) -> None:
    """Parse, verify, print; the printed text re-parses, verifies and prints identically."""
    module = parse_pto(path.read_text(), str(path))
    verify_pto(module)
    first = print_pto(module)
    again = parse_pto(first, "printed")
    verify_pto(again)
    assert print_pto(again) == first
    assert "pto." in first
    assert "!pto.tile_buf<loc=" in first or "tile_buf" not in path.read_text()


@needs_shared
@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_generic_form_parses_with_upstream_mlir(path: Path) -> None:
    """The generic form is valid MLIR for upstream MLIR with unregistered dialects."""
    if path.name in MLIR_GENERIC_UNSUPPORTED:
        pytest.skip("memref memory space from an unregistered dialect: upstream MLIR refuses it")
    module = parse_pto(path.read_text(), str(path))
    generic = print_pto(module, generic=True)
    _mlir_parses(generic)
    assert print_pto(parse_pto(generic)) == print_pto(module)


@needs_shared
@pytest.mark.parametrize("name", sorted(REJECTED))
def test_invalid_file_is_rejected_naming_op_and_operand(name: str) -> None:
    """Each deliberately invalid corpus file fails verification with a located message."""
    path = CORPUS / name
    module, source_map = parse_pto_with_source_map(path.read_text(), str(path))
    with pytest.raises(PTOVerifyError) as info:
        verify_pto(module)
    op_name, operand, fragment = REJECTED[name]
    message = info.value.message
    assert message.startswith(op_name)
    assert operand in message and fragment in message
    diag = format_diagnostic(info.value, source_map)
    assert diag.startswith(f"{path}:") and ": error: " in diag


def test_tile_buf_spellings_are_one_type() -> None:
    """The compact spelling parses to the key-list type and prints as the key list."""
    key = (
        "!pto.tile_buf<loc=acc, dtype=f32, rows=16, cols=64, v_row=16, v_col=?, blayout=col_major, "
        "slayout=row_major, fractal=1024, pad=1>"
    )
    compact = "!pto.tile_buf<acc, 16x64xf32, valid=16x?, blayout=col_major, slayout=row_major, fractal=1024, pad=1, compact=0>"
    texts = []
    for t in (key, compact):
        module = parse_pto(f"func.func @f(%t: {t}) {{\n  return\n}}")
        texts.append(print_pto(module))
        arg_type = module.body.block.first_op.body.block.args[0].type  # type: ignore[union-attr]
        assert isinstance(arg_type, TileBufType)
        assert arg_type.valid_shape() == (16, -1)
    assert texts[0] == texts[1] and key in texts[0]


@pytest.mark.parametrize(
    ("tile", "error"),
    [
        ("loc=vec, dtype=f32, cols=16, rows=16", "Expected 'rows'"),
        ("loc=vec, dtype=f32, rows=16, cols=16, v_row=32, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0", "v_row=32 is outside 0..16"),
        ("loc=gm, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=512, pad=0", "not an on-chip tile location"),
        ("loc=vec, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=row_major, slayout=none_box, fractal=64, pad=0", "fractal=64"),
    ],
)
def test_bad_tile_buf_is_a_located_parse_error(tile: str, error: str) -> None:
    """Bad tile_buf parameters are parse errors at the type."""
    from xdsl.utils.exceptions import ParseError

    with pytest.raises(ParseError) as info:
        parse_pto(f"func.func @f(%t: !pto.tile_buf<{tile}>) {{\n  return\n}}")
    assert error in str(info.value)


def _tile(loc: str = "vec", dt: str = "f32", r: int = 16, c: int = 16, vr: int | str | None = None, vc: int | str | None = None) -> str:
    vr = r if vr is None else vr
    vc = c if vc is None else vc
    blayout, slayout = {"left": ("col_major", "row_major"), "right": ("row_major", "col_major"), "acc": ("col_major", "row_major"), "mat": ("col_major", "row_major")}.get(loc, ("row_major", "none_box"))
    return (
        f"!pto.tile_buf<loc={loc}, dtype={dt}, rows={r}, cols={c}, v_row={vr}, v_col={vc}, blayout={blayout}, "
        f"slayout={slayout}, fractal={1024 if loc == 'acc' else 512}, pad=0>"
    )


def _verify(body: str, args: str = "", arch: str = "a2a3") -> str | None:
    text = f'module attributes {{pto.target_arch = "{arch}"}} {{\n  func.func @f({args}) {{\n{body}\n    return\n  }}\n}}\n'
    module = parse_pto(text)
    try:
        verify_pto(module)
    except PTOVerifyError as e:
        return e.message
    return None


V, V16, VM = _tile(), _tile(dt="f16"), _tile(loc="mat")
L, R, C = _tile("left", "f16", 16, 32), _tile("right", "f16", 32, 16), _tile("acc", "f32", 16, 16)


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        (f"%a = pto.alloc_tile : {V}\n%b = pto.alloc_tile : {V16}\npto.tadd ins(%a, %a : {V}, {V}) outs(%b : {V16})", "", "'pto.tadd' op dtype f32 differs"),
        (f"%a = pto.alloc_tile : {V}\n%b = pto.alloc_tile : {VM}\npto.texp ins(%a : {V}) outs(%b : {VM})", "", "'pto.texp' op expects loc=vec, got loc=mat [operand dst (%b)]"),
        (f"%a = pto.alloc_tile : {V}\n%b = pto.alloc_tile : {_tile(vr=8)}\npto.tmul ins(%a, %a : {V}, {V}) outs(%b : {_tile(vr=8)})", "", "'pto.tmul' op valid shape 16x16 differs from 8x16"),
        (f"%a = pto.alloc_tile : {L}\n%b = pto.alloc_tile : {_tile('right', 'f16', 16, 16)}\n%c = pto.alloc_tile : {C}\npto.tmatmul ins(%a, %b : {L}, {_tile('right', 'f16', 16, 16)}) outs(%c : {C})", "", "'pto.tmatmul' op rows 16 differ from lhs cols 32"),
        (f"%a = pto.alloc_tile : {_tile('left', 'f16', 16, 32)}\n%b = pto.alloc_tile : {_tile('right', 'f32', 32, 16)}\n%c = pto.alloc_tile : {C}\npto.tmatmul ins(%a, %b : {L}, {_tile('right', 'f32', 32, 16)}) outs(%c : {C})", "", "'pto.tmatmul' op dtypes (acc=f32, lhs=f16, rhs=f32)"),
        (f"%a = pto.alloc_tile : {V}\n%b = pto.alloc_tile : {_tile(c=2)}\npto.trowsum ins(%a, %a : {V}, {V}) outs(%b : {_tile(c=2)})", "", "'pto.trowsum' op valid cols 2 must be 1"),
        (f"%a = pto.alloc_tile : {_tile(vr='?')}", "", "'pto.alloc_tile' op result type has v_row=? and needs 'valid_row = %value'"),
        (f"%a = pto.alloc_tile valid_row = %i : {V}", "%i: index", "'pto.alloc_tile' op is given but the result type has static v_row=16"),
        ("%pv = pto.partition_view %tv, offsets = [%i], sizes = [%i] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<16x16xf32>", "%tv: !pto.tensor_view<?x?xf32>, %i: index", "'pto.partition_view' op expects 2 offsets operands"),
        ("%tv = pto.make_tensor_view %p, shape = [%i], strides = [%i] : !pto.tensor_view<?x?xf32>", "%p: !pto.ptr<f32>, %i: index", "'pto.make_tensor_view' op expects 2 shape operands"),
        ("pto.set_flag[<PIPE_V>, <PIPE_V>, <EVENT_ID0>]", "", "'pto.set_flag' op src and dst pipe are both PIPE_V"),
        (f"%a = pto.alloc_tile : {C}\npto.tload ins(%pv : !pto.partition_tensor_view<16x16xf32>) outs(%a : {C})", "%pv: !pto.partition_tensor_view<16x16xf32>", "'pto.tload' op expects loc=vec/mat, got loc=acc"),
        (f"%a = pto.alloc_tile : {V}\npto.tload ins(%pv : !pto.partition_tensor_view<8x16xf32>) outs(%a : {V})", "%pv: !pto.partition_tensor_view<8x16xf32>", "'pto.tload' op expects src static element count (128"),
        (f"%a = pto.alloc_tile : {V}\npto.tmuls ins(%a, %i : {V}, i32) outs(%a : {V})", "%i: i32", "'pto.tmuls' op expects a float scalar"),
        (f"%a = pto.alloc_tile : {V}\npto.tload ins(%a : {V}) outs(%a : {V})", "", "'pto.tload' op operand 'src' at position 0 does not verify"),
        (f"%a = pto.alloc_tile : {V}\n%b = pto.alloc_tile : {_tile('left')}\npto.tmov ins(%a : {V}) outs(%b : {_tile('left')})", "", "'pto.tmov' op moves loc=vec to loc=left"),
        (f"%a = pto.alloc_tile : {V}\n%b = pto.alloc_tile : {_tile(r=1)}\n%c = pto.alloc_tile : {V}\npto.trowexpandsub ins(%a, %b : {V}, {_tile(r=1)}) outs(%c : {V})", "", "'pto.trowexpandsub' op valid rows 1 must be 16"),
        (f"%a = pto.alloc_tile : {V}\n%r = pto.treshape %a : {V} -> {_tile(r=8, c=8)}", "", "'pto.treshape' op result holds 256 bytes"),
    ],
)
def test_verifier_messages_name_op_and_operand(body: str, args: str, expected: str) -> None:
    """Per-op verifiers: shapes, valid shapes, dtypes, address spaces."""
    message = _verify(body, args)
    assert message is not None and message.startswith(expected), message


def test_tinsert_depends_on_the_target() -> None:
    """acc f32 -> mat f32 is rejected on A2/A3 and accepted on A5."""
    acc, mat = _tile("acc"), _tile("mat")
    body = (
        f"%c0 = arith.constant 0 : index\n%a = pto.alloc_tile : {acc}\n%b = pto.alloc_tile : {mat}\n"
        f"pto.tinsert ins(%a, %c0, %c0 : {acc}, index, index) outs(%b : {mat})"
    )
    assert _verify(body, arch="a2a3") is not None
    assert _verify(body, arch="a5") is None


def test_pipes() -> None:
    """Ops report the pipe of pto-dialect.md §5."""
    text = (
        'module {\n  func.func @f(%pv: !pto.partition_tensor_view<16x16xf32>) {\n'
        f"    %m = pto.alloc_tile : {_tile('mat', 'f32')}\n    %l = pto.alloc_tile : {_tile('left', 'f32')}\n"
        f"    %c = pto.alloc_tile : {_tile('acc')}\n"
        f"    pto.tload ins(%pv : !pto.partition_tensor_view<16x16xf32>) outs(%m : {_tile('mat', 'f32')})\n"
        f"    pto.tmov ins(%m : {_tile('mat', 'f32')}) outs(%l : {_tile('left', 'f32')})\n"
        f"    pto.tstore ins(%c : {_tile('acc')}) outs(%pv : !pto.partition_tensor_view<16x16xf32>)\n"
        "    pto.record_event [#pto.pipe_event_type<TLOAD>, #pto.sync_op_type<TMOV_M2L>, <EVENT_ID3>]\n"
        "    return\n  }\n}\n"
    )
    module = parse_pto(text)
    verify_pto(module)
    ops = {type(op): op for op in module.walk()}
    assert ops[TLoadOp].pipe() == Pipe.PIPE_MTE2  # type: ignore[attr-defined]
    assert ops[TMovOp].pipe() == Pipe.PIPE_MTE1  # type: ignore[attr-defined]
    assert ops[TStoreOp].pipe() == Pipe.PIPE_FIX  # type: ignore[attr-defined]
    assert ops[RecordEventOp].pipes() == (Pipe.PIPE_MTE2, Pipe.PIPE_MTE1)  # type: ignore[attr-defined]
    assert TInsertOp.name == "pto.tinsert"


def test_sync_forms_print_short() -> None:
    """Qualified pipe/event attributes inside [...] print in the short form; both parse."""
    text = (
        "func.func @f() {\n  pto.set_flag[#pto.pipe<PIPE_MTE2>, #pto.pipe<PIPE_V>, #pto.event<EVENT_ID1>]\n"
        "  pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID1>]\n  pto.barrier #pto.pipe<PIPE_ALL>\n"
        "  pto.barrier_sync[<TVEC>]\n  return\n}\n"
    )
    out = print_pto(parse_pto(text))
    assert "pto.set_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID1>]" in out
    assert "pto.wait_flag[<PIPE_MTE2>, <PIPE_V>, <EVENT_ID1>]" in out
    assert "pto.barrier <PIPE_ALL>" in out
    assert "pto.barrier_sync[<TVEC>]" in out


@needs_shared
def test_locations_round_trip() -> None:
    """``loc("kernels.py":L:C)`` of PyPTO output is kept and printed back."""
    path = next(p for p in UPSTREAM if p.name == "add_incore_0.pto")
    out = print_pto(parse_pto(path.read_text()))
    assert 'loc("kernels.py":31:5)' in out


def test_dialect_registers_the_spec_subset() -> None:
    """Every op family of pto-dialect.md §4 that the brief lists is registered."""
    names = {op.name for op in PTO.operations}
    for name in (
        "pto.make_tensor_view", "pto.partition_view", "pto.alloc_tile", "pto.tload", "pto.tstore",
        "pto.tadd", "pto.tadds", "pto.tdivs", "pto.texp", "pto.trsqrt", "pto.trowsum", "pto.tcolsum",
        "pto.trowexpandmul", "pto.tcolexpand", "pto.texpands", "pto.tmatmul", "pto.tmatmul.acc",
        "pto.tmatmul.bias", "pto.tmov", "pto.textract", "pto.tinsert", "pto.tcvt", "pto.set_flag",
        "pto.wait_flag", "pto.barrier", "pto.record_event", "pto.wait_event",
    ):
        assert name in names, name


@needs_shared
def test_source_map_positions_are_xdsl_span_locations() -> None:
    """The source map counts lines incrementally; each op's (line, col) is what xDSL's own
    ``Span.get_location`` gives for the op's start, on every upstream kernel and corpus file that parses."""
    from xdsl.utils.exceptions import ParseError
    from xdsl.utils.lexer import Span

    from pypto.ptoas import pto_text

    class Oracle(pto_text._LocatingParser):
        def __init__(self, text: str, filename: str) -> None:
            super().__init__(text, filename)
            self.expected: dict[object, tuple[int, int]] = {}

        def parse_operation(self):  # type: ignore[no-untyped-def]
            start = self.pos
            op = super().parse_operation()
            where = Span(start, start, self.lexer.input).get_location()
            self.expected[op] = (where.line, where.col)
            return op

    checked = 0
    for path in [*UPSTREAM, *ALL_CORPUS]:
        parser = Oracle(path.read_text(), str(path))
        try:
            parser.parse_module()
        except ParseError:
            continue
        assert parser.source_map.positions == parser.expected, path.name
        checked += len(parser.expected)
    assert checked > 1000
