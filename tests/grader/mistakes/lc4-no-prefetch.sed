# --prefetch 1 ignored: each gather waited for as soon as it is launched.
# file: lc4_zero3/zero3.c
# check: lc4.1c
# says: no all-gather ran under compute
/^float \*gather_params/,/^}/{
s/^    if (t->a.prefetch && next >= 0/    if (0 \&\& next >= 0/
}
