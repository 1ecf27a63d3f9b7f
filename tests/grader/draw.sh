#!/bin/sh
# The order in which make test's mutation run draws its sample (mutants.sh,
# SAMPLE): the lines of FILE (or stdin), shuffled by SEED and the lecture.
# usage: tests/grader/draw.sh SEED LECTURE [FILE]
# The lecture's own seed is kept below 2^31 - 1: mawk (Debian's awk) takes
# every seed from there up as one, and a seed from the clock with the
# lecture's digit after it (about 1.8e10) drew the same mutants in every run.
awk -v s="$1" -v k="$2" 'BEGIN { srand((s * 10 + k) % 2147483647) } { printf "%.12f|%s\n", rand(), $0 }' ${3:+"$3"} |
  sort -t'|' -k1,1 | cut -d'|' -f2-
