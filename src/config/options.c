/* SPDX-License-Identifier: MIT */
/*
 * The option table, the value parsers both the command line and the
 * configuration file use, the defaults, and --help.
 *
 * Invariants: the table is the only list of options and the only place a
 * default is written down; option_parse() is the only parser of a value.
 * Nothing here keeps state or logs; --help is the one thing printed.
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config/options.h"
#include "pipeline/filter-policy.h"
#include "shared/macro.h"
#include "shared/number.h"
#include "uevent/replay.h"
#include "uevent/subsystem-list.h"

#define CONFIG_FILE HOTPLUGD_SYSCONFDIR "/hotplugd/hotplugd.conf"

#define STR_(x) #x
#define STR(x) STR_(x)

/* The member of struct options an option sets. */
#define FIELD(m) .offset = offsetof(struct options, m), .size = sizeof(((struct options *)0)->m)
/* A configuration-file key: a row's name in hotplugd.conf. */
#define KEY(n) .key = (n)

/* udevd's rule: min(2 * CPUs + 16, HP_CHILDREN_MAX). */
static uint64_t default_max_children(void)
{
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);

        if (cpus < 1)
                cpus = 1;
        return (uint64_t)MIN(2 * cpus + 16, (long)HP_CHILDREN_MAX);
}

static const char *const after_udev_names[] = { [AFTER_UDEV_AUTO] = "auto", [AFTER_UDEV_YES] = "yes",
                                                [AFTER_UDEV_NO] = "no", NULL };

static const char *const load_modules_names[] = { [LOAD_MODULES_AUTO] = "auto", [LOAD_MODULES_YES] = "yes",
                                                  [LOAD_MODULES_NO] = "no", NULL };

static const char *const usb_device_path_names[] = { [USB_DEVICE_PATH_PROC] = "proc",
                                                     [USB_DEVICE_PATH_DEV] = "dev", NULL };

const struct option_info option_table[] = {
        {
                .name = "agent", .short_name = 'a', .type = OPTION_PATH,
                KEY("agent"), FIELD(cfg.agent),
                .def.s = HOTPLUGD_DEFAULT_AGENT,
                .arg = "PATH", .help = "program run per event as PATH NAME",
        },
        {
                .name = "hotplug-d", .short_name = 'd', .type = OPTION_PATH,
                KEY("hotplug-d"), FIELD(cfg.hotplug_d),
                .arg = "DIR", .help = "run DIR/NAME/*.hotplug then DIR/default/*.hotplug",
        },
        {
                .name = "ordering", .short_name = 'o', .type = OPTION_ORDERING,
                KEY("ordering"), FIELD(cfg.ordering),
                .def.i = ORDERING_DEVPATH,
                .arg = "MODE", .help = "event order: devpath, strict or none",
        },
        {
                .name = "max-children", .short_name = 'j', .type = OPTION_UINT,
                KEY("max-children"), FIELD(cfg.max_children),
                .min = 1, .max = HP_CHILDREN_MAX,
                .def_fn = default_max_children, .def_text = "min(2*CPUs+16, " STR(HP_CHILDREN_MAX) ")",
                .arg = "N", .help = "agents running at once, at most",
        },
        {
                .name = "concurrency", .type = OPTION_AUTO_UINT,
                KEY("concurrency"), FIELD(cfg.concurrency),
                .min = 1, .max = HP_CHILDREN_MAX, .def.u = 0,
                .arg = "auto|N",
                .help = "agents at once: the awake ones that pay for their CPU, plus those asleep, up to "
                        "max-children, or N",
        },
        {
                .name = "max-queue", .type = OPTION_UINT,
                KEY("max-queue"), FIELD(cfg.max_queue),
                .min = 1, .max = HP_QUEUE_MAX_LIMIT, .def.u = HP_QUEUE_MAX_DEFAULT,
                .arg = "N", .help = "events held at most",
        },
        {
                .name = "max-queue-bytes", .type = OPTION_SIZE,
                KEY("max-queue-bytes"), FIELD(cfg.max_queue_bytes),
                .min = HP_QUEUE_BYTES_MIN, .max = HP_QUEUE_BYTES_LIMIT, .def.u = HP_QUEUE_BYTES_DEFAULT,
                .arg = "BYTES", .help = "memory held for events at most: queue, jobs, journal",
        },
        {
                .name = "timeout", .short_name = 't', .type = OPTION_SECONDS,
                KEY("timeout"), FIELD(cfg.timeout_usec),
                .min = 1, .max = HP_TIMEOUT_MAX_SEC, .def.u = HP_TIMEOUT_DEFAULT_SEC,
                .arg = "SEC", .help = "agent run time before SIGTERM",
        },
        {
                .name = "kill-grace", .type = OPTION_SECONDS,
                KEY("kill-grace"), FIELD(cfg.kill_grace_usec),
                .min = 1, .max = HP_TIMEOUT_MAX_SEC, .def.u = HP_KILL_GRACE_SEC,
                .arg = "SEC", .help = "SIGTERM to SIGKILL",
        },
        {
                .name = "dry-run", .short_name = 'n', .type = OPTION_BOOL, FIELD(cfg.dry_run),
                .help = "log what would run, run nothing",
        },
        {
                .name = "all", .type = OPTION_BOOL,
                KEY("all"), FIELD(cfg.handlers.pass_all),
                .help = "no handler filters any event out",
        },
        {
                .name = "after-udev", .type = OPTION_CHOICE,
                KEY("after-udev"), FIELD(cfg.after_udev),
                .choices = after_udev_names, .def.i = AFTER_UDEV_AUTO,
                .arg = "WHEN", .help = "start agents after udevd broadcast the event: auto (if udevd runs), yes, no",
        },
        {
                .name = "after-udev-timeout", .type = OPTION_SECONDS,
                KEY("after-udev-timeout"), FIELD(cfg.after_udev_timeout_usec),
                .min = 1, .max = 3600, .def.u = HP_AFTER_UDEV_TIMEOUT_DEFAULT,
                .arg = "SEC", .help = "how long udevd may broadcast nothing while an event waits for it",
        },
        {
                .name = "load-modules", .type = OPTION_CHOICE,
                KEY("load-modules"), FIELD(cfg.load_modules),
                .choices = load_modules_names, .def.i = LOAD_MODULES_AUTO,
                .arg = "WHEN", .help = "load the modules of an add's MODALIAS before its agents: auto (without "
                                       "udevd and the modalias script), yes, no",
        },
        {
                .name = "hotplug-dir", .type = OPTION_PATH,
                KEY("hotplug-dir"), FIELD(cfg.hotplug_dir),
                .arg = "DIR", .help = "dispatch usb events through DIR's usermaps to DIR/usb/MODULE",
        },
        {
                .name = "usb-device-path", .type = OPTION_CHOICE,
                KEY("usb-device-path"), FIELD(cfg.handlers.usb_device_path),
                .choices = usb_device_path_names, .def.i = USB_DEVICE_PATH_DEV,
                .arg = "P", .help = "usb DEVICE variable: dev (/dev/bus/usb/B/D) or proc (/proc/bus/usb/B/D)",
        },
        {
                .name = "handler-dir", .type = OPTION_PATH,
                KEY("handler-dir"), FIELD(cfg.handlers.handler_dir),
                .def.s = HOTPLUGD_HANDLER_DIR, /* may be absent: then no external handlers */
                .arg = "DIR", .help = "external handlers",
        },
        {
                .name = "filter-policy", .type = OPTION_FILTER,
                KEY("filter-policy"), FIELD(cfg.handlers.filter_policy),
                .arg = "RULES", .help = "SUBSYSTEM=keep|drop|handlers,... over queues=drop,drivers=drop",
        },
        {
                .name = "firmware-loader", .type = OPTION_BOOL,
                KEY("firmware-loader"), FIELD(cfg.handlers.firmware_loader),
                .help = "answer firmware requests from --firmware-path",
        },
        {
                /* NULL: the handler chain's HP_FIRMWARE_PATH_DEFAULT. */
                .name = "firmware-path", .type = OPTION_SEARCH,
                KEY("firmware-path"), FIELD(cfg.handlers.firmware_path),
                .def_text = HP_FIRMWARE_PATH_DEFAULT,
                .arg = "DIRS", .help = "firmware directories, ':'-separated",
        },
        {
                /* 0: the handler chain's HP_DEVCACHE_DEFAULT. */
                .name = "handler-cache", .type = OPTION_UINT,
                KEY("handler-cache"), FIELD(cfg.handlers.cache_size),
                .min = 1, .max = HP_DEVCACHE_MAX, .def_text = STR(HP_DEVCACHE_DEFAULT),
                .arg = "N", .help = "devices whose legacy variables are kept",
        },
        {
                .name = "input-strip-quotes", .type = OPTION_BOOL,
                KEY("input-strip-quotes"), FIELD(cfg.handlers.input_strip_quotes),
                .help = "input NAME and PHYS without quotes",
        },
        {
                .name = "sysfs", .type = OPTION_PATH,
                KEY("sysfs"), FIELD(cfg.sysfs_root),
                .def.s = "/sys",
                .arg = "DIR", .help = "sysfs root",
        },
        {
                .name = "rcvbuf", .type = OPTION_SIZE,
                KEY("rcvbuf"), FIELD(cfg.rcvbuf),
                .min = 4096, .max = INT32_MAX, .def.u = HP_RCVBUF_DEFAULT,
                .arg = "BYTES", .help = "netlink receive buffer",
        },
        {
                .name = "resync", .type = OPTION_BOOL,
                KEY("resync"), FIELD(cfg.resync),
                .def.b = true,
                .help = "re-trigger devices after a buffer overflow",
        },
        {
                /* NULL: every subsystem. */
                .name = "resync-subsystems", .type = OPTION_SUBSYSTEMS,
                KEY("resync-subsystems"), FIELD(cfg.resync_subsystems),
                .def_text = "every subsystem",
                .arg = "LIST", .help = "a resync writes only to devices of these subsystems, ','-separated",
        },
        {
                .name = "control-group", .type = OPTION_GROUP,
                KEY("control-group"), FIELD(cfg.control_gid),
                .def.i = -1,
                .arg = "GROUP", .help = "members may run status, monitor, blame and info (default: root only)",
        },
        {
                .name = "listen-fd", .type = OPTION_FD, FIELD(cfg.source_fd),
                .def.i = -1,
                .arg = "N", .help = "use socket fd N instead of opening one",
        },
        {
                .name = "ready-fd", .type = OPTION_FD, FIELD(ready_fd),
                .def.i = -1,
                .arg = "N", .help = "write a newline to fd N once listening, then close it",
        },
        {
                .name = "log-level", .short_name = 'l', .type = OPTION_LOG_LEVEL,
                KEY("log-level"), FIELD(log_level),
                .def.i = LOG_INFO,
                .arg = "LEVEL", .help = "least severe logged: err, warning, notice, info, debug",
        },
        {
                .name = "log-target", .type = OPTION_LOG_TARGET, FIELD(log_target),
                .def.i = LOG_TARGET_AUTO,
                .arg = "T", .help = "log to auto, stderr or journal",
        },
        {
                /* NULL: the manager's HOTPLUGD_RUNDIR "/control". */
                .name = "control-socket", .type = OPTION_STRING, FIELD(cfg.control_path),
                .def_text = HOTPLUGD_RUNDIR "/control",
                .arg = "P", .help = "control socket path (\"\" for none)",
        },
        {
                .name = "record", .type = OPTION_PATH,
                KEY("record"), FIELD(cfg.record_path),
                .arg = "FILE", .help = "append every datagram and agent run to a recording",
        },
        {
                .name = "handover-file", .type = OPTION_PATH,
                KEY("handover-file"), FIELD(cfg.handover_path),
                .arg = "FILE", .help = "take over what the last instance left here, leave it here at exit",
        },
        {
                .name = "replay", .type = OPTION_PATH, FIELD(cfg.replay_path),
                .arg = "FILE", .help = "read events from a recording instead of the kernel",
        },
        {
                .name = "speed", .type = OPTION_SPEED, FIELD(cfg.replay_speed),
                .def.d = 1.0,
                .arg = "X", .help = "replay pace factor; 0 or max: no waiting",
        },
        {
                .name = "rebroadcast", .type = OPTION_UINT,
                KEY("rebroadcast"), FIELD(cfg.rebroadcast_group),
                .min = 2, .max = 32,
                .arg = "GROUP", .help = "re-send processed events on this netlink group",
        },
        {
                .name = "config", .short_name = 'c', .type = OPTION_PATH, FIELD(config),
                .def_text = CONFIG_FILE,
                .arg = "FILE", .help = "configuration file",
        },
        {
                .name = "check-config", .type = OPTION_FLAG, FIELD(check_config),
                .help = "check the configuration and the agent, exit (0 valid, 2 invalid)",
        },
        {
                .name = "verbose", .short_name = 'v', .type = OPTION_FLAG, FIELD(verbose),
                .help = "with --check-config: print every setting, its value and where it came from",
        },
        { .name = "help", .short_name = 'h', .type = OPTION_HELP, .help = "this text" },
        { .name = "version", .short_name = 'V', .type = OPTION_VERSION, .help = "version" },
};

const size_t option_table_size = ELEMENTSOF(option_table);
_Static_assert(ELEMENTSOF(option_table) <= OPTION_ROWS_MAX, "a set of rows is a uint64_t");

const struct option_info *option_by_name(const char *name)
{
        for (size_t i = 0; i < option_table_size; i++)
                if (strcmp(option_table[i].name, name) == 0)
                        return &option_table[i];
        return NULL;
}

const struct option_info *option_by_key(const char *key)
{
        for (size_t i = 0; i < option_table_size; i++)
                if (option_table[i].key && strcmp(option_table[i].key, key) == 0)
                        return &option_table[i];
        return NULL;
}

uint64_t option_key_bit(const char *key)
{
        const struct option_info *oi = option_by_key(key);

        return oi ? option_bit(oi) : 0;
}

/*
 * A decimal number; with @suffix, one K, M or G (either case) may follow,
 * multiplying by 1024, 1024 squared or 1024 cubed.  The one parser of
 * sizes, for the command line and the file alike.
 * Return: 0, -EINVAL for anything else, -ERANGE past UINT64_MAX.
 */
static int parse_number(const char *s, bool suffix, uint64_t *ret)
{
        static const char units[] = "KMG";
        const char *end, *u;
        uint64_t v, mult = 1;
        int r;

        r = decimal_prefix(s, &v, &end);
        if (r < 0)
                return r;
        if (suffix && *end && !end[1]) {
                u = memchr(units, toupper((unsigned char)*end), sizeof(units) - 1);
                if (u) {
                        mult = UINT64_C(1) << (10 * (u - units + 1));
                        end++;
                }
        }
        if (*end)
                return -EINVAL;
        if (v > UINT64_MAX / mult)
                return -ERANGE;
        *ret = v * mult;
        return 0;
}

int option_choice_from_string(const struct option_info *oi, const char *s)
{
        for (int i = 0; oi->choices[i]; i++)
                if (strcasecmp(s, oi->choices[i]) == 0)
                        return i;
        return -EINVAL;
}

/* yes, true, on, 1 or no, false, off, 0, in any case (OPTION_BOOL_FORM). */
static int parse_bool(const char *s)
{
        static const char *const yes[] = { "yes", "true", "on", "1" };
        static const char *const no[] = { "no", "false", "off", "0" };

        for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
                if (strcasecmp(s, yes[i]) == 0)
                        return 1;
                if (strcasecmp(s, no[i]) == 0)
                        return 0;
        }
        return -EINVAL;
}

const char *option_form(const struct option_info *oi, char *buf, size_t size)
{
        switch (oi->type) {
        case OPTION_PATH:
                return "an absolute path";
        case OPTION_STRING:
                return "any text";
        case OPTION_SEARCH:
                return "absolute paths separated by ':'";
        case OPTION_FILTER:
                return "SUBSYSTEM=keep|drop|handlers items";
        case OPTION_SUBSYSTEMS:
                return "subsystem names separated by ','";
        case OPTION_UINT:
        case OPTION_SECONDS:
                snprintf(buf, size, "a number %" PRIu64 "..%" PRIu64, oi->min, oi->max);
                return buf;
        case OPTION_AUTO_UINT:
                snprintf(buf, size, "auto or a number %" PRIu64 "..%" PRIu64, oi->min, oi->max);
                return buf;
        case OPTION_SIZE:
                snprintf(buf, size, "a number %" PRIu64 "..%" PRIu64 ", optionally followed by K, M or G "
                         "(KiB, MiB, GiB)", oi->min, oi->max);
                return buf;
        case OPTION_BOOL:
                return OPTION_BOOL_FORM;
        case OPTION_ORDERING:
                return "devpath, strict or none";
        case OPTION_LOG_LEVEL:
                return "err, warning, notice, info, debug or 0-7";
        case OPTION_LOG_TARGET:
                return "auto, stderr or journal";
        case OPTION_CHOICE: {
                size_t len = 0, n = 0;

                while (oi->choices[n])
                        n++;
                buf[0] = '\0';
                for (size_t i = 0; i < n && len < size; i++)
                        len += (size_t)snprintf(buf + len, size - len, "%s%s", oi->choices[i],
                                                i + 2 < n ? ", " : i + 1 < n ? " or " : "");
                return buf;
        }
        case OPTION_SPEED:
                snprintf(buf, size, "0 or max (no waiting), or a factor from %g to %d like 1 or 2.5",
                         1.0 / HP_REPLAY_SLOWDOWN_MAX, HP_REPLAY_SPEED_MAX);
                return buf;
        case OPTION_FD:
                return "a descriptor number";
        case OPTION_GROUP:
                return "the name or number of an existing group";
        default:
                return "no value";
        }
}

/* Every ':'-separated item of @s is an absolute path. */
static bool search_path_valid(const char *s)
{
        for (;;) {
                if (*s != '/')
                        return false;
                s = strchr(s, ':');
                if (!s)
                        return true;
                s++;
        }
}

static bool filter_valid(const char *name, const char *value, char *why, size_t why_size)
{
        _cleanup_free_ struct filter_policy *p = malloc(sizeof(*p));
        int r;

        r = p ? filter_policy_parse(p, value) : -ENOMEM;
        if (r == -ENOMEM)
                snprintf(why, why_size, "out of memory checking %s", name);
        else if (r == -E2BIG)
                snprintf(why, why_size, "%s has more than %d rules with the defaults", name, HP_FILTER_RULES_MAX);
        else if (r < 0)
                snprintf(why, why_size, "%s wants SUBSYSTEM=keep|drop|handlers items", name);
        return r >= 0;
}

static bool subsystems_valid(const char *name, const char *value, char *why, size_t why_size)
{
        const char *bad;
        size_t n;

        if (subsystem_list_check(value, &bad, &n) == 0)
                return true;
        snprintf(why, why_size, "%s wants subsystem names separated by ',', and '%.*s' is not one", name,
                 (int)MIN(n, (size_t)64), bad);
        return false;
}

/* "NAME must be FORM" in @why; -EINVAL. */
static int must_be(const struct option_info *oi, const char *name, char *why, size_t why_size)
{
        char form[160];

        snprintf(why, why_size, "%s must be %s", name, option_form(oi, form, sizeof(form)));
        return -EINVAL;
}

/* The kinds whose value is the text itself, checked. */
static int parse_text(const struct option_info *oi, const char *name, const char *text, bool cli, char *why,
                      size_t why_size)
{
        switch (oi->type) {
        case OPTION_PATH:
                return cli || text[0] == '/' ? 0 : must_be(oi, name, why, why_size);
        case OPTION_SEARCH:
                return search_path_valid(text) ? 0 : must_be(oi, name, why, why_size);
        case OPTION_FILTER:
                return filter_valid(name, text, why, why_size) ? 0 : -EINVAL;
        case OPTION_SUBSYSTEMS:
                return subsystems_valid(name, text, why, why_size) ? 0 : -EINVAL;
        default:
                return 0;
        }
}

/* The kinds with a closed set of names; @ret is the value. */
static int parse_name(const struct option_info *oi, const char *name, const char *text, int *ret, char *why,
                      size_t why_size)
{
        int r;

        switch (oi->type) {
        case OPTION_BOOL:
                r = parse_bool(text);
                break;
        case OPTION_ORDERING:
                r = ordering_from_string(text);
                break;
        case OPTION_LOG_LEVEL:
                r = log_level_from_string(text);
                break;
        case OPTION_CHOICE:
                r = option_choice_from_string(oi, text);
                break;
        default: /* OPTION_LOG_TARGET */
                r = log_target_from_string(text);
                break;
        }
        if (r < 0)
                return must_be(oi, name, why, why_size);
        *ret = r;
        return 0;
}

/*
 * A group by name, or by number when no group has that name; it must exist
 * (looked up now, through NSS: a reload looks again).  @ret: its gid.
 */
static int parse_group(const struct option_info *oi, const char *name, const char *text, int *ret, char *why,
                       size_t why_size)
{
        struct group gr, *found = NULL;
        char buf[4096];
        uint64_t n;
        int r;

        if (!*text)
                return must_be(oi, name, why, why_size);
        r = getgrnam_r(text, &gr, buf, sizeof(buf), &found);
        if (!found && parse_number(text, false, &n) >= 0 && n <= INT_MAX)
                r = getgrgid_r((gid_t)n, &gr, buf, sizeof(buf), &found);
        if (!found) {
                if (r != 0)
                        snprintf(why, why_size, "%s: cannot look up the group (%s)", name, strerror(r));
                else
                        snprintf(why, why_size, "%s: no such group", name);
                return -EINVAL;
        }
        if (gr.gr_gid > INT_MAX) {
                snprintf(why, why_size, "%s: gid %u is past what hotplugd keeps", name, (unsigned)gr.gr_gid);
                return -EINVAL;
        }
        *ret = (int)gr.gr_gid;
        return 0;
}

/* The numeric kinds, in oi->min..oi->max ("auto" is 0 for AUTO_UINT). */
static int parse_uint(const struct option_info *oi, const char *name, const char *text, uint64_t *ret,
                      char *why, size_t why_size)
{
        uint64_t n;

        if (oi->type == OPTION_AUTO_UINT && strcmp(text, "auto") == 0) {
                *ret = 0;
                return 0;
        }
        if (parse_number(text, oi->type == OPTION_SIZE, &n) < 0 || n < oi->min || n > oi->max)
                return must_be(oi, name, why, why_size);
        *ret = n;
        return 0;
}

int option_parse(const struct option_info *oi, const char *name, const char *text, bool cli,
                 union option_value *ret, char *why, size_t why_size)
{
        union option_value v = { .u = 0 };
        uint64_t n;
        int r;

        switch (oi->type) {
        case OPTION_PATH:
        case OPTION_STRING:
        case OPTION_SEARCH:
        case OPTION_FILTER:
        case OPTION_SUBSYSTEMS:
                r = parse_text(oi, name, text, cli, why, why_size);
                v.s = text;
                break;
        case OPTION_AUTO_UINT:
        case OPTION_UINT:
        case OPTION_SIZE:
        case OPTION_SECONDS:
                r = parse_uint(oi, name, text, &v.u, why, why_size);
                break;
        case OPTION_BOOL:
                r = parse_name(oi, name, text, &v.i, why, why_size);
                v.b = v.i;
                break;
        case OPTION_ORDERING:
        case OPTION_LOG_LEVEL:
        case OPTION_LOG_TARGET:
        case OPTION_CHOICE:
                r = parse_name(oi, name, text, &v.i, why, why_size);
                break;
        case OPTION_SPEED:
                r = replay_speed_from_string(text, &v.d);
                if (r < 0)
                        r = must_be(oi, name, why, why_size);
                break;
        case OPTION_FD:
                r = parse_number(text, false, &n) < 0 || n > INT_MAX ? must_be(oi, name, why, why_size) : 0;
                v.i = (int)n;
                break;
        case OPTION_GROUP:
                r = parse_group(oi, name, text, &v.i, why, why_size);
                break;
        default:
                snprintf(why, why_size, "%s takes no value", name);
                r = -EINVAL;
        }
        if (r < 0)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* Write the unsigned @v into a member of @size bytes (unsigned, int, size_t, usec_t). */
static void store_uint(char *p, size_t size, uint64_t v)
{
        if (size == sizeof(uint32_t)) {
                uint32_t w = (uint32_t)v;

                memcpy(p, &w, sizeof(w));
        } else
                memcpy(p, &v, sizeof(v));
}

bool option_store(void *o, const struct option_info *oi, const union option_value *v, size_t limit)
{
        char *p = (char *)o + oi->offset;

        if (oi->size == 0 || oi->offset + oi->size > limit)
                return false;
        if (option_is_text(oi->type)) {
                memcpy(p, &v->s, sizeof(v->s));
                return true;
        }
        switch (oi->type) {
        case OPTION_UINT:
        case OPTION_AUTO_UINT:
        case OPTION_SIZE:
                store_uint(p, oi->size, v->u);
                break;
        case OPTION_SECONDS:
                store_uint(p, oi->size, v->u * USEC_PER_SEC);
                break;
        case OPTION_BOOL:
        case OPTION_FLAG:
                memcpy(p, &v->b, sizeof(v->b));
                break;
        case OPTION_SPEED:
                memcpy(p, &v->d, sizeof(v->d));
                break;
        default: /* the enums and descriptors: int-sized */
                memcpy(p, &v->i, sizeof(v->i));
                break;
        }
        return true;
}

void options_init(struct options *o)
{
        *o = (struct options){ 0 };
        o->cfg.trust = UEVENT_TRUST_KERNEL;
        o->cfg.control_fd = -1; /* only a service manager hands one over (daemon/service.c) */
        o->cfg.shutdown_grace_usec = HP_SHUTDOWN_GRACE_SEC * USEC_PER_SEC; /* not an option */
        for (size_t i = 0; i < option_table_size; i++) {
                const struct option_info *oi = &option_table[i];
                union option_value v = oi->def;

                if (oi->def_fn)
                        v.u = oi->def_fn();
                (void)option_store(o, oi, &v, sizeof(*o));
        }
        o->cfg.handlers.sysfs_root = o->cfg.sysfs_root;
}

void options_defaults(struct manager_config *cfg)
{
        struct options o;

        options_init(&o);
        *cfg = o.cfg;
}

const char *options_config_path(const char *config)
{
        return config ? config : CONFIG_FILE;
}

/* The default as --help shows it, or "" for none. */
static const char *default_text(const struct option_info *oi, char *buf, size_t size)
{
        const union option_value *d = &oi->def;

        if (oi->def_text)
                return oi->def_text;
        if (option_is_text(oi->type))
                return d->s ? d->s : "";
        switch (oi->type) {
        case OPTION_UINT:
        case OPTION_SECONDS:
                if (d->u)
                        snprintf(buf, size, "%" PRIu64, d->u);
                return d->u ? buf : "";
        case OPTION_AUTO_UINT:
                if (!d->u)
                        return "auto";
                snprintf(buf, size, "%" PRIu64, d->u);
                return buf;
        case OPTION_SIZE:
                for (int shift = 30; shift >= 10; shift -= 10)
                        if (d->u && d->u % (UINT64_C(1) << shift) == 0) {
                                snprintf(buf, size, "%" PRIu64 "%c", d->u >> shift, "KMG"[shift / 10 - 1]);
                                return buf;
                        }
                snprintf(buf, size, "%" PRIu64, d->u);
                return buf;
        case OPTION_ORDERING:
                return ordering_to_string((enum ordering)d->i);
        case OPTION_LOG_LEVEL:
                return log_level_to_string(d->i);
        case OPTION_LOG_TARGET:
                return log_target_to_string((enum log_target)d->i);
        case OPTION_CHOICE:
                return oi->choices[d->i];
        case OPTION_SPEED:
                snprintf(buf, size, "%g", d->d);
                return buf;
        case OPTION_BOOL: /* a file key has a default worth saying; a command-line switch is off */
                return oi->key ? (d->b ? "yes" : "no") : "";
        default:
                return "";
        }
}

char *option_help_line(const struct option_info *oi, int column, char *buf, size_t size)
{
        char left[64], def_buf[64], range[64] = "";
        const char *def = default_text(oi, def_buf, sizeof(def_buf));
        const char *no = oi->type == OPTION_BOOL ? "[no-]" : "";
        size_t len;
        int n;

        if (oi->short_name)
                n = snprintf(left, sizeof(left), "  -%c, --%s%s", oi->short_name, no, oi->name);
        else
                n = snprintf(left, sizeof(left), "      --%s%s", no, oi->name);
        if (oi->arg)
                snprintf(left + n, sizeof(left) - (size_t)n, "=%s", oi->arg);
        if (oi->type == OPTION_UINT)
                snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64 "%s", oi->min, oi->max, *def ? ", " : "");
        if ((int)strlen(left) < column)
                n = snprintf(buf, size, "%-*s%s", column, left, oi->help);
        else
                n = snprintf(buf, size, "%s\n%*s%s", left, column, "", oi->help);
        len = MIN((size_t)MAX(n, 0), size);
        if (*range || *def)
                len += (size_t)snprintf(buf + len, size - len, " (%s%s%s)", range, *def ? "default " : "", def);
        len = MIN(len, size);
        snprintf(buf + len, size - len, "\n");
        return buf;
}

void options_help(void)
{
        char line[512];

        printf("Usage: hotplugd [OPTIONS]\n\n"
               "Run a hotplug agent for every kernel uevent, in order.\n\n");
        for (size_t i = 0; i < option_table_size; i++)
                fputs(option_help_line(&option_table[i], 27, line, sizeof(line)), stdout);
        printf("\nA --[no-]NAME option also takes --NAME=BOOL, BOOL being " OPTION_BOOL_FORM ".\n"
               "A size takes a K, M or G suffix (KiB, MiB, GiB): --rcvbuf=16M.\n"
               "Options override the configuration file key by key; see hotplugd.conf(5).\n");
}
