// Helpers shared by every kernel module; prepended to each module's source before NVRTC.
#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;

// The `extern "C"` kernels NAME_f64 and NAME_f32 (the names the Rust side asks for) of a
// format with one kernel template NAME<T>: each takes the parameters ARGS(T), ARGS a macro
// of the value type, and passes them on to NAME<T> as PASS.
#define F64_F32_KERNELS(NAME, ARGS, PASS)                                      \
    extern "C" __global__ void NAME##_f64(ARGS(double)) { NAME<double>(PASS); } \
    extern "C" __global__ void NAME##_f32(ARGS(float)) { NAME<float>(PASS); }

// Sum `v` over groups of `width` consecutive lanes (width a power of two <= 32); the
// group's first lane gets the total.
template <typename T>
__device__ __forceinline__ T group_sum(T v, int width) {
    for (int offset = width / 2; offset > 0; offset /= 2) {
        v += __shfl_down_sync(0xffffffffu, v, offset, width);
    }
    return v;
}

// Read-only load through the non-coherent cache (x is gathered, never written).
template <typename T>
__device__ __forceinline__ T load_ro(const T* p) {
    return __ldg(p);
}

// Half precision (the library's f16; the Rust type half::f16): 16 bits of storage, no
// arithmetic. Values are converted to f32 with `cvt` (exactly), summed in f32 and rounded
// once when stored. A struct, not an integer typedef, so that arithmetic on it cannot
// compile by accident. (NVRTC builds without cuda_fp16.h: it is not on its include path.)
struct half_t {
    unsigned short bits;
};

// The type sums run in: T itself, f32 for half_t.
template <typename T>
struct acc_type {
    typedef T type;
};
template <>
struct acc_type<half_t> {
    typedef float type;
};
template <typename T>
using acc_t = typename acc_type<T>::type;

__device__ __forceinline__ double to_acc(double v) { return v; }
__device__ __forceinline__ float to_acc(float v) { return v; }
__device__ __forceinline__ float to_acc(half_t h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
// The accumulator rounded back to T (round to nearest even for half).
template <typename T>
__device__ __forceinline__ T from_acc(acc_t<T> v) {
    return v;
}
template <>
__device__ __forceinline__ half_t from_acc<half_t>(float v) {
    half_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(v));
    return h;
}
template <>
__device__ __forceinline__ half_t load_ro<half_t>(const half_t* p) {
    half_t h;
    h.bits = __ldg(&p->bits);
    return h;
}

// Products and sums rounded one by one, never fused: the compiler contracts a·s + b·y into
// either fma(a, s, b·y) or fma(b, y, a·s) depending on the code around it, so two kernels
// sharing store_y could otherwise round the same row differently.
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }

// Writes a row's result (a sum in acc_t<T>): y = sum, or with SCALED y = alpha·sum + beta·y
// (y read only when beta != 0, so a NaN-poisoned y is fine with beta = 0), rounded as the
// host rounds it. A format with scaled kernels (CSR) instantiates both, so its plain y = A·x
// path carries no extra argument or branch.
template <typename T, bool SCALED>
__device__ __forceinline__ void store_y(T* y, acc_t<T> sum, T alpha, T beta) {
    if (SCALED) {
        acc_t<T> a = to_acc(alpha), b = to_acc(beta);
        acc_t<T> scaled = mul_rn(a, sum);
        *y = from_acc<T>(b == (acc_t<T>)0 ? scaled : add_rn(scaled, mul_rn(b, to_acc(*y))));
    } else {
        *y = from_acc<T>(sum);
    }
}

// Block products Y = alpha·A·X + beta·Y for k vectors (the formats' block.cu kernels). X (rows
// n) and Y (rows m) are both row-major (ROW: element (i, j) at i·k + j) or both column-major
// (at j·rows + i). Two shapes of kernel:
// - tiles (either layout): a row's thread or group takes BLOCK_TILE columns of X per pass, so
//   the matrix is read once per tile, not once per vector;
// - lanes (row-major, k > BLOCK_TILE): a group of G lanes per row (16 or 32), lane l taking
//   columns l, l + G, ...: the row's entries are read once per G columns, and a group's reads
//   of X and writes of Y are G consecutive elements.
// Both add a column's terms in the order of the format's single product.
#define BLOCK_TILE 8
template <bool ROW>
__device__ __forceinline__ u64 block_at(u64 i, u64 j, u64 rows, u64 k) {
    return ROW ? i * k + j : j * rows + i;
}

// Where a kernel written once for both products reads x and writes y (DASP, merge-path CSR):
// OneVector, the single product y = A·x (P = 1); BlockColumns, P = BLOCK_TILE columns j0 ..
// j0 + cols - 1 of a block Y = α·A·X + β·Y (X of n rows and Y of m, k columns, both row-major
// or both column-major, block_at). A row's sum is rounded to T before α and β meet it, as
// the single product's epilogue (util.cu's axpby) rounds it, so that column j has the bits of
// the scaled single product. has(j): whether column j is in the block; at(c, j): x_j[c];
// gather(c, v): x_j[c] of every column (T() past the block); put(row, j, sum): y_j[row].
template <typename T>
struct OneVector {
    static constexpr int P = 1;
    const T* __restrict__ x;
    T* __restrict__ y;
    __device__ __forceinline__ bool has(int) const { return true; }
    __device__ __forceinline__ T at(u32 c, int) const { return load_ro(x + c); }
    __device__ __forceinline__ void gather(u32 c, T (&v)[P]) const { v[0] = at(c, 0); }
    __device__ __forceinline__ void put(u32 row, int, acc_t<T> sum) const { y[row] = from_acc<T>(sum); }
};
template <typename T, bool ROW>
struct BlockColumns {
    static constexpr int P = BLOCK_TILE;
    const T* __restrict__ x;
    T* __restrict__ y;
    u32 m, n, k, j0, cols;
    T alpha, beta;
    __device__ __forceinline__ bool has(int j) const { return (u32)j < cols; }
    __device__ __forceinline__ T at(u32 c, int j) const { return load_ro(x + block_at<ROW>(c, j0 + j, n, k)); }
    // Row c of this launch's columns (T() past the block's k).
    __device__ __forceinline__ void gather(u32 c, T (&v)[P]) const {
        const T* p = x + block_at<ROW>(c, j0, n, k);
        const u64 step = ROW ? 1 : n;
#pragma unroll
        for (int j = 0; j < P; ++j) v[j] = has(j) ? load_ro(p + j * step) : T();
    }
    __device__ __forceinline__ void put(u32 row, int j, acc_t<T> sum) const {
        store_y<T, true>(y + block_at<ROW>(row, j0 + j, m, k), to_acc(from_acc<T>(sum)), alpha, beta);
    }
};

// A tile kernel's row: `entries(add)` calls add(value, column) for this thread's share of the
// row's entries, in the single product's order; the LANES threads of a row then add their
// sums as the single product does (group_sum), and the first writes the tile to Y. Every
// thread of a group calls it (inactive ones, past the last row, with no entries), so the
// shuffles see whole groups.
template <typename T, int LANES, bool ROW, typename Entries>
__device__ __forceinline__ void block_tiles(bool write, u64 row, u32 m, u32 n, u32 k, const T* __restrict__ x,
                                            T* __restrict__ y, T alpha, T beta, Entries entries) {
    // Every column of the tile is summed, also past k (zeros): a branch on kt there made the
    // kernels 6-11% slower for k = 8 and 16 (one H100 run, poisson3d, csr-vector).
    for (u32 j0 = 0; j0 < k; j0 += BLOCK_TILE) {
        const u32 kt = min((u32)BLOCK_TILE, k - j0);
        acc_t<T> acc[BLOCK_TILE];
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) acc[t] = 0;
        entries([&](acc_t<T> v, u64 c) {
#pragma unroll
            for (int t = 0; t < BLOCK_TILE; ++t) {
                if (t < kt) acc[t] += v * to_acc(load_ro(x + block_at<ROW>(c, j0 + t, n, k)));
            }
        });
#pragma unroll
        for (int t = 0; t < BLOCK_TILE; ++t) acc[t] = group_sum(acc[t], LANES);
        if (write) {
#pragma unroll
            for (int t = 0; t < BLOCK_TILE; ++t) {
                if (t < kt) store_y<T, true>(y + block_at<ROW>(row, j0 + t, m, k), acc[t], alpha, beta);
            }
        }
    }
}

// A lanes kernel's row (row-major, a group of G lanes per row, a power of two up to 32): lane l
// of the group sums P consecutive columns, l·P .. l·P + P - 1 of each pass of G·P, over
// `entries(add)`, which calls add(value, column) for every entry of the row in order. Every
// lane of the group calls `entries` (those past k add nothing), so it may pass entries round
// the group by shuffles. P = 1: one load per column (any k). P = WIDE_COLUMNS(T), the "wide"
// kernels: each lane reads its 32 bytes of a row of X in two 16-byte loads and writes Y alike,
// a quarter to an eighth of the load instructions and cache wavefronts of one column per lane
// (H200, A·X of a 7-point stencil in DIA, k = 8, f64: 2.4x faster); the host runs them only
// when k is a multiple of P and X and Y are 16-byte aligned.
template <typename T, int P>
union Columns {
    uint4 words[P * sizeof(T) / 16 > 0 ? P * sizeof(T) / 16 : 1];
    T v[P];
};
template <typename T, int P>
__device__ __forceinline__ void load_columns(Columns<T, P>& c, const T* p, bool read_only) {
    if constexpr (P == 1) {
        c.v[0] = read_only ? load_ro(p) : *p;
    } else {
        const uint4* w = reinterpret_cast<const uint4*>(p);
#pragma unroll
        for (int i = 0; i < (int)(P * sizeof(T) / 16); ++i) c.words[i] = read_only ? __ldg(w + i) : w[i];
    }
}
template <typename T, int P>
__device__ __forceinline__ void store_columns(T* p, const Columns<T, P>& c) {
    if constexpr (P == 1) {
        *p = c.v[0];
    } else {
        uint4* w = reinterpret_cast<uint4*>(p);
#pragma unroll
        for (int i = 0; i < (int)(P * sizeof(T) / 16); ++i) w[i] = c.words[i];
    }
}
#define WIDE_COLUMNS(T) ((int)(32 / sizeof(T)))

template <typename T, int G, int P, typename Entries>
__device__ __forceinline__ void block_lanes(u64 row, u32 k, const T* __restrict__ x, T* __restrict__ y, T alpha,
                                            T beta, Entries entries) {
    for (u32 j0 = 0; j0 < k; j0 += G * P) {
        const u32 j = j0 + threadIdx.x % G * P;
        const bool on = j < k;  // k is a multiple of P
        acc_t<T> acc[P];
#pragma unroll
        for (int t = 0; t < P; ++t) acc[t] = 0;
        entries([&](acc_t<T> v, u64 c) {
            if (on) {
                Columns<T, P> xs;
                load_columns(xs, x + c * k + j, true);
#pragma unroll
                for (int t = 0; t < P; ++t) acc[t] += v * to_acc(xs.v[t]);
            }
        });
        if (on) {
            Columns<T, P> ys;  // store_y reads the old y only when beta != 0
            if (to_acc(beta) != (acc_t<T>)0) load_columns(ys, y + row * k + j, false);
#pragma unroll
            for (int t = 0; t < P; ++t) store_y<T, true>(&ys.v[t], acc[t], alpha, beta);
            store_columns(y + row * k + j, ys);
        }
    }
}

// A format's lanes kernels for value type T (suffix S), over 32-bit row offsets (no suffix)
// and 64-bit ones (`_o64`): `_g8`, `_g16`, `_g32` with one column per lane, and the wide
// `_w1` .. `_w8` (G lanes of WIDE_COLUMNS(T) columns). KERNEL(T, S, O, SUFFIX, NAME, G, P)
// defines one named NAME##G.
#define LANES_KERNELS_OF(KERNEL, T, S, O, SUFFIX) \
    KERNEL(T, S, O, SUFFIX, g, 8, 1)              \
    KERNEL(T, S, O, SUFFIX, g, 16, 1)             \
    KERNEL(T, S, O, SUFFIX, g, 32, 1)             \
    KERNEL(T, S, O, SUFFIX, w, 1, WIDE_COLUMNS(T)) \
    KERNEL(T, S, O, SUFFIX, w, 2, WIDE_COLUMNS(T)) \
    KERNEL(T, S, O, SUFFIX, w, 4, WIDE_COLUMNS(T)) \
    KERNEL(T, S, O, SUFFIX, w, 8, WIDE_COLUMNS(T))
#define LANES_KERNELS(KERNEL, T, S)          \
    LANES_KERNELS_OF(KERNEL, T, S, u32, )    \
    LANES_KERNELS_OF(KERNEL, T, S, u64, _o64)

// The group's row in a lanes kernel (G threads per row).
template <int G>
__device__ __forceinline__ u64 lanes_row() {
    return ((u64)blockIdx.x * blockDim.x + threadIdx.x) / G;
}

// The lanes of this thread's group of G (a power of two up to 32), for its shuffles.
template <int G>
__device__ __forceinline__ u32 group_mask() {
    return G == 32 ? 0xffffffffu : ((1u << G) - 1) << (threadIdx.x % 32 / G * G);
}

// Streaming (evict-first) loads of a matrix's own arrays, read once per product: they
// should not push x out of the caches.
__device__ __forceinline__ u32 load_cs(const u32* p) { return __ldcs(p); }
__device__ __forceinline__ double load_cs(const double* p) { return __ldcs(p); }
__device__ __forceinline__ float load_cs(const float* p) { return __ldcs(p); }
__device__ __forceinline__ half_t load_cs(const half_t* p) {
    half_t h;
    h.bits = __ldcs(&p->bits);
    return h;
}
