# zero_grad written as a loop one element too far (<= numel): the write past
# the gradients' end faults at once and the message names the buffer (guard
# bytes checked at the free once filed it under whichever check freed it).
# zero_grad is inlined where it is called, so the function the message names
# is its caller (train_step, or the check's own test function).
# file: lc0_adam/adam.c
# check: lc0.2a
# says: a write past the end of a buffer of grads
s|^    fill(m->grads, 0.0f, m->numel);|    for (size_t i = 0; i <= m->numel; i++) m->grads[i] = 0.0f;|
