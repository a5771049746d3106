/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * hotplugctl blame: where the time went, per subsystem, per program (the
 * agent, or each hotplug.d script) and per device.  The model takes one
 * fact per event and one per agent run, then sums them per name: total wall
 * time, count, the slowest (and its SEQNUM), the time spent waiting for
 * order (for earlier events to finish), for a free slot and for udevd.
 *
 *  - an event's wall time runs from its first agent's start to its last
 *    agent's end; subsystems and devices count events;
 *  - a program's wall time is that of its runs; programs count runs, and
 *    each run carries the waits of its event (a hotplug.d script runs once
 *    per event, so an event's wait counts once per script that ran for it);
 *  - an event waited for order from its arrival until the last event it
 *    waited for finished, and for a slot from then (or its arrival) until
 *    it was dispatched (its first agent started, unless it waited for
 *    udevd); after-udev: for udevd from its dispatch until udevd's
 *    broadcast of it came (or its bound ran out).  In a recording the
 *    dispatch is the time of its last order or slot WAIT record (or its
 *    arrival), and the end of its wait for udevd that of its WAIT record
 *    whose blocker is its own SEQNUM.
 *
 * Names are borrowed (but for blame_add_row()'s): they must outlive the
 * model.  Rows are sorted by total
 * time, longest first, then by name.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "shared/bounds.h"
#include "shared/time-util.h"

struct timeline;

enum blame_group {
        BLAME_SUBSYSTEM,
        BLAME_PROGRAM,
        BLAME_DEVICE,
        BLAME_MODULE,           /* the daemon's load-modules: loads per module; never in a recording */
        _BLAME_GROUP_MAX,
};

struct blame_row {
        const char *name;       /* borrowed */
        usec_t total;           /* wall time, summed */
        uint64_t count;         /* events (subsystem, device) or runs (program) */
        usec_t slowest;         /* the longest one */
        uint64_t slowest_seqnum;
        usec_t order_wait;      /* waiting for earlier events, summed */
        usec_t slot_wait;       /* waiting for a free slot, summed */
        usec_t udev_wait;       /* waiting for udevd's broadcast (after-udev), summed */
        uint64_t failed;        /* of count: events with a failed run, or runs that failed */
};

/* What an event waited for, each in microseconds. */
struct blame_waits {
        usec_t order, slot, udev;
};

struct blame {
        struct blame_row *rows[_BLAME_GROUP_MAX];
        size_t n[_BLAME_GROUP_MAX], a[_BLAME_GROUP_MAX];
        uint64_t events, runs;
        usec_t run_time;        /* all runs' wall time */
        usec_t order_wait, slot_wait, udev_wait;
        uint64_t failed_events, failed_runs; /* an agent run failed: exit status not 0, signal, exec */
        uint64_t unknown_events; /* runs whose event is not in the recording */
        char **names;           /* copies made by blame_add_row(), owned */
        size_t n_names;
        bool finished;
};

/* Return: 0 or -ENOMEM. */
int blame_new(struct blame **ret);
struct blame *blame_free(struct blame *b);

/**
 * blame_add_event() - account one event that ran.
 * @subsystem, @devpath: its names (borrowed until blame_free())
 * @w: its waits (borrowed for the call)
 * Return: 0 or -ENOMEM.
 */
int blame_add_event(struct blame *b, const char *subsystem, const char *devpath, uint64_t seqnum, usec_t wall,
                    const struct blame_waits *w, bool failed);

/**
 * blame_add_run() - account one agent run.
 * @program: the program that ran (borrowed until blame_free())
 * @w: its event's waits (borrowed for the call)
 * @failed: it did not exit 0 (exit status, signal, timeout, not executed)
 * Return: 0 or -ENOMEM.
 */
int blame_add_run(struct blame *b, const char *program, uint64_t seqnum, usec_t duration,
                  const struct blame_waits *w, bool failed);

/**
 * blame_add_timeline() - account every event and run of a finished timeline.
 * @tl: the model of a recording (borrowed until blame_free(): names point into it)
 * Return: 0 or -ENOMEM.
 */
int blame_add_timeline(struct blame *b, const struct timeline *tl);

/**
 * blame_add_row() - account a row summed elsewhere (the running daemon's).
 * @row: its sums; @row->name is copied (owned by @b from now on)
 *
 * The totals (events, runs, times) are the caller's to set.
 * Return: 0 or -ENOMEM.
 */
int blame_add_row(struct blame *b, enum blame_group g, const struct blame_row *row);

/* Sum the facts per name and sort the rows.  Return: 0 or -ENOMEM. */
int blame_finish(struct blame *b);

/**
 * blame_format_time() - a duration as a person reads it: "0", "0.4 ms", "310 ms",
 * "2.4 s", "3 min 12 s", "2 h 5 min".
 * Return: @buf (at least 24 bytes).
 */
const char *blame_format_time(usec_t t, char *buf, size_t size);

/* "subsystem", "program", "device". */
const char *blame_group_name(enum blame_group g);

/**
 * blame_render_text() - the three tables, for a terminal.
 * @top: rows per table at most, 0: all
 * Return: 0 or -EIO.
 */
int blame_render_text(const struct blame *b, size_t top, FILE *f);

/* As one JSON object on one line (shared/json.h).  Return: 0, -ENOMEM, -EINVAL or -EIO. */
int blame_render_json(const struct blame *b, size_t top, FILE *f);

/*
 * The chain of waits that ended last (blame --critical-chain), as
 * systemd-analyze critical-chain shows a boot's units: the event whose
 * agents ended last in the last busy period (from an event received when
 * nothing was held until nothing was held again: after boot, the
 * coldplug), the event it waited for (order), the one that one waited for,
 * and so on back to an event that waited for nothing but, maybe, a slot or
 * udevd.  Each link says when its first agent started after the period's
 * first event, how long its agents ran, what it waited for and whether a
 * run failed.  At most HP_BLAME_CHAIN_LINKS links; a chain that goes on
 * past them or past the events known (the daemon keeps the last
 * HP_BLAME_CHAIN_EVENTS) is cut, and says the SEQNUM it was cut at.
 */
struct blame_link {
        uint64_t seqnum;
        uint64_t blocker;          /* the event it waited for (order), 0: none */
        char *action, *subsystem, *devpath; /* owned */
        usec_t at;                 /* its first agent's start, after the period's first event */
        usec_t ran;                /* from its first agent's start to its last agent's end */
        struct blame_waits waits;
        uint64_t runs, failed_runs;
        char *failed, *failed_status; /* owned: the first program that failed and how; NULL: none */
};

struct blame_chain {
        uint64_t events;           /* events received in the period */
        usec_t span;               /* its first event's arrival to its last agent's end (or now) */
        bool settled;              /* nothing was held at its end (false: events still held) */
        bool known;                /* a period was seen (false: no agent ran) */
        uint64_t cut_seqnum;       /* the event the last link waited for, not known; 0: not cut */
        struct blame_link links[HP_BLAME_CHAIN_LINKS];
        size_t n_links;
};

/* Free the links' strings; @c is empty after.  */
void blame_chain_clear(struct blame_chain *c);

/**
 * blame_chain_add() - append a copy of @l (its strings copied; NULL ones stay NULL).
 * Return: 0, -ENOSPC past HP_BLAME_CHAIN_LINKS, or -ENOMEM.
 */
int blame_chain_add(struct blame_chain *c, const struct blame_link *l);

/**
 * blame_chain_of_timeline() - the chain that ended last in a finished timeline.
 * A period of a recording runs while some event is received and its last
 * agent has not ended; events without a run count at their arrival.
 * Return: 0 or -ENOMEM.
 */
int blame_chain_of_timeline(struct blame_chain *c, const struct timeline *tl);

/* For a terminal, and as one JSON object on one line.  Return: 0 or -EIO (JSON: or -ENOMEM). */
int blame_chain_render_text(const struct blame_chain *c, FILE *f);
int blame_chain_render_json(const struct blame_chain *c, FILE *f);
