/* SPDX-License-Identifier: MIT */
/*
 * Replay timing over a recording.  The clock is pure arithmetic on recorded
 * timestamps; the iterator only filters the reader's records.  Invariant:
 * c->due is the sum of all delays returned so far.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "replay.h"

void replay_clock_init(struct replay_clock *c, double speed, usec_t max_delay)
{
        *c = (struct replay_clock){
                .speed = speed > 0 ? speed : 0,
                .max_delay = max_delay,
        };
}

usec_t replay_clock_step(struct replay_clock *c, usec_t monotonic)
{
        usec_t d = 0;

        if (monotonic == 0)
                return 0;
        if (c->started && monotonic > c->prev) {
                d = monotonic - c->prev;
                if (c->max_delay && d > c->max_delay)
                        d = c->max_delay;
                d = c->speed > 0 ? (usec_t)((double)d / c->speed + 0.5) : 0;
        }
        c->started = true;
        c->prev = monotonic;
        c->due += d;
        return d;
}

int replay_speed_from_string(const char *s, double *ret)
{
        char *end;
        double v;

        if (!s || !*s)
                return -EINVAL;
        if (strcmp(s, "max") == 0) {
                *ret = 0;
                return 0;
        }
        errno = 0;
        v = strtod(s, &end);
        if (errno || *end || !(v >= 0 && v <= 1e6)) /* also refuses NaN and infinity */
                return -EINVAL;
        *ret = v;
        return 0;
}

struct replay {
        struct record_reader *reader;
        struct replay_clock clock;
};

int replay_open(const char *path, double speed, struct replay **ret)
{
        struct replay *rp;
        int r;

        rp = calloc(1, sizeof(*rp));
        if (!rp)
                return -ENOMEM;
        r = record_reader_open(path, &rp->reader);
        if (r < 0) {
                free(rp);
                return r;
        }
        replay_clock_init(&rp->clock, speed, HP_REPLAY_MAX_DELAY_USEC);
        *ret = rp;
        return 0;
}

int replay_next(struct replay *rp, struct replay_item *ret)
{
        struct record rec;
        int r;

        for (;;) {
                r = record_reader_next(rp->reader, &rec);
                if (r != 1)
                        return r;
                if (rec.type == RECORD_DATAGRAM) {
                        *ret = (struct replay_item){
                                .kind = REPLAY_DATAGRAM,
                                .data = rec.datagram.data,
                                .size = rec.datagram.size,
                                .realtime = rec.datagram.realtime,
                                .monotonic = rec.datagram.monotonic,
                        };
                } else if (rec.type == RECORD_OVERFLOW) {
                        *ret = (struct replay_item){
                                .kind = REPLAY_OVERFLOW,
                                .realtime = rec.overflow.realtime,
                                .monotonic = rec.overflow.monotonic,
                        };
                } else
                        continue;
                ret->offset = rec.offset;
                ret->delay = replay_clock_step(&rp->clock, ret->monotonic);
                ret->due = rp->clock.due;
                return 1;
        }
}

const struct record_problem *replay_problem(const struct replay *rp)
{
        return record_reader_problem(rp->reader);
}

const struct record_reader_stats *replay_stats(const struct replay *rp)
{
        return record_reader_stats(rp->reader);
}

struct replay *replay_free(struct replay *rp)
{
        if (rp) {
                record_reader_free(rp->reader);
                free(rp);
        }
        return NULL;
}
