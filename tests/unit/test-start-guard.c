/* SPDX-License-Identifier: MIT */
/*
 * The poison guard at an event's start (observe-handover.c): an event that
 * kills hotplugd while it is started (dispatched, its job set up, its
 * agent's environment built, its agent spawned) is marked in the handover
 * journal before, so that the instance after the HP_INTAKE_TRIES_MAX that
 * died on it sets it aside (announced set_aside() and done(), counted) and
 * runs the events after it, instead of restarting into the same crash
 * forever.
 *
 * Each instance is a child process; they share one journal (a memfd, as
 * the service manager's fd store keeps it, each instance taking over a
 * duplicate).  The crash: a spawner in front of the dry one whose start()
 * kills the process (SIGKILL, so that it cannot pass for a failed check's
 * abort()) on the poison device.  What the instances saw goes into a
 * shared page; the parent checks it.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/options.h"
#include "loop/job-spawner.h"
#include "loop/job.h"
#include "loop/manager-internal.h"
#include "loop/manager.h"
#include "loop/observer.h"
#include "recovery/handover.h"
#include "shared/bounds.h"
#include "shared/log.h"
#include "uevent/uevent.h"
#include "manager-test.h"
#include "test.h"

#define N_EVENTS 6
#define POISON 3
#define POISON_DEVPATH "/devices/virtual/net/hppoison"
#define INSTANCES (HP_INTAKE_TRIES_MAX + 1)

/* What the instances saw, per event (index: SEQNUM - base), in a page the parent shares. */
struct seen {
        uint64_t base; /* the events are base + 1..N_EVENTS */
        unsigned started[N_EVENTS + 1], done[N_EVENTS + 1], set_aside[N_EVENTS + 1];
        uint32_t tries;
        uint64_t stats_set_aside;
        size_t held;
};
static struct seen *seen;

static unsigned idx(const struct uevent *ev)
{
        check(ev->seqnum > seen->base && ev->seqnum - seen->base <= N_EVENTS);
        return (unsigned)(ev->seqnum - seen->base);
}

static const struct job_spawner_ops *dry; /* the spawner the manager chose */

/* The dry spawner's start(), but the poison device kills the process. */
static void poison_start(void *data, struct uevent *ev)
{
        if (strcmp(ev->devpath, POISON_DEVPATH) == 0)
                raise(SIGKILL);
        seen->started[idx(ev)]++;
        dry->start(data, ev);
}

static struct job_spawner_ops poison_ops;

static void on_set_aside(void *userdata, const struct uevent *view, uint32_t tries)
{
        seen->set_aside[idx(view)]++;
        seen->tries = tries;
}

static void on_done(void *userdata, const struct uevent *ev)
{
        seen->done[idx(ev)]++;
}

static const struct manager_observer_ops observer = {
        .set_aside = on_set_aside,
        .done = on_done,
};

static void inject(struct manager *m, unsigned i)
{
        char dg[256];
        const char *dev = i == POISON ? POISON_DEVPATH : "/devices/virtual/net/hpg";
        int n = snprintf(dg, sizeof(dg), "add@%s%cACTION=add%cDEVPATH=%s%cSUBSYSTEM=net%cSEQNUM=%llu", dev, 0, 0,
                         dev, 0, 0, (unsigned long long)(seen->base + i));

        check(n > 0 && (size_t)n < sizeof(dg));
        check_int(manager_inject(m, dg, (size_t)n + 1), 0);
}

/* Instance @nr: take over the journal @fd (consumed) and run; the first one feeds the events. */
static _Noreturn void instance(int fd, unsigned nr)
{
        struct manager_config cfg;
        struct manager *m;

        options_defaults(&cfg);
        cfg.dry_run = true;
        cfg.agent = "/bin/true";
        cfg.control_path = "";
        cfg.max_children = 1;
        m = test_manager_new(&cfg);
        dry = m->jobs->spawner;
        poison_ops = *dry;
        poison_ops.start = poison_start;
        m->jobs->spawner = &poison_ops;
        check_int(manager_add_observer(m, &observer, NULL), 0);
        /* SEQNUMs the kernel already counted: a takeover then continues the ledger (same boot). */
        if (nr == 1 && manager_ledger(m)->baseline > N_EVENTS)
                seen->base = manager_ledger(m)->baseline - N_EVENTS;
        /* A takeover runs what the journal holds at once. */
        check(manager_handover(m, fd) >= 0);
        if (nr == 1) {
                manager_pause(m);
                for (unsigned i = 1; i <= N_EVENTS; i++)
                        inject(m, i);
                manager_resume(m);
        }
        seen->stats_set_aside = manager_stats(m)->set_aside;
        seen->held = manager_held(m);
        manager_free(m);
        exit(0);
}

static void test_start_guard(void)
{
        struct handover *h = NULL, *after = NULL;
        int status;
        pid_t pid;

        seen = mmap(NULL, sizeof(*seen), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        check(seen != MAP_FAILED);
        check_int(handover_new(&h), 0);
        for (unsigned nr = 1; nr <= INSTANCES; nr++) {
                int fd = fcntl(handover_fd(h), F_DUPFD_CLOEXEC, 3);

                check(fd >= 0);
                fflush(NULL);
                pid = fork();
                check(pid >= 0);
                if (pid == 0)
                        instance(fd, nr);
                close(fd);
                check(waitpid(pid, &status, 0) == pid);
                fprintf(stderr, "instance %u: %s %d\n", nr, WIFSIGNALED(status) ? "killed by signal" : "exit",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
                if (nr < INSTANCES) {
                        /* Died starting the poison event, after the events before it ran. */
                        check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
                        check_int(seen->started[POISON - 1], 1);
                        check_int(seen->done[POISON + 1], 0);
                        continue;
                }
                /* The last one set it aside instead and ran the rest. */
                check(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        for (unsigned i = 1; i <= N_EVENTS; i++) {
                check_int(seen->started[i], i == POISON ? 0 : 1);
                check_int(seen->done[i], 1);
                check_int(seen->set_aside[i], i == POISON);
        }
        check_int(seen->tries, HP_INTAKE_TRIES_MAX);
        check_int(seen->stats_set_aside, 1);
        check_int(seen->held, 0);
        /* The journal agrees: the set-aside event is done there too, nothing is held. */
        check_int(handover_adopt(fcntl(handover_fd(h), F_DUPFD_CLOEXEC, 3), &after), 0);
        check_int(handover_restore_pending(after), 0);
        handover_free(after);
        handover_free(h);
        munmap(seen, sizeof(*seen));
}

int main(void)
{
        log_open(LOG_TARGET_STDERR, "test-start-guard");
        log_set_max_level(LOG_WARNING);
        run_test(test_start_guard);
        return 0;
}
