/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * One intrusive doubly linked list, circular with a head node.
 *
 * Embed a struct list_node in the element and a struct list_node head in
 * the owner; list_init() the head (or use LIST_HEAD_INIT) before use.  A node
 * that is not on any list has prev == next == NULL (list_node_init()), so
 * list_unlink() is safe to call twice and list_linked() tells whether the
 * element is on a list.  Nothing here allocates; elements are owned by
 * whoever put them on the list.
 *
 *   struct job { struct list_node link; ... };
 *   struct list_node jobs = LIST_HEAD_INIT(jobs);
 *   list_add_tail(&jobs, &j->link);
 *   list_for_each_safe(j, next, &jobs, link) { ... list_unlink(&j->link); }
 */

#include <stdbool.h>
#include <stddef.h>

struct list_node {
        struct list_node *prev, *next;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }

/* The element that contains @node (its member @member). */
#define list_entry(node, type, member) ((type *)((char *)(node) - offsetof(type, member)))

static inline void list_init(struct list_node *head)
{
        head->prev = head->next = head;
}

/* An element's node, not on any list. */
static inline void list_node_init(struct list_node *node)
{
        node->prev = node->next = NULL;
}

static inline bool list_empty(const struct list_node *head)
{
        return head->next == head;
}

static inline bool list_linked(const struct list_node *node)
{
        return node->next != NULL;
}

static inline void list_insert_after(struct list_node *pos, struct list_node *node)
{
        node->prev = pos;
        node->next = pos->next;
        pos->next->prev = node;
        pos->next = node;
}

static inline void list_add_head(struct list_node *head, struct list_node *node)
{
        list_insert_after(head, node);
}

static inline void list_add_tail(struct list_node *head, struct list_node *node)
{
        list_insert_after(head->prev, node);
}

/* Take @node off its list; a no-op for a node on none. */
static inline void list_unlink(struct list_node *node)
{
        if (!node->next)
                return;
        node->prev->next = node->next;
        node->next->prev = node->prev;
        list_node_init(node);
}

/* The first element, or NULL for an empty list. */
#define list_first(head, type, member) \
        (list_empty(head) ? NULL : list_entry((head)->next, type, member))

#define list_for_each(pos, head, member) \
        for (pos = list_entry((head)->next, __typeof__(*pos), member); \
             &pos->member != (head); \
             pos = list_entry(pos->member.next, __typeof__(*pos), member))

/* As list_for_each(), but @pos may be unlinked or freed in the body. */
#define list_for_each_safe(pos, n, head, member) \
        for (pos = list_entry((head)->next, __typeof__(*pos), member), \
             n = list_entry(pos->member.next, __typeof__(*pos), member); \
             &pos->member != (head); \
             pos = n, n = list_entry(n->member.next, __typeof__(*n), member))
