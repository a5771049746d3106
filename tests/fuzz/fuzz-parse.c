/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: anything a socket can deliver goes through uevent_parse();
 * an accepted event then takes the path the daemon gives it (uevent_dup()
 * with handler additions, lookups, the agent environment).  Nothing may
 * crash, read out of bounds, or break the documented invariants.
 */
#include <stdlib.h>
#include <string.h>

#include "shared/envbuf.h"
#include "shared/escape.h"
#include "fuzz.h"
#include "pipeline/spawner.h"
#include "uevent/uevent.h"

/* The rules of uevent.h, checked from the outside. */
static void check_view(const struct uevent *ev, const char *buf, size_t size)
{
        fuzz_check(ev->buf == buf && ev->size == size && buf[size - 1] == '\0');
        fuzz_check(ev->n_vars >= 4 && ev->n_vars <= HP_UEVENT_MAX_VARS);
        fuzz_check(ev->devpath[0] == '/' && strlen(ev->devpath) == ev->devpath_len);
        fuzz_check(!strstr(ev->devpath, "//") && !strchr(ev->subsystem, '/'));
        fuzz_check(ev->subsystem[0] != '.');
        fuzz_check(strspn(ev->action, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(ev->action));
        fuzz_check(uevent_get(ev, "ACTION") == ev->action);
        fuzz_check(uevent_get(ev, "DEVPATH") == ev->devpath);
        fuzz_check(uevent_get(ev, "SUBSYSTEM") == ev->subsystem);
        fuzz_check(uevent_get(ev, "DEVPATH_OLD") == ev->devpath_old);
        fuzz_check(uevent_get(ev, "SEQNUM") != NULL);
        for (unsigned i = 0; i < ev->n_vars; i++)
                fuzz_check(ev->var[i] < size && strchr(uevent_var(ev, i), '=') != NULL &&
                               strchr(uevent_var(ev, i), '=') - uevent_var(ev, i) <= HP_UEVENT_KEY_MAX);
}

/* What the handler chain might add: values taken from the event itself. */
static void add_extras(const struct uevent *ev, struct envbuf *extra)
{
        const char *v;

        envbuf_init(extra);
        (void)envbuf_add(extra, "DEVNAME", ev->devpath + 1);
        (void)envbuf_add(extra, "ACTION", ev->action);          /* replaces a kernel key */
        (void)envbuf_add(extra, "HOME", "/nonexistent");       /* must be ignored */
        (void)envbuf_add(extra, "LD_PRELOAD", "/nonexistent.so"); /* must be refused */
        if ((v = uevent_get(ev, "INTERFACE")))
                (void)envbuf_add(extra, "INTERFACE_NEW", v);
        (void)envbuf_add(extra, "DEVNAME", envbuf_get(extra, "ACTION")); /* value from itself */
}

static void use_event(const struct uevent *view)
{
        struct uevent *ev = NULL;
        struct spawn_env env;
        struct envbuf extra;
        char esc[256];

        add_extras(view, &extra);
        if (uevent_dup(view, &extra, view->n_vars & 1 ? NULL : "name", &ev) < 0)
                return;
        fuzz_check(memcmp(ev->buf, view->buf, view->size) == 0);
        fuzz_check(strcmp(ev->devpath, view->devpath) == 0);
        fuzz_check(uevent_get_extra(ev, "DEVNAME") != NULL);
        (void)uevent_get(ev, "SYNTH_UUID");
        (void)uevent_get(ev, "S");
        (void)uevent_get(ev, "A_KEY_THAT_IS_LONGER_THAN_MOST_DATAGRAMS_ARE_LONG");

        spawn_env_build(ev, &env);
        fuzz_check(env.n < SPAWN_ENV_MAX && env.envp[env.n] == NULL);
        for (size_t i = 0; i < env.n; i++) {
                fuzz_check(strchr(env.envp[i], '=') != NULL);
                /* HOME and PATH only as the fixed first two; no other refused key. */
                fuzz_check(i < 2 || !env_key_refused(env.envp[i], strcspn(env.envp[i], "=")));
                escape_cstr(env.envp[i], esc, sizeof(esc));
        }
        free(ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint16_t var[HP_UEVENT_MAX_VARS];
        enum uevent_reject why;
        struct uevent view;
        char esc[200], *buf;

        /* An exactly sized copy, so any read past the datagram is caught. */
        buf = malloc(size ? size : 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);

        if (uevent_parse(buf, size, var, &view, &why) == 0) {
                fuzz_check(why == UEVENT_OK);
                check_view(&view, buf, size);
                use_event(&view);
        } else {
                fuzz_check(why > UEVENT_OK && why < _UEVENT_REJECT_MAX);
                /* The daemon logs a rejected datagram escaped. */
                escape_bytes(buf, size, esc, sizeof(esc));
        }
        free(buf);
        return 0;
}
