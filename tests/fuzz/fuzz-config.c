/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the configuration file parser (conffile.h) on any bytes.
 *
 * Invariants: parsing is all or nothing (a refused file leaves the caller's
 * struct untouched and the error names the file); an accepted file sets
 * only known keys, each on a line of the file, with NUL-terminated strings
 * and values in the ranges hotplugd.conf(5) gives; applying it to the
 * defaults keeps whatever the command line set.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/conffile.h"
#include "config/options.h"
#include "fuzz.h"
#include "loop/manager.h"

static unsigned count_lines(const uint8_t *data, size_t size)
{
        unsigned n = 1;

        for (size_t i = 0; i < size; i++)
                n += data[i] == '\n';
        return n;
}

static void check_accepted(const struct conf *c, const uint8_t *data, size_t size)
{
        const char *strings[] = { c->agent, c->hotplug_d, c->handler_dir, c->sysfs, c->record,
                                  c->filter_policy, c->firmware_path };
        unsigned lines = count_lines(data, size);

        fuzz_check(c->set < CONF_BIT(_CONF_KEY_MAX));
        for (int k = 0; k < _CONF_KEY_MAX; k++) {
                fuzz_check(conf_key_to_string(k) != NULL);
                if (c->set & CONF_BIT(k))
                        fuzz_check(c->line[k] >= 1 && c->line[k] <= lines);
        }
        for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
                fuzz_check(memchr(strings[i], '\0', HP_CONF_LINE_MAX) != NULL);
        if (c->set & CONF_BIT(CONF_REBROADCAST))
                fuzz_check(c->rebroadcast >= 2 && c->rebroadcast <= 32);
        if (c->set & CONF_BIT(CONF_HANDLER_CACHE))
                fuzz_check(c->handler_cache >= 1 && c->handler_cache <= HP_DEVCACHE_MAX);
        if (c->set & CONF_BIT(CONF_AGENT))
                fuzz_check(c->agent[0] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct conf c, before;
        struct conf_error err;
        struct manager_config cfg;
        uint32_t cli_set;
        int r;

        memset(&c, 0xa5, sizeof(c));
        before = c;
        memset(&err, 0, sizeof(err));
        r = conf_parse("fuzz.conf", (const char *)data, size, &c, &err);
        if (r < 0) {
                fuzz_check(r == -EINVAL || r == -EFBIG);
                fuzz_check(memcmp(&c, &before, sizeof(c)) == 0);
                fuzz_check(strncmp(err.msg, "fuzz.conf", 9) == 0 && memchr(err.msg, '\0', sizeof(err.msg)));
                return 0;
        }
        fuzz_check(r == 0);
        check_accepted(&c, data, size);

        /* The command line keeps what it set: here the agent, when the first byte is odd. */
        cli_set = size && (data[0] & 1) ? CONF_BIT(CONF_AGENT) : 0;
        options_defaults(&cfg);
        cfg.agent = "/cli/agent";
        conf_apply(&c, &cfg, cli_set);
        if (cli_set)
                fuzz_check(strcmp(cfg.agent, "/cli/agent") == 0);
        else if (c.set & CONF_BIT(CONF_AGENT))
                fuzz_check(cfg.agent == c.agent || cfg.hotplug_d != NULL);
        return 0;
}
