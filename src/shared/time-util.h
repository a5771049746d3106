/* SPDX-License-Identifier: MIT */
#pragma once

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
