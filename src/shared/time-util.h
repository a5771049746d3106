/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

typedef uint64_t usec_t;
#define USEC_PER_SEC ((usec_t)1000000)
#define USEC_PER_MSEC ((usec_t)1000)
#define NSEC_PER_USEC ((usec_t)1000)

static inline usec_t now_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (usec_t)ts.tv_sec * USEC_PER_SEC + (usec_t)ts.tv_nsec / NSEC_PER_USEC;
}

/* A log line's rate limit: at most one line per interval, counting the rest. */
struct ratelimit {
        usec_t last;            /* CLOCK_MONOTONIC of the last line, 0: none yet */
        uint64_t suppressed;    /* lines left out since */
};

/*
 * May a line be logged now?  True at most once per @interval, with the
 * number left out since the last one in *ret_suppressed (untouched on
 * false); false counts one more left out.
 */
static inline bool ratelimit_pass(struct ratelimit *rl, usec_t interval, uint64_t *ret_suppressed)
{
        usec_t now = now_usec(CLOCK_MONOTONIC);

        if (rl->last != 0 && now - rl->last < interval) {
                rl->suppressed++;
                return false;
        }
        rl->last = now;
        *ret_suppressed = rl->suppressed;
        rl->suppressed = 0;
        return true;
}
