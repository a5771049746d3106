/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's path index (see pathindex.h).
 *
 * Invariants:
 *  - a node exists exactly while refs > 0 entries are on it; it is then both
 *    in the hash table (by FNV-1a of its key) and in the treap (ordered by
 *    key as unsigned bytes, shorter first; heap-ordered by prio);
 *  - each of a node's two lists is sorted by seq, head the lowest;
 *  - min[k]/max[k] of a node are the entries of lowest/highest seq in its
 *    treap subtree, k = 0 over PI_DEVPATH entries, k = 1 over all entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "pathindex.h"

#define FNV_OFFSET 14695981039346656037ULL
#define FNV_PRIME 1099511628211ULL

enum { AGG_DEVPATH, AGG_ALL, _AGG_MAX };

struct pathnode {
        struct pathnode *hnext;
        struct pathnode *left, *right, *up;
        uint64_t hash;
        uint32_t prio;
        uint32_t refs;
        struct pi_entry *head[_PI_KIND_MAX], *tail[_PI_KIND_MAX];
        const struct pi_entry *min[_AGG_MAX], *max[_AGG_MAX];
        size_t len;
        char key[];
};

static inline uint64_t fnv_step(uint64_t h, char c)
{
        return (h ^ (unsigned char)c) * FNV_PRIME;
}

static uint64_t fnv(const char *s, size_t len)
{
        uint64_t h = FNV_OFFSET;
        for (size_t i = 0; i < len; i++)
                h = fnv_step(h, s[i]);
        return h;
}

static size_t bucket_of(const struct pathindex *pi, uint64_t hash)
{
        return (size_t)(hash ^ (hash >> 29)) & (pi->n_buckets - 1);
}

static struct pathnode *lookup(const struct pathindex *pi, const char *key, size_t len, uint64_t hash)
{
        if (pi->n_buckets == 0)
                return NULL;
        for (struct pathnode *n = pi->buckets[bucket_of(pi, hash)]; n; n = n->hnext)
                if (n->hash == hash && n->len == len && memcmp(n->key, key, len) == 0)
                        return n;
        return NULL;
}

/* Grow the table to keep chains short; on failure the old table stays (just slower). */
static void rehash(struct pathindex *pi)
{
        size_t n = pi->n_buckets ? pi->n_buckets * 2 : 64;
        struct pathnode **b = calloc(n, sizeof(*b));

        if (!b)
                return;
        for (size_t i = 0; i < pi->n_buckets; i++)
                for (struct pathnode *x = pi->buckets[i], *next; x; x = next) {
                        size_t j = (size_t)(x->hash ^ (x->hash >> 29)) & (n - 1);
                        next = x->hnext;
                        x->hnext = b[j];
                        b[j] = x;
                }
        free(pi->buckets);
        pi->buckets = b;
        pi->n_buckets = n;
}

/* ---- treap --------------------------------------------------------------- */

static int key_cmp(const struct pathnode *a, const struct pathnode *b)
{
        int c = memcmp(a->key, b->key, MIN(a->len, b->len));
        if (c != 0)
                return c;
        return a->len < b->len ? -1 : a->len > b->len;
}

static const struct pi_entry *earlier(const struct pi_entry *a, const struct pi_entry *b)
{
        return !a || (b && b->seq < a->seq) ? b : a;
}

static const struct pi_entry *later(const struct pi_entry *a, const struct pi_entry *b)
{
        return !a || (b && b->seq > a->seq) ? b : a;
}

/* Recompute @n's aggregates from its lists and children; true if they changed. */
static bool pull(struct pathnode *n)
{
        const struct pathnode *kids[2] = { n->left, n->right };
        const struct pi_entry *mn[_AGG_MAX], *mx[_AGG_MAX];
        bool changed = false;

        mn[AGG_DEVPATH] = n->head[PI_DEVPATH];
        mx[AGG_DEVPATH] = n->tail[PI_DEVPATH];
        mn[AGG_ALL] = earlier(n->head[PI_DEVPATH], n->head[PI_OLD]);
        mx[AGG_ALL] = later(n->tail[PI_DEVPATH], n->tail[PI_OLD]);
        for (int k = 0; k < _AGG_MAX; k++) {
                for (int j = 0; j < 2; j++)
                        if (kids[j]) {
                                mn[k] = earlier(mn[k], kids[j]->min[k]);
                                mx[k] = later(mx[k], kids[j]->max[k]);
                        }
                changed |= n->min[k] != mn[k] || n->max[k] != mx[k];
                n->min[k] = mn[k];
                n->max[k] = mx[k];
        }
        return changed;
}

static void pull_up(struct pathnode *n)
{
        while (n && pull(n))
                n = n->up;
}

/* Rotate @x above its parent. */
static void rotate_up(struct pathindex *pi, struct pathnode *x)
{
        struct pathnode *p = x->up, *g = p->up;

        if (p->left == x) {
                p->left = x->right;
                if (x->right)
                        x->right->up = p;
                x->right = p;
        } else {
                p->right = x->left;
                if (x->left)
                        x->left->up = p;
                x->left = p;
        }
        p->up = x;
        x->up = g;
        if (!g)
                pi->root = x;
        else if (g->left == p)
                g->left = x;
        else
                g->right = x;
        pull(p);
        pull(x);
}

static void treap_insert(struct pathindex *pi, struct pathnode *n)
{
        struct pathnode **link = &pi->root, *up = NULL;

        while (*link) {
                up = *link;
                link = key_cmp(n, up) < 0 ? &up->left : &up->right;
        }
        *link = n;
        n->up = up;
        while (n->up && n->up->prio < n->prio)
                rotate_up(pi, n);
}

/* @n has no entries, so no aggregate above it changes when it goes. */
static void treap_remove(struct pathindex *pi, struct pathnode *n)
{
        while (n->left || n->right) {
                struct pathnode *c = !n->right || (n->left && n->left->prio > n->right->prio) ? n->left : n->right;
                rotate_up(pi, c);
        }
        if (!n->up)
                pi->root = NULL;
        else if (n->up->left == n)
                n->up->left = NULL;
        else
                n->up->right = NULL;
        pull_up(n->up);
}

/* ---- nodes --------------------------------------------------------------- */

static struct pathnode *node_get(struct pathindex *pi, const char *path, size_t len)
{
        uint64_t hash = fnv(path, len);
        struct pathnode *n = lookup(pi, path, len, hash);

        if (n)
                return n;
        n = calloc(1, sizeof(*n) + len + 1);
        if (!n)
                return NULL;
        memcpy(n->key, path, len);
        n->len = len;
        n->hash = hash;
        n->prio = (uint32_t)((hash * 0x9E3779B97F4A7C15ULL) >> 32);
        if (pi->n_nodes >= pi->n_buckets)
                rehash(pi);
        if (pi->n_buckets == 0) {
                free(n);
                return NULL;
        }
        n->hnext = pi->buckets[bucket_of(pi, hash)];
        pi->buckets[bucket_of(pi, hash)] = n;
        pi->n_nodes++;
        treap_insert(pi, n);
        return n;
}

static void node_put(struct pathindex *pi, struct pathnode *n)
{
        struct pathnode **link;

        if (--n->refs > 0)
                return;
        for (link = &pi->buckets[bucket_of(pi, n->hash)]; *link != n; link = &(*link)->hnext)
                ;
        *link = n->hnext;
        pi->n_nodes--;
        treap_remove(pi, n);
        free(n);
}

void pathindex_clear(struct pathindex *pi)
{
        for (size_t i = 0; i < pi->n_buckets; i++)
                for (struct pathnode *n = pi->buckets[i], *next; n; n = next) {
                        next = n->hnext;
                        free(n);
                }
        free(pi->buckets);
        *pi = (struct pathindex){ .n_buckets = 0 };
}

int pathindex_add(struct pathindex *pi, struct pi_entry *e, enum pi_kind kind, const char *path, size_t len,
                  uint64_t seq)
{
        struct pathnode *n = node_get(pi, path, len);
        struct pi_entry *after;

        if (!n)
                return -ENOMEM;
        n->refs++;
        e->seq = seq;
        e->node = n;
        e->kind = kind;
        for (after = n->tail[kind]; after && after->seq > seq; after = after->prev)
                ;
        e->prev = after;
        e->next = after ? after->next : n->head[kind];
        if (e->next)
                e->next->prev = e;
        else
                n->tail[kind] = e;
        if (after)
                after->next = e;
        else
                n->head[kind] = e;
        pull_up(n);
        return 0;
}

void pathindex_remove(struct pathindex *pi, struct pi_entry *e)
{
        struct pathnode *n = e->node;
        enum pi_kind kind = e->kind;

        if (!n)
                return;
        if (e->prev)
                e->prev->next = e->next;
        else
                n->head[kind] = e->next;
        if (e->next)
                e->next->prev = e->prev;
        else
                n->tail[kind] = e->prev;
        e->node = NULL;
        e->prev = e->next = NULL;
        pull_up(n);
        node_put(pi, n);
}

/* ---- queries ------------------------------------------------------------- */

/*
 * Merge a set of entries into @hits, given its earliest and latest entry.
 * @before: the latest entry below @bound if known exactly (the querying
 * entry's own predecessor), else NULL.
 */
static void merge(struct pi_hits *hits, const struct pi_entry *first, const struct pi_entry *last,
                  const struct pi_entry *before, uint64_t bound)
{
        const struct pi_entry *w;

        if (!first || first->seq >= bound)
                return;
        hits->earliest = earlier(hits->earliest, first);
        /* Prefer the latest earlier entry: when it finishes, the others have
         * usually finished too.  Without an exact one, the earliest will do. */
        w = before ? before : last->seq < bound ? last : first;
        hits->wait_on = later(hits->wait_on, w);
}

/* Where a node's key lies against the range of strict descendants of @path: -1 below, 0 in, 1 above. */
static int classify(const struct pathnode *n, const char *path, size_t len)
{
        int c = memcmp(n->key, path, MIN(n->len, len));

        if (c != 0)
                return c < 0 ? -1 : 1;
        if (n->len <= len)
                return -1;
        return (unsigned char)n->key[len] < '/' ? -1 : n->key[len] == '/' ? 0 : 1;
}

static void merge_subtree(struct pi_hits *hits, const struct pathnode *n, int k, uint64_t bound)
{
        if (n)
                merge(hits, n->min[k], n->max[k], NULL, bound);
}

static void merge_node(struct pi_hits *hits, const struct pathnode *n, int k, uint64_t bound)
{
        if (k == AGG_ALL)
                merge(hits, earlier(n->head[PI_DEVPATH], n->head[PI_OLD]),
                      later(n->tail[PI_DEVPATH], n->tail[PI_OLD]), NULL, bound);
        else
                merge(hits, n->head[PI_DEVPATH], n->tail[PI_DEVPATH], NULL, bound);
}

/* Entries on strict descendants of @p (keys starting with @p + "/"). */
static void related_below(const struct pathindex *pi, const struct pathnode *p, int k, uint64_t bound,
                          struct pi_hits *hits)
{
        const struct pathnode *n = pi->root, *m;
        int c;

        while (n && (c = classify(n, p->key, p->len)) != 0)
                n = c < 0 ? n->right : n->left;
        if (!n)
                return;
        merge_node(hits, n, k, bound);
        /* Left of the split node everything is below the range's end. */
        for (m = n->left; m;)
                if (classify(m, p->key, p->len) == 0) {
                        merge_node(hits, m, k, bound);
                        merge_subtree(hits, m->right, k, bound);
                        m = m->left;
                } else {
                        m = m->right;
                }
        /* Right of it everything is past the range's start. */
        for (m = n->right; m;)
                if (classify(m, p->key, p->len) == 0) {
                        merge_node(hits, m, k, bound);
                        merge_subtree(hits, m->left, k, bound);
                        m = m->right;
                } else {
                        m = m->left;
                }
}

void pathindex_related(const struct pathindex *pi, const struct pi_entry *e, struct pi_hits *hits)
{
        enum pi_kind kind = e->kind;
        const struct pathnode *p = e->node;
        uint64_t h = FNV_OFFSET, bound = e->seq;
        int kinds = kind == PI_DEVPATH ? _PI_KIND_MAX : 1;

        /* Ancestors (prefixes ending before a '/') and the path itself. */
        for (size_t i = 0;; i++) {
                if (i == p->len || p->key[i] == '/') {
                        const struct pathnode *a = i == p->len ? p : lookup(pi, p->key, i, h);
                        for (int k = 0; a && k < kinds; k++)
                                merge(hits, a->head[k], a->tail[k], a == p && k == (int)kind ? e->prev : NULL,
                                      bound);
                }
                if (i == p->len)
                        break;
                h = fnv_step(h, p->key[i]);
        }
        related_below(pi, p, kind == PI_DEVPATH ? AGG_ALL : AGG_DEVPATH, bound, hits);
}
