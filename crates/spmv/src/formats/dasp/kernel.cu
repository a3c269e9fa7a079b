// The DASP kernels over full values (dasp.cuh), with 32-bit slot indices and, as
// dasp_o64_<S>, 64-bit ones (from 2^31 stored slots on).

DASP_FULL_VALUES(DASP_KERNEL)
