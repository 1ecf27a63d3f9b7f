# The norm of clipping taken as the sum of squares, not its square root.
# file: lc0_adam/adam.c
# check: lc0.3a
# says: the L2 norm of all
s/^    double norm = sqrt(sum_squares(m->grads, m->numel));/    double norm = sum_squares(m->grads, m->numel);/
