// The DASP kernels over full values (dasp.cuh), with 32-bit slot indices and, as
// dasp_o64_<S>, 64-bit ones (from 2^31 stored slots on).

DASP_KERNEL(double, f64, , ValuesFull<double>, u32)
DASP_KERNEL(float, f32, , ValuesFull<float>, u32)
DASP_KERNEL(half_t, f16, , ValuesFull<half_t>, u32)
DASP_KERNEL(double, f64, _o64, ValuesFull<double>, u64)
DASP_KERNEL(float, f32, _o64, ValuesFull<float>, u64)
DASP_KERNEL(half_t, f16, _o64, ValuesFull<half_t>, u64)
