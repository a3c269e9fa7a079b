// Helpers shared by every kernel module; prepended to each module's source before NVRTC.


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

// A tile kernel's row: `entries(add)` calls add(value, column) for this thread's share of the
// row's entries, in the single product's order; the LANES threads of a row then add their
// sums as the single product does (group_sum), and the first writes the tile to Y. Every
// thread of a group calls it (inactive ones, past the last row, with no entries), so the
// shuffles see whole groups.
template <typename T, int LANES, bool ROW, typename Entries>
__device__ __forceinline__ void block_tiles(bool write, u64 row, u32 m, u32 n, u32 k, const T* __restrict__ x,
                                            T* __restrict__ y, T alpha, T beta, Entries entries) {
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
// Device code shared by the diagonal family's kernels (DIA, HDC, HDIA, DRM, DIA-Adaptive's
// BRCSD layouts), prepended to each of their modules.

// The row of this thread in a grid of one thread per row; false past the last of m rows.
__device__ __forceinline__ bool thread_row(u32 m, u32& row) {
    u64 g = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    row = (u32)g;
    return g < m;
}

// As thread_row, with the row's place in blocks of h rows: its block row / h and its lane
// row mod h (HDIA's hacks, BRCSD-II's blocks).
__device__ __forceinline__ bool thread_block_row(u32 m, u32 h, u32& row, u32& block, u32& lane) {
    if (!thread_row(m, row)) return false;
    block = row / h;
    lane = row - block * h;
    return true;
}

// Row `row`'s sum over the stored diagonals begin .. end, whose slots for this row are
// p, p + stride, p + 2·stride ... (64-bit pointer steps: slot counts may exceed 2^32).
// Rows and columns are below 2^31, so the column row + offset computed in 32-bit unsigned
// arithmetic is < n exactly when it lies inside the matrix (a negative column wraps to
// >= 2^31 > n): one compare guards both edges. The offset of diagonal i is the same for
// every thread that reads it at once: a broadcast.
template <typename T>
__device__ __forceinline__ T diagonal_sum(u32 row, u32 n, const int* __restrict__ offsets, u32 begin, u32 end,
                                          const T* __restrict__ p, u32 stride, const T* __restrict__ x) {
    T sum = 0;
    for (u32 i = begin; i < end; ++i, p += stride) {
        u32 c = row + (u32)load_ro(offsets + i);
        if (c < n) sum += *p * load_ro(x + c);
    }
    return sum;
}
// HDC for a block of k vectors, Y = alpha·A·X + beta·Y, in common.cuh's shapes: a row's entries
// in kernel.cu's order (its stored diagonals, then its entries of the CSR part), so column j of
// Y has the bits of the single product A·x_j.
template <typename T, typename Add>
__device__ __forceinline__ void hdc_row(u32 r, u32 m, u32 n, u32 diagonals, const int* __restrict__ offsets,
                                        const T* __restrict__ data, u32 csr_entries, const u32* __restrict__ row_ptr,
                                        const u32* __restrict__ col, const T* __restrict__ val, Add add) {
    const T* p = data + r;
    for (u32 i = 0; i < diagonals; ++i, p += m) {
        u32 c = r + (u32)load_ro(offsets + i);
        if (c < n) add(to_acc(*p), c);
    }
    if (csr_entries) {
        const u32 end = row_ptr[r + 1];
        for (u32 e = row_ptr[r]; e < end; ++e) add(to_acc(val[e]), col[e]);
    }
}

#define HDC_BLOCK_ARGS(T)                                                                                      \
    u32 m, u32 n, u32 k, u32 diagonals, const int* __restrict__ offsets, const T* __restrict__ data,           \
        u32 csr_entries, const u32* __restrict__ row_ptr, const u32* __restrict__ col, const T* __restrict__ val, \
        const T* __restrict__ x, T* __restrict__ y, T alpha, T beta
#define HDC_ROW(R) hdc_row<T>(R, m, n, diagonals, offsets, data, csr_entries, row_ptr, col, val, add)

// Tiles: kernel.cu's thread per row.
template <typename T, bool ROW>
__device__ __forceinline__ void hdc_block(HDC_BLOCK_ARGS(T)) {
    u32 r;
    if (!thread_row(m, r)) return;
    block_tiles<T, 1, ROW>(true, r, m, n, k, x, y, alpha, beta, [&](auto add) { HDC_ROW(r); });
}

// Lanes: a group of G lanes per row, P columns each.
template <typename T, int G, int P>
__device__ __forceinline__ void hdc_lanes(HDC_BLOCK_ARGS(T)) {
    const u64 g = lanes_row<G>();
    if (g >= m) return;  // the whole group: it shares the row
    block_lanes<T, G, P>(g, k, x, y, alpha, beta, [&](auto add) { HDC_ROW((u32)g); });
}

#define HDC_PASS m, n, k, diagonals, offsets, data, csr_entries, row_ptr, col, val, x, y, alpha, beta
#define HDC_BLOCK_KERNEL(T, S, LAYOUT, ROW) \
    extern "C" __global__ void hdc_block_##LAYOUT##_##S(HDC_BLOCK_ARGS(T)) { hdc_block<T, ROW>(HDC_PASS); }
// LANES_KERNELS_OF's shape; HDC has 32-bit offsets only (O and SUFFIX unused).
#define HDC_LANES_KERNEL(T, S, O, SUFFIX, NAME, G, P) \
    extern "C" __global__ void hdc_lanes_##NAME##G##_##S(HDC_BLOCK_ARGS(T)) { hdc_lanes<T, G, P>(HDC_PASS); }
#define HDC_BLOCK_KERNELS(T, S)          \
    HDC_BLOCK_KERNEL(T, S, row, true)    \
    HDC_BLOCK_KERNEL(T, S, col, false)   \
    LANES_KERNELS_OF(HDC_LANES_KERNEL, T, S, u32, )

HDC_BLOCK_KERNELS(double, f64)
HDC_BLOCK_KERNELS(float, f32)
