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
        const struct manager_config *v = &c->values.cfg;
        unsigned lines = count_lines(data, size);
        uint64_t keys = 0;

        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                const char *s;

                if (oi->key)
                        keys |= option_bit(oi);
                if (!(c->set & option_bit(oi)))
                        continue;
                fuzz_check(oi->key != NULL);
                fuzz_check(c->line[i] >= 1 && c->line[i] <= lines);
                if (!option_is_text(oi->type))
                        continue;
                memcpy(&s, (const char *)&c->values + oi->offset, sizeof(s));
                fuzz_check(s >= c->text && s < c->text + sizeof(c->text));
                fuzz_check(memchr(s, '\0', HP_CONF_LINE_MAX) != NULL);
        }
        fuzz_check((c->set & ~keys) == 0);
        if (c->set & option_key_bit("rebroadcast"))
                fuzz_check(v->rebroadcast_group >= 2 && v->rebroadcast_group <= 32);
        if (c->set & option_key_bit("handler-cache"))
                fuzz_check(v->handlers.cache_size >= 1 && v->handlers.cache_size <= HP_DEVCACHE_MAX);
        if (c->set & option_key_bit("agent"))
                fuzz_check(v->agent[0] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct conf c, before;
        struct conf_error err;
        struct manager_config cfg;
        uint64_t cli_set;
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
        cli_set = size && (data[0] & 1) ? option_key_bit("agent") : 0;
        options_defaults(&cfg);
        cfg.agent = "/cli/agent";
        conf_apply(&c, &cfg, cli_set);
        if (cli_set)
                fuzz_check(strcmp(cfg.agent, "/cli/agent") == 0);
        else if (c.set & option_key_bit("agent"))
                fuzz_check(cfg.agent == c.values.cfg.agent || cfg.hotplug_d != NULL);
        return 0;
}
