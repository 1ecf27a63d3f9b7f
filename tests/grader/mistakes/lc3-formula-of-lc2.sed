# A stage's formula left at the previous stage's: 4Ψ + 4Ψ + 8Ψ_pad/N.
# file: lc3_zero2/zero2.c
# check: lc3.3a
# says: model_state_formula says
s/^    return theory_model_state(ZERO_2, /    return theory_model_state(ZERO_1, /
