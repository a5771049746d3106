/* SPDX-License-Identifier: MIT */
/*
 * load-modules (kmod-load.h): an "add" with a valid MODALIAS holds its job
 * before its first program; the alias is looked up on a loader thread
 * (kmod-pool.h), the modules it names that are not loaded are loaded
 * there, and the job goes on once each was tried, or at the agent timeout
 * (one timer per alias, from its lookup).  pipeline/modload.h decides what
 * to issue; this file runs it, logs and counts.
 *
 * The log lines name the alias as libkmod got it (modload_alias()).
 *
 * A job waiting here is on its alias's @waiters by j->kmod_link; the
 * waiters are taken off the list before any is released (a released job
 * may finish at once, and the next one dispatched may wait on the same
 * alias).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "loop/job.h"
#include "loop/kmod-load.h"
#include "loop/kmod-pool.h"
#include "loop/manager-internal.h"
#include "loop/manager-observe.h"
#include "loop/observe-builtin.h"
#include "shared/macro.h"
#include "uevent/udev-listen.h"
#include "uevent/uevent.h"

/* Refused MODALIAS values: at most one line per this interval. */
#define KMOD_LOG_INTERVAL_USEC (5 * USEC_PER_SEC)
/* Answers taken per wakeup; the eventfd stays readable for the rest. */
#define KMOD_ANSWERS_PER_WAKEUP 64

struct kmod_load {
        struct manager *m;
        bool on;
        const char *state;
        struct kmod_pool *pool;
        sd_event_source *io;
        struct modload ml;
        size_t waiting;
        struct ratelimit log_invalid;
};

static struct kmod_load *loader_of(const struct manager *m)
{
        return m->kmod;
}

/* An event's log fields and its MODALIAS. */
static const char *event_fields(const struct uevent *ev, struct log_fields *f)
{
        uevent_log_fields(ev, f);
        return uevent_get(ev, "MODALIAS");
}

/* Take @a's waiters off it (into @list) and count them. */
static size_t waiters_take(struct kmod_load *k, struct modload_alias *a, struct list_node *list)
{
        size_t n = 0;
        struct list_node *node;

        list_init(list);
        while (!list_empty(&a->waiters)) {
                node = a->waiters.next;
                list_unlink(node);
                list_add_tail(list, node);
                n++;
        }
        k->waiting -= n;
        return n;
}

/* Release the jobs on @list: their modules were tried, or @timed_out. */
static void waiters_go(struct list_node *list, bool timed_out)
{
        while (!list_empty(list)) {
                struct job *j = list_entry(list->next, struct job, kmod_link);

                list_unlink(&j->kmod_link);
                job_kmod_go(j, timed_out);
        }
}

/* @a's modules were tried: its waiters go on, it ends. */
static void alias_complete(struct kmod_load *k, struct modload_alias *a)
{
        struct list_node list;
        size_t n = waiters_take(k, a, &list);
        struct job *j;

        list_for_each(j, &list, kmod_link) {
                struct log_fields f;

                event_fields(j->ev, &f);
                f.duration_usec = (int64_t)(now_usec(CLOCK_MONOTONIC) - j->job_started);
                log_internal(LOG_DEBUG, 0, &f, "modules of MODALIAS=%s tried", a->alias);
        }
        sd_event_source_disable_unref(a->timer);
        modload_alias_end(&k->ml, a);
        (void)n;
        waiters_go(&list, false);
}

static int on_alias_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct modload_alias *a = userdata;
        struct kmod_load *k = a->userdata;
        struct list_node list;
        struct job *j;
        size_t n;

        (void)s, (void)usec;
        n = waiters_take(k, a, &list);
        modload_alias_expire(&k->ml, a, n);
        list_for_each(j, &list, kmod_link) {
                struct log_fields f;

                event_fields(j->ev, &f);
                log_internal(LOG_WARNING, 0, &f,
                             "modules of MODALIAS=%s not loaded after %" PRIu64 " s (timeout): agents start",
                             a->alias, manager_cfg(k->m)->timeout_usec / USEC_PER_SEC);
        }
        waiters_go(&list, true);
        return 0;
}

/* A load of @name for @a: a request to a thread.  Return: 0, or -ENOMEM. */
static int submit(struct kmod_load *k, bool load, const char *text, struct modload_alias *a)
{
        struct kmod_req *q = calloc(1, sizeof(*q));

        if (!q)
                return -ENOMEM;
        q->load = load;
        q->alias = a;
        snprintf(q->text, sizeof(q->text), "%s", text);
        kmod_pool_submit(k->pool, q);
        return 0;
}

struct done_ctx {
        struct kmod_load *k;
        const struct kmod_req *q;
};

/* A failed or blacklisted load, logged with each event that waited for it. */
static void log_load(struct kmod_load *k, struct modload_alias *a, const struct kmod_req *q)
{
        struct job *j;

        if (q->outcome == MODLOAD_FAILED) {
                if (list_empty(&a->waiters))
                        log_error_errno(q->error, "module %s (MODALIAS=%s) not loaded", q->text, a->alias);
                list_for_each(j, &a->waiters, kmod_link) {
                        struct log_fields f;

                        event_fields(j->ev, &f);
                        log_internal(LOG_ERR, q->error, &f, "module %s (MODALIAS=%s) not loaded", q->text,
                                     a->alias);
                }
        } else if (q->outcome == MODLOAD_BLACKLISTED)
                log_debug("module %s (MODALIAS=%s) blacklisted", q->text, a->alias);
        (void)k;
}

static void on_module_alias(struct modload_alias *a, bool complete, void *userdata)
{
        struct done_ctx *c = userdata;

        log_load(c->k, a, c->q);
        if (complete)
                alias_complete(c->k, a);
}

static void answer_load(struct kmod_load *k, const struct kmod_req *q)
{
        struct done_ctx c = { .k = k, .q = q };

        if (q->outcome == MODLOAD_INSERTED)
                log_debug("module %s loaded (%" PRIu64 ".%03" PRIu64 " ms)", q->text, q->usec / 1000,
                          q->usec % 1000);
        if (q->outcome == MODLOAD_INSERTED || q->outcome == MODLOAD_FAILED)
                observe_module_loaded(k->m, q->text, q->usec, q->outcome == MODLOAD_FAILED);
        (void)modload_module_done(&k->ml, q->text, q->outcome, on_module_alias, &c);
}

static void answer_lookup(struct kmod_load *k, const struct kmod_req *q)
{
        struct modload_alias *a = q->alias;
        const char *names[HP_KMOD_MODULES_PER_ALIAS];
        bool issue[HP_KMOD_MODULES_PER_ALIAS];
        size_t n_failed = 0;
        int r;

        if (q->error < 0) {
                struct job *j;

                list_for_each(j, &a->waiters, kmod_link) {
                        struct log_fields f;

                        event_fields(j->ev, &f);
                        log_internal(LOG_ERR, q->error, &f, "cannot look MODALIAS=%s up", a->alias);
                }
                modload_lookup_failed(&k->ml, a);
                if (a->pending == 0)
                        alias_complete(k, a);
                return;
        }
        for (size_t i = 0; i < q->n; i++)
                names[i] = q->names[i];
        k->ml.counts.skipped += q->n_total - q->n;
        r = modload_looked_up(&k->ml, a, names, q->present, issue, q->n);
        (void)r; /* out of memory: what was issued goes on, and @a completes with it */
        for (size_t i = 0; i < q->n; i++) {
                issue[i] = issue[i] && submit(k, true, names[i], NULL) < 0; /* now: failed to submit */
                n_failed += issue[i];
        }
        if (n_failed == 0) {
                if (a->pending == 0)
                        alias_complete(k, a);
                return;
        }
        /* The last of these completes @a (it was looked up). */
        for (size_t i = 0; i < q->n; i++)
                if (issue[i]) {
                        struct kmod_req failed = { .load = true, .outcome = MODLOAD_FAILED, .error = -ENOMEM };

                        snprintf(failed.text, sizeof(failed.text), "%s", names[i]);
                        answer_load(k, &failed);
                }
}

static int on_answers(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct kmod_load *k = userdata;
        struct kmod_req *q;

        (void)s, (void)fd, (void)revents;
        for (unsigned i = 0; i < KMOD_ANSWERS_PER_WAKEUP && k->pool && (q = kmod_pool_take(k->pool)); i++) {
                if (q->load)
                        answer_load(k, q);
                else
                        answer_lookup(k, q);
                free(q);
        }
        return 0;
}

/* Why load-modules=auto is off on this machine, or NULL: it is on. */
static const char *auto_off_reason(const struct manager_config *cfg)
{
        struct utsname u;
        char path[256 + sizeof(u.release)];

        if (udevd_running()) /* its kmod builtin loads the modules */
                return "auto: off, udevd runs (" UDEVD_CONTROL_SOCKET " takes connections)";
        if (cfg->hotplug_d) {
                snprintf(path, sizeof(path), "%s/default/10-modalias.hotplug", cfg->hotplug_d);
                if (access(path, F_OK) == 0)
                        return "auto: off, the modalias script is installed";
        }
        if (uname(&u) < 0)
                return "auto: off, no kernel release";
        snprintf(path, sizeof(path), "/lib/modules/%s/modules.alias.bin", u.release);
        if (access(path, F_OK) < 0)
                return "auto: off, no modules.alias.bin for this kernel";
        return NULL;
}

/* The pool and its answers' source, once.  Return: 0 or negative errno. */
static int loader_start(struct kmod_load *k)
{
        int r;

        if (k->pool)
                return 0;
        r = kmod_pool_new(&k->pool);
        if (r < 0)
                return r;
        r = sd_event_add_io(manager_event(k->m), &k->io, kmod_pool_fd(k->pool), EPOLLIN, on_answers, k);
        if (r < 0)
                k->pool = kmod_pool_free(k->pool);
        return r;
}

static void kmod_load_apply(struct kmod_load *k, bool starting)
{
        const struct manager_config *cfg = manager_cfg(k->m);
        const char *why = NULL;
        bool was = k->on;
        int r;

        if (cfg->load_modules == LOAD_MODULES_NO)
                why = "off";
        else if (manager_replaying(k->m) || cfg->dry_run || cfg->trust != UEVENT_TRUST_KERNEL)
                why = "off, events not from the kernel's socket or not run";
        else if (cfg->load_modules == LOAD_MODULES_AUTO)
                why = auto_off_reason(cfg);
        if (!why) {
                r = loader_start(k);
                if (r < 0) {
                        log_warning_errno(r, "load-modules: cannot start the loader threads");
                        why = "off, no loader threads";
                }
        }
        k->on = !why;
        k->state = why ? why : "on";
        if (k->pool && !starting)
                kmod_pool_renew(k->pool);
        if (k->on != was || starting)
                log_info("load-modules: %s", k->state);
}

static void on_close(void *userdata)
{
        struct kmod_load *k = userdata;
        struct modload_alias *a;

        for (size_t i = 0; (a = hash_table_next(&k->ml.aliases, &i));) {
                struct list_node list;

                waiters_take(k, a, &list);
                while (!list_empty(&list))
                        list_unlink(list.next);
                sd_event_source_disable_unref(a->timer);
        }
        modload_clear(&k->ml);
        sd_event_source_disable_unref(k->io);
        k->pool = kmod_pool_free(k->pool);
        k->m->kmod = NULL;
        free(k);
}

static const struct manager_observer_ops kmod_load_ops = {
        .close = on_close,
};

int kmod_load_open(struct manager *m)
{
        struct kmod_load *k = calloc(1, sizeof(*k));
        int r;

        if (!k)
                return -ENOMEM;
        k->m = m;
        modload_init(&k->ml);
        r = manager_add_observer(m, &kmod_load_ops, k);
        if (r < 0) {
                free(k);
                return r;
        }
        m->kmod = k;
        kmod_load_apply(k, true);
        return 0;
}

void kmod_load_reconfigured(struct manager *m)
{
        if (m->kmod)
                kmod_load_apply(m->kmod, false);
}

/* A new alias: its lookup, and its timer at the agent timeout.  Return: 0, or negative errno. */
static int alias_lookup(struct kmod_load *k, struct modload_alias *a)
{
        sd_event_source *t = NULL;
        int r;

        r = sd_event_add_time_relative(manager_event(k->m), &t, CLOCK_MONOTONIC,
                                       manager_cfg(k->m)->timeout_usec, USEC_PER_MSEC, on_alias_timeout, a);
        if (r < 0)
                return r;
        r = submit(k, false, a->alias, a);
        if (r < 0) {
                sd_event_source_disable_unref(t);
                return r;
        }
        a->userdata = k;
        a->timer = t;
        return 0;
}

int kmod_load_begin(struct manager *m, const struct uevent *ev, struct job *j)
{
        struct kmod_load *k = loader_of(m);
        struct modload_alias *a = NULL;
        struct log_fields f;
        char alias[HP_MODALIAS_MAX];
        const char *value;
        uint64_t suppressed;
        int r;

        if (!k || !k->on || strcmp(ev->action, "add") != 0)
                return 0;
        value = event_fields(ev, &f);
        if (!value)
                return 0;
        r = modload_alias(value, alias);
        if (r < 0) {
                k->ml.counts.invalid++;
                if (ratelimit_pass(&k->log_invalid, KMOD_LOG_INTERVAL_USEC, &suppressed))
                        log_internal(LOG_WARNING, 0, &f,
                                     "MODALIAS %s (%zu bytes; at most %d of printable ASCII without blanks): "
                                     "no module loaded%s", r == -E2BIG ? "too long" : "not printable ASCII",
                                     strlen(value), HP_MODALIAS_MAX - 1,
                                     suppressed ? " (and others since the last such line)" : "");
                return 0;
        }
        r = modload_begin(&k->ml, alias, &a);
        if (r == 1) {
                r = alias_lookup(k, a);
                if (r < 0) {
                        log_internal(LOG_ERR, r, &f, "cannot look MODALIAS=%s up", alias);
                        modload_lookup_failed(&k->ml, a);
                        modload_alias_end(&k->ml, a);
                        return 0;
                }
        } else if (r < 0) {
                if (r != -ETIME)
                        log_internal(LOG_WARNING, r, &f, "modules of MODALIAS=%s not loaded: %s", alias,
                                     r == -ENOSPC ? "too many aliases in flight" : "no memory");
                return 0;
        }
        list_add_tail(&a->waiters, &j->kmod_link);
        k->waiting++;
        return 1;
}

void kmod_load_abandon(struct job *j)
{
        struct kmod_load *k = loader_of(j->m);

        if (!list_linked(&j->kmod_link))
                return;
        list_unlink(&j->kmod_link);
        if (k)
                k->waiting--;
}

void kmod_load_get_status(const struct manager *m, struct kmod_load_status *ret)
{
        const struct kmod_load *k = loader_of(m);

        memset(ret, 0, sizeof(*ret));
        if (!k) {
                ret->state = "off";
                return;
        }
        ret->state = k->state;
        ret->counts = k->ml.counts;
        ret->waiting = k->waiting;
        ret->in_flight = k->pool ? kmod_pool_in_flight(k->pool) : 0;
}
