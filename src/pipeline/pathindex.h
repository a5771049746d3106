/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The path index of the scheduler: held events by DEVPATH and DEVPATH_OLD.
 *
 * The paths form a tree: one node per path that an entry is on, and one per
 * ancestor of such a path (its prefixes that end just before a '/', see
 * devpath_is_prefix()), each linked to its parent's node.  A node is found
 * by the hash of its path (shared/hash.h); its ancestors are a walk up the
 * parent links, with no hashing.
 *
 * A node keeps, per kind (DEVPATH, DEVPATH_OLD), two lists sorted by
 * SEQNUM: the entries on exactly its path ("on"), and the entries on its
 * path or below it ("sub").  An entry is on one "on" list and on the "sub"
 * list of its node and of each ancestor, through links the caller provides
 * (pathindex_links() of them).  So the entries below a path are one list,
 * and the latest earlier one on a path or below is one link back.
 *
 * Entries and their links are owned by the caller (embedded in its own
 * per-event record); the index owns the nodes, created on first use and
 * freed when no entry is on them or below them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/hash.h"
#include "shared/list.h"

enum pi_kind {
        PI_DEVPATH,
        PI_OLD,
        _PI_KIND_MAX,
};

struct pathnode;
struct pi_entry;

/* An entry's place on one list of one node; the SEQNUM is copied in so
 * that walking a list reads no entry. */
struct pi_link {
        struct list_node node;
        uint64_t seq;
        struct pi_entry *e;
};

/* One event on one path.  @node is NULL while the entry is not indexed;
 * the other fields are set by pathindex_add(). */
struct pi_entry {
        uint64_t seq;
        struct pathnode *node;
        struct pi_link *links; /* [0]: on the node's "on" list; [1 + i]: on the "sub" list i nodes up */
        enum pi_kind kind;
};

struct pathindex {
        struct hash_table table; /* the nodes, by hash_bytes() of their path */
        size_t bytes;            /* the nodes' allocations: 0 when there is none */
};

/* An entry and its seq (kept together so comparisons need not touch the entry). */
struct pi_ref {
        uint64_t seq;
        struct pi_entry *e; /* NULL: none */
};

/* The earliest related entry found, and the one to wait on (a late one, so that
 * chains of events on one path wake one another one by one). */
struct pi_hits {
        struct pi_ref earliest;
        struct pi_ref wait_on;
};

/* Links an entry on @path (@len bytes) needs: its depth in the tree, plus one. */
size_t pathindex_links(const char *path, size_t len);

/* Frees every node (entries stay the caller's, now dangling).  The index is empty afterwards. */
void pathindex_clear(struct pathindex *pi);

/**
 * pathindex_add() - index an entry.
 * @pi: the index
 * @e: the entry (borrowed until pathindex_remove(); its links are the index's meanwhile)
 * @kind: which lists of the nodes
 * @path: the path (copied into new nodes), @len its length
 * @seq: the event's SEQNUM; the entry goes after every entry with a lower one
 * @links: pathindex_links(@path, @len) links (borrowed, as @e)
 *
 * Cost O(depth) plus, for an entry that is not the latest, the later
 * entries on the lists it goes on.
 * Return: 0 or -ENOMEM (nothing changed).
 */
int pathindex_add(struct pathindex *pi, struct pi_entry *e, enum pi_kind kind, const char *path, size_t len,
                  uint64_t seq, struct pi_link *links);

/* Unindex @e (a no-op if it is not indexed); frees the nodes nothing is on or below any more. */
void pathindex_remove(struct pathindex *pi, struct pi_entry *e);

/**
 * pathindex_first_on() - the lowest seq of the entries on exactly @path.
 * @pi: the index
 * @path: the path (borrowed), @len its length
 * @kind: which list of the path's node
 * Return: that seq, or 0 if no entry of @kind is on @path.  Cost: one hash probe.
 */
uint64_t pathindex_first_on(const struct pathindex *pi, const char *path, size_t len, enum pi_kind kind);

/**
 * pathindex_related() - entries earlier than @e on paths related to @e's path.
 * @e: an indexed entry; only entries with a lower seq count.  For a
 *      PI_DEVPATH entry, both kinds of entries on related paths count (DEVPATH
 *      against DEVPATH and DEVPATH_OLD); for a PI_OLD entry only PI_DEVPATH
 *      entries do (DEVPATH_OLD against DEVPATH).
 * @hits: merged into: the earliest such entry, and one to wait on
 *
 * Related means: on the same path, an ancestor or a descendant.  Cost: O(depth).
 */
void pathindex_related(const struct pi_entry *e, struct pi_hits *hits);
