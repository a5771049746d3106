/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What built-in module loading (load-modules, loop/kmod-load.c) decides,
 * with no thread, clock or libkmod: whether a MODALIAS is one to look up,
 * and which lookups and loads to issue so that the same alias or module is
 * never in flight twice and one already loaded is not loaded again.
 *
 * An alias is in the table from modload_begin() until modload_alias_end():
 * first looked up (by the caller's loader), then waiting for the modules
 * the lookup named that were not loaded yet; a module is in the table
 * while its load is in flight, with the aliases that wait for it.  The
 * caller keeps its waiting events on an alias's @waiters.
 *
 * Invariants:
 *  - an alias's @pending is the number of modules in the table that list
 *    it; it is complete (its modules were tried) when it was looked up and
 *    @pending is 0;
 *  - at most HP_KMOD_ALIASES_MAX aliases and, for each, at most
 *    HP_KMOD_MODULES_PER_ALIAS modules followed: so at most their product
 *    modules in flight;
 *  - every count in struct modload_counts only grows.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"
#include "shared/hash.h"
#include "shared/list.h"

/* Since the start: what the loader saw and did. */
struct modload_counts {
        uint64_t aliases;       /* events with a MODALIAS the loader took */
        uint64_t invalid;       /* MODALIAS refused (too long, not printable ASCII, blanks) */
        uint64_t lookups;       /* aliases looked up */
        uint64_t not_found;     /* of them, naming no module */
        uint64_t loads;         /* module loads issued */
        uint64_t saved;         /* lookups or loads not issued: the alias or module was in flight or loaded */
        uint64_t loaded;        /* loads that inserted the module (or found it inserted meanwhile) */
        uint64_t failed;        /* loads or lookups that failed */
        uint64_t blacklisted;   /* modules the blacklist kept out */
        uint64_t timeouts;      /* events whose agents started before their modules were tried */
        uint64_t skipped;       /* events not held: HP_KMOD_ALIASES_MAX in flight, or a name too many */
};

/* What a load ended with (the loader's report). */
enum modload_outcome {
        MODLOAD_INSERTED,    /* inserted now */
        MODLOAD_PRESENT,     /* it was loaded (or built in) when the loader looked */
        MODLOAD_BLACKLISTED, /* a blacklist line kept it out */
        MODLOAD_FAILED,
};

struct modload_alias {
        struct list_node waiters;   /* the caller's events waiting for it */
        void *userdata;             /* the caller's */
        void *timer;                /* the caller's timer */
        unsigned pending;           /* modules it waits for */
        bool looked_up;
        bool expired;               /* its waiters went on (timeout): later ones do not wait */
        char alias[];
};

struct modload {
        struct hash_table aliases;  /* struct modload_alias by its text */
        struct hash_table modules;  /* struct modload_module by its name */
        struct modload_counts counts;
};

/**
 * modload_alias() - the alias to hand to libkmod of a MODALIAS value.
 * @modalias: the event's MODALIAS value (borrowed)
 * @ret: receives the alias: @modalias without the newline that ends an x86
 *       cpu's (the kernel sends it so), untouched on failure
 *
 * Return: 0; -E2BIG at HP_MODALIAS_MAX bytes or more (the newline not
 * counted); -EINVAL if empty or holding a byte outside printable ASCII or
 * a blank (but that one final newline).
 */
int modload_alias(const char *modalias, char ret[HP_MODALIAS_MAX]);

void modload_init(struct modload *ml);
/* Free every alias and module in @ml (their waiters are the caller's, dropped before). */
void modload_clear(struct modload *ml);

/**
 * modload_begin() - an event's (valid) @alias: look it up, or wait for it?
 * @ml: state
 * @alias: borrowed (copied)
 * @ret: the alias's entry (the table's), set when the event is to wait
 *
 * Counts the alias, and as saved when it is in flight already.
 * Return: 1 new: look it up (modload_looked_up() follows); 0 in flight:
 * wait for it; -ETIME its waiters went on at a timeout: go on at once;
 * -ENOSPC HP_KMOD_ALIASES_MAX in flight, or -ENOMEM: go on without it
 * (counted as skipped).
 */
int modload_begin(struct modload *ml, const char *alias, struct modload_alias **ret);

/**
 * modload_looked_up() - the lookup of @a named @n modules.
 * @ml: state
 * @a: the alias, looked up now
 * @names: the module names (borrowed)
 * @present: for each, whether it is loaded (or built in) already
 * @issue: filled: for each, whether the caller issues its load now (the
 *         caller reports each with modload_module_done())
 * @n: how many; past HP_KMOD_MODULES_PER_ALIAS the rest are skipped
 *
 * A module loaded already or in flight is counted as saved and not issued.
 * Return: 1 @a is complete (the caller releases its waiters and ends it),
 * 0 it waits for modules; -ENOMEM (nothing issued; @a counts as complete).
 */
int modload_looked_up(struct modload *ml, struct modload_alias *a, const char *const *names,
                      const bool *present, bool *issue, size_t n);

/**
 * modload_module_done() - the load of @name ended with @outcome.
 * @ml: state
 * @name: borrowed
 * @outcome: what the loader said
 * @fn: called with each alias that waited for it, and whether it is
 *      complete now (then the caller releases its waiters and calls
 *      modload_alias_end()); may be NULL
 * @userdata: for @fn
 * Return: the aliases that waited for it, or -ENOENT if it was not in flight.
 */
int modload_module_done(struct modload *ml, const char *name, enum modload_outcome outcome,
                        void (*fn)(struct modload_alias *a, bool complete, void *userdata), void *userdata);

/* @a's lookup failed: counted; it is complete. */
void modload_lookup_failed(struct modload *ml, struct modload_alias *a);

/* Its waiters went on before it completed: later ones go on at once (-ETIME); counted per event. */
void modload_alias_expire(struct modload *ml, struct modload_alias *a, size_t events);

/* @a is complete (or expired and complete): out of the table, freed. Its waiters must be gone. */
void modload_alias_end(struct modload *ml, struct modload_alias *a);

/* Aliases and modules in flight now. */
size_t modload_aliases(const struct modload *ml);
size_t modload_modules(const struct modload *ml);
