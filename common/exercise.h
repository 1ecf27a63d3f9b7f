// exercise: what a learner's unfinished exercise does when it runs. make
// exercise turns each exercise region into a stub that calls exercise_todo.
#ifndef EXERCISE_H
#define EXERCISE_H

// Rank 0 prints "exercise ID not done yet" on stderr, once per ID.
void exercise_todo(const char *id);

#endif
