/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Helpers for the handler tests: build a kernel-format datagram, run it
 * through a chain, and look at the environment an agent would get
 * (uevent_dup() + spawn_env_build(), exactly as the daemon does).
 */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shared/envbuf.h"
#include "pipeline/handlers.h"
#include "pipeline/spawner.h"
#include "test.h"
#include "uevent/uevent.h"

struct run {
        char buf[HP_UEVENT_MAX_SIZE];
        uint16_t vars[HP_UEVENT_MAX_VARS];
        struct uevent view;
        struct envbuf env;
        char name[HP_NAME_MAX];
        struct handler_trace trace;
        struct uevent *ev;      /* dup'd, when the event runs */
        struct spawn_env se;
        int r;
};

static inline void run_release(struct run *R)
{
        free(R->ev);
        R->ev = NULL;
}

/* Run ACTION DEVPATH SUBSYSTEM with extra "KEY=VALUE" entries (NULL-terminated varargs). */
static inline int run_event(struct handler_chain *c, struct run *R, const char *action, const char *devpath,
                            const char *subsystem, ...)
{
        static unsigned long long seq = 1000;
        enum uevent_reject why;
        size_t len = 0;
        const char *kv;
        va_list ap;

        run_release(R);
        len += (size_t)sprintf(R->buf + len, "%s@%s", action, devpath) + 1;
        len += (size_t)sprintf(R->buf + len, "ACTION=%s", action) + 1;
        len += (size_t)sprintf(R->buf + len, "DEVPATH=%s", devpath) + 1;
        len += (size_t)sprintf(R->buf + len, "SUBSYSTEM=%s", subsystem) + 1;
        va_start(ap, subsystem);
        while ((kv = va_arg(ap, const char *)))
                len += (size_t)sprintf(R->buf + len, "%s", kv) + 1;
        va_end(ap);
        len += (size_t)sprintf(R->buf + len, "SEQNUM=%llu", ++seq) + 1;
        check_int(uevent_parse(R->buf, len, R->vars, &R->view, &why), 0);

        envbuf_init(&R->env);
        R->r = handler_chain_run_traced(c, &R->view, &R->env, R->name, &R->trace);
        if (R->r == HANDLER_RUN) {
                check_int(uevent_dup(&R->view, &R->env, R->name[0] ? R->name : NULL, &R->ev), 0);
                spawn_env_build(R->ev, &R->se);
        }
        return R->r;
}

/* Value of @key in the agent environment of the last run, or NULL. */
static inline const char *agent_env(const struct run *R, const char *key)
{
        size_t k = strlen(key);

        if (!R->ev)
                return NULL;
        for (size_t i = 0; i < R->se.n; i++)
                if (strncmp(R->se.envp[i], key, k) == 0 && R->se.envp[i][k] == '=')
                        return R->se.envp[i] + k + 1;
        return NULL;
}

/* Value of @key in a sysfs "uevent" file (KEY=VALUE lines); static buffer. */
static inline const char *uevent_file_get(const char *path, const char *key)
{
        static char line[4096];
        size_t k = strlen(key);
        FILE *f = fopen(path, "re");

        if (!f)
                return NULL;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                if (strncmp(line, key, k) == 0 && line[k] == '=') {
                        fclose(f);
                        return line + k + 1;
                }
        }
        fclose(f);
        return NULL;
}

static inline struct handler_chain *chain_for(const char *sysfs_root)
{
        struct handler_config cfg = { .sysfs_root = sysfs_root };
        struct handler_chain *c = NULL;

        check_int(handler_chain_new(&cfg, &c), 0);
        return c;
}
