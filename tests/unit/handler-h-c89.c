/* SPDX-License-Identifier: MIT */
/* Compiled with -std=c89 -pedantic -Wall -Wextra -Werror: the handler ABI header stays C89 clean. */
#include <hotplugd/handler.h>

static int c89_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *ev,
                       struct hotplugd_env *env)
{
        (void)data;
        return host->env_addf(env, "C89", "%s", host->event_devpath(ev));
}

HOTPLUGD_HANDLER_EXPORT = {
        HOTPLUGD_HANDLER_ABI, sizeof(struct hotplugd_handler), "c89", 0, 0, 0, 0, 0, c89_add_env
};
