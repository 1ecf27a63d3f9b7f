# zero_grad that does not zero every gradient.
# file: lc0_adam/adam.c
# check: lc0.2a
# says: gradients are not zero
s/^    fill(m->grads, 0.0f, m->numel);/    fill(m->grads, 0.0f, m->numel \/ 2);/
