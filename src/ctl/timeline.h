/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * hotplugctl timeline: a model of a recording (lanes, agent-run bars, wait
 * arrows, gap and overflow marks) built from records, and two renderers of
 * it (SVG, text).  The model owns copies of every string it keeps; all of
 * them came from a file and are untrusted (datagrams were validated with
 * uevent_parse(); programs and reasons are arbitrary bytes without NUL), so
 * the renderers escape everything they print.
 *
 * Times in the model are microseconds since t0, the earliest time in the
 * recording (CLOCK_MONOTONIC of the recorder).  Only DATAGRAM records also
 * hold CLOCK_REALTIME; wall-clock times of anything else are derived from
 * the offset between the two clocks at the nearest earlier datagram (the
 * offset changes on suspend and clock steps, so one offset for the whole
 * recording would not do).
 *
 * Each lane has one or more sub-rows: a run occupies its row from the time
 * its event was received (its wait) to its end, and overlapping runs of a
 * lane never share a row.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "uevent/record.h"
#include "shared/time-util.h"

enum timeline_lanes {
        TIMELINE_LANES_DEVICE,     /* one lane per DEVPATH */
        TIMELINE_LANES_SUBSYSTEM,  /* one lane per SUBSYSTEM */
};

struct tl_event {             /* one valid datagram */
        uint64_t seqnum;
        usec_t t;             /* received */
        usec_t realtime;      /* received, CLOCK_REALTIME as recorded (absolute) */
        char *action, *devpath, *subsystem;
        unsigned lane;
};

struct tl_run {               /* one agent run */
        uint64_t seqnum;
        uint32_t pid;
        usec_t queued;        /* its event received (first run of an event), else = start */
        usec_t start, end;
        bool finished;        /* an AGENT_END was seen (else end = end of recording) */
        enum record_agent_status status;
        int32_t value;
        char *program;        /* NULL if it never started (exec failure without a start) */
        long event;           /* index into events, -1 if its datagram is not in the recording */
        unsigned lane;
        unsigned row;         /* sub-row within the lane, < lanes[lane].rows */
        const char *slot_wait; /* "a free slot (limit N)" if it waited for one (borrowed from waits), else NULL */
        /* "udevd" or "udevd, not broadcast in time" if it waited for udevd's broadcast of its event
         * (after-udev; borrowed from waits), else NULL; then it waited from udev_from (its dispatch:
         * its last order or slot WAIT record, or its arrival) until udev_until (its udevd WAIT
         * record), queued <= udev_from <= udev_until <= start.  Else both are start. */
        const char *udev_wait;
        usec_t udev_from, udev_until;
};

/*
 * What became of a run, each drawn its own way.  The recording tells all of
 * these apart (AGENT_END status and value); it holds nothing on events that
 * got no agent run (filtered, duplicates): those are events without a run.
 */
enum tl_outcome {
        TL_OK,          /* exit 0 */
        TL_EXIT,        /* exit status other than 0 */
        TL_SIGNAL,      /* killed by a signal it was not sent for a timeout */
        TL_TIMEOUT,     /* killed after its timeout */
        TL_EXEC,        /* could not be executed */
        TL_RUNNING,     /* no end in the recording */
        _TL_OUTCOME_MAX,
};

/* What an event waited for (a WAIT record, record.h). */
enum tl_wait_kind {
        TL_WAIT_ORDER,  /* another event, the blocker, to finish: an arrow from the blocker's run */
        TL_WAIT_SLOT,   /* blocker 0: a free slot */
        TL_WAIT_UDEV,   /* blocker its own SEQNUM: udevd's broadcast of it (after-udev) */
};

struct tl_wait {
        uint64_t seqnum, blocker;
        enum tl_wait_kind kind;
        usec_t t;              /* when it was recorded: order and slot at the dispatch, udevd when it ended */
        char *reason;
        long from_run, to_run; /* blocker's last run (order only), waiter's first run; -1 if absent */
};

struct tl_mark {              /* a SEQNUM gap or a receive-buffer overflow */
        usec_t t;
        bool overflow;
        uint64_t first, last; /* gap only */
        enum record_gap_class class;
};

struct tl_lane {
        const char *name;     /* borrowed from an event, or a static string */
        usec_t first;         /* earliest time anything happened in it */
        unsigned n_runs, n_events;
        unsigned rows;        /* sub-rows, at least 1 */
        size_t first_row;     /* rows of the lanes before it */
};

struct tl_clock {             /* CLOCK_REALTIME - CLOCK_MONOTONIC from t on */
        usec_t t;
        uint64_t offset;      /* modulo 2^64 */
};

struct timeline {
        struct tl_event *events;
        size_t n_events, a_events;
        struct tl_run *runs;      /* sorted by start after timeline_finish() */
        size_t n_runs, a_runs;
        struct tl_wait *waits;
        size_t n_waits, a_waits;
        struct tl_mark *marks;    /* sorted by time after timeline_finish() */
        size_t n_marks, a_marks;
        struct tl_lane *lanes;    /* ordered by first activity */
        size_t n_lanes;
        size_t n_rows;            /* sum of the lanes' rows */
        struct tl_clock *clock;   /* by time; empty when the recording has no datagram */
        size_t n_clock;
        enum timeline_lanes by;
        usec_t t0, span;          /* span: last time minus t0, at least 1 ms */

        uint64_t rejected;        /* datagrams that failed uevent_parse() */
        uint64_t ignored;         /* records past HP_TIMELINE_MAX_RUNS/EVENTS */
        uint64_t unmatched_ends;  /* AGENT_END without a start (exec failures become zero-length runs) */
        bool many_programs;       /* runs of more than one program (hotplug.d, usb scripts): bars name theirs */
        bool finished;
};

/* Return: 0 or -ENOMEM. */
int timeline_new(struct timeline **ret);
struct timeline *timeline_free(struct timeline *tl);

/**
 * timeline_add() - account one record read from a recording.
 * @tl: model (not yet finished)
 * @rec: the record (borrowed for the call; strings are copied)
 * Return: 0 or -ENOMEM.  Invalid datagrams are counted in tl->rejected.
 */
int timeline_add(struct timeline *tl, const struct record *rec);

/**
 * timeline_load() - add every record of the recording @path (borrowed) to @tl.
 * @verb: the hotplugctl verb, for messages ("hotplugctl: VERB: PATH: ...")
 * Damage is reported on stderr and skipped.  Return: 0, or negative errno
 * (reported) if the file cannot be read as a recording or memory runs out.
 */
int timeline_load(struct timeline *tl, const char *path, const char *verb);

/**
 * timeline_finish() - compute lanes, relative times, arrows; sort.
 * @tl: model with every record added
 * @by: lane key
 * Return: 0 or -ENOMEM.
 */
int timeline_finish(struct timeline *tl, enum timeline_lanes by);

/* Lane label of @tl->by for an event index (-1: unknown event). */
const char *timeline_lane_key(const struct timeline *tl, long event);

/* What a bar is named by when tl->many_programs: the base name of @run's program, "" if it never started. */
const char *timeline_run_name(const struct tl_run *run);

/* Short status: "exit 0", "signal 15", "timeout, sig 9", "exec ENOENT", "running". */
void timeline_run_status(const struct tl_run *run, char *buf, size_t size);

enum tl_outcome timeline_run_outcome(const struct tl_run *run);
/* "ok", "exit", "signal", "timeout", "exec", "running": a class name. */
const char *timeline_outcome_name(enum tl_outcome o);
/* What it means, for a legend: "exit 0", "exit status not 0", ... */
const char *timeline_outcome_text(enum tl_outcome o);

/* Wall-clock formats of timeline_wall(). */
enum tl_wall {
        TL_WALL_MS,       /* "HH:MM:SS.mmm" */
        TL_WALL_US,       /* "HH:MM:SS.uuuuuu" */
        TL_WALL_DATE,     /* "YYYY-MM-DD HH:MM:SS.mmm ZONE" */
};

/**
 * timeline_wall() - the local wall-clock time of a model time, as the journal shows it.
 * @tl: finished model
 * @t: time relative to t0
 * @how: format
 * @buf: output (at least 48 bytes for TL_WALL_DATE)
 * Return: @buf, holding "?" if the recording holds no wall-clock time
 * (tl->n_clock is 0: no datagram) or the time cannot be shown; never NULL,
 * so that it can go straight into a printf.
 */
const char *timeline_wall(const struct timeline *tl, usec_t t, enum tl_wall how, char *buf, size_t size);

/**
 * timeline_render_svg() - draw a finished model as a standalone SVG document.
 * @tl: model (borrowed)
 * @title: shown at the top (borrowed; escaped)
 * @f: output stream (borrowed)
 * Each run is one <rect class="bar OUTCOME"> element (timeline_outcome_name()),
 * preceded by a <rect class="queued"> for its wait when it had one, and a
 * <rect class="udev"> for the part of it spent waiting for udevd.
 * Return: 0, -ENOMEM or -EIO.
 */
int timeline_render_svg(const struct timeline *tl, const char *title, FILE *f);

/**
 * timeline_render_text() - a chart of the lanes (one line per sub-row),
 * then one line per run (start/end ms, wall clock, status, lane, a bar).
 * @tl: model (borrowed)
 * @columns: width of the bar, in characters (>= 10)
 * @f: output stream (borrowed)
 * Return: 0, -ENOMEM or -EIO.
 */
int timeline_render_text(const struct timeline *tl, unsigned columns, FILE *f);
