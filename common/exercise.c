// exercise: the stubs' one line, said once.
#include "exercise.h"
#include "base.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

void exercise_todo(const char *id) {
    static const char *told[64];
    static int ntold;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // the comm thread runs stubs too
    pthread_mutex_lock(&lock);
    int seen = 0;
    for (int i = 0; i < ntold && !seen; i++) seen = strcmp(told[i], id) == 0;
    if (!seen && ntold < 64) told[ntold++] = id;
    pthread_mutex_unlock(&lock);
    if (!seen && rt.rank == 0) fprintf(stderr, "exercise %s not done yet\n", id);
}
