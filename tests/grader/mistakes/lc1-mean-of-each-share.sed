# A sum where a mean is due: each rank's share scaled as a mean of its own.
# file: lc1_distributed_adam/distributed_adam.c
# check: lc1.1b
# says: N times the mean
s/^        loss += forward_backward(t, B);/        loss += forward_backward(t, per_rank);/
