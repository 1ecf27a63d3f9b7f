// clock: time for the reports, and a second clock that counts compute instead
// of time. The kernels mark each matrix product they launch; comm reads the
// count at a request's launch and at its wait, so whether compute ran under a
// collective is a fact of order, the same on a loaded machine as on an idle one.
#ifndef CLOCK_H
#define CLOCK_H

// Seconds on a monotonic clock.
double now_s(void);
// One more piece of compute launched (a matrix product), and how many so far.
void compute_mark(void);
unsigned long compute_marks(void);

#endif
