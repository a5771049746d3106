/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * hotplugctl verbs: one file each (ctl-VERB.c), each exporting
 *   int verb_VERB(int argc, char *argv[]);
 * argv[0] is the verb name; getopt starts at optind = 1 (reset by the
 * dispatcher).  Return value is the process exit status.
 */

#define CTL_EXIT_OK 0
#define CTL_EXIT_FAILURE 1
#define CTL_EXIT_TIMEOUT 2      /* settle, wait: timed out */
#define CTL_EXIT_NO_DAEMON 3    /* the daemon's control socket is absent or refused us */
#define CTL_EXIT_NOT_KNOWN 4    /* info: the daemon knows nothing of the device */
#define CTL_EXIT_USAGE 64

int verb_status(int argc, char *argv[]);
int verb_settle(int argc, char *argv[]);
int verb_trigger(int argc, char *argv[]);
int verb_monitor(int argc, char *argv[]);
int verb_pause(int argc, char *argv[]);
int verb_resume(int argc, char *argv[]);
int verb_log_level(int argc, char *argv[]);
int verb_concurrency(int argc, char *argv[]);
int verb_reload(int argc, char *argv[]);
int verb_test(int argc, char *argv[]);
int verb_record(int argc, char *argv[]);
int verb_timeline(int argc, char *argv[]);
int verb_wait(int argc, char *argv[]);
int verb_blame(int argc, char *argv[]);
int verb_info(int argc, char *argv[]);
