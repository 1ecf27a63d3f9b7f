# The loss summed over ranks as two doubles, the loss and whatever the stack
# holds beside it: the logged loss is right, and the all-reduce reads, then
# writes back, a neighbour the stage does not own. The metrics' bytes show it.
# file: lc1_distributed_adam/distributed_adam.c
# check: lc1.1c
# says: comm_metric_sum of the one double, once a step
s/^    comm_metric_sum(&loss, 1);/    comm_metric_sum(\&loss, 2);/
