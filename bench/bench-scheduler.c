/* SPDX-License-Identifier: MIT */
/*
 * Micro-benchmark of the dependency scheduler (not a test): push a deep
 * queue, then drain it with max_running = 4, finishing the oldest running
 * event each time (slow agents).  Prints ns per push, per next (all calls,
 * including those that return nothing), per done, and the scheduler's own
 * heap bytes per held event at the peak, for the indexed scheduler and the
 * naive reference model (tests/unit/scheduler-ref.h), which is O(queue) per
 * call and so is run on a smaller queue.
 *
 * Times are CPU time of the process (the machine may be busy): per phase,
 * the drain split between next and done in the proportion of their
 * wall-clock times; each figure is the best of a few runs.
 *
 * Usage: bench-scheduler [EVENTS [NAIVE_EVENTS [SCENARIO]]]   (default 100000 10000, all)
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shared/macro.h"
#include "scheduler-ref.h"
#include "pipeline/scheduler.h"
#include "uevent/uevent.h"

#define MAX_RUNNING 4

struct impl {
        const char *name;
        void *(*create)(size_t max_held);
        void (*destroy)(void *s);
        int (*push)(void *s, struct uevent *ev);
        struct uevent *(*next)(void *s);
        void (*done)(void *s, struct uevent *ev);
};

static void *idx_create(size_t max_held)
{
        struct scheduler *s;
        return scheduler_new(ORDERING_DEVPATH, MAX_RUNNING, max_held, &s) < 0 ? NULL : s;
}

static void idx_destroy(void *s)
{
        scheduler_free(s);
}

static int idx_push(void *s, struct uevent *ev)
{
        return scheduler_push(s, ev);
}

static struct uevent *idx_next(void *s)
{
        return scheduler_next(s);
}

static void idx_done(void *s, struct uevent *ev)
{
        scheduler_done(s, ev);
}

static void *naive_create(size_t max_held)
{
        return ref_new(ORDERING_DEVPATH, MAX_RUNNING, max_held);
}

static void naive_destroy(void *s)
{
        ref_free(s);
}

static int naive_push(void *s, struct uevent *ev)
{
        return ref_push(s, ev);
}

static struct uevent *naive_next(void *s)
{
        return ref_next(s);
}

static void naive_done(void *s, struct uevent *ev)
{
        ref_done(s, ev);
}

static const struct impl impls[] = {
        { "indexed", idx_create, idx_destroy, idx_push, idx_next, idx_done },
        { "naive", naive_create, naive_destroy, naive_push, naive_next, naive_done },
};

static uint64_t clock_ns(clockid_t id)
{
        struct timespec ts;
        clock_gettime(id, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
        return clock_ns(CLOCK_MONOTONIC);
}

static uint64_t cpu_ns(void)
{
        return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/* Event i goes to path (i % n_paths): bursts interleaved over the devices. */
static struct uevent *make_events(size_t n, char **paths, size_t n_paths)
{
        struct uevent *evs = calloc(n, sizeof(*evs));

        if (!evs)
                abort();
        for (size_t i = 0; i < n; i++) {
                evs[i].seqnum = i + 1;
                evs[i].action = "change";
                evs[i].subsystem = "net";
                evs[i].devpath = paths[i % n_paths];
                evs[i].devpath_len = (uint16_t)strlen(paths[i % n_paths]);
        }
        return evs;
}

struct result {
        double push_ns, next_ns, done_ns, bytes_per_event;
        size_t next_calls;
};

/* Start what may start, finish the oldest running; until everything is done. */
static void drain(const struct impl *im, void *s, size_t n, struct result *res)
{
        struct uevent *ring[MAX_RUNNING], *ev;
        size_t head = 0, n_run = 0, finished = 0;
        uint64_t t_next = 0, t_done = 0, t0, cpu0 = cpu_ns();
        double cpu;

        while (finished < n) {
                t0 = now_ns();
                do {
                        ev = n_run < MAX_RUNNING ? im->next(s) : NULL;
                        res->next_calls++;
                        if (ev)
                                ring[(head + n_run++) % MAX_RUNNING] = ev;
                } while (ev);
                t_next += now_ns() - t0;
                if (n_run == 0) {
                        fprintf(stderr, "%s: nothing runs with %zu events left\n", im->name, n - finished);
                        abort();
                }
                ev = ring[head];
                head = (head + 1) % MAX_RUNNING;
                n_run--;
                t0 = now_ns();
                im->done(s, ev);
                t_done += now_ns() - t0;
                finished++;
        }
        cpu = (double)(cpu_ns() - cpu0) / (double)n;
        res->next_ns = cpu * (double)t_next / (double)(t_next + t_done);
        res->done_ns = cpu * (double)t_done / (double)(t_next + t_done);
}

/* Heap bytes in use, including large mmapped blocks. */
static size_t heap_in_use(void)
{
        struct mallinfo2 mi = mallinfo2();
        return mi.uordblks + mi.hblkhd;
}

static void run_once(const struct impl *im, size_t n, char **paths, size_t n_paths, struct result *res)
{
        struct uevent *evs = make_events(n, paths, n_paths);
        size_t mem0;
        uint64_t t0;
        void *s = im->create(n);

        if (!s)
                abort();
        mem0 = heap_in_use();
        t0 = cpu_ns();
        for (size_t i = 0; i < n; i++)
                if (im->push(s, &evs[i]) < 0)
                        abort();
        res->push_ns = (double)(cpu_ns() - t0) / (double)n;
        res->bytes_per_event = (double)(heap_in_use() - mem0) / (double)n;
        drain(im, s, n, res);
        im->destroy(s);
        free(evs);
}

static void run(const char *scenario, const struct impl *im, size_t n, char **paths, size_t n_paths, int reps)
{
        struct result best = { .push_ns = 1e30, .next_ns = 1e30, .done_ns = 1e30 };

        for (int i = 0; i < reps; i++) {
                struct result r = { .push_ns = 0 };
                run_once(im, n, paths, n_paths, &r);
                best.push_ns = MIN(best.push_ns, r.push_ns);
                best.next_ns = MIN(best.next_ns, r.next_ns);
                best.done_ns = MIN(best.done_ns, r.done_ns);
                best.bytes_per_event = r.bytes_per_event;
        }
        printf("%-16s %-8s %7zu %8.0f %8.0f %8.0f %9.0f %9.1f\n", scenario, im->name, n, best.push_ns,
               best.next_ns, best.done_ns, best.push_ns + best.next_ns + best.done_ns, best.bytes_per_event);
        fflush(stdout);
}

/* The indexed scheduler at full depth and at the naive one's depth, then the naive one. */
static const char *only;

static void run_scenario(const char *scenario, size_t n, size_t n_naive, char **paths, size_t n_paths)
{
        if (only && !strstr(scenario, only))
                return;
        run(scenario, &impls[0], n, paths, n_paths, 3);
        run(scenario, &impls[0], n_naive, paths, n_paths, 3);
        run(scenario, &impls[1], n_naive, paths, n_paths, 1);
}

/* prefix + i, for i < n */
static char **make_paths(size_t n, const char *prefix)
{
        char **p = calloc(n, sizeof(*p));

        if (!p)
                abort();
        for (size_t i = 0; i < n; i++)
                if (asprintf(&p[i], "%s%zu", prefix, i) < 0)
                        abort();
        return p;
}

static void free_paths(char **p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                free(p[i]);
        free(p);
}

int main(int argc, char **argv)
{
        size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
        size_t n_naive = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000;
        only = argc > 3 ? argv[3] : NULL;
        char *two[] = { "/devices/virtual/net/lo", "/devices/pci0000:00/0000:00:1f.6/net/eth0" };
        char **many = make_paths(1000, "/devices/virtual/net/veth");
        char **tree = make_paths(1000, "/devices/pci0000:00/0000:00:14.0/usb1/1-");

        /* Every tenth device of the tree variant is the parent of the next nine. */
        for (size_t i = 0; i < 1000; i++)
                if (i % 10 != 0) {
                        free(tree[i]);
                        if (asprintf(&tree[i], "/devices/pci0000:00/0000:00:14.0/usb1/1-%zu/1-%zu:1.%zu", i - i % 10,
                                     i - i % 10, i % 10) < 0)
                                abort();
                }
        printf("sizeof(struct uevent) = %zu (not counted below); max_running = %d\n", sizeof(struct uevent),
               MAX_RUNNING);
        printf("%-16s %-8s %7s %8s %8s %8s %9s %9s\n", "scenario", "impl", "events", "push ns", "next ns",
               "done ns", "total ns", "bytes/ev");
        run_scenario("2 devpaths", n, n_naive, two, 2);
        run_scenario("1000 devices", n, n_naive, many, 1000);
        run_scenario("1000 w/ parents", n, n_naive, tree, 1000);
        free_paths(many, 1000);
        free_paths(tree, 1000);
        return 0;
}
