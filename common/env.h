// env: the ZC_* environment variables, in one table, each read as strictly as
// an option is (the whole value, in its range). They are inputs like the
// command line: rt refuses a bad value, and a value not the same on every
// rank, before the run does anything.
#ifndef ENV_H
#define ENV_H

#include <stdint.h>

// The variables, in the README's order; NULL past the last.
const char *env_variable(int i);
// NULL, or a one-line reason why a variable that is set is not valid (the
// first such, its value escaped). Numbers are checked here; ZC_LINK and
// ZC_COMM_FIT by their readers.
const char *env_check(void);
// A numeric variable's value, or dflt where it is unset or not valid
// (env_check has refused it by then).
double env_number(const char *name, double dflt);
// XXH3 of variable i's value, unset and empty told apart: ranks compare it.
uint64_t env_value_hash(int i);

#endif
