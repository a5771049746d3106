/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * hotplugctl trigger's command line: udevadm trigger's options (its help,
 * the option table, the checks of each value).  The strings are borrowed
 * from argv; the match options go into a struct trigger_match.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctl/trigger-match.h"

#define SYSFS_ROOT "/sys"

/* --type: what is walked without DEVICEs. */
enum trigger_type { TYPE_DEVICES, TYPE_SUBSYSTEMS, TYPE_ALL };

struct trigger_args {
        const char *action;
        struct trigger_match m;
        enum trigger_type type;
        const char *prio[TRIGGER_MATCH_MAX]; /* --prioritized-subsystem, each name (borrowed from argv) */
        size_t n_prio;
        /* --parent-match and --name-match as given, made devices by trigger_args_parents(). */
        struct {
                const char *arg;
                bool node;          /* --name-match: "NAME" is /dev/NAME */
        } under[TRIGGER_MATCH_MAX];
        size_t n_under;
        char **devices;             /* the DEVICE arguments */
        size_t n_devices;
        bool settle, dry_run, verbose, quiet;
        const char *done_file;      /* --done-file, or NULL */
        bool skip_handled;          /* --skip-handled */
        uint64_t timeout_ms;
        unsigned jobs;              /* writers at once, 1..HP_TRIGGER_JOBS_MAX */
};

/**
 * trigger_args_parse() - read trigger's options and DEVICEs
 * @a: receives them, defaults first (filled whole)
 * Return: CTL_RUN, or the exit status after printing the help or a usage
 * error.  Nothing needs freeing until trigger_args_parents().
 */
int trigger_args_parse(struct trigger_args *a, int argc, char *argv[]);

/**
 * trigger_args_parents() - the devices of --parent-match and --name-match
 * Each is resolved as a DEVICE argument is (ctl_device(), a node through
 * /sys/dev) and added to a->m; trigger_match_done(&a->m) frees them.
 * Return: an exit status (CTL_EXIT_FAILURE after naming one that is no device).
 */
int trigger_args_parents(struct trigger_args *a);
