// CSR5 over full values (the tile kernel is in tile.cuh; coded values in coded.cu), and the
// fixup of rows crossing tiles (carry.cuh).

#define CSR5_FULL(T, S) CSR5_SIGMAS(T, S, , ValuesFull<T>) CARRY_FIXUP_KERNEL(csr5_fixup, T, S)

CSR5_FULL(double, f64)
CSR5_FULL(float, f32)
CSR5_FULL(half_t, f16)
