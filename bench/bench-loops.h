/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Spawn loops side by side: the same serial loop run in several processes
 * at once, each started together and timed as a whole, each process's own
 * CPU time counted.  Processes, not threads: the spawner borrows one static
 * stack per process (spawn_agent() is for one thread at a time).
 */

#define LOOPS_MAX 64

struct loops_result {
        double seconds;   /* from the common start until the last loop ended */
        double cpu_usec;  /* the loops' own CPU time (user + system), summed; their children's not */
        long spawns;      /* run in all */
};

/**
 * loops_run() - run @fn(@arg) @count times in each of @loops processes at once.
 * @loops: processes, 1 to LOOPS_MAX
 * @count: calls per process, one after another
 * @fn: one call; returns negative errno on failure, which stops that loop
 * @arg: passed to @fn (each process has its own copy after fork())
 * @ret: filled on success
 *
 * Return: 0, or -1 if a loop failed or could not be started (reported on stderr).
 */
int loops_run(unsigned loops, long count, int (*fn)(void *arg), void *arg, struct loops_result *ret);
