/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What happened to each device, for hotplugctl info: per DEVPATH a ring of
 * its last HP_INFO_EVENTS events, each with its SEQNUM, action, the times
 * it was received (CLOCK_REALTIME and CLOCK_MONOTONIC), what it waited for
 * (order, a slot, udevd) and the programs it ran (path, pid, exit status or
 * signal, duration).  Pure: the caller gives every time; no I/O, no clock.
 *
 * Invariants and bounds:
 *  - at most @max_devices devices and @max_bytes bytes (every allocation
 *    counted: device, events, program paths, reasons, statuses); past
 *    either, the device heard of least recently is forgotten whole (never
 *    the one being written), counted in @evicted;
 *  - a device's ring holds at most HP_INFO_EVENTS events, the oldest
 *    overwritten first; an event keeps at most HP_INFO_RUNS programs
 *    (more are counted in runs_left_out) and HP_INFO_TEXT_MAX - 1 bytes
 *    of any text (cut there);
 *  - @bytes is the exact sum of what is allocated: 0 once the store is
 *    empty (devinfo_clear()).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/bounds.h"
#include "shared/hash.h"
#include "shared/list.h"
#include "shared/time-util.h"

enum devinfo_outcome {
        DEVINFO_HELD,     /* received, not done yet */
        DEVINFO_DONE,     /* its job is over (whatever its programs said) */
        DEVINFO_FILTERED, /* left without running anything: filtered */
        DEVINFO_DROPPED,  /* left without running anything: a duplicate, aborted or set aside */
        _DEVINFO_OUTCOME_MAX,
};

/* One program run. */
struct devinfo_run {
        char *program;       /* owned: its path (cut at HP_INFO_TEXT_MAX - 1 bytes) */
        char *status;        /* owned: "exit 0", "signal 9 (Killed)", "exec ENOENT"; NULL: running */
        pid_t pid;           /* 0: it could not be executed */
        bool failed;         /* exit status not 0, a signal, or not executed */
        bool timed_out;      /* stopped at the agent timeout */
        usec_t started;      /* CLOCK_MONOTONIC */
        usec_t duration;     /* 0 while it runs */
};

/* One wait before its first program started. */
struct devinfo_wait {
        uint64_t blocker;    /* the event it waited for; 0: a free slot; its own SEQNUM: udevd */
        usec_t waited;       /* from its arrival to the end of the wait */
        char *reason;        /* owned: "parent /devices/...", "a free slot (limit 4)", "udevd" */
};

struct devinfo_event {
        uint64_t seqnum;
        char action[16];
        usec_t real, mono;   /* received: CLOCK_REALTIME, CLOCK_MONOTONIC */
        enum devinfo_outcome outcome;
        struct devinfo_run *run;  /* owned, n_run of them used, a_run allocated */
        uint32_t n_run, a_run, runs_left_out;
        struct devinfo_wait wait[3];
        uint32_t n_wait;
};

struct devinfo_device {
        uint64_t hash;
        struct list_node lru;              /* most recently heard of first */
        struct devinfo_event *ev[HP_INFO_EVENTS]; /* owned; a ring, NULL: empty */
        uint32_t next;                     /* the slot the next event takes */
        size_t bytes;                      /* of this device, all counted */
        char devpath[];
};

struct devinfo {
        struct hash_table table;           /* DEVPATH -> struct devinfo_device, owned */
        struct list_node lru;
        size_t n, max_devices;
        size_t bytes, max_bytes;
        uint64_t evicted;                  /* devices forgotten at a bound */
};

/* An empty store of at most @max_devices devices and @max_bytes bytes. */
void devinfo_init(struct devinfo *s, size_t max_devices, size_t max_bytes);

/* Forget everything; the store is empty (and usable) afterwards. */
void devinfo_clear(struct devinfo *s);

/**
 * devinfo_event_add() - a new event of @devpath, in its ring.
 * @devpath, @action: borrowed (copied; the action cut at 15 bytes)
 * @real, @mono: when it was received
 *
 * The device becomes the most recently heard of; devices heard of least
 * recently are forgotten while the store is past a bound.  An event of the
 * same SEQNUM in the ring already is returned as it is.
 * Return: the event (borrowed until the next change of the store), NULL without memory.
 */
struct devinfo_event *devinfo_event_add(struct devinfo *s, const char *devpath, uint64_t seqnum, const char *action,
                                        usec_t real, usec_t mono);

/* The event @seqnum of @devpath, if its ring still holds it (borrowed); else NULL. */
struct devinfo_event *devinfo_event_find(const struct devinfo *s, const char *devpath, uint64_t seqnum);

/* The event waited: @blocker, @waited and @reason (borrowed, copied) as in struct devinfo_wait.
 * A fourth wait is not kept.  Without memory the reason is left out. */
void devinfo_event_waited(struct devinfo *s, const char *devpath, uint64_t seqnum, uint64_t blocker,
                          usec_t waited, const char *reason);

/* A program of the event started (@pid 0: it could not be executed; devinfo_run_end() follows then too). */
void devinfo_run_start(struct devinfo *s, const char *devpath, uint64_t seqnum, const char *program, pid_t pid,
                       usec_t started);

/* The run @pid of the event ended after @duration, @status (borrowed) e.g. "exit 0". */
void devinfo_run_end(struct devinfo *s, const char *devpath, uint64_t seqnum, pid_t pid, const char *status,
                     bool failed, bool timed_out, usec_t duration);

/* The event left the pipeline: @outcome. */
void devinfo_event_outcome(struct devinfo *s, const char *devpath, uint64_t seqnum, enum devinfo_outcome outcome);

/* The device @devpath (borrowed until the next change of the store), or NULL; not made most recent. */
const struct devinfo_device *devinfo_get(const struct devinfo *s, const char *devpath);

/* The @i-th oldest event of @d that the ring holds (i from 0), or NULL past the last. */
const struct devinfo_event *devinfo_device_event(const struct devinfo_device *d, size_t i);

/* Iterate over the devices: start with *iter = 0; NULL at the end.  The store must not change meanwhile. */
const struct devinfo_device *devinfo_next(const struct devinfo *s, size_t *iter);

/* "held", "done", "filtered", "dropped". */
const char *devinfo_outcome_to_string(enum devinfo_outcome o);
