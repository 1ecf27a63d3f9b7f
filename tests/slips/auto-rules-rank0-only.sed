# --comm auto's measured rules read on rank 0 only: the fit is sent, the rules not
# (a maintainer who moves the read into "if (rt.rank == 0)" and sends what the
# model needs). Every other rank then decides by the model: the ranks run
# different algorithms in one collective.
# file: common/comm_auto.c
# run: tests/test_cli.sh "$BUILD"
# says: FAIL: auto follows a measured rule over the model
/MPI_Bcast(&rules, (int)sizeof rules/d
