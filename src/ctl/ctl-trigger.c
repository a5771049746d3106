/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl trigger [--action add|change] [--subsystem-match S]...
 *                    [--settle] [--timeout SEC] [--dry-run] [--verbose]
 *
 * Coldplug: enumerate devices with libudev and write "ACTION UUID" into each
 * device's uevent file, one fresh UUID per device (the kernel sends it back
 * as SYNTH_UUID).  With --settle the UUIDs are given to the daemon
 * (watch-uuids) before any file is written, so none can be processed
 * unnoticed, and trigger returns once the daemon has processed exactly those
 * events.  Devices are handled in batches of at most HP_CONTROL_UUIDS_MAX.
 * On a terminal a progress line is kept up to date on stderr.
 *
 * Exit: 0, 1 (some write failed), 2 (settle timed out), 3 (no daemon), 64.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libudev.h>

#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/macro.h"
#include "control/uuid-set.h"

#define MAX_MATCHES 64

struct trigger {
        const char *action;
        const char *match[MAX_MATCHES];
        size_t n_match;
        bool settle, dry_run, verbose, tty;
        uint64_t timeout_ms;
        char **paths;               /* syspaths, owned */
        size_t n_paths;
        char (*uuid)[UUID_STRING_MAX];
        bool *failed;
        int fd;                     /* control connection with --settle, else -1 */
};

static void trigger_done(struct trigger *t)
{
        for (size_t i = 0; i < t->n_paths; i++)
                free(t->paths[i]);
        free(t->paths);
        free(t->uuid);
        free(t->failed);
        safe_close(t->fd);
}

static int enumerate(struct trigger *t)
{
        struct udev *udev = udev_new();
        struct udev_enumerate *e = udev ? udev_enumerate_new(udev) : NULL;
        struct udev_list_entry *entry;
        size_t cap = 0;
        int r = -ENOMEM;

        if (!e)
                goto out;
        for (size_t i = 0; i < t->n_match; i++)
                if ((r = udev_enumerate_add_match_subsystem(e, t->match[i])) < 0)
                        goto out;
        r = udev_enumerate_scan_devices(e);
        if (r < 0)
                goto out;
        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
                if (t->n_paths == cap) {
                        char **p = realloc(t->paths, (cap = cap ? cap * 2 : 256) * sizeof(*p));
                        if (!p) {
                                r = -ENOMEM;
                                goto out;
                        }
                        t->paths = p;
                }
                t->paths[t->n_paths] = strdup(udev_list_entry_get_name(entry));
                if (!t->paths[t->n_paths]) {
                        r = -ENOMEM;
                        goto out;
                }
                t->n_paths++;
        }
        r = 0;
out:
        udev_enumerate_unref(e);
        udev_unref(udev);
        return r;
}

static void progress(const struct trigger *t, const char *what, size_t done, size_t total, bool last)
{
        if (!t->tty)
                return;
        fprintf(stderr, "\r\033[Khotplugctl trigger: %s %zu/%zu", what, done, total);
        if (last)
                fputc('\n', stderr);
}

/* Send "VERB UUID..." for [from, to) in as few packets as fit; expect "ok" to each. */
static int send_uuids(struct trigger *t, const char *verb, size_t from, size_t to, bool only_failed)
{
        char req[HP_CONTROL_REQUEST_MAX + 1], rec[CTL_RECORD_SIZE];
        size_t len = 0;
        int r;

        for (size_t i = from; i <= to; i++) {
                bool flush = i == to || len + 1 + UUID_STRING_MAX > HP_CONTROL_REQUEST_MAX;

                if (flush && len > strlen(verb)) {
                        r = ctl_request("trigger", t->fd, req, rec, -1);
                        if (r != CTL_EXIT_OK)
                                return r;
                        if (!ctlmsg_is(rec, "ok"))
                                return ctlmsg_is(rec, "error") ? ctl_report_error("trigger", rec)
                                                               : CTL_EXIT_FAILURE;
                        len = 0;
                }
                if (i == to)
                        break;
                if (len == 0)
                        len = (size_t)snprintf(req, sizeof(req), "%s", verb);
                if (only_failed && !t->failed[i])
                        continue;
                len += (size_t)snprintf(req + len, sizeof(req) - len, " %s", t->uuid[i]);
        }
        return CTL_EXIT_OK;
}

/* Write "ACTION UUID" into each uevent file of [from, to). Return: number of failures. */
static size_t write_uevents(struct trigger *t, size_t from, size_t to)
{
        char path[4096], line[64 + UUID_STRING_MAX], esc[8192];
        size_t failures = 0;

        for (size_t i = from; i < to; i++) {
                _cleanup_close_ int fd = -1;
                int len = snprintf(line, sizeof(line), "%s %s", t->action, t->uuid[i]);

                snprintf(path, sizeof(path), "%s/uevent", t->paths[i]);
                fd = open(path, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, line, (size_t)len) != len) {
                        t->failed[i] = true;
                        failures++;
                        fprintf(stderr, "%shotplugctl: trigger: %s: %s\n", t->tty ? "\r\033[K" : "",
                                escape_cstr(path, esc, sizeof(esc)), strerror(errno));
                } else if (t->verbose) {
                        printf("%s %s\n", escape_cstr(t->paths[i], esc, sizeof(esc)), t->uuid[i]);
                }
                if (i % 16 == 0 || i + 1 == to)
                        progress(t, "triggered", i + 1, t->n_paths, i + 1 == t->n_paths && !t->settle);
        }
        return failures;
}

/* Print the devices whose UUID the daemon did not see. */
static void report_missing(const struct trigger *t, const char *rec, size_t from, size_t to)
{
        char missing[HP_CONTROL_RECORD_MAX], esc[8192];

        if (ctlmsg_get(rec, "missing", missing, sizeof(missing)) < 0)
                return;
        for (size_t i = from; i < to; i++)
                if (!t->failed[i] && strstr(missing, t->uuid[i]))
                        fprintf(stderr, "  not processed: %s (SYNTH_UUID=%s)\n",
                                escape_cstr(t->paths[i], esc, sizeof(esc)), t->uuid[i]);
}

/* wait-uuids for the current batch; reads progress records. Return: exit status. */
static int wait_batch(struct trigger *t, size_t from, size_t to)
{
        char req[64], rec[CTL_RECORD_SIZE];
        uint64_t done = 0, total = 0;
        int r;

        snprintf(req, sizeof(req), "wait-uuids %" PRIu64, t->timeout_ms);
        r = ctl_request("trigger", t->fd, req, rec, -1);
        while (r == CTL_EXIT_OK && ctlmsg_is(rec, "progress")) {
                (void)ctlmsg_get_u64(rec, "done", &done);
                (void)ctlmsg_get_u64(rec, "total", &total);
                progress(t, "processed", from + done, t->n_paths, false);
                r = ctl_recv(t->fd, rec, -1) < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
        }
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "ok")) {
                progress(t, "processed", to, t->n_paths, to == t->n_paths);
                return CTL_EXIT_OK;
        }
        if (ctlmsg_is(rec, "timeout")) {
                (void)ctlmsg_get_u64(rec, "done", &done);
                (void)ctlmsg_get_u64(rec, "total", &total);
                fprintf(stderr, "%shotplugctl: trigger: timed out, %" PRIu64 " of %" PRIu64
                                " events not processed\n",
                        t->tty ? "\r\033[K" : "", total - done, total);
                report_missing(t, rec, from, to);
                return CTL_EXIT_TIMEOUT;
        }
        return ctlmsg_is(rec, "error") ? ctl_report_error("trigger", rec) : CTL_EXIT_FAILURE;
}

static int run(struct trigger *t)
{
        size_t failures = 0;
        int r;

        for (size_t from = 0; from < t->n_paths; from += HP_CONTROL_UUIDS_MAX) {
                size_t to = MIN(t->n_paths, from + (size_t)HP_CONTROL_UUIDS_MAX);
                size_t f;

                for (size_t i = from; i < to; i++)
                        if ((r = uuid_random(t->uuid[i])) < 0) {
                                fprintf(stderr, "hotplugctl: trigger: no random bytes: %s\n", strerror(-r));
                                return CTL_EXIT_FAILURE;
                        }
                if (t->settle && (r = send_uuids(t, "watch-uuids", from, to, false)) != CTL_EXIT_OK)
                        return r;
                f = write_uevents(t, from, to);
                failures += f;
                if (t->settle && f > 0 && (r = send_uuids(t, "forget-uuids", from, to, true)) != CTL_EXIT_OK)
                        return r;
                if (t->settle && (r = wait_batch(t, from, to)) != CTL_EXIT_OK)
                        return r;
        }
        return failures ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
}

static int usage(void)
{
        fprintf(stderr, "Usage: hotplugctl trigger [--action add|change] [--subsystem-match S]...\n"
                        "                          [--settle] [--timeout SEC] [--dry-run] [--verbose]\n");
        return CTL_EXIT_USAGE;
}

static int parse_args(struct trigger *t, int argc, char *argv[])
{
        static const struct option options[] = {
                { "action", required_argument, NULL, 'a' },
                { "subsystem-match", required_argument, NULL, 's' },
                { "settle", no_argument, NULL, 'w' },
                { "timeout", required_argument, NULL, 't' },
                { "dry-run", no_argument, NULL, 'n' },
                { "verbose", no_argument, NULL, 'v' },
                { "help", no_argument, NULL, 'h' },
                { NULL, 0, NULL, 0 },
        };
        char *end;
        int c;

        while ((c = getopt_long(argc, argv, "a:s:wt:nvh", options, NULL)) >= 0) {
                switch (c) {
                case 'a':
                        if (strcmp(optarg, "add") != 0 && strcmp(optarg, "change") != 0)
                                return usage();
                        t->action = optarg;
                        break;
                case 's':
                        if (t->n_match == MAX_MATCHES)
                                return usage();
                        t->match[t->n_match++] = optarg;
                        break;
                case 'w':
                        t->settle = true;
                        break;
                case 't':
                        t->timeout_ms = strtoull(optarg, &end, 10) * 1000;
                        if (*end || end == optarg || t->timeout_ms > HP_CONTROL_TIMEOUT_MAX_SEC * 1000ULL)
                                return usage();
                        break;
                case 'n':
                        t->dry_run = true;
                        break;
                case 'v':
                        t->verbose = true;
                        break;
                default:
                        return usage();
                }
        }
        return optind < argc ? usage() : CTL_EXIT_OK;
}

int verb_trigger(int argc, char *argv[])
{
        struct trigger t = { .action = "add", .timeout_ms = 120 * 1000, .fd = -1 };
        int r;

        r = parse_args(&t, argc, argv);
        if (r != CTL_EXIT_OK)
                return r;
        t.tty = isatty(STDERR_FILENO) == 1;
        r = enumerate(&t);
        if (r < 0) {
                fprintf(stderr, "hotplugctl: trigger: cannot enumerate devices: %s\n", strerror(-r));
                trigger_done(&t);
                return CTL_EXIT_FAILURE;
        }
        if (t.dry_run) {
                char esc[8192];

                for (size_t i = 0; i < t.n_paths; i++)
                        printf("%s\n", escape_cstr(t.paths[i], esc, sizeof(esc)));
                trigger_done(&t);
                return CTL_EXIT_OK;
        }
        t.uuid = calloc(MAX(t.n_paths, (size_t)1), sizeof(*t.uuid));
        t.failed = calloc(MAX(t.n_paths, (size_t)1), sizeof(*t.failed));
        if (!t.uuid || !t.failed) {
                trigger_done(&t);
                return CTL_EXIT_FAILURE;
        }
        r = t.settle ? ctl_open("trigger", &t.fd) : CTL_EXIT_OK;
        if (r == CTL_EXIT_OK)
                r = run(&t);
        trigger_done(&t);
        return r;
}
