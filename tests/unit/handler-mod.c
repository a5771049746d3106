/* SPDX-License-Identifier: MIT */
/*
 * Misbehaving handlers for test-handler-loader, one per MOD_VARIANT:
 *   1 wrong ABI number   2 wrong struct size   3 init fails
 *   4 overflows the environment when the event has OVERFLOW=1
 *   5 add_env returns -EIO after adding a variable
 *   6 exports no handler symbol
 *   7 adds LD_PRELOAD, BASH_ENV, IFS and PATH besides MOD_LOADED
 *   8 aborts (kills hotplugd) on an event whose DEVPATH ends in "/hppoison"
 *     (the poison guard's test, tests/integration case "poison")
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <hotplugd/handler.h>

#if MOD_VARIANT != 6
static int mod_init(const struct hotplugd_host *host, void **data)
{
        (void)data;
#if MOD_VARIANT == 3
        host->log(host, HOTPLUGD_LOG_ERR, "refusing to start");
        return -ENODEV;
#else
        (void)host;
        return 0;
#endif
}

static int mod_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *ev,
                       struct hotplugd_env *env)
{
        char key[32];
        int r = 0;

        (void)data;
#if MOD_VARIANT == 4
        if (!host->event_get(ev, "OVERFLOW"))
                return host->env_add(env, "MOD_OVERFLOW_SEEN", "no");
        for (unsigned i = 0; r == 0; i++) {
                strcpy(key, "MOD_FILL_");
                key[9] = (char)('A' + i % 26);
                key[10] = (char)('A' + i / 26 % 26);
                key[11] = '\0';
                r = host->env_add(env, key, "0123456789012345678901234567890123456789012345678901234567890123");
        }
        return r;
#elif MOD_VARIANT == 5
        (void)ev;
        (void)key;
        r = host->env_add(env, "MOD_PARTIAL", "1");
        return r < 0 ? r : -EIO;
#elif MOD_VARIANT == 8
        const char *devpath = host->event_get(ev, "DEVPATH");
        size_t n = devpath ? strlen(devpath) : 0;

        (void)key;
        (void)r;
        if (n >= 9 && strcmp(devpath + n - 9, "/hppoison") == 0)
                abort();
        return host->env_add(env, "MOD_LOADED", "1");
#elif MOD_VARIANT == 7
        (void)ev;
        (void)key;
        if ((r = host->env_add(env, "LD_PRELOAD", "/tmp/evil.so")) < 0 ||
            (r = host->env_add(env, "BASH_ENV", "/tmp/evil.sh")) < 0 || (r = host->env_add(env, "IFS", "/")) < 0 ||
            (r = host->env_add(env, "PATH", "/tmp")) < 0)
                return r;
        return host->env_add(env, "MOD_LOADED", "1");
#else
        (void)ev;
        (void)key;
        (void)r;
        return host->env_add(env, "MOD_LOADED", "1");
#endif
}

HOTPLUGD_HANDLER_EXPORT = {
#if MOD_VARIANT == 1
        .abi = HOTPLUGD_HANDLER_ABI + 1,
#else
        .abi = HOTPLUGD_HANDLER_ABI,
#endif
#if MOD_VARIANT == 2
        .size = sizeof(struct hotplugd_handler) + 16,
#else
        .size = sizeof(struct hotplugd_handler),
#endif
        .id = "mod" ,
        .init = mod_init,
        .add_env = mod_add_env,
};
#else
__attribute__((visibility("default"))) int hotplugd_handler_v0 = 0;
#endif
