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
// Loaders of coded values (formats/values/mod.rs has the codecs and their CPU decoding).
// Each is built from the two kernel arguments (codes, table) and turns entry i into the
// summation type, exactly: a kernel templated on the loader gives the same bits whatever the
// codec. get(i) loads through the cache as usual; stream(i) with the evict-first hint (for
// entries read once per product, as csr5's).

template <typename T>
struct ValuesFull {
    const T* __restrict__ v;
    __device__ __forceinline__ ValuesFull(const void* codes, const T*) : v((const T*)codes) {}
    __device__ __forceinline__ acc_t<T> get(u64 i) const { return to_acc(v[i]); }
    __device__ __forceinline__ acc_t<T> stream(u64 i) const { return to_acc(load_cs(v + i)); }
};

// Every entry has the table's one value: no bytes per entry.
template <typename T>
struct ValuesPattern {
    acc_t<T> value;
    __device__ __forceinline__ ValuesPattern(const void*, const T* table) : value(to_acc(load_ro(table))) {}
    __device__ __forceinline__ acc_t<T> get(u64) const { return value; }
    __device__ __forceinline__ acc_t<T> stream(u64) const { return value; }
};

// Integers (signed char, short): converted exactly (|code| <= 32767 fits every T's mantissa).
template <typename T, typename C>
struct ValuesInt {
    const C* __restrict__ c;
    __device__ __forceinline__ ValuesInt(const void* codes, const T*) : c((const C*)codes) {}
    __device__ __forceinline__ acc_t<T> get(u64 i) const { return (acc_t<T>)(int)c[i]; }
    __device__ __forceinline__ acc_t<T> stream(u64 i) const { return (acc_t<T>)(int)__ldcs(c + i); }
};

// IEEE half codes for f32 or f64 values.
template <typename T>
struct ValuesHalf {
    const half_t* __restrict__ c;
    __device__ __forceinline__ ValuesHalf(const void* codes, const T*) : c((const half_t*)codes) {}
    __device__ __forceinline__ acc_t<T> get(u64 i) const { return (acc_t<T>)to_acc(c[i]); }
    __device__ __forceinline__ acc_t<T> stream(u64 i) const { return (acc_t<T>)to_acc(load_cs(c + i)); }
};

// IEEE single codes for f64 values.
template <typename T>
struct ValuesSingle {
    const float* __restrict__ c;
    __device__ __forceinline__ ValuesSingle(const void* codes, const T*) : c((const float*)codes) {}
    __device__ __forceinline__ acc_t<T> get(u64 i) const { return (acc_t<T>)c[i]; }
    __device__ __forceinline__ acc_t<T> stream(u64 i) const { return (acc_t<T>)load_cs(c + i); }
};

// Dictionary indices (unsigned char, unsigned short) into the table of distinct values.
template <typename T, typename C>
struct ValuesDict {
    const C* __restrict__ c;
    const T* __restrict__ table;
    __device__ __forceinline__ ValuesDict(const void* codes, const T* t) : c((const C*)codes), table(t) {}
    __device__ __forceinline__ acc_t<T> get(u64 i) const { return to_acc(load_ro(table + c[i])); }
    __device__ __forceinline__ acc_t<T> stream(u64 i) const { return to_acc(load_ro(table + __ldcs(c + i))); }
};

// One-parameter names, so that a loader is one macro argument.
template <typename T> using ValuesI8 = ValuesInt<T, signed char>;
template <typename T> using ValuesI16 = ValuesInt<T, short>;
template <typename T> using ValuesDict8 = ValuesDict<T, unsigned char>;
template <typename T> using ValuesDict16 = ValuesDict<T, unsigned short>;

// The coded (not full) codecs a kernel family is instantiated for, per precision:
// VALUES_CODED_f64(X) calls X(suffix, loader) for each (f32 codes only for f64 values, half
// codes not for half values). Kernels over full values keep their plain names.
#define VALUES_CODED_COMMON(X, T)           \
    X(_pattern, ValuesPattern<T>)           \
    X(_i8, ValuesI8<T>)                     \
    X(_i16, ValuesI16<T>)                   \
    X(_dict8, ValuesDict8<T>)               \
    X(_dict16, ValuesDict16<T>)
#define VALUES_CODED_f64(X) VALUES_CODED_COMMON(X, double) X(_vf16, ValuesHalf<double>) X(_vf32, ValuesSingle<double>)
#define VALUES_CODED_f32(X) VALUES_CODED_COMMON(X, float) X(_vf16, ValuesHalf<float>)
#define VALUES_CODED_f16(X) VALUES_CODED_COMMON(X, half_t)

// Column loaders, built per row from (cols, row_base, row): the column of entry i.
struct ColsFull {
    const u32* __restrict__ c;
    __device__ __forceinline__ ColsFull(const void* cols, const u32*, u64) : c((const u32*)cols) {}
    __device__ __forceinline__ u32 get(u64 i) const { return c[i]; }
};
// 16-bit deltas from the row's base column (formats/values/columns.rs).
struct ColsDelta16 {
    const unsigned short* __restrict__ d;
    u32 base;
    __device__ __forceinline__ ColsDelta16(const void* cols, const u32* row_base, u64 row)
        : d((const unsigned short*)cols), base(row_base[row]) {}
    __device__ __forceinline__ u32 get(u64 i) const { return base + d[i]; }
};
// CSR-vector (csr/kernel.cu and csr/coded.cu): LANES consecutive threads per row, strided
// loop, shuffle reduction. Groups past the last row stay alive (sum 0) so the full-warp
// shuffle mask is valid. V: the loader of the values' codec, C: of the columns
// (formats/values/values.cuh); `row_base` is read by ColsDelta16 only. O: the row offsets'
// type (u32 below 2^31 entries, so i + LANES cannot wrap; u64 beyond).
template <typename T, typename O, int LANES, typename V, typename C, bool SCALED>
__device__ __forceinline__ void csr_vector(u32 m, const O* __restrict__ row_ptr, const void* __restrict__ cols,
                                           const u32* __restrict__ row_base, const void* __restrict__ codes,
                                           const T* __restrict__ table, const T* __restrict__ x, T* __restrict__ y,
                                           T alpha, T beta) {
    const V val(codes, table);
    u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    int lane = threadIdx.x % LANES;
    bool active = row < m;
    acc_t<T> sum = 0;
    if (active) {
        const C col(cols, row_base, row);
        O end = row_ptr[row + 1];
        for (O i = row_ptr[row] + lane; i < end; i += LANES) sum += val.get(i) * to_acc(load_ro(x + col.get(i)));
    }
    sum = group_sum(sum, LANES);
    if (active && lane == 0) store_y<T, SCALED>(y + row, sum, alpha, beta);
}
// CSR for a block of k vectors, Y = alpha·A·X + beta·Y (full values and 32-bit columns), in
// common.cuh's two shapes. Tiles: LANES consecutive threads per row (1: CSR-scalar), each
// column's sum in csr_vector's order (strided over the row, then the group's shuffle tree), so
// column j of Y has the bits of the single product A·x_j.

template <typename T, typename O, int LANES, bool ROW>
__device__ __forceinline__ void csr_block(u32 m, u32 n, u32 k, const O* __restrict__ row_ptr, const u32* __restrict__ col,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const ValuesFull<T> val(codes, table);
    const u64 row = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / LANES;
    const int lane = threadIdx.x % LANES;
    const bool active = row < m;
    O begin = 0, end = 0;
    if (active) {
        begin = row_ptr[row] + lane;
        end = row_ptr[row + 1];
    }
    block_tiles<T, LANES, ROW>(active && lane == 0, row, m, n, k, x, y, alpha, beta, [&](auto add) {
        for (O i = begin; i < end; i += LANES) add(val.get(i), col[i]);
    });
}

// Row-major blocks of k >= BLOCK_TILE vectors (block_lanes, G lanes per row of P columns each):
// each column summed in the row's order, so column j has the bits of CSR-scalar's A·x_j. The
// group reads G entries at once, one per lane (two coalesced loads, not two per entry), and
// passes them round in order.
template <typename T, typename O, int G, int P>
__device__ __forceinline__ void csr_lanes(u32 m, u32 n, u32 k, const O* __restrict__ row_ptr, const u32* __restrict__ col,
                                          const void* __restrict__ codes, const T* __restrict__ table,
                                          const T* __restrict__ x, T* __restrict__ y, T alpha, T beta) {
    const ValuesFull<T> val(codes, table);
    const u64 row = lanes_row<G>();
    if (row >= m) return;  // the whole group: it shares the row
    const O begin = row_ptr[row], end = row_ptr[row + 1];
    const u32 sub = threadIdx.x % G, mask = group_mask<G>();
    block_lanes<T, G, P>(row, k, x, y, alpha, beta, [&](auto add) {
        for (O base = begin; base < end; base += G) {
            acc_t<T> v = 0;
            u32 c = 0;
            if (base + sub < end) {
                v = to_acc(val.get(base + sub));
                c = col[base + sub];
            }
            const u32 count = (u32)min((O)G, end - base);
#pragma unroll 4
            for (u32 t = 0; t < count; ++t) add(__shfl_sync(mask, v, t, G), __shfl_sync(mask, c, t, G));
        }
    });
}

#define CSR_BLOCK_KERNEL(T, S, O, SUFFIX, LANES, LAYOUT, ROW)                                                     \
    extern "C" __global__ void csr_block_##LANES##SUFFIX##_##LAYOUT##_##S(                                        \
        u32 m, u32 n, u32 k, const O* row_ptr, const u32* col, const void* codes, const T* table, const T* x, T* y, \
        T alpha, T beta) {                                                                                         \
        csr_block<T, O, LANES, ROW>(m, n, k, row_ptr, col, codes, table, x, y, alpha, beta);                       \
    }
#define CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, LANES)          \
    CSR_BLOCK_KERNEL(T, S, O, SUFFIX, LANES, row, true)   \
    CSR_BLOCK_KERNEL(T, S, O, SUFFIX, LANES, col, false)
#define CSR_BLOCK_LANES(T, S, O, SUFFIX)        \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 1)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 2)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 4)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 8)       \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 16)      \
    CSR_BLOCK_LAYOUTS(T, S, O, SUFFIX, 32)
#define CSR_LANES_KERNEL(T, S, O, SUFFIX, NAME, G, P)                                                               \
    extern "C" __global__ void csr_lanes##SUFFIX##_##NAME##G##_##S(u32 m, u32 n, u32 k, const O* row_ptr,              \
                                                                   const u32* col, const void* codes, const T* table,  \
                                                                   const T* x, T* y, T alpha, T beta) {                \
        csr_lanes<T, O, G, P>(m, n, k, row_ptr, col, codes, table, x, y, alpha, beta);                                 \
    }
#define CSR_BLOCK_KERNELS(T, S)             \
    CSR_BLOCK_LANES(T, S, u32, )            \
    CSR_BLOCK_LANES(T, S, u64, _o64)        \
    LANES_KERNELS(CSR_LANES_KERNEL, T, S)

CSR_BLOCK_KERNELS(double, f64)
CSR_BLOCK_KERNELS(float, f32)
CSR_BLOCK_KERNELS(half_t, f16)
