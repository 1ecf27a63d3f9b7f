# eps added to sqrt(v) before dividing by v's correction (Kingma and Ba's
# efficient form folded the wrong way for PyTorch).
# file: common/kernels_cpu.c
# check: lc0.1a
# says: eps added before v's correction
s|^        float denom = sqrtf(v\[i\]) / bc2_sqrt + eps;|        float denom = (sqrtf(v[i]) + eps) / bc2_sqrt;|
