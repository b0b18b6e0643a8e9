// RUN: ptoas %s --pto-arch=a3 | filecheck %s --check-prefix=A3
// RUN: ptoas %s --pto-arch a5 | filecheck %s --check-prefix=A5
// RUN: ptoas --pto-level=level2 --emit pto < %s | filecheck %s --check-prefix=PTO
// RUN: not ptoas %s --pto-arch=a9 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not ptoas %s --pto-level=level3 2>&1 | filecheck %s --check-prefix=LV3

// PTOAS's command line: --pto-arch (a3 is our a2a3), the parser arch scope (a Left tile takes
// the arch's blayout), stdin by default, --pto-level's addr rule, PTOAS's error lines.

module {
  func.func @left() {
    %m = pto.alloc_tile : !pto.tile_buf<loc=mat, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>
    %l = pto.alloc_tile : !pto.tile_buf<loc=left, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>
    pto.tmov ins(%m : !pto.tile_buf<loc=mat, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>) outs(%l : !pto.tile_buf<loc=left, dtype=f32, rows=16, cols=16, v_row=16, v_col=16, blayout=col_major, slayout=row_major, fractal=512, pad=0>)
    return
  }
}

// A3: C++ for @left; target a2a3.
// A3: Tile<TileType::Left, float, 16, 16, BLayout::RowMajor, 16, 16, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null>
// A5: C++ for @left; target a5.
// A5: Tile<TileType::Left, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor, 512, PadValue::Null, CompactMode::Null>
// PTO: pto.alloc_tile addr =
// PTO: pto.tmov
// BAD: Error: invalid --pto-arch='a9'. Expected 'a3' or 'a5'.
// LV3: error: 'pto.alloc_tile' op requires 'addr' operand when --pto-level=level3
