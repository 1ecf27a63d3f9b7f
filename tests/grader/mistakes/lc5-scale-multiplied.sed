# Gradients multiplied by the loss scale where they must be divided.
# file: lc5_mixed_precision/mixed_precision.c
# check: lc5.3a
# says: multiplied by the scale where it must be divided
s/^    scale(t->acts.unscaled, 1.0f \/ t->scaler.scale, own_numel(L));/    scale(t->acts.unscaled, t->scaler.scale, own_numel(L));/
