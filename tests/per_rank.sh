#!/bin/sh
# per_rank.sh PROGRAM ARGS...: runs PROGRAM with ARGS and, on rank r, the words
# of $ZC_RANK<r>_ARGS too: a command line per rank, as an MPMD launch, a
# wrapper script per rank or a per-rank environment gives one (test_cli.sh).
r=${OMPI_COMM_WORLD_RANK:-0}
eval "extra=\${ZC_RANK${r}_ARGS:-}"
# shellcheck disable=SC2086
exec "$@" $extra
