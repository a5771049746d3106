/* SPDX-License-Identifier: MIT */
/*
 * The scheduler's path index (see pathindex.h).
 *
 * Invariants:
 *  - a node exists exactly while refs > 0: the entries on it plus its child
 *    nodes; it is then in the hash table, and its parent (the node of its
 *    path up to the last '/', none for a path with one component) exists;
 *  - each list on[k] and sub[k] is sorted by seq; sub[k] of a node holds the
 *    entries of kind k on it or on any node below it;
 *  - depth is 1 for a node without parent, else its parent's plus one: an
 *    entry on a node of depth d has d + 1 links.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hash.h"
#include "shared/list.h"
#include "shared/macro.h"
#include "pipeline/pathindex.h"

struct pathnode {
        struct pathnode *parent;
        uint64_t hash;
        uint32_t refs;
        uint32_t depth;
        struct list_node on[_PI_KIND_MAX];
        struct list_node sub[_PI_KIND_MAX];
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

static struct pathnode *lookup(const struct pathindex *pi, const char *path, size_t len, uint64_t hash)
{
        return hash_table_get(&pi->table, hash, node_is, &(struct pi_key){ .path = path, .len = len });
}

/* Length of the parent path of @path: up to its last '/', 0 if it has none. */
static size_t parent_len(const char *path, size_t len)
{
        while (len > 1 && path[len - 1] != '/')
                len--;
        return len > 1 ? len - 1 : 0;
}

size_t pathindex_links(const char *path, size_t len)
{
        size_t n = 2;

        while ((len = parent_len(path, len)) > 0)
                n++;
        return n;
}

/* Drop one reference to @n; free it, and so up, when none is left. */
static void node_put(struct pathindex *pi, struct pathnode *n)
{
        while (n && (assert(n->refs > 0), --n->refs == 0)) {
                struct pathnode *up = n->parent;
                hash_table_remove(&pi->table, n->hash, hash_item_is, n);
                assert(pi->bytes >= sizeof(*n) + n->len + 1);
                pi->bytes -= sizeof(*n) + n->len + 1;
                free(n);
                n = up;
        }
}

/* The node of @path, created (with its ancestors) if missing; NULL on -ENOMEM.  The caller takes a reference. */
static struct pathnode *node_get(struct pathindex *pi, const char *path, size_t len)
{
        uint64_t hash = hash_bytes(path, len);
        struct pathnode *n = lookup(pi, path, len, hash), *up = NULL;
        size_t plen = parent_len(path, len);

        if (n)
                return n;
        if (plen > 0 && !(up = node_get(pi, path, plen)))
                return NULL;
        n = calloc(1, sizeof(*n) + len + 1);
        if (!n || hash_table_add(&pi->table, hash, n) < 0) {
                free(n);
                if (up && up->refs == 0) { /* made for this node: undo */
                        up->refs = 1;
                        node_put(pi, up);
                }
                return NULL;
        }
        memcpy(n->key, path, len);
        pi->bytes += sizeof(*n) + len + 1;
        n->len = len;
        n->hash = hash;
        n->parent = up;
        n->depth = up ? up->depth + 1 : 1;
        assert(n->depth + 1 == pathindex_links(path, len)); /* once per node */
        for (int k = 0; k < _PI_KIND_MAX; k++) {
                list_init(&n->on[k]);
                list_init(&n->sub[k]);
        }
        if (up)
                up->refs++;
        return n;
}

void pathindex_clear(struct pathindex *pi)
{
        struct pathnode *n;
        size_t iter = 0;

        while ((n = hash_table_next(&pi->table, &iter)))
                free(n);
        hash_table_clear(&pi->table);
        pi->bytes = 0;
}

static struct pi_link *link_of(struct list_node *node)
{
        return list_entry(node, struct pi_link, node);
}

/* @l's list stays sorted by seq around it (O(1): checked where a link goes in). */
static _unused_ bool link_in_order(const struct list_node *head, const struct pi_link *l)
{
        return (l->node.prev == head || link_of(l->node.prev)->seq < l->seq) &&
               (l->node.next == head || link_of(l->node.next)->seq > l->seq);
}

/*
 * Put @l on @head after every link with a lower seq: the tail, for an entry
 * that is the latest (the usual case).  A late one is placed by two walks at
 * once, back from the tail and on from @hint (a link on @head with a lower
 * seq; NULL: the head), so the cost is what lies on the shorter side.
 */
static void insert_sorted(struct list_node *head, struct pi_link *l, struct list_node *hint)
{
        struct list_node *back = head->prev, *on = hint ? hint : head;

        for (;;) {
                if (back == head || link_of(back)->seq < l->seq) {
                        on = back;
                        break;
                }
                if (on->next == head || link_of(on->next)->seq > l->seq)
                        break;
                back = back->prev;
                on = on->next;
        }
        list_insert_after(on, &l->node);
        assert(link_in_order(head, l));
}

int pathindex_add(struct pathindex *pi, struct pi_entry *e, enum pi_kind kind, const char *path, size_t len,
                  uint64_t seq, struct pi_link *links)
{
        struct pathnode *n = node_get(pi, path, len);
        struct list_node *hint = NULL;

        if (!n)
                return -ENOMEM;
        assert(n->len == len);
        n->refs++;
        *e = (struct pi_entry){ .seq = seq, .node = n, .links = links, .kind = kind };
        for (uint32_t i = 0; i <= n->depth; i++)
                links[i] = (struct pi_link){ .seq = seq, .e = e };
        insert_sorted(&n->on[kind], &links[0], NULL);
        /* Up the tree: what precedes the entry one level down precedes it here
         * too (its next link is on this level's list), a start for a late one. */
        for (struct pathnode *m = n; m; m = m->parent) {
                struct pi_link *l = &links[1 + n->depth - m->depth];
                insert_sorted(&m->sub[kind], l, hint);
                if (m->parent)
                        hint = l->node.prev == &m->sub[kind] ? NULL : &(link_of(l->node.prev) + 1)->node;
        }
        return 0;
}

void pathindex_remove(struct pathindex *pi, struct pi_entry *e)
{
        if (!e->node)
                return;
        for (uint32_t i = 0; i <= e->node->depth; i++)
                list_unlink(&e->links[i].node);
        node_put(pi, e->node);
        e->node = NULL;
}

uint64_t pathindex_first_on(const struct pathindex *pi, const char *path, size_t len, enum pi_kind kind)
{
        const struct pathnode *n = lookup(pi, path, len, hash_bytes(path, len));

        return n && !list_empty(&n->on[kind]) ? link_of(n->on[kind].next)->seq : 0;
}

/* ---- queries ------------------------------------------------------------- */

static const struct pi_ref none = { .e = NULL };

static struct pi_ref earlier(struct pi_ref a, struct pi_ref b)
{
        return !a.e || (b.e && b.seq < a.seq) ? b : a;
}

static struct pi_ref later(struct pi_ref a, struct pi_ref b)
{
        return !a.e || (b.e && b.seq > a.seq) ? b : a;
}

/* The link at @node as a ref, none for the list head @head. */
static struct pi_ref ref_at(const struct list_node *head, struct list_node *node)
{
        return node == head ? none : (struct pi_ref){ .seq = link_of(node)->seq, .e = link_of(node)->e };
}

/*
 * Merge a sorted list into @hits.  @before: the latest entry below @bound
 * if known exactly (the querying entry's own predecessor), else none; then
 * the tail is taken if it is earlier, else the head.
 */
static void merge(struct pi_hits *hits, const struct list_node *head, struct pi_ref before, uint64_t bound)
{
        struct pi_ref first = ref_at(head, head->next), last = ref_at(head, head->prev), w;

        if (!first.e || first.seq >= bound)
                return;
        hits->earliest = earlier(hits->earliest, first);
        /* Prefer the latest earlier entry: when it finishes, the others have
         * usually finished too.  Without an exact one, the earliest will do. */
        w = before.e ? before : last.seq < bound ? last : first;
        hits->wait_on = later(hits->wait_on, w);
}

void pathindex_related(const struct pi_entry *e, struct pi_hits *hits)
{
        const struct pathnode *n = e->node;
        int kinds = e->kind == PI_DEVPATH ? _PI_KIND_MAX : 1;
        struct list_node *own = &e->links[1].node;

        /* The path itself and below: for the entry's own kind, its predecessor is exact. */
        for (int k = 0; k < kinds; k++)
                merge(hits, &n->sub[k], k == (int)e->kind ? ref_at(&n->sub[k], own->prev) : none, e->seq);
        /* The ancestors. */
        for (const struct pathnode *a = n->parent; a; a = a->parent)
                for (int k = 0; k < kinds; k++)
                        merge(hits, &a->on[k], none, e->seq);
}
