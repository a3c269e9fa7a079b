// The DASP kernels over coded values (`dasp:values=…`; dasp.cuh, values.cuh): f64 and f32.

#define DASP_CODED_f64(SUFFIX, V) DASP_KERNEL(double, f64, SUFFIX, V)
#define DASP_CODED_f32(SUFFIX, V) DASP_KERNEL(float, f32, SUFFIX, V)
VALUES_CODED_f64(DASP_CODED_f64)
VALUES_CODED_f32(DASP_CODED_f32)
