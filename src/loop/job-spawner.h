/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * How the job layer (manager-job.c) runs an event: through a spawner,
 * chosen once when the manager is set up.  The real one (manager-job.c)
 * starts the agent or the hotplug.d programs (pipeline/spawner.c) and
 * supervises them through their pidfds; the dry one (spawner-dry.c,
 * --dry-run) logs what would run and, in a replay, holds the event for
 * its recorded agent time.  Only src/loop/ includes this.
 *
 * Invariant: start() owns the event from the call on and hands it back
 * exactly once with manager_event_done(), during the call or later; until
 * then the scheduler counts it running.  kill_all() ends every run at once,
 * handing each event to scheduler_done() and freeing it without telling
 * the observers (the manager is going away).
 */

#include "shared/time-util.h"

struct manager;
struct uevent;

struct job_spawner_ops {
        /* Run @ev (the scheduler just handed it out); @data: the spawner's state. */
        void (*start)(void *data, struct uevent *ev);
        /* The manager exits: end every run now, without observers. */
        void (*kill_all)(void *data);
        /* Free @data; nothing runs any more. */
        void (*free)(void *data);
};

/**
 * manager_event_done() - a held event is over: hand it back and free it.
 * @m: manager
 * @ev: the event the spawner was given (consumed)
 *
 * The scheduler lets go of @ev, the observers hear done(), the backlog
 * moves up into the room it left, the source may feed again, and whatever
 * the event released is dispatched.
 */
void manager_event_done(struct manager *m, struct uevent *ev);

/*
 * The recorded agent time of @ev in a replay (0: none, finish at once);
 * @userdata is the replay's.
 */
typedef usec_t (*job_dry_duration_fn)(void *userdata, const struct uevent *ev);

/**
 * spawner_dry_new() - the dry-run spawner.
 * @m: manager (borrowed; outlives the spawner)
 * @ret: the spawner's state, for spawner_dry_ops
 * Return: 0 or -ENOMEM.
 */
int spawner_dry_new(struct manager *m, void **ret);
extern const struct job_spawner_ops spawner_dry_ops;

/**
 * spawner_dry_set_duration() - hold each dry-run event for a duration.
 * @data: the dry spawner's state
 * @fn: the duration of an event (a replay's recorded agent time); NULL: none
 * @userdata: passed to @fn (borrowed; must outlive the spawner's use of it)
 */
void spawner_dry_set_duration(void *data, job_dry_duration_fn fn, void *userdata);
