/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The path index of the scheduler: held events by DEVPATH and DEVPATH_OLD.
 *
 * Each distinct path that some entry carries has one node, found two ways:
 * by a hash of the exact path (ancestor lookups: the ancestors of a path are
 * its prefixes that end just before a '/', see devpath_is_prefix()) and in a
 * treap ordered lexicographically by path, where the strict descendants of P
 * are exactly the keys starting with P + "/", a contiguous range.  Every
 * treap node carries the earliest and latest entry of its subtree, so "is
 * there an earlier entry below P" costs O(log paths).
 *
 * A node keeps two lists of entries, each sorted by SEQNUM: entries whose
 * event has the node's path as DEVPATH, and as DEVPATH_OLD.  Entries are
 * owned by the caller (embedded in its own per-event record); the index
 * owns the nodes, created on first use and freed when their last entry goes.
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

/* One event on one path.  @node is NULL while the entry is not indexed;
 * the other fields are set by pathindex_add(). */
struct pi_entry {
        uint64_t seq;
        struct pathnode *node;
        struct list_node link; /* on its node's list of @kind, sorted by seq */
        enum pi_kind kind;
};

struct pathindex {
        struct hash_table table; /* the nodes, by hash_bytes() of their path */
        struct pathnode *root;   /* of the treap */
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

/* Frees every node (entries stay the caller's, now dangling).  The index is empty afterwards. */
void pathindex_clear(struct pathindex *pi);

/**
 * pathindex_add() - index an entry.
 * @pi: the index
 * @e: the entry (borrowed until pathindex_remove(); its links are the index's meanwhile)
 * @kind: which list of the node
 * @path: the path (copied into the node if new), @len its length
 * @seq: the event's SEQNUM; the entry goes after every entry with a lower one
 *
 * Cost O(len) plus, for an entry that is not the latest on its path, the
 * entries after it on that path.
 * Return: 0 or -ENOMEM (nothing changed).
 */
int pathindex_add(struct pathindex *pi, struct pi_entry *e, enum pi_kind kind, const char *path, size_t len,
                  uint64_t seq);

/* Unindex @e (a no-op if it is not indexed); frees its node when that was the last entry. */
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
 * @pi: the index
 * @e: an indexed entry; only entries with a lower seq count.  For a
 *      PI_DEVPATH entry, both kinds of entries on related paths count (DEVPATH
 *      against DEVPATH and DEVPATH_OLD); for a PI_OLD entry only PI_DEVPATH
 *      entries do (DEVPATH_OLD against DEVPATH).
 * @hits: merged into: the earliest such entry, and one to wait on
 *
 * Related means: on the same path, an ancestor or a descendant.  Cost: one
 * hash probe per path component plus O(log paths).
 */
void pathindex_related(const struct pathindex *pi, const struct pi_entry *e, struct pi_hits *hits);
