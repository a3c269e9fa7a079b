// The DASP kernels over full values (dasp.cuh).

DASP_KERNEL(double, f64, , ValuesFull<double>)
DASP_KERNEL(float, f32, , ValuesFull<float>)
DASP_KERNEL(half_t, f16, , ValuesFull<half_t>)
