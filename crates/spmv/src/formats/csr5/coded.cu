// CSR5 over coded values (formats/values): csr5_SIGMA{codec}_S for every codec of each
// precision, and its own copy of the fixup (so that a coded matrix loads this module only).

#define CSR5_CODED_f64(CODEC, V) CSR5_SIGMAS(double, f64, CODEC, V)
#define CSR5_CODED_f32(CODEC, V) CSR5_SIGMAS(float, f32, CODEC, V)
#define CSR5_CODED_f16(CODEC, V) CSR5_SIGMAS(half_t, f16, CODEC, V)

VALUES_CODED_f64(CSR5_CODED_f64)
VALUES_CODED_f32(CSR5_CODED_f32)
VALUES_CODED_f16(CSR5_CODED_f16)
CARRY_FIXUP_KERNEL(csr5_fixup, double, f64)
CARRY_FIXUP_KERNEL(csr5_fixup, float, f32)
CARRY_FIXUP_KERNEL(csr5_fixup, half_t, f16)
