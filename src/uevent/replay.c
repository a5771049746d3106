/* SPDX-License-Identifier: MIT */
/*
 * Replay timing over a recording.  The clock is pure arithmetic on recorded
 * timestamps; the iterator only filters the reader's records.  Invariants:
 * c->due is the sum of all delays returned so far, saturated at
 * REPLAY_USEC_MAX; no delay exceeds REPLAY_USEC_MAX and no double is cast
 * to usec_t outside its range, whatever the speed and the recorded times.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/macro.h"
#include "uevent/replay.h"

usec_t replay_scale(usec_t d, double speed)
{
        double v;

        if (!(speed > 0)) /* also NaN */
                return 0;
        v = (double)d / speed + 0.5;
        /* Compared in double: REPLAY_USEC_MAX itself rounds up to 2^63, which no usec_t cast reaches. */
        return v < (double)REPLAY_USEC_MAX ? (usec_t)v : REPLAY_USEC_MAX;
}

void replay_clock_init(struct replay_clock *c, double speed, usec_t max_delay)
{
        if (!(speed > 0)) /* negative, 0 or NaN: no waiting */
                speed = 0;
        else
                speed = MIN(MAX(speed, 1.0 / HP_REPLAY_SLOWDOWN_MAX), (double)HP_REPLAY_SPEED_MAX);
        *c = (struct replay_clock){
                .speed = speed,
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
                d = replay_scale(d, c->speed);
        }
        c->started = true;
        c->prev = monotonic;
        assert(d <= REPLAY_USEC_MAX && c->due <= REPLAY_USEC_MAX);
        c->due = d > REPLAY_USEC_MAX - c->due ? REPLAY_USEC_MAX : c->due + d;
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
        /* Digits only: no blanks, no sign (not even "-0"), no "nan" or "inf". */
        if (!strchr("0123456789.", s[0]))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno || *end || !(v == 0 || (v >= 1.0 / HP_REPLAY_SLOWDOWN_MAX && v <= HP_REPLAY_SPEED_MAX)))
                return -EINVAL;
        *ret = v;
        return 0;
}

struct replay {
        struct record_reader *reader;
        struct replay_clock clock;
};

/* The replay around @reader (consumed: the replay's, or freed on failure). */
static int replay_new(struct record_reader *reader, double speed, struct replay **ret)
{
        struct replay *rp = calloc(1, sizeof(*rp));

        if (!rp) {
                record_reader_free(reader);
                return -ENOMEM;
        }
        rp->reader = reader;
        record_reader_set_step(rp->reader, HP_REPLAY_RESYNC_STEP);
        replay_clock_init(&rp->clock, speed, HP_REPLAY_MAX_DELAY_USEC);
        *ret = rp;
        return 0;
}

int replay_open(const char *path, double speed, struct replay **ret)
{
        struct record_reader *reader;
        int r = record_reader_open(path, &reader);

        return r < 0 ? r : replay_new(reader, speed, ret);
}

int replay_open_fd(int fd, double speed, struct replay **ret)
{
        struct record_reader *reader;
        int r = record_reader_open_fd(fd, &reader);

        return r < 0 ? r : replay_new(reader, speed, ret);
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
