/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Replay of a recording: the recorded kernel datagrams (and overflows), in
 * file order, each with the delay that reproduces the recorded timing at a
 * given speed.  Nothing here sleeps or reads a clock: the caller schedules
 * each item (e.g. with an sd-event timer at start + item.due) and feeds the
 * datagram through the same parser, ledger, handlers and scheduler as live
 * input.  Datagrams are returned as recorded, unvalidated.
 *
 * Timing rules (replay_clock_step()): the first item is due at once; after
 * that, each item waits for the recorded CLOCK_MONOTONIC distance to the
 * previous item, capped at max_delay, divided by the speed.  A timestamp of
 * 0 (unknown) or one lower than the previous (the file was appended to
 * after a reboot) means no wait.  Speed 0 means as fast as possible.
 * Delays and their sum saturate at REPLAY_USEC_MAX.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uevent/record.h"
#include "shared/time-util.h"

struct replay_clock {
        double speed;      /* > 0: recorded time / speed; 0: no waiting */
        usec_t max_delay;  /* longest recorded pause kept; 0: no cap */
        bool started;
        usec_t prev;       /* recorded time of the previous timed item */
        usec_t due;        /* replay time of the latest item since the first */
};

/* Larger than any replay time, and far from wrapping when added to a clock reading. */
#define REPLAY_USEC_MAX ((usec_t)INT64_MAX)

/**
 * replay_scale() - a recorded time at a replay speed.
 * @d: recorded microseconds
 * @speed: speed factor; 0 (or anything not a positive number): no waiting
 * Return: @d / @speed, rounded, at most REPLAY_USEC_MAX.
 */
usec_t replay_scale(usec_t d, double speed);

/* Start a clock. @speed <= 0 or NaN is treated as 0; others are kept within
 * 1/HP_REPLAY_SLOWDOWN_MAX .. HP_REPLAY_SPEED_MAX. */
void replay_clock_init(struct replay_clock *c, double speed, usec_t max_delay);

/**
 * replay_clock_step() - account one item.
 * @c: clock
 * @monotonic: the item's recorded CLOCK_MONOTONIC time (0: unknown)
 * Return: the delay (µs) to wait after the previous item; c->due is updated.
 */
usec_t replay_clock_step(struct replay_clock *c, usec_t monotonic);

/**
 * replay_speed_from_string() - parse --speed.
 * @s: "1", "2.5", "0.1", or "0"/"max" for no waiting
 * @ret: the speed (untouched on failure)
 * Return: 0 or -EINVAL (a sign, blanks, not a number, not finite, or
 * outside 1/HP_REPLAY_SLOWDOWN_MAX .. HP_REPLAY_SPEED_MAX and not 0).
 */
int replay_speed_from_string(const char *s, double *ret);

enum replay_kind {
        REPLAY_DATAGRAM,   /* feed data/size through uevent_parse() and the pipeline */
        REPLAY_OVERFLOW,   /* tell the ledger: ledger_note_overflow() */
};

struct replay_item {
        enum replay_kind kind;
        const void *data;   /* DATAGRAM: the bytes (borrowed until the next replay_next()) */
        size_t size;
        usec_t realtime;    /* as recorded */
        usec_t monotonic;   /* as recorded */
        usec_t delay;       /* wait this long after the previous item... */
        usec_t due;         /* ...that is, this long after the first item */
        uint64_t offset;    /* file offset of the record */
};

struct replay;

/**
 * replay_open() - open a recording for replay.
 * @path: the recording (borrowed)
 * @speed: speed factor (see struct replay_clock)
 * @ret: the replay, owned by the caller (replay_free())
 *
 * Pauses longer than HP_REPLAY_MAX_DELAY_USEC (recorded time) are shortened to it;
 * one replay_next() searches at most HP_REPLAY_RESYNC_STEP bytes of damage.
 * Return: 0 or the errors of record_reader_open().
 */
int replay_open(const char *path, double speed, struct replay **ret);

/**
 * replay_open_fd() - replay_open() of an open file.
 * @fd: the recording, open for reading (consumed: the replay's, or closed on failure)
 * @speed: as replay_open()
 * @ret: as replay_open()
 *
 * Return: as replay_open().
 */
int replay_open_fd(int fd, double speed, struct replay **ret);

/**
 * replay_next() - the next datagram or overflow.
 * @rp: replay
 * @ret: the item (pointers borrowed until the next call)
 *
 * Other record types (agent runs, waits, gaps) are skipped: replay
 * recomputes them.
 * Return: 1 with an item; RECORD_NEXT_PROBLEM with the damage in
 * replay_problem() (log it with record_problem_format() and go on);
 * RECORD_NEXT_AGAIN in the middle of a search through damage (call again,
 * after serving other work); 0 at the end; negative errno on read errors.
 */
int replay_next(struct replay *rp, struct replay_item *ret);

/* The problem last reported by replay_next() (borrowed). */
const struct record_problem *replay_problem(const struct replay *rp);

/* The underlying reader's counters (borrowed). */
const struct record_reader_stats *replay_stats(const struct replay *rp);

/* Accepts NULL; returns NULL. */
struct replay *replay_free(struct replay *rp);
