# The order in which make test's mutation run draws its sample (mutants.sh,
# SAMPLE): each line prefixed with a random key, which sort then orders by.
# usage: awk -v s=SEED -v k=LECTURE -f tests/grader/draw.awk FILE | sort -t'|' -k1,1 | cut -d'|' -f2-
# The lecture's own seed is kept below 2^31 - 1: mawk (Debian's awk) takes
# every seed from there up as one, and a seed from the clock with the
# lecture's digit after it (about 1.8e10) drew the same mutants in every run.
BEGIN { srand((s * 10 + k) % 2147483647) }
{ printf "%.12f|%s\n", rand(), $0 }
