/* SPDX-License-Identifier: MIT */
/*
 * Built-in module loading's decisions (modload.h): the aliases and the
 * modules in flight, each in a hash table by its text, and the counts.
 * No thread, clock or libkmod here: loop/kmod-load.c runs the lookups and
 * loads this says to issue and reports how they ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/modload.h"

/* A module whose load is in flight, and the aliases waiting for it. */
struct modload_module {
        struct modload_alias **aliases;
        size_t n, a;
        char name[];
};

static bool alias_is(const void *item, const void *key)
{
        return strcmp(((const struct modload_alias *)item)->alias, key) == 0;
}

static bool module_is(const void *item, const void *key)
{
        return strcmp(((const struct modload_module *)item)->name, key) == 0;
}

int modload_alias(const char *modalias, char ret[HP_MODALIAS_MAX])
{
        size_t n = 0;

        for (const unsigned char *p = (const unsigned char *)modalias; *p; p++, n++) {
                if (*p == '\n' && p[1] == '\0')
                        break;
                if (n + 1 >= HP_MODALIAS_MAX)
                        return -E2BIG;
                if (*p <= ' ' || *p > '~')
                        return -EINVAL;
        }
        if (n == 0)
                return -EINVAL;
        memcpy(ret, modalias, n);
        ret[n] = '\0';
        return 0;
}

void modload_init(struct modload *ml)
{
        memset(ml, 0, sizeof(*ml));
        hash_table_init(&ml->aliases);
        hash_table_init(&ml->modules);
}

void modload_clear(struct modload *ml)
{
        size_t i = 0;
        void *item;

        while ((item = hash_table_next(&ml->aliases, &i)))
                free(item);
        i = 0;
        while ((item = hash_table_next(&ml->modules, &i))) {
                free(((struct modload_module *)item)->aliases);
                free(item);
        }
        hash_table_clear(&ml->aliases);
        hash_table_clear(&ml->modules);
}

int modload_begin(struct modload *ml, const char *alias, struct modload_alias **ret)
{
        uint64_t h = hash_string(alias, NULL);
        struct modload_alias *a;
        size_t len;

        ml->counts.aliases++;
        a = hash_table_get(&ml->aliases, h, alias_is, alias);
        if (a) {
                ml->counts.saved++;
                if (a->expired) {
                        ml->counts.timeouts++;
                        return -ETIME;
                }
                *ret = a;
                return 0;
        }
        if (ml->aliases.n >= HP_KMOD_ALIASES_MAX) {
                ml->counts.skipped++;
                return -ENOSPC;
        }
        len = strlen(alias);
        a = calloc(1, sizeof(*a) + len + 1);
        if (!a || hash_table_add(&ml->aliases, h, a) < 0) {
                free(a);
                ml->counts.skipped++;
                return -ENOMEM;
        }
        memcpy(a->alias, alias, len + 1);
        list_init(&a->waiters);
        ml->counts.lookups++;
        *ret = a;
        return 1;
}

/* @a waits for @mod's load too. */
static int module_add_alias(struct modload_module *mod, struct modload_alias *a)
{
        if (mod->n == mod->a) {
                size_t na = mod->a ? 2 * mod->a : 4;
                struct modload_alias **v = realloc(mod->aliases, na * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                mod->aliases = v;
                mod->a = na;
        }
        mod->aliases[mod->n++] = a;
        a->pending++;
        return 0;
}

/* A module in flight for @a: the one already in the table, or a new one (*@issue). */
static int module_want(struct modload *ml, struct modload_alias *a, const char *name, bool *issue)
{
        uint64_t h = hash_string(name, NULL);
        struct modload_module *mod = hash_table_get(&ml->modules, h, module_is, name);
        size_t len = strlen(name);

        *issue = false;
        if (mod) {
                ml->counts.saved++;
                return module_add_alias(mod, a);
        }
        mod = calloc(1, sizeof(*mod) + len + 1);
        if (!mod)
                return -ENOMEM;
        memcpy(mod->name, name, len + 1);
        if (module_add_alias(mod, a) < 0 || hash_table_add(&ml->modules, h, mod) < 0) {
                if (mod->n)
                        a->pending--;
                free(mod->aliases);
                free(mod);
                return -ENOMEM;
        }
        ml->counts.loads++;
        *issue = true;
        return 0;
}

int modload_looked_up(struct modload *ml, struct modload_alias *a, const char *const *names,
                      const bool *present, bool *issue, size_t n)
{
        int r = 0;

        a->looked_up = true;
        if (n == 0)
                ml->counts.not_found++;
        for (size_t i = 0; i < n; i++) {
                issue[i] = false;
                if (i >= HP_KMOD_MODULES_PER_ALIAS) {
                        ml->counts.skipped++;
                        continue;
                }
                if (present[i]) {
                        ml->counts.saved++;
                        continue;
                }
                if (r == 0)
                        r = module_want(ml, a, names[i], &issue[i]);
        }
        if (r < 0)
                ml->counts.failed++;
        return r < 0 ? r : a->pending == 0;
}

int modload_module_done(struct modload *ml, const char *name, enum modload_outcome outcome,
                        void (*fn)(struct modload_alias *a, bool complete, void *userdata), void *userdata)
{
        struct modload_module *mod = hash_table_remove(&ml->modules, hash_string(name, NULL), module_is, name);
        int n;

        if (!mod)
                return -ENOENT;
        switch (outcome) {
        case MODLOAD_INSERTED:
                ml->counts.loaded++;
                break;
        case MODLOAD_PRESENT:
                ml->counts.loaded++;
                break;
        case MODLOAD_BLACKLISTED:
                ml->counts.blacklisted++;
                break;
        case MODLOAD_FAILED:
                ml->counts.failed++;
                break;
        }
        for (size_t i = 0; i < mod->n; i++) {
                struct modload_alias *a = mod->aliases[i];

                a->pending--;
                if (fn)
                        fn(a, a->pending == 0 && a->looked_up, userdata);
        }
        n = (int)mod->n;
        free(mod->aliases);
        free(mod);
        return n;
}

void modload_lookup_failed(struct modload *ml, struct modload_alias *a)
{
        a->looked_up = true;
        ml->counts.failed++;
}

void modload_alias_expire(struct modload *ml, struct modload_alias *a, size_t events)
{
        a->expired = true;
        ml->counts.timeouts += events;
}

void modload_alias_end(struct modload *ml, struct modload_alias *a)
{
        /* A module still in flight must not point at @a: take it off their lists. */
        if (a->pending > 0) {
                size_t i = 0;
                struct modload_module *mod;

                while (a->pending > 0 && (mod = hash_table_next(&ml->modules, &i)))
                        for (size_t k = 0; k < mod->n; k++)
                                if (mod->aliases[k] == a) {
                                        mod->aliases[k] = mod->aliases[--mod->n];
                                        a->pending--;
                                        k--;
                                }
        }
        hash_table_remove(&ml->aliases, hash_string(a->alias, NULL), hash_item_is, a);
        free(a);
}

size_t modload_aliases(const struct modload *ml)
{
        return ml->aliases.n;
}

size_t modload_modules(const struct modload *ml)
{
        return ml->modules.n;
}
