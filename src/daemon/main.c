/* SPDX-License-Identifier: MIT */
/*
 * hotplugd: the daemon's entry point.  Parses options, takes the socket from
 * systemd when socket-activated, tells the service manager when it is ready
 * (service.c), and runs the manager.  systemd is optional at run time.
 *
 * Exit status: 0 orderly stop, 1 runtime failure, 2 configuration error,
 * 64 usage error.
 *
 * Configuration: built-in defaults, then the configuration file, then the
 * command line; each later source overrides the earlier one key by key.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <systemd/sd-daemon.h>

#include "config.h"
#include "config/conffile.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "loop/manager.h"
#include "uevent/replay.h"
#include "daemon/service.h"

#define EXIT_CONFIG 2
#define EXIT_USAGE 64

#define DEFAULT_CONFIG_FILE HOTPLUGD_SYSCONFDIR "/hotplugd/hotplugd.conf"

/* What the command line said, beyond struct manager_config. */
struct cli {
        uint32_t set;            /* CONF_BIT() of every option given: they override the file */
        const char *config;      /* --config, NULL: DEFAULT_CONFIG_FILE, absence allowed */
        bool check_config;       /* --check-config: validate and exit */
        int log_level;           /* --log-level, < 0: not given */
        int ready_fd;            /* --ready-fd, < 0: not given */
        enum log_target target;
};

static void help(void)
{
        printf("Usage: hotplugd [OPTIONS]\n\n"
               "Run a hotplug agent for every kernel uevent, in order.\n\n"
               "  -a, --agent=PATH         program run per event as PATH NAME (default %s)\n"
               "  -d, --hotplug-d=DIR      run DIR/NAME/*.hotplug then DIR/default/*.hotplug\n"
               "  -o, --ordering=MODE      devpath (default), strict or none\n"
               "  -j, --max-children=N     agents running at once (default min(2*CPUs+16, %d))\n"
               "      --max-queue=N        events held at most (default %d)\n"
               "  -t, --timeout=SEC        agent run time before SIGTERM (default %d)\n"
               "      --kill-grace=SEC     SIGTERM to SIGKILL (default %d)\n"
               "  -n, --dry-run            log what would run, run nothing\n"
               "      --all                no handler filters any event out\n"
               "      --handler-dir=DIR    external handlers (default %s)\n"
               "      --filter-policy=RULES\n"
               "                           SUBSYSTEM=keep|drop|handlers,... over queues=drop,drivers=drop\n"
               "      --firmware-loader    answer firmware requests from --firmware-path\n"
               "      --firmware-path=DIRS firmware directories, ':'-separated (default %s)\n"
               "      --handler-cache=N    devices whose legacy variables are kept (default %d)\n"
               "      --input-strip-quotes input NAME and PHYS without quotes\n"
               "      --sysfs=DIR          sysfs root (default /sys)\n"
               "      --rcvbuf=BYTES       netlink receive buffer (default %d)\n"
               "      --no-resync          do not re-trigger devices after a buffer overflow\n"
               "      --listen-fd=N        use socket fd N instead of opening one\n"
               "      --ready-fd=N         write a newline to fd N once listening, then close it\n"
               "  -l, --log-level=LEVEL    err, warning, notice, info (default), debug\n"
               "      --log-target=T       auto (default), stderr or journal\n"
               "      --control-socket=P   control socket path (default %s/control; \"\" for none)\n"
               "      --record=FILE        append every datagram and agent run to a recording\n"
               "      --replay=FILE        read events from a recording instead of the kernel\n"
               "      --speed=X            replay pace factor (default 1; 0 or max: no waiting)\n"
               "      --rebroadcast=GROUP  re-send processed events on netlink group 2..32\n"
               "  -c, --config=FILE        configuration file (default %s)\n"
               "      --check-config       check the configuration and exit (0 valid, 2 invalid)\n"
               "  -h, --help               this text\n"
               "  -V, --version            version\n",
               HOTPLUGD_DEFAULT_AGENT, HP_CHILDREN_MAX, HP_QUEUE_MAX_DEFAULT, HP_TIMEOUT_DEFAULT_SEC,
               HP_KILL_GRACE_SEC, HOTPLUGD_HANDLER_DIR, HP_FIRMWARE_PATH_DEFAULT, HP_DEVCACHE_DEFAULT,
               HP_RCVBUF_DEFAULT, HOTPLUGD_RUNDIR, DEFAULT_CONFIG_FILE);
}

static int parse_uint(const char *s, unsigned long long min, unsigned long long max, unsigned long long *ret)
{
        char *end;
        unsigned long long v;

        if (!s || !*s || *s == '-')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || *end || v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

enum {
        ARG_MAX_QUEUE = 0x100,
        ARG_KILL_GRACE,
        ARG_ALL,
        ARG_HANDLER_DIR,
        ARG_SYSFS,
        ARG_RCVBUF,
        ARG_LISTEN_FD,
        ARG_READY_FD,
        ARG_LOG_TARGET,
        ARG_CHECK_CONFIG,
        ARG_CONTROL_SOCKET,
        ARG_RECORD,
        ARG_REPLAY,
        ARG_SPEED,
        ARG_REBROADCAST,
        ARG_FILTER_POLICY,
        ARG_FIRMWARE_LOADER,
        ARG_FIRMWARE_PATH,
        ARG_HANDLER_CACHE,
        ARG_INPUT_STRIP_QUOTES,
        ARG_NO_RESYNC,
};

/* The handler chain's options: the same values as their configuration keys. */
static int parse_handler_option(int c, const char *arg, struct manager_config *cfg, struct cli *cli)
{
        enum conf_key k = c == ARG_FILTER_POLICY     ? CONF_FILTER_POLICY
                          : c == ARG_FIRMWARE_LOADER ? CONF_FIRMWARE_LOADER
                          : c == ARG_FIRMWARE_PATH   ? CONF_FIRMWARE_PATH
                          : c == ARG_HANDLER_CACHE   ? CONF_HANDLER_CACHE
                                                     : CONF_INPUT_STRIP_QUOTES;
        char why[256];

        if (conf_set_handler_option(k, arg, &cfg->handlers, why, sizeof(why)) < 0) {
                fprintf(stderr, "hotplugd: %s: '%s'\n", why, arg ? arg : "");
                return -EINVAL;
        }
        cli->set |= CONF_BIT(k);
        return 0;
}

static int parse_argv(int argc, char *argv[], struct manager_config *cfg, struct cli *cli)
{
        static const struct option options[] = {
                { "agent", required_argument, NULL, 'a' },
                { "hotplug-d", required_argument, NULL, 'd' },
                { "ordering", required_argument, NULL, 'o' },
                { "max-children", required_argument, NULL, 'j' },
                { "max-queue", required_argument, NULL, ARG_MAX_QUEUE },
                { "timeout", required_argument, NULL, 't' },
                { "kill-grace", required_argument, NULL, ARG_KILL_GRACE },
                { "dry-run", no_argument, NULL, 'n' },
                { "all", no_argument, NULL, ARG_ALL },
                { "handler-dir", required_argument, NULL, ARG_HANDLER_DIR },
                { "filter-policy", required_argument, NULL, ARG_FILTER_POLICY },
                { "firmware-loader", no_argument, NULL, ARG_FIRMWARE_LOADER },
                { "firmware-path", required_argument, NULL, ARG_FIRMWARE_PATH },
                { "handler-cache", required_argument, NULL, ARG_HANDLER_CACHE },
                { "input-strip-quotes", no_argument, NULL, ARG_INPUT_STRIP_QUOTES },
                { "sysfs", required_argument, NULL, ARG_SYSFS },
                { "rcvbuf", required_argument, NULL, ARG_RCVBUF },
                { "no-resync", no_argument, NULL, ARG_NO_RESYNC },
                { "listen-fd", required_argument, NULL, ARG_LISTEN_FD },
                { "ready-fd", required_argument, NULL, ARG_READY_FD },
                { "log-level", required_argument, NULL, 'l' },
                { "log-target", required_argument, NULL, ARG_LOG_TARGET },
                { "control-socket", required_argument, NULL, ARG_CONTROL_SOCKET },
                { "record", required_argument, NULL, ARG_RECORD },
                { "replay", required_argument, NULL, ARG_REPLAY },
                { "speed", required_argument, NULL, ARG_SPEED },
                { "rebroadcast", required_argument, NULL, ARG_REBROADCAST },
                { "config", required_argument, NULL, 'c' },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { NULL, 0, NULL, 0 },
        };
        unsigned long long v;
        int c, r;

        while ((c = getopt_long(argc, argv, "a:d:o:j:t:nl:c:hV", options, NULL)) >= 0) {
                switch (c) {
                case 'a':
                        cfg->agent = optarg;
                        cli->set |= CONF_BIT(CONF_AGENT);
                        break;
                case 'd':
                        cfg->hotplug_d = optarg;
                        cli->set |= CONF_BIT(CONF_HOTPLUG_D);
                        break;
                case 'o':
                        r = ordering_from_string(optarg);
                        if (r < 0) {
                                fprintf(stderr, "hotplugd: --ordering must be devpath, strict or none: %s\n",
                                        optarg);
                                return -EINVAL;
                        }
                        cfg->ordering = (enum ordering)r;
                        cli->set |= CONF_BIT(CONF_ORDERING);
                        break;
                case 'j':
                        if (parse_uint(optarg, 1, HP_CHILDREN_MAX, &v) < 0) {
                                fprintf(stderr, "hotplugd: --max-children must be 1..%d: %s\n", HP_CHILDREN_MAX,
                                        optarg);
                                return -EINVAL;
                        }
                        cfg->max_children = (unsigned)v;
                        cli->set |= CONF_BIT(CONF_MAX_CHILDREN);
                        break;
                case ARG_MAX_QUEUE:
                        if (parse_uint(optarg, 1, HP_QUEUE_MAX_LIMIT, &v) < 0) {
                                fprintf(stderr, "hotplugd: --max-queue must be 1..%d: %s\n", HP_QUEUE_MAX_LIMIT,
                                        optarg);
                                return -EINVAL;
                        }
                        cfg->max_queue = (size_t)v;
                        cli->set |= CONF_BIT(CONF_MAX_QUEUE);
                        break;
                case 't':
                case ARG_KILL_GRACE:
                        if (parse_uint(optarg, 1, HP_TIMEOUT_MAX_SEC, &v) < 0) {
                                fprintf(stderr, "hotplugd: %s must be 1..%d seconds: %s\n",
                                        c == 't' ? "--timeout" : "--kill-grace", HP_TIMEOUT_MAX_SEC, optarg);
                                return -EINVAL;
                        }
                        if (c == 't')
                                cfg->timeout_usec = v * USEC_PER_SEC;
                        else
                                cfg->kill_grace_usec = v * USEC_PER_SEC;
                        cli->set |= CONF_BIT(c == 't' ? CONF_TIMEOUT : CONF_KILL_GRACE);
                        break;
                case 'n':
                        cfg->dry_run = true;
                        break;
                case ARG_ALL:
                        cfg->handlers.pass_all = true;
                        cli->set |= CONF_BIT(CONF_ALL);
                        break;
                case ARG_HANDLER_DIR:
                        cfg->handlers.handler_dir = optarg;
                        cli->set |= CONF_BIT(CONF_HANDLER_DIR);
                        break;
                case ARG_FILTER_POLICY:
                case ARG_FIRMWARE_LOADER:
                case ARG_FIRMWARE_PATH:
                case ARG_HANDLER_CACHE:
                case ARG_INPUT_STRIP_QUOTES:
                        if (parse_handler_option(c, optarg, cfg, cli) < 0)
                                return -EINVAL;
                        break;
                case ARG_SYSFS:
                        cfg->sysfs_root = optarg;
                        cfg->handlers.sysfs_root = optarg;
                        cli->set |= CONF_BIT(CONF_SYSFS);
                        break;
                case ARG_RCVBUF:
                        if (parse_uint(optarg, 4096, INT_MAX, &v) < 0) {
                                fprintf(stderr, "hotplugd: --rcvbuf must be 4096..%d: %s\n", INT_MAX, optarg);
                                return -EINVAL;
                        }
                        cfg->rcvbuf = (int)v;
                        cli->set |= CONF_BIT(CONF_RCVBUF);
                        break;
                case ARG_NO_RESYNC:
                        cfg->resync = false;
                        cli->set |= CONF_BIT(CONF_RESYNC);
                        break;
                case ARG_LISTEN_FD:
                        if (parse_uint(optarg, 0, INT_MAX, &v) < 0) {
                                fprintf(stderr, "hotplugd: --listen-fd needs a descriptor number: %s\n", optarg);
                                return -EINVAL;
                        }
                        cfg->source_fd = (int)v;
                        break;
                case ARG_READY_FD:
                        /* Not inherited by agents: it closes only when we are ready. */
                        if (parse_uint(optarg, 0, INT_MAX, &v) < 0 || fcntl((int)v, F_SETFD, FD_CLOEXEC) < 0) {
                                fprintf(stderr, "hotplugd: --ready-fd needs an open descriptor: %s\n", optarg);
                                return -EINVAL;
                        }
                        cli->ready_fd = (int)v;
                        break;
                case 'l':
                        r = log_level_from_string(optarg);
                        if (r < 0) {
                                fprintf(stderr, "hotplugd: unknown log level: %s\n", optarg);
                                return -EINVAL;
                        }
                        cli->log_level = r;
                        cli->set |= CONF_BIT(CONF_LOG_LEVEL);
                        break;
                case ARG_CONTROL_SOCKET:
                        cfg->control_path = optarg;
                        break;
                case ARG_RECORD:
                        cfg->record_path = optarg;
                        cli->set |= CONF_BIT(CONF_RECORD);
                        break;
                case ARG_REPLAY:
                        cfg->replay_path = optarg;
                        break;
                case ARG_SPEED:
                        if (replay_speed_from_string(optarg, &cfg->replay_speed) < 0) {
                                fprintf(stderr, "hotplugd: --speed must be 0 or max (no waiting), or a factor from "
                                        "%g to %d like 1 or 2.5: %s\n", 1.0 / HP_REPLAY_SLOWDOWN_MAX,
                                        HP_REPLAY_SPEED_MAX, optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_REBROADCAST:
                        if (parse_uint(optarg, 2, 32, &v) < 0) {
                                fprintf(stderr, "hotplugd: --rebroadcast needs a netlink group 2..32 "
                                        "(group 1 is the kernel's): %s\n", optarg);
                                return -EINVAL;
                        }
                        cfg->rebroadcast_group = (unsigned)v;
                        cli->set |= CONF_BIT(CONF_REBROADCAST);
                        break;
                case ARG_LOG_TARGET:
                        if (strcmp(optarg, "auto") == 0)
                                cli->target = LOG_TARGET_AUTO;
                        else if (strcmp(optarg, "stderr") == 0)
                                cli->target = LOG_TARGET_STDERR;
                        else if (strcmp(optarg, "journal") == 0)
                                cli->target = LOG_TARGET_JOURNAL;
                        else {
                                fprintf(stderr, "hotplugd: --log-target must be auto, stderr or journal\n");
                                return -EINVAL;
                        }
                        break;
                case 'c':
                        cli->config = optarg;
                        break;
                case ARG_CHECK_CONFIG:
                        cli->check_config = true;
                        break;
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("hotplugd %s\n", PACKAGE_VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "hotplugd: unexpected argument: %s\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/* Paths are resolved before the daemon moves to "/" (agents run with cwd "/"). */
static int absolutize(const char *what, const char **path)
{
        char *abs;

        if (!*path || (*path)[0] == '/')
                return 0;
        abs = realpath(*path, NULL);
        if (!abs) {
                fprintf(stderr, "hotplugd: %s %s: %s\n", what, *path, strerror(errno));
                return -errno;
        }
        *path = abs; /* lives as long as the process */
        return 0;
}

static int resolve_paths(struct manager_config *cfg)
{
        if (absolutize("--record", &cfg->record_path) < 0 || absolutize("--replay", &cfg->replay_path) < 0 ||
            absolutize("--agent", &cfg->agent) < 0 || absolutize("--hotplug-d", &cfg->hotplug_d) < 0 ||
            absolutize("--handler-dir", &cfg->handlers.handler_dir) < 0 ||
            absolutize("--sysfs", &cfg->sysfs_root) < 0)
                return -EINVAL;
        cfg->handlers.sysfs_root = cfg->sysfs_root;
        if (chdir("/") < 0)
                return -errno;
        return 0;
}

/*
 * Read the configuration file into @conf and apply it under the command
 * line's values.  A missing default file means built-in defaults; a missing
 * --config file is an error.  Return: 0, or EXIT_CONFIG with the reason on
 * stderr.
 */
static int load_config(const struct cli *cli, struct conf *conf, struct manager_config *cfg)
{
        const char *path = cli->config ? cli->config : DEFAULT_CONFIG_FILE;
        struct conf_error err;
        int r;

        r = conf_load(path, conf, &err);
        if (r == -ENOENT && !cli->config) {
                conf->set = 0;
                if (cli->check_config)
                        printf("%s: absent, built-in defaults\n", path);
                return 0;
        }
        if (r < 0) {
                fprintf(stderr, "hotplugd: %s\n", err.msg);
                return EXIT_CONFIG;
        }
        if (cli->check_config)
                printf("%s: valid\n", path);
        conf_apply(conf, cfg, cli->set);
        if (!(cli->set & CONF_BIT(CONF_LOG_LEVEL)) && (conf->set & CONF_BIT(CONF_LOG_LEVEL)))
                log_set_max_level(conf->log_level);
        return 0;
}

/* Reload (SIGHUP, hotplugctl reload): the command line over a freshly read file. */
struct reload_ctx {
        struct cli cli;
        struct manager_config base; /* command line only, paths resolved */
};

static int reload_config(struct manager *m, void *userdata, char *err, size_t err_size)
{
        struct reload_ctx *ctx = userdata;
        const char *path = ctx->cli.config ? ctx->cli.config : DEFAULT_CONFIG_FILE;
        struct manager_config cfg = ctx->base;
        struct conf_error e;
        struct conf *conf;
        int r;

        conf = calloc(1, sizeof(*conf));
        if (!conf)
                return -ENOMEM;
        (void)sd_notify(false, "RELOADING=1\nSTATUS=Reloading configuration");
        r = conf_load(path, conf, &e);
        if (r == -ENOENT && !ctx->cli.config) {
                conf->set = 0;
                r = 0;
        } else if (r < 0)
                snprintf(err, err_size, "%s", e.msg);
        if (r >= 0) {
                conf_apply(conf, &cfg, ctx->cli.set);
                cfg.handlers.sysfs_root = cfg.sysfs_root;
                r = manager_reconfigure(m, &cfg); /* copies the strings it keeps */
                if (r < 0)
                        snprintf(err, err_size, "cannot apply %s: %s", path, strerror(-r));
                else if (!(ctx->cli.set & CONF_BIT(CONF_LOG_LEVEL)))
                        log_set_max_level((conf->set & CONF_BIT(CONF_LOG_LEVEL)) ? conf->log_level : LOG_INFO);
        }
        free(conf);
        (void)sd_notify(false, "READY=1\nSTATUS=Processing uevents");
        return r;
}

int main(int argc, char *argv[])
{
        /* Static: cfg points into it for as long as the daemon runs. */
        static struct conf conf;
        static struct reload_ctx reload;
        struct manager_config cfg;
        struct manager *m = NULL;
        struct cli cli = { .log_level = -1, .ready_fd = -1, .target = LOG_TARGET_AUTO };
        struct service svc = SERVICE_INIT;
        int r;

        /* Files and sockets hotplugd creates are for root unless it says
         * otherwise (the control socket); agents get 022 back (spawner.c). */
        umask(077);
        manager_config_init(&cfg);
        r = parse_argv(argc, argv, &cfg, &cli);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : 0;
        if (cli.log_level >= 0)
                log_set_max_level(cli.log_level);
        if (absolutize("--config", &cli.config) < 0 || resolve_paths(&cfg) < 0)
                return EXIT_USAGE;
        reload.cli = cli;
        reload.base = cfg;
        r = load_config(&cli, &conf, &cfg);
        if (r != 0 || cli.check_config)
                return r;
        cfg.handlers.sysfs_root = cfg.sysfs_root;
        log_open(cli.target, "hotplugd");

        svc.ready_fd = cli.ready_fd;
        service_take_fds(&svc, &cfg);

        r = manager_new(&cfg, &m);
        if (r < 0) {
                log_error_errno(r, "cannot start");
                return EXIT_FAILURE;
        }
        manager_set_reload(m, reload_config, &reload);
        service_started(&svc, m);
        r = manager_run(m);
        (void)sd_notify(false, "STOPPING=1");
        manager_free(m);
        return r < 0 ? EXIT_FAILURE : 0;
}
