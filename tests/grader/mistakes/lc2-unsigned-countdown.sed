# own_numel counted by a loop down an unsigned index: `i >= first` always holds
# for rank 0 (first = 0), so rank 0 never returns while the others wait for it
# in the next collective. The watchdog says which rank is stuck outside a
# collective and where the others wait.
# file: lc2_zero1/zero1.c
# check: lc2.1a
# says: rank 0 is not in a collective
/^size_t own_numel/,/^}/{
s/^    return first >= L->numel ? 0 : (L->numel - first < L->shard ? L->numel - first : L->shard);$/    size_t count = 0;\n    for (size_t i = first + L->shard - 1; i >= first; i--) count += i < L->numel;\n    return count;/
}
