/* SPDX-License-Identifier: MIT */
/*
 * hotplugd's command line and its configuration file, applied to struct
 * options: built-in defaults, then the file, then the command line, each
 * later source overriding the earlier one key by key.
 *
 * Invariants: getopt_long's long options and short string are generated
 * from the option table, a boolean row giving --NAME[=BOOL] and --no-NAME;
 * every value goes through option_parse(), as the file's do.  Errors go to
 * stderr as "hotplugd: REASON: 'VALUE'", naming the option and what it
 * accepts, and end with "Try 'hotplugd --help' for more information.";
 * getopt itself prints nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config/conffile.h"
#include "config/options.h"
#include "shared/escape.h"
#include "shared/getopt-refusal.h"
#include "shared/macro.h"
#include "shared/trust.h"

/* getopt_long's val for row i of the table, and for its --no-NAME (above every short letter). */
#define ROW_VAL(i) (0x100 + (int)(i))
#define NEG_VAL(i) (0x200 + (int)(i))

/* Room for every row, every --no-NAME and the terminator; a short string of "x:" per row. */
#define OPTIONS_MAX OPTIONS_GETOPT_MAX
#define NAME_MAX_LEN 64

#define TRY_HELP "Try 'hotplugd --help' for more information.\n"

static char no_names[OPTIONS_MAX][NAME_MAX_LEN];

/* Append row @i's long option(s) to @longopts at *@l. */
static int add_row(size_t i, struct option *longopts, size_t room, size_t *l)
{
        const struct option_info *oi = &option_table[i];
        bool flag = oi->type == OPTION_BOOL;

        if (i >= OPTIONS_MAX || *l + 3 > room || strlen(oi->name) + 4 > NAME_MAX_LEN)
                return -E2BIG;
        longopts[(*l)++] = (struct option){ oi->name,
                                            oi->arg ? required_argument : flag ? optional_argument : no_argument,
                                            NULL, ROW_VAL(i) };
        if (flag) {
                snprintf(no_names[i], sizeof(no_names[i]), "no-%s", oi->name);
                longopts[(*l)++] = (struct option){ no_names[i], no_argument, NULL, NEG_VAL(i) };
        }
        return 0;
}

int options_getopt(const char *const *names, size_t n_names, struct option *longopts, size_t room, size_t *l)
{
        for (size_t i = 0; i < option_table_size; i++) {
                bool wanted = !names;

                for (size_t k = 0; !wanted && k < n_names; k++)
                        wanted = strcmp(names[k], option_table[i].name) == 0;
                if (wanted && add_row(i, longopts, room, l) < 0)
                        return -E2BIG;
        }
        longopts[*l] = (struct option){ 0 };
        return 0;
}

const struct option_info *options_getopt_row(int c, bool *neg)
{
        *neg = c >= NEG_VAL(0) && c < NEG_VAL(option_table_size);
        if (*neg)
                return &option_table[c - NEG_VAL(0)];
        if (c >= ROW_VAL(0) && c < ROW_VAL(option_table_size))
                return &option_table[c - ROW_VAL(0)];
        return NULL;
}

/* The short option string: "x" or "x:" per row with a letter. */
static void build_shortopts(char *shortopts, size_t size)
{
        size_t n = 0;

        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];

                if (oi->short_name && n + 3 < size) {
                        shortopts[n++] = oi->short_name;
                        if (oi->arg)
                                shortopts[n++] = ':';
                }
        }
        shortopts[n] = '\0';
}

/* The row of getopt's @c (a long option's value, or a short letter); *@neg: it was --no-NAME. */
static const struct option_info *row_of(int c, bool *neg)
{
        const struct option_info *oi = options_getopt_row(c, neg);

        if (oi)
                return oi;
        for (size_t i = 0; i < option_table_size; i++)
                if (option_table[i].short_name && option_table[i].short_name == c)
                        return &option_table[i];
        return NULL;
}

/* What getopt refused (@c is '?' or ':'), said by name on stderr, with what a missing value must be. */
static void getopt_error(int c, const char *arg, const struct option *longopts)
{
        char msg[512], form[160];
        const struct option_info *oi;
        bool neg;

        oi = c == ':' && optopt ? row_of(optopt, &neg) : NULL;
        fprintf(stderr, "hotplugd: %s%s%s\n" TRY_HELP, getopt_refusal(c, arg, longopts, msg, sizeof(msg)),
                oi ? ": " : "", oi ? option_form(oi, form, sizeof(form)) : "");
}

int option_set_arg(void *o, size_t limit, const struct option_info *oi, const char *arg, char *why,
                   size_t why_size)
{
        union option_value v = { .b = true }; /* a boolean's bare --NAME */
        char name[64];
        int k;

        snprintf(name, sizeof(name), "--%s", oi->name);
        if (arg && option_parse(oi, name, arg, true, &v, why, why_size) < 0) {
                /* The value, and what the option is for ("re-send processed events on this netlink group"). */
                k = (int)strlen(why);
                snprintf(why + k, why_size - (size_t)k, ": '%s' (%s)", arg, oi->help);
                return -EINVAL;
        }
        if (!option_store(o, oi, &v, limit)) {
                snprintf(why, why_size, "%s is not an option here", name);
                return -EINVAL;
        }
        return 0;
}

/* One option from the command line; @arg is NULL for a bare flag; @neg: --no-NAME. */
static int set_option(struct options *o, const struct option_info *oi, const char *arg, bool neg)
{
        char why[512];

        if (option_set_arg(o, sizeof(*o), oi, neg ? "no" : arg, why, sizeof(why)) < 0) {
                fprintf(stderr, "hotplugd: %s\n" TRY_HELP, why);
                return -EINVAL;
        }
        if (oi->key)
                o->set |= option_bit(oi);
        o->given |= option_bit(oi);
        return 0;
}

int options_parse_argv(struct options *o, int argc, char *argv[])
{
        struct option longopts[OPTIONS_MAX];
        char shortopts[2 * OPTIONS_MAX + 2] = ":";
        size_t l = 0;
        int c;

        if (options_getopt(NULL, 0, longopts, ELEMENTSOF(longopts), &l) < 0)
                return -E2BIG;
        build_shortopts(shortopts + 1, sizeof(shortopts) - 1);
        optind = 0; /* glibc: start afresh, also when called again (tests) */
        opterr = 0;
        for (;;) {
                int before = optind ? optind : 1;
                const struct option_info *oi;
                bool neg;

                c = getopt_long(argc, argv, shortopts, longopts, NULL);
                if (c < 0)
                        break;
                oi = row_of(c, &neg);
                if (!oi) {
                        /* The argument getopt just stepped over, or the one it stopped at. */
                        getopt_error(c, getopt_refused_arg(argc, argv, before), longopts);
                        return -EINVAL;
                }
                if (oi->type == OPTION_HELP) {
                        options_help();
                        return 0;
                }
                if (oi->type == OPTION_VERSION) {
                        printf("hotplugd %s\n", PACKAGE_VERSION);
                        return 0;
                }
                if (set_option(o, oi, optarg, neg) < 0)
                        return -EINVAL;
        }
        if (optind < argc) {
                char esc[256];

                fprintf(stderr, "hotplugd: unexpected argument '%s': hotplugd takes options only\n" TRY_HELP,
                        escape_cstr(argv[optind], esc, sizeof(esc)));
                return -EINVAL;
        }
        if (o->verbose && !o->check_config) {
                fprintf(stderr, "hotplugd: --verbose goes with --check-config only\n" TRY_HELP);
                return -EINVAL;
        }
        /* Not inherited by agents: it closes only when we are ready. */
        if (o->ready_fd >= 0 && fcntl(o->ready_fd, F_SETFD, FD_CLOEXEC) < 0) {
                fprintf(stderr, "hotplugd: --ready-fd must be an open descriptor: '%d' is not open\n" TRY_HELP,
                        o->ready_fd);
                return -EINVAL;
        }
        o->cfg.handlers.sysfs_root = o->cfg.sysfs_root;
        return 1;
}

int options_resolve_paths(struct options *o, char *why, size_t why_size)
{
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                const char *path;
                char *abs;

                if (oi->type != OPTION_PATH)
                        continue;
                memcpy(&path, (char *)o + oi->offset, sizeof(path));
                if (!path || path[0] == '/')
                        continue;
                abs = realpath(path, NULL);
                if (!abs) {
                        int r = negative_errno();

                        snprintf(why, why_size, "--%s: cannot resolve '%s': %s", oi->name, path, strerror(-r));
                        return r;
                }
                memcpy((char *)o + oi->offset, &abs, sizeof(abs)); /* lives as long as the process */
        }
        o->cfg.handlers.sysfs_root = o->cfg.sysfs_root;
        return 0;
}

/*
 * The agent in effect runs as the daemon for every event: its path as given
 * passes the trust rule (trust_check_path()).  Every error of the check is
 * a refusal but two: an agent that does not exist yet, or is not a file,
 * is not refused here (--check-config says so); the daemon checks it before every spawn
 * until it exists and passes (it may be installed later, but never by
 * another user in a directory they can write).
 */
static int check_agent(const struct options *o, struct conf_error *err)
{
        const char *why = NULL;
        struct stat st;
        int r;

        if (o->cfg.hotplug_d || !o->cfg.agent)
                return 0;
        r = trust_check_path(o->cfg.agent, false, &st, &why);
        if (r == 0 || r == -ENOENT || r == -EMEDIUMTYPE)
                return 0; /* not refused yet: --check-config says it cannot run, the daemon at each spawn */
        err->line = 0;
        if (why)
                snprintf(err->msg, sizeof(err->msg), "agent %s: %s (mode %04o, uid %u); refusing to run it as the "
                         "agent", o->cfg.agent, why, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
        else
                snprintf(err->msg, sizeof(err->msg), "agent %s: cannot be checked (%s); refusing to run it as "
                         "the agent", o->cfg.agent, strerror(-r));
        return -EPERM;
}

int options_load(struct options *o, struct conf *conf, struct conf_error *err)
{
        int r;

        r = conf_load(options_config_path(o->config), conf, err);
        if (r == -ENOENT && !o->config) {
                options_default_agent(o, o->set, HOTPLUGD_HOTPLUG_D);
                r = check_agent(o, err);
                return r < 0 ? r : 1;
        }
        if (r < 0)
                return r;
        conf_apply_options(conf, o);
        options_default_agent(o, o->set | conf->set, HOTPLUGD_HOTPLUG_D);
        return check_agent(o, err);
}

void options_default_agent(struct options *o, uint64_t chosen, const char *dir)
{
        if (chosen & (option_key_bit("agent") | option_key_bit("hotplug-d")))
                return;
        if (o->cfg.hotplug_d || access(o->cfg.agent, X_OK) == 0)
                return;
        o->cfg.hotplug_d = dir;
        o->default_agent_missing = true;
}
