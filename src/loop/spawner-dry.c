/* SPDX-License-Identifier: MIT */
/*
 * The dry-run spawner (--dry-run): instead of running anything, each event
 * logs the command line and environment its agent (or each hotplug.d
 * program) would get, and counts as finished.
 *
 * In a replay (--replay with a speed above 0) each event is held for as
 * long as its agent ran when it was recorded (the duration the replay
 * hands in with spawner_dry_set_duration()), so the scheduler meets the same
 * overlaps and the order and waits it prints are those of the live run.
 *
 * The environment logged is the one the real spawner would give at this
 * moment (the PHYSDEVDRIVER of a bind read since the event's intake
 * included); a dry run does not wait for a probe's end.
 *
 * Invariants: an event with no duration is handed back during start();
 * every held event is on the dry list with its own timer, which owns it
 * until the timer fires (the event is done) or kill_all() frees it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <systemd/sd-event.h>

#include "shared/escape.h"
#include "shared/list.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/job-spawner.h"
#include "loop/manager-internal.h"
#include "pipeline/devmodel.h"
#include "pipeline/scheduler.h"
#include "pipeline/spawner.h"

struct spawner_dry {
        struct manager *m;
        job_dry_duration_fn duration;   /* NULL: every event is over at once */
        void *duration_userdata;
        struct list_node held;          /* struct dry_job.link */
};

struct dry_job {
        struct spawner_dry *d;
        struct uevent *ev;
        sd_event_source *timer;
        struct list_node link;          /* on spawner_dry.held */
};

int spawner_dry_new(struct manager *m, void **ret)
{
        struct spawner_dry *d = calloc(1, sizeof(*d));

        if (!d)
                return -ENOMEM;
        d->m = m;
        list_init(&d->held);
        *ret = d;
        return 0;
}

void spawner_dry_set_duration(void *data, job_dry_duration_fn fn, void *userdata)
{
        struct spawner_dry *d = data;

        d->duration = fn;
        d->duration_userdata = userdata;
}

/* Log what would run for @ev: the environment its programs would get, as the real spawner makes it. */
static void log_would_run(struct manager *m, const struct uevent *ev)
{
        char physdev[sizeof("PHYSDEVDRIVER=") + DEVMODEL_NAME_MAX];
        struct spawn_env env;
        struct log_fields f;
        char line[8192], esc[2048];
        size_t o = 0;

        if (log_get_max_level() < LOG_INFO)
                return;
        spawn_env_build(ev, &env);
        if (manager_physdev_driver(m, ev, physdev, sizeof(physdev)))
                spawn_env_set(&env, physdev);
        for (size_t i = 0; i < env.n && o < sizeof(line) - 1; i++) {
                int k = snprintf(line + o, sizeof(line) - o, "%s%s", i ? " " : "",
                                 escape_cstr(env.envp[i], esc, sizeof(esc)));
                if (k < 0)
                        break;
                o = MIN(sizeof(line) - 1, o + (size_t)k);
        }
        uevent_log_fields(ev, &f);
        if (m->cfg.hotplug_d) {
                char **paths = NULL;
                size_t n = 0;
                if (hotplug_d_list(m->cfg.hotplug_d, ev->name, &paths, &n) >= 0) {
                        for (size_t i = 0; i < n; i++) {
                                log_internal(LOG_INFO, 0, &f, "would run: %s %s [%s]", paths[i], ev->name, line);
                                free(paths[i]);
                        }
                        free(paths);
                }
                if (n == 0)
                        log_internal(LOG_INFO, 0, &f, "would run nothing: no %s/{%s,default}/*.hotplug",
                                     m->cfg.hotplug_d, ev->name);
        } else
                log_internal(LOG_INFO, 0, &f, "would run: %s %s [%s]", m->cfg.agent, ev->name, line);
}

static void dry_job_free(struct dry_job *j)
{
        list_unlink(&j->link);
        sd_event_source_disable_unref(j->timer);
        free(j);
}

static int on_dry_job(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct dry_job *j = userdata;
        struct manager *m = j->d->m;
        struct uevent *ev = j->ev;

        dry_job_free(j);
        manager_event_done(m, ev);
        manager_maybe_exit(m);
        return 0;
}

/* Hold @ev for its recorded duration.  Return: true if a timer took it. */
static bool hold(struct spawner_dry *d, struct uevent *ev)
{
        struct dry_job *j;
        usec_t dur;

        if (!d->duration)
                return false;
        dur = d->duration(d->duration_userdata, ev);
        if (dur == 0)
                return false;
        j = calloc(1, sizeof(*j));
        if (!j)
                return false;
        j->d = d;
        j->ev = ev;
        if (sd_event_add_time_relative(d->m->event, &j->timer, CLOCK_MONOTONIC, dur, 1, on_dry_job, j) < 0) {
                free(j);
                return false;
        }
        list_add_head(&d->held, &j->link);
        return true;
}

static void dry_start(void *data, struct uevent *ev)
{
        struct spawner_dry *d = data;
        struct manager *m = d->m;

        log_would_run(m, ev);
        m->stats.finished++;
        if (!hold(d, ev))
                manager_event_done(m, ev);
}

static void dry_kill_all(void *data)
{
        struct spawner_dry *d = data;
        struct dry_job *j;

        while ((j = list_first(&d->held, struct dry_job, link))) {
                struct uevent *ev = j->ev;

                dry_job_free(j);
                scheduler_done(d->m->scheduler, ev);
                free(ev);
        }
}

static void dry_free(void *data)
{
        dry_kill_all(data);
        free(data);
}

const struct job_spawner_ops spawner_dry_ops = {
        .start = dry_start,
        .kill_all = dry_kill_all,
        .free = dry_free,
};
