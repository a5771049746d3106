/* SPDX-License-Identifier: MIT */
/*
 * Jobs: dispatching held events and running the agent (or the hotplug.d
 * programs) for each, through the spawner chosen at setup (job-spawner.h):
 * the real one below, or the dry one (spawner-dry.c).
 *
 * Invariants: dispatch is iterative (a job that completes inside start()
 * does not recurse into dispatch); a running event has exactly one struct
 * job (ev->owner_data) on m->jobs->running, which owns the child's source
 * (an io source on its pidfd; freed before the child was reaped, it kills
 * and reaps it), while a program runs an output pipe (struct job_output) and its timeout timer; a job ends in job_finish(), which
 * hands the event back through manager_event_done(); observers hear
 * starting() once per job before its first spawn, then started() or
 * exec_failed() and finished() for each program; m->jobs->conc.asleep is the
 * number of running jobs flagged asleep (only on_look() sets the flag, a new
 * program and the job's end clear it); a program's output pipe goes back to
 * the idle ones (job-output.c) only when the program left nothing behind in
 * its process group and nothing unread in the pipe.  A job waiting before
 * its first program, for udevd (udev_waiting) or for the end of its
 * physical device's probe (probe_waiting, counted in
 * m->jobs->n_probe_waiting; looked at again at each dispatch), is flagged
 * asleep and has no process; its programs get the PHYSDEVDRIVER the model
 * says when they start (manager_physdev_driver()).  A job whose program
 * could not be started for want of resources (spawn_waiting, counted in
 * m->jobs->n_spawn_waiting) keeps its event and its slot, has no process,
 * and is tried again by the one retry timer, armed at the earliest
 * retry_at; a stop drops it as it drops the jobs that wait for udevd.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "shared/log.h"
#include "shared/macro.h"
#include "loop/job-spawner.h"
#include "loop/job.h"
#include "loop/manager-internal.h"
#include "loop/udev-wait.h"
#include "loop/kmod-load.h"
#include "loop/manager-observe.h"
#include "pipeline/spawner.h"
#include "pipeline/usb-dispatch.h"
#include "shared/trust.h"
#include "uevent/uevent.h"

/* ---- jobs ---------------------------------------------------------------- */

static int job_start_next(struct job *j);
static void job_set_asleep(struct job *j, bool asleep);

/* What observers see of @j's current run. */
static struct manager_agent job_agent(const struct job *j)
{
        return (struct manager_agent){
                .ev = j->ev,
                .program = j->program,
                .pid = j->pid,
                .started = j->started,
                .timed_out = j->term_sent,
        };
}

static struct job *job_free(struct job *j)
{
        if (!j)
                return NULL;
        list_unlink(&j->link);
        if (j->probe_waiting)
                j->m->jobs->n_probe_waiting--;
        if (j->spawn_waiting)
                j->m->jobs->n_spawn_waiting--;
        if (j->udev_waiting)
                udev_wait_abandon(j->m, j->ev);
        kmod_load_abandon(j);
        /* A child source that owns its process kills and reaps it if still running. */
        sd_event_source_disable_unref(j->child);
        job_output_put(j, false);
        sd_event_source_disable_unref(j->timer);
        for (size_t i = 0; i < j->n_scripts; i++)
                free(j->scripts[i]);
        free(j->scripts);
        free(j->agent);
        job_usb_free(j);
        assert(j->m->jobs->bytes >= sizeof(*j));
        j->m->jobs->bytes -= sizeof(*j);
        free(j);
        return NULL;
}

static void jobs_measure(struct manager *m);

/* The event's job is over: give the event back to the scheduler, free it, run more. */
static void job_finish(struct job *j)
{
        struct manager *m = j->m;
        struct uevent *ev = j->ev;
        struct log_fields f;

        if (j->failed)
                m->stats.failed++;
        m->stats.finished++;
        jobs_measure(m);
        if (j->n_scripts > 0 || m->cfg.hotplug_d) {
                uevent_log_fields(ev, &f);
                f.duration_usec = (int64_t)(now_usec(CLOCK_MONOTONIC) - j->job_started);
                log_internal(LOG_DEBUG, 0, &f, "%zu hotplug.d program(s) done", j->n_scripts);
        }
        ev->owner_data = NULL;
        job_set_asleep(j, false);
        job_output_put(j, true); /* still held only if the last program failed to exec: nothing wrote */
        job_free(j);
        manager_event_done(m, ev);
}

/*
 * Start @j's next program, or the one whose spawn is retried, marked as the
 * first was (its event passed manager_start_begin() at dispatch, so it is
 * not one to set aside); finish @j if none starts.
 */
static void job_go_on(struct job *j)
{
        struct manager *m = j->m;
        _unused_ uint32_t aside;
        int r;

        aside = manager_start_begin(m, j->ev);
        assert(aside == 0);
        r = job_start_next(j);
        manager_start_end(m);
        if (r <= 0)
                job_finish(j);
}

/* The scheduler runs at most the controller's limit at once. */
static void jobs_apply_limit(struct manager *m)
{
        scheduler_set_mode(m->scheduler, m->cfg.ordering, m->jobs->conc.limit);
}

/* Count @j as asleep or not (the controller's count is the jobs flagged so). */
static void job_set_asleep(struct job *j, bool asleep)
{
        struct manager *m = j->m;
        struct concurrency *c = &m->jobs->conc;

        if (j->asleep == asleep)
                return;
        j->asleep = asleep;
        if (concurrency_set_asleep(c, asleep ? c->asleep + 1 : c->asleep - 1))
                jobs_apply_limit(m);
}

/* CPU time the daemon and its reaped children (the agents) used so far, in ns. */
static uint64_t jobs_cpu_ns(void)
{
        static const int who[] = { RUSAGE_SELF, RUSAGE_CHILDREN };
        uint64_t ns = 0;

        for (size_t i = 0; i < ELEMENTSOF(who); i++) {
                struct rusage ru;

                if (getrusage(who[i], &ru) < 0)
                        continue; /* cannot fail with these arguments */
                ns += ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000u +
                      ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000u;
        }
        return ns;
}

/*
 * An event finished: the controller's windows of completions and CPU time
 * (pipeline/concurrency.h), while events wait; the queue ran empty: none.
 * The CPU times are read only when a window ends (every 16 events or so).
 */
static void jobs_measure(struct manager *m)
{
        struct concurrency *c = &m->jobs->conc;
        unsigned awake = c->awake;
        usec_t now;
        bool changed;

        if (c->phase == CONCURRENCY_FIXED || !c->learn || m->cfg.ordering == ORDERING_STRICT)
                return;
        if (manager_queued(m) == 0) {
                if (concurrency_idle(c))
                        jobs_apply_limit(m);
                return;
        }
        now = now_usec(CLOCK_MONOTONIC);
        if (!concurrency_window_due(c, now, m->stats.finished))
                return;
        changed = concurrency_window(c, now, m->stats.finished, jobs_cpu_ns());
        if (c->awake != awake)
                log_debug("concurrency: %u awake agent(s) at once, was %u: the last window finished %" PRIu64
                          " events in %" PRIu64 " ms, %" PRIu64 " per CPU-second", c->awake, awake,
                          c->last.finished, c->last.usec / USEC_PER_MSEC,
                          concurrency_per_cpu_second(&c->last));
        if (changed)
                jobs_apply_limit(m);
}

/*
 * Read /proc/@pid/@name (a short file) into @buf, NUL-terminated.  @pid is
 * our child, not reaped yet, so the number names it.  Return: 0, or a
 * negative errno.
 */
static int agent_proc_read(pid_t pid, const char *name, char *buf, size_t size)
{
        _cleanup_close_ int fd = -EBADF;
        char path[64];
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        if (n <= 0)
                return n < 0 ? -errno : -ENODATA;
        buf[n] = 0;
        return 0;
}

/*
 * Does @pid sleep now (its state in /proc/PID/stat: S, D, T or t, not R)?
 * Return: 1 yes, 0 no, or a negative errno.
 */
static int agent_sleeping(pid_t pid)
{
        char buf[512];
        const char *paren;
        int r;

        r = agent_proc_read(pid, "stat", buf, sizeof(buf));
        if (r < 0)
                return r;
        /* "PID (COMM) STATE ...": COMM may hold anything, ')' included. */
        paren = strrchr(buf, ')');
        if (!paren || paren[1] != ' ')
                return -EBADMSG;
        return strchr("SDTt", paren[2]) != NULL && paren[2] != 0;
}

/*
 * The CPU time @pid used plus the time it waited for a CPU, in ns: the first
 * two fields of /proc/PID/schedstat.  Return: 0, or a negative errno (the
 * file is absent without CONFIG_SCHED_INFO).
 */
static int agent_busy_ns(pid_t pid, uint64_t *ret)
{
        char buf[128];
        unsigned long long run, wait;
        int r;

        r = agent_proc_read(pid, "schedstat", buf, sizeof(buf));
        if (r < 0)
                return r;
        if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
                return -EBADMSG;
        *ret = run + wait;
        return 0;
}

/* Events wait for a slot: look at the running agents now and then (on_look()). */
static void jobs_watch(struct manager *m);

/* Events wait for a slot: one awake agent more if none finished for long (concurrency_stalled()). */
static void jobs_stall_check(struct manager *m, usec_t now)
{
        struct concurrency *c = &m->jobs->conc;
        unsigned awake = c->awake;

        if (m->cfg.ordering == ORDERING_STRICT)
                return;
        if (concurrency_stalled(c, now, m->stats.finished))
                jobs_apply_limit(m);
        if (c->awake != awake)
                log_debug("concurrency: %u awake agent(s) at once, was %u: no event finished for %u ms while "
                          "others waited for a slot", c->awake, awake,
                          (unsigned)(CONCURRENCY_STALL_USEC / USEC_PER_MSEC));
}

/*
 * Is @j a program to look at: running, and not exited?  One that exited and
 * is not reaped yet would pass for asleep (its time stopped).
 */
static bool job_lookable(const struct job *j)
{
        return j->pid > 0 && j->child && sd_event_source_get_pending(j->child) <= 0;
}

/* Does @j's program sleep (since its last look)?  Flag it so. */
static void job_look(struct job *j, usec_t now)
{
        uint64_t busy = 0;

        /* On a CPU or in a run queue now: awake.  Its schedstat cannot
         * say so yet: the kernel adds a task's wait for a CPU when it
         * gets one, and its run time at a tick or a switch, so an
         * agent that waits for a CPU on a busy machine would pass
         * for asleep (a coldplug of no-op agents raised and lowered
         * the limit 138 times, bench/RESULTS.md). */
        if (agent_sleeping(j->pid) <= 0 || agent_busy_ns(j->pid, &busy) < 0) {
                /* Or cannot tell: it counts as awake.  Its last look's
                 * figures stay: the next window starts there. */
                job_set_asleep(j, false);
                return;
        }
        job_set_asleep(j, concurrency_agent_asleep(j->looked_busy, busy, j->looked, now));
        j->looked_busy = busy;
        j->looked = now;
}

/*
 * Which running agents sleep: each one asleep lets one more start
 * (pipeline/concurrency.h).  Only the programs whose look is due (or due
 * within the timer's accuracy, so that looks close together are one
 * wake-up) are looked at (HP_CONCURRENCY_LOOK_FIRST_USEC).
 */
static int on_look(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        struct job *j;

        list_for_each(j, &m->jobs->running, link) {
                if (!job_lookable(j) || j->look_at > now + HP_CONCURRENCY_LOOK_USEC / 4)
                        continue;
                job_look(j, now);
                j->look_every = j->asleep ? HP_CONCURRENCY_LOOK_USEC :
                                MIN(2 * j->look_every, (usec_t)HP_CONCURRENCY_LOOK_MAX_USEC);
                j->look_at = now + j->look_every;
        }
        jobs_stall_check(m, now);
        manager_dispatch(m); /* watches again if events still wait */
        return 0;
}

/*
 * When the next look is due: the earliest of the running programs', or,
 * with none to look at, HP_CONCURRENCY_LOOK_USEC from now (the stall rule
 * is checked at each look).  A look every HP_CONCURRENCY_LOOK_USEC at every
 * running agent, whatever its age and whatever the last look found, was a
 * wake-up and one or two /proc reads per event where agents live about as
 * long: with one awake agent at once and the other devices' events waiting
 * for its slot, devpath ordering spent 1.55x the daemon CPU per event of
 * strict ordering (bench/burst.sh, three devices, a quiet 2-CPU machine).
 */
static usec_t jobs_next_look(struct manager *m)
{
        usec_t next = UINT64_MAX;
        struct job *j;

        list_for_each(j, &m->jobs->running, link)
                if (job_lookable(j))
                        next = MIN(next, j->look_at);
        return next != UINT64_MAX ? next : now_usec(CLOCK_MONOTONIC) + HP_CONCURRENCY_LOOK_USEC;
}

static void jobs_watch(struct manager *m)
{
        const struct concurrency *c = &m->jobs->conc;
        int r;

        if (c->phase == CONCURRENCY_FIXED || m->cfg.ordering == ORDERING_STRICT || c->limit >= c->max ||
            m->stopping || m->jobs->paused || !scheduler_slot_wanted(m->scheduler)) {
                /* Nothing to look for: no wake-up for it. */
                if (m->jobs->look)
                        (void)sd_event_source_set_enabled(m->jobs->look, SD_EVENT_OFF);
                return;
        }
        if (!m->jobs->look) {
                r = sd_event_add_time(m->event, &m->jobs->look, CLOCK_MONOTONIC, jobs_next_look(m),
                                      HP_CONCURRENCY_LOOK_USEC / 4, on_look, m);
                if (r < 0)
                        log_debug_errno(r, "concurrency: no timer to look at the agents");
                else
                        /* After the exits seen in the same wake-up: an agent that
                         * exited and is not reaped yet looks asleep (its time
                         * stands still), and a look before its reaping raised
                         * the limit for nothing (a coldplug of no-op agents:
                         * 138 raises and as many lowerings, bench/RESULTS.md). */
                        (void)sd_event_source_set_priority(m->jobs->look, SD_EVENT_PRIORITY_IDLE);
                return;
        }
        /* Moved, armed or not: the program it was armed for may have ended. */
        (void)sd_event_source_set_time(m->jobs->look, jobs_next_look(m));
        (void)sd_event_source_set_enabled(m->jobs->look, SD_EVENT_ONESHOT);
}

void manager_event_done(struct manager *m, struct uevent *ev)
{
        scheduler_done(m->scheduler, ev);
        observe_done(m, ev);
        free(ev);
        manager_queue_refill(m);
        manager_input_maybe_resume(m);
        manager_dispatch(m);
}

/*
 * @ev (consumed) killed @tries instances as they started it (the poison
 * guard, manager_start_begin()): done without a run, loudly (logged,
 * counted, announced set_aside() and done()), as the intake sets a
 * datagram aside.
 */
static void start_set_aside(struct manager *m, struct uevent *ev, uint32_t tries)
{
        struct log_fields f;

        m->stats.set_aside++;
        uevent_log_fields(ev, &f);
        log_internal(LOG_ERR, 0, &f, "set aside, not run: %" PRIu32 " instance(s) of hotplugd died starting its "
                                    "agent; the events after it run", tries);
        observe_set_aside(m, ev, tries);
        manager_event_done(m, ev);
}

static void status_string(const siginfo_t *si, bool timed_out, char *buf, size_t size)
{
        if (si->si_code == CLD_EXITED)
                snprintf(buf, size, "exit %d%s", si->si_status, timed_out ? " after timeout" : "");
        else
                snprintf(buf, size, "signal %d (%s)%s", si->si_status, strsignal(si->si_status),
                         timed_out ? ", timeout" : "");
}

/*
 * The pidfd is readable: the program ended.  Reap it (one waitid(), the
 * only one), then log and report how it ended and start the next program.
 */
static int on_job_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct job *j = userdata;
        struct manager *m = j->m;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        struct manager_agent agent;
        struct log_fields f;
        char status[96];
        siginfo_t si = { .si_pid = 0 };
        bool ok, more;

        if (waitid(P_PID, (id_t)j->pid, &si, WEXITED | WNOHANG) < 0) {
                /* Not ours to wait for any more (reaped elsewhere): say so, and end the run. */
                job_log_fields(j, &f);
                log_internal(LOG_ERR, negative_errno(), &f, "cannot wait for %s; taken as killed", j->program);
                si = (siginfo_t){ .si_code = CLD_KILLED };
                si.si_pid = j->pid;
                si.si_status = SIGKILL;
        } else if (si.si_pid == 0)
                return 0; /* not over yet */
        /* Reaped: nothing left for the destroy callback (which would run
         * after this callback, when @j may be gone). */
        (void)sd_event_source_set_destroy_callback(s, NULL);
        ok = si.si_code == CLD_EXITED && si.si_status == 0;

        /* Whatever is already in the pipe belongs to this run (up to the
         * bound); do not wait for EOF, a background grandchild may hold the
         * pipe open forever.  The pipe serves the next run only if it is
         * empty and nothing is left in the program's process group. */
        more = job_read_output(j, true);
        if (j->term_sent)
                /* Timed out: leave nothing of its process group behind. */
                (void)kill(-j->pid, SIGKILL);
        job_output_put(j, !more && !j->term_sent && kill(-j->pid, 0) < 0 && errno == ESRCH);
        j->timer = sd_event_source_disable_unref(j->timer);
        j->child = sd_event_source_disable_unref(j->child);

        status_string(&si, j->term_sent, status, sizeof(status));
        agent = job_agent(j);
        observe_finished(m, &agent, &si, status);
        job_log_fields(j, &f);
        f.agent_status = status;
        f.duration_usec = (int64_t)(now - j->started);
        /* A run that went well is a debug line: at the default level the log
         * (and the journal, under systemd) gets a line per event only when
         * something needs a look, as udevd's does; one line per event cost
         * about 15% of the daemon's CPU per event (bench/RESULTS.md). */
        log_internal(ok ? LOG_DEBUG : LOG_WARNING, 0, &f, "%s %s finished", j->program, j->ev->name);
        if (!ok)
                j->failed = true;

        job_go_on(j); /* the next hotplug.d program */
        return 0;
}

static int on_job_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct job *j = userdata;
        struct manager *m = j->m;
        struct log_fields f;

        job_log_fields(j, &f);
        if (!j->term_sent) {
                j->term_sent = true;
                m->stats.timeouts++;
                log_internal(LOG_WARNING, 0, &f, "%s timed out after %" PRIu64 "s, sending SIGTERM to its process group",
                             j->program, m->cfg.timeout_usec / USEC_PER_SEC);
                (void)kill(-j->pid, SIGTERM);
                (void)sd_event_source_set_time(s, usec + m->cfg.kill_grace_usec);
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        if (!j->kill_sent) {
                j->kill_sent = true;
                log_internal(LOG_WARNING, 0, &f, "%s still running, sending SIGKILL", j->program);
                (void)kill(-j->pid, SIGKILL);
        }
        return 0;
}

static void log_exec_failure(struct job *j, int r)
{
        struct manager *m = j->m;
        struct log_fields f;

        job_log_fields(j, &f);
        f.agent_status = "exec failed";
        if ((r == -ENOENT || r == -EACCES || r == -ENOEXEC) && !m->cfg.hotplug_d) {
                /* The same missing agent would be reported for every event: say it once. */
                if (!m->jobs->agent_missing_reported)
                        log_internal(LOG_ERR, r, &f,
                                     "cannot execute agent %s; events are dropped until it exists "
                                     "(reported once)", j->program);
                else
                        log_internal(LOG_DEBUG, r, &f, "cannot execute agent %s", j->program);
                m->jobs->agent_missing_reported = true;
                return;
        }
        log_internal(LOG_ERR, r, &f, "cannot execute %s", j->program);
}

/*
 * The single agent runs as the daemon: its path as given passes the trust
 * rule (shared/trust.h) before it is executed.  Once it passed, nobody but
 * root can change what the path names, so the check is not repeated per
 * event (it costs 20-40 us, a fifth of an event's CPU): it is made again
 * after a reload and after an exec that found no file.  One that did not
 * pass (missing at start, or refused) is checked before every spawn, and
 * every error of the check refuses: another user creating a missing agent
 * in a directory they can write never gets it run.  A refusal is logged
 * once until the agent passes again.  Return: 0, or negative errno
 * (logged).
 */
static int agent_verify(struct job *j)
{
        struct manager *m = j->m;
        const char *why = NULL;
        struct log_fields f;
        struct stat st;
        int r;

        if (m->jobs->agent_trusted)
                return 0;
        r = trust_check_path(j->program, false, &st, &why);
        if (r == 0) {
                m->jobs->agent_trusted = true;
                m->jobs->agent_refusal_reported = false;
                return 0;
        }
        if (r == -ENOENT) {
                log_exec_failure(j, r); /* as for an exec that found none: once */
                return r;
        }
        if (spawn_error_resources(r))
                return r; /* no descriptor or memory to check it with: tried again (job_spawn_later()) */
        job_log_fields(j, &f);
        f.agent_status = "exec failed";
        if (m->jobs->agent_refusal_reported)
                log_internal(LOG_DEBUG, r, &f, "agent %s refused", j->program);
        else if (why)
                log_internal(LOG_ERR, 0, &f, "agent %s: %s (mode %04o, uid %u); refusing to run it, events are "
                             "dropped until it passes (reported once)", j->program, why,
                             (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
        else
                log_internal(LOG_ERR, r, &f, "agent %s cannot be checked; refusing to run it, events are "
                             "dropped until it passes (reported once)", j->program);
        m->jobs->agent_refusal_reported = true;
        return r;
}

/*
 * The child source goes before the program was reaped (the job is freed:
 * the daemon stops): kill and reap it.  Not reaped, its PID is still its own.
 */
static void job_child_destroy(void *userdata)
{
        struct job *j = userdata;

        (void)kill(j->pid, SIGKILL);
        (void)waitpid(j->pid, NULL, 0);
}

/*
 * Supervise the program just spawned (@sr, its pidfd consumed; its output
 * pipe is j->out's): its exit and its timeout.  The pidfd is watched as a plain io
 * source and reaped with one waitid() in on_job_exit(): sd-event's child
 * source reads /proc/self/fdinfo for the PID of a pidfd it is given (or
 * opens a pidfd of its own), and peeks with WNOWAIT before it reaps.
 * Return: 0, or negative errno (logged) when it cannot be watched: then it
 * is killed and reaped.
 */
static int job_watch(struct job *j, const struct spawn_result *sr)
{
        struct manager *m = j->m;
        int r;

        r = sd_event_add_io(m->event, &j->child, sr->pidfd, EPOLLIN, on_job_exit, j);
        if (r < 0) {
                /* Cannot watch it: do not leave it running unsupervised. */
                (void)kill(-sr->pid, SIGKILL);
                (void)waitpid(sr->pid, NULL, 0);
                safe_close(sr->pidfd);
                job_output_put(j, false);
                return log_error_errno(r, "SEQNUM=%" PRIu64 ": cannot watch agent", j->ev->seqnum);
        }
        (void)sd_event_source_set_io_fd_own(j->child, true);
        (void)sd_event_source_set_destroy_callback(j->child, job_child_destroy);

        /* Second-granular timeouts: a coarse accuracy lets sd-event coalesce
         * wake-ups instead of re-arming its timerfd for every agent. */
        r = sd_event_add_time_relative(m->event, &j->timer, CLOCK_MONOTONIC, m->cfg.timeout_usec,
                                       USEC_PER_SEC / 2, on_job_timeout, j);
        if (r < 0)
                log_warning_errno(r, "SEQNUM=%" PRIu64 ": no timeout for agent", j->ev->seqnum);
        return 0;
}

/* @m's retry timer at the earliest retry of the jobs waiting for one, or off if none waits. */
static void jobs_spawn_retry_arm(struct manager *m)
{
        usec_t next = UINT64_MAX;
        struct job *j;

        list_for_each(j, &m->jobs->running, link)
                if (j->spawn_waiting && j->retry_at < next)
                        next = j->retry_at;
        if (next == UINT64_MAX) {
                (void)sd_event_source_set_enabled(m->jobs->spawn_retry, SD_EVENT_OFF);
                return;
        }
        (void)sd_event_source_set_time(m->jobs->spawn_retry, next);
        (void)sd_event_source_set_enabled(m->jobs->spawn_retry, SD_EVENT_ONESHOT);
}

/* A job whose retry is due, or NULL. */
static struct job *jobs_retry_due(struct manager *m, usec_t now)
{
        struct job *j;

        list_for_each(j, &m->jobs->running, link)
                if (j->spawn_waiting && j->retry_at <= now)
                        return j;
        return NULL;
}

/*
 * Retries are due: try each due job's program again, as on_job_exit()
 * starts the next one.  A job is looked for again from the list's head
 * after each: starting or finishing one may start, finish and free others
 * (the dispatch after a job's end).  Each one tried either runs now or
 * waits again, later than @now.
 */
static int on_spawn_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;
        usec_t now = now_usec(CLOCK_MONOTONIC);
        struct job *j;

        while ((j = jobs_retry_due(m, now)))
                job_go_on(j);
        jobs_spawn_retry_arm(m);
        return 0;
}

/*
 * @j's program could not be started for want of resources (@error, one of
 * spawn_error_resources()): not its failure.  It is tried again after a
 * wait (HP_SPAWN_RETRY_MIN_USEC, doubling up to HP_SPAWN_RETRY_MAX_USEC);
 * the job keeps its event's place meanwhile (the scheduler counts it
 * running, so its device's later events wait behind it).  The first such
 * failure of an episode is a warning; the episode ends at a spawn that
 * succeeds once no job waits any more (spawn_episode_end()).  @step: the
 * usb step @j's program is, or NULL.  Return: 0, or -ENOTSUP without the
 * retry timer (then it is the program's failure after all).
 */
static int job_spawn_later(struct job *j, const struct usb_step *step, int error)
{
        struct manager *m = j->m;
        struct log_fields f;

        if (!m->jobs->spawn_retry)
                return -ENOTSUP; /* no timer made at the start */
        j->retry_delay = j->retry_delay == 0 ? HP_SPAWN_RETRY_MIN_USEC :
                         MIN(2 * j->retry_delay, (usec_t)HP_SPAWN_RETRY_MAX_USEC);
        j->retry_at = now_usec(CLOCK_MONOTONIC) + j->retry_delay;
        job_log_fields(j, &f);
        j->spawn_waiting = true;
        j->retry_step = step;
        m->jobs->n_spawn_waiting++;
        m->stats.spawn_retries++;
        m->jobs->spawn_episode_retries++;
        jobs_spawn_retry_arm(m);
        if (!m->jobs->spawn_starved) {
                m->jobs->spawn_starved = true;
                log_internal(LOG_WARNING, 0, &f, "cannot start a process for %s (%s): the event waits and is "
                             "tried again, after %u ms and up to every %u ms, until one can be started; events "
                             "are not dropped (reported once until processes start again)", j->program,
                             strerror(-error), HP_SPAWN_RETRY_MIN_USEC / 1000, HP_SPAWN_RETRY_MAX_USEC / 1000);
        } else
                log_internal(LOG_DEBUG, error, &f, "cannot start %s; tried again in %" PRIu64 " ms", j->program,
                             j->retry_delay / USEC_PER_MSEC);
        return 0;
}

/* Processes start again and no job waits to retry: the episode job_spawn_later() warned of is over. */
static void spawn_episode_end(struct manager *m)
{
        log_notice("processes can be started again: %" PRIu64 " spawn(s) failed for want of resources and "
                   "were tried again, no event was dropped", m->jobs->spawn_episode_retries);
        m->jobs->spawn_starved = false;
        m->jobs->spawn_episode_retries = 0;
}

/* Start the next program of @j.  Return: 1 started, 0 nothing left, negative on failure (logged). */
static int job_start_next(struct job *j)
{
        struct manager *m = j->m;
        struct manager_agent agent;
        struct spawn_env env;
        struct spawn_result sr;
        int r, refused; /* agent_verify()'s refusal, which it logged */

        for (;;) {
                const struct usb_step *step = NULL;
                const char *argv[6];

                if (j->spawn_waiting) {
                        /* The program whose spawn found no resources, again (job_spawn_later()). */
                        j->spawn_waiting = false;
                        m->jobs->n_spawn_waiting--;
                        step = j->retry_step;
                } else if (m->cfg.hotplug_d && j->next_script < j->n_scripts) {
                        j->program = j->scripts[j->next_script++];
                } else if (m->cfg.hotplug_d || j->next_script > 0) {
                        /* After the agent or the hotplug.d programs: the usb dispatch's steps. */
                        step = job_usb_next(j);
                        if (!step)
                                return 0;
                        j->program = step->path;
                } else {
                        j->next_script = 1;
                        /* Our own copy: a reload frees the configured path while the agent runs. */
                        j->agent = strdup(m->cfg.agent);
                        if (!j->agent) {
                                j->failed = true;
                                log_error("SEQNUM=%" PRIu64 ": out of memory, agent not run", j->ev->seqnum);
                                return -ENOMEM;
                        }
                        j->program = j->agent;
                }

                /* Before the spawn: a crash right after it must count as a re-run. */
                if (!j->starting_sent) {
                        observe_starting(m, j->ev);
                        j->starting_sent = true;
                }
                spawn_env_build(j->ev, &env);
                if (j->physdev_set)
                        spawn_env_set(&env, j->physdev);
                if (step)
                        job_usb_env(j, step, &env);
                r = refused = m->cfg.hotplug_d || step ? 0 : agent_verify(j);
                if (r >= 0 && !j->out)
                        r = job_output_get(j);
                /* Stamped before the spawn: the program cannot have started yet, so a
                 * run's time is never shorter than the program's own (a busy machine
                 * can hold us between the spawn and a later stamp for milliseconds). */
                j->started = now_usec(CLOCK_MONOTONIC);
                if (r >= 0 && step)
                        r = spawn_argv_to(usb_step_argv(step, argv), &env, j->out->wfd, &sr);
                else if (r >= 0)
                        r = spawn_agent_to(j->program, j->ev->name, &env, j->out->wfd, &sr);
                if (r < 0 && spawn_error_resources(r) && job_spawn_later(j, step, r) == 0)
                        return 1; /* not the program's failure: it waits and is tried again */
                if (r < 0) {
                        j->failed = true;
                        if (r == -ENOENT && !m->cfg.hotplug_d && !step)
                                m->jobs->agent_trusted = false; /* gone: check what comes in its place */
                        if (refused == 0)
                                log_exec_failure(j, r);
                        agent = job_agent(j);
                        agent.pid = 0;
                        observe_exec_failed(m, &agent, r);
                        continue; /* the next hotplug.d file, or done */
                }
                if (!m->cfg.hotplug_d && !step && m->jobs->agent_missing_reported) {
                        log_notice("agent %s can be executed again", j->program);
                        m->jobs->agent_missing_reported = false;
                }
                if (m->jobs->spawn_starved && m->jobs->n_spawn_waiting == 0)
                        spawn_episode_end(m);
                m->stats.started++;
                j->retry_delay = 0;
                j->pid = sr.pid;
                j->looked = j->started;
                j->looked_busy = 0;
                j->look_at = j->started + HP_CONCURRENCY_LOOK_FIRST_USEC;
                j->look_every = HP_CONCURRENCY_LOOK_FIRST_USEC;
                job_set_asleep(j, false); /* a new program: awake until a look says otherwise */
                j->term_sent = j->kill_sent = false;
                j->line_len = 0;
                j->out_window = j->started;
                j->out_lines = 0;
                j->out_suppressed = 0;
                agent = job_agent(j);
                agent.env = &env;
                observe_started(m, &agent);
                if (job_watch(j, &sr) < 0) {
                        j->failed = true;
                        continue;
                }
                return 1;
        }
}

/* @j's programs: list them and start the first (or finish at once). */
static void job_run_programs(struct job *j)
{
        struct manager *m = j->m;
        struct uevent *ev = j->ev;
        int r;

        j->physdev_set = manager_physdev_driver(m, ev, j->physdev, sizeof(j->physdev));
        job_usb_plan(j);
        if (m->cfg.hotplug_d) {
                r = hotplug_d_list(m->cfg.hotplug_d, ev->name, &j->scripts, &j->n_scripts);
                if (r < 0) {
                        struct log_fields f;
                        uevent_log_fields(ev, &f);
                        log_internal(LOG_ERR, r, &f, "cannot list %s for %s", m->cfg.hotplug_d, ev->name);
                        j->failed = true;
                }
        }
        if (job_start_next(j) <= 0)
                job_finish(j);
}

/* @j's wait for udevd's broadcast of its event (after-udev), or its programs now. */
static void job_after_modules(struct job *j)
{
        if (udev_wait_begin(j->m, j->ev, j) > 0) {
                /* Held for udevd: it takes a place among max-children, not a CPU's slot. */
                j->udev_waiting = true;
                job_set_asleep(j, true);
                return;
        }
        job_run_programs(j);
}

/* @j's wait for its modules (load-modules), then for udevd. */
static void job_begin(struct job *j)
{
        if (kmod_load_begin(j->m, j->ev, j) > 0) {
                /* Held for its modules, as for udevd: a place among max-children, not a CPU's slot. */
                job_set_asleep(j, true);
                return;
        }
        job_after_modules(j);
}

/*
 * @j, which waited, goes on with @go outside a start of the dispatch: the
 * poison guard marks this start too, and sets aside an event that killed
 * instances here.
 */
static void job_resume(struct job *j, void (*go)(struct job *j))
{
        struct manager *m = j->m;
        struct uevent *ev = j->ev;
        uint32_t aside = manager_start_begin(m, ev);

        if (aside) {
                ev->owner_data = NULL;
                job_free(j);
                start_set_aside(m, ev, aside);
        } else
                go(j);
        manager_start_end(m);
}

static void jobs_probe_watch(struct manager *m);

/* Jobs wait for a probe's end: read the source (which reports a drain, then dispatches and releases them). */
static int on_probe_look(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct manager *m = userdata;

        if (m->jobs->n_probe_waiting == 0 || m->stopping)
                return 0;
        (void)manager_drain_input(m);
        if (m->jobs->n_probe_waiting > 0)
                jobs_probe_watch(m);
        return 0;
}

static void jobs_probe_watch(struct manager *m)
{
        int r;

        if (!m->jobs->probe_look) {
                r = sd_event_add_time_relative(m->event, &m->jobs->probe_look, CLOCK_MONOTONIC,
                                               HP_PROBE_LOOK_USEC, USEC_PER_MSEC, on_probe_look, m);
                if (r < 0)
                        log_debug_errno(r, "no timer to look at the input for waiting jobs");
                return;
        }
        if (sd_event_source_get_enabled(m->jobs->probe_look, NULL) > 0)
                return; /* armed */
        (void)sd_event_source_set_time_relative(m->jobs->probe_look, HP_PROBE_LOOK_USEC);
        (void)sd_event_source_set_enabled(m->jobs->probe_look, SD_EVENT_ONESHOT);
}

/* The real spawner's start(): a job that runs the agent or the hotplug.d programs for @ev. */
static void job_start(void *data, struct uevent *ev)
{
        struct manager *m = data;
        struct job *j;

        j = calloc(1, sizeof(*j));
        if (!j) {
                log_error("SEQNUM=%" PRIu64 ": out of memory, event not run", ev->seqnum);
                m->stats.aborted++;
                manager_event_done(m, ev);
                return;
        }
        j->m = m;
        j->ev = ev;
        m->jobs->bytes += sizeof(*j);
        list_add_head(&m->jobs->running, &j->link);
        j->job_started = now_usec(CLOCK_MONOTONIC);
        ev->owner_data = j;
        if (manager_probe_hold(m, ev)) {
                struct log_fields f;

                /* Held for its physical device's bind, as a wait for udevd is: asleep. */
                uevent_log_fields(ev, &f);
                log_internal(LOG_DEBUG, 0, &f, "waits for the end of its physical device's probe");
                j->probe_waiting = true;
                m->jobs->n_probe_waiting++;
                job_set_asleep(j, true);
                jobs_probe_watch(m);
                return;
        }
        job_begin(j);
}

/*
 * Jobs waiting for a probe's end (manager_probe_hold()) whose wait is over
 * begin, inside manager_dispatch() (no nesting), each start marked by the
 * poison guard as job_udev_go() marks its own.
 */
static void jobs_probe_release(struct manager *m)
{
        struct job *j, *next;

        list_for_each_safe(j, next, &m->jobs->running, link) {
                if (!j->probe_waiting || manager_probe_hold(m, j->ev))
                        continue;
                j->probe_waiting = false;
                m->jobs->n_probe_waiting--;
                job_set_asleep(j, false);
                job_resume(j, job_begin);
                if (m->jobs->n_probe_waiting == 0)
                        break;
        }
}

void job_udev_go(struct job *j, bool timed_out, usec_t waited)
{
        struct manager *m = j->m;
        struct uevent *ev = j->ev;

        j->udev_waiting = false;
        job_set_asleep(j, false);
        observe_udev_waited(m, ev, waited, timed_out);
        job_resume(j, job_run_programs);
}

void job_kmod_go(struct job *j, bool timed_out)
{
        (void)timed_out;
        job_set_asleep(j, false);
        job_resume(j, job_after_modules);
}

size_t manager_jobs_drop_waiting(struct manager *m)
{
        struct job *j, *next;
        size_t n = 0;

        list_for_each_safe(j, next, &m->jobs->running, link) {
                struct uevent *ev = j->ev;

                if (!j->udev_waiting && !j->probe_waiting && !j->spawn_waiting && !list_linked(&j->kmod_link))
                        continue;
                job_free(j);
                scheduler_done(m->scheduler, ev);
                free(ev);
                n++;
        }
        return n;
}

/*
 * Start every event the scheduler lets run now (not while stopping or paused).
 * A job can complete inside the spawner's start() (dry run, failed spawn, no memory),
 * and completing calls back here: that nested call returns at once and this
 * loop picks up what the completion released, so the stack does not grow per
 * event however deep the queue.
 */
void manager_dispatch(struct manager *m)
{
        struct uevent *ev;

        if (m->jobs->dispatching)
                return;
        m->jobs->dispatching = true;
        if (m->jobs->n_probe_waiting > 0 && !m->stopping && !m->jobs->paused)
                jobs_probe_release(m);
        while (!m->stopping && !m->jobs->paused && (ev = scheduler_next(m->scheduler))) {
                uint32_t aside = manager_start_begin(m, ev);

                if (aside) {
                        start_set_aside(m, ev, aside);
                        continue;
                }
                if (observe_wants_waiting(m) || m->cfg.dry_run || log_get_max_level() >= LOG_DEBUG) {
                        struct scheduler_wait w;

                        scheduler_waited(m->scheduler, ev, &w);
                        observe_waited(m, ev, &w);
                }
                m->jobs->spawner->start(m->jobs->spawner_data, ev);
                manager_start_end(m);
        }
        m->jobs->dispatching = false;
        jobs_watch(m);
}

int manager_jobs_init(struct manager *m)
{
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);

        m->jobs = calloc(1, sizeof(*m->jobs));
        if (!m->jobs)
                return -ENOMEM;
        list_init(&m->jobs->running);
        list_init(&m->jobs->idle_outputs);
        /* At most one awake agent more than the CPUs (the CPUs as max-children's
         * default counts them): while one agent exits and its slot's next one
         * is spawned, the spare keeps the freed CPU busy (CPU-bound agents
         * finished 9% sooner than at one per CPU, a no-op coldplug 3%;
         * bench/RESULTS.md); the controller learns how many of them pay for
         * their CPU.  A dry run's jobs run nothing and are never awake: up
         * to max-children, as the agents asleep of the run it may replay,
         * nothing to learn. */
        cpus = cpus > 0 ? cpus + 1 : 2;
        if (m->cfg.dry_run)
                cpus = (long)m->cfg.max_children;
        concurrency_init(&m->jobs->conc, m->cfg.max_children, m->cfg.concurrency, (unsigned)cpus,
                         !m->cfg.dry_run);
        jobs_usb_load(m);
        return 0;
}

void manager_pause(struct manager *m)
{
        if (!m->jobs->paused)
                log_notice("paused: events keep queueing, no agent starts");
        m->jobs->paused = true;
}

void manager_resume(struct manager *m)
{
        if (m->jobs->paused)
                log_notice("resumed with %zu event(s) queued", manager_queued(m));
        m->jobs->paused = false;
        manager_dispatch(m);
}

size_t manager_spawn_waiting(const struct manager *m)
{
        return m->jobs->n_spawn_waiting;
}

const struct concurrency *manager_concurrency(const struct manager *m)
{
        return &m->jobs->conc;
}

bool manager_paused(const struct manager *m)
{
        return m->jobs->paused;
}

size_t manager_jobs_bytes(const struct manager *m)
{
        return m->jobs->bytes;
}

void manager_jobs_reconfigured(struct manager *m)
{
        jobs_usb_load(m);
        m->jobs->agent_missing_reported = false;
        m->jobs->agent_trusted = false;
        m->jobs->agent_refusal_reported = false;
        concurrency_reconfigure(&m->jobs->conc, m->cfg.max_children, m->cfg.concurrency);
        jobs_apply_limit(m);
}

int manager_set_concurrency(struct manager *m, unsigned n, char *err, size_t err_size)
{
        if (n > m->cfg.max_children) {
                snprintf(err, err_size, "concurrency %u is more than max-children (%u)", n, m->cfg.max_children);
                return -EINVAL;
        }
        m->cfg.concurrency = n;
        concurrency_reconfigure(&m->jobs->conc, m->cfg.max_children, m->cfg.concurrency);
        jobs_apply_limit(m);
        manager_dispatch(m);
        return 0;
}

void manager_for_each_agent(struct manager *m, void (*fn)(const struct manager_agent *a, void *arg), void *arg)
{
        struct job *j;

        list_for_each(j, &m->jobs->running, link) {
                if (j->pid <= 0 || !j->child)
                        continue;
                struct manager_agent a = job_agent(j);
                fn(&a, arg);
        }
}

/* Jobs still running at exit: freeing a job's child source kills (SIGKILL) and reaps it. */
static void job_kill_all(void *data)
{
        struct manager *m = data;
        struct job *j;

        while ((j = list_first(&m->jobs->running, struct job, link))) {
                struct uevent *ev = j->ev;

                if (j->pid > 0)
                        (void)kill(-j->pid, SIGKILL);
                job_free(j);
                scheduler_done(m->scheduler, ev);
                free(ev);
        }
}

static const struct job_spawner_ops spawner_real_ops = {
        .start = job_start,
        .kill_all = job_kill_all,
};

int manager_jobs_open(struct manager *m)
{
        int r;

        if (!m->cfg.dry_run) {
                m->jobs->spawner = &spawner_real_ops;
                m->jobs->spawner_data = m;
                r = sd_event_add_time(m->event, &m->jobs->spawn_retry, CLOCK_MONOTONIC, 0, USEC_PER_MSEC,
                                      on_spawn_retry, m);
                if (r < 0)
                        return log_error_errno(r, "cannot make the timer of spawn retries");
                (void)sd_event_source_set_enabled(m->jobs->spawn_retry, SD_EVENT_OFF);
                return 0;
        }
        r = spawner_dry_new(m, &m->jobs->spawner_data);
        if (r < 0)
                return r;
        m->jobs->spawner = &spawner_dry_ops;
        return 0;
}

void manager_jobs_close(struct manager *m)
{
        struct job_output *o;

        if (!m->jobs)
                return;
        m->jobs->look = sd_event_source_disable_unref(m->jobs->look);
        m->jobs->probe_look = sd_event_source_disable_unref(m->jobs->probe_look);
        manager_kill_running(m);
        m->jobs->spawn_retry = sd_event_source_disable_unref(m->jobs->spawn_retry);
        while ((o = list_first(&m->jobs->idle_outputs, struct job_output, link)))
                job_output_free(o);
        assert(m->jobs->bytes == 0); /* every job and pipe counted in was counted out */
        jobs_usb_close(m);
        if (m->jobs->spawner && m->jobs->spawner->free)
                m->jobs->spawner->free(m->jobs->spawner_data);
        m->jobs->spawner = NULL;
        m->jobs->spawner_data = NULL;
}

void manager_jobs_set_dry_duration(struct manager *m, job_dry_duration_fn fn, void *userdata)
{
        if (m->jobs->spawner == &spawner_dry_ops)
                spawner_dry_set_duration(m->jobs->spawner_data, fn, userdata);
}

void manager_kill_running(struct manager *m)
{
        if (m->jobs->spawner)
                m->jobs->spawner->kill_all(m->jobs->spawner_data);
}
