/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl test DEVPATH: what would hotplugd do for this device?  Builds
 * the kernel datagram from sysfs (header ACTION@DEVPATH, ACTION, DEVPATH,
 * SUBSYSTEM from the "subsystem" link, the keys of the device's "uevent"
 * file, and a synthetic SEQNUM), parses it with the daemon's parser, runs
 * the handler chain, and prints the filter verdict, argv and the complete
 * agent environment exactly as spawn_env_build() makes it.  Runs nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config/conffile.h"
#include "config/options.h"
#include "ctl/ctl.h"
#include "shared/envbuf.h"
#include "shared/escape.h"
#include "pipeline/handlers.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/manager.h"
#include "pipeline/spawner.h"
#include "shared/sysfs.h"
#include "uevent/uevent.h"

struct test_args {
        const char *devpath;
        const char *action;
        const char *config;          /* --config; NULL: the default file, if it exists */
        uint32_t set;                /* CONF_BIT() of every option given: they override the file */
        struct manager_config cfg;   /* the daemon's defaults, the file, then the options */
};

static void test_usage(FILE *f)
{
        fprintf(f, "Usage: hotplugctl test DEVPATH [--action ACTION] [--config FILE] [--sysfs DIR]\n"
                   "         [--handler-dir DIR] [--all] [--filter-policy RULES] [--firmware-loader]\n"
                   "         [--firmware-path DIRS] [--handler-cache N] [--input-strip-quotes]\n"
                   "DEVPATH is /devices/... or any path below the sysfs root (e.g. /sys/class/net/lo).\n"
                   "The handler options are hotplugd's; the configuration file is read as hotplugd reads it.\n");
}

/* A hotplugd option (@c: its enum conf_key), parsed as hotplugd parses it. */
static int parse_option(struct test_args *a, int c, const char *arg)
{
        const struct option_info *oi;
        char why[512];

        switch (c) {
        case 'a': a->action = arg; return 0;
        case 'c': a->config = arg; return 0;
        }
        oi = c >= 0 && c < _CONF_KEY_MAX ? option_by_conf((enum conf_key)c) : NULL;
        if (!oi)
                return -EINVAL;
        if (option_set_arg(&a->cfg, sizeof(a->cfg), oi, arg, why, sizeof(why)) < 0) {
                fprintf(stderr, "hotplugctl: test: %s\n", why);
                return -EINVAL;
        }
        a->cfg.handlers.sysfs_root = a->cfg.sysfs_root;
        a->set |= CONF_BIT(c);
        return 0;
}

static int parse_args(int argc, char *argv[], struct test_args *a)
{
        /* Long options without a short form return their configuration key (0x100 + key). */
#define KEYOPT(k) (0x100 + (k))
        static const struct option opts[] = {
                { "action", required_argument, NULL, 'a' },
                { "config", required_argument, NULL, 'c' },
                { "sysfs", required_argument, NULL, KEYOPT(CONF_SYSFS) },
                { "handler-dir", required_argument, NULL, KEYOPT(CONF_HANDLER_DIR) },
                { "all", no_argument, NULL, KEYOPT(CONF_ALL) },
                { "filter-policy", required_argument, NULL, KEYOPT(CONF_FILTER_POLICY) },
                { "firmware-loader", no_argument, NULL, KEYOPT(CONF_FIRMWARE_LOADER) },
                { "firmware-path", required_argument, NULL, KEYOPT(CONF_FIRMWARE_PATH) },
                { "handler-cache", required_argument, NULL, KEYOPT(CONF_HANDLER_CACHE) },
                { "input-strip-quotes", no_argument, NULL, KEYOPT(CONF_INPUT_STRIP_QUOTES) },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        int c;

        *a = (struct test_args){ .action = "add" };
        options_defaults(&a->cfg);
        while ((c = getopt_long(argc, argv, "a:c:h", opts, NULL)) >= 0) {
                if (c == 'h') {
                        test_usage(stdout);
                        return 0;
                }
                if (parse_option(a, c >= KEYOPT(0) ? c - KEYOPT(0) : c, optarg) < 0) {
                        test_usage(stderr);
                        return -EINVAL;
                }
        }
#undef KEYOPT
        if (optind + 1 != argc) {
                test_usage(stderr);
                return -EINVAL;
        }
        a->devpath = argv[optind];
        return 1;
}

/*
 * The configuration file under the options, as hotplugd applies it.  A
 * missing default file means built-in defaults; a missing --config file is
 * an error.  @conf must outlive a->cfg (its strings are referenced).
 */
static int load_config(struct test_args *a, struct conf *conf)
{
        const char *path = options_config_path(a->config);
        struct conf_error err;
        int r;

        r = conf_load(path, conf, &err);
        if (r == -ENOENT && !a->config) {
                printf("config: %s absent, built-in defaults\n", path);
                return 0;
        }
        if (r < 0) {
                fprintf(stderr, "hotplugctl: test: %s\n", err.msg);
                return r;
        }
        printf("config: %s\n", path);
        conf_apply(conf, &a->cfg, a->set);
        a->cfg.handlers.sysfs_root = a->cfg.sysfs_root;
        return 0;
}

/* Canonical DEVPATH ("/devices/...") of @arg, which may be a DEVPATH or a path below @root. */
static int canonical_devpath(const char *root, const char *arg, char *ret, size_t size)
{
        char rroot[PATH_MAX], path[PATH_MAX], real[PATH_MAX];
        size_t rl;

        if (!realpath(root, rroot))
                return negative_errno();
        rl = strlen(rroot);
        if (strncmp(arg, rroot, rl) == 0 && arg[rl] == '/')
                snprintf(path, sizeof(path), "%s", arg);
        else if (arg[0] == '/')
                snprintf(path, sizeof(path), "%s%s", rroot, arg);
        else
                return -EINVAL;
        if (!realpath(path, real))
                return negative_errno();
        if (strncmp(real, rroot, rl) != 0 || real[rl] != '/' || strlen(real + rl) >= size)
                return -EXDEV;
        strcpy(ret, real + rl);
        return 0;
}

/* Append "KEY=VALUE\0" to @buf at *@len. */
static int put(char *buf, size_t *len, const char *key, const char *value)
{
        int k = snprintf(buf + *len, HP_UEVENT_MAX_SIZE - *len, "%s%s%s", key, key[0] ? "=" : "", value);

        if (k < 0 || (size_t)k >= HP_UEVENT_MAX_SIZE - *len)
                return -E2BIG;
        *len += (size_t)k + 1;
        return 0;
}

static bool reserved_key(const char *line)
{
        static const char *const keys[] = { "ACTION=", "DEVPATH=", "SUBSYSTEM=", "SEQNUM=" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (strncmp(line, keys[i], strlen(keys[i])) == 0)
                        return true;
        return false;
}

/* The kernel-format datagram for @devpath; SEQNUM is the kernel's current counter (synthetic). */
static int build_datagram(int rootfd, const char *devpath, const char *action, char *buf, size_t *ret_len,
                          unsigned long long *ret_seq)
{
        char uevent[HP_UEVENT_MAX_SIZE], subsystem[PATH_MAX], header[PATH_MAX + 64], seqtext[32];
        uint64_t seq = 0;
        _cleanup_close_ int fd = sysfs_open_dir(rootfd, devpath);
        size_t len = 0;
        int r;

        if (fd < 0)
                return fd;
        r = sysfs_link_name(fd, devpath, "subsystem", subsystem, sizeof(subsystem));
        if (r < 0)
                return log_error_errno(r, "%s: no subsystem link", devpath);
        r = sysfs_read_at(fd, "uevent", uevent, sizeof(uevent));
        if (r < 0)
                return log_error_errno(r, "%s: cannot read its uevent file", devpath);
        /* Synthetic: the kernel's current counter if readable, else 0. */
        (void)sysfs_read_seqnum(rootfd, &seq);
        *ret_seq = seq;
        snprintf(seqtext, sizeof(seqtext), "%" PRIu64, seq);

        snprintf(header, sizeof(header), "%s@%s", action, devpath);
        r = put(buf, &len, "", header);
        if (r >= 0) r = put(buf, &len, "ACTION", action);
        if (r >= 0) r = put(buf, &len, "DEVPATH", devpath);
        if (r >= 0) r = put(buf, &len, "SUBSYSTEM", subsystem);
        for (char *line = strtok(uevent, "\n"); r >= 0 && line; line = strtok(NULL, "\n"))
                if (!reserved_key(line))
                        r = put(buf, &len, "", line);
        if (r >= 0)
                r = put(buf, &len, "SEQNUM", seqtext);
        if (r < 0)
                return log_error_errno(r, "%s: event larger than %d bytes", devpath, HP_UEVENT_MAX_SIZE);
        *ret_len = len;
        return 0;
}

static void print_handlers(const struct handler_chain *c)
{
        struct handler_info hi;

        printf("handlers:");
        for (size_t i = 0; handler_chain_info(c, i, &hi) >= 0; i++)
                printf(" %s%s%s%s%s", hi.id, hi.file ? "(" : "", hi.file ? hi.file : "", hi.file ? ")" : "",
                       hi.disabled ? "[disabled]" : "");
        printf("\n");
}

static int print_result(const struct manager_config *cfg, const struct uevent *view, const struct envbuf *env,
                        const char *name)
{
        _cleanup_free_ struct uevent *ev = NULL;
        struct spawn_env se;
        char esc[HP_UEVENT_MAX_SIZE * 4];
        int r;

        r = uevent_dup(view, env, name[0] ? name : NULL, &ev);
        if (r < 0)
                return log_error_errno(r, "cannot copy the event");
        spawn_env_build(ev, &se);
        escape_cstr(ev->name, esc, sizeof(esc));
        if (cfg->hotplug_d)
                printf("argv: each %s/%s/*.hotplug, then %s/default/*.hotplug, as FILE %s\n", cfg->hotplug_d, esc,
                       cfg->hotplug_d, esc);
        else
                printf("argv: %s %s\n", cfg->agent, esc);
        printf("environment:\n");
        for (size_t i = 0; i < se.n; i++)
                printf("  %s\n", escape_cstr(se.envp[i], esc, sizeof(esc)));
        return 0;
}

static int run_test_event(const struct test_args *a, int rootfd, const char *devpath)
{
        _cleanup_(handler_chain_freep) struct handler_chain *c = NULL;
        uint16_t vars[HP_UEVENT_MAX_VARS];
        char buf[HP_UEVENT_MAX_SIZE], name[HP_NAME_MAX];
        struct handler_trace trace;
        unsigned long long seq = 0;
        enum uevent_reject why;
        struct uevent view;
        struct envbuf env;
        size_t len = 0;
        int r;

        r = build_datagram(rootfd, devpath, a->action, buf, &len, &seq);
        if (r < 0)
                return r;
        if (uevent_parse(buf, len, vars, &view, &why) < 0)
                return log_error_errno(-EBADMSG, "%s: the event would be rejected: %s", devpath,
                                       uevent_reject_to_string(why));
        r = handler_chain_new(&a->cfg.handlers, &c);
        if (r < 0)
                return log_error_errno(r, "cannot set up handlers");
        printf("event: %s %s (synthetic, not from the kernel: SEQNUM=%llu%s)\n", a->action, devpath, seq,
               seq ? " is the kernel's current counter" : "");
        print_handlers(c);
        envbuf_init(&env);
        r = handler_chain_run_traced(c, &view, &env, name, &trace);
        if (r == -ENOMEM) {
                printf("verdict: aborted (handler environment exceeds %d bytes / %d variables)\n",
                       HP_ENV_ADD_MAX_BYTES, HP_ENV_ADD_MAX_VARS);
                return r;
        }
        if (r == HANDLER_FILTERED) {
                printf("verdict: filtered by %s; no agent would run\n", trace.filtered_by);
                return 0;
        }
        printf("verdict: run%s%s%s\n", a->cfg.handlers.pass_all ? " (--all)" : "", trace.named_by ? ", argv[1] from handler " : "",
               trace.named_by ? trace.named_by : "");
        return print_result(&a->cfg, &view, &env, name);
}

int verb_test(int argc, char *argv[])
{
        _cleanup_close_ int rootfd = -1;
        _cleanup_free_ struct conf *conf = NULL;
        struct test_args a;
        char devpath[PATH_MAX];
        int r;

        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? CTL_EXIT_USAGE : CTL_EXIT_OK;
        conf = calloc(1, sizeof(*conf));
        if (!conf || load_config(&a, conf) < 0)
                return CTL_EXIT_FAILURE;
        r = canonical_devpath(a.cfg.sysfs_root, a.devpath, devpath, sizeof(devpath));
        if (r < 0) {
                log_error_errno(r, "%s: not a device below %s", a.devpath, a.cfg.sysfs_root);
                return CTL_EXIT_FAILURE;
        }
        rootfd = sysfs_open_root(a.cfg.sysfs_root);
        if (rootfd < 0) {
                log_error_errno(rootfd, "cannot open %s", a.cfg.sysfs_root);
                return CTL_EXIT_FAILURE;
        }
        r = run_test_event(&a, rootfd, devpath);
        fflush(stdout);
        return r < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
