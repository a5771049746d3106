/* SPDX-License-Identifier: MIT */
/*
 * hotplugctl status [--json]: who answers (PID, version, uptime,
 * configuration, agent, log level), the daemon's ledger counters, queue and
 * running agents.  Reads "status", "daemon", "gap"* and "agent"* records up to "end"
 * (control.h), all of them before printing, so that --json writes one
 * object for the whole reply and the text is never half a reply.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "ctl/blame.h"
#include "ctl/cli.h"
#include "ctl/client.h"
#include "ctl/ctl.h"
#include "shared/escape.h"
#include "pipeline/ledger.h"
#include "shared/json.h"
#include "shared/macro.h"
#include "shared/number.h"

static uint64_t num(const char *rec, const char *key)
{
        uint64_t v = 0;

        (void)ctlmsg_get_u64(rec, key, &v);
        return v;
}

/* "Daemon:", "Config:", "Agent:" and "Logging:": who answers (nothing from a daemon before them). */
static void print_daemon(const char *rec)
{
        char v[64], since[64], up[24], path[HP_CONTROL_RECORD_MAX], esc[4 * HP_CONTROL_RECORD_MAX];
        char level[16], target[16];
        uint64_t sec = 0;
        struct tm tm;
        time_t t;

        if (ctlmsg_get(rec, "version", v, sizeof(v)) < 0)
                strcpy(v, "?");
        /* since= is seconds.micro: its whole seconds, as local time. */
        if (ctlmsg_get(rec, "since", since, sizeof(since)) >= 0 && strchr(since, '.'))
                *strchr(since, '.') = '\0';
        t = decimal_u64(since, &sec) >= 0 ? (time_t)sec : 0;
        if (!t || !localtime_r(&t, &tm) || !strftime(since, sizeof(since), "%Y-%m-%d %H:%M:%S %Z", &tm))
                strcpy(since, "?");
        printf("Daemon:   hotplugd %s, pid %" PRIu64 ", up %s (since %s)\n", escape_cstr(v, esc, sizeof(esc)),
               num(rec, "pid"), blame_format_time(num(rec, "uptime_usec"), up, sizeof(up)), since);
        printf("Config:   %s\n", ctlmsg_get(rec, "config", path, sizeof(path)) >= 0
                                         ? escape_cstr(path, esc, sizeof(esc)) : "(none read)");
        if (ctlmsg_get(rec, "hotplug_d", path, sizeof(path)) >= 0)
                printf("Agent:    the scripts of hotplug.d %s\n", escape_cstr(path, esc, sizeof(esc)));
        else if (ctlmsg_get(rec, "agent", path, sizeof(path)) >= 0)
                printf("Agent:    %s\n", escape_cstr(path, esc, sizeof(esc)));
        if (ctlmsg_get(rec, "log_level", level, sizeof(level)) >= 0 &&
            ctlmsg_get(rec, "log_target", target, sizeof(target)) >= 0)
                printf("Logging:  %s and more severe, to %s\n", escape_cstr(level, esc, sizeof(esc)),
                       strcmp(target, "journal") == 0 ? "the journal" : "stderr");
}

/* "Limit:" how many agents may run at once, and how that was chosen. */
static void print_limit(const char *rec)
{
        char ordering[32] = "", how[32] = "", esc[4 * sizeof(how)];

        (void)ctlmsg_get(rec, "ordering", ordering, sizeof(ordering));
        if (ctlmsg_get(rec, "concurrency", how, sizeof(how)) < 0 || !how[0])
                return; /* an older daemon */
        printf("Limit:    %" PRIu64 " agent(s) at once", num(rec, "limit"));
        if (strcmp(ordering, "strict") == 0)
                printf(" (ordering strict runs one at a time)");
        else if (strcmp(how, "fixed") == 0)
                printf(" (fixed by concurrency, max-children %" PRIu64 ")", num(rec, "limit_max"));
        else {
                uint64_t awake;

                /* A daemon before the awake part was learnt ran awake_max. */
                if (ctlmsg_get_u64(rec, "awake", &awake) < 0)
                        awake = num(rec, "awake_max");
                printf(" (%s up to %" PRIu64 ": %" PRIu64 " awake of at most %" PRIu64
                       " (the CPUs and one) and %" PRIu64 " asleep; raised %" PRIu64 ", lowered %" PRIu64
                       " times)", escape_cstr(how, esc, sizeof(esc)), num(rec, "limit_max"), awake,
                       num(rec, "awake_max"), num(rec, "asleep"), num(rec, "raised"), num(rec, "lowered"));
                if (num(rec, "windows") > 0)
                        printf("\n          awake agents learnt in %" PRIu64 " windows, %" PRIu64
                               " probes, %" PRIu64 " kept; the last window: %" PRIu64
                               " events per CPU-second",
                               num(rec, "windows"), num(rec, "probes"), num(rec, "probes_kept"),
                               num(rec, "per_cpu_second"));
        }
        printf("\n");
}

/* "udevd:" what after-udev did (nothing from a daemon that predates it). */
static void print_after_udev(const char *rec)
{
        char state[32] = "", esc[4 * sizeof(state)];
        uint64_t waited = num(rec, "udev_waited"), usec = num(rec, "udev_wait_usec");

        if (ctlmsg_get(rec, "after_udev", state, sizeof(state)) < 0 || !state[0])
                return;
        printf("udevd:    after-udev %s; %" PRIu64 " events waited for its broadcast (%" PRIu64 ".%03" PRIu64
               " ms on average), %" PRIu64 " waiting now, %" PRIu64 " went on without it",
               escape_cstr(state, esc, sizeof(esc)), waited, waited ? usec / waited / 1000 : 0,
               waited ? usec / waited % 1000 : 0, num(rec, "udev_waiting"), num(rec, "udev_timeouts"));
        if (num(rec, "udev_mismatched") || num(rec, "udev_overflows") || num(rec, "udev_forgotten"))
                printf("; %" PRIu64 " broadcasts not matching the kernel's event ignored, %" PRIu64
                       " overflows, %" PRIu64 " early broadcasts forgotten",
                       num(rec, "udev_mismatched"), num(rec, "udev_overflows"), num(rec, "udev_forgotten"));
        printf("\n");
}

/* "Modules:" what load-modules did (nothing from a daemon that predates it). */
static void print_modules(const char *rec)
{
        char state[64] = "", esc[4 * sizeof(state)];

        if (ctlmsg_get(rec, "load_modules", state, sizeof(state)) < 0 || !state[0])
                return;
        printf("Modules:  load-modules %s; %" PRIu64 " aliases seen, %" PRIu64 " looked up (%" PRIu64
               " naming none), %" PRIu64 " loads issued, %" PRIu64 " saved (in flight or loaded), %" PRIu64
               " loaded, %" PRIu64 " failed, %" PRIu64 " blacklisted, %" PRIu64 " timed out, %" PRIu64
               " invalid, %" PRIu64 " skipped; %" PRIu64 " events waiting\n",
               escape_cstr(state, esc, sizeof(esc)), num(rec, "kmod_aliases"), num(rec, "kmod_lookups"),
               num(rec, "kmod_not_found"), num(rec, "kmod_loads"), num(rec, "kmod_saved"), num(rec, "kmod_loaded"),
               num(rec, "kmod_failed"), num(rec, "kmod_blacklisted"), num(rec, "kmod_timeouts"),
               num(rec, "kmod_invalid"), num(rec, "kmod_skipped"), num(rec, "kmod_waiting"));
}

/* "Memory:" the bytes held against max-queue-bytes (nothing from a daemon that predates it). */
static void print_memory(const char *rec)
{
        if (!num(rec, "max_queue_bytes"))
                return;
        printf("Memory:   %" PRIu64 " bytes held of %" PRIu64 " (max-queue-bytes), at most %" PRIu64
               "; overloaded %" PRIu64 " times%s\n",
               num(rec, "bytes_held"), num(rec, "max_queue_bytes"), num(rec, "peak_bytes"), num(rec, "overloads"),
               num(rec, "overloaded") ? ", OVERLOADED now (reading stopped at a bound; resync recovers "
                                        "what the kernel drops)" : "");
}

static void print_counters(const char *rec)
{
        printf("Events:   %" PRIu64 " processed, %" PRIu64 " received, %" PRIu64 " rejected, %" PRIu64 " filtered",
               num(rec, "processed"), num(rec, "received"), num(rec, "rejected"), num(rec, "filtered"));
        if (num(rec, "dropped_keys") > 0)
                printf(", %" PRIu64 " variables dropped from the recording (keys no kernel sends)",
                       num(rec, "dropped_keys"));
        printf("\n");
        printf("SEQNUMs:  baseline %" PRIu64 ", last %" PRIu64 "\n", num(rec, "baseline"), num(rec, "last"));
        printf("Ledger:   %" PRIu64 " gaps (%" PRIu64 " from overflow), %" PRIu64 " missing, %" PRIu64
               " duplicates, %" PRIu64 " late, %" PRIu64 " overflows\n",
               num(rec, "gaps"), num(rec, "gaps_overflow"), num(rec, "missing"), num(rec, "duplicates"),
               num(rec, "late"), num(rec, "overflows"));
        printf("Agents:   %" PRIu64 " started, %" PRIu64 " finished, %" PRIu64 " failed, %" PRIu64
               " timed out\n",
               num(rec, "started"), num(rec, "finished"), num(rec, "failed"), num(rec, "timeouts"));
        if (num(rec, "spawn_retries") > 0 || num(rec, "spawn_waiting") > 0)
                printf("Spawns:   %" PRIu64 " tried again (no process or descriptor could be had), %" PRIu64
                       " event(s) waiting to try now\n", num(rec, "spawn_retries"), num(rec, "spawn_waiting"));
        printf("Queue:    %" PRIu64 " queued, %" PRIu64 " running%s\n", num(rec, "queued"), num(rec, "running"),
               num(rec, "paused") ? ", PAUSED (agents are not started)" : "");
        print_memory(rec);
        print_limit(rec);
        printf("Resync:   %s, %" PRIu64 " passes (%" PRIu64 " changed, %" PRIu64 " added, %" PRIu64
               " removed, %" PRIu64 " left alone), %" PRIu64 " devices known\n",
               num(rec, "resync") ? "on" : "off", num(rec, "resyncs"), num(rec, "resync_changed"),
               num(rec, "resync_added"), num(rec, "resync_removed"), num(rec, "resync_left_alone"),
               num(rec, "devices"));
        print_after_udev(rec);
        print_modules(rec);
        if (num(rec, "log_gone"))
                printf("Log:      stderr is gone (its reader closed it): nothing is written, %" PRIu64
                       " lines dropped\n", num(rec, "log_dropped"));
        else if (num(rec, "log_dropped") > 0)
                printf("Log:      %" PRIu64 " lines dropped while the journal or stderr did not take them\n",
                       num(rec, "log_dropped"));
        printf("Handover: %" PRIu64 " events taken over from the previous instance, %" PRIu64
               " of them re-run (their agent had started), %" PRIu64 " set aside (hotplugd died processing them)\n",
               num(rec, "taken_over"), num(rec, "reruns"), num(rec, "set_aside"));
}

static void print_gap(const char *rec, bool first)
{
        char class[32] = "?", esc[4 * sizeof(class)];

        if (first)
                printf("Recent gaps (newest first):\n");
        (void)ctlmsg_get(rec, "class", class, sizeof(class));
        escape_cstr(class, esc, sizeof(esc));
        if (num(rec, "first") == num(rec, "last"))
                printf("  %" PRIu64 " (%s)\n", num(rec, "first"), esc);
        else
                printf("  %" PRIu64 "-%" PRIu64 " (%" PRIu64 " events, %s)\n", num(rec, "first"), num(rec, "last"),
                       num(rec, "count"), esc);
}

static void print_agent(const char *rec, bool first)
{
        char devpath[HP_CONTROL_RECORD_MAX], program[HP_CONTROL_RECORD_MAX];
        char esc_dev[HP_CONTROL_RECORD_MAX], esc_prog[HP_CONTROL_RECORD_MAX];
        uint64_t age = num(rec, "age_ms");

        if (first)
                printf("Running agents:\n  %-10s %-8s %10s  %s\n", "SEQNUM", "PID", "AGE", "DEVPATH (PROGRAM)");
        if (ctlmsg_get(rec, "devpath", devpath, sizeof(devpath)) < 0)
                strcpy(devpath, "?");
        if (ctlmsg_get(rec, "program", program, sizeof(program)) < 0)
                strcpy(program, "?");
        printf("  %-10" PRIu64 " %-8" PRIu64 " %6" PRIu64 ".%03" PRIu64 "s  %s (%s)\n", num(rec, "seqnum"),
               num(rec, "pid"), age / 1000, age % 1000, escape_cstr(devpath, esc_dev, sizeof(esc_dev)),
               escape_cstr(program, esc_prog, sizeof(esc_prog)));
}

/* The records of one status reply, for --json: the status record, then gaps and agents as they came. */
struct status_reply {
        char *rec[3 + LEDGER_RECENT_GAPS + HP_CHILDREN_MAX + HP_FIRMWARE_MISSING_NAMES]; /* status, daemon, ..., end */
        size_t n;
};

/* Member @name: an array of the @word records of @s, each an object. */
static void json_records_of(struct json_writer *w, const struct status_reply *s, const char *name, const char *word)
{
        json_keyz(w, name);
        json_begin_array(w);
        for (size_t i = 1; i < s->n; i++) {
                if (!ctlmsg_is(s->rec[i], word))
                        continue;
                json_begin_object(w);
                ctlmsg_json_fields(w, s->rec[i]);
                json_end_object(w);
        }
        json_end_array(w);
}

/* {counters of the status record..., "recent_gaps": [{...}], "agents": [{...}],
 * "missing_firmware": [{"name", "requests"}], "daemon": {...}}; the status
 * record has a counter "gaps" already. */
static void json_status(struct json_writer *w, const void *arg)
{
        const struct status_reply *s = arg;

        json_begin_object(w);
        ctlmsg_json_fields(w, s->rec[0]);
        for (size_t i = 1; i < s->n; i++)
                if (ctlmsg_is(s->rec[i], "daemon")) {
                        json_keyz(w, "daemon");
                        json_begin_object(w);
                        ctlmsg_json_fields(w, s->rec[i]);
                        json_end_object(w);
                        break;
                }
        json_records_of(w, s, "recent_gaps", "gap");
        json_records_of(w, s, "agents", "agent");
        json_records_of(w, s, "missing_firmware", "firmware");
        json_end_object(w);
}

/* "Firmware:" the requests failed at once (none: no line), then a "firmware" record's name each. */
static void print_firmware(const char *rec, bool first)
{
        char name[HP_CONTROL_RECORD_MAX], esc[4 * HP_CONTROL_RECORD_MAX];

        if (ctlmsg_is(rec, "status")) {
                if (num(rec, "firmware_failed") > 0)
                        printf("Firmware: %" PRIu64 " requests failed at once (no file in --firmware-path, no agent "
                               "loaded it): %" PRIu64 " names%s\n", num(rec, "firmware_failed"),
                               num(rec, "firmware_missing"),
                               num(rec, "firmware_untracked") ? " and more not listed" : "");
                return;
        }
        if (first)
                printf("Missing firmware:\n");
        if (ctlmsg_get(rec, "name", name, sizeof(name)) < 0)
                strcpy(name, "?");
        printf("  %s (%" PRIu64 " requests)\n", escape_cstr(name, esc, sizeof(esc)), num(rec, "requests"));
}

static void print_record(const char *rec, bool *first_gap, bool *first_agent, bool *first_fw)
{
        if (ctlmsg_is(rec, "status")) {
                print_counters(rec);
                print_firmware(rec, false);
        } else if (ctlmsg_is(rec, "gap")) {
                print_gap(rec, *first_gap);
                *first_gap = false;
        } else if (ctlmsg_is(rec, "agent")) {
                print_agent(rec, *first_agent);
                *first_agent = false;
        } else if (ctlmsg_is(rec, "firmware")) {
                print_firmware(rec, *first_fw);
                *first_fw = false;
        }
}

/* A copy of @rec at the end of @s.  Return: the exit status. */
static int keep_record(struct status_reply *s, const char *rec)
{
        if (s->n == ELEMENTSOF(s->rec)) {
                ctl_err("status", "more records than a reply can hold");
                return CTL_EXIT_FAILURE;
        }
        s->rec[s->n] = strdup(rec);
        if (!s->rec[s->n]) {
                ctl_err("status", "out of memory");
                return CTL_EXIT_FAILURE;
        }
        s->n++;
        return CTL_EXIT_OK;
}

/* Read the records after "status" up to "end" into @s (@s->rec[0] is the status record). */
static int read_reply(int fd, struct status_reply *s)
{
        char rec[CTL_RECORD_SIZE];
        int r;

        for (;;) {
                r = ctl_recv(fd, rec, -1);
                if (r < 0) {
                        ctl_err("status", "reply cut short: %s", strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
                if (ctlmsg_is(rec, "end"))
                        return CTL_EXIT_OK;
                if (ctlmsg_is(rec, "error"))
                        return ctl_report_error("status", rec);
                if ((ctlmsg_is(rec, "gap") || ctlmsg_is(rec, "agent") || ctlmsg_is(rec, "firmware") ||
                     ctlmsg_is(rec, "daemon")) &&
                    (r = keep_record(s, rec)) != CTL_EXIT_OK)
                        return r;
        }
}

static const char help[] =
        "status [--json] [--socket=PATH]\n\n"
        "Show who answers (version, PID, uptime, configuration file, agent, log\n"
        "level), then the daemon's counters: events processed, SEQNUM ledger (gaps, duplicates,\n"
        "late events, overflows), agents, queue, concurrency limit, resync and handover;\n"
        "then the most recent gaps, the agents running now and the firmware names\n"
        "whose requests were failed at once (no file, no agent loaded it).\n\n"
        "Options:\n"
        "  -j, --json             the whole reply as one JSON object on one line\n"
        CTL_HELP_SOCKET CTL_HELP_HELP "\n"
        "Exit status: 0, 1 failure, 3 no daemon (or refused), 64 usage.\n";

int verb_status(int argc, char *argv[])
{
        static const struct option opts[] = {
                { "json", no_argument, NULL, 'j' }, CTL_OPTION_SOCKET, CTL_OPTION_HELP, { NULL, 0, NULL, 0 },
        };
        const struct ctl_getopt g = { "status", "jh", opts, help, NULL };
        _cleanup_close_ int fd = -1;
        static struct status_reply s;
        char rec[CTL_RECORD_SIZE];
        bool json = false, first_gap = true, first_agent = true, first_fw = true;
        int c, r;

        while ((c = ctl_getopt(&g, argc, argv)) >= 0)
                if (c == 'j')
                        json = true;
        if (c != CTL_GETOPT_END)
                return ctl_getopt_exit(c);
        r = ctl_open("status", &fd);
        if (r != CTL_EXIT_OK)
                return r;
        r = ctl_request("status", fd, "status", rec, -1);
        if (r != CTL_EXIT_OK)
                return r;
        if (ctlmsg_is(rec, "error"))
                return ctl_report_error("status", rec);
        if (!ctlmsg_is(rec, "status")) {
                ctl_err("status", "unexpected reply");
                return CTL_EXIT_FAILURE;
        }
        r = keep_record(&s, rec);
        if (r == CTL_EXIT_OK)
                r = read_reply(fd, &s);
        if (r == CTL_EXIT_OK && json && json_print_line(stdout, json_status, &s) < 0) {
                ctl_err("status", "cannot write the JSON reply");
                r = CTL_EXIT_FAILURE;
        }
        for (size_t i = 0; i < s.n; i++) /* who answers first */
                if (r == CTL_EXIT_OK && !json && ctlmsg_is(s.rec[i], "daemon"))
                        print_daemon(s.rec[i]);
        for (size_t i = 0; i < s.n; i++) {
                if (r == CTL_EXIT_OK && !json)
                        print_record(s.rec[i], &first_gap, &first_agent, &first_fw);
                free(s.rec[i]);
        }
        return r;
}
