# The logged loss is this rank's share only. The model trains as it should:
# only the reported loss shows it, so the end-to-end check must compare it
# with lc0's, not with the learner's own output.
# file: lc1_distributed_adam/distributed_adam.c
# check: lc1.1b
# says: sum the loss over ranks
# check: lc1.1a
# says: already at the first step, before any update
s/^    comm_metric_sum(&loss, 1);/    (void)0;/
