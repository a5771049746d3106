/* SPDX-License-Identifier: MIT */
/*
 * hotplugd --check-config --verbose: the settings in effect, one line per
 * option, "NAME VALUE # SOURCE", as `sshd -T` prints them.  Values are read
 * back from struct options through the option table, so every option is
 * printed without a list of its own here; SOURCE says which of the three
 * layers (default, file, command line) the value came from.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "config/conffile.h"
#include "config/options.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/time-util.h"

/* An unsigned member of @size bytes at @p, as option_store() wrote it. */
static uint64_t load_uint(const char *p, size_t size)
{
        uint32_t w;
        uint64_t v;

        if (size == sizeof(w)) {
                memcpy(&w, p, sizeof(w));
                return w;
        }
        memcpy(&v, p, sizeof(v));
        return v;
}

/* @oi's value in @o as text, in @buf or a static string; NULL for a row that holds no setting. */
static const char *value_text(const struct options *o, const struct option_info *oi, char *buf, size_t size)
{
        const char *p = (const char *)o + oi->offset;
        const char *s;
        uint64_t u;
        bool b;
        int i;

        if (option_is_text(oi->type)) {
                memcpy(&s, p, sizeof(s));
                if (s)
                        return s;
                if (oi->def_text && strchr(oi->def_text, ' ')) {
                        snprintf(buf, size, "(%s)", oi->def_text); /* "(every subsystem)" */
                        return buf;
                }
                return oi->def_text ? oi->def_text : "(none)";
        }
        switch (oi->type) {
        case OPTION_UINT:
        case OPTION_AUTO_UINT:
        case OPTION_SIZE:
        case OPTION_SECONDS:
                u = load_uint(p, oi->size);
                if (oi->type == OPTION_SECONDS)
                        u /= USEC_PER_SEC;
                if (u == 0)
                        return oi->type == OPTION_AUTO_UINT ? "auto" : oi->def_text ? oi->def_text : "(none)";
                snprintf(buf, size, "%" PRIu64, u);
                return buf;
        case OPTION_BOOL:
                memcpy(&b, p, sizeof(b));
                return b ? "yes" : "no";
        case OPTION_SPEED: {
                double d;

                memcpy(&d, p, sizeof(d));
                if (d == 0)
                        return "max";
                snprintf(buf, size, "%g", d);
                return buf;
        }
        case OPTION_ORDERING:
        case OPTION_LOG_LEVEL:
        case OPTION_LOG_TARGET:
        case OPTION_CHOICE:
        case OPTION_FD:
        case OPTION_GROUP:
                memcpy(&i, p, sizeof(i));
                if (oi->type == OPTION_ORDERING)
                        return ordering_to_string((enum ordering)i);
                if (oi->type == OPTION_LOG_LEVEL)
                        return log_level_to_string(i);
                if (oi->type == OPTION_LOG_TARGET)
                        return log_target_to_string((enum log_target)i);
                if (oi->type == OPTION_CHOICE)
                        return oi->choices[i];
                if (i < 0)
                        return "(none)";
                snprintf(buf, size, "%d", i);
                return buf;
        default: /* FLAG, HELP, VERSION: they ask for something, they set nothing */
                return NULL;
        }
}

/* Where @oi's value came from, in @buf or a static string. */
static const char *source_text(const struct options *o, const struct option_info *oi, const struct conf *conf,
                               const char *path, char *buf, size_t size)
{
        const uint64_t agent_bits = option_key_bit("agent") | option_key_bit("hotplug-d");
        const uint64_t bit = option_bit(oi);

        if ((oi->key ? o->set : o->given) & bit)
                return "command line";
        /* agent and hotplug-d are one choice: the command line's hides the file's. */
        if ((agent_bits & bit) && (o->set & agent_bits))
                return "default";
        if (oi->key && conf && (conf->set & bit)) {
                snprintf(buf, size, "%s:%u", path, conf->line[oi - option_table]);
                return buf;
        }
        if (bit == option_key_bit("hotplug-d") && o->default_agent_missing) {
                snprintf(buf, size, "default, as %s is not installed", o->cfg.agent);
                return buf;
        }
        if (bit == option_key_bit("agent") && o->cfg.hotplug_d)
                return "default, not run: hotplug-d is set";
        return "default";
}

void options_print_effective(const struct options *o, const struct conf *conf, const char *path, FILE *out)
{
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                char vbuf[64], sbuf[HP_CONF_LINE_MAX + 64];
                const char *v = value_text(o, oi, vbuf, sizeof(vbuf));

                if (!v)
                        continue;
                fprintf(out, "%s %s # %s\n", oi->name, v, source_text(o, oi, conf, path, sbuf, sizeof(sbuf)));
        }
}
