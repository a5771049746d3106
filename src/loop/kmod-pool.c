/* SPDX-License-Identifier: MIT */
/*
 * The loader threads of load-modules (kmod-pool.h): HP_KMOD_THREADS
 * threads take requests (look an alias up, or load a module) from one
 * queue and put them, answered, on another; an eventfd tells the loop.
 *
 * Invariants: libkmod is called only here, on a loader thread, each with
 * its own context, made anew when its indexes changed on disk (depmod) or
 * after a reload (modprobe.d); the threads block every signal (the loop's
 * signalfd gets them) and log nothing (the loop logs what they answer);
 * a request belongs to the queue it is on, or to the thread working on it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <libkmod.h>

#include "loop/kmod-pool.h"
#include "shared/macro.h"

/* How long kmod_pool_free() waits for a thread busy with a load. */
#define KMOD_POOL_JOIN_SEC 2

struct kmod_pool {
        pthread_mutex_t lock;
        pthread_cond_t wake;
        struct list_node todo, done;  /* struct kmod_req.link */
        bool stop;
        unsigned generation;          /* a context older than this is made anew */
        size_t in_flight;             /* queued or being worked on */
        int efd;
        size_t n_threads;
        pthread_t threads[HP_KMOD_THREADS];
};

static void quiet_log(void *data, int priority, const char *file, int line, const char *fn, const char *format,
                      va_list args)
{
        (void)data, (void)priority, (void)file, (void)line, (void)fn, (void)format, (void)args;
}

static bool state_present(int state)
{
        return state == KMOD_MODULE_LIVE || state == KMOD_MODULE_BUILTIN;
}

static void do_lookup(struct kmod_ctx *ctx, struct kmod_req *q)
{
        struct kmod_list *list = NULL, *l;
        int r = kmod_module_new_from_lookup(ctx, q->text, &list);

        if (r < 0) {
                q->error = r;
                return;
        }
        kmod_list_foreach(l, list) {
                struct kmod_module *mod = kmod_module_get_module(l);
                const char *name = kmod_module_get_name(mod);

                if (q->n < HP_KMOD_MODULES_PER_ALIAS && name && strlen(name) < HP_KMOD_NAME_MAX) {
                        strcpy(q->names[q->n], name);
                        q->present[q->n] = state_present(kmod_module_get_initstate(mod));
                        q->n++;
                }
                q->n_total++;
                kmod_module_unref(mod);
        }
        kmod_module_unref_list(list);
}

static void do_load(struct kmod_ctx *ctx, struct kmod_req *q)
{
        struct kmod_module *mod = NULL;
        usec_t t0;
        int r;

        r = kmod_module_new_from_name(ctx, q->text, &mod);
        if (r < 0) {
                q->outcome = MODLOAD_FAILED;
                q->error = r;
                return;
        }
        if (state_present(kmod_module_get_initstate(mod))) {
                q->outcome = MODLOAD_PRESENT;
                kmod_module_unref(mod);
                return;
        }
        t0 = now_usec(CLOCK_MONOTONIC);
        r = kmod_module_probe_insert_module(mod, KMOD_PROBE_APPLY_BLACKLIST, NULL, NULL, NULL, NULL);
        q->usec = now_usec(CLOCK_MONOTONIC) - t0;
        if (r == 0)
                q->outcome = MODLOAD_INSERTED;
        else if (r == -EEXIST)
                q->outcome = MODLOAD_PRESENT;
        else if (r == KMOD_PROBE_APPLY_BLACKLIST)
                q->outcome = MODLOAD_BLACKLISTED;
        else {
                q->outcome = MODLOAD_FAILED;
                q->error = r < 0 ? r : -EINVAL;
        }
        kmod_module_unref(mod);
}

/* A context for @generation: @ctx if it is of it and its indexes did not change, else a new one. */
static struct kmod_ctx *context_for(struct kmod_ctx *ctx, unsigned *have, unsigned generation)
{
        if (ctx && *have == generation && kmod_validate_resources(ctx) == KMOD_RESOURCES_OK)
                return ctx;
        kmod_unref(ctx);
        ctx = kmod_new(NULL, NULL);
        if (ctx) {
                kmod_set_log_fn(ctx, quiet_log, NULL);
                (void)kmod_load_resources(ctx); /* without its indexes libkmod reads the files */
        }
        *have = generation;
        return ctx;
}

static void *loader(void *arg)
{
        struct kmod_pool *p = arg;
        struct kmod_ctx *ctx = NULL;
        unsigned have = 0;

        pthread_mutex_lock(&p->lock);
        for (;;) {
                struct kmod_req *q;
                unsigned generation;

                while (!p->stop && list_empty(&p->todo))
                        pthread_cond_wait(&p->wake, &p->lock);
                if (p->stop)
                        break;
                q = list_first(&p->todo, struct kmod_req, link);
                list_unlink(&q->link);
                generation = p->generation;
                pthread_mutex_unlock(&p->lock);

                ctx = context_for(ctx, &have, generation);
                if (!ctx)
                        q->error = -ENOMEM;
                else if (q->load)
                        do_load(ctx, q);
                else
                        do_lookup(ctx, q);

                pthread_mutex_lock(&p->lock);
                list_add_tail(&p->done, &q->link);
                (void)eventfd_write(p->efd, 1);
        }
        pthread_mutex_unlock(&p->lock);
        kmod_unref(ctx);
        return NULL;
}

int kmod_pool_new(struct kmod_pool **ret)
{
        struct kmod_pool *p = calloc(1, sizeof(*p));
        sigset_t all, old;
        int r = 0;

        if (!p)
                return -ENOMEM;
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->wake, NULL);
        list_init(&p->todo);
        list_init(&p->done);
        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (p->efd < 0) {
                r = -errno;
                kmod_pool_free(p);
                return r;
        }
        /* The threads start with every signal blocked: the loop's signalfd takes them. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        for (; p->n_threads < HP_KMOD_THREADS; p->n_threads++) {
                r = -pthread_create(&p->threads[p->n_threads], NULL, loader, p);
                if (r < 0)
                        break;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (p->n_threads == 0) {
                kmod_pool_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

/* Free the requests on @list. */
static void reqs_free(struct list_node *list)
{
        struct kmod_req *q, *n;

        list_for_each_safe(q, n, list, link) {
                list_unlink(&q->link);
                free(q);
        }
}

struct kmod_pool *kmod_pool_free(struct kmod_pool *p)
{
        struct timespec deadline;
        bool stuck = false;

        if (!p)
                return NULL;
        pthread_mutex_lock(&p->lock);
        p->stop = true;
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->lock);
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += KMOD_POOL_JOIN_SEC;
        for (size_t i = 0; i < p->n_threads; i++)
                if (pthread_timedjoin_np(p->threads[i], NULL, &deadline) != 0) {
                        /* In a module's init that does not return: it keeps the pool. */
                        pthread_detach(p->threads[i]);
                        stuck = true;
                }
        if (stuck)
                return NULL;
        reqs_free(&p->todo);
        reqs_free(&p->done);
        if (p->efd >= 0)
                close(p->efd);
        pthread_cond_destroy(&p->wake);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
}

int kmod_pool_fd(const struct kmod_pool *p)
{
        return p->efd;
}

void kmod_pool_submit(struct kmod_pool *p, struct kmod_req *q)
{
        pthread_mutex_lock(&p->lock);
        list_add_tail(&p->todo, &q->link);
        p->in_flight++;
        pthread_cond_signal(&p->wake);
        pthread_mutex_unlock(&p->lock);
}

struct kmod_req *kmod_pool_take(struct kmod_pool *p)
{
        struct kmod_req *q;
        eventfd_t v;

        pthread_mutex_lock(&p->lock);
        q = list_first(&p->done, struct kmod_req, link);
        if (q) {
                list_unlink(&q->link);
                p->in_flight--;
        } else
                (void)eventfd_read(p->efd, &v);
        pthread_mutex_unlock(&p->lock);
        return q;
}

void kmod_pool_renew(struct kmod_pool *p)
{
        pthread_mutex_lock(&p->lock);
        p->generation++;
        pthread_mutex_unlock(&p->lock);
}

size_t kmod_pool_in_flight(struct kmod_pool *p)
{
        size_t n;

        pthread_mutex_lock(&p->lock);
        n = p->in_flight;
        pthread_mutex_unlock(&p->lock);
        return n;
}
