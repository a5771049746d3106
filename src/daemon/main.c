/* SPDX-License-Identifier: MIT */
/*
 * hotplugd: the daemon's entry point.  Takes its options (config/options.h:
 * built-in defaults, then the configuration file, then the command line,
 * each later source overriding the earlier one key by key), takes the
 * socket from systemd when socket-activated, tells the service manager
 * when it is ready (service.c), and runs the manager.  systemd is optional
 * at run time.
 *
 * Exit status: 0 orderly stop (and a valid configuration with
 * --check-config, warnings included), 1 runtime failure, 2 configuration
 * error, 64 usage error.
 *
 * HOTPLUGD_TEST_TRUST, a compile-time switch set only for hotplugd-test
 * (tests/integration, never installed), makes the daemon trust every sender
 * on a --listen-fd socket; nothing at run time can make hotplugd do that.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "config/conffile.h"
#include "config/options.h"
#include "daemon/service.h"
#include "loop/manager.h"
#include "shared/bounds.h"
#include "shared/log.h"

#define EXIT_CONFIG 2
#define EXIT_USAGE 64

/* Why @path is not a @dir (directory) or not executable, or NULL if it is one. */
static const char *path_problem(const char *path, bool dir)
{
        struct stat st;

        if (stat(path, &st) < 0)
                return errno == ENOENT ? "does not exist" : strerror(errno);
        if (dir && !S_ISDIR(st.st_mode))
                return "is not a directory";
        if (!dir && !S_ISREG(st.st_mode))
                return "is not a regular file";
        if (!dir && access(path, X_OK) < 0)
                return "is not executable";
        return NULL;
}

/* "hotplugd: warning: WHAT PATH WHY: CONSEQUENCE" on stderr when @path is not a @dir (directory) or not executable. */
static void warn_path(const char *what, const char *path, bool dir, const char *consequence)
{
        const char *why = path_problem(path, dir);

        if (why)
                fprintf(stderr, "hotplugd: warning: %s %s %s: %s\n", what, path, why, consequence);
}

/*
 * --check-config: what would run for an event, checked.  An agent chosen
 * (by the command line or the file) that cannot be executed is an error:
 * the daemon would start, but every event's agent would fail.  A missing
 * hotplug.d or handler directory is a warning (nothing there yet is a
 * valid state), and so is the default agent's absence (the multiplexer
 * runs instead).  @chosen: the keys the command line or the file set.
 * Return: 0, or EXIT_CONFIG.
 */
static int check_paths(const struct options *o, uint64_t chosen)
{
        const struct manager_config *c = &o->cfg;
        const char *why;

        if (o->default_agent_missing)
                fprintf(stderr, "hotplugd: warning: agent %s is not installed or not executable: the hotplug.d "
                        "multiplexer over %s runs instead\n", c->agent, c->hotplug_d);
        if (c->handlers.handler_dir && (chosen & option_key_bit("handler-dir")))
                warn_path("handler-dir", c->handlers.handler_dir, true, "no external handler is loaded");
        if (c->hotplug_d) {
                warn_path("hotplug-d", c->hotplug_d, true, "no program runs for any event");
                return 0;
        }
        if (!c->agent || !(why = path_problem(c->agent, false)))
                return 0;
        fprintf(stderr, "hotplugd: agent %s %s: every event's agent would fail to start\n", c->agent, why);
        return EXIT_CONFIG;
}

/*
 * Read the configuration file and apply it under the command line's values.
 * A missing default file means built-in defaults; a missing --config file
 * is an error.  Return: 0, or EXIT_CONFIG with the reason on stderr.
 */
static int load_config(struct options *o, struct conf *conf)
{
        const char *path = options_config_path(o->config);
        struct conf_error err;
        int r;

        r = options_load(o, conf, &err);
        if (r < 0) {
                fprintf(stderr, "hotplugd: %s\n", err.msg);
                return EXIT_CONFIG;
        }
        if (o->check_config) {
                printf(r > 0 ? "%s: absent, built-in defaults\n" : "%s: valid\n", path);
                if (o->verbose)
                        options_print_effective(o, r == 0 ? conf : NULL, path, stdout);
                if (check_paths(o, o->set | (r == 0 ? conf->set : 0)) != 0)
                        return EXIT_CONFIG;
        }
        log_set_max_level(o->log_level);
        return 0;
}

static void log_default_agent(const struct options *o)
{
        if (o->default_agent_missing)
                log_notice("%s is not installed: running %s/NAME/*.hotplug and %s/default/*.hotplug instead",
                           o->cfg.agent, o->cfg.hotplug_d, o->cfg.hotplug_d);
}

/* Reload (SIGHUP, hotplugctl reload): the command line (@userdata) over a freshly read file. */
static int reload_config(struct manager *m, void *userdata, char *err, size_t err_size)
{
        const struct options *base = userdata; /* command line only, paths resolved */
        struct options o = *base;
        struct conf_error e;
        struct conf *conf;
        int r;

        conf = calloc(1, sizeof(*conf));
        if (!conf)
                return -ENOMEM;
        (void)sd_notify(false, "RELOADING=1\nSTATUS=Reloading configuration");
        r = options_load(&o, conf, &e);
        if (r < 0)
                snprintf(err, err_size, "%s", e.msg);
        else {
                r = manager_reconfigure(m, &o.cfg); /* swaps in its own copy */
                if (r < 0)
                        snprintf(err, err_size, "cannot apply %s: %s", options_config_path(o.config), strerror(-r));
                else {
                        log_set_max_level(o.log_level);
                        log_default_agent(&o);
                }
        }
        free(conf);
        (void)sd_notify(false, "READY=1\nSTATUS=Processing uevents");
        return r;
}

/*
 * At exit, after the loop: the lines still waiting get HP_LOG_EXIT_FLUSH_USEC
 * to go out; what a stopped journal did not take by then is lost (saying
 * so would wait on it too).
 */
static int log_finish(int status)
{
        (void)log_flush_wait(HP_LOG_EXIT_FLUSH_USEC);
        log_buffer_stop();
        return status;
}

int main(int argc, char *argv[])
{
        /* Static: the options point into them for as long as the daemon runs. */
        static struct conf conf;
        static struct options base;
        struct options o;
        struct manager *m = NULL;
        struct service svc = SERVICE_INIT;
        char why[PATH_MAX + 128];
        int r;

        /* Files and sockets hotplugd creates are for root unless it says
         * otherwise (the control socket); agents get 022 back (spawner.c). */
        umask(077);
        /* A write to a pipe or socket whose reader is gone (stderr's, the
         * --ready-fd pipe) fails with EPIPE instead of killing the daemon
         * (log-sink.c); agents get SIGPIPE's default back (spawner.c). */
        signal(SIGPIPE, SIG_IGN);
        options_init(&o);
#ifdef HOTPLUGD_TEST_TRUST
        /* hotplugd-test only (tests/integration): a --listen-fd socketpair plays the kernel. */
        o.cfg.trust = UEVENT_TRUST_ANY;
#endif
        r = options_parse_argv(&o, argc, argv);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        log_set_max_level(o.log_level);
        /* Paths are resolved before the daemon moves to "/" (agents run with cwd "/"). */
        if (options_resolve_paths(&o, why, sizeof(why)) < 0) {
                fprintf(stderr, "hotplugd: %s\nTry 'hotplugd --help' for more information.\n", why);
                return EXIT_USAGE;
        }
        if (chdir("/") < 0)
                return EXIT_USAGE;
        base = o;
        r = load_config(&o, &conf);
        if (r != 0 || o.check_config)
                return r;
        log_open(o.log_target, "hotplugd");
        r = log_buffer_start();
        if (r < 0)
                log_warning_errno(r, "cannot write the log without blocking; each line waits until it is written");
        log_default_agent(&o);

        svc.ready_fd = o.ready_fd;
        service_take_fds(&svc, &o.cfg);
        /* A dry run or a replay leaves the handover file to the real daemon. */
        if (o.cfg.handover_path && (!*o.cfg.handover_path || o.cfg.dry_run || o.cfg.replay_path)) {
                if (*o.cfg.handover_path)
                        log_info("handover-file is not used %s", o.cfg.dry_run ? "in a dry run" : "with --replay");
                o.cfg.handover_path = NULL;
        }

        r = manager_new(&o.cfg, &m);
        if (r < 0) {
                log_error_errno(r, "cannot start");
                return log_finish(EXIT_FAILURE);
        }
        manager_set_reload(m, reload_config, &base);
        manager_set_config_path(m, options_config_path(base.config));
        service_started(&svc, m, o.cfg.handover_path != NULL);
        r = manager_run(m);
        (void)sd_notify(false, "STOPPING=1");
        (void)manager_handover_save(m);
        manager_free(m);
        return log_finish(r < 0 ? EXIT_FAILURE : 0);
}
