/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl test DEVPATH: what would hotplugd do for this device?  Builds
 * the kernel datagram from sysfs (header ACTION@DEVPATH, ACTION, DEVPATH,
 * SUBSYSTEM from the "subsystem" link, the keys of the device's "uevent"
 * file, and a synthetic SEQNUM), parses it with the daemon's parser, runs
 * the handler chain, and prints the filter verdict, the handler that gave
 * each variable, the complete agent environment exactly as
 * spawn_env_build() makes it, and each program that would run with its
 * argv: the agent, or the hotplug.d scripts, chosen and walked by the
 * daemon's own code (options_load(), hotplug_d_list_explained()), with
 * every script that would be passed over and why.  Runs nothing.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config/conffile.h"
#include "config/options.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/envbuf.h"
#include "shared/escape.h"
#include "pipeline/handlers.h"
#include "shared/macro.h"
#include "loop/manager.h"
#include "pipeline/spawner.h"
#include "pipeline/usb-dispatch.h"
#include "pipeline/usermap.h"
#include "shared/sysfs.h"
#include "shared/trust.h"
#include "uevent/uevent.h"

struct test_args {
        const char *devpath;         /* as given */
        const char *action;
        struct options o;            /* the daemon's defaults, the file, then the options (o.config, o.set) */
        const char *agent_from;      /* who chose the agent: "the command line", the file, or NULL: nobody */
};

/* hotplugd's options that test takes, parsed and described by hotplugd's option table. */
static const char *const daemon_options[] = {
        "agent", "hotplug-d", "sysfs", "handler-dir", "all", "filter-policy", "firmware-loader", "firmware-path",
        "handler-cache", "input-strip-quotes", "hotplug-dir", "usb-device-path",
};

/* The full usage, with the daemon options' lines as hotplugd --help has them (HELP in column 25, as ours). */
static const char *test_help(void)
{
        static char help[4096];
        char line[512];
        size_t len;

        len = (size_t)snprintf(help, sizeof(help),
                "test [OPTIONS] DEVICE\n\n"
                "Show what hotplugd would do for an existing DEVICE (a path below the sysfs root,\n"
                "links resolved, a DEVPATH /devices/... or a device node /dev/...): build its\n"
                "event from sysfs, run the handler chain, and print the configuration read, the\n"
                "handlers, the filter verdict, the agent's complete environment with the handler\n"
                "that added each variable, and each program that would run, in order, with its\n"
                "argv: the agent, or the hotplug.d scripts, chosen as hotplugd chooses them,\n"
                "with every script it would pass over and why. Runs nothing.\n\n"
                "Options:\n"
                "  -a, --action=ACTION    the event's action (default add); one of\n"
                "                         " CTL_KERNEL_ACTIONS "\n"
                "      --config=FILE      read hotplugd's settings from FILE, which must exist\n"
                "                         (default " HOTPLUGD_SYSCONFDIR "/hotplugd/hotplugd.conf, if present)\n"
                "hotplugd's options, by their long names as hotplugd takes them; they override\n"
                "the file key by key:\n");
        for (size_t i = 0; i < option_table_size; i++)
                for (size_t k = 0; k < ELEMENTSOF(daemon_options); k++)
                        if (strcmp(option_table[i].name, daemon_options[k]) == 0 && len < sizeof(help)) {
                                option_help_line(&option_table[i], 25, line, sizeof(line));
                                /* hotplugd's short letters mean other things here: "  -a, --agent" without "-a,". */
                                if (line[2] == '-' && line[3] != '-' && line[4] == ',')
                                        memset(line + 2, ' ', 3);
                                len += (size_t)snprintf(help + len, sizeof(help) - len, "%s", line);
                        }
        if (len < sizeof(help))
                snprintf(help + len, sizeof(help) - len, CTL_HELP_HELP "\n"
                         "Exit status: 0 shown, 1 DEVICE is not a device, or hotplugd would refuse the\n"
                         "configuration (the file, an untrusted agent), 64 usage.\n");
        return help;
}

/* Option @c (a character or a value of options_getopt()) with its argument. Return: CTL_EXIT_OK or CTL_EXIT_USAGE. */
static int parse_option(struct test_args *a, int c, const char *arg)
{
        const struct option_info *oi;
        char why[512];
        bool neg;

        switch (c) {
        case 'a':
                a->action = arg;
                return ctl_check_action("test", arg);
        case 'c':
                a->o.config = arg;
                return CTL_EXIT_OK;
        }
        oi = options_getopt_row(c, &neg);
        if (!oi || !oi->key)
                return ctl_usage_error("test", "unexpected option");
        if (option_set_arg(&a->o, sizeof(a->o), oi, neg ? "no" : arg, why, sizeof(why)) < 0)
                return ctl_usage_error("test", "%s", why);
        a->o.cfg.handlers.sysfs_root = a->o.cfg.sysfs_root;
        a->o.set |= option_bit(oi);
        return CTL_EXIT_OK;
}

/* Return: CTL_RUN, or the exit status (CTL_EXIT_OK after --help). */
static int parse_args(int argc, char *argv[], struct test_args *a)
{
        struct option opts[3 + 2 * ELEMENTSOF(daemon_options) + 1] = {
                { "action", required_argument, NULL, 'a' },
                { "config", required_argument, NULL, 'c' },
                CTL_OPTION_HELP,
        };
        const struct ctl_getopt g = { "test", "a:h", opts, test_help(), "DEVICE" };
        char why[PATH_MAX + 128];
        size_t n = 3;
        int c, r;

        if (options_getopt(daemon_options, ELEMENTSOF(daemon_options), opts, ELEMENTSOF(opts), &n) < 0) {
                ctl_err("test", "no room for hotplugd's options"); /* opts is sized for them */
                return CTL_EXIT_FAILURE;
        }
        *a = (struct test_args){ .action = "add" };
        options_init(&a->o);
        while ((c = ctl_getopt(&g, argc, argv)) >= 0)
                if ((r = parse_option(a, c, optarg)) != CTL_EXIT_OK)
                        return r;
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        if (options_resolve_paths(&a->o, why, sizeof(why)) < 0)
                return ctl_usage_error("test", "%s", why);
        a->devpath = argv[optind];
        return CTL_RUN;
}

/*
 * The configuration file under the options, and then the agent, as hotplugd
 * settles them (options_load()).  A missing default file means built-in
 * defaults; a missing --config file is an error, and so is an agent
 * hotplugd would refuse to run.  @conf must outlive a->o (its strings are
 * referenced).
 */
static int load_config(struct test_args *a, struct conf *conf)
{
        const char *path = options_config_path(a->o.config);
        const uint64_t agent_bits = option_key_bit("agent") | option_key_bit("hotplug-d");
        struct conf_error err;
        int r;

        r = options_load(&a->o, conf, &err);
        if (r < 0) {
                ctl_err("test", "%s", err.msg);
                return r;
        }
        printf(r > 0 ? "config: %s absent, built-in defaults\n" : "config: %s\n", path);
        a->o.cfg.handlers.sysfs_root = a->o.cfg.sysfs_root;
        a->o.cfg.handlers.dry_run = true; /* test runs nothing and writes nothing (the firmware loader) */
        if (a->o.set & agent_bits)
                a->agent_from = "the command line";
        else if (r == 0 && (conf->set & agent_bits))
                a->agent_from = path;
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

/* An event as the kernel would send it. */
struct datagram {
        char buf[HP_UEVENT_MAX_SIZE];
        size_t len;
        unsigned long long seq;      /* synthetic: the kernel's current counter, or 0 */
};

/* The kernel-format datagram for @devpath; errors name the device as given. */
static int build_datagram(const struct test_args *a, int rootfd, const char *devpath, struct datagram *dg)
{
        char uevent[HP_UEVENT_MAX_SIZE], subsystem[PATH_MAX], header[PATH_MAX + 64], seqtext[32], esc[256];
        const char *given = escape_cstr(a->devpath, esc, sizeof(esc));
        uint64_t seq = 0;
        _cleanup_close_ int fd = sysfs_open_dir(rootfd, devpath);
        int r;

        if (fd < 0) {
                ctl_err("test", "%s: %s", given, strerror(-fd));
                return fd;
        }
        r = sysfs_link_name(fd, devpath, "subsystem", subsystem, sizeof(subsystem));
        if (r < 0) {
                ctl_err("test", "%s: no subsystem link: %s", given, strerror(-r));
                return r;
        }
        r = sysfs_read_at(fd, "uevent", uevent, sizeof(uevent));
        if (r < 0) {
                ctl_err("test", "%s: cannot read its uevent file: %s", given, strerror(-r));
                return r;
        }
        (void)sysfs_read_seqnum(rootfd, &seq);
        dg->seq = seq;
        snprintf(seqtext, sizeof(seqtext), "%" PRIu64, seq);

        snprintf(header, sizeof(header), "%s@%s", a->action, devpath);
        dg->len = 0;
        r = put(dg->buf, &dg->len, "", header);
        if (r >= 0) r = put(dg->buf, &dg->len, "ACTION", a->action);
        if (r >= 0) r = put(dg->buf, &dg->len, "DEVPATH", devpath);
        if (r >= 0) r = put(dg->buf, &dg->len, "SUBSYSTEM", subsystem);
        for (char *line = strtok(uevent, "\n"); r >= 0 && line; line = strtok(NULL, "\n"))
                if (!reserved_key(line))
                        r = put(dg->buf, &dg->len, "", line);
        if (r >= 0)
                r = put(dg->buf, &dg->len, "SEQNUM", seqtext);
        if (r < 0)
                ctl_err("test", "%s: event larger than %d bytes", given, HP_UEVENT_MAX_SIZE);
        return r;
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

/* A hotplug.d path the walk reported: one that would run (@why NULL) or one passed over. */
struct program {
        char *path;
        char *why;
        mode_t mode;
        uid_t uid;
        bool has_stat;
};

struct programs {
        struct program *p;
        size_t n, cap;
        const char *dir, *name;
        bool failed;                 /* no memory for one */
};

static int programs_add(struct programs *l, const char *path, const char *why, const struct stat *st)
{
        struct program *p;

        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 16;
                struct program *np = reallocarray(l->p, cap, sizeof(*np));

                if (!np)
                        return -ENOMEM;
                l->p = np;
                l->cap = cap;
        }
        p = &l->p[l->n];
        *p = (struct program){ .path = strdup(path), .why = why ? strdup(why) : NULL, .has_stat = st != NULL };
        if (!p->path || (why && !p->why)) {
                free(p->path);
                free(p->why);
                return -ENOMEM;
        }
        if (st) {
                p->mode = st->st_mode & 07777;
                p->uid = st->st_uid;
        }
        l->n++;
        return 0;
}

static void programs_skipped(const char *path, const char *why, const struct stat *st, void *userdata)
{
        struct programs *l = userdata;

        if (programs_add(l, path, why, st) < 0)
                l->failed = true;
}

static void programs_done(struct programs *l)
{
        for (size_t i = 0; i < l->n; i++) {
                free(l->p[i].path);
                free(l->p[i].why);
        }
        free(l->p);
}

/*
 * Where @path comes in the walk: DIR itself (0), DIR/NAME and its files (1),
 * DIR/default and its files (2); *@file: the file's name, "" for a directory.
 */
static int walk_place(const struct programs *l, const char *path, const char **file)
{
        size_t dl = strlen(l->dir), nl = strlen(l->name);
        const char *rest = path + dl;

        *file = "";
        if (strncmp(path, l->dir, dl) != 0 || *rest != '/')
                return 0;
        rest++;
        if (strncmp(rest, l->name, nl) == 0 && (rest[nl] == '/' || !rest[nl])) {
                *file = rest[nl] ? rest + nl + 1 : "";
                return 1;
        }
        *file = strchr(rest, '/') ? strchr(rest, '/') + 1 : "";
        return 2;
}

/* qsort_r() order of @x and @y: the walk's (@userdata: the list). */
static int program_cmp(const void *x, const void *y, void *userdata)
{
        const struct program *a = x, *b = y;
        const char *fa, *fb;
        int pa = walk_place(userdata, a->path, &fa), pb = walk_place(userdata, b->path, &fb);

        return pa != pb ? pa - pb : strcmp(fa, fb);
}

/* One line: "argv: PATH NAME", or "not run: PATH: WHY (mode, uid)". */
static void print_program(const struct program *p, const char *name)
{
        char esc[PATH_MAX * 4];

        escape_cstr(p->path, esc, sizeof(esc));
        if (!p->why)
                printf("argv: %s %s\n", esc, name);
        else if (p->has_stat)
                printf("not run: %s: %s (mode %04o, uid %u)\n", esc, p->why, (unsigned)p->mode, (unsigned)p->uid);
        else
                printf("not run: %s: %s\n", esc, p->why);
}

/* The hotplug.d multiplexer's programs for @name, as the daemon walks them, and what it passes over. */
static int print_multiplexer(const char *dir, const char *name)
{
        struct programs l = { .dir = dir, .name = name };
        char **paths = NULL;
        size_t n = 0, runs = 0;
        int r;

        r = hotplug_d_list_explained(dir, name, programs_skipped, &l, &paths, &n);
        for (size_t i = 0; i < n; i++) {
                if (r >= 0 && programs_add(&l, paths[i], NULL, NULL) < 0)
                        r = -ENOMEM;
                free(paths[i]);
        }
        free(paths);
        if (r >= 0 && l.failed)
                r = -ENOMEM;
        if (r < 0) {
                ctl_err("test", "cannot list %s for %s: %s", dir, name, strerror(-r));
                programs_done(&l);
                return r;
        }
        qsort_r(l.p, l.n, sizeof(*l.p), program_cmp, &l);
        for (size_t i = 0; i < l.n; i++) {
                print_program(&l.p[i], name);
                runs += !l.p[i].why;
        }
        if (runs == 0)
                printf("argv: none: no program in %s/%s or %s/default would run\n", dir, name, dir);
        programs_done(&l);
        return 0;
}

/* The single agent: "argv: AGENT NAME", or why exec would fail for every event. */
static void print_agent(const char *agent, const char *name)
{
        struct program p = { .path = (char *)agent };
        const char *why = NULL;
        struct stat st;
        int r;

        r = trust_check_path(agent, false, &st, &why);
        if (r == -ENOENT)
                p.why = (char *)"does not exist; hotplugd tries it for every event";
        else if (r < 0 && why)
                p.why = (char *)why;
        else if (r < 0)
                p.why = strerror(-r);
        else if (access(agent, X_OK) < 0)
                p.why = (char *)"not executable; hotplugd tries it for every event";
        if (p.why && r != -ENOENT) {
                p.has_stat = true;
                p.mode = st.st_mode & 07777;
                p.uid = st.st_uid;
        }
        print_program(&p, name);
}

/* Which agent runs, and who chose it. */
static void print_choice(const struct test_args *a)
{
        const struct manager_config *cfg = &a->o.cfg;
        char from[PATH_MAX + 16] = "the default";

        if (a->agent_from)
                snprintf(from, sizeof(from), "%s", a->agent_from);
        if (a->o.default_agent_missing)
                printf("agent: hotplug.d multiplexer over %s (%s is not installed or not executable)\n",
                       cfg->hotplug_d, HOTPLUGD_DEFAULT_AGENT);
        else if (cfg->hotplug_d)
                printf("agent: hotplug.d multiplexer over %s (from %s)\n", cfg->hotplug_d, from);
        else
                printf("agent: %s (from %s)\n", cfg->agent, from);
}

/* "variables added by handlers:", each with the handler that gave it (the last to set it). */
static void print_added(const struct envbuf *env, const struct handler_trace *t, const struct spawn_env *se)
{
        char esc[HP_ENV_ADD_MAX_BYTES * 4];

        printf("variables added by handlers:%s%s\n", env->n ? "" : " none",
               t->from_cache ? " (recalled from the device's earlier events)" : "");
        for (unsigned i = 0; i < env->n; i++) {
                const char *e = envbuf_entry(env, i);
                size_t klen = strcspn(e, "=");
                bool passed = false;

                for (size_t k = 0; k < se->n && !passed; k++)
                        passed = strcmp(se->envp[k], e) == 0;
                escape_cstr(e, esc, sizeof(esc));
                printf("  %.*s by %s%s\n", (int)klen, esc, t->added_by[i],
                       passed ? "" : " (refused: not passed to the agent)");
        }
}

static void usermap_said(const char *msg, void *userdata)
{
        char esc[1024];

        (void)userdata;
        printf("  %s\n", escape_cstr(msg, esc, sizeof(esc)));
}

static void usb_noted(void *userdata, const struct usermap_match *m, bool problem, const char *what)
{
        char where[HP_USERMAP_NAME_MAX + 128], esc[PATH_MAX * 4];

        (void)userdata;
        (void)problem;
        if (m)
                printf("  %s: %s\n", usermap_describe(m, where, sizeof(where)), escape_cstr(what, esc, sizeof(esc)));
        else
                printf("  %s\n", escape_cstr(what, esc, sizeof(esc)));
}

/* hotplug-dir: the usermap lines that match, and what runs after the agent. */
static void print_usb_dispatch(const char *dir, const struct uevent *ev)
{
        _cleanup_(usermap_freep) struct usermap *map = NULL;
        struct usb_plan plan;
        const char *argv[6];
        char esc[PATH_MAX * 4], remover[PATH_MAX];
        int r;

        if (strcmp(ev->subsystem, "usb") != 0)
                return;
        printf("hotplug-dir %s:\n", escape_cstr(dir, esc, sizeof(esc)));
        r = usermap_load(dir, &map, usermap_said, NULL);
        if (r < 0) {
                printf("  the maps cannot be read (%s): nothing is dispatched\n", strerror(-r));
                return;
        }
        r = usb_plan_build(map, dir, usb_remover_dir(ctl_socket_path(), remover, sizeof(remover)), ev, &plan,
                           usb_noted, NULL);
        if (r < 0) {
                printf("  %s\n", strerror(-r));
                return;
        }
        if (r == 0)
                printf("  nothing runs\n");
        for (size_t i = 0; i < plan.n; i++) {
                usb_step_argv(&plan.step[i], argv);
                printf("  argv:");
                for (size_t k = 0; argv[k]; k++)
                        printf(" %s", escape_cstr(argv[k], esc, sizeof(esc)));
                printf("\n");
        }
        if (plan.remover[0] && strcmp(ev->action, "add") == 0)
                printf("  REMOVER=%s\n", escape_cstr(plan.remover, esc, sizeof(esc)));
        usb_plan_free(&plan);
}

static int print_result(const struct test_args *a, const struct uevent *view, const struct envbuf *env,
                        const char *name, const struct handler_trace *t)
{
        _cleanup_free_ struct uevent *ev = NULL;
        struct spawn_env se;
        char esc[HP_UEVENT_MAX_SIZE * 4];
        int r;

        r = uevent_dup(view, env, name[0] ? name : NULL, &ev);
        if (r < 0) {
                ctl_err("test", "cannot copy the event: %s", strerror(-r));
                return r;
        }
        spawn_env_build(ev, &se);
        print_added(env, t, &se);
        printf("environment:\n");
        for (size_t i = 0; i < se.n; i++)
                printf("  %s\n", escape_cstr(se.envp[i], esc, sizeof(esc)));
        print_choice(a);
        escape_cstr(ev->name, esc, sizeof(esc));
        if (a->o.cfg.hotplug_d)
                r = print_multiplexer(a->o.cfg.hotplug_d, ev->name);
        else
                print_agent(a->o.cfg.agent, esc);
        if (r >= 0 && a->o.cfg.hotplug_dir)
                print_usb_dispatch(a->o.cfg.hotplug_dir, ev);
        return r;
}

static int run_test_event(const struct test_args *a, int rootfd, const char *devpath)
{
        _cleanup_(handler_chain_freep) struct handler_chain *c = NULL;
        uint16_t vars[HP_UEVENT_MAX_VARS];
        char name[HP_NAME_MAX], esc[256];
        struct handler_trace trace;
        struct datagram dg;
        enum uevent_reject why;
        struct uevent view;
        struct envbuf env;
        int r;

        r = build_datagram(a, rootfd, devpath, &dg);
        if (r < 0)
                return r;
        if (uevent_parse(dg.buf, dg.len, vars, &view, &why) < 0) {
                ctl_err("test", "%s: the event would be rejected: %s", escape_cstr(a->devpath, esc, sizeof(esc)),
                        uevent_reject_to_string(why));
                return -EBADMSG;
        }
        r = handler_chain_new(&a->o.cfg.handlers, &c);
        if (r < 0) {
                ctl_err("test", "cannot set up handlers: %s", strerror(-r));
                return r;
        }
        printf("event: %s %s (synthetic, not from the kernel: SEQNUM=%llu%s)\n", a->action, devpath, dg.seq,
               dg.seq ? " is the kernel's current counter" : "");
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
        printf("verdict: run%s%s%s\n", a->o.cfg.handlers.pass_all ? " (--all)" : "",
               trace.named_by ? ", argv[1] from handler " : "", trace.named_by ? trace.named_by : "");
        return print_result(a, &view, &env, name, &trace);
}

int verb_test(int argc, char *argv[])
{
        _cleanup_close_ int rootfd = -1;
        _cleanup_free_ struct conf *conf = NULL;
        /* Static: options_resolve_paths() gives it paths that live as long as the process. */
        static struct test_args a;
        char devpath[PATH_MAX];
        int r;

        r = parse_args(argc, argv, &a);
        if (r != CTL_RUN)
                return r;
        conf = calloc(1, sizeof(*conf));
        if (!conf) {
                ctl_err("test", "%s", strerror(ENOMEM));
                return CTL_EXIT_FAILURE;
        }
        if (load_config(&a, conf) < 0)
                return CTL_EXIT_FAILURE;
        if (ctl_device("test", a.o.cfg.sysfs_root, a.devpath, devpath, sizeof(devpath)) < 0)
                return CTL_EXIT_FAILURE;
        rootfd = sysfs_open_root(a.o.cfg.sysfs_root);
        if (rootfd < 0) {
                ctl_err("test", "cannot open %s: %s", a.o.cfg.sysfs_root, strerror(-rootfd));
                return CTL_EXIT_FAILURE;
        }
        r = run_test_event(&a, rootfd, devpath);
        fflush(stdout);
        return r < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}
