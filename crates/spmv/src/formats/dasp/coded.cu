// The DASP kernels over coded values (`dasp:values=…`; dasp.cuh, values.cuh): f64 and f32,
// 32-bit slot indices only (coded values are declined from 2^31 stored slots on).

#define DASP_CODED_f64(SUFFIX, V) DASP_KERNEL(double, f64, SUFFIX, V, u32)
#define DASP_CODED_f32(SUFFIX, V) DASP_KERNEL(float, f32, SUFFIX, V, u32)
VALUES_CODED_f64(DASP_CODED_f64)
VALUES_CODED_f32(DASP_CODED_f32)
