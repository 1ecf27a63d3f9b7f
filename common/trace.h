// trace: Chrome trace events (the JSON that Perfetto and chrome://tracing
// open), one file for all ranks: pid = rank, thread 0 the compute, thread 1 the
// collectives from launch to completion, and memory counters. Off unless
// trace_open is called (--trace FILE). Memory is bounded: past 64 MiB of events
// on a rank (ZC_TRACE_LIMIT_KB sets another bound), its later events are
// dropped, and the file and rank 0's output say how many.
#ifndef TRACE_H
#define TRACE_H

// Starts recording on every rank (collective: the ranks agree on time zero)
// and registers with comm as the observer of finished collectives. If rank 0
// cannot write path, every rank exits with status 2 and one line.
void trace_open(const char *path);
// The compute track moves to a new phase, ending the one before; layer < 0
// for none. name NULL just ends the current phase. comm is told, traced or not.
void trace_phase(const char *name, int layer);
// Collective: rank 0 writes every rank's events to path, atomically (file.h),
// gathering them a chunk at a time; recording stops and the observer is
// removed. Returns NULL or a one-line reason (rank 0).
const char *trace_write(const char *path);

#endif
