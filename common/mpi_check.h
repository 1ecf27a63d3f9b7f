// mpi_check: for the modules that call MPI. A failed call is fatal, named with
// MPI's reason.
#ifndef MPI_CHECK_H
#define MPI_CHECK_H

#include <mpi.h>

#include "base.h"

#define CHECK_MPI(call) do { int e_ = (call); if (e_ != MPI_SUCCESS) { \
    char s_[MPI_MAX_ERROR_STRING]; int n_ = 0; MPI_Error_string(e_, s_, &n_); \
    fatal("%s: %s", #call, s_); } } while (0)

#endif
