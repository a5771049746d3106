/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl monitor [--property] [--processed] [--json] [--subsystem-match
 * S[/DEVTYPE]]... [--property-match KEY=GLOB]...: print events as
 * the daemon receives them (SEQNUM, time, gap markers) and, with
 * --processed, as they are queued, started and finished (agent status and
 * duration).  The matches travel in the request: the daemon sends nothing
 * of an event that does not pass them.  --property adds each event's entries: the kernel's KEY=value
 * list, and with --processed the handlers' additions and the agent's argv
 * and environment ("env" records, control.h).  Runs until SIGINT or SIGTERM
 * (exit 0; they are taken through a signalfd) or the daemon goes away (exit 1).
 *
 * Invariant: a record that "env" records follow is held (struct pending)
 * until its last one (more=0) came, then printed whole: one text block or
 * one JSON line per record.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>

#include "config.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "uevent/uevent.h"

#define FIELD_MAX HP_CONTROL_RECORD_MAX

/* One event's entries as the "env" records bring them (control.h); a
 * STARTED record has two sets (argv, agent), the others one. */
#define SETS_MAX 2
/* Most entries and bytes of one set: more means the daemon sent nonsense. */
#define SET_ENTRIES_MAX (2 * (HP_UEVENT_MAX_VARS + HP_ENV_ADD_MAX_VARS) + 8)
#define ENTRY_BYTES_MAX (HP_UEVENT_MAX_SIZE + HP_ENV_ADD_MAX_BYTES)

struct env_set {
        char name[16];
        char *entry[SET_ENTRIES_MAX];
        size_t len[SET_ENTRIES_MAX];
        size_t n;
};

/* A record waiting for its "env" records. */
struct pending {
        bool open;
        char head[CTL_RECORD_SIZE];
        struct env_set set[SETS_MAX];
        size_t n_sets;
};

static void pending_clear(struct pending *p)
{
        for (size_t s = 0; s < p->n_sets; s++)
                for (size_t i = 0; i < p->set[s].n; i++)
                        free(p->set[s].entry[i]);
        p->n_sets = 0;
        p->open = false;
}

/* ---- JSON ---------------------------------------------------------------------- */

/* A set's entries: "KEY=VALUE" as members of an object, arguments as an array. */
static void json_set(struct json_writer *w, const struct env_set *set)
{
        bool args = strcmp(set->name, "argv") == 0;

        json_keyz(w, strcmp(set->name, "kernel") == 0 ? "event" : strcmp(set->name, "agent") == 0 ? "env" : set->name);
        if (args)
                json_begin_array(w);
        else
                json_begin_object(w);
        for (size_t i = 0; i < set->n; i++) {
                const char *e = set->entry[i];
                size_t klen = strcspn(e, "=");

                if (args) {
                        json_bytes(w, e, set->len[i]);
                        continue;
                }
                json_key(w, e, klen);
                json_bytes(w, e + klen + (e[klen] == '='), set->len[i] - klen - (e[klen] == '='));
        }
        if (args)
                json_end_array(w);
        else
                json_end_object(w);
}

/* {"kind": WORD, fields typed by the protocol, then the sets}. */
static void json_event(struct json_writer *w, const void *arg)
{
        const struct pending *p = arg;
        char kind[32];

        snprintf(kind, sizeof(kind), "%.*s", (int)strcspn(p->head, " "), p->head);
        json_begin_object(w);
        json_keyz(w, "kind");
        json_str(w, kind);
        ctlmsg_json_fields(w, p->head);
        for (size_t s = 0; s < p->n_sets; s++)
                json_set(w, &p->set[s]);
        json_end_object(w);
}

/* ---- text ---------------------------------------------------------------------- */

/* @len bytes of @s for a terminal: UTF-8 text as it is; control characters
 * (C0, DEL, C1), backslash and bytes that are not UTF-8 as "\xNN". */
static void print_text(const char *s, size_t len)
{
        const unsigned char *p = (const unsigned char *)s;

        for (size_t i = 0; i < len;) {
                size_t k = utf8_char_len(p + i, len - i);
                bool control = k == 0 || p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\' ||
                               (k == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0);

                if (!control) {
                        fwrite(p + i, 1, k, stdout);
                        i += k;
                        continue;
                }
                for (size_t j = 0; j < (k ? k : 1); j++)
                        printf("\\x%02x", p[i + j]);
                i += k ? k : 1;
        }
}

/* The entries under the event's line: KEY=VALUE lines, argv[N]=ARG for arguments. */
static void print_sets(const struct pending *p)
{
        for (size_t s = 0; s < p->n_sets; s++) {
                const struct env_set *set = &p->set[s];
                bool args = strcmp(set->name, "argv") == 0;

                for (size_t i = 0; i < set->n; i++) {
                        if (args)
                                printf("argv[%zu]=", i);
                        print_text(set->entry[i], set->len[i]);
                        putchar('\n');
                }
        }
        putchar('\n');
}

/* Value of @key escaped for a terminal, "" if absent. */
static const char *field(const char *rec, const char *key, char *buf, size_t size)
{
        char raw[FIELD_MAX];

        if (ctlmsg_get(rec, key, raw, sizeof(raw)) < 0)
                return strcpy(buf, "");
        return escape_cstr(raw, buf, size);
}

/* "HH:MM:SS.UUUUUU " of the record's time (SECONDS.MICROSECONDS); "-" if it has none of that form. */
static void print_time(const char *rec)
{
        char t[48], stamp[32];
        time_t sec;
        struct tm tm;

        if (ctlmsg_get(rec, "time", t, sizeof(t)) < 0 || !t[0] || t[strspn(t, "0123456789.")]) {
                printf("%-15s ", "-");
                return;
        }
        sec = (time_t)strtoll(t, NULL, 10);
        localtime_r(&sec, &tm);
        strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
        printf("%s.%.6s ", stamp, strchr(t, '.') ? strchr(t, '.') + 1 : "000000");
}

static void print_human(const char *rec)
{
        char a[FIELD_MAX], b[FIELD_MAX], c[FIELD_MAX], d[FIELD_MAX];
        char word[16], esc[4 * sizeof(word)];

        /* The record's word in capitals, escaped as every field is: a server's word may be anything. */
        snprintf(word, sizeof(word), "%.*s", (int)MIN(strcspn(rec, " "), sizeof(word) - 1), rec);
        for (char *w = word; *w; w++)
                *w = (char)(*w >= 'a' && *w <= 'z' ? *w - 32 : *w);
        printf("%-9s", escape_cstr(word, esc, sizeof(esc)));
        print_time(rec);
        if (ctlmsg_is(rec, "gap")) {
                printf("GAP %s-%s: %s events missing (%s)\n", field(rec, "first", a, sizeof(a)),
                       field(rec, "last", b, sizeof(b)), field(rec, "count", c, sizeof(c)),
                       field(rec, "class", d, sizeof(d)));
                return;
        }
        if (ctlmsg_is(rec, "overflow")) {
                printf("receive buffer overflowed: the kernel dropped events\n");
                return;
        }
        printf("%-8s ", field(rec, "seqnum", a, sizeof(a)));
        if (ctlmsg_is(rec, "received")) {
                printf("%s %s (%s)", field(rec, "action", a, sizeof(a)), field(rec, "devpath", b, sizeof(b)),
                       field(rec, "subsystem", c, sizeof(c)));
                field(rec, "verdict", d, sizeof(d));
                if (strcmp(d, "next") != 0)
                        printf(" [%s]", d);
                if (*field(rec, "uuid", a, sizeof(a)))
                        printf(" uuid=%s", a);
        } else if (ctlmsg_is(rec, "started")) {
                /* The argv as the agent got it, then the device it ran for. */
                printf("pid %s: %s %s", field(rec, "pid", a, sizeof(a)), field(rec, "program", b, sizeof(b)),
                       field(rec, "name", c, sizeof(c)));
                printf(" for %s", field(rec, "devpath", d, sizeof(d)));
        } else if (ctlmsg_is(rec, "waited")) {
                uint64_t us = 0, blocker = 0, seqnum = 0;

                (void)ctlmsg_get_u64(rec, "waited_us", &us);
                (void)ctlmsg_get_u64(rec, "blocker", &blocker);
                (void)ctlmsg_get_u64(rec, "seqnum", &seqnum);
                if (blocker != 0 && blocker != seqnum)
                        printf("for SEQNUM %" PRIu64 " (%s)", blocker, field(rec, "reason", a, sizeof(a)));
                else
                        printf("for %s", field(rec, "reason", a, sizeof(a)));
                printf(", %" PRIu64 ".%03" PRIu64 " ms since it arrived: %s", us / 1000, us % 1000,
                       field(rec, "devpath", b, sizeof(b)));
        } else if (ctlmsg_is(rec, "finished")) {
                uint64_t us = 0;
                (void)ctlmsg_get_u64(rec, "duration_us", &us);
                printf("%s after %" PRIu64 ".%03" PRIu64 " ms: %s %s", field(rec, "status", a, sizeof(a)),
                       us / 1000, us % 1000, field(rec, "program", b, sizeof(b)), field(rec, "name", c, sizeof(c)));
                printf(" for %s", field(rec, "devpath", d, sizeof(d)));
        } else {
                printf("%s", field(rec, "devpath", a, sizeof(a)));
        }
        putchar('\n');
}

/* Add the entries of the "env" record @rec to @p.  Return: 1 the event is complete, 0 more follow, -EBADMSG. */
static int add_env_record(struct pending *p, const char *rec)
{
        char key[16], name[16], val[FIELD_MAX + 1];
        struct env_set *set;
        uint64_t more;

        if (ctlmsg_get(rec, "set", name, sizeof(name)) < 0 || ctlmsg_get_u64(rec, "more", &more) < 0 || more > 1)
                return -EBADMSG;
        if (p->n_sets == 0 || strcmp(p->set[p->n_sets - 1].name, name) != 0) {
                if (p->n_sets == SETS_MAX)
                        return -EBADMSG;
                set = &p->set[p->n_sets++];
                strcpy(set->name, name);
                set->n = 0;
        }
        set = &p->set[p->n_sets - 1];
        for (const char *f = rec; (f = ctlmsg_next_field(f, key, sizeof(key), val, sizeof(val)));) {
                bool cont = strcmp(key, "cont") == 0;
                size_t vlen = strlen(val), i = set->n - 1;
                char *e;

                if (!cont && strcmp(key, "var") != 0)
                        continue; /* seqnum, set, more */
                if (cont ? set->n == 0 || set->len[i] + vlen > ENTRY_BYTES_MAX : set->n == SET_ENTRIES_MAX)
                        return -EBADMSG;
                if (!cont) {
                        i = set->n;
                        set->entry[i] = NULL;
                        set->len[i] = 0;
                }
                e = realloc(set->entry[i], set->len[i] + vlen + 1);
                if (!e)
                        return -ENOMEM;
                memcpy(e + set->len[i], val, vlen + 1);
                set->entry[i] = e;
                set->len[i] += vlen;
                set->n = i + 1;
        }
        return more == 0;
}

static void print_event(const struct pending *p, bool json, bool properties)
{
        if (json) {
                (void)json_print_line(stdout, json_event, p);
                return;
        }
        print_human(p->head);
        if (properties)
                print_sets(p);
        fflush(stdout);
}

/* Records that "env" records follow when properties were asked for. */
static bool has_entries(const char *rec)
{
        return ctlmsg_is(rec, "received") || ctlmsg_is(rec, "queued") || ctlmsg_is(rec, "started");
}

/*
 * Wait until @fd has a record or a signal of @sigfd came.
 * Return: 1 a record is there, 0 a signal (SIGINT, SIGTERM), negative errno.
 */
static int wait_record(int fd, int sigfd)
{
        struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = sigfd, .events = POLLIN } };

        for (;;) {
                int r = poll(p, 2, -1);

                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return negative_errno();
                if (p[1].revents & POLLIN)
                        return 0;
                return 1; /* readable, or hung up: ctl_recv() says which */
        }
}

/* Print records until the daemon goes away or a signal of @sigfd came.  Return: the exit status. */
static int monitor_loop(int fd, int sigfd, bool json, bool properties)
{
        static struct pending p;
        char rec[CTL_RECORD_SIZE];
        int r;

        for (;;) {
                r = wait_record(fd, sigfd);
                if (r == 0) { /* interrupted: a normal end, as udevadm monitor has it */
                        if (p.open)
                                print_event(&p, json, properties);
                        pending_clear(&p);
                        fflush(stdout);
                        return CTL_EXIT_OK;
                }
                if (r > 0)
                        r = ctl_recv(fd, rec, -1);
                if (r < 0) {
                        ctl_err("monitor", "%s", r == -ECONNRESET ? "the daemon closed the connection" : strerror(-r));
                        break;
                }
                if (ctlmsg_is(rec, "error")) {
                        pending_clear(&p);
                        return ctl_report_error("monitor", rec);
                }
                if (ctlmsg_is(rec, "env")) {
                        r = p.open ? add_env_record(&p, rec) : -EBADMSG;
                        if (r < 0) {
                                ctl_err("monitor", "malformed entries from the daemon: %s", strerror(-r));
                                break;
                        }
                        if (r > 0) {
                                print_event(&p, json, properties);
                                pending_clear(&p);
                        }
                        continue;
                }
                if (p.open) { /* its entries never came: show what there is */
                        print_event(&p, json, properties);
                        pending_clear(&p);
                }
                strcpy(p.head, rec);
                if (properties && has_entries(rec)) {
                        p.open = true;
                        continue;
                }
                print_event(&p, json, false);
        }
        pending_clear(&p);
        return CTL_EXIT_FAILURE;
}

static const char help[] =
        "monitor [--property] [--processed] [--json] [--subsystem-match=SUBSYSTEM[/DEVTYPE]]...\n"
        "        [--property-match=KEY=GLOB]... [--socket=PATH]\n\n"
        "Print events as the daemon receives them (SEQNUM, time, gaps, overflows) until\n"
        "interrupted (Ctrl-C: exit 0).\n\n"
        "Options:\n"
        "  -p, --property         also print every KEY=value of each event, in the\n"
        "                         kernel's order, then a blank line; with --processed,\n"
        "                         also what the handlers added and the agent's argv and\n"
        "                         environment\n"
        "      --processed        also show each event queued, filtered, what it waited for\n"
        "                         (another event, a free slot, udevd) before its agent\n"
        "                         started, and finished (exit status or signal, duration)\n"
        "  -j, --json             one JSON object per line instead of text\n"
        "  -s, --subsystem-match=SUBSYSTEM[/DEVTYPE]\n"
        "                         only events of this subsystem (and DEVTYPE); repeat for\n"
        "                         more\n"
        "      --property-match=KEY=GLOB\n"
        "                         only events whose kernel variable KEY matches GLOB\n"
        "                         (fnmatch); repeat for more.  Events must pass one match\n"
        "                         of each kind given; the daemon filters, gaps and\n"
        "                         overflows are always shown\n"
        CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0 interrupted (SIGINT, SIGTERM), 1 the daemon went away, 3 no daemon\n"
        "(or refused), 64 usage.\n";

/* Append " KIND=VALUE" (VALUE escaped) to the request. Return: CTL_EXIT_OK or CTL_EXIT_USAGE. */
static int add_filter(char *req, size_t size, const char *kind, const char *value)
{
        char esc[HP_CONTROL_REQUEST_MAX + 1];
        size_t len = strlen(req);
        int r = ctlmsg_escape(value, esc, sizeof(esc));

        if (r < 0 || snprintf(req + len, size - len, " %s=%s", kind, esc) >= (int)(size - len))
                return ctl_usage_error("monitor", "too many or too long matches");
        return CTL_EXIT_OK;
}

/* Refuse what the daemon would: a subsystem with a bad name, KEY not [A-Z0-9_]+. */
static int check_match(int c, const char *value)
{
        size_t n = strcspn(value, c == 's' ? "/" : "=");

        if (c == 's' && uevent_subsystem_valid(value, n) && (!value[n] || (value[n + 1] && !strchr(value + n + 1, '/'))))
                return CTL_EXIT_OK;
        if (c == 'm' && n > 0 && value[n] && strspn(value, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n)
                return CTL_EXIT_OK;
        return ctl_bad_value("monitor", c == 's' ? "--subsystem-match" : "--property-match", value,
                             c == 's' ? "SUBSYSTEM or SUBSYSTEM/DEVTYPE" : "KEY=GLOB, KEY of A-Z, 0-9 and _");
}

int verb_monitor(int argc, char *argv[])
{
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "property", no_argument, NULL, 'p' },
                { "processed", no_argument, NULL, 'P' },
                { "subsystem-match", required_argument, NULL, 's' },
                { "property-match", required_argument, NULL, 'm' },
                CTL_OPTION_SOCKET,
                CTL_OPTION_HELP,
                { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "monitor", "jps:h", options, help, NULL };
        _cleanup_close_ int fd = -1, sigfd = -1;
        char rec[CTL_RECORD_SIZE], request[HP_CONTROL_REQUEST_MAX + 1] = "monitor", filters[HP_CONTROL_REQUEST_MAX + 1] = "";
        bool json = false, processed = false, properties = false;
        int c, r;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0) {
                if (c == 'j')
                        json = true;
                else if (c == 'p')
                        properties = true;
                else if (c == 'P')
                        processed = true;
                else if ((c == 's' || c == 'm') &&
                         (check_match(c, optarg) != CTL_EXIT_OK ||
                          add_filter(filters, sizeof(filters), c == 's' ? "subsystem" : "property", optarg) != CTL_EXIT_OK))
                        return CTL_EXIT_USAGE;
        }
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        if (snprintf(request, sizeof(request), "monitor%s%s%s", processed ? " processed" : "",
                     properties ? " properties" : "", filters) >= (int)sizeof(request))
                return ctl_usage_error("monitor", "too many or too long matches");
        sigfd = ctl_signalfd();
        if (sigfd < 0) {
                ctl_err("monitor", "cannot watch for signals: %s", strerror(-sigfd));
                return CTL_EXIT_FAILURE;
        }
        r = ctl_open("monitor", &fd);
        if (r != CTL_EXIT_OK)
                return r;
        r = ctl_request("monitor", fd, request, rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (!ctlmsg_is(rec, "ok"))
                return ctlmsg_is(rec, "error") ? ctl_report_error("monitor", rec) : CTL_EXIT_FAILURE;
        return monitor_loop(fd, sigfd, json, properties);
}
