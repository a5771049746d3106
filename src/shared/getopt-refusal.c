/* SPDX-License-Identifier: MIT */
/* Messages for what getopt_long() refused (getopt-refusal.h). */
#include <stdio.h>
#include <string.h>

#include "shared/escape.h"
#include "shared/getopt-refusal.h"

const char *getopt_refused_arg(int argc, char *const argv[], int before)
{
        if (optind > before && optind - 1 < argc)
                return argv[optind - 1];
        return argv[before < argc ? before : argc - 1];
}

/* The long option "--name[=value]" names: exactly, or as its only abbreviation; *@n: how many it could be. */
static const struct option *long_option(const struct option *longopts, const char *name, size_t len, size_t *n)
{
        const struct option *found = NULL;

        *n = 0;
        if (len == 0)
                return NULL;
        for (const struct option *o = longopts; o->name; o++)
                if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
                        *n = 1;
                        return o;
                }
        for (const struct option *o = longopts; o->name; o++)
                if (strncmp(o->name, name, len) == 0) {
                        found = o;
                        ++*n;
                }
        return *n == 1 ? found : NULL;
}

char *getopt_refusal(int c, const char *arg, const struct option *longopts, char *buf, size_t size)
{
        const struct option *o;
        char esc[256];
        size_t len, n, at;

        if (strncmp(arg, "--", 2) != 0) {
                char letter[2] = { (char)optopt, '\0' };

                escape_cstr(letter, esc, sizeof(esc));
                snprintf(buf, size, c == ':' ? "option '-%s' needs a value" : "unknown option '-%s'", esc);
                return buf;
        }
        len = strcspn(arg + 2, "=");
        o = long_option(longopts, arg + 2, len, &n);
        if (o && c == ':')
                snprintf(buf, size, "option '--%s' needs a value", o->name);
        else if (o && o->has_arg == no_argument && arg[2 + len] == '=')
                snprintf(buf, size, "option '--%s' takes no value", o->name);
        else {
                /* The name as typed, without its value. */
                escape_cstr(arg, esc, sizeof(esc));
                esc[strcspn(esc, "=")] = '\0';
                at = (size_t)snprintf(buf, size, "%s option '%s'", n > 1 ? "ambiguous" : "unknown", esc);
                if (n > 1) {
                        const char *sep = " (could be ";

                        for (const struct option *p = longopts; p->name && at < size; p++)
                                if (strncmp(p->name, arg + 2, len) == 0) {
                                        at += (size_t)snprintf(buf + at, size - at, "%s--%s", sep, p->name);
                                        sep = ", ";
                                }
                        if (at + 1 < size)
                                strcat(buf, ")");
                }
        }
        return buf;
}
