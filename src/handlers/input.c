/* SPDX-License-Identifier: MIT */
/*
 * input: PRODUCT=%x/%x/%x/%x (bustype/vendor/product/version), NAME and
 * PHYS of an input device (inputN).  The kernel still sends them, but
 * since 2.6.15 with NAME and PHYS in double quotes; with
 * handler_config.input_strip_quotes the quotes are removed, as agents of
 * the 2.6.14 era expect.  A missing PRODUCT is rebuilt from the id/
 * attributes (hex in sysfs).
 */
#include <string.h>

#include "handlers/builtin.h"
#include "shared/sysfs.h"

static const char *const input_subsystems[] = { "input", NULL };
static const char *const input_keys[] = { "PRODUCT", NULL };

/* KEY="value" → KEY=value (a value without both quotes is left alone). */
static int unquote(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key)
{
        const char *v = builtin_get(e, key);
        char buf[HP_ENV_ADD_MAX_BYTES];
        size_t n;

        if (!v || (n = strlen(v)) < 2 || v[0] != '"' || v[n - 1] != '"' || n - 2 >= sizeof(buf))
                return 0;
        memcpy(buf, v + 1, n - 2);
        buf[n - 2] = '\0';
        return handler_env_add(env, key, buf);
}

static int add_product(const struct hotplugd_event *e, struct hotplugd_env *env)
{
        static const char *const attrs[] = { "id/bustype", "id/vendor", "id/product", "id/version", NULL };
        unsigned long v[4];

        if (builtin_get(e, "PRODUCT") || strncmp(sysfs_basename(e->ev->devpath), "input", 5) != 0 ||
            builtin_read_ulongs(e, e->ev->devpath, attrs, 16, v) < 0)
                return 0;
        return builtin_learnf(e, env, "PRODUCT", "%lx/%lx/%lx/%lx", v[0], v[1], v[2], v[3]);
}

static int input_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                         struct hotplugd_env *env)
{
        int r;

        if (e->cfg->input_strip_quotes) {
                r = unquote(e, env, "NAME");
                if (r >= 0)
                        r = unquote(e, env, "PHYS");
                if (r < 0)
                        return r;
        }
        if (builtin_recalling(e))
                return builtin_recall(e, env, input_keys);
        return add_product(e, env);
}

const struct hotplugd_handler builtin_input = {
        BUILTIN_HANDLER("input", input_subsystems),
        .add_env = input_add_env,
};
