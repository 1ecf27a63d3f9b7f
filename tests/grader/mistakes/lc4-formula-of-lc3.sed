# A stage's formula left at the previous stage's: 4Ψ + 12Ψ_pad/N.
# file: lc4_zero3/zero3.c
# check: lc4.3a
# says: model_state_formula says
s/^    return theory_model_state(ZERO_3, /    return theory_model_state(ZERO_2, /
