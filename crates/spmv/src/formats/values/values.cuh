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
