# Slices that assume numel divisible by N: segments sent unpadded, spilling into the next layer.
# file: lc2_zero1/zero1.c
# check: lc2.2a
# says: the sum over ranks is
s/^    return L->pad == L->numel ? buf + L->off : t->padded;/    return buf + L->off;/
