/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl info [--json] [-a] DEVICE, hotplugctl info --export [--json]:
 * what the daemon knows of a device (the "info" request, control.h): its
 * last events with SEQNUM, action and time, what each waited for, the
 * programs each ran with exit status and duration, the legacy variables
 * the device model holds and whether the device is in the resync set.
 * With -a, the device's sysfs attributes and those of each parent, read
 * here (not by the daemon), as udevadm info -a shows them.
 *
 * A device's reply is at most HP_INFO_EVENTS x (3 + HP_INFO_RUNS) records
 * and its variables; it is read whole (CTL_INFO_RECORDS_MAX records at
 * most) and then printed.  --export asks page after page (control.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctl/blame.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "ctl/device-arg.h"
#include "shared/escape.h"
#include "shared/json.h"
#include "shared/macro.h"

/* Records of one device's reply, at most: its events' and its variables' (generous). */
#define CTL_INFO_RECORDS_MAX (HP_INFO_EVENTS * (3 + HP_INFO_RUNS) + 4096)
/* -a: attributes read per device at most, and the bytes shown of each value. */
#define CTL_INFO_ATTRS_MAX 512
#define CTL_INFO_ATTR_BYTES 4096

struct info_args {
        bool json, walk, export;
        const char *device;
};

/* One device's reply: its records, as received. */
struct info_reply {
        char **rec;
        size_t n;
};

static const char help[] =
        "info [--json] [-a] [--socket=PATH] DEVICE\n"
        "       info --export [--json] [--socket=PATH]\n\n"
        "Show what hotplugd knows of DEVICE: its last events (at most " CTL_STR(HP_INFO_EVENTS) ") with\n"
        "SEQNUM, action and time, what each waited for, the programs each ran with\n"
        "their exit status and duration, the legacy variables the device model holds\n"
        "for it and whether it is in the resync set (believed present).  DEVICE is a\n"
        "path below /sys, a DEVPATH (/devices/..., known even once the device is\n"
        "gone) or a device node (/dev/sda).\n\n"
        "Options:\n"
        "  -j, --json             one JSON object (--export: one per line)\n"
        "  -a, --attribute-walk   also the sysfs attributes of the device and of each\n"
        "                         parent, as udevadm info -a shows them\n"
        "  -e, --export           every device hotplugd knows, one record each\n"
        CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0, 1 failure (or DEVICE is no device), 3 no daemon (or refused),\n"
        "4 hotplugd knows nothing of DEVICE, 64 usage.\n";

static void reply_clear(struct info_reply *r)
{
        for (size_t i = 0; i < r->n; i++)
                free(r->rec[i]);
        free(r->rec);
        *r = (struct info_reply){ 0 };
}

/* Read one device's records up to (not with) the next "end" or "device"; @rec holds its "device"
 * record (CTL_RECORD_SIZE bytes).  Return: the exit status; @rec then holds the record that ended it. */
static int read_device(int fd, struct info_reply *r, char *rec)
{
        char **nv;
        int n;

        for (;;) {
                if (ctlmsg_is(rec, "end"))
                        return CTL_EXIT_OK;
                if (ctlmsg_is(rec, "error"))
                        return ctl_report_error("info", rec);
                if (r->n > 0 && ctlmsg_is(rec, "device"))
                        return CTL_EXIT_OK;
                if (r->n >= CTL_INFO_RECORDS_MAX) {
                        ctl_err("info", "the daemon sent too many records");
                        return CTL_EXIT_FAILURE;
                }
                nv = reallocarray(r->rec, r->n + 1, sizeof(*r->rec));
                if (!nv || !(nv[r->n] = strdup(rec))) {
                        if (nv)
                                r->rec = nv;
                        ctl_err("info", "out of memory");
                        return CTL_EXIT_FAILURE;
                }
                r->rec = nv;
                r->n++;
                n = ctl_recv(fd, rec, -1);
                if (n < 0) {
                        ctl_err("info", "lost the daemon: %s", strerror(-n));
                        return CTL_EXIT_FAILURE;
                }
        }
}

/* ---- text -------------------------------------------------------------- */

static void put_time(FILE *f, const char *secs)
{
        char buf[64];
        struct tm tm;
        time_t t = (time_t)strtoll(secs, NULL, 10);
        const char *frac = strchr(secs, '.');

        if (localtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm) > 0)
                fprintf(f, "%s%s", buf, frac ? frac : "");
        else
                fprintf(f, "%s", secs);
}

/* The value of @key in @rec, escaped for the terminal, into @buf ("" if absent). */
static const char *field(const char *rec, const char *key, char *buf, size_t size)
{
        char raw[HP_CONTROL_RECORD_MAX + 1];

        if (ctlmsg_get(rec, key, raw, sizeof(raw)) < 0)
                raw[0] = '\0';
        return escape_cstr(raw, buf, size);
}

static uint64_t number(const char *rec, const char *key)
{
        uint64_t v = 0;

        (void)ctlmsg_get_u64(rec, key, &v);
        return v;
}

/* The entries of "vars" records, cont= joined, each to @fn. */
static void for_each_var(const struct info_reply *r, void (*fn)(const char *entry, void *arg), void *arg)
{
        char key[16], val[HP_CONTROL_RECORD_MAX + 1], entry[2 * HP_CONTROL_RECORD_MAX + 2] = "";

        for (size_t i = 0; i < r->n; i++) {
                if (!ctlmsg_is(r->rec[i], "vars"))
                        continue;
                for (const char *p = r->rec[i]; (p = ctlmsg_next_field(p, key, sizeof(key), val, sizeof(val)));) {
                        if (strcmp(key, "cont") == 0) {
                                strncat(entry, val, sizeof(entry) - strlen(entry) - 1);
                                continue;
                        }
                        if (strcmp(key, "var") != 0)
                                continue;
                        if (entry[0])
                                fn(entry, arg);
                        entry[0] = '\0';
                        strncat(entry, val, sizeof(entry) - 1);
                }
        }
        if (entry[0])
                fn(entry, arg);
}

static void put_var(const char *entry, void *arg)
{
        char esc[8 * HP_CONTROL_RECORD_MAX];

        fprintf(arg, "  %s\n", escape_cstr(entry, esc, sizeof(esc)));
}

static void put_event_text(FILE *f, const char *rec)
{
        char a[64], o[32], t[64];

        fprintf(f, "  SEQNUM %" PRIu64 " %s at ", number(rec, "seqnum"), field(rec, "action", a, sizeof(a)));
        put_time(f, field(rec, "time", t, sizeof(t)));
        fprintf(f, ": %s", field(rec, "outcome", o, sizeof(o)));
        if (number(rec, "runs_left_out"))
                fprintf(f, " (%" PRIu64 " more programs not kept)", number(rec, "runs_left_out"));
        fputc('\n', f);
}

static void put_sub_text(FILE *f, const char *rec)
{
        char a[HP_INFO_TEXT_MAX * 4], b[64], t[32];

        if (ctlmsg_is(rec, "wait")) {
                uint64_t blocker = number(rec, "blocker"), seqnum = number(rec, "seqnum");

                /* The reason names a slot's limit or udevd; an event it waited for is named by SEQNUM. */
                fprintf(f, "    waited %s for ", blame_format_time(number(rec, "waited_us"), t, sizeof(t)));
                if (blocker != 0 && blocker != seqnum)
                        fprintf(f, "SEQNUM %" PRIu64 ": ", blocker);
                fprintf(f, "%s\n", field(rec, "reason", a, sizeof(a)));
                return;
        }
        fprintf(f, "    ran %s (pid %s): ", field(rec, "program", a, sizeof(a)), field(rec, "pid", b, sizeof(b)));
        if (ctlmsg_get(rec, "status", b, sizeof(b)) < 0) {
                fprintf(f, "running\n");
                return;
        }
        fprintf(f, "%s after %s%s\n", field(rec, "status", b, sizeof(b)),
                blame_format_time(number(rec, "duration_us"), t, sizeof(t)),
                number(rec, "timed_out") ? " (timed out)" : "");
}

static void put_text(FILE *f, const struct info_reply *r)
{
        const char *dev = r->rec[0];
        char p[PATH_MAX * 4], bus[128], drv[128], in[16];
        size_t vars = 0;

        fprintf(f, "Device:     %s\n", field(dev, "devpath", p, sizeof(p)));
        if (number(dev, "modelled"))
                fprintf(f, "Model:      bus %s, driver %s\n", *field(dev, "bus", bus, sizeof(bus)) ? bus : "(none)",
                        *field(dev, "driver", drv, sizeof(drv)) ? drv : "(none)");
        else
                fprintf(f, "Model:      no record\n");
        field(dev, "in_resync_set", in, sizeof(in));
        fprintf(f, "Resync set: %s\n", strcmp(in, "1") == 0 ? "yes (believed present)" :
                                       strcmp(in, "0") == 0 ? "no" : "not known");
        fprintf(f, "Add ran:    %s\n", number(dev, "handled") ? "yes, in this boot (trigger --skip-handled leaves it out)"
                                                               : "no, not in this boot");
        for (size_t i = 1; i < r->n; i++)
                vars += ctlmsg_is(r->rec[i], "vars");
        if (vars) {
                fprintf(f, "Variables (legacy, from the model):\n");
                for_each_var(r, put_var, f);
        }
        fprintf(f, "Events:     %" PRIu64 " kept (the last %d at most), oldest first\n", number(dev, "events"),
                HP_INFO_EVENTS);
        for (size_t i = 1; i < r->n; i++) {
                if (ctlmsg_is(r->rec[i], "event"))
                        put_event_text(f, r->rec[i]);
                else if (ctlmsg_is(r->rec[i], "wait") || ctlmsg_is(r->rec[i], "run"))
                        put_sub_text(f, r->rec[i]);
        }
}

/* ---- JSON -------------------------------------------------------------- */

static void json_field_str(struct json_writer *w, const char *rec, const char *key, const char *name)
{
        char raw[HP_CONTROL_RECORD_MAX + 1];

        if (ctlmsg_get(rec, key, raw, sizeof(raw)) < 0)
                return;
        json_keyz(w, name);
        json_str(w, raw);
}

static void json_field_u64(struct json_writer *w, const char *rec, const char *key, const char *name)
{
        uint64_t v;

        if (ctlmsg_get_u64(rec, key, &v) < 0)
                return;
        json_keyz(w, name);
        json_u64(w, v);
}

static void json_var(const char *entry, void *arg)
{
        struct json_writer *w = arg;
        const char *eq = strchr(entry, '=');

        json_key(w, entry, eq ? (size_t)(eq - entry) : strlen(entry));
        json_str(w, eq ? eq + 1 : "");
}

static void json_sub(struct json_writer *w, const char *rec)
{
        char raw[64];

        json_begin_object(w);
        if (ctlmsg_is(rec, "wait")) {
                json_field_u64(w, rec, "blocker", "blocker");
                json_field_u64(w, rec, "waited_us", "waited_usec");
                json_field_str(w, rec, "reason", "reason");
        } else {
                json_field_str(w, rec, "program", "program");
                json_field_u64(w, rec, "pid", "pid");
                json_field_u64(w, rec, "started_usec", "started_monotonic_usec");
                json_field_str(w, rec, "status", "status");
                if (ctlmsg_get(rec, "status", raw, sizeof(raw)) == 0) {
                        json_keyz(w, "failed");
                        json_bool(w, number(rec, "failed"));
                        json_keyz(w, "timed_out");
                        json_bool(w, number(rec, "timed_out"));
                        json_field_u64(w, rec, "duration_us", "duration_usec");
                }
        }
        json_end_object(w);
}

/* The waits or the runs (@word) of the event @seqnum, as an array. */
static void json_subs(struct json_writer *w, const struct info_reply *r, const char *word, uint64_t seqnum)
{
        json_keyz(w, strcmp(word, "wait") == 0 ? "waits" : "runs");
        json_begin_array(w);
        for (size_t i = 1; i < r->n; i++)
                if (ctlmsg_is(r->rec[i], word) && number(r->rec[i], "seqnum") == seqnum)
                        json_sub(w, r->rec[i]);
        json_end_array(w);
}

static void put_json(struct json_writer *w, const void *arg)
{
        const struct info_reply *r = arg;
        const char *dev = r->rec[0];
        char in[16], t[64];

        json_begin_object(w);
        json_field_str(w, dev, "devpath", "devpath");
        json_keyz(w, "model");
        if (number(dev, "modelled")) {
                json_begin_object(w);
                json_field_str(w, dev, "bus", "bus");
                json_field_str(w, dev, "driver", "driver");
                json_keyz(w, "variables");
                json_begin_object(w);
                for_each_var(r, json_var, w);
                json_end_object(w);
                json_end_object(w);
        } else {
                json_null(w);
        }
        json_keyz(w, "in_resync_set");
        field(dev, "in_resync_set", in, sizeof(in));
        if (strcmp(in, "1") == 0 || strcmp(in, "0") == 0)
                json_bool(w, in[0] == '1');
        else
                json_null(w);
        json_keyz(w, "handled");
        json_bool(w, number(dev, "handled") != 0);
        json_keyz(w, "events");
        json_begin_array(w);
        for (size_t i = 1; i < r->n; i++) {
                const char *e = r->rec[i];

                if (!ctlmsg_is(e, "event"))
                        continue;
                json_begin_object(w);
                json_field_u64(w, e, "seqnum", "seqnum");
                json_field_str(w, e, "action", "action");
                json_keyz(w, "time");
                if (ctlmsg_get(e, "time", t, sizeof(t)) == 0 && json_is_number(t))
                        json_number_text(w, t);
                else
                        json_null(w);
                json_field_u64(w, e, "mono_usec", "monotonic_usec");
                json_field_str(w, e, "outcome", "outcome");
                json_field_u64(w, e, "runs_left_out", "runs_left_out");
                json_subs(w, r, "wait", number(e, "seqnum"));
                json_subs(w, r, "run", number(e, "seqnum"));
                json_end_object(w);
        }
        json_end_array(w);
        json_end_object(w);
}

static int put_reply(const struct info_args *a, const struct info_reply *r)
{
        if (a->json)
                return json_print_line(stdout, put_json, r) < 0 ? CTL_EXIT_FAILURE : CTL_EXIT_OK;
        put_text(stdout, r);
        return CTL_EXIT_OK;
}

/* ---- -a: the attributes, up the parents ------------------------------------ */

/* The name the link @dirfd/@name points to ("" if none), into @buf. */
static const char *link_name(int dirfd, const char *name, char *buf, size_t size)
{
        char target[PATH_MAX];
        ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
        const char *base;

        if (n < 0)
                n = 0;
        target[n] = '\0';
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
        n = (ssize_t)strnlen(base, size - 1);
        memcpy(buf, base, (size_t)n);
        buf[n] = '\0';
        return buf;
}

static int cmp_name(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One attribute's value (at most CTL_INFO_ATTR_BYTES, a trailing newline dropped, escaped) into @buf.
 * Return: true if it could be read. */
static bool read_attr(int dirfd, const char *name, char *buf, size_t size)
{
        char raw[CTL_INFO_ATTR_BYTES];
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
        ssize_t n;

        if (fd < 0)
                return false;
        n = read(fd, raw, sizeof(raw));
        if (n < 0)
                return false;
        while (n > 0 && raw[n - 1] == '\n')
                n--;
        escape_bytes(raw, (size_t)n, buf, size);
        return true;
}

/* The readable regular files of the device directory @dirfd, sorted, "uevent" left out. */
static void put_attrs(FILE *f, int dirfd, bool parent)
{
        char *names[CTL_INFO_ATTRS_MAX], val[CTL_INFO_ATTR_BYTES * 4 + 4], esc[NAME_MAX * 4 + 1];
        DIR *d;
        size_t n = 0;
        struct dirent *de;
        struct stat st;
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        d = fd < 0 ? NULL : fdopendir(fd);
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((de = readdir(d)) && n < ELEMENTSOF(names)) {
                if (strcmp(de->d_name, "uevent") == 0 || fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode) || !(st.st_mode & 0444))
                        continue;
                names[n] = strdup(de->d_name);
                if (names[n])
                        n++;
        }
        qsort(names, n, sizeof(*names), cmp_name);
        for (size_t i = 0; i < n; i++) {
                if (read_attr(dirfd, names[i], val, sizeof(val)))
                        fprintf(f, "    %s{%s}==\"%s\"\n", parent ? "ATTRS" : "ATTR",
                                escape_cstr(names[i], esc, sizeof(esc)), val);
                free(names[i]);
        }
        closedir(d);
}

/* The device @devpath's and its parents' attributes, up to /sys/devices. */
static int walk_attrs(FILE *f, const char *devpath)
{
        char path[PATH_MAX], sub[NAME_MAX + 1], drv[NAME_MAX + 1], esc[PATH_MAX * 4];
        bool parent = false;

        fprintf(f, "\nAs udevadm info -a: the device's attributes, then each parent's (read from /sys now).\n");
        snprintf(path, sizeof(path), "%s", devpath);
        while (strncmp(path, "/devices/", 9) == 0) {
                char dir[PATH_MAX + 8];
                _cleanup_close_ int dfd = -1;
                char *slash;

                snprintf(dir, sizeof(dir), "/sys%s", path);
                dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (dfd >= 0 && faccessat(dfd, "uevent", F_OK, 0) == 0) {
                        const char *k = strrchr(path, '/') + 1;

                        fprintf(f, "\n  looking at %sdevice '%s':\n", parent ? "parent " : "",
                                escape_cstr(path, esc, sizeof(esc)));
                        fprintf(f, "    %s==\"%s\"\n", parent ? "KERNELS" : "KERNEL", escape_cstr(k, esc, sizeof(esc)));
                        link_name(dfd, "subsystem", sub, sizeof(sub));
                        link_name(dfd, "driver", drv, sizeof(drv));
                        fprintf(f, "    %s==\"%s\"\n", parent ? "SUBSYSTEMS" : "SUBSYSTEM",
                                escape_cstr(sub, esc, sizeof(esc)));
                        fprintf(f, "    %s==\"%s\"\n", parent ? "DRIVERS" : "DRIVER", escape_cstr(drv, esc, sizeof(esc)));
                        put_attrs(f, dfd, parent);
                        parent = true;
                } else if (!parent) {
                        ctl_err("info", "%s is not in /sys now: no attributes to show", escape_cstr(path, esc, sizeof(esc)));
                        return CTL_EXIT_FAILURE;
                }
                slash = strrchr(path, '/');
                if (!slash || slash == path)
                        break;
                *slash = '\0';
        }
        return CTL_EXIT_OK;
}

/* ---- the requests ------------------------------------------------------ */

/* The DEVPATH @arg names, into @ret.  Return: CTL_EXIT_OK, or the exit status after saying why not. */
static int resolve(const char *arg, char *ret, size_t size)
{
        char esc[PATH_MAX * 4];
        int r;

        if (strncmp(arg, "/dev/", 5) == 0)
                r = ctl_devpath_of_node(arg, ret, size);
        else
                r = ctl_devpath_of_sysfs(arg, ret, size);
        if (r == 0)
                return CTL_EXIT_OK;
        /* A DEVPATH as given names the device even once it is gone: the daemon may know of it. */
        if (r == -ENOENT && ctl_device_arg_devpath(arg, ret, size))
                return CTL_EXIT_OK;
        if (r == -ENODEV || r == -ENOTBLK || r == -ENOTDIR)
                ctl_err("info", "%s is not a device: %s", escape_cstr(arg, esc, sizeof(esc)),
                        r == -ENOTBLK ? "not a device node" : "no uevent file there");
        else
                ctl_err("info", "%s: %s", escape_cstr(arg, esc, sizeof(esc)), strerror(-r));
        return CTL_EXIT_FAILURE;
}

/* Send "info WORDS KEY=DEVPATH" (DEVPATH escaped; none if NULL) and read the first record into @rec. */
static int send_request(int fd, const char *words, const char *key, const char *devpath, char *rec)
{
        char req[HP_CONTROL_REQUEST_MAX + 1], esc[HP_CONTROL_REQUEST_MAX];
        int n;

        if (devpath && ctlmsg_escape(devpath, esc, sizeof(esc)) < 0) {
                ctl_err("info", "device path too long");
                return CTL_EXIT_FAILURE;
        }
        n = devpath ? snprintf(req, sizeof(req), "info %s%s%s=%s", words, *words ? " " : "", key, esc)
                    : snprintf(req, sizeof(req), "info %s", words);
        if (n < 0 || n >= (int)sizeof(req)) {
                ctl_err("info", "device path too long");
                return CTL_EXIT_FAILURE;
        }
        return ctl_request("info", fd, req, rec, -1);
}

static int info_one(const struct info_args *a, int fd)
{
        char devpath[PATH_MAX], rec[CTL_RECORD_SIZE], esc[PATH_MAX * 4];
        struct info_reply r = { 0 };
        int x;

        x = resolve(a->device, devpath, sizeof(devpath));
        if (x == CTL_EXIT_OK)
                x = send_request(fd, "", "devpath", devpath, rec);
        if (x == CTL_EXIT_OK && !ctlmsg_is(rec, "device"))
                x = ctlmsg_is(rec, "error") ? ctl_report_error("info", rec) : CTL_EXIT_FAILURE;
        if (x == CTL_EXIT_OK)
                x = read_device(fd, &r, rec);
        if (x != CTL_EXIT_OK) {
                reply_clear(&r);
                return x;
        }
        if (!number(r.rec[0], "history") && !number(r.rec[0], "modelled") &&
            strcmp(field(r.rec[0], "in_resync_set", esc, sizeof(esc)), "1") != 0) {
                ctl_err("info", "hotplugd knows nothing of %s: no event of it since the daemon started "
                        "(or it was forgotten, the least recently heard of first), not in the device model, "
                        "not believed present", escape_cstr(devpath, esc, sizeof(esc)));
                reply_clear(&r);
                return CTL_EXIT_NOT_KNOWN;
        }
        x = put_reply(a, &r);
        reply_clear(&r);
        if (x == CTL_EXIT_OK && a->walk)
                x = walk_attrs(stdout, devpath);
        return x;
}

static int info_export(const struct info_args *a, int fd)
{
        char rec[CTL_RECORD_SIZE], last[PATH_MAX] = "";
        bool first_page = true;
        int x;

        for (;;) {
                x = send_request(fd, "export", "after", first_page ? NULL : last, rec);
                first_page = false;
                while (x == CTL_EXIT_OK && ctlmsg_is(rec, "device")) {
                        struct info_reply r = { 0 };

                        x = read_device(fd, &r, rec);
                        if (x == CTL_EXIT_OK) {
                                x = put_reply(a, &r);
                                if (!a->json)
                                        putchar('\n');
                        }
                        reply_clear(&r);
                }
                if (x != CTL_EXIT_OK)
                        return x;
                if (!ctlmsg_is(rec, "end"))
                        return ctlmsg_is(rec, "error") ? ctl_report_error("info", rec) : CTL_EXIT_FAILURE;
                if (number(rec, "more") == 0 || ctlmsg_get(rec, "last", last, sizeof(last)) < 0)
                        return fflush(stdout) == 0 ? CTL_EXIT_OK : CTL_EXIT_FAILURE;
        }
}

int verb_info(int argc, char *argv[])
{
        static const struct option opts[] = {
                { "json", no_argument, NULL, 'j' },
                { "attribute-walk", no_argument, NULL, 'a' },
                { "export", no_argument, NULL, 'e' },
                CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { .verb = "info", .shortopts = "jaeh", .longopts = opts, .help = help,
                                      .args = "[DEVICE]" };
        _cleanup_close_ int fd = -1;
        struct info_args a = { 0 };
        int c, x;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                if (c == 'j')
                        a.json = true;
                else if (c == 'a')
                        a.walk = true;
                else if (c == 'e')
                        a.export = true;
        }
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        a.device = optind < argc ? argv[optind] : NULL;
        if (a.export && (a.device || a.walk))
                return ctl_usage_error("info", "--export shows every device: no DEVICE, no --attribute-walk");
        if (!a.export && !a.device)
                return ctl_usage_error("info", "no DEVICE given (or --export for every device)");
        if (a.walk && a.json)
                return ctl_usage_error("info", "--attribute-walk is text only: not with --json");
        if (a.device && ctl_device_arg_check("info", a.device) != CTL_EXIT_OK)
                return CTL_EXIT_USAGE;
        x = ctl_open("info", &fd);
        if (x != CTL_EXIT_OK)
                return x;
        return a.export ? info_export(&a, fd) : info_one(&a, fd);
}
