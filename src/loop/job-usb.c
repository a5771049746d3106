/* SPDX-License-Identifier: MIT */
/*
 * The jobs' share of the linux-hotplug USB dispatch (hotplug-dir): the
 * maps, read at start and at each reload, and each usb event's plan
 * (pipeline/usb-dispatch.h), whose steps a job runs after the agent or
 * the hotplug.d programs, one after another, supervised as they are.
 *
 * Invariants: the maps in use are those of the last successful read (a
 * read that fails keeps none: an untrusted blacklist means nothing may
 * act); a remover is removed once it has run, or failed to; the remover
 * directory is made (0755, root's) when a plan first needs it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "loop/job.h"
#include "loop/manager-internal.h"
#include "pipeline/spawner.h"
#include "pipeline/usb-dispatch.h"
#include "pipeline/usermap.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "uevent/uevent.h"

static void on_map_error(const char *msg, void *userdata)
{
        (void)userdata;
        log_warning("hotplug-dir: %s", msg);
}

void jobs_usb_load(struct manager *m)
{
        const char *dir = m->cfg.hotplug_dir;
        struct usermap *map = NULL;
        int r;

        m->jobs->usermap = usermap_free(m->jobs->usermap);
        if (!dir)
                return;
        r = usermap_load(dir, &map, on_map_error, NULL);
        if (r < 0) {
                log_error_errno(r, "hotplug-dir: cannot read the maps of %s; no usb event is dispatched through "
                                   "them until a reload reads them", dir);
                return;
        }
        m->jobs->usermap = map;
        log_info("hotplug-dir: %zu usermap lines of %zu files in %s", usermap_entries(map), usermap_files(map), dir);
}

void jobs_usb_close(struct manager *m)
{
        m->jobs->usermap = usermap_free(m->jobs->usermap);
}

static void on_note(void *userdata, const struct usermap_match *match, bool problem, const char *what)
{
        const struct job *j = userdata;
        struct log_fields f;
        char where[HP_USERMAP_NAME_MAX + 128];

        uevent_log_fields(j->ev, &f);
        if (match)
                log_internal(problem ? LOG_WARNING : LOG_DEBUG, 0, &f, "hotplug-dir: %s: %s", usermap_describe(match, where, sizeof(where)),
                             what);
        else
                log_internal(problem ? LOG_WARNING : LOG_DEBUG, 0, &f, "hotplug-dir: %s", what);
}

/* The remover directory @dir (".../remover/usb"), made when first needed.  Return: 0 or negative errno (logged). */
static int remover_dir_make(const char *dir)
{
        char path[PATH_MAX];
        size_t len = strlen(dir);

        /* Its last two components; the directory above them (the runtime directory) is made too. */
        for (int up = 2; up >= 0; up--) {
                size_t cut = len;

                for (int k = 0; k < up && cut > 0; k++)
                        while (cut > 0 && dir[--cut] != '/')
                                ;
                if (cut == 0)
                        continue;
                snprintf(path, sizeof(path), "%.*s", (int)cut, dir);
                if (mkdir(path, 0755) < 0 && errno != EEXIST) {
                        log_warning_errno(-errno, "hotplug-dir: cannot make %s: no REMOVER for scripts", path);
                        return -errno;
                }
        }
        return 0;
}

void job_usb_plan(struct job *j)
{
        struct manager *m = j->m;
        char dir[PATH_MAX];
        struct usb_plan *p;
        int r;

        if (!m->jobs->usermap || strcmp(j->ev->subsystem, "usb") != 0)
                return;
        p = malloc(sizeof(*p));
        if (!p) {
                log_error("SEQNUM=%" PRIu64 ": out of memory, no usb dispatch", j->ev->seqnum);
                return;
        }
        usb_remover_dir(m->cfg.control_path, dir, sizeof(dir));
        r = usb_plan_build(m->jobs->usermap, m->cfg.hotplug_dir, dir, j->ev, p, on_note, j);
        if (r <= 0) {
                if (r < 0)
                        log_error("SEQNUM=%" PRIu64 ": out of memory, no usb dispatch", j->ev->seqnum);
                free(p);
                return;
        }
        if (strcmp(j->ev->action, "add") == 0 && p->remover[0] && remover_dir_make(dir) < 0)
                p->remover[0] = '\0';
        if (p->remover[0] && asprintf(&j->remover_env, "REMOVER=%s", p->remover) < 0)
                j->remover_env = NULL;
        j->usb = p;
}

const struct usb_step *job_usb_next(struct job *j)
{
        const struct usb_step *s;

        job_usb_removed(j);
        if (!j->usb || j->next_usb >= j->usb->n)
                return NULL;
        s = &j->usb->step[j->next_usb++];
        if (s->kind == USB_STEP_REMOVER)
                j->remover_ran = s->path; /* removed before the next step, or when the job ends */
        return s;
}

/*
 * A setup script's environment is the agent's with TYPE=usb, as linux-hotplug's
 * agent ran them (its load_drivers() set TYPE to the agent's type, and the
 * scripts were written for that: sane-backends' libusbscanner acts only when
 * TYPE is "usb"), and REMOVER.  A remover gets the event's own.
 */
void job_usb_env(const struct job *j, const struct usb_step *s, struct spawn_env *env)
{
        if (s->kind != USB_STEP_SCRIPT)
                return;
        spawn_env_set(env, "TYPE=usb");
        if (j->remover_env)
                spawn_env_set(env, j->remover_env);
}

void job_usb_removed(struct job *j)
{
        if (!j->remover_ran)
                return;
        if (unlink(j->remover_ran) < 0 && errno != ENOENT)
                log_warning_errno(-errno, "hotplug-dir: cannot remove the remover %s", j->remover_ran);
        j->remover_ran = NULL;
}

void job_usb_free(struct job *j)
{
        job_usb_removed(j);
        if (j->usb) {
                usb_plan_free(j->usb);
                free(j->usb);
                j->usb = NULL;
        }
        free(j->remover_env);
        j->remover_env = NULL;
}
