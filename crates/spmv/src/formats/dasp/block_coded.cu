// DASP's block kernels over coded values (`dasp:values=…`; block.cu's, f64 and f32, 32-bit
// slot indices only, as coded.cu's).

#define DASP_BLOCK_CODED_f64(SUFFIX, V) DASP_BLOCK_KERNELS(double, f64, SUFFIX, V, u32)
#define DASP_BLOCK_CODED_f32(SUFFIX, V) DASP_BLOCK_KERNELS(float, f32, SUFFIX, V, u32)
VALUES_CODED_f64(DASP_BLOCK_CODED_f64)
VALUES_CODED_f32(DASP_BLOCK_CODED_f32)
