/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's path index (see pathindex.h).
 *
 * Invariants:
 *  - a node exists exactly while refs > 0 entries are on it; it is then both
 *    in the hash table (by hash_bytes() of its key) and in the treap (ordered by
 *    key as unsigned bytes, shorter first; heap-ordered by prio);
 *  - each of a node's two lists (entries[k]) is sorted by seq; first[k]/last[k]
 *    cache its head and tail with their seqs (none when empty);
 *  - min[k]/max[k] of a node are the entries of lowest/highest seq in its
 *    treap subtree, k = 0 over PI_DEVPATH entries, k = 1 over all entries.
 * Seqs are kept next to the pointers so that keeping the aggregates and
 * answering queries touches only nodes, not the (many, cold) entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hash.h"
#include "shared/list.h"
#include "shared/macro.h"
#include "indexed/pathindex.h"

enum { AGG_DEVPATH, AGG_ALL, _AGG_MAX };

struct pathnode {
        struct pathnode *left, *right, *up;
        uint64_t hash;
        uint32_t prio;
        uint32_t refs;
        struct list_node entries[_PI_KIND_MAX];
        struct pi_ref first[_PI_KIND_MAX], last[_PI_KIND_MAX];
        struct pi_ref min[_AGG_MAX], max[_AGG_MAX];
        size_t len;
        char key[];
};

/* The key looked up: a path and its length. */
struct pi_key {
        const char *path;
        size_t len;
};

static bool node_is(const void *item, const void *key)
{
        const struct pathnode *n = item;
        const struct pi_key *k = key;

        return n->len == k->len && memcmp(n->key, k->path, k->len) == 0;
}

static struct pathnode *lookup(const struct pathindex *pi, const char *key, size_t len, uint64_t hash)
{
        return hash_table_get(&pi->table, hash, node_is, &(struct pi_key){ .path = key, .len = len });
}

/* ---- treap --------------------------------------------------------------- */

static int key_cmp(const struct pathnode *a, const struct pathnode *b)
{
        int c = memcmp(a->key, b->key, MIN(a->len, b->len));
        if (c != 0)
                return c;
        return a->len < b->len ? -1 : a->len > b->len;
}

static struct pi_ref earlier(struct pi_ref a, struct pi_ref b)
{
        return !a.e || (b.e && b.seq < a.seq) ? b : a;
}

static struct pi_ref later(struct pi_ref a, struct pi_ref b)
{
        return !a.e || (b.e && b.seq > a.seq) ? b : a;
}

/* Recompute @n's aggregates from its lists and children; true if they changed. */
static bool pull(struct pathnode *n)
{
        const struct pathnode *kids[2] = { n->left, n->right };
        struct pi_ref mn[_AGG_MAX], mx[_AGG_MAX];
        bool changed = false;

        mn[AGG_DEVPATH] = n->first[PI_DEVPATH];
        mx[AGG_DEVPATH] = n->last[PI_DEVPATH];
        mn[AGG_ALL] = earlier(n->first[PI_DEVPATH], n->first[PI_OLD]);
        mx[AGG_ALL] = later(n->last[PI_DEVPATH], n->last[PI_OLD]);
        for (int k = 0; k < _AGG_MAX; k++) {
                for (int j = 0; j < 2; j++)
                        if (kids[j]) {
                                mn[k] = earlier(mn[k], kids[j]->min[k]);
                                mx[k] = later(mx[k], kids[j]->max[k]);
                        }
                changed |= n->min[k].e != mn[k].e || n->max[k].e != mx[k].e;
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

/* A new entry @r of @kind on @n: widen the aggregates from @n up, no recomputation needed. */
static void widen_up(struct pathnode *n, enum pi_kind kind, struct pi_ref r)
{
        for (; n; n = n->up) {
                bool changed = false;
                for (int k = kind == PI_DEVPATH ? AGG_DEVPATH : AGG_ALL; k < _AGG_MAX; k++) {
                        if (!n->min[k].e || r.seq < n->min[k].seq) {
                                n->min[k] = r;
                                changed = true;
                        }
                        if (!n->max[k].e || r.seq > n->max[k].seq) {
                                n->max[k] = r;
                                changed = true;
                        }
                }
                if (!changed)
                        break;
        }
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
        uint64_t hash = hash_bytes(path, len);
        struct pathnode *n = lookup(pi, path, len, hash);

        if (n)
                return n;
        n = calloc(1, sizeof(*n) + len + 1);
        if (!n)
                return NULL;
        memcpy(n->key, path, len);
        for (int k = 0; k < _PI_KIND_MAX; k++)
                list_init(&n->entries[k]);
        n->len = len;
        n->hash = hash;
        n->prio = (uint32_t)((hash * 0x9E3779B97F4A7C15ULL) >> 32);
        if (hash_table_add(&pi->table, hash, n) < 0) {
                free(n);
                return NULL;
        }
        treap_insert(pi, n);
        return n;
}

static void node_put(struct pathindex *pi, struct pathnode *n)
{
        if (--n->refs > 0)
                return;
        hash_table_remove(&pi->table, n->hash, hash_item_is, n);
        treap_remove(pi, n);
        free(n);
}

void pathindex_clear(struct pathindex *pi)
{
        struct pathnode *n;
        size_t iter = 0;

        while ((n = hash_table_next(&pi->table, &iter)))
                free(n);
        hash_table_clear(&pi->table);
        pi->root = NULL;
}

static struct pi_ref ref_of(struct pi_entry *e)
{
        return (struct pi_ref){ .seq = e ? e->seq : 0, .e = e };
}

/* The entry at @link on @n's list of @kind, none for the list head. */
static struct pi_ref ref_at(const struct pathnode *n, enum pi_kind kind, struct list_node *link)
{
        return link == &n->entries[kind] ? (struct pi_ref){ .e = NULL }
                                         : ref_of(list_entry(link, struct pi_entry, link));
}

/* Refresh @n's cached head and tail of @kind after a change to its list. */
static void ends_update(struct pathnode *n, enum pi_kind kind)
{
        n->first[kind] = ref_at(n, kind, n->entries[kind].next);
        n->last[kind] = ref_at(n, kind, n->entries[kind].prev);
}

int pathindex_add(struct pathindex *pi, struct pi_entry *e, enum pi_kind kind, const char *path, size_t len,
                  uint64_t seq)
{
        struct pathnode *n = node_get(pi, path, len);
        struct list_node *after;

        if (!n)
                return -ENOMEM;
        n->refs++;
        e->seq = seq;
        e->node = n;
        e->kind = kind;
        /* Normally the new entry is the latest; a late one walks back. */
        for (after = n->entries[kind].prev;
             after != &n->entries[kind] && list_entry(after, struct pi_entry, link)->seq > seq;
             after = after->prev)
                ;
        list_insert_after(after, &e->link);
        ends_update(n, kind);
        widen_up(n, kind, ref_of(e));
        return 0;
}

void pathindex_remove(struct pathindex *pi, struct pi_entry *e)
{
        struct pathnode *n = e->node;
        enum pi_kind kind = e->kind;

        if (!n)
                return;
        list_unlink(&e->link);
        ends_update(n, kind);
        e->node = NULL;
        pull_up(n);
        node_put(pi, n);
}

/* ---- queries ------------------------------------------------------------- */

/*
 * Merge a set of entries into @hits, given its earliest and latest entry.
 * @before: the latest entry below @bound if known exactly (the querying
 * entry's own predecessor), else none.
 */
static void merge(struct pi_hits *hits, struct pi_ref first, struct pi_ref last, struct pi_ref before,
                  uint64_t bound)
{
        struct pi_ref w;

        if (!first.e || first.seq >= bound)
                return;
        hits->earliest = earlier(hits->earliest, first);
        /* Prefer the latest earlier entry: when it finishes, the others have
         * usually finished too.  Without an exact one, the earliest will do. */
        w = before.e ? before : last.seq < bound ? last : first;
        hits->wait_on = later(hits->wait_on, w);
}

uint64_t pathindex_first_on(const struct pathindex *pi, const char *path, size_t len, enum pi_kind kind)
{
        const struct pathnode *n = lookup(pi, path, len, hash_bytes(path, len));

        return n ? n->first[kind].seq : 0;
}

static const struct pi_ref none = { .e = NULL };

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
                merge(hits, n->min[k], n->max[k], none, bound);
}

static void merge_node(struct pi_hits *hits, const struct pathnode *n, int k, uint64_t bound)
{
        if (k == AGG_ALL)
                merge(hits, earlier(n->first[PI_DEVPATH], n->first[PI_OLD]),
                      later(n->last[PI_DEVPATH], n->last[PI_OLD]), none, bound);
        else
                merge(hits, n->first[PI_DEVPATH], n->last[PI_DEVPATH], none, bound);
}

/*
 * One side of the split node of a range query: from @m (a child of the split
 * node) down, every node is in the range or beyond it on one side.  On the
 * left side (@left) a node in the range has its whole right subtree in it,
 * and the rest of the range lies to its left; the right side mirrors that.
 */
static void related_side(const struct pathnode *m, const struct pathnode *p, int k, uint64_t bound, bool left,
                         struct pi_hits *hits)
{
        while (m) {
                if (classify(m, p->key, p->len) == 0) {
                        merge_node(hits, m, k, bound);
                        merge_subtree(hits, left ? m->right : m->left, k, bound);
                        m = left ? m->left : m->right;
                } else {
                        m = left ? m->right : m->left;
                }
        }
}

/* Entries on strict descendants of @p (keys starting with @p + "/"). */
static void related_below(const struct pathindex *pi, const struct pathnode *p, int k, uint64_t bound,
                          struct pi_hits *hits)
{
        const struct pathnode *n = pi->root;
        int c;

        while (n && (c = classify(n, p->key, p->len)) != 0)
                n = c < 0 ? n->right : n->left;
        if (!n)
                return;
        merge_node(hits, n, k, bound);
        related_side(n->left, p, k, bound, true, hits);
        related_side(n->right, p, k, bound, false, hits);
}

void pathindex_related(const struct pathindex *pi, const struct pi_entry *e, struct pi_hits *hits)
{
        enum pi_kind kind = e->kind;
        const struct pathnode *p = e->node;
        uint64_t h = HASH_SEED, bound = e->seq;
        int kinds = kind == PI_DEVPATH ? _PI_KIND_MAX : 1;

        /* Ancestors (prefixes ending before a '/') and the path itself. */
        for (size_t i = 0;; i++) {
                if (i == p->len || p->key[i] == '/') {
                        const struct pathnode *a = i == p->len ? p : lookup(pi, p->key, i, h);
                        for (int k = 0; a && k < kinds; k++)
                                merge(hits, a->first[k], a->last[k],
                                      a == p && k == (int)kind ? ref_at(p, kind, e->link.prev) : none, bound);
                }
                if (i == p->len)
                        break;
                h = hash_step(h, (unsigned char)p->key[i]);
        }
        related_below(pi, p, kind == PI_DEVPATH ? AGG_ALL : AGG_DEVPATH, bound, hits);
}
