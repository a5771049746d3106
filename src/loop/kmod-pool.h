/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * load-modules' loader threads (kmod-pool.c), for kmod-load.c only: a
 * fixed pool of HP_KMOD_THREADS threads, each with its own libkmod
 * context, answering requests in any order.
 */

#include <stdbool.h>
#include <stddef.h>

#include "pipeline/modload.h"
#include "shared/list.h"
#include "shared/time-util.h"

struct kmod_pool;
struct modload_alias;

/* A request, the loop's until submitted and again once taken back. */
struct kmod_req {
        struct list_node link;
        bool load;                    /* load module @text; false: look alias @text up */
        struct modload_alias *alias;  /* a lookup's alias (the loop's; the thread does not touch it) */
        char text[HP_MODALIAS_MAX];
        /* The answer: */
        int error;                    /* negative errno: the lookup or load failed */
        size_t n, n_total;            /* a lookup: names kept (HP_KMOD_MODULES_PER_ALIAS at most), found */
        char names[HP_KMOD_MODULES_PER_ALIAS][HP_KMOD_NAME_MAX];
        bool present[HP_KMOD_MODULES_PER_ALIAS]; /* loaded or built in when looked up */
        enum modload_outcome outcome; /* a load */
        usec_t usec;                  /* a load: its time in libkmod's insert (dependencies too) */
};

/* Start the threads (at least one).  Return: 0, or negative errno. */
int kmod_pool_new(struct kmod_pool **ret);
/* Stop the threads and free the pool; one busy in a load past a bound is left running, with the pool.  Return: NULL. */
struct kmod_pool *kmod_pool_free(struct kmod_pool *p);
/* The eventfd that is readable when answers wait (borrowed). */
int kmod_pool_fd(const struct kmod_pool *p);
/* Hand @q (consumed) to a thread. */
void kmod_pool_submit(struct kmod_pool *p, struct kmod_req *q);
/* An answered request (the caller's), or NULL when none waits (the eventfd is then reset). */
struct kmod_req *kmod_pool_take(struct kmod_pool *p);
/* Contexts are made anew before their next request (a reload: modprobe.d may have changed). */
void kmod_pool_renew(struct kmod_pool *p);
/* Requests submitted and not taken back. */
size_t kmod_pool_in_flight(struct kmod_pool *p);
