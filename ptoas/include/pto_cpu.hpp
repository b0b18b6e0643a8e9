// pto_cpu.hpp -- the part of the PTO C++ API (pto-isa) that ptoas-generated kernels use, on the CPU.
//
// PyPTO on xDSL. This header is our own: it is not pto-isa's CPU simulator. It implements, with plain
// loops, exactly the calls `pypto.ptoas.emitc` emits (see docs/ptoas_cpp.md):
//
//   * types: half (_Float16), bfloat16_t, Tile<...>, GlobalTensor<...>, pto::Shape<...>, pto::Stride<...>
//   * TASSIGN: a tile is a window of its core's on-chip buffer (a2a3 sizes: UB 192 KiB, L1 512 KiB,
//     L0A/L0B 64 KiB, L0C 128 KiB, bias 64 KiB, scaling 192 KiB); bounds and alignment are checked
//   * data movement TLOAD/TSTORE/TMOV/TEXTRACT/TINSERT/TRESHAPE, cube TMATMUL[_ACC|_BIAS]/TGEMV*
//     (fp32 accumulation; int32 for int8) and TMATMUL_MX/TGEMV_MX (f8 operands, per-32 scales), the vector ops (element-wise, tile-scalar, unary, ternary,
//     row/column reductions and expands, TCVT with rounding modes, TCMP/TCMPS/TSEL, TTRANS, TPRINT)
//   * sync: set_flag/wait_flag/pipe_barrier are checked no-ops: a wait_flag without a pending
//     set_flag, a second set_flag of a pending event, or a set_flag never waited for by the end of
//     the kernel is a run-time error
//   * cross-core pipes: TPUSH_TO_AIV/TPOP_FROM_AIC/TFREE_FROM_AIC (cube -> vector, "c2v") and
//     TPUSH_TO_AIC/TPOP_FROM_AIV/TFREE_FROM_AIV (vector -> cube, "v2c"). One process-wide FIFO per
//     direction holds copies of pushed tiles (the valid region's elements in row-major order, the
//     valid shape and the element size); TPOP copies the oldest entry into its (TASSIGNed) tile,
//     which must have the same valid shape and element size. Popping an empty FIFO, a
//     TFREE without an unfreed TPOP and a split other than 0 are run-time errors (a slot not freed
//     by the end of the kernel is released with it). The FIFOs outlive launches (run the pushing kernel, then the
//     popping one; they are shared by every kernel library of the process, being a function-local
//     static of an inline function, which g++ makes a GNU unique symbol); pto_cpu_reset_pipes()
//     empties both, pto_cpu_pipe_size(0 = c2v, 1 = v2c) counts the entries waiting.
//
// Errors throw pto::cpu::Error; pto::cpu::launch() (used by the extern "C" wrappers) catches them and
// keeps the message for pto_cpu_last_error(). Storage order of a tile: row-major for
// BLayout::RowMajor, column-major for BLayout::ColMajor; fractal (SLayout) boxing is not modelled.
// Uninitialised on-chip memory reads as 0xFF bytes (NaN for floats) so reading it shows up: a kernel that
// names the bytes it may read before writing them (pto::cpu::fill_before_read, which ptoas emits first in
// an entry function) gets those filled at its start; any other kernel gets each TASSIGNed range filled at
// its first TASSIGN of the launch (a range TASSIGNed again keeps what the launch wrote there).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __ubuf__  // on-chip pointer qualifiers (PTOAS writes them on tile data pointers)
#define __ubuf__
#define __cbuf__
#define __ca__
#define __cb__
#define __cc__
#define __fbuf__
#endif
#ifndef AICORE
#define AICORE
#endif
#ifndef __global__
#define __global__
#endif
#ifndef PTO_INST
#define PTO_INST inline
#endif

// A CPU build without a core kind runs both the cube and the vector sections, in program order.
#if !defined(__DAV_CUBE__) && !defined(__DAV_VEC__)
#define __DAV_CUBE__ 1
#define __DAV_VEC__ 1
#endif

// ---------------------------------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------------------------------
using half = _Float16;

// f8 element types (PTOAS's spellings of the f8E4M3* / f8E5M2* families, and pto-isa's e8m0 scale
// type for f8E8M0FNU): stored as their codes; the mx cube ops decode them (cpu::f8_table).
struct float8_e4m3_t {
    uint8_t bits;
};
struct float8_e5m2_t {
    uint8_t bits;
};
struct float8_e8m0_t {
    uint8_t bits;
};
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    bfloat16_t(float f) : bits(from_float(f)) {}  // NOLINT: implicit like a built-in float type
    bfloat16_t(double d) : bits(from_float(static_cast<float>(d))) {}
    bfloat16_t(int i) : bits(from_float(static_cast<float>(i))) {}
    operator float() const {
        uint32_t u = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
    static bfloat16_t from_bits(uint16_t b) {
        bfloat16_t r;
        r.bits = b;
        return r;
    }
    static uint16_t from_float(float f) {  // round to nearest even
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
        u += 0x7fffu + ((u >> 16) & 1u);
        return static_cast<uint16_t>(u >> 16);
    }
};

// ---------------------------------------------------------------------------------------------------
// Pipes and events (global, as in the CCE headers)
// ---------------------------------------------------------------------------------------------------
enum pipe_t : int {
    PIPE_S = 0,
    PIPE_V = 1,
    PIPE_M = 2,
    PIPE_MTE1 = 3,
    PIPE_MTE2 = 4,
    PIPE_MTE3 = 5,
    PIPE_ALL = 6,
    PIPE_MTE4 = 7,
    PIPE_MTE5 = 8,
    PIPE_V2 = 9,
    PIPE_FIX = 10,
    VIRTUAL_PIPE_MTE2_L1A = 11,
    VIRTUAL_PIPE_MTE2_L1B = 12,
    PIPE_NUM = 13,
};

enum event_t : int {
    EVENT_ID0 = 0,
    EVENT_ID1,
    EVENT_ID2,
    EVENT_ID3,
    EVENT_ID4,
    EVENT_ID5,
    EVENT_ID6,
    EVENT_ID7,
};

namespace pto {

enum class TileType { Vec, Mat, Left, Right, Acc, Bias, Scaling };
enum class BLayout { RowMajor, ColMajor };
enum class SLayout { NoneBox, RowMajor, ColMajor };
enum class PadValue { Null, Zero, Max, Min };
enum class CompactMode { Null, Normal, RowPlusOne };
enum class Layout { ND, DN, NZ };
enum class RoundMode { CAST_NONE, CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD };
enum class CmpMode { EQ, NE, LT, LE, GT, GE };
enum class STPhase { Unspecified, Partial, Final };
enum class AtomicType { AtomicNone, AtomicAdd };
enum class ReluPreMode { NoRelu, NormalRelu };
enum class AccToVecMode { SingleModeVec0, SingleModeVec1, DualModeSplitM, DualModeSplitN };

namespace cpu {

// ----------------------------------------------------------------------------- errors and core state
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void fail(const std::string &msg) { throw Error(msg); }

inline const char *pipe_name(int p) {
    static const char *names[] = {"PIPE_S",    "PIPE_V",    "PIPE_M",    "PIPE_MTE1", "PIPE_MTE2",
                                  "PIPE_MTE3", "PIPE_ALL",  "PIPE_MTE4", "PIPE_MTE5", "PIPE_V2",
                                  "PIPE_FIX",  "VIRTUAL_PIPE_MTE2_L1A",  "VIRTUAL_PIPE_MTE2_L1B"};
    return (p >= 0 && p < PIPE_NUM) ? names[p] : "PIPE_?";
}

// The a2a3 target (pypto/target/targets/a2a3.mlir): its spaces, in TileType order, their capacities
// (bytes) and TASSIGN alignment, and the event ids per pipe pair. test/python/test_target_cpp_header.py
// fails when these drift from the target description.
constexpr int kSpaces = 7;
constexpr int kEventIds = 8;
constexpr std::size_t kCapacity[kSpaces] = {196608, 524288, 65536, 65536, 131072, 65536, 196608};
constexpr std::size_t kAlign[kSpaces] = {32, 32, 512, 512, 512, 32, 32};
inline const char *space_name(TileType t) {
    static const char *names[] = {"Vec (UB)", "Mat (L1)", "Left (L0A)", "Right (L0B)",
                                  "Acc (L0C)", "Bias",     "Scaling"};
    return names[static_cast<int>(t)];
}

// One block for a core's on-chip spaces (1.2 MiB), 2 MiB-aligned and, on Linux, asked to be one
// transparent huge page: a launch right after other work (the interpreter, Python) then walks one TLB
// entry for all of its tiles instead of a 4 KiB page each (on a VM each walk is nested).
struct OnChipBlock {
    static constexpr std::size_t kHuge = std::size_t(2) << 20;
    unsigned char *base = nullptr;
    explicit OnChipBlock(std::size_t bytes) {
        const std::size_t size = (bytes + kHuge - 1) / kHuge * kHuge;
        base = static_cast<unsigned char *>(std::aligned_alloc(kHuge, size));
        if (base == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(PTO_CPU_NO_THP)
        madvise(base, size, MADV_HUGEPAGE);  // advice only: without THP the block is ordinary pages
#endif
    }
    ~OnChipBlock() { std::free(base); }
    OnChipBlock(const OnChipBlock &) = delete;
    OnChipBlock &operator=(const OnChipBlock &) = delete;
};

constexpr std::size_t on_chip_bytes() {
    std::size_t total = 0;
    for (int s = 0; s < kSpaces; ++s) total += (kCapacity[s] + 4095) / 4096 * 4096;
    return total;
}

struct CoreState {
    OnChipBlock block{on_chip_bytes()};
    unsigned char *mem[kSpaces] = {};
    bool fill_on_assign = true;  // false once the kernel named its bytes read before written (fill_before_read)
    std::vector<std::pair<std::size_t, std::size_t>> filled[kSpaces];  // filled since the reset: sorted, disjoint
    int flags[PIPE_NUM][PIPE_NUM][kEventIds] = {};
    int64_t popped[2] = {};  // TPOP_FROM_AIC (c2v) / TPOP_FROM_AIV (v2c) slots not yet freed
    int64_t block_idx = 0, block_num = 1, subblock_idx = 0, subblock_num = 1;
    std::string kernel;

    CoreState() {
        std::size_t at = 0;
        for (int s = 0; s < kSpaces; ++s) {
            mem[s] = block.base + at;
            at += (kCapacity[s] + 4095) / 4096 * 4096;
        }
    }
    void reset(const char *name) {
        kernel = name;
        fill_on_assign = true;
        for (auto &ranges : filled) ranges.clear();
        std::memset(flags, 0, sizeof(flags));
        popped[0] = popped[1] = 0;
    }
    // 0xFF over the bytes of [lo, hi) of space s not filled since the reset (a TASSIGN of a kernel without
    // fill_before_read): what an earlier tile of this launch wrote there stays.
    void fill_new(int s, std::size_t lo, std::size_t hi) {
        auto &done = filled[s];
        auto it = done.begin();
        while (it != done.end() && it->second < lo) ++it;
        if (it != done.end() && it->first <= lo && hi <= it->second) return;  // all filled already
        const auto first = it;
        std::size_t pos = lo, new_lo = lo, new_hi = hi;
        for (; it != done.end() && it->first <= hi; ++it) {  // the ranges it overlaps or touches
            if (it->first > pos) std::memset(mem[s] + pos, 0xFF, it->first - pos);
            pos = std::max(pos, it->second);
            new_lo = std::min(new_lo, it->first);
            new_hi = std::max(new_hi, it->second);
        }
        if (pos < hi) std::memset(mem[s] + pos, 0xFF, hi - pos);
        done.insert(done.erase(first, it), {new_lo, new_hi});
    }
    void finish() {
        for (int a = 0; a < PIPE_NUM; ++a)
            for (int b = 0; b < PIPE_NUM; ++b)
                for (int e = 0; e < kEventIds; ++e)
                    if (flags[a][b][e])
                        fail(std::string("set_flag(") + pipe_name(a) + ", " + pipe_name(b) + ", EVENT_ID" +
                             std::to_string(e) + ") is never waited for (no matching wait_flag before the kernel ends)");
        // A popped slot need not be freed before the kernel ends (PyPTO's pipeline emits no TFREE; the
        // slot is released with the kernel), so unfreed pops are not an error.
    }
};

// One simulated core per host thread.
inline CoreState &core() {
    static thread_local CoreState state;
    return state;
}

inline std::string &last_error() {
    static thread_local std::string message;
    return message;
}

// Bytes [lo, hi) of an on-chip space.
struct FillRange {
    TileType loc;
    std::size_t lo, hi;
};

// The first call of a kernel whose on-chip reads ptoas analysed (emitc/fill.py): 0xFF over exactly the
// bytes it may read before writing them (a read of any other byte comes after a write of it in this
// launch), and no fill at its TASSIGNs. The launch then reads what it would read with every byte 0xFF at
// its start, without filling the bytes it writes first.
inline void fill_before_read(std::initializer_list<FillRange> ranges) {
    CoreState &c = core();
    c.fill_on_assign = false;
    for (const FillRange &r : ranges) {  // bytes past the space: its TASSIGN reports the overflow
        const int s = static_cast<int>(r.loc);
        const std::size_t hi = std::min(r.hi, kCapacity[s]);
        if (r.lo < hi) std::memset(c.mem[s] + r.lo, 0xFF, hi - r.lo);
    }
}

// Run a kernel body on this thread's core: reset buffers and flags, run, check flags; 0 or 1.
template <typename F>
inline int launch(const char *name, F &&body) {
    CoreState &c = core();
    try {
        c.reset(name);
        body();
        c.finish();
        last_error().clear();
        return 0;
    } catch (const std::exception &e) {
        last_error() = std::string(name) + ": " + e.what();
        return 1;
    }
}

// Kernel arguments packed in int64 slots: pointers, integers, and floats by their bit pattern.
template <typename T>
inline T arg(int64_t slot) {
    if constexpr (std::is_pointer_v<T>) {
        return reinterpret_cast<T>(static_cast<intptr_t>(slot));
    } else if constexpr (std::is_same_v<T, float>) {
        uint32_t u = static_cast<uint32_t>(slot);
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    } else if constexpr (std::is_same_v<T, double>) {
        double d;
        std::memcpy(&d, &slot, 8);
        return d;
    } else if constexpr (std::is_same_v<T, half>) {
        uint16_t u = static_cast<uint16_t>(slot);
        half h;
        std::memcpy(&h, &u, 2);
        return h;
    } else if constexpr (std::is_same_v<T, bfloat16_t>) {
        return bfloat16_t::from_bits(static_cast<uint16_t>(slot));
    } else {
        return static_cast<T>(slot);
    }
}

// ----------------------------------------------------------------------------- numeric helpers
template <typename T> struct calc { using type = T; };
template <> struct calc<half> { using type = float; };
template <> struct calc<bfloat16_t> { using type = float; };
template <> struct calc<int8_t> { using type = int32_t; };
template <> struct calc<uint8_t> { using type = uint32_t; };
template <> struct calc<int16_t> { using type = int32_t; };
template <> struct calc<uint16_t> { using type = uint32_t; };
template <> struct calc<bool> { using type = int32_t; };
template <typename T> using calc_t = typename calc<T>::type;

template <typename T>
constexpr bool is_float_v = std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>;

template <typename T>
inline calc_t<T> up(T v) {
    if constexpr (std::is_same_v<T, bfloat16_t>) return static_cast<float>(v);
    else return static_cast<calc_t<T>>(v);
}

// Convert a computed value to an element type (floats round to nearest even; ints truncate, saturate).
template <typename To, typename From>
inline To to(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (std::is_same_v<To, bfloat16_t>) {
        return bfloat16_t(static_cast<float>(v));
    } else if constexpr (std::is_same_v<From, bfloat16_t>) {
        return to<To>(static_cast<float>(v));
    } else if constexpr (std::is_integral_v<To> && is_float_v<From>) {
        double d = static_cast<double>(v);
        if (std::isnan(d)) return To(0);
        if (d <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
        if (d >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
        return static_cast<To>(d);
    } else {
        return static_cast<To>(v);
    }
}

template <typename T> struct float_bits;
template <> struct float_bits<float> { using U = uint32_t; };
template <> struct float_bits<half> { using U = uint16_t; };
template <> struct float_bits<bfloat16_t> { using U = uint16_t; };

template <typename F>
inline typename float_bits<F>::U bits_of(F v) {
    if constexpr (std::is_same_v<F, bfloat16_t>) {
        return v.bits;
    } else {
        typename float_bits<F>::U u;
        std::memcpy(&u, &v, sizeof(u));
        return u;
    }
}
template <typename F>
inline F from_bits(typename float_bits<F>::U u) {
    if constexpr (std::is_same_v<F, bfloat16_t>) {
        return bfloat16_t::from_bits(u);
    } else {
        F r;
        std::memcpy(&r, &u, sizeof(u));
        return r;
    }
}

// The neighbouring representable value of a float type (towards +inf if up_dir).
template <typename F>
inline F step(F v, bool up_dir) {
    using U = typename float_bits<F>::U;
    U u = bits_of(v);
    const U sign = static_cast<U>(U(1) << (8 * sizeof(U) - 1));
    double d = static_cast<double>(static_cast<float>(v));
    if (std::isnan(d) || std::isinf(d)) return v;
    if (d == 0.0) {
        u = static_cast<U>(up_dir ? 1 : (sign | 1));
    } else if ((d > 0) == up_dir) {
        u = static_cast<U>(u + 1);
    } else {
        u = static_cast<U>(u - 1);
    }
    return from_bits<F>(u);
}

inline double round_int(double x, RoundMode m) {
    switch (m) {
    case RoundMode::CAST_ROUND: return std::round(x);
    case RoundMode::CAST_FLOOR: return std::floor(x);
    case RoundMode::CAST_CEIL: return std::ceil(x);
    case RoundMode::CAST_TRUNC: return std::trunc(x);
    default: return std::nearbyint(x);
    }
}

// TCVT's conversion of one value under a rounding mode.
template <typename To, typename From>
inline To convert(From v, RoundMode m) {
    double x = static_cast<double>(up(v));
    if constexpr (std::is_integral_v<To>) {
        if constexpr (is_float_v<From>) {
            if (std::isnan(x)) return To(0);
            x = round_int(x, m);
            if (x <= static_cast<double>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
            if (x >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
            return static_cast<To>(x);
        } else {
            return static_cast<To>(v);
        }
    } else if constexpr (std::is_same_v<To, double>) {
        return x;
    } else {
        To r = std::is_same_v<To, bfloat16_t> ? To(static_cast<float>(x)) : static_cast<To>(x);
        double rd = static_cast<double>(static_cast<float>(r));
        if (std::isnan(x) || rd == x || std::isinf(rd)) return r;
        switch (m) {
        case RoundMode::CAST_FLOOR:
            if (rd > x) r = step(r, false);
            break;
        case RoundMode::CAST_CEIL:
            if (rd < x) r = step(r, true);
            break;
        case RoundMode::CAST_TRUNC:
            if (std::fabs(rd) > std::fabs(x)) r = step(r, x < 0);
            break;
        case RoundMode::CAST_ROUND: {  // nearest, ties away from zero
            To other = step(r, x > rd);
            double od = static_cast<double>(static_cast<float>(other));
            if (std::fabs(x - rd) == std::fabs(od - x) && std::fabs(od) > std::fabs(rd)) r = other;
            break;
        }
        case RoundMode::CAST_ODD: {  // inexact results take the neighbour with an odd last bit
            if ((bits_of(r) & 1u) == 0) r = step(r, x > rd);
            break;
        }
        default: break;
        }
        return r;
    }
}

inline int64_t ceildiv(int64_t a, int64_t b) { return a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0); }
inline int64_t floordiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

template <typename T>
inline T pad_value(PadValue p) {
    if (p == PadValue::Zero) return to<T>(0);
    if constexpr (is_float_v<T>) {
        float inf = std::numeric_limits<float>::infinity();
        return to<T>(p == PadValue::Max ? inf : -inf);
    } else {
        return p == PadValue::Max ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
    }
}

}  // namespace cpu

// ---------------------------------------------------------------------------------------------------
// GM descriptors
// ---------------------------------------------------------------------------------------------------
namespace detail {
template <int... Ds>
struct Dims5 {
    static_assert(sizeof...(Ds) == 5, "pto::Shape / pto::Stride take 5 dims");
    static constexpr int kStatic[5] = {Ds...};
    int64_t v[5] = {Ds...};
    Dims5() = default;
    // Runtime values for the -1 dims, in order (or all five).
    template <typename... Args, typename = std::enable_if_t<(sizeof...(Args) > 0)>>
    explicit Dims5(Args... args) {
        int64_t given[] = {static_cast<int64_t>(args)...};
        constexpr int n = static_cast<int>(sizeof...(Args));
        if (n == 5) {
            for (int i = 0; i < 5; ++i) v[i] = given[i];
            return;
        }
        int k = 0;
        for (int i = 0; i < 5; ++i)
            if (kStatic[i] < 0) {
                if (k >= n) cpu::fail("pto::Shape/Stride: too few runtime dims");
                v[i] = given[k++];
            }
        if (k != n) cpu::fail("pto::Shape/Stride: too many runtime dims");
    }
    int64_t operator[](int i) const { return v[i]; }
};
}  // namespace detail

template <int D0, int D1, int D2, int D3, int D4>
struct Shape : detail::Dims5<D0, D1, D2, D3, D4> {
    using detail::Dims5<D0, D1, D2, D3, D4>::Dims5;
};

template <int S0, int S1, int S2, int S3, int S4>
struct Stride : detail::Dims5<S0, S1, S2, S3, S4> {
    using detail::Dims5<S0, S1, S2, S3, S4>::Dims5;
};

template <typename Element_, typename Shape_, typename Stride_, Layout Layout_ = Layout::ND>
struct GlobalTensor {
    using DType = Element_;
    static constexpr Layout layout = Layout_;
    DType *ptr = nullptr;
    Shape_ shape;
    Stride_ stride;
    GlobalTensor() = default;
    explicit GlobalTensor(DType *p) : ptr(p) {}
    GlobalTensor(DType *p, const Shape_ &sh, const Stride_ &st) : ptr(p), shape(sh), stride(st) {}
    DType *data() const { return ptr; }
    // The view as rows x cols: dims 0..3 flattened into rows, dim 4 is cols.
    int64_t rows() const { return shape[0] * shape[1] * shape[2] * shape[3]; }
    int64_t cols() const { return shape[4]; }
    // Element offset of (r, 0): row r split over dims 3..0.
    int64_t row_offset(int64_t r) const {
        if (shape[0] == 1 && shape[1] == 1 && shape[2] == 1) return r * stride[3];  // a 2-D view: no divisions
        int64_t off = 0;
        for (int d = 3; d >= 0; --d) {
            off += (r % shape[d]) * stride[d];
            r /= shape[d];
        }
        return off;
    }
    DType &at(int64_t r, int64_t c) const { return ptr[row_offset(r) + c * stride[4]]; }
    void check(const char *op) const {
        if (ptr == nullptr) cpu::fail(std::string(op) + ": GlobalTensor has a null pointer");
        for (int i = 0; i < 5; ++i)
            if (shape[i] < 0 || stride[i] < 0)
                cpu::fail(std::string(op) + ": GlobalTensor has a dynamic (-1) dim without a runtime value");
    }
};

// ---------------------------------------------------------------------------------------------------
// Tiles
// ---------------------------------------------------------------------------------------------------
template <TileType Loc_, typename Element_, int Rows_, int Cols_, BLayout BLayout_ = BLayout::RowMajor,
          int RowValid_ = Rows_, int ColValid_ = Cols_, SLayout SLayout_ = SLayout::NoneBox, int Fractal_ = 512,
          PadValue Pad_ = PadValue::Null, CompactMode Compact_ = CompactMode::Null>
struct Tile {
    using DType = Element_;
    static constexpr TileType Loc = Loc_;
    static constexpr int Rows = Rows_;
    static constexpr int Cols = Cols_;
    static constexpr BLayout BL = BLayout_;
    static constexpr SLayout SL = SLayout_;
    static constexpr PadValue Pad = Pad_;
    static constexpr int Numel = Rows_ * Cols_;
    static constexpr std::size_t Bytes = sizeof(Element_) * static_cast<std::size_t>(Rows_) * Cols_;
    static_assert(Rows_ >= 0 && Cols_ >= 0, "Tile shape must be non-negative");

    DType *data_ = nullptr;
    int64_t addr_ = -1;
    int64_t valid_row_ = RowValid_ < 0 ? Rows_ : RowValid_;
    int64_t valid_col_ = ColValid_ < 0 ? Cols_ : ColValid_;

    Tile() = default;
    Tile(int64_t valid_row, int64_t valid_col) {
        SetValidRow(valid_row);
        SetValidCol(valid_col);
    }
    void SetValidRow(int64_t r) {
        if (r < 0 || r > Rows_) cpu::fail("Tile: valid row count " + std::to_string(r) + " outside 0.." + std::to_string(Rows_));
        valid_row_ = r;
    }
    void SetValidCol(int64_t c) {
        if (c < 0 || c > Cols_) cpu::fail("Tile: valid col count " + std::to_string(c) + " outside 0.." + std::to_string(Cols_));
        valid_col_ = c;
    }
    void SetValidShape(int64_t r, int64_t c) {
        SetValidRow(r);
        SetValidCol(c);
    }
    int64_t GetValidRow() const { return valid_row_; }
    int64_t GetValidCol() const { return valid_col_; }
    DType *data() const { return data_; }
    void check(const char *op) const {
        if (data_ == nullptr) cpu::fail(std::string(op) + ": tile used before TASSIGN gave it an address");
    }
    DType &at(int64_t r, int64_t c) const {
        return BLayout_ == BLayout::RowMajor ? data_[r * Cols_ + c] : data_[c * Rows_ + r];
    }
};

template <typename T> struct is_tile : std::false_type {};
template <TileType L, typename E, int R, int C, BLayout B, int VR, int VC, SLayout S, int F, PadValue P, CompactMode M>
struct is_tile<Tile<L, E, R, C, B, VR, VC, S, F, P, M>> : std::true_type {};
template <typename T> constexpr bool is_tile_v = is_tile<std::remove_cv_t<std::remove_reference_t<T>>>::value;

// Bind a tile to a byte offset of its core buffer.
template <typename TileT, typename AddrT>
PTO_INST void TASSIGN(TileT &tile, AddrT addr) {
    static_assert(is_tile_v<TileT>, "TASSIGN takes a Tile");
    const int space = static_cast<int>(TileT::Loc);
    int64_t a = static_cast<int64_t>(addr);
    const std::size_t cap = cpu::kCapacity[space];
    // PTOAS also assigns the address of another tile's data (reinterpret_cast<uint64_t>(base.data())):
    // a host pointer into this space's buffer is taken as that byte offset.
    const auto host = reinterpret_cast<std::uintptr_t>(cpu::core().mem[space]);
    if (static_cast<std::uintptr_t>(addr) >= host && static_cast<std::uintptr_t>(addr) < host + cap)
        a = static_cast<int64_t>(static_cast<std::uintptr_t>(addr) - host);
    if (a < 0 || static_cast<std::size_t>(a) + TileT::Bytes > cap)
        cpu::fail("TASSIGN: " + std::to_string(TileT::Rows) + "x" + std::to_string(TileT::Cols) + " tile (" +
                  std::to_string(TileT::Bytes) + " bytes) at byte " + std::to_string(a) + " overflows " +
                  cpu::space_name(TileT::Loc) + " (" + std::to_string(cap) + " bytes)");
    if (a % static_cast<int64_t>(cpu::kAlign[space]) != 0)
        cpu::fail("TASSIGN: byte address " + std::to_string(a) + " in " + cpu::space_name(TileT::Loc) +
                  " is not " + std::to_string(cpu::kAlign[space]) + "-byte aligned");
    tile.addr_ = a;
    cpu::CoreState &core = cpu::core();
    if (core.fill_on_assign) core.fill_new(space, static_cast<std::size_t>(a), static_cast<std::size_t>(a) + TileT::Bytes);
    tile.data_ = reinterpret_cast<typename TileT::DType *>(core.mem[space] + a);
}

namespace cpu {
inline std::string dims(int64_t r, int64_t c) { return std::to_string(r) + "x" + std::to_string(c); }

template <typename D, typename S>
inline void need_valid(const char *op, const D &d, const S &s, const char *what) {
    if (s.GetValidRow() < d.GetValidRow() || s.GetValidCol() < d.GetValidCol())
        fail(std::string(op) + ": " + what + " valid shape " + dims(s.GetValidRow(), s.GetValidCol()) +
             " is smaller than the destination's " + dims(d.GetValidRow(), d.GetValidCol()));
}

template <typename D, typename F>
inline void for_valid(const D &d, F &&f) {
    for (int64_t r = 0; r < d.GetValidRow(); ++r)
        for (int64_t c = 0; c < d.GetValidCol(); ++c) f(r, c);
}

template <typename D>
inline void fill_pad(D &d) {
    if constexpr (D::Pad != PadValue::Null) {
        using T = typename D::DType;
        const T v = pad_value<T>(D::Pad);
        for (int64_t r = 0; r < D::Rows; ++r)
            for (int64_t c = 0; c < D::Cols; ++c)
                if (r >= d.GetValidRow() || c >= d.GetValidCol()) d.at(r, c) = v;
    }
}

// dst = src's valid region (src may be smaller: a run-time valid shape), dst's pad value elsewhere.
template <typename D, typename S>
inline void fillpad(const char *op, D &d, S &s) {
    d.check(op);
    s.check(op);
    using T = typename D::DType;
    const int64_t vr = std::min<int64_t>(s.GetValidRow(), d.GetValidRow());
    const int64_t vc = std::min<int64_t>(s.GetValidCol(), d.GetValidCol());
    for (int64_t r = 0; r < vr; ++r)
        for (int64_t c = 0; c < vc; ++c) d.at(r, c) = to<T>(up(s.at(r, c)));
    if constexpr (D::Pad != PadValue::Null) {
        const T v = pad_value<T>(D::Pad);
        for_valid(d, [&](int64_t r, int64_t c) {
            if (r >= vr || c >= vc) d.at(r, c) = v;
        });
    }
}

template <typename To, typename From>
inline To bitwise_or_convert(From v) {
    if constexpr (sizeof(To) == sizeof(From) && !std::is_same_v<To, From> &&
                  (std::is_integral_v<To> != std::is_integral_v<From>)) {
        To r;
        std::memcpy(&r, &v, sizeof(To));
        return r;
    } else {
        return to<To>(v);
    }
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(PTO_CPU_NO_AVX2)
// out row j = in column j of an 8x8 block of 4-byte elements (in rows at in + i * is, out rows at
// out + j * os): eight 32-byte loads, the unpack / shuffle / lane-swap transpose, eight stores.
typedef int32_t i32x8 __attribute__((vector_size(32)));
__attribute__((target("avx2"))) inline void transpose8x8(const void *in, int64_t is, void *out, int64_t os) {
    i32x8 r[8], t[8];
    for (int i = 0; i < 8; ++i) std::memcpy(&r[i], static_cast<const int32_t *>(in) + i * is, 32);
    for (int i = 0; i < 8; i += 2) {  // pairs: (a0 b0 a1 b1 | a4 b4 a5 b5), (a2 b2 a3 b3 | a6 b6 a7 b7)
        t[i] = __builtin_shuffle(r[i], r[i + 1], i32x8{0, 8, 1, 9, 4, 12, 5, 13});
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], i32x8{2, 10, 3, 11, 6, 14, 7, 15});
    }
    for (int i = 0; i < 8; i += 4)  // quads: (a0 b0 c0 d0 | a4 b4 c4 d4), ... within each 128-bit lane
        for (int h = 0; h < 2; ++h) {
            r[i + 2 * h] = __builtin_shuffle(t[i + h], t[i + h + 2], i32x8{0, 1, 8, 9, 4, 5, 12, 13});
            r[i + 2 * h + 1] = __builtin_shuffle(t[i + h], t[i + h + 2], i32x8{2, 3, 10, 11, 6, 7, 14, 15});
        }
    // r[0]: column 0 (rows 0-3) | column 4, r[1]: 1 | 5, r[2]: 2 | 6, r[3]: 3 | 7, for rows 0-3; r[4..7] rows 4-7
    for (int j = 0; j < 4; ++j) {
        const i32x8 lo = __builtin_shuffle(r[j], r[j + 4], i32x8{0, 1, 2, 3, 8, 9, 10, 11});
        const i32x8 hi = __builtin_shuffle(r[j], r[j + 4], i32x8{4, 5, 6, 7, 12, 13, 14, 15});
        std::memcpy(static_cast<int32_t *>(out) + j * os, &lo, 32);
        std::memcpy(static_cast<int32_t *>(out) + (j + 4) * os, &hi, 32);
    }
}
inline bool has_avx2_moves() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}
#define PTO_CPU_TRANSPOSE8 1
#endif

// d(r, c) = f(s(r, c)) for r < rows, c < cols, the elements addressed by (row stride, column stride).
// A column-major side is walked in blocks of 8 rows (or columns) so that both sides move through
// memory in runs, not one element per cache line. ``Plain``: f returns its argument unchanged (the
// callers' conversions between one type), so a 4-byte copy that transposes (one side row-major, the
// other column-major) moves 8x8 blocks with transpose8x8 (bits moved, never computed).
template <bool Plain = false, typename DT, typename ST, typename F>
inline void copy2d(DT *d, int64_t drs, int64_t dcs, const ST *s, int64_t srs, int64_t scs, int64_t rows,
                   int64_t cols, F &&f) {
    constexpr int64_t kB = 8;
#if defined(PTO_CPU_TRANSPOSE8)
    if constexpr (Plain && std::is_same_v<DT, ST> && sizeof(DT) == 4) {
        const bool d_cm = drs == 1 && dcs != 1, s_rm = scs == 1 && srs != 1;
        const bool d_rm = dcs == 1 && drs != 1, s_cm = srs == 1 && scs != 1;
        if (((d_cm && s_rm) || (d_rm && s_cm)) && rows >= 8 && cols >= 8 && has_avx2_moves()) {
            // d_cm: out row (column c of d) at d + c * dcs, in rows (rows of s) at s + r * srs;
            // d_rm: out row (row r of d) at d + r * drs, in rows (columns of s) at s + c * scs
            const int64_t r8 = rows - rows % 8, c8 = cols - cols % 8;
            for (int64_t r0 = 0; r0 < r8; r0 += 8)
                for (int64_t c0 = 0; c0 < c8; c0 += 8) {
                    if (d_cm)
                        transpose8x8(s + r0 * srs + c0, srs, d + c0 * dcs + r0, dcs);
                    else
                        transpose8x8(s + c0 * scs + r0, scs, d + r0 * drs + c0, drs);
                }
            for (int64_t r = 0; r < rows; ++r)  // the edges past the last whole 8x8 block
                for (int64_t c = (r < r8 ? c8 : 0); c < cols; ++c) d[r * drs + c * dcs] = s[r * srs + c * scs];
            return;
        }
    }
#endif
    if (drs == 1 && srs == 1 && dcs != 1) {  // both column-major: column by column, contiguous
        for (int64_t c = 0; c < cols; ++c) {
            DT *dc = d + c * dcs;
            const ST *sc = s + c * scs;
            for (int64_t r = 0; r < rows; ++r) dc[r] = f(sc[r]);
        }
    } else if (drs == 1 && dcs != 1) {  // the destination is column-major: runs of up to 8 rows per column
        for (int64_t r0 = 0; r0 < rows; r0 += kB) {
            const int64_t rb = std::min(kB, rows - r0);
            for (int64_t c = 0; c < cols; ++c)
                for (int64_t rr = 0; rr < rb; ++rr) d[r0 + rr + c * dcs] = f(s[(r0 + rr) * srs + c * scs]);
        }
    } else if (srs == 1 && scs != 1) {  // the source is column-major: runs of up to 8 columns per row
        for (int64_t c0 = 0; c0 < cols; c0 += kB) {
            const int64_t cb = std::min(kB, cols - c0);
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t cc = 0; cc < cb; ++cc) d[r * drs + (c0 + cc) * dcs] = f(s[r + (c0 + cc) * scs]);
        }
    } else {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < cols; ++c) d[r * drs + c * dcs] = f(s[r * srs + c * scs]);
    }
}
// A tile's (row stride, column stride) in elements.
template <typename Tl>
constexpr int64_t row_stride() { return Tl::BL == BLayout::RowMajor ? Tl::Cols : 1; }
template <typename Tl>
constexpr int64_t col_stride() { return Tl::BL == BLayout::RowMajor ? 1 : Tl::Rows; }
}  // namespace cpu

// ---------------------------------------------------------------------------------------------------
// Data movement
// ---------------------------------------------------------------------------------------------------
template <typename TileT, typename GT>
PTO_INST void TLOAD(TileT &dst, GT &src) {
    dst.check("TLOAD");
    src.check("TLOAD");
    if (src.rows() < dst.GetValidRow() || src.cols() < dst.GetValidCol())
        cpu::fail("TLOAD: GM view " + cpu::dims(src.rows(), src.cols()) + " is smaller than the tile's valid shape " +
                  cpu::dims(dst.GetValidRow(), dst.GetValidCol()));
    using T = typename TileT::DType;
    const int64_t cs = src.stride[4];
    if constexpr (TileT::BL == BLayout::RowMajor && std::is_same_v<T, typename GT::DType>) {
        if (cs == 1) {  // contiguous rows of the same type: a byte copy per row
            const std::size_t bytes = static_cast<std::size_t>(dst.GetValidCol()) * sizeof(T);
            if (dst.GetValidCol() == TileT::Cols && src.shape[0] == 1 && src.shape[1] == 1 && src.shape[2] == 1 &&
                src.stride[3] == TileT::Cols) {  // whole rows on both sides: one block
                std::memcpy(dst.data_, src.ptr, bytes * static_cast<std::size_t>(dst.GetValidRow()));
                cpu::fill_pad(dst);
                return;
            }
            for (int64_t r = 0; r < dst.GetValidRow(); ++r)
                std::memcpy(dst.data_ + r * TileT::Cols, src.ptr + src.row_offset(r), bytes);
            cpu::fill_pad(dst);
            return;
        }
    }
    if (src.shape[0] == 1 && src.shape[1] == 1 && src.shape[2] == 1) {  // a 2-D view: row r at r * stride[3]
        cpu::copy2d<true>(dst.data_, cpu::row_stride<TileT>(), cpu::col_stride<TileT>(), src.ptr, src.stride[3], cs,
                    dst.GetValidRow(), dst.GetValidCol(),
                    [](const typename GT::DType &v) { return cpu::bitwise_or_convert<T>(v); });
        cpu::fill_pad(dst);
        return;
    }
    for (int64_t r = 0; r < dst.GetValidRow(); ++r) {  // one row offset per row (not per element)
        const typename GT::DType *row = src.ptr + src.row_offset(r);
        for (int64_t c = 0; c < dst.GetValidCol(); ++c) dst.at(r, c) = cpu::bitwise_or_convert<T>(row[c * cs]);
    }
    cpu::fill_pad(dst);
}

namespace cpu {
template <typename GT, typename TileT, AtomicType A, ReluPreMode R>
inline void store(GT &dst, TileT &src, bool quant, uint64_t pre_quant) {
    src.check("TSTORE");
    dst.check("TSTORE");
    if (dst.rows() < src.GetValidRow() || dst.cols() < src.GetValidCol())
        fail("TSTORE: GM view " + dims(dst.rows(), dst.cols()) + " is smaller than the tile's valid shape " +
             dims(src.GetValidRow(), src.GetValidCol()));
    using D = typename GT::DType;
    using S = typename TileT::DType;
    float scale = 1.0f;
    if (quant) {
        uint32_t u = static_cast<uint32_t>(pre_quant);
        std::memcpy(&scale, &u, 4);
    }
    const int64_t cs = dst.stride[4];
    if constexpr (TileT::Loc != TileType::Acc && TileT::BL == BLayout::RowMajor && A == AtomicType::AtomicNone &&
                  std::is_same_v<D, S>) {
        if (cs == 1) {  // contiguous rows of the same type: a byte copy per row
            const std::size_t bytes = static_cast<std::size_t>(src.GetValidCol()) * sizeof(S);
            if (src.GetValidCol() == TileT::Cols && dst.shape[0] == 1 && dst.shape[1] == 1 && dst.shape[2] == 1 &&
                dst.stride[3] == TileT::Cols) {  // whole rows on both sides: one block
                std::memcpy(dst.ptr, src.data_, bytes * static_cast<std::size_t>(src.GetValidRow()));
                return;
            }
            for (int64_t r = 0; r < src.GetValidRow(); ++r)
                std::memcpy(dst.ptr + dst.row_offset(r), src.data_ + r * TileT::Cols, bytes);
            return;
        }
    }
    if constexpr (std::is_same_v<D, S> && R == ReluPreMode::NoRelu && A == AtomicType::AtomicNone) {
        if (!quant && dst.shape[0] == 1 && dst.shape[1] == 1 && dst.shape[2] == 1) {  // a plain copy (acc too)
            copy2d<true>(dst.ptr, dst.stride[3], cs, src.data_, row_stride<TileT>(), col_stride<TileT>(), src.GetValidRow(),
                   src.GetValidCol(), [](const S &v) { return v; });
            return;
        }
    }
    for (int64_t r = 0; r < src.GetValidRow(); ++r) {  // one row offset per row (not per element)
        D *row = dst.ptr + dst.row_offset(r);
        for (int64_t c = 0; c < src.GetValidCol(); ++c) {
            D &out = row[c * cs];
            if constexpr (TileT::Loc == TileType::Acc) {
                double v = static_cast<double>(up(src.at(r, c)));
                if (quant) v *= scale;
                if (R == ReluPreMode::NormalRelu && v < 0) v = 0;
                if (A == AtomicType::AtomicAdd) v += static_cast<double>(up(out));
                out = to<D>(v);
            } else if (A == AtomicType::AtomicAdd) {
                out = to<D>(up(out) + up(to<D>(src.at(r, c))));
            } else {
                out = bitwise_or_convert<D>(src.at(r, c));
            }
            (void)sizeof(S);
        }
    }
}
}  // namespace cpu

// TSTORE(dst, src) / TSTORE<TileData, GlobalData, AtomicType[, ReluPreMode]>(...) / TSTORE<STPhase, ...>(...);
// with a trailing uint64_t: the pre-quant scalar (bit pattern of an fp32 scale) of an acc source.
template <typename TileData, typename GlobalData, AtomicType A = AtomicType::AtomicNone,
          ReluPreMode R = ReluPreMode::NoRelu>
PTO_INST void TSTORE(GlobalData &dst, TileData &src) {
    cpu::store<GlobalData, TileData, A, R>(dst, src, false, 0);
}
template <STPhase P, typename TileData, typename GlobalData, AtomicType A = AtomicType::AtomicNone,
          ReluPreMode R = ReluPreMode::NoRelu>
PTO_INST void TSTORE(GlobalData &dst, TileData &src) {
    cpu::store<GlobalData, TileData, A, R>(dst, src, false, 0);
}
template <typename TileData, typename GlobalData, AtomicType A = AtomicType::AtomicNone,
          ReluPreMode R = ReluPreMode::NoRelu>
PTO_INST void TSTORE(GlobalData &dst, TileData &src, uint64_t pre_quant) {
    cpu::store<GlobalData, TileData, A, R>(dst, src, true, pre_quant);
}
template <STPhase P, typename TileData, typename GlobalData, AtomicType A = AtomicType::AtomicNone,
          ReluPreMode R = ReluPreMode::NoRelu>
PTO_INST void TSTORE(GlobalData &dst, TileData &src, uint64_t pre_quant) {
    cpu::store<GlobalData, TileData, A, R>(dst, src, true, pre_quant);
}

// Tile -> tile copy (acc sources convert, optionally with relu).
template <ReluPreMode R = ReluPreMode::NoRelu, typename D, typename S>
PTO_INST void TMOV(D &dst, S &src) {
    dst.check("TMOV");
    src.check("TMOV");
    cpu::need_valid("TMOV", dst, src, "source");
    using T = typename D::DType;
    if constexpr (R == ReluPreMode::NoRelu) {
        cpu::copy2d<true>(dst.data_, cpu::row_stride<D>(), cpu::col_stride<D>(), src.data_, cpu::row_stride<S>(),
                    cpu::col_stride<S>(), dst.GetValidRow(), dst.GetValidCol(),
                    [](const typename S::DType &v) { return cpu::to<T>(cpu::up(v)); });
        return;
    }
    cpu::for_valid(dst, [&](int64_t r, int64_t c) {
        auto v = cpu::up(src.at(r, c));
        if constexpr (R == ReluPreMode::NormalRelu) {  // (not instantiated for the f8 storage types)
            if (v < 0) v = 0;
        }
        dst.at(r, c) = cpu::to<T>(v);
    });
}
template <AccToVecMode M, ReluPreMode R = ReluPreMode::NoRelu, typename D, typename S>
PTO_INST void TMOV(D &dst, S &src) {
    TMOV<R>(dst, src);
}

// dst = src[row0 : row0 + dst.valid_rows, col0 : col0 + dst.valid_cols]
template <typename D, typename S>
PTO_INST void TEXTRACT(D &dst, S &src, int64_t row0, int64_t col0) {
    dst.check("TEXTRACT");
    src.check("TEXTRACT");
    if (row0 < 0 || col0 < 0 || row0 + dst.GetValidRow() > S::Rows || col0 + dst.GetValidCol() > S::Cols)
        cpu::fail("TEXTRACT: window " + cpu::dims(dst.GetValidRow(), dst.GetValidCol()) + " at (" +
                  std::to_string(row0) + ", " + std::to_string(col0) + ") leaves the " + cpu::dims(S::Rows, S::Cols) +
                  " source");
    using T = typename D::DType;
    cpu::for_valid(dst, [&](int64_t r, int64_t c) { dst.at(r, c) = cpu::to<T>(cpu::up(src.at(row0 + r, col0 + c))); });
}

// dst[row0 : ..., col0 : ...] = src (its valid region)
template <typename D, typename S>
PTO_INST void TINSERT(D &dst, S &src, int64_t row0, int64_t col0) {
    dst.check("TINSERT");
    src.check("TINSERT");
    if (row0 < 0 || col0 < 0 || row0 + src.GetValidRow() > D::Rows || col0 + src.GetValidCol() > D::Cols)
        cpu::fail("TINSERT: " + cpu::dims(src.GetValidRow(), src.GetValidCol()) + " source at (" +
                  std::to_string(row0) + ", " + std::to_string(col0) + ") leaves the " + cpu::dims(D::Rows, D::Cols) +
                  " destination");
    using T = typename D::DType;
    cpu::for_valid(src, [&](int64_t r, int64_t c) { dst.at(row0 + r, col0 + c) = cpu::to<T>(cpu::up(src.at(r, c))); });
}

// Fixpipe vector / scalar quantisation (TMOV with a quant operand, TMOV_FP, TSTORE_FP, TEXTRACT_FP,
// TINSERT_FP): dst = to<T>(f32(src) [relu] * scale) in float32; integer destinations round half to
// even and saturate. A 64-bit quant parameter holds the f32 scale's bits in its low 32 bits (its
// sign / offset fields are not modelled); an fp tile gives column j's scale at (0, j).
namespace cpu {
template <typename P>
inline float quant_scale(P p) {
    if constexpr (std::is_integral_v<P> && sizeof(P) == 8) {
        const uint32_t u = static_cast<uint32_t>(static_cast<uint64_t>(p));
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    } else {
        return static_cast<float>(up(p));
    }
}
template <typename Fp>
inline float fp_scale(const char *op, const Fp &fp, int64_t c) {
    fp.check(op);
    if (c >= Fp::Cols) fail(std::string(op) + ": the fp tile has " + std::to_string(Fp::Cols) + " quant parameters");
    return quant_scale(fp.at(0, c));
}
template <typename T, typename V>
inline T fixpipe_quant(V v, float scale, bool relu) {
    float y = static_cast<float>(up(v));
    if (relu && y < 0) y = 0;
    y = y * scale;
    if constexpr (std::is_integral_v<T>) {
        const double r = static_cast<double>(std::nearbyint(y));
        if (r <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
        if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
        return static_cast<T>(r);
    } else {
        return to<T>(y);
    }
}
// dst[r, c] = quant(src[row0 + r, col0 + c]) over dst's valid region, scale by dst column.
template <ReluPreMode R, typename D, typename S, typename Q>
inline void quant_move(const char *op, D &dst, S &src, Q &&q, int64_t row0, int64_t col0) {
    dst.check(op);
    src.check(op);
    if (row0 == 0 && col0 == 0) need_valid(op, dst, src, "source");
    using T = typename D::DType;
    for_valid(dst, [&](int64_t r, int64_t c) {
        float scale;
        if constexpr (is_tile_v<Q>) scale = fp_scale(op, q, c);
        else scale = quant_scale(static_cast<uint64_t>(q));
        dst.at(r, c) = fixpipe_quant<T>(src.at(row0 + r, col0 + c), scale, R == ReluPreMode::NormalRelu);
    });
}
}  // namespace cpu

// TMOV with a quant operand: a pre-quant scalar (uint64_t) or an fp tile (PTOAS's acc -> vec form).
template <ReluPreMode R = ReluPreMode::NoRelu, typename D, typename S, typename Q>
PTO_INST void TMOV(D &dst, S &src, Q &&q) {
    cpu::quant_move<R>("TMOV", dst, src, q, 0, 0);
}
template <AccToVecMode M, ReluPreMode R = ReluPreMode::NoRelu, typename D, typename S, typename Q>
PTO_INST void TMOV(D &dst, S &src, Q &&q) {
    cpu::quant_move<R>("TMOV", dst, src, q, 0, 0);
}
template <ReluPreMode R = ReluPreMode::NoRelu, typename D, typename S, typename F>
PTO_INST void TMOV_FP(D &dst, S &src, F &fp) {
    cpu::quant_move<R>("TMOV_FP", dst, src, fp, 0, 0);
}
template <typename D, typename S, typename F>
PTO_INST void TEXTRACT_FP(D &dst, S &src, F &fp, int64_t row0, int64_t col0) {
    if (row0 < 0 || col0 < 0 || row0 + dst.GetValidRow() > S::Rows || col0 + dst.GetValidCol() > S::Cols)
        cpu::fail("TEXTRACT_FP: window " + cpu::dims(dst.GetValidRow(), dst.GetValidCol()) + " at (" +
                  std::to_string(row0) + ", " + std::to_string(col0) + ") leaves the " + cpu::dims(S::Rows, S::Cols) +
                  " source");
    cpu::quant_move<ReluPreMode::NoRelu>("TEXTRACT_FP", dst, src, fp, row0, col0);
}
template <typename D, typename S, typename F>
PTO_INST void TINSERT_FP(D &dst, S &src, F &fp, int64_t row0, int64_t col0) {
    dst.check("TINSERT_FP");
    src.check("TINSERT_FP");
    if (row0 < 0 || col0 < 0 || row0 + src.GetValidRow() > D::Rows || col0 + src.GetValidCol() > D::Cols)
        cpu::fail("TINSERT_FP: " + cpu::dims(src.GetValidRow(), src.GetValidCol()) + " source at (" +
                  std::to_string(row0) + ", " + std::to_string(col0) + ") leaves the " + cpu::dims(D::Rows, D::Cols) +
                  " destination");
    using T = typename D::DType;
    cpu::for_valid(src, [&](int64_t r, int64_t c) {
        dst.at(row0 + r, col0 + c) = cpu::fixpipe_quant<T>(src.at(r, c), cpu::fp_scale("TINSERT_FP", fp, c), false);
    });
}

// TSTORE_FP(dst, src, fp): an acc tile to GM through the fixpipe's vector quantisation (cpu::quant_move).
template <typename GlobalData, typename TileData, typename F>
PTO_INST void TSTORE_FP(GlobalData &dst, TileData &src, F &fp) {
    src.check("TSTORE_FP");
    dst.check("TSTORE_FP");
    if (dst.rows() < src.GetValidRow() || dst.cols() < src.GetValidCol())
        cpu::fail("TSTORE_FP: GM view " + cpu::dims(dst.rows(), dst.cols()) + " is smaller than the tile's valid shape " +
                  cpu::dims(src.GetValidRow(), src.GetValidCol()));
    using D = typename GlobalData::DType;
    const int64_t cs = dst.stride[4];
    for (int64_t r = 0; r < src.GetValidRow(); ++r) {
        D *row = dst.ptr + dst.row_offset(r);
        for (int64_t c = 0; c < src.GetValidCol(); ++c)
            row[c * cs] = cpu::fixpipe_quant<D>(src.at(r, c), cpu::fp_scale("TSTORE_FP", fp, c), false);
    }
}

// Reinterpret: dst aliases src's bytes (same location, same byte size).
template <typename D, typename S>
PTO_INST void TRESHAPE(D &dst, S &src) {
    static_assert(D::Loc == S::Loc, "TRESHAPE keeps the tile location");
    static_assert(D::Bytes == S::Bytes, "TRESHAPE keeps the byte size");
    src.check("TRESHAPE");
    dst.addr_ = src.addr_;
    dst.data_ = reinterpret_cast<typename D::DType *>(src.data_);
}

// ---------------------------------------------------------------------------------------------------
// Cube
// ---------------------------------------------------------------------------------------------------
namespace cpu {
// A per-thread scratch buffer of at least n elements, kept across calls (no allocation per matmul).
template <typename T>
inline T *scratch(std::size_t n) {
    static thread_local std::vector<T> buf;
    if (buf.size() < n) buf.resize(n);
    return buf.data();
}

#if defined(__GNUC__)
typedef float f32x4 __attribute__((vector_size(16)));
constexpr int64_t kMmRows = 4, kMmCols = 8;  // a register block: 4 rows x 8 columns, 8 accumulators of 4 lanes

// std::fma lane by lane: x * y + acc with one rounding per lane (the scalar loop's step).
template <typename V>
inline V fma_lanes(V x, V y, V acc) {
    constexpr int kLanes = sizeof(V) / sizeof(float);
    for (int q = 0; q < kLanes; ++q) acc[q] = std::fma(x[q], y[q], acc[q]);
    return acc;
}

// Result rows i..i+3, columns j0..j0+7 of an fp32 matmul into out[4][8]: every element is
// fma(a(i,k-1), b(k-1,j), ... fma(a(i,1), b(1,j), fma(a(i,0), b(0,j), init))), one fused multiply-add
// (one rounding) per product in p order (the scalar loop's operations, so the same bits), the
// accumulators held in registers.
template <typename A, typename Init>
inline void matmul_block(const A &a, const float *rhs, int64_t k, int64_t n, int64_t i, int64_t j0, Init &init,
                         float (&out)[kMmRows][kMmCols]) {
    f32x4 t[kMmRows][2] = {};
    for (int ii = 0; ii < kMmRows; ++ii)
        for (int h = 0; h < 2; ++h)
            for (int q = 0; q < 4; ++q) t[ii][h][q] = static_cast<float>(init(i + ii, j0 + 4 * h + q));
    for (int64_t p = 0; p < k; ++p) {
        f32x4 r0, r1;
        std::memcpy(&r0, rhs + p * n + j0, sizeof r0);
        std::memcpy(&r1, rhs + p * n + j0 + 4, sizeof r1);
        for (int ii = 0; ii < kMmRows; ++ii) {
            const float x = static_cast<float>(up(a.at(i + ii, p)));
            const f32x4 xv = {x, x, x, x};
            t[ii][0] = fma_lanes(xv, r0, t[ii][0]);
            t[ii][1] = fma_lanes(xv, r1, t[ii][1]);
        }
    }
    for (int ii = 0; ii < kMmRows; ++ii)
        for (int h = 0; h < 2; ++h)
            for (int q = 0; q < 4; ++q) out[ii][4 * h + q] = t[ii][h][q];
}

#if (defined(__x86_64__) || defined(__i386__)) && !defined(PTO_CPU_NO_AVX2)
#define PTO_CPU_AVX2_MATMUL 1
typedef float f32x8 __attribute__((vector_size(32)));
// One 8-lane fused multiply-add, x * y + acc rounded once per lane (vfmadd231ps: std::fma's bits).
__attribute__((target("avx2,fma"), always_inline)) inline f32x8 fma8(f32x8 x, f32x8 y, f32x8 acc) {
    return __builtin_ia32_vfmaddps256(x, y, acc);
}
// matmul_block with 8-lane accumulators, 4 rows x 16 columns, for a CPU with AVX2 and FMA (chosen at run
// time, so the library still runs without them): the same fused multiply-adds, the same bits.
template <typename A, typename Init>
__attribute__((target("avx2,fma"))) inline void matmul_block16(const A &a, const float *rhs, int64_t k, int64_t n,
                                                               int64_t i, int64_t j0, Init &init,
                                                               float (&out)[kMmRows][2 * kMmCols]) {
    f32x8 t[kMmRows][2] = {};
    for (int ii = 0; ii < kMmRows; ++ii)
        for (int h = 0; h < 2; ++h)
            for (int q = 0; q < 8; ++q) t[ii][h][q] = static_cast<float>(init(i + ii, j0 + 8 * h + q));
    for (int64_t p = 0; p < k; ++p) {
        f32x8 r0, r1;
        std::memcpy(&r0, rhs + p * n + j0, sizeof r0);
        std::memcpy(&r1, rhs + p * n + j0 + 8, sizeof r1);
        for (int ii = 0; ii < kMmRows; ++ii) {
            const float x = static_cast<float>(up(a.at(i + ii, p)));
            const f32x8 xv = {x, x, x, x, x, x, x, x};
            t[ii][0] = fma8(xv, r0, t[ii][0]);
            t[ii][1] = fma8(xv, r1, t[ii][1]);
        }
    }
    for (int ii = 0; ii < kMmRows; ++ii)
        for (int h = 0; h < 2; ++h)
            for (int q = 0; q < 8; ++q) out[ii][8 * h + q] = t[ii][h][q];
}
inline bool has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}
// The matmul's vector paths: AVX2 and FMA (every AVX2 CPU of Intel and AMD has both; checked apart).
inline bool has_avx2_fma() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}

// The fp32 matmul of a column-major lhs into a column-major result (the cube's Left and Acc tiles),
// vectorised down the columns: a register block is 16 result rows (two 8-lane vectors, loaded straight
// from the lhs column p) by kMmColBlock result columns (the rhs element (p, j) broadcast), so neither
// operand is packed and each result column is stored with two vector stores. Every element is still
// init(i, j) then one fused multiply-add a(i,p) * b(p,j) per p in p order, the scalar loop's operations
// (the lanes are other rows, not a reordered sum): the same bits.
constexpr int64_t kMmColBlock = 6;  // 12 accumulators, two lhs vectors and a broadcast: 15 registers
template <int NC, typename B, typename Init>
__attribute__((target("avx2,fma"))) inline void matmul_colblock(const float *a, int64_t lda, const B &b, float *c,
                                                                int64_t ldc, int64_t k, int64_t i, int64_t j0,
                                                                Init &init) {
    f32x8 t[NC][2];
    for (int jj = 0; jj < NC; ++jj)
        for (int h = 0; h < 2; ++h)
            for (int q = 0; q < 8; ++q) t[jj][h][q] = static_cast<float>(init(i + 8 * h + q, j0 + jj));
    for (int64_t p = 0; p < k; ++p) {
        f32x8 l0, l1;
        std::memcpy(&l0, a + p * lda + i, sizeof l0);
        std::memcpy(&l1, a + p * lda + i + 8, sizeof l1);
        for (int jj = 0; jj < NC; ++jj) {
            const float x = b.at(p, j0 + jj);
            const f32x8 xv = {x, x, x, x, x, x, x, x};
            t[jj][0] = fma8(l0, xv, t[jj][0]);
            t[jj][1] = fma8(l1, xv, t[jj][1]);
        }
    }
    for (int jj = 0; jj < NC; ++jj) {
        std::memcpy(c + (j0 + jj) * ldc + i, &t[jj][0], sizeof t[jj][0]);
        std::memcpy(c + (j0 + jj) * ldc + i + 8, &t[jj][1], sizeof t[jj][1]);
    }
}
// Result rows [i0, m - (m - i0) % 16) of a column-major fp32 matmul (the rest is left to the caller).
template <typename B, typename Init>
__attribute__((target("avx2,fma"))) inline int64_t matmul_colmajor(const float *a, int64_t lda, const B &b,
                                                                   float *c, int64_t ldc, int64_t m, int64_t k,
                                                                   int64_t n, Init &init, int64_t i0 = 0) {
    int64_t i = i0;
    for (; i + 16 <= m; i += 16) {
        int64_t j = 0;
        for (; j + kMmColBlock <= n; j += kMmColBlock) matmul_colblock<kMmColBlock>(a, lda, b, c, ldc, k, i, j, init);
        for (; j < n; ++j) matmul_colblock<1>(a, lda, b, c, ldc, k, i, j, init);
    }
    return i;
}
#endif

// The same with 16-lane vectors for a CPU with AVX-512F (chosen at run time): a register block is 32
// result rows (two 16-lane vectors from the lhs column) by kMmColBlock512 result columns, 16
// accumulators. The same fused multiply-add per product in p order: the same bits as the 8-lane path and
// the scalar loop. The 64x64x128 projection of the llama block on a Sapphire Rapids core: 14 us in the
// 8-lane blocks with separate multiplies and adds, 10 us in these with them, 7.5 us with the FMA.
#if defined(PTO_CPU_AVX2_MATMUL) && !defined(PTO_CPU_NO_AVX512)
#define PTO_CPU_AVX512_MATMUL 1
typedef float f32x16 __attribute__((vector_size(64)));
__attribute__((target("avx512f"), always_inline)) inline f32x16 fma16(f32x16 x, f32x16 y, f32x16 acc) {
    return __builtin_ia32_vfmaddps512_mask(x, y, acc, static_cast<unsigned short>(-1), 4);  // 4: current rounding
}
constexpr int64_t kMmColBlock512 = 8;
template <int NC, typename B, typename Init>
__attribute__((target("avx512f"))) inline void matmul_colblock512(const float *a, int64_t lda, const B &b, float *c,
                                                                  int64_t ldc, int64_t k, int64_t i, int64_t j0,
                                                                  Init &init) {
    f32x16 t[NC][2];
    for (int jj = 0; jj < NC; ++jj)
        for (int h = 0; h < 2; ++h)
            for (int q = 0; q < 16; ++q) t[jj][h][q] = static_cast<float>(init(i + 16 * h + q, j0 + jj));
    for (int64_t p = 0; p < k; ++p) {
        f32x16 l0, l1;
        std::memcpy(&l0, a + p * lda + i, sizeof l0);
        std::memcpy(&l1, a + p * lda + i + 16, sizeof l1);
        for (int jj = 0; jj < NC; ++jj) {
            const float x = b.at(p, j0 + jj);
            const f32x16 xv = {x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x};
            t[jj][0] = fma16(l0, xv, t[jj][0]);
            t[jj][1] = fma16(l1, xv, t[jj][1]);
        }
    }
    for (int jj = 0; jj < NC; ++jj) {
        std::memcpy(c + (j0 + jj) * ldc + i, &t[jj][0], sizeof t[jj][0]);
        std::memcpy(c + (j0 + jj) * ldc + i + 16, &t[jj][1], sizeof t[jj][1]);
    }
}
// Result rows [0, m - m % 32) of a column-major fp32 matmul (the rest is left to the caller).
template <typename B, typename Init>
__attribute__((target("avx512f"))) inline int64_t matmul_colmajor512(const float *a, int64_t lda, const B &b,
                                                                     float *c, int64_t ldc, int64_t m, int64_t k,
                                                                     int64_t n, Init &init) {
    int64_t i = 0;
    for (; i + 32 <= m; i += 32) {
        int64_t j = 0;
        for (; j + kMmColBlock512 <= n; j += kMmColBlock512)
            matmul_colblock512<kMmColBlock512>(a, lda, b, c, ldc, k, i, j, init);
        for (; j < n; ++j) matmul_colblock512<1>(a, lda, b, c, ldc, k, i, j, init);
    }
    return i;
}
inline bool has_avx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}
#endif
#endif

// ----------------------------------------------------------------------------- fp32 exp, vectorised
// exp_f32 gives, for every float x, the bits of (float)std::exp((double)x) -- what the scalar TEXP and
// the interpreter (numpy's float64 exp rounded to float32) compute -- in loops g++ vectorises:
// exp(x) = 2^(k / 64) * p(r), k = round(x * 64 / ln 2), r = x - k ln 2 / 64 (Cody-Waite: k * kLn2Hi64 is
// exact), 2^(k / 64) = 2^(k >> 6) * kExp2Table[k & 63] (the table's doubles correctly rounded), p the
// degree-5 Taylor polynomial (truncation < 4e-17 relative on |r| <= ln2 / 128; with the table's and the
// Horner roundings the double result is within a few ulps of exp(x)). Rounding that double to float gives
// the correctly rounded float, as glibc's exp does, unless it lies within kExpGuard double ulps of a
// halfway point between two floats; those lanes, and x outside [-87, 88] (float subnormals, overflow,
// inf, NaN), take the scalar std::exp. test_kernel_engine.py compares a sweep with the interpreter; the
// table form was checked against (float)std::exp((double)x) over every float in [-87, 88] (C++ sweep).
constexpr double kLog2e64 = 64 * 1.4426950408889634;
constexpr double kLn2Hi64 = 0x1.62e42fee00000p-1 / 64, kLn2Lo64 = 0x1.a39ef35793c76p-33 / 64;
constexpr double kShift = 0x1.8p52;  // adding it rounds to an integer, kept in the low mantissa bits
constexpr int64_t kExpGuard = 1024;
constexpr int kExpChunk = 64;
alignas(64) constexpr double kExp2Table[64] = {  // 2^(j / 64), j = 0..63
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0, 0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,
    0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0, 0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0,
    0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0, 0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0, 0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,
    0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0, 0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0,
    0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0, 0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0, 0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,
    0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0, 0x1.6247eb03a5585p+0, 0x1.6623882552225p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0, 0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0, 0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,
    0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0, 0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0,
    0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0, 0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0, 0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,
    0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0, 0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0,
    0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0, 0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0, 0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,
};

// One chunk: ys[i] from xs[i] for i < kExpChunk, slow[i] set where the lane needs the scalar exp.
// No branches (in_range selects an argument), so g++ vectorises the loop in double lanes.
__attribute__((always_inline)) inline void exp_chunk(const float *xs, float *ys, int64_t *slow) {
    for (int i = 0; i < kExpChunk; ++i) {
        const float xf = xs[i];  // out of range (or NaN): garbage in the lane, which is slow
        const int64_t in_range = (xf > -87.0f) & (xf < 88.0f);
        const double x = static_cast<double>(xf);
        const double t = x * kLog2e64 + kShift;
        const double k = t - kShift;
        const double r = (x - k * kLn2Hi64) - k * kLn2Lo64;
        double p = 1.0 / 120.0;
        p = p * r + 1.0 / 24.0;
        p = p * r + 1.0 / 6.0;
        p = p * r + 0.5;
        p = p * r + 1.0;
        p = p * r + 1.0;
        uint64_t tb;
        std::memcpy(&tb, &t, 8);
        const uint64_t scale_bits = ((tb >> 6) + 1023) << 52;  // 2^(k >> 6): k is in t's low mantissa bits
        double scale;
        std::memcpy(&scale, &scale_bits, 8);
        const double y = p * (kExp2Table[tb & 63] * scale);
        int64_t yb;
        std::memcpy(&yb, &y, 8);
        const int64_t off = (yb & ((int64_t(1) << 29) - 1)) - (int64_t(1) << 28);
        slow[i] = (1 - in_range) | ((off >= -kExpGuard) & (off <= kExpGuard));
        ys[i] = static_cast<float>(y);
    }
}

#define PTO_CPU_EXP_BODY                                                                           \
    alignas(64) float xs[kExpChunk] = {}, ys[kExpChunk];                                           \
    alignas(64) int64_t slow[kExpChunk];                                                           \
    for (int64_t s0 = 0; s0 < n; s0 += kExpChunk) {                                                \
        const int m = static_cast<int>(std::min<int64_t>(kExpChunk, n - s0));                      \
        for (int i = 0; i < m; ++i) xs[i] = in[s0 + i];                                            \
        exp_chunk(xs, ys, slow);                                                                   \
        int64_t any = 0;                                                                           \
        for (int i = 0; i < kExpChunk; ++i) any |= slow[i];                                        \
        for (int i = 0; any && i < m; ++i)                                                         \
            if (slow[i]) ys[i] = static_cast<float>(std::exp(static_cast<double>(xs[i])));         \
        for (int i = 0; i < m; ++i) out[s0 + i] = ys[i];                                           \
    }

inline void exp_f32_generic(const float *in, float *out, int64_t n) { PTO_CPU_EXP_BODY }
#if defined(PTO_CPU_AVX2_MATMUL)
__attribute__((target("avx2"))) inline void exp_f32_avx2(const float *in, float *out, int64_t n) { PTO_CPU_EXP_BODY }
#endif
#undef PTO_CPU_EXP_BODY

// out[i] = (float)std::exp((double)in[i]) for i < n (out may be in).
inline void exp_f32(const float *in, float *out, int64_t n) {
#if defined(PTO_CPU_AVX2_MATMUL)
    if (has_avx2()) return exp_f32_avx2(in, out, n);
#endif
    exp_f32_generic(in, out, n);
}

// A tile type whose storage is column-major (false for operands without a layout, e.g. MxOperand).
template <typename T, typename = void>
struct col_major_tile : std::false_type {};
template <typename T>
struct col_major_tile<T, std::void_t<decltype(T::BL)>> : std::bool_constant<T::BL == BLayout::ColMajor> {};

template <typename C, typename A, typename B, typename Init>
inline void matmul(const char *op, C &c, A &a, B &b, Init &&init) {
    c.check(op);
    a.check(op);
    b.check(op);
    const int64_t m = a.GetValidRow(), k = a.GetValidCol(), n = b.GetValidCol();
    if (b.GetValidRow() != k)
        fail(std::string(op) + ": lhs valid " + dims(m, k) + " and rhs valid " + dims(b.GetValidRow(), n) +
             " do not chain (k)");
    if (m > C::Rows || n > C::Cols)
        fail(std::string(op) + ": result " + dims(m, n) + " exceeds the " + dims(C::Rows, C::Cols) + " acc tile");
    using AT = typename A::DType;
    using Acc = std::conditional_t<std::is_integral_v<AT>, int64_t, float>;
    using T = typename C::DType;
    int64_t i = 0;
#if defined(PTO_CPU_AVX2_MATMUL)
    if constexpr (std::is_same_v<AT, float> && std::is_same_v<typename B::DType, float> && std::is_same_v<T, float> &&
                  col_major_tile<A>::value && col_major_tile<C>::value) {
        if (has_avx2_fma()) {  // the cube's tiles: vectorised down the columns (matmul_colmajor[512])
#if defined(PTO_CPU_AVX512_MATMUL)
            if (has_avx512()) i = matmul_colmajor512(a.data(), A::Rows, b, c.data(), C::Rows, m, k, n, init);
#endif
            i = matmul_colmajor(a.data(), A::Rows, b, c.data(), C::Rows, m, k, n, init, i);
            if (i == m) return;
        }
    }
#endif
    // Each result element is init(i, j), then a(i,0)*b(0,j), a(i,1)*b(1,j), ... added in p order: fp32 one
    // fused multiply-add (std::fma, one rounding) per product, integers exactly (int64 sums).
    // Column-major fp32 lhs and result (the cube's tiles) run down the
    // columns (matmul_colmajor, above); otherwise the rhs rows are packed row-major once (into a per-thread
    // buffer), so the inner loops walk contiguous memory and vectorise without changing any element's
    // operations; fp32 runs 4x8 register blocks (matmul_block), the rest the i, p, j loop below.
    Acc *rhs = scratch<Acc>(static_cast<std::size_t>(k * n + n));  // the packed rhs, then one row of sums
    Acc *acc = rhs + k * n;
    for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) rhs[p * n + j] = static_cast<Acc>(up(b.at(p, j)));
#if defined(__GNUC__)
    if constexpr (std::is_same_v<Acc, float>) {
        float out[kMmRows][kMmCols];
        for (; i + kMmRows <= m; i += kMmRows) {
            int64_t j0 = 0;
#if defined(PTO_CPU_AVX2_MATMUL)
            if (has_avx2_fma()) {
                float wide[kMmRows][2 * kMmCols];
                for (; j0 + 2 * kMmCols <= n; j0 += 2 * kMmCols) {
                    matmul_block16(a, rhs, k, n, i, j0, init, wide);
                    for (int ii = 0; ii < kMmRows; ++ii)
                        for (int64_t jj = 0; jj < 2 * kMmCols; ++jj) c.at(i + ii, j0 + jj) = to<T>(wide[ii][jj]);
                }
            }
#endif
            for (; j0 + kMmCols <= n; j0 += kMmCols) {
                matmul_block(a, rhs, k, n, i, j0, init, out);
                for (int ii = 0; ii < kMmRows; ++ii)
                    for (int64_t jj = 0; jj < kMmCols; ++jj) c.at(i + ii, j0 + jj) = to<T>(out[ii][jj]);
            }
            for (int ii = 0; ii < kMmRows; ++ii)  // the columns past the last block of 8
                for (int64_t j = j0; j < n; ++j) {
                    Acc v = static_cast<Acc>(init(i + ii, j));
                    for (int64_t p = 0; p < k; ++p) v = std::fma(static_cast<Acc>(up(a.at(i + ii, p))), rhs[p * n + j], v);
                    c.at(i + ii, j) = to<T>(v);
                }
        }
    }
#endif
    for (; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) acc[j] = static_cast<Acc>(init(i, j));
        for (int64_t p = 0; p < k; ++p) {
            const Acc x = static_cast<Acc>(up(a.at(i, p)));
            const Acc *row = rhs + p * n;
            if constexpr (std::is_same_v<Acc, float>) {
                for (int64_t j = 0; j < n; ++j) acc[j] = std::fma(x, row[j], acc[j]);
            } else {
                for (int64_t j = 0; j < n; ++j) acc[j] += x * row[j];
            }
        }
        for (int64_t j = 0; j < n; ++j) c.at(i, j) = to<T>(acc[j]);
    }
}
}  // namespace cpu

template <typename C, typename A, typename B>
PTO_INST void TMATMUL(C &c, A &a, B &b) {
    cpu::matmul("TMATMUL", c, a, b, [](int64_t, int64_t) { return 0.0f; });
}
template <typename C, typename Cin, typename A, typename B>
PTO_INST void TMATMUL_ACC(C &c, Cin &cin, A &a, B &b) {
    cin.check("TMATMUL_ACC");
    cpu::matmul("TMATMUL_ACC", c, a, b, [&](int64_t i, int64_t j) { return cpu::up(cin.at(i, j)); });
}
template <typename C, typename A, typename B, typename Bias>
PTO_INST void TMATMUL_BIAS(C &c, A &a, B &b, Bias &bias) {
    bias.check("TMATMUL_BIAS");
    cpu::matmul("TMATMUL_BIAS", c, a, b, [&](int64_t, int64_t j) { return cpu::up(bias.at(0, j)); });
}
template <typename C, typename A, typename B>
PTO_INST void TGEMV(C &c, A &a, B &b) {
    cpu::matmul("TGEMV", c, a, b, [](int64_t, int64_t) { return 0.0f; });
}
template <typename C, typename Cin, typename A, typename B>
PTO_INST void TGEMV_ACC(C &c, Cin &cin, A &a, B &b) {
    cin.check("TGEMV_ACC");
    cpu::matmul("TGEMV_ACC", c, a, b, [&](int64_t i, int64_t j) { return cpu::up(cin.at(i, j)); });
}
template <typename C, typename A, typename B, typename Bias>
PTO_INST void TGEMV_BIAS(C &c, A &a, B &b, Bias &bias) {
    bias.check("TGEMV_BIAS");
    cpu::matmul("TGEMV_BIAS", c, a, b, [&](int64_t, int64_t j) { return cpu::up(bias.at(0, j)); });
}

// ----------------------------------------------------------------------------- mx (micro-scaled) cube
// TMATMUL_MX / TGEMV_MX (A5 ops, run on the CPU whatever the arch): the 8-bit float operands times
// their per-block scales, a(i,k) * a_scale(i, k/32) and b(k,j) * b_scale(k/32, j), then cpu::matmul's
// fp32 sums in k order from init (0, c_in or bias row 0). A scale is 2^(e-127) for float8_e8m0_t, its
// value for other types. Same meaning and tables as the interpreter (pypto/device/interpreter/float8.py,
// isa_impls.mx).
namespace cpu {
constexpr int64_t kMxBlock = 32;

// The 256 values of an 8-bit float format: e4m3fn (bias 7, no inf, S.1111.111 NaN), e5m2 (bias 15,
// IEEE specials), e8m0 (unsigned 2^(e-127), 0xFF NaN).
inline const float *f8_table(int kind) {
    static const auto tables = [] {
        std::vector<float> t(3 * 256);
        for (int code = 0; code < 256; ++code) {
            for (int f = 0; f < 2; ++f) {  // 0: e4m3fn, 1: e5m2
                const int mb = f == 0 ? 3 : 2, bias = f == 0 ? 7 : 15, top = f == 0 ? 15 : 31;
                const int body = code & 0x7f, e = body >> mb, m = body & ((1 << mb) - 1);
                const double sign = (code & 0x80) ? -1.0 : 1.0;
                double v = e == 0 ? std::ldexp(static_cast<double>(m) / (1 << mb), 1 - bias)
                                  : std::ldexp(1.0 + static_cast<double>(m) / (1 << mb), e - bias);
                if (f == 0 && body == 0x7f) v = std::nan("");
                if (f == 1 && e == top) v = m == 0 ? HUGE_VAL : std::nan("");
                t[f * 256 + code] = static_cast<float>(sign * v);
            }
            t[2 * 256 + code] = code == 0xff ? std::nanf("") : static_cast<float>(std::ldexp(1.0, code - 127));
        }
        return t;
    }();
    return tables.data() + 256 * kind;
}
inline float mx_value(float8_e4m3_t v) { return f8_table(0)[v.bits]; }
inline float mx_value(float8_e5m2_t v) { return f8_table(1)[v.bits]; }
inline float mx_value(float8_e8m0_t v) { return f8_table(2)[v.bits]; }
template <typename T>
inline float mx_value(T v) {
    return static_cast<float>(up(v));
}

// An mx operand, scaled: what cpu::matmul reads (valid rows x cols of float, row-major).
struct MxOperand {
    using DType = float;
    int64_t rows = 0, cols = 0;
    std::vector<float> v;
    void check(const char *) const {}
    int64_t GetValidRow() const { return rows; }
    int64_t GetValidCol() const { return cols; }
    float at(int64_t r, int64_t c) const { return v[r * cols + c]; }
};

// x's valid values times their scales: lhs (a): scale(i, k/32); rhs (b): scale(k/32, j).
template <typename X, typename S>
inline MxOperand mx_scaled(const char *op, X &x, S &s, bool lhs) {
    x.check(op);
    s.check(op);
    MxOperand o;
    o.rows = x.GetValidRow();
    o.cols = x.GetValidCol();
    const int64_t k = lhs ? o.cols : o.rows, blocks = (k + kMxBlock - 1) / kMxBlock;
    const int64_t need_r = lhs ? o.rows : blocks, need_c = lhs ? blocks : o.cols;
    if (s.GetValidRow() < need_r || s.GetValidCol() < need_c)
        fail(std::string(op) + ": the " + (lhs ? "a" : "b") + "_scale tile's valid " +
             dims(s.GetValidRow(), s.GetValidCol()) + " holds fewer than the " + dims(need_r, need_c) +
             " scales of k=" + std::to_string(k) + " in blocks of " + std::to_string(kMxBlock));
    o.v.resize(static_cast<std::size_t>(o.rows * o.cols));
    for (int64_t r = 0; r < o.rows; ++r)
        for (int64_t c = 0; c < o.cols; ++c) {
            const float sc = lhs ? mx_value(s.at(r, c / kMxBlock)) : mx_value(s.at(r / kMxBlock, c));
            o.v[r * o.cols + c] = mx_value(x.at(r, c)) * sc;
        }
    return o;
}

// The three forms of one mx intrinsic: (c, a, as, b, bs), (c, c_in, a, as, b, bs), (c, a, as, b, bs, bias).
template <typename C, typename A, typename SA, typename B, typename SB, typename Init>
inline void mx_matmul(const char *op, C &c, A &a, SA &sa, B &b, SB &sb, Init &&init) {
    MxOperand x = mx_scaled(op, a, sa, true), y = mx_scaled(op, b, sb, false);
    matmul(op, c, x, y, init);
}
template <typename C, typename X, typename Y, typename Z, typename W, typename V>
inline void mx_matmul6(const char *op, C &c, X &x, Y &y, Z &z, W &w, V &v) {
    if constexpr (X::Loc == TileType::Acc) {  // (c, c_in, a, a_scale, b, b_scale)
        x.check(op);
        mx_matmul(op, c, y, z, w, v, [&](int64_t i, int64_t j) { return up(x.at(i, j)); });
    } else {  // (c, a, a_scale, b, b_scale, bias)
        v.check(op);
        mx_matmul(op, c, x, y, z, w, [&](int64_t, int64_t j) { return up(v.at(0, j)); });
    }
}
}  // namespace cpu

template <typename C, typename A, typename SA, typename B, typename SB>
PTO_INST void TMATMUL_MX(C &c, A &a, SA &sa, B &b, SB &sb) {
    cpu::mx_matmul("TMATMUL_MX", c, a, sa, b, sb, [](int64_t, int64_t) { return 0.0f; });
}
template <typename C, typename X, typename Y, typename Z, typename W, typename V>
PTO_INST void TMATMUL_MX(C &c, X &x, Y &y, Z &z, W &w, V &v) {
    cpu::mx_matmul6("TMATMUL_MX", c, x, y, z, w, v);
}
template <typename C, typename A, typename SA, typename B, typename SB>
PTO_INST void TGEMV_MX(C &c, A &a, SA &sa, B &b, SB &sb) {
    cpu::mx_matmul("TGEMV_MX", c, a, sa, b, sb, [](int64_t, int64_t) { return 0.0f; });
}
template <typename C, typename X, typename Y, typename Z, typename W, typename V>
PTO_INST void TGEMV_MX(C &c, X &x, Y &y, Z &z, W &w, V &v) {
    cpu::mx_matmul6("TGEMV_MX", c, x, y, z, w, v);
}

// ---------------------------------------------------------------------------------------------------
// Vector: element-wise families
// ---------------------------------------------------------------------------------------------------
namespace cpu {
template <typename D, typename S, typename F>
inline void unary(const char *op, D &d, S &s, F &&f) {
    d.check(op);
    s.check(op);
    need_valid(op, d, s, "source");
    using T = typename D::DType;
    if constexpr (D::BL == BLayout::RowMajor && S::BL == BLayout::RowMajor) {  // row by row: loops g++ vectorises
        const int64_t vc = d.GetValidCol();
        for (int64_t r = 0; r < d.GetValidRow(); ++r) {
            T *dr = d.data_ + r * D::Cols;
            const typename S::DType *sr = s.data_ + r * S::Cols;
            for (int64_t c = 0; c < vc; ++c) dr[c] = to<T>(f(up(sr[c])));
        }
        return;
    }
    for_valid(d, [&](int64_t r, int64_t c) { d.at(r, c) = to<T>(f(up(s.at(r, c)))); });
}

template <typename D, typename A, typename B, typename F>
inline void binary(const char *op, D &d, A &a, B &b, F &&f) {
    d.check(op);
    a.check(op);
    b.check(op);
    need_valid(op, d, a, "src0");
    need_valid(op, d, b, "src1");
    using T = typename D::DType;
    if constexpr (D::BL == BLayout::RowMajor && A::BL == BLayout::RowMajor && B::BL == BLayout::RowMajor) {
        const int64_t vc = d.GetValidCol();
        for (int64_t r = 0; r < d.GetValidRow(); ++r) {
            T *dr = d.data_ + r * D::Cols;
            const typename A::DType *ar = a.data_ + r * A::Cols;
            const typename B::DType *br = b.data_ + r * B::Cols;
            for (int64_t c = 0; c < vc; ++c) dr[c] = to<T>(f(up(ar[c]), up(br[c])));
        }
        return;
    }
    for_valid(d, [&](int64_t r, int64_t c) { d.at(r, c) = to<T>(f(up(a.at(r, c)), up(b.at(r, c)))); });
}

template <typename D, typename A, typename B, typename C, typename F>
inline void ternary(const char *op, D &d, A &a, B &b, C &c3, F &&f) {
    d.check(op);
    a.check(op);
    b.check(op);
    c3.check(op);
    need_valid(op, d, a, "src0");
    need_valid(op, d, b, "src1");
    need_valid(op, d, c3, "src2");
    using T = typename D::DType;
    for_valid(d, [&](int64_t r, int64_t c) { d.at(r, c) = to<T>(f(up(a.at(r, c)), up(b.at(r, c)), up(c3.at(r, c)))); });
}

// tpart*: op where both sources are valid, the valid one elsewhere (dst valid = its own).
template <typename D, typename A, typename B, typename F>
inline void partial(const char *op, D &d, A &a, B &b, F &&f) {
    d.check(op);
    a.check(op);
    b.check(op);
    using T = typename D::DType;
    for_valid(d, [&](int64_t r, int64_t c) {
        bool va = r < a.GetValidRow() && c < a.GetValidCol();
        bool vb = r < b.GetValidRow() && c < b.GetValidCol();
        if (va && vb) d.at(r, c) = to<T>(f(up(a.at(r, c)), up(b.at(r, c))));
        else if (va) d.at(r, c) = to<T>(up(a.at(r, c)));
        else if (vb) d.at(r, c) = to<T>(up(b.at(r, c)));
        else fail(std::string(op) + ": destination element outside both sources' valid regions");
    });
}

template <typename X>
inline auto rem(X a, X b) {
    if constexpr (std::is_integral_v<X>) {
        if (b == 0) fail("TREM: integer division by zero");
        return a % b;
    } else {
        return std::fmod(a, b);
    }
}
template <typename X>
inline X idiv(X a, X b) {
    if constexpr (std::is_integral_v<X>) {
        if (b == 0) fail("TDIV: integer division by zero");
    }
    return a / b;
}
template <typename X>
inline X int_only(const char *op, X v) {
    if constexpr (!std::is_integral_v<X>) fail(std::string(op) + ": needs an integer tile");
    return v;
}
}  // namespace cpu

#define PTO_CPU_BINARY(NAME, EXPR)                                                              \
    template <typename D, typename A, typename B, typename... Tmp>                              \
    PTO_INST void NAME(D &d, A &a, B &b, Tmp &...) {                                            \
        cpu::binary(#NAME, d, a, b, [](auto x, auto y) { return EXPR; });                       \
    }
PTO_CPU_BINARY(TADD, x + y)
PTO_CPU_BINARY(TSUB, x - y)
PTO_CPU_BINARY(TMUL, x * y)
PTO_CPU_BINARY(TDIV, cpu::idiv(x, y))
PTO_CPU_BINARY(TMAX, (x < y ? y : x))
PTO_CPU_BINARY(TMIN, (y < x ? y : x))
PTO_CPU_BINARY(TREM, cpu::rem(x, y))
#undef PTO_CPU_BINARY

#define PTO_CPU_BINARY_INT(NAME, EXPR)                                                          \
    template <typename D, typename A, typename B, typename... Tmp>                              \
    PTO_INST void NAME(D &d, A &a, B &b, Tmp &...) {                                            \
        static_assert(std::is_integral_v<typename D::DType>, #NAME " needs integer tiles");     \
        cpu::binary(#NAME, d, a, b, [](auto x, auto y) { return EXPR; });                       \
    }
PTO_CPU_BINARY_INT(TAND, x & y)
PTO_CPU_BINARY_INT(TOR, x | y)
PTO_CPU_BINARY_INT(TXOR, x ^ y)
PTO_CPU_BINARY_INT(TSHL, x << y)
PTO_CPU_BINARY_INT(TSHR, x >> y)
#undef PTO_CPU_BINARY_INT

#define PTO_CPU_PARTIAL(NAME, EXPR)                                                             \
    template <typename D, typename A, typename B>                                               \
    PTO_INST void NAME(D &d, A &a, B &b) {                                                      \
        cpu::partial(#NAME, d, a, b, [](auto x, auto y) { return EXPR; });                      \
    }
PTO_CPU_PARTIAL(TPARTADD, x + y)
PTO_CPU_PARTIAL(TPARTMUL, x * y)
PTO_CPU_PARTIAL(TPARTMAX, (x < y ? y : x))
PTO_CPU_PARTIAL(TPARTMIN, (y < x ? y : x))
#undef PTO_CPU_PARTIAL

// Tile-scalar ops: NAME(dst, src, scalar).
#define PTO_CPU_SCALAR(NAME, EXPR)                                                              \
    template <typename D, typename A, typename Sc, std::enable_if_t<is_tile_v<A>, int> = 0>     \
    PTO_INST void NAME(D &d, A &a, Sc scalar) {                                                 \
        auto s = cpu::up(static_cast<typename A::DType>(scalar));                              \
        cpu::unary(#NAME, d, a, [&](auto x) { decltype(x) y = s; return EXPR; });              \
    }
PTO_CPU_SCALAR(TADDS, x + y)
PTO_CPU_SCALAR(TSUBS, x - y)
PTO_CPU_SCALAR(TMULS, x * y)
PTO_CPU_SCALAR(TMAXS, (x < y ? y : x))
PTO_CPU_SCALAR(TMINS, (y < x ? y : x))
PTO_CPU_SCALAR(TREMS, cpu::rem(x, y))
PTO_CPU_SCALAR(TLRELU, (x > 0 ? x : x * y))
PTO_CPU_SCALAR(TANDS, cpu::int_only("TANDS", x) & y)
PTO_CPU_SCALAR(TORS, cpu::int_only("TORS", x) | y)
PTO_CPU_SCALAR(TXORS, cpu::int_only("TXORS", x) ^ y)
PTO_CPU_SCALAR(TSHLS, cpu::int_only("TSHLS", x) << y)
PTO_CPU_SCALAR(TSHRS, cpu::int_only("TSHRS", x) >> y)
#undef PTO_CPU_SCALAR

// TDIVS(dst, tile, scalar) = tile / scalar; TDIVS(dst, scalar, tile) = scalar / tile.
template <typename D, typename A, typename Sc, std::enable_if_t<is_tile_v<A> && !is_tile_v<Sc>, int> = 0>
PTO_INST void TDIVS(D &d, A &a, Sc scalar) {
    auto s = cpu::up(static_cast<typename A::DType>(scalar));
    cpu::unary("TDIVS", d, a, [&](auto x) { decltype(x) y = s; return cpu::idiv(x, y); });
}
template <typename D, typename Sc, typename A, std::enable_if_t<is_tile_v<A> && !is_tile_v<Sc>, int> = 0>
PTO_INST void TDIVS(D &d, Sc scalar, A &a) {
    auto s = cpu::up(static_cast<typename A::DType>(scalar));
    cpu::unary("TDIVS", d, a, [&](auto x) { decltype(x) y = s; return cpu::idiv(y, x); });
}

// dst = scalar * src + dst (src may be narrower than dst, e.g. f16 -> f32).
template <typename D, typename A, typename Sc>
PTO_INST void TAXPY(D &d, A &a, Sc scalar) {
    d.check("TAXPY");
    a.check("TAXPY");
    cpu::need_valid("TAXPY", d, a, "source");
    using T = typename D::DType;
    const float s = static_cast<float>(cpu::up(static_cast<typename A::DType>(scalar)));
    cpu::for_valid(d, [&](int64_t r, int64_t c) {
        d.at(r, c) = cpu::to<T>(s * static_cast<float>(cpu::up(a.at(r, c))) + static_cast<float>(cpu::up(d.at(r, c))));
    });
}

#define PTO_CPU_UNARY(NAME, EXPR)                                                               \
    template <typename D, typename A, typename... Tmp>                                          \
    PTO_INST void NAME(D &d, A &a, Tmp &...) {                                                  \
        cpu::unary(#NAME, d, a, [](auto x) { return EXPR; });                                  \
    }
PTO_CPU_UNARY(TABS, (x < 0 ? -x : x))
PTO_CPU_UNARY(TNEG, -x)
PTO_CPU_UNARY(TLOG, std::log(x))
PTO_CPU_UNARY(TSQRT, std::sqrt(x))
PTO_CPU_UNARY(TRSQRT, 1 / std::sqrt(x))
PTO_CPU_UNARY(TRECIP, 1 / x)
PTO_CPU_UNARY(TRELU, (x > 0 ? x : decltype(x)(0)))
PTO_CPU_UNARY(TNOT, ~cpu::int_only("TNOT", x))
#undef PTO_CPU_UNARY

// exp in double, rounded once to the element type (fp32 row-major tiles: cpu::exp_f32, the same bits).
template <typename D, typename A, typename... Tmp>
PTO_INST void TEXP(D &d, A &a, Tmp &...) {
    if constexpr (std::is_same_v<typename D::DType, float> && std::is_same_v<typename A::DType, float> &&
                  D::BL == BLayout::RowMajor && A::BL == BLayout::RowMajor) {
        d.check("TEXP");
        a.check("TEXP");
        cpu::need_valid("TEXP", d, a, "source");
        for (int64_t r = 0; r < d.GetValidRow(); ++r) cpu::exp_f32(a.data_ + r * A::Cols, d.data_ + r * D::Cols, d.GetValidCol());
    } else {
        cpu::unary("TEXP", d, a, [](auto x) { return static_cast<decltype(x)>(std::exp(static_cast<double>(x))); });
    }
}

// Copy the valid region and fill the rest of dst with its pad value.
template <typename D, typename A>
PTO_INST void TFILLPAD(D &d, A &a) {
    cpu::fillpad("TFILLPAD", d, a);
}

template <typename D, typename A, typename B, typename C>
PTO_INST void TADDC(D &d, A &a, B &b, C &c) {
    cpu::ternary("TADDC", d, a, b, c, [](auto x, auto y, auto z) { return x + y + z; });
}
template <typename D, typename A, typename B, typename C>
PTO_INST void TSUBC(D &d, A &a, B &b, C &c) {
    cpu::ternary("TSUBC", d, a, b, c, [](auto x, auto y, auto z) { return x - y + z; });
}
template <typename D, typename A, typename Sc, typename B>
PTO_INST void TADDSC(D &d, A &a, Sc scalar, B &b) {
    auto s = cpu::up(static_cast<typename A::DType>(scalar));
    cpu::binary("TADDSC", d, a, b, [&](auto x, auto y) { return x + static_cast<decltype(x)>(s) + y; });
}
template <typename D, typename A, typename Sc, typename B>
PTO_INST void TSUBSC(D &d, A &a, Sc scalar, B &b) {
    auto s = cpu::up(static_cast<typename A::DType>(scalar));
    cpu::binary("TSUBSC", d, a, b, [&](auto x, auto y) { return x - static_cast<decltype(x)>(s) + y; });
}
template <typename D, typename A, typename B, typename Tmp>
PTO_INST void TPRELU(D &d, A &a, B &slope, Tmp &) {
    cpu::binary("TPRELU", d, a, slope, [](auto x, auto y) { return x > 0 ? x : x * y; });
}

// ---------------------------------------------------------------------------------------------------
// Vector: reductions and broadcasts
// ---------------------------------------------------------------------------------------------------
namespace cpu {
// One value per row of src into dst(r, 0); kind: 0 sum, 1 max, 2 min, 3 prod, 4 argmax, 5 argmin.
template <typename D, typename S>
inline void row_reduce(const char *op, D &d, S &s, int kind) {
    d.check(op);
    s.check(op);
    if (D::Cols < 1 || D::Rows < s.GetValidRow())
        fail(std::string(op) + ": destination " + dims(D::Rows, D::Cols) + " cannot hold one value per row of " +
             dims(s.GetValidRow(), s.GetValidCol()));
    using T = typename D::DType;
    for (int64_t r = 0; r < s.GetValidRow(); ++r) {
        auto acc = up(s.at(r, 0));
        int64_t idx = 0;
        if (s.GetValidCol() == 0) fail(std::string(op) + ": source has no valid columns");
        for (int64_t c = 1; c < s.GetValidCol(); ++c) {
            auto v = up(s.at(r, c));
            switch (kind) {
            case 0: acc = acc + v; break;
            case 1: if (v > acc) acc = v; break;
            case 2: if (v < acc) acc = v; break;
            case 3: acc = acc * v; break;
            case 4: if (v > acc) { acc = v; idx = c; } break;
            default: if (v < acc) { acc = v; idx = c; } break;
            }
        }
        d.at(r, 0) = kind >= 4 ? to<T>(idx) : to<T>(acc);
    }
}

// One value per column of src into dst(0, c); kind: 0 sum, 1 max, 2 min.
template <typename D, typename S>
inline void col_reduce(const char *op, D &d, S &s, int kind) {
    d.check(op);
    s.check(op);
    if (D::Rows < 1 || D::Cols < s.GetValidCol())
        fail(std::string(op) + ": destination " + dims(D::Rows, D::Cols) + " cannot hold one value per column of " +
             dims(s.GetValidRow(), s.GetValidCol()));
    using T = typename D::DType;
    for (int64_t c = 0; c < s.GetValidCol(); ++c) {
        if (s.GetValidRow() == 0) fail(std::string(op) + ": source has no valid rows");
        auto acc = up(s.at(0, c));
        for (int64_t r = 1; r < s.GetValidRow(); ++r) {
            auto v = up(s.at(r, c));
            if (kind == 0) acc = acc + v;
            else if (kind == 1) { if (v > acc) acc = v; }
            else if (v < acc) acc = v;
        }
        d.at(0, c) = to<T>(acc);
    }
}

// dst(r, c) = f(src0(r, c), vec(r, 0)) for axis 0; f(src0(r, c), vec(0, c)) for axis 1.
template <typename D, typename A, typename V, typename F>
inline void expand_binary(const char *op, D &d, A &a, V &v, int axis, F &&f) {
    d.check(op);
    a.check(op);
    v.check(op);
    need_valid(op, d, a, "src0");
    if (axis == 0 && v.GetValidRow() < d.GetValidRow())
        fail(std::string(op) + ": row vector has " + std::to_string(v.GetValidRow()) + " valid rows, need " +
             std::to_string(d.GetValidRow()));
    if (axis == 1 && v.GetValidCol() < d.GetValidCol())
        fail(std::string(op) + ": column vector has " + std::to_string(v.GetValidCol()) + " valid cols, need " +
             std::to_string(d.GetValidCol()));
    using T = typename D::DType;
    if constexpr (D::BL == BLayout::RowMajor && A::BL == BLayout::RowMajor) {
        const int64_t vc = d.GetValidCol();
        for (int64_t r = 0; r < d.GetValidRow(); ++r) {
            T *dr = d.data_ + r * D::Cols;
            const typename A::DType *ar = a.data_ + r * A::Cols;
            if (axis == 0) {
                const auto y = up(v.at(r, 0));
                for (int64_t c = 0; c < vc; ++c) dr[c] = to<T>(f(up(ar[c]), y));
            } else {
                for (int64_t c = 0; c < vc; ++c) dr[c] = to<T>(f(up(ar[c]), up(v.at(0, c))));
            }
        }
        return;
    }
    for_valid(d, [&](int64_t r, int64_t c) {
        d.at(r, c) = to<T>(f(up(a.at(r, c)), up(axis == 0 ? v.at(r, 0) : v.at(0, c))));
    });
}
}  // namespace cpu

#define PTO_CPU_ROWRED(NAME, KIND)                                                              \
    template <typename D, typename S, typename... Tmp>                                          \
    PTO_INST void NAME(D &d, S &s, Tmp &...) {                                                  \
        cpu::row_reduce(#NAME, d, s, KIND);                                                     \
    }
PTO_CPU_ROWRED(TROWSUM, 0)
PTO_CPU_ROWRED(TROWMAX, 1)
PTO_CPU_ROWRED(TROWMIN, 2)
PTO_CPU_ROWRED(TROWPROD, 3)
PTO_CPU_ROWRED(TROWARGMAX, 4)
PTO_CPU_ROWRED(TROWARGMIN, 5)
#undef PTO_CPU_ROWRED

template <typename D, typename S, typename... Tmp>
PTO_INST void TCOLSUM(D &d, S &s, Tmp &...) {
    cpu::col_reduce("TCOLSUM", d, s, 0);
}
template <typename D, typename S, typename Tmp>
PTO_INST void TCOLSUM(D &d, S &s, Tmp &, bool) {
    cpu::col_reduce("TCOLSUM", d, s, 0);
}
template <typename D, typename S>
PTO_INST void TCOLMAX(D &d, S &s) {
    cpu::col_reduce("TCOLMAX", d, s, 1);
}
template <typename D, typename S>
PTO_INST void TCOLMIN(D &d, S &s) {
    cpu::col_reduce("TCOLMIN", d, s, 2);
}

template <typename D, typename S>
PTO_INST void TROWEXPAND(D &d, S &s) {
    cpu::expand_binary("TROWEXPAND", d, d, s, 0, [](auto, auto y) { return y; });
}
template <typename D, typename S>
PTO_INST void TCOLEXPAND(D &d, S &s) {
    cpu::expand_binary("TCOLEXPAND", d, d, s, 1, [](auto, auto y) { return y; });
}

#define PTO_CPU_EXPAND(NAME, AXIS, EXPR)                                                        \
    template <typename D, typename A, typename V, typename... Tmp>                              \
    PTO_INST void NAME(D &d, A &a, V &v, Tmp &...) {                                            \
        cpu::expand_binary(#NAME, d, a, v, AXIS, [](auto x, auto y) { return EXPR; });          \
    }
PTO_CPU_EXPAND(TROWEXPANDADD, 0, x + y)
PTO_CPU_EXPAND(TROWEXPANDSUB, 0, x - y)
PTO_CPU_EXPAND(TROWEXPANDMUL, 0, x * y)
PTO_CPU_EXPAND(TROWEXPANDDIV, 0, x / y)
PTO_CPU_EXPAND(TROWEXPANDMAX, 0, (x < y ? y : x))
PTO_CPU_EXPAND(TROWEXPANDMIN, 0, (y < x ? y : x))
PTO_CPU_EXPAND(TROWEXPANDEXPDIF, 0, static_cast<decltype(x)>(std::exp(static_cast<double>(x - y))))
PTO_CPU_EXPAND(TCOLEXPANDADD, 1, x + y)
PTO_CPU_EXPAND(TCOLEXPANDSUB, 1, x - y)
PTO_CPU_EXPAND(TCOLEXPANDMUL, 1, x * y)
PTO_CPU_EXPAND(TCOLEXPANDDIV, 1, x / y)
PTO_CPU_EXPAND(TCOLEXPANDMAX, 1, (x < y ? y : x))
PTO_CPU_EXPAND(TCOLEXPANDMIN, 1, (y < x ? y : x))
PTO_CPU_EXPAND(TCOLEXPANDEXPDIF, 1, static_cast<decltype(x)>(std::exp(static_cast<double>(x - y))))
#undef PTO_CPU_EXPAND

template <typename D, typename Sc>
PTO_INST void TEXPANDS(D &d, Sc scalar) {
    d.check("TEXPANDS");
    using T = typename D::DType;
    const T v = cpu::to<T>(cpu::up(static_cast<T>(scalar)));
    cpu::for_valid(d, [&](int64_t r, int64_t c) { d.at(r, c) = v; });
}

// ---------------------------------------------------------------------------------------------------
// Vector: conversion, compare, select, transpose, print
// ---------------------------------------------------------------------------------------------------
template <typename D, typename S>
PTO_INST void TCVT(D &d, S &s, RoundMode mode = RoundMode::CAST_RINT) {
    d.check("TCVT");
    s.check("TCVT");
    cpu::need_valid("TCVT", d, s, "source");
    using T = typename D::DType;
    cpu::for_valid(d, [&](int64_t r, int64_t c) { d.at(r, c) = cpu::convert<T>(s.at(r, c), mode); });
}
template <typename D, typename S, typename Tmp, std::enable_if_t<is_tile_v<Tmp>, int> = 0>
PTO_INST void TCVT(D &d, S &s, Tmp &, RoundMode mode = RoundMode::CAST_RINT) {
    TCVT(d, s, mode);
}
// PTOAS's saturation argument: ON is what TCVT does; OFF makes float -> int wrap: the rounded value
// modulo 2^bits, two's complement (NaN, +-inf: 0; exact in double, fmod is exact).
enum class SaturationMode { ON, OFF };
namespace cpu {
template <typename To>
inline To wrap_int(double x, RoundMode m) {
    if (!std::isfinite(x)) return To(0);
    x = round_int(x, m);
    constexpr int bits = 8 * static_cast<int>(sizeof(To));
    const double span = std::ldexp(1.0, bits), half = std::ldexp(1.0, bits - 1);
    double w = std::fmod(x, span);
    if (w >= half) w -= span;
    else if (w < -half) w += span;
    return static_cast<To>(static_cast<int64_t>(w));
}
}  // namespace cpu
template <typename D, typename S>
PTO_INST void TCVT(D &d, S &s, RoundMode mode, SaturationMode sat) {
    using T = typename D::DType;
    if constexpr (std::is_integral_v<T> && cpu::is_float_v<typename S::DType>) {
        if (sat == SaturationMode::OFF) {
            d.check("TCVT");
            s.check("TCVT");
            cpu::need_valid("TCVT", d, s, "source");
            cpu::for_valid(d, [&](int64_t r, int64_t c) {
                d.at(r, c) = cpu::wrap_int<T>(static_cast<double>(cpu::up(s.at(r, c))), mode);
            });
            return;
        }
    }
    TCVT(d, s, mode);
}
template <typename D, typename S, typename Tmp, std::enable_if_t<is_tile_v<Tmp>, int> = 0>
PTO_INST void TCVT(D &d, S &s, Tmp &, RoundMode mode, SaturationMode sat) {
    TCVT(d, s, mode, sat);
}

namespace cpu {
template <typename X>
inline bool compare(X a, X b, CmpMode m) {
    switch (m) {
    case CmpMode::EQ: return a == b;
    case CmpMode::NE: return a != b;
    case CmpMode::LT: return a < b;
    case CmpMode::LE: return a <= b;
    case CmpMode::GT: return a > b;
    default: return a >= b;
    }
}
// A mask tile holds one byte (0/1) per element when it has as many columns as the data, else one bit.
template <typename M>
inline void mask_set(M &m, int64_t r, int64_t c, int64_t data_cols, bool v) {
    using T = typename M::DType;
    if (M::Cols >= data_cols) {
        m.at(r, c) = static_cast<T>(v ? 1 : 0);
    } else {
        auto bits = static_cast<uint8_t>(m.at(r, c / 8));
        bits = static_cast<uint8_t>(v ? (bits | (1u << (c % 8))) : (bits & ~(1u << (c % 8))));
        m.at(r, c / 8) = static_cast<T>(bits);
    }
}
template <typename M>
inline bool mask_get(M &m, int64_t r, int64_t c, int64_t data_cols) {
    if (M::Cols >= data_cols) return m.at(r, c) != 0;
    return ((static_cast<uint8_t>(m.at(r, c / 8)) >> (c % 8)) & 1u) != 0;
}
}  // namespace cpu

template <typename M, typename A, typename B>
PTO_INST void TCMP(M &mask, A &a, B &b, CmpMode mode) {
    mask.check("TCMP");
    a.check("TCMP");
    b.check("TCMP");
    cpu::need_valid("TCMP", a, b, "src1");
    cpu::for_valid(a, [&](int64_t r, int64_t c) {
        cpu::mask_set(mask, r, c, A::Cols, cpu::compare(cpu::up(a.at(r, c)), cpu::up(b.at(r, c)), mode));
    });
}
template <typename M, typename A, typename Sc, std::enable_if_t<!is_tile_v<Sc>, int> = 0>
PTO_INST void TCMPS(M &mask, A &a, Sc scalar, CmpMode mode) {
    mask.check("TCMPS");
    a.check("TCMPS");
    auto s = cpu::up(static_cast<typename A::DType>(scalar));
    cpu::for_valid(a, [&](int64_t r, int64_t c) {
        cpu::mask_set(mask, r, c, A::Cols, cpu::compare(cpu::up(a.at(r, c)), s, mode));
    });
}
template <typename D, typename M, typename A, typename B, typename... Tmp>
PTO_INST void TSEL(D &d, M &mask, A &a, B &b, Tmp &...) {
    mask.check("TSEL");
    d.check("TSEL");
    a.check("TSEL");
    b.check("TSEL");
    cpu::need_valid("TSEL", d, a, "src0");
    cpu::need_valid("TSEL", d, b, "src1");
    using T = typename D::DType;
    cpu::for_valid(d, [&](int64_t r, int64_t c) {
        d.at(r, c) = cpu::to<T>(cpu::mask_get(mask, r, c, D::Cols) ? cpu::up(a.at(r, c)) : cpu::up(b.at(r, c)));
    });
}

template <typename D, typename S, typename... Tmp>
PTO_INST void TTRANS(D &d, S &s, Tmp &...) {
    d.check("TTRANS");
    s.check("TTRANS");
    if (D::Rows < s.GetValidCol() || D::Cols < s.GetValidRow())
        cpu::fail("TTRANS: destination " + cpu::dims(D::Rows, D::Cols) + " cannot hold the transpose of " +
                  cpu::dims(s.GetValidRow(), s.GetValidCol()));
    using T = typename D::DType;
    cpu::for_valid(s, [&](int64_t r, int64_t c) { d.at(c, r) = cpu::to<T>(cpu::up(s.at(r, c))); });
}

template <typename S, typename... Rest>
PTO_INST void TPRINT(S &s, Rest &...) {
    s.check("TPRINT");
    std::printf("tile %lldx%lld (valid %lldx%lld):\n", static_cast<long long>(S::Rows), static_cast<long long>(S::Cols),
                static_cast<long long>(s.GetValidRow()), static_cast<long long>(s.GetValidCol()));
    for (int64_t r = 0; r < s.GetValidRow(); ++r) {
        for (int64_t c = 0; c < s.GetValidCol(); ++c) std::printf(" %8.4f", static_cast<double>(cpu::up(s.at(r, c))));
        std::printf("\n");
    }
}

// ---------------------------------------------------------------------------------------------------
// Cross-core pipes (TPUSH / TPOP / TFREE): one process-wide FIFO per direction
// ---------------------------------------------------------------------------------------------------
namespace cpu {
enum PipeDir : int { kC2V = 0, kV2C = 1 };

struct PipeEntry {
    int64_t rows = 0, cols = 0;        // valid shape of the pushed tile
    std::size_t elem_size = 0;         // bytes per element
    std::vector<unsigned char> bytes;  // the valid region, row-major
};

struct PipeFifos {
    std::mutex mu;
    std::deque<PipeEntry> fifo[2];
};

// Process-wide (a GNU unique symbol: one instance across every kernel library loaded in the process).
// The _v1 suffix keeps libraries built from a header with another layout apart.
inline PipeFifos &pipe_fifos_v1() {
    static PipeFifos fifos;
    return fifos;
}

inline void check_split(const char *op, int64_t split) {
    if (split != 0)
        fail(std::string(op) + ": split = " + std::to_string(split) + " is not modelled (only split = 0)");
}

template <typename TileT>
inline void pipe_push(const char *op, PipeDir dir, TileT &tile, int64_t split) {
    check_split(op, split);
    tile.check(op);
    using T = typename TileT::DType;
    PipeEntry e;
    e.rows = tile.GetValidRow();
    e.cols = tile.GetValidCol();
    e.elem_size = sizeof(T);
    e.bytes.resize(static_cast<std::size_t>(e.rows * e.cols) * sizeof(T));
    std::size_t off = 0;
    for_valid(tile, [&](int64_t r, int64_t c) {
        std::memcpy(e.bytes.data() + off, &tile.at(r, c), sizeof(T));
        off += sizeof(T);
    });
    PipeFifos &f = pipe_fifos_v1();
    std::lock_guard<std::mutex> lock(f.mu);
    f.fifo[dir].push_back(std::move(e));
}

template <typename TileT>
inline void pipe_pop(const char *op, const char *push_op, PipeDir dir, TileT &tile, int64_t split) {
    check_split(op, split);
    tile.check(op);
    using T = typename TileT::DType;
    PipeEntry e;
    {
        PipeFifos &f = pipe_fifos_v1();
        std::lock_guard<std::mutex> lock(f.mu);
        if (f.fifo[dir].empty())
            fail(std::string(op) + ": nothing was pushed (the " + (dir == kC2V ? "cube -> vector" : "vector -> cube") +
                 " FIFO is empty: run the kernel with the matching " + push_op + " first)");
        e = std::move(f.fifo[dir].front());
        f.fifo[dir].pop_front();
    }
    const int64_t rows = tile.GetValidRow(), cols = tile.GetValidCol();
    if (e.elem_size != sizeof(T) || e.rows != rows || e.cols != cols)
        fail(std::string(op) + ": the pushed tile (valid " + dims(e.rows, e.cols) + ", " +
             std::to_string(e.elem_size) + "-byte elements) does not fit the popping tile (valid " + dims(rows, cols) +
             ", " + std::to_string(sizeof(T)) + "-byte elements): the valid shape and the element size must agree");
    std::size_t off = 0;
    for_valid(tile, [&](int64_t r, int64_t c) {
        std::memcpy(&tile.at(r, c), e.bytes.data() + off, sizeof(T));
        off += sizeof(T);
    });
    fill_pad(tile);
    core().popped[dir] += 1;
}

inline void pipe_free(const char *op, const char *pop_op, PipeDir dir, int64_t split) {
    check_split(op, split);
    int64_t &n = core().popped[dir];
    if (n == 0)
        fail(std::string(op) + ": no popped slot to free (every " + pop_op + " of this kernel was already freed)");
    n -= 1;
}
}  // namespace cpu

// Cube -> vector.
template <typename TileT>
PTO_INST void TPUSH_TO_AIV(TileT &tile, int64_t split) {
    cpu::pipe_push("TPUSH_TO_AIV", cpu::kC2V, tile, split);
}
template <typename TileT>
PTO_INST void TPOP_FROM_AIC(TileT &tile, int64_t split) {
    cpu::pipe_pop("TPOP_FROM_AIC", "TPUSH_TO_AIV", cpu::kC2V, tile, split);
}
PTO_INST void TFREE_FROM_AIC(int64_t split) { cpu::pipe_free("TFREE_FROM_AIC", "TPOP_FROM_AIC", cpu::kC2V, split); }

// Vector -> cube.
template <typename TileT>
PTO_INST void TPUSH_TO_AIC(TileT &tile, int64_t split) {
    cpu::pipe_push("TPUSH_TO_AIC", cpu::kV2C, tile, split);
}
template <typename TileT>
PTO_INST void TPOP_FROM_AIV(TileT &tile, int64_t split) {
    cpu::pipe_pop("TPOP_FROM_AIV", "TPUSH_TO_AIC", cpu::kV2C, tile, split);
}
PTO_INST void TFREE_FROM_AIV(int64_t split) { cpu::pipe_free("TFREE_FROM_AIV", "TPOP_FROM_AIV", cpu::kV2C, split); }

// PTOAS's FIFO: TPipe<flag_base, Direction, slot_size, slot_num, local_slot_num, nosplit>(gm, c2v_buf, v2c_buf)
// and TPUSH/TPOP<TPipe, Tile, TileSplitAxis>(pipe, tile), TFREE<TPipe, TileSplitAxis>(pipe). They share the
// two process-wide FIFOs above: a one-direction pipe uses its own; DIR_BOTH goes by the tile (a vector tile
// is pushed to the cube and popped from it; acc/mat tiles the other way), and its TFREE frees the direction
// of its last pop. A popped tile without an address is placed in the pipe's local consumer buffer, slot
// (pops % local_slot_num) of slot_size bytes. Only TILE_NO_SPLIT runs (as above); flag_base and nosplit
// configure hardware flags only.
enum class Direction { DIR_C2V, DIR_V2C, DIR_BOTH, DIR_C2V_GM, DIR_V2C_GM };
enum class TileSplitAxis { TILE_NO_SPLIT = 0, TILE_UP_DOWN = 1, TILE_LEFT_RIGHT = 2 };

template <int FlagBase, Direction Dir, int SlotSize, int SlotNum, int LocalSlotNum, bool NoSplit>
struct TPipe {
    static constexpr Direction kDir = Dir;
    static constexpr int64_t kSlotSize = SlotSize;
    static constexpr int64_t kLocalSlots = LocalSlotNum > 0 ? LocalSlotNum : 1;
    int64_t buf[2] = {0, 0};  // local consumer buffer of c2v / v2c
    int64_t pops = 0;
    int last_pop = -1;
    template <typename GmT>
    TPipe(GmT, int64_t c2v_buf, int64_t v2c_buf) : buf{c2v_buf, v2c_buf} {}
};

namespace cpu {
template <typename PipeT, typename TileT>
constexpr PipeDir tpipe_dir(bool push) {
    return PipeT::kDir == Direction::DIR_C2V || PipeT::kDir == Direction::DIR_C2V_GM   ? kC2V
           : PipeT::kDir == Direction::DIR_V2C || PipeT::kDir == Direction::DIR_V2C_GM ? kV2C
           : (TileT::Loc == TileType::Vec) == push                                       ? kV2C
                                                                                         : kC2V;
}
}  // namespace cpu

template <typename PipeT, typename TileT, TileSplitAxis Split>
PTO_INST void TPUSH(PipeT &, TileT &tile) {
    cpu::pipe_push("TPUSH", cpu::tpipe_dir<PipeT, TileT>(true), tile, static_cast<int64_t>(Split));
}
template <typename PipeT, typename TileT, TileSplitAxis Split>
PTO_INST void TPOP(PipeT &pipe, TileT &tile) {
    constexpr cpu::PipeDir dir = cpu::tpipe_dir<PipeT, TileT>(false);
    if (tile.addr_ < 0)
        TASSIGN(tile, static_cast<uint64_t>(pipe.buf[dir] + (pipe.pops % PipeT::kLocalSlots) * PipeT::kSlotSize));
    cpu::pipe_pop("TPOP", "TPUSH", dir, tile, static_cast<int64_t>(Split));
    pipe.pops += 1;
    pipe.last_pop = dir;
}
template <typename PipeT, TileSplitAxis Split>
PTO_INST void TFREE(PipeT &pipe) {
    const cpu::PipeDir dir = PipeT::kDir == Direction::DIR_V2C || PipeT::kDir == Direction::DIR_V2C_GM ? cpu::kV2C
                             : PipeT::kDir == Direction::DIR_BOTH && pipe.last_pop >= 0
                                 ? static_cast<cpu::PipeDir>(pipe.last_pop)
                                 : cpu::kC2V;
    cpu::pipe_free("TFREE", "TPOP", dir, static_cast<int64_t>(Split));
}

// ---------------------------------------------------------------------------------------------------
// ISA additions (the rest of PTOAS's ops; numerics agree with pypto/device/interpreter/isa_impls.py)
// ---------------------------------------------------------------------------------------------------
namespace cpu {
// Row-major storage element k of a tile as (row, col); out of range fails.
template <typename T>
inline std::pair<int64_t, int64_t> storage_rc(const char *op, int64_t k) {
    if (k < 0 || k >= static_cast<int64_t>(T::Rows) * T::Cols)
        fail(std::string(op) + ": element offset " + std::to_string(k) + " is outside the " + dims(T::Rows, T::Cols) +
             " tile");
    return {k / T::Cols, k % T::Cols};
}
template <typename X>
inline X fmod_c(X a, X b) {
    if constexpr (std::is_integral_v<X>) {
        if (b == 0) fail("TFMOD: integer division by zero");
        return a % b;
    } else {
        return std::fmod(a, b);
    }
}
}  // namespace cpu

template <typename D, typename A, typename B>
PTO_INST void TFMOD(D &d, A &a, B &b) {
    cpu::binary("TFMOD", d, a, b, [](auto x, auto y) { return cpu::fmod_c(x, y); });
}
template <typename D, typename A, typename Sc, std::enable_if_t<is_tile_v<A> && !is_tile_v<Sc>, int> = 0>
PTO_INST void TFMODS(D &d, A &a, Sc scalar) {
    auto s = cpu::up(static_cast<typename A::DType>(scalar));
    cpu::unary("TFMODS", d, a, [&](auto x) { decltype(x) y = s; return cpu::fmod_c(x, y); });
}
// trems with PTOAS's tmp tile: TREMS(dst, src, scalar, tmp).
template <typename D, typename A, typename Sc, typename Tmp,
          std::enable_if_t<is_tile_v<A> && !is_tile_v<Sc> && is_tile_v<Tmp>, int> = 0>
PTO_INST void TREMS(D &d, A &a, Sc scalar, Tmp &) {
    TREMS(d, a, scalar);
}

// Column product (top to bottom) and the first row index of each column's max / min.
template <typename D, typename S>
PTO_INST void TCOLPROD(D &d, S &s) {
    d.check("TCOLPROD");
    s.check("TCOLPROD");
    using T = typename D::DType;
    if (s.GetValidRow() == 0) cpu::fail("TCOLPROD: source has no valid rows");
    for (int64_t c = 0; c < s.GetValidCol(); ++c) {
        auto acc = cpu::up(s.at(0, c));
        for (int64_t r = 1; r < s.GetValidRow(); ++r) acc = acc * cpu::up(s.at(r, c));
        d.at(0, c) = cpu::to<T>(acc);
    }
}
namespace cpu {
template <typename D, typename S>
inline void col_arg(const char *op, D &d, S &s, bool is_max) {
    d.check(op);
    s.check(op);
    using T = typename D::DType;
    if (s.GetValidRow() == 0) fail(std::string(op) + ": source has no valid rows");
    for (int64_t c = 0; c < s.GetValidCol(); ++c) {
        auto best = up(s.at(0, c));
        int64_t idx = 0;
        for (int64_t r = 1; r < s.GetValidRow(); ++r) {
            auto v = up(s.at(r, c));
            if (is_max ? v > best : v < best) { best = v; idx = r; }
        }
        d.at(0, c) = to<T>(idx);
    }
}
}  // namespace cpu
template <typename D, typename S, typename Tmp>
PTO_INST void TCOLARGMAX(D &d, S &s, Tmp &) { cpu::col_arg("TCOLARGMAX", d, s, true); }
template <typename D, typename S, typename Tmp>
PTO_INST void TCOLARGMIN(D &d, S &s, Tmp &) { cpu::col_arg("TCOLARGMIN", d, s, false); }

// dst = [src0 | src1] (src0's valid columns, then src1's).
template <typename D, typename A, typename B>
PTO_INST void TCONCAT(D &d, A &a, B &b) {
    d.check("TCONCAT");
    a.check("TCONCAT");
    b.check("TCONCAT");
    if (a.GetValidCol() + b.GetValidCol() > D::Cols)
        cpu::fail("TCONCAT: " + std::to_string(a.GetValidCol()) + " + " + std::to_string(b.GetValidCol()) +
                  " columns exceed the destination's " + std::to_string(D::Cols));
    using T = typename D::DType;
    for (int64_t r = 0; r < a.GetValidRow(); ++r)
        for (int64_t c = 0; c < a.GetValidCol(); ++c) d.at(r, c) = cpu::to<T>(cpu::up(a.at(r, c)));
    for (int64_t r = 0; r < b.GetValidRow(); ++r)
        for (int64_t c = 0; c < b.GetValidCol(); ++c) d.at(r, a.GetValidCol() + c) = cpu::to<T>(cpu::up(b.at(r, c)));
}

// TCI<DstTile, T, descending>(dst, S): dst = S + k (descending: S - k) for the k-th valid element
// in row-major order.
template <typename D, typename T0, int Descending, typename Sc>
PTO_INST void TCI(D &d, Sc start) {
    d.check("TCI");
    using T = typename D::DType;
    cpu::for_valid(d, [&](int64_t r, int64_t c) {
        const int64_t k = r * d.GetValidCol() + c;
        d.at(r, c) = static_cast<T>(Descending ? static_cast<int64_t>(start) - k : static_cast<int64_t>(start) + k);
    });
}
// TTRI<DstTile, upper_or_lower>(dst, diagonal): 1 where j <= i + diagonal (0) or j >= i + diagonal (1), else 0.
template <typename D, int UpperOrLower, typename Sc>
PTO_INST void TTRI(D &d, Sc diagonal) {
    constexpr int upper_or_lower = UpperOrLower;
    d.check("TTRI");
    using T = typename D::DType;
    const int64_t k = static_cast<int64_t>(diagonal);
    cpu::for_valid(d, [&](int64_t i, int64_t j) {
        const bool keep = upper_or_lower == 0 ? j <= i + k : j >= i + k;
        d.at(i, j) = static_cast<T>(keep ? 1 : 0);
    });
}

// dst = mask ? src : scalar.
template <typename D, typename M, typename A, typename Tmp, typename Sc>
PTO_INST void TSELS(D &d, M &mask, A &a, Tmp &, Sc scalar) {
    mask.check("TSELS");
    d.check("TSELS");
    a.check("TSELS");
    cpu::need_valid("TSELS", d, a, "src");
    using T = typename D::DType;
    const auto s = cpu::up(static_cast<typename A::DType>(scalar));
    cpu::for_valid(d, [&](int64_t r, int64_t c) {
        d.at(r, c) = cpu::to<T>(cpu::mask_get(mask, r, c, D::Cols) ? cpu::up(a.at(r, c)) : s);
    });
}

template <typename D, typename A>
PTO_INST void TFILLPAD_EXPAND(D &d, A &a) {
    cpu::fillpad("TFILLPAD_EXPAND", d, a);
}
template <typename D, typename A>
PTO_INST void TFILLPAD_INPLACE(D &d, A &a) {
    cpu::fillpad("TFILLPAD_INPLACE", d, a);
}

// Storage element access (row-major storage index).
template <typename S, typename I>
PTO_INST typename S::DType TGETVAL(S &s, I offset) {
    s.check("TGETVAL");
    auto rc = cpu::storage_rc<S>("TGETVAL", static_cast<int64_t>(offset));
    return s.at(rc.first, rc.second);
}
template <typename D, typename I, typename V>
PTO_INST void TSETVAL(D &d, I offset, V value) {
    d.check("TSETVAL");
    auto rc = cpu::storage_rc<D>("TSETVAL", static_cast<int64_t>(offset));
    d.at(rc.first, rc.second) = static_cast<typename D::DType>(value);
}

// dst storage element indexes(i, j) = src(i, j) (row-major order, later wins).
template <typename D, typename S, typename I>
PTO_INST void TSCATTER(D &d, S &s, I &idx) {
    d.check("TSCATTER");
    s.check("TSCATTER");
    idx.check("TSCATTER");
    using T = typename D::DType;
    for (int64_t i = 0; i < s.GetValidRow(); ++i)
        for (int64_t j = 0; j < s.GetValidCol(); ++j) {
            auto rc = cpu::storage_rc<D>("TSCATTER", static_cast<int64_t>(idx.at(i, j)));
            d.at(rc.first, rc.second) = cpu::to<T>(cpu::up(s.at(i, j)));
        }
}
// Sorting: (value, u32 index) pairs of 8 bytes in a tile row (PTO-ISA's region-proposal layout):
// the value at bytes 0.. (f16: then 2 zero bytes), the index at bytes 4..8; pair k at bytes 8k.
namespace cpu {
constexpr int64_t kPairBytes = 8;
template <typename D>
inline uint8_t *pair_row(const char *op, D &d, int64_t r, int64_t pairs) {
    static_assert(D::BL == BLayout::RowMajor, "sorted pairs live in row-major tiles");
    if (pairs * kPairBytes > static_cast<int64_t>(D::Cols * sizeof(typename D::DType)))
        fail(std::string(op) + ": " + std::to_string(pairs) + " (value, index) pairs need " +
             std::to_string(pairs * kPairBytes) + " bytes a row; the tile has " +
             std::to_string(D::Cols * sizeof(typename D::DType)));
    return reinterpret_cast<uint8_t *>(&d.at(r, 0));
}
template <typename T>
inline void put_pair(uint8_t *row, int64_t k, T v, uint32_t ix) {
    uint8_t *p = row + k * kPairBytes;
    std::memset(p, 0, kPairBytes);
    std::memcpy(p, &v, sizeof(T));
    std::memcpy(p + 4, &ix, 4);
}
template <typename T>
inline std::pair<T, uint32_t> get_pair(const uint8_t *row, int64_t k) {
    T v;
    uint32_t ix;
    std::memcpy(&v, row + k * kPairBytes, sizeof(T));
    std::memcpy(&ix, row + k * kPairBytes + 4, 4);
    return {v, ix};
}
}  // namespace cpu

// TSORT32(dst, src, idx[, tmp]): each row's valid values in blocks of 32 (the last may be shorter),
// each sorted descending (ties keep their order), as (value, idx) pairs.
template <typename D, typename S, typename I, typename... Tmp>
PTO_INST void TSORT32(D &d, S &s, I &idx, Tmp &...) {
    d.check("TSORT32");
    s.check("TSORT32");
    idx.check("TSORT32");
    using T = typename S::DType;
    const int64_t vc = s.GetValidCol();
    for (int64_t r = 0; r < s.GetValidRow(); ++r) {
        std::vector<T> vals(static_cast<size_t>(vc));
        std::vector<uint32_t> ixs(static_cast<size_t>(vc));
        for (int64_t c = 0; c < vc; ++c) {
            vals[c] = s.at(r, c);
            ixs[c] = static_cast<uint32_t>(idx.at(r, c));
        }
        uint8_t *row = cpu::pair_row("TSORT32", d, r, vc);
        for (int64_t b = 0; b < vc; b += 32) {
            const int64_t n = std::min<int64_t>(32, vc - b);
            int64_t order[32];
            for (int64_t k = 0; k < n; ++k) order[k] = b + k;
            std::stable_sort(order, order + n, [&](int64_t x, int64_t y) {
                return static_cast<double>(cpu::up(vals[x])) > static_cast<double>(cpu::up(vals[y]));
            });
            for (int64_t k = 0; k < n; ++k) cpu::put_pair<T>(row, b + k, vals[order[k]], ixs[order[k]]);
        }
    }
}

// TMRGSORT(dst, src, blockLen): src's row holds sorted lists of blockLen elements each
// (blockLen * sizeof(T) / 8 pairs); every 4 consecutive lists merge into one (ties: the earlier list).
template <typename D, typename S, typename L, std::enable_if_t<std::is_integral_v<L>, int> = 0>
PTO_INST void TMRGSORT(D &d, S &s, L blockLen) {
    d.check("TMRGSORT");
    s.check("TMRGSORT");
    using T = typename S::DType;
    const int64_t block = static_cast<int64_t>(blockLen) * static_cast<int64_t>(sizeof(T)) / cpu::kPairBytes;
    const int64_t n = s.GetValidCol() * static_cast<int64_t>(sizeof(T)) / cpu::kPairBytes;
    if (block <= 0 || n % (4 * block) != 0)
        cpu::fail("TMRGSORT: src's " + std::to_string(s.GetValidCol()) +
                  " valid columns are not a multiple of 4 x blockLen (" + std::to_string(blockLen) + ")");
    for (int64_t r = 0; r < s.GetValidRow(); ++r) {
        const uint8_t *in = cpu::pair_row("TMRGSORT", s, r, n);
        std::vector<std::pair<T, uint32_t>> out;
        out.reserve(static_cast<size_t>(n));
        for (int64_t g = 0; g < n; g += 4 * block) {
            int64_t head[4] = {0, 0, 0, 0};
            for (int64_t m = 0; m < 4 * block; ++m) {
                int best = -1;
                for (int k = 0; k < 4; ++k) {
                    if (head[k] >= block) continue;
                    if (best < 0 || static_cast<double>(cpu::up(cpu::get_pair<T>(in, g + k * block + head[k]).first)) >
                                        static_cast<double>(cpu::up(cpu::get_pair<T>(in, g + best * block + head[best]).first)))
                        best = k;
                }
                out.push_back(cpu::get_pair<T>(in, g + best * block + head[best]));
                ++head[best];
            }
        }
        uint8_t *row = cpu::pair_row("TMRGSORT", d, r, n);
        for (int64_t k = 0; k < n; ++k) cpu::put_pair<T>(row, k, out[k].first, out[k].second);
    }
}

// tgather's mask-pattern form: each row of src's valid region keeps element j when
// j % period == phase (the pattern's bits from the right: P0101 keeps 0, 2, 4..; P1010 1, 3, 5..;
// P0001 0, 4..; P0010 1, 5..; P0100 2, 6..; P1000 3, 7..; P1111 all), packed to the left of dst's
// row, bit for bit; at most dst's valid columns.
enum class MaskPattern { P0101, P1010, P0001, P0010, P0100, P1000, P1111 };
template <typename DT, typename ST, MaskPattern P, typename D, typename S>
PTO_INST void TGATHER(D &d, S &s) {
    d.check("TGATHER");
    s.check("TGATHER");
    static_assert(sizeof(typename D::DType) == sizeof(typename S::DType), "mask-pattern TGATHER: element sizes differ");
    constexpr int period = P == MaskPattern::P1111 ? 1 : (P == MaskPattern::P0101 || P == MaskPattern::P1010) ? 2 : 4;
    constexpr int phase = P == MaskPattern::P1010 || P == MaskPattern::P0010 ? 1
                          : P == MaskPattern::P0100                            ? 2
                          : P == MaskPattern::P1000                            ? 3
                                                                               : 0;
    const int64_t rows = std::min<int64_t>(s.GetValidRow(), d.GetValidRow());
    for (int64_t r = 0; r < rows; ++r) {
        int64_t k = 0;
        for (int64_t c = phase; c < s.GetValidCol() && k < d.GetValidCol(); c += period, ++k)
            std::memcpy(&d.at(r, k), &s.at(r, c), sizeof(typename D::DType));
    }
}
// Compare form TGATHER<D, S, C, Tmp, CmpMode, offset>(dst, src, k, cdst, tmp): for each row i, the
// column indices j (ascending) with src(i, j) <mode> k, plus offset, packed to the left of dst's row
// (at most its valid columns); cdst(i, 0) = how many matched. tmp is scratch, unused here.
template <typename DT, typename ST, typename CT, typename TT, CmpMode M, int Offset, typename D, typename S, typename K,
          typename C, typename T>
PTO_INST void TGATHER(D &d, S &s, K k, C &cdst, T &) {
    d.check("TGATHER");
    s.check("TGATHER");
    cdst.check("TGATHER");
    const auto kv = cpu::up(static_cast<typename S::DType>(k));
    const int64_t rows = std::min({s.GetValidRow(), d.GetValidRow(), cdst.GetValidRow()});
    for (int64_t r = 0; r < rows; ++r) {
        int64_t n = 0;
        for (int64_t c = 0; c < s.GetValidCol(); ++c) {
            const auto x = cpu::up(s.at(r, c));
            const bool hit = M == CmpMode::EQ   ? x == kv
                             : M == CmpMode::NE ? x != kv
                             : M == CmpMode::LT ? x < kv
                             : M == CmpMode::LE ? x <= kv
                             : M == CmpMode::GT ? x > kv
                                                : x >= kv;
            if (!hit) continue;
            if (n < d.GetValidCol()) d.at(r, n) = static_cast<typename D::DType>(c + Offset);
            ++n;
        }
        cdst.at(r, 0) = static_cast<typename C::DType>(n);
    }
}
// TGATHERB(dst, src, offsets): dst row i in 32-byte blocks (the last may be shorter), block j = the
// 32 bytes of src's storage at byte offset offsets(i, j) (a multiple of 32, inside src).
template <typename D, typename S, typename O>
PTO_INST void TGATHERB(D &d, S &s, O &offs) {
    d.check("TGATHERB");
    s.check("TGATHERB");
    offs.check("TGATHERB");
    const auto *src = reinterpret_cast<const uint8_t *>(s.data());
    const int64_t src_bytes = static_cast<int64_t>(S::Bytes);
    const int64_t row_bytes = d.GetValidCol() * static_cast<int64_t>(sizeof(typename D::DType));
    const int64_t blocks = (row_bytes + 31) / 32;
    if (offs.GetValidCol() < blocks)
        cpu::fail("TGATHERB: dst rows need " + std::to_string(blocks) + " block offsets, offsets has " +
                  std::to_string(offs.GetValidCol()) + " valid columns");
    const int64_t rows = std::min<int64_t>(d.GetValidRow(), offs.GetValidRow());
    for (int64_t i = 0; i < rows; ++i) {
        auto *row = reinterpret_cast<uint8_t *>(&d.at(i, 0));
        for (int64_t j = 0; j < blocks; ++j) {
            const int64_t o = static_cast<int64_t>(offs.at(i, j)), n = std::min<int64_t>(32, row_bytes - 32 * j);
            if (o % 32 != 0 || o < 0 || o + n > src_bytes)
                cpu::fail("TGATHERB: byte offset " + std::to_string(o) + " is not a 32-byte block inside the " +
                          std::to_string(src_bytes) + "-byte src");
            std::memcpy(row + 32 * j, src + o, static_cast<size_t>(n));
        }
    }
}
// Index form: dst(i, j) = src storage element indices(i, j).
template <typename D, typename S, typename I, typename... Tmp>
PTO_INST void TGATHER(D &d, S &s, I &idx, Tmp &...) {
    d.check("TGATHER");
    s.check("TGATHER");
    idx.check("TGATHER");
    using T = typename D::DType;
    cpu::for_valid(d, [&](int64_t i, int64_t j) {
        auto rc = cpu::storage_rc<S>("TGATHER", static_cast<int64_t>(idx.at(i, j)));
        d.at(i, j) = static_cast<T>(s.at(rc.first, rc.second));
    });
}

// tquant's quantisation types (PTOAS's pto::QuantType).
enum class QuantType { INT8_SYM, INT8_ASYM };
// tmrgsort's executed-count list (PTOAS's vector<4xi16>) and its template form.
struct MrgSortExecutedNumList {
    uint16_t counts[4] = {};
    MrgSortExecutedNumList() = default;
    constexpr MrgSortExecutedNumList(uint16_t a, uint16_t b, uint16_t c, uint16_t d) : counts{a, b, c, d} {}
    explicit MrgSortExecutedNumList(int64_t packed) {  // a kernel argument: four 16-bit counts, low first
        for (int i = 0; i < 4; ++i) counts[i] = static_cast<uint16_t>(static_cast<uint64_t>(packed) >> (16 * i));
    }
};
// Format 2: TMRGSORT<Dst, Tmp, Src0, Src1[, Src2[, Src3]], exhausted>(dst, executed, tmp, src0, src1..):
// merge the sources' sorted pair rows into dst's valid row, largest first (ties: the earlier source),
// until dst is full or every list is used up; Exhausted stops as soon as one list is used up. The
// executed counts (pairs taken from each list; 0 for absent lists) are written into the
// MrgSortExecutedNumList, as the hardware reports them (the interpreter writes them into a writable
// list argument); tmp is scratch, unused here.
namespace cpu {
template <bool Exhausted, typename D, typename Ex, typename Tmp, typename... S>
inline void mrgsort_lists(D &d, Ex &&executed, Tmp &, S &...srcs) {
    using T = typename D::DType;
    constexpr int N = sizeof...(S);
    d.check("TMRGSORT");
    (srcs.check("TMRGSORT"), ...);
    const int64_t len[N] = {srcs.GetValidCol() * static_cast<int64_t>(sizeof(T)) / kPairBytes...};
    const uint8_t *rows[N] = {pair_row("TMRGSORT", srcs, 0, srcs.GetValidCol() * static_cast<int64_t>(sizeof(T)) / kPairBytes)...};
    const int64_t limit = d.GetValidCol() * static_cast<int64_t>(sizeof(T)) / kPairBytes;
    int64_t head[N] = {};
    std::vector<std::pair<T, uint32_t>> merged;
    while (static_cast<int64_t>(merged.size()) < limit) {
        int best = -1;
        bool all = true;
        for (int k = 0; k < N; ++k) {
            if (head[k] >= len[k]) {
                all = false;
                continue;
            }
            if (best < 0 || static_cast<double>(up(get_pair<T>(rows[k], head[k]).first)) >
                                static_cast<double>(up(get_pair<T>(rows[best], head[best]).first)))
                best = k;
        }
        if (best < 0 || (Exhausted && !all)) break;
        merged.push_back(get_pair<T>(rows[best], head[best]));
        ++head[best];
    }
    uint8_t *out = pair_row("TMRGSORT", d, 0, static_cast<int64_t>(merged.size()));
    for (size_t k = 0; k < merged.size(); ++k) put_pair<T>(out, static_cast<int64_t>(k), merged[k].first, merged[k].second);
    using List = std::remove_reference_t<Ex>;
    if constexpr (std::is_same_v<std::remove_cv_t<List>, MrgSortExecutedNumList> && !std::is_const_v<List>) {
        for (int k = 0; k < 4; ++k) executed.counts[k] = static_cast<uint16_t>(k < N ? head[k] : 0);
    }
}
}  // namespace cpu
template <typename D, typename T, typename S0, typename S1, bool Exhausted, typename... Ts>
PTO_INST void TMRGSORT(Ts &&...args) { cpu::mrgsort_lists<Exhausted>(args...); }
template <typename D, typename T, typename S0, typename S1, typename S2, bool Exhausted, typename... Ts>
PTO_INST void TMRGSORT(Ts &&...args) { cpu::mrgsort_lists<Exhausted>(args...); }
template <typename D, typename T, typename S0, typename S1, typename S2, typename S3, bool Exhausted, typename... Ts>
PTO_INST void TMRGSORT(Ts &&...args) { cpu::mrgsort_lists<Exhausted>(args...); }
// ----------------------------------------------------------------------------- A5-only ops
// Run on the CPU whatever the arch (PTO-ISA's meaning; the interpreter's numerics in
// pypto/device/interpreter/isa_impls.py agree bit for bit, test_isa_numerics.py).

// THISTOGRAM<isMSB>(dst, src, idx), ui16 src: dst(r, b) for b in 0..255 = how many valid elements of
// src row r have the selected byte == b. isMSB: the high byte of every element (HistByte::BYTE_1);
// !isMSB: the low byte of the elements whose high byte == idx(r, 0) (BYTE_0). dst columns >= 256 untouched.
template <bool IsMSB, typename D, typename S, typename I>
PTO_INST void THISTOGRAM(D &d, S &s, I &idx) {
    d.check("THISTOGRAM");
    s.check("THISTOGRAM");
    idx.check("THISTOGRAM");
    static_assert(sizeof(typename S::DType) == 2 && sizeof(typename D::DType) == 4, "THISTOGRAM: ui16 -> ui32");
    if (D::Cols < 256) cpu::fail("THISTOGRAM: dst needs 256 columns (one per byte value)");
    for (int64_t r = 0; r < s.GetValidRow() && r < D::Rows; ++r) {
        uint32_t bins[256] = {};
        const uint32_t sel = static_cast<uint32_t>(static_cast<uint8_t>(idx.at(r, 0)));
        for (int64_t j = 0; j < s.GetValidCol(); ++j) {
            const uint32_t v = static_cast<uint16_t>(s.at(r, j));
            if (IsMSB) ++bins[v >> 8];
            else if ((v >> 8) == sel) ++bins[v & 0xFFu];
        }
        for (int b = 0; b < 256; ++b) d.at(r, b) = static_cast<typename D::DType>(bins[b]);
    }
}

// TPACK(dst, src): each valid element narrowed to dst's width by keeping the low-order bytes of its
// bit pattern (b32 -> b16, b32 -> b8, b16 -> b8; two's-complement truncation for integers).
template <typename D, typename S>
PTO_INST void TPACK(D &d, S &s) {
    d.check("TPACK");
    s.check("TPACK");
    using DT = typename D::DType;
    using ST = typename S::DType;
    static_assert(sizeof(DT) < sizeof(ST), "TPACK narrows");
    cpu::for_valid(d, [&](int64_t i, int64_t j) {
        ST v = s.at(i, j);
        unsigned char b[sizeof(ST)];
        std::memcpy(b, &v, sizeof(ST));
        std::memcpy(&d.at(i, j), b, sizeof(DT));  // little-endian: the low-order bytes come first
    });
}

// MGATHER[<GatherOOB>](dst, table, idx) / MSCATTER[<ScatterAtomicOp[, ScatterOOB]>](table, src, idx):
// the element form (idx has the tile's valid columns) indexes the GM view's elements in row-major
// order; the row form (idx one column) moves row idx(i, 0) of the view. Out-of-bounds: Clamp / Wrap
// remap, Zero fills (gather), Skip drops (scatter), Undefined (default) is a run-time error here.
// Scatter goes element by element in row-major order (a later write wins); Add / Max / Min combine
// with the GM value (Add in the element type).
enum class GatherOOB : uint8_t { Undefined = 0, Clamp = 1, Wrap = 2, Zero = 3 };
enum class ScatterAtomicOp : uint8_t { None = 0, Add = 1, Max = 2, Min = 3 };
enum class ScatterOOB : uint8_t { Undefined = 0, Skip = 1, Clamp = 2, Wrap = 3 };
namespace cpu {
// The index after the out-of-bounds mode (0 Undefined, 1 Clamp, 2 Wrap, 3 Zero/Skip); false: drop it.
inline bool gm_index(const char *op, int64_t &k, int64_t cap, int mode) {
    if (mode == 1) k = std::min(std::max<int64_t>(k, 0), cap - 1);
    else if (mode == 2) k = ((k % cap) + cap) % cap;
    if (k >= 0 && k < cap) return true;
    if (mode == 0)
        fail(std::string(op) + ": index " + std::to_string(k) + " is outside the GM table of " + std::to_string(cap) +
             " entries (no out-of-bounds mode)");
    return false;
}
template <typename T, typename I>
inline bool gm_row_form(const char *op, const T &table, const I &idx, int64_t vc) {
    if (idx.GetValidCol() == vc) return false;
    if (table.cols() < vc)
        fail(std::string(op) + ": GM table rows of " + std::to_string(table.cols()) +
             " elements are shorter than the tile's " + std::to_string(vc) + " columns");
    return true;
}
}  // namespace cpu
template <GatherOOB Oob = GatherOOB::Undefined, typename D, typename G, typename I>
PTO_INST void MGATHER(D &d, G &table, I &idx) {
    d.check("MGATHER");
    idx.check("MGATHER");
    table.check("MGATHER");
    using T = typename D::DType;
    const int mode = static_cast<int>(Oob);
    const int64_t vc = d.GetValidCol();
    const bool row = cpu::gm_row_form("MGATHER", table, idx, vc);
    for (int64_t i = 0; i < d.GetValidRow(); ++i)
        for (int64_t j = 0; j < vc; ++j) {
            int64_t k = static_cast<int64_t>(idx.at(i, row ? 0 : j));
            const bool ok = cpu::gm_index("MGATHER", k, row ? table.rows() : table.rows() * table.cols(), mode);
            d.at(i, j) = !ok ? T(0) : row ? table.at(k, j) : table.at(k / table.cols(), k % table.cols());
        }
}
template <ScatterAtomicOp Atomic = ScatterAtomicOp::None, ScatterOOB Oob = ScatterOOB::Undefined, typename G,
          typename S, typename I>
PTO_INST void MSCATTER(G &table, S &s, I &idx) {
    s.check("MSCATTER");
    idx.check("MSCATTER");
    table.check("MSCATTER");
    using T = typename G::DType;
    const int mode = Oob == ScatterOOB::Skip ? 3 : Oob == ScatterOOB::Clamp ? 1 : Oob == ScatterOOB::Wrap ? 2 : 0;
    const int64_t vc = s.GetValidCol();
    const bool row = cpu::gm_row_form("MSCATTER", table, idx, vc);
    for (int64_t i = 0; i < s.GetValidRow(); ++i)
        for (int64_t j = 0; j < vc; ++j) {
            int64_t k = static_cast<int64_t>(idx.at(i, row ? 0 : j));
            if (!cpu::gm_index("MSCATTER", k, row ? table.rows() : table.rows() * table.cols(), mode)) continue;
            T &g = row ? table.at(k, j) : table.at(k / table.cols(), k % table.cols());
            const T v = s.at(i, j);
            if constexpr (Atomic == ScatterAtomicOp::Add) {
                if constexpr (std::is_integral_v<T>)
                    g = static_cast<T>(static_cast<std::make_unsigned_t<T>>(g) + static_cast<std::make_unsigned_t<T>>(v));
                else
                    g = cpu::to<T>(cpu::up(g) + cpu::up(v));
            } else if constexpr (Atomic == ScatterAtomicOp::Max) {
                g = cpu::up(v) > cpu::up(g) ? v : g;
            } else if constexpr (Atomic == ScatterAtomicOp::Min) {
                g = cpu::up(v) < cpu::up(g) ? v : g;
            } else {
                g = v;
            }
        }
}

// TRANDOM<Rounds>(dst, key, counter): PTO-ISA's A5 generator, Philox-4x32-Rounds (Salmon et al., SC'11;
// multipliers 0xD2511F53 / 0xCD9E8D57, key bumps 0x9E3779B9 / 0xBB67AE85). Row by row, chunks of 4 x 64
// columns: lane L of a chunk runs Philox on counter + L (128-bit, word 0 lowest) and its 4 words fill
// columns 4L..4L+3 of the chunk (valid columns only). After each chunk the counter advances by 64, after
// a row's last chunk by (valid_cols - 1) % 64 + 1, and carries on into the next row.
struct TRandomKey {
    uint32_t w[2];
    uint32_t operator[](int i) const { return w[i]; }
};
struct TRandomCounter {
    uint32_t w[4];
    uint32_t operator[](int i) const { return w[i]; }
};
namespace cpu {
inline void add128(uint32_t c[4], uint64_t v) {
    for (int i = 0; i < 4 && v != 0; ++i) {
        v += c[i];
        c[i] = static_cast<uint32_t>(v);
        v >>= 32;
    }
}
inline void philox4x32(uint32_t c[4], uint32_t k0, uint32_t k1, int rounds) {
    for (int r = 0; r < rounds; ++r) {
        const uint64_t p0 = static_cast<uint64_t>(c[0]) * 0xD2511F53u;
        const uint64_t p1 = static_cast<uint64_t>(c[2]) * 0xCD9E8D57u;
        const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0;
        const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = static_cast<uint32_t>(p1);
        c[2] = n2;
        c[3] = static_cast<uint32_t>(p0);
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}
}  // namespace cpu
template <uint16_t Rounds = 10, typename D>
PTO_INST void TRANDOM(D &d, const TRandomKey &key, const TRandomCounter &counter) {
    static_assert(Rounds == 7 || Rounds == 10, "TRANDOM: Rounds is 7 or 10");
    static_assert(sizeof(typename D::DType) == 4, "TRANDOM: i32 / ui32 dst");
    d.check("TRANDOM");
    constexpr int64_t kLanes = 64, kChunk = 4 * kLanes;
    const int64_t vc = d.GetValidCol();
    const int64_t loops = (vc + kChunk - 1) / kChunk;
    uint32_t ctr[4] = {counter[0], counter[1], counter[2], counter[3]};
    for (int64_t r = 0; r < d.GetValidRow(); ++r)
        for (int64_t j = 0; j < loops; ++j) {
            for (int64_t lane = 0; lane < kLanes; ++lane) {
                uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
                cpu::add128(c, static_cast<uint64_t>(lane));
                cpu::philox4x32(c, key[0], key[1], Rounds);
                for (int w = 0; w < 4; ++w) {
                    const int64_t col = j * kChunk + 4 * lane + w;
                    if (col < vc) {
                        typename D::DType v;
                        std::memcpy(&v, &c[w], 4);
                        d.at(r, col) = v;
                    }
                }
            }
            cpu::add128(ctr, static_cast<uint64_t>(j != loops - 1 ? kLanes : (vc - 1) % kLanes + 1));
        }
}

// TGET_SCALE_ADDR(dst, src): PTO-ISA's Address(dst) = Address(src) >> SHIFT_MX_ADDR (4): dst, a
// Scaling tile, is rebound (as TASSIGN) to that byte of the scaling buffer; no data moves.
constexpr uint32_t SHIFT_MX_ADDR = 4;
template <typename D, typename S>
PTO_INST void TGET_SCALE_ADDR(D &d, S &s) {
    static_assert(D::Loc == TileType::Scaling, "TGET_SCALE_ADDR: dst is a Scaling tile");
    s.check("TGET_SCALE_ADDR");
    TASSIGN(d, static_cast<int64_t>(static_cast<uint64_t>(s.addr_) >> SHIFT_MX_ADDR));
}
// TQUANT<INT8_SYM>(dst, src, fp): dst = sat_i8(rint(src * fp(r, 0))); TQUANT<INT8_ASYM>(dst, src, fp,
// offset): dst = sat_u8(rint(src * fp(r, 0) + offset(r, 0))) (tdequant's inverse, fp = 1 / scale). The
// product and sum in double (exact product: one rounding with or without FMA), ties to even, NaN -> 0.
namespace cpu {
template <typename D, typename S, typename F, typename O>
inline void quant(D &d, S &s, F &fp, O *offset, double lo, double hi) {
    d.check("TQUANT");
    s.check("TQUANT");
    fp.check("TQUANT");
    need_valid("TQUANT", d, s, "src");
    if (fp.GetValidRow() < d.GetValidRow() || (offset != nullptr && offset->GetValidRow() < d.GetValidRow()))
        fail("TQUANT: fp/offset need one value per row of the destination");
    for_valid(d, [&](int64_t r, int64_t c) {
        double v = static_cast<double>(s.at(r, c)) * static_cast<double>(fp.at(r, 0));
        if (offset != nullptr) v += static_cast<double>(offset->at(r, 0));
        v = std::isnan(v) ? 0.0 : std::min(hi, std::max(lo, std::nearbyint(v)));
        d.at(r, c) = static_cast<typename D::DType>(v);
    });
}
}  // namespace cpu
template <QuantType Q, typename D, typename S, typename F>
PTO_INST void TQUANT(D &d, S &s, F &fp) {
    static_assert(Q == QuantType::INT8_SYM, "TQUANT<INT8_ASYM> takes an offset tile");
    cpu::quant(d, s, fp, static_cast<F *>(nullptr), -128.0, 127.0);
}
template <QuantType Q, typename D, typename S, typename F, typename O>
PTO_INST void TQUANT(D &d, S &s, F &fp, O &offset) {
    cpu::quant(d, s, fp, &offset, Q == QuantType::INT8_SYM ? -128.0 : 0.0, Q == QuantType::INT8_SYM ? 127.0 : 255.0);
}
// TDEQUANT<DstTile, SrcTile>(dst, src, scale, offset): dst = (float(src) - offset[r][0]) * scale[r][0].
template <typename DT, typename ST, typename D, typename S, typename Sc, typename Of>
PTO_INST void TDEQUANT(D &d, S &s, Sc &scale, Of &offset) {
    d.check("TDEQUANT");
    s.check("TDEQUANT");
    cpu::need_valid("TDEQUANT", d, s, "src");
    if (scale.GetValidRow() < d.GetValidRow() || offset.GetValidRow() < d.GetValidRow())
        cpu::fail("TDEQUANT: scale/offset need one value per row of the destination");
    cpu::for_valid(d, [&](int64_t r, int64_t c) {
        const float v = static_cast<float>(s.at(r, c)) - static_cast<float>(offset.at(r, 0));
        d.at(r, c) = v * static_cast<float>(scale.at(r, 0));
    });
}

// Hints and hardware-only configuration: no-ops on the CPU.
template <typename D, typename S>
PTO_INST void TPREFETCH(D &, S &) {}
template <typename... Ts>
PTO_INST void TSYNC(Ts &...) {}
inline void set_ffts_base_addr(uint64_t) {}
[[noreturn]] inline void trap() { cpu::fail("trap: the kernel trapped"); }

// Cross-rank communication (pto.comm.tnotify / twait / tput / tget / get_rank / get_nranks / peer_view):
// one C++ kernel process simulates one chip and has no peer ranks, window buffers or signals, so each
// of these ops is a documented trap naming the op. The interpreter runs them against the rank's
// windows (pypto/device/interpreter/comm_impls.py, on a multi-rank launch).
[[noreturn]] inline void comm_trap(const char *op) {
    cpu::fail(std::string(op) + ": cross-rank communication is not simulated in the C++ engine (one process is "
              "one chip without peers); run this kernel on the interpreter (RunConfig(kernel_engine=\"interpreter\"))");
}
[[noreturn]] inline int64_t comm_trap_i64(const char *op) { comm_trap(op); }

// Async DMA sessions (pto.build_async_session / tput_async / tget_async / wait_async_event /
// test_async_event), in PTOAS's call shapes. The CPU model, the interpreter's too: a put or get is one
// GM -> GM copy of the flat 1-D view, done when it is issued (the real SDMA engine stages it through the
// session's UB scratch tile; its bytes are left as they were, as the interpreter leaves them); its event
// reports completion at once, so Wait and Test return true. Both operands are this chip's GM: a view of
// another rank's window is refused when the C++ is emitted (one kernel library is one chip).
namespace comm {
enum class DmaEngine { SDMA };
namespace sdma {
struct SdmaBaseConfig {
    uint64_t blockBytes;
    uint64_t commBlockOffset;
    uint32_t queueNum;
};
}  // namespace sdma
struct AsyncSession {
    bool built = false;
    uint32_t syncId = 0;
};
struct AsyncEvent {
    bool issued = false;
    bool Wait(const AsyncSession &s) const { return check(s, "wait_async_event"); }
    bool Test(const AsyncSession &s) const { return check(s, "test_async_event"); }

   private:
    bool check(const AsyncSession &s, const char *op) const {
        if (!s.built) cpu::fail(std::string(op) + ": the async session was never built");
        if (!issued) cpu::fail(std::string(op) + ": the event comes from no tput_async / tget_async");
        return true;
    }
};
template <DmaEngine E, typename Scratch>
PTO_INST void BuildAsyncSession(Scratch &scratch, __gm__ uint8_t *workspace, AsyncSession &session, uint32_t syncId,
                                const sdma::SdmaBaseConfig &, uint32_t) {
    scratch.check("BuildAsyncSession");
    if (workspace == nullptr) cpu::fail("BuildAsyncSession: the GM workspace is a null pointer");
    session.built = true;
    session.syncId = syncId;
}
namespace detail {
template <typename GD, typename GS>
inline AsyncEvent async_copy(const char *op, GD &dst, GS &src, AsyncSession &session) {
    if (!session.built) cpu::fail(std::string(op) + ": the async session was never built");
    dst.check(op);
    src.check(op);
    const int64_t n = dst.rows() * dst.cols();
    if (src.rows() * src.cols() != n)
        cpu::fail(std::string(op) + ": dst has " + std::to_string(n) + " elements, src " +
                  std::to_string(src.rows() * src.cols()));
    std::vector<typename GD::DType> staged(static_cast<size_t>(n));  // src may overlap dst
    for (int64_t i = 0; i < n; ++i) staged[i] = src.at(i / src.cols(), i % src.cols());
    for (int64_t i = 0; i < n; ++i) dst.at(i / dst.cols(), i % dst.cols()) = staged[i];
    AsyncEvent e;
    e.issued = true;
    return e;
}
}  // namespace detail
template <DmaEngine E, typename GD, typename GS>
PTO_INST AsyncEvent TPUT_ASYNC(GD &dst, GS &src, AsyncSession &session) {
    return detail::async_copy("TPUT_ASYNC", dst, src, session);
}
template <DmaEngine E, typename GD, typename GS>
PTO_INST AsyncEvent TGET_ASYNC(GD &dst, GS &src, AsyncSession &session) {
    return detail::async_copy("TGET_ASYNC", dst, src, session);
}
}  // namespace comm

}  // namespace pto

// pto.print's printf of one scalar (CCE's cce::printf): floats go as double, bools as int; flushed at
// once so the output interleaves with the host's. The interpreter formats the same way (its run.prints).
namespace cce {
template <typename T>
inline auto printf_arg(T v) {
    if constexpr (std::is_same_v<T, bool>) {
        return static_cast<int>(v);
    } else if constexpr (std::is_floating_point_v<T>) {
        return static_cast<double>(v);
    } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>) {
        return static_cast<double>(static_cast<float>(v));
    } else {
        return v;
    }
}
template <typename... Args>
inline void printf(const char *fmt, Args... args) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-security"
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    std::printf(fmt, printf_arg(args)...);
#pragma GCC diagnostic pop
    std::fflush(stdout);
}
}  // namespace cce

// ---------------------------------------------------------------------------------------------------
// Sync (checked no-ops) and core queries
// ---------------------------------------------------------------------------------------------------
namespace pto::cpu {
inline void check_flag_args(const char *op, int src, int dst, int ev) {
    if (src < 0 || src >= PIPE_NUM || dst < 0 || dst >= PIPE_NUM || src == PIPE_ALL || dst == PIPE_ALL)
        fail(std::string(op) + ": bad pipe pair (" + std::to_string(src) + ", " + std::to_string(dst) + ")");
    if (src == dst) fail(std::string(op) + ": src and dst pipe are both " + pipe_name(src) + " (use pipe_barrier)");
    if (ev < 0 || ev >= kEventIds) fail(std::string(op) + ": event id " + std::to_string(ev) + " outside EVENT_ID0..EVENT_ID7");
}
inline std::string flag_text(const char *op, int src, int dst, int ev) {
    return std::string(op) + "(" + pipe_name(src) + ", " + pipe_name(dst) + ", EVENT_ID" + std::to_string(ev) + ")";
}
}  // namespace pto::cpu

inline void set_flag(int src, int dst, int ev) {
    pto::cpu::check_flag_args("set_flag", src, dst, ev);
    int &f = pto::cpu::core().flags[src][dst][ev];
    if (f) pto::cpu::fail(pto::cpu::flag_text("set_flag", src, dst, ev) + ": the event is already set (no wait_flag since the last set_flag)");
    f = 1;
}
inline void wait_flag(int src, int dst, int ev) {
    pto::cpu::check_flag_args("wait_flag", src, dst, ev);
    int &f = pto::cpu::core().flags[src][dst][ev];
    if (!f) pto::cpu::fail(pto::cpu::flag_text("wait_flag", src, dst, ev) + " without a matching set_flag");
    f = 0;
}
// PTOAS's runtime event-id array (pto.declare_eventid_array): N ids read and written by index.
template <int N>
struct PTOAS_EventIdArray {
    int32_t ids[N] = {};
    int32_t &operator[](int64_t i) {
        if (i < 0 || i >= N)
            pto::cpu::fail("eventid_array index " + std::to_string(i) + " outside 0.." + std::to_string(N - 1));
        return ids[i];
    }
};
inline void pipe_barrier(int pipe) {
    if (pipe < 0 || pipe >= PIPE_NUM) pto::cpu::fail("pipe_barrier: bad pipe " + std::to_string(pipe));
}
inline void set_mask_norm() {}
inline void set_vector_mask(int64_t, int64_t) {}
// Cross-core signals: no-ops on one CPU thread (both sections run in program order).
inline void ffts_cross_core_sync(int pipe, int64_t) { pipe_barrier(pipe); }
inline void wait_flag_dev(int64_t) {}
inline int64_t get_block_idx() { return pto::cpu::core().block_idx; }
inline int64_t get_block_num() { return pto::cpu::core().block_num; }
inline int64_t get_subblockid() { return pto::cpu::core().subblock_idx; }
inline int64_t get_subblockdim() { return pto::cpu::core().subblock_num; }

// The message of the last failed launch on this thread ("" after a successful one).
extern "C" __attribute__((used, visibility("default"))) inline const char *pto_cpu_last_error() {
    return pto::cpu::last_error().c_str();
}
// Block identity seen by get_block_idx()/get_block_num() in the next launches on this thread.
extern "C" __attribute__((used, visibility("default"))) inline void pto_cpu_set_block(int64_t idx, int64_t num) {
    pto::cpu::core().block_idx = idx;
    pto::cpu::core().block_num = num;
}
// One host call per launch: run the library's kernel_entry on args as block (idx, num); 0 on success,
// else 1 with the message in pto_cpu_last_error() (the C++ kernel engine calls this, not set_block + entry).
extern "C" __attribute__((used, visibility("default"))) inline int pto_cpu_call(void (*entry)(int64_t *), int64_t *args,
                                                                                int64_t idx, int64_t num) {
    pto::cpu::core().block_idx = idx;
    pto::cpu::core().block_num = num;
    entry(args);
    return pto::cpu::last_error().empty() ? 0 : 1;
}
// A recorded run in one host call: empty the FIFOs, then launch entries[i](args[i]) as block (blocks[2i],
// blocks[2i + 1]) for i in 0..n-1 in order (the entries may live in any kernel library: the core state is
// process-wide). Returns -1, or the index of the launch that failed (its message in pto_cpu_last_error()).
extern "C" __attribute__((used, visibility("default"))) inline int64_t pto_cpu_run_calls(int64_t n,
                                                                                      void (*const *entries)(int64_t *),
                                                                                      int64_t *const *args,
                                                                                      const int64_t *blocks) {
    {
        pto::cpu::PipeFifos &f = pto::cpu::pipe_fifos_v1();
        std::lock_guard<std::mutex> lock(f.mu);
        f.fifo[0].clear();
        f.fifo[1].clear();
    }
    for (int64_t i = 0; i < n; ++i) {
        pto::cpu::core().block_idx = blocks[2 * i];
        pto::cpu::core().block_num = blocks[2 * i + 1];
        entries[i](args[i]);
        if (!pto::cpu::last_error().empty()) return i;
    }
    return -1;
}
// Empty both cross-core FIFOs (process-wide: any kernel library's copy of this function will do).
extern "C" __attribute__((used, visibility("default"))) inline void pto_cpu_reset_pipes() {
    pto::cpu::PipeFifos &f = pto::cpu::pipe_fifos_v1();
    std::lock_guard<std::mutex> lock(f.mu);
    f.fifo[0].clear();
    f.fifo[1].clear();
}
// Entries waiting in a cross-core FIFO: direction 0 = cube -> vector, 1 = vector -> cube.
extern "C" __attribute__((used, visibility("default"))) inline int64_t pto_cpu_pipe_size(int direction) {
    if (direction != 0 && direction != 1) return -1;
    pto::cpu::PipeFifos &f = pto::cpu::pipe_fifos_v1();
    std::lock_guard<std::mutex> lock(f.mu);
    return static_cast<int64_t>(f.fifo[direction].size());
}
