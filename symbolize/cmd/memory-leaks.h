/*
 * memory-leaks.h - `stepscope memory DIR --leaks` (memory-leaks.c).
 */
#ifndef SS_MEMORY_LEAKS_H
#define SS_MEMORY_LEAKS_H

#include <stdio.h>

/* Print the leaks of the run in dir on out (stacks: each function's
 * recorded call paths too); the command's exit status (2: nothing
 * recorded, no verdict, bad input; 1: internal). */
int ss_memory_leaks(const char *dir, const char *backend, int quiet, int stacks, FILE *out);
/* The same into the file out (NULL or "-": stdout), written atomically */
int ss_memory_leaks_to(const char *dir, const char *backend, int quiet, int stacks,
		       const char *out);

#endif /* SS_MEMORY_LEAKS_H */
