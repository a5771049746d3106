/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Starting one agent process, exactly per the agent contract:
 *   argv = { AGENT, NAME, NULL }
 *   envp = HOME=/, PATH=/sbin:/bin:/usr/sbin:/usr/bin, ACTION, DEVPATH,
 *          SUBSYSTEM, SEQNUM, every other kernel key in the kernel's order
 *          once, then the handler additions; never a key env_key_refused()
 *          refuses (such as HOME, PATH or LD_PRELOAD from the event).
 * The child gets stdin /dev/null, stdout+stderr on a pipe to us, its own
 * process group, an empty signal mask, default dispositions, and no fd but
 * 0-2.  Nothing of the daemon's environment leaks.
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/bounds.h"

struct uevent;

/* argv/envp pointers for one event: they point into the event (borrowed) or at constants. */
#define SPAWN_ENV_MAX (6 + HP_UEVENT_MAX_VARS + HP_ENV_ADD_MAX_VARS + 1)

struct spawn_env {
        const char *envp[SPAWN_ENV_MAX];
        size_t n;
};

/**
 * spawn_env_build() - the agent environment of @ev.
 * @ev: a dup'd event (borrowed; @ret points into it, keep @ev alive)
 * @ret: filled, NULL-terminated
 *
 * Handler additions that repeat a kernel key replace it in place.  Keys
 * env_key_refused() refuses (HOME, PATH, LD_PRELOAD, ...) are left out,
 * from the kernel and from handlers alike.
 */
void spawn_env_build(const struct uevent *ev, struct spawn_env *ret);

/**
 * spawn_env_set() - put @entry in @env in place of the entry of the same key, or after the others.
 * @env: an environment from spawn_env_build() (borrowed)
 * @entry: "KEY=VALUE" (borrowed: it must live as long as @env is used)
 *
 * For what the daemon gives a program beside the event's environment (the
 * PHYSDEVDRIVER of a probe that ended after the intake, the usb dispatch's
 * TYPE and REMOVER).  An entry that finds no room is left out.
 */
void spawn_env_set(struct spawn_env *env, const char *entry);

/**
 * spawn_env_refused() - what spawn_env_build() leaves out of the environment of @ev.
 * @ev: a dup'd event (borrowed)
 * @ret: receives up to @max "KEY=VALUE" entries (borrowed from @ev)
 * @max: room in @ret
 *
 * Every entry whose key env_key_refused() refuses, each key once: the
 * kernel's entries in their order, then the handler additions whose key
 * the kernel did not send.
 * Return: the number stored in @ret.
 */
size_t spawn_env_refused(const struct uevent *ev, const char **ret, size_t max);

struct spawn_result {
        pid_t pid;
        int pidfd;   /* owned by the caller, close-on-exec */
        int outfd;   /* read end of the stdout/stderr pipe, owned by the caller, non-blocking, cloexec */
};

/**
 * spawn_agent() - start @path as argv {@path, @name} with @env.
 * @path: absolute path of the program
 * @name: argv[1]
 * @env: environment (borrowed)
 * @ret: pid, pidfd and output pipe on success; untouched on failure
 *
 * The caller owns the child and must reap it (waitid() on the PID or the
 * pidfd).  One thread at a time: every spawn borrows one static stack.
 * Return: 0, or negative errno (-ENOENT / -EACCES / -ENOEXEC when the agent cannot be
 * executed: exec failure is reported synchronously, the failed child already reaped).
 */
int spawn_agent(const char *path, const char *name, const struct spawn_env *env, struct spawn_result *ret);

/**
 * spawn_error_resources() - did a spawn fail for want of resources, not because of the program?
 * @error: a negative errno from spawn_agent(), spawn_agent_to(), spawn_argv_to() or spawn_pipe()
 *
 * -EAGAIN and -ENOMEM (clone() found no room for one more process: a
 * cgroup's pids.max, kernel.pid_max, kernel.threads-max, RLIMIT_NPROC, or
 * no memory; or execve() found no memory), -EMFILE and -ENFILE (no
 * descriptor left for the pipe, /dev/null or the program's file): the same
 * program may well start a moment later.  Every other error is the
 * program's (missing, refused, not executable, bad format).
 * Return: true for those four.
 */
bool spawn_error_resources(int error);

/**
 * spawn_pipe() - a pipe for agents' output, to be used for many runs.
 * @ret_read: its read end (non-blocking, close-on-exec; owned by the caller)
 * @ret_write: its write end (blocking, close-on-exec; owned by the caller)
 *
 * Return: 0, or negative errno (both untouched).
 */
int spawn_pipe(int *ret_read, int *ret_write);

/**
 * spawn_agent_to() - spawn_agent() into an output pipe the caller keeps.
 * @path: absolute path of the program
 * @name: argv[1]
 * @env: environment (borrowed)
 * @out: the agent's stdout and stderr (borrowed; the write end of a
 *       spawn_pipe(), so the agent writes blocking)
 * @ret: pid and pidfd on success (outfd -1); untouched on failure
 *
 * The same as spawn_agent() without a pipe of its own: a daemon that runs
 * agents one after another reuses one pipe instead of making, watching and
 * closing one per run.
 * Return: as spawn_agent().
 */
int spawn_agent_to(const char *path, const char *name, const struct spawn_env *env, int out,
                   struct spawn_result *ret);

/**
 * spawn_argv_to() - spawn_agent_to() with an argv of the caller's.
 * @argv: argv[0] the absolute path of the program, then its arguments,
 *        NULL-terminated (borrowed)
 * @env: environment (borrowed)
 * @out: as spawn_agent_to()
 * @ret: as spawn_agent_to()
 *
 * For programs run beside the agent contract's argv (the usb dispatch's
 * scripts, modprobe and removers); everything else is as spawn_agent_to().
 * Return: as spawn_agent().
 */
int spawn_argv_to(const char *const *argv, const struct spawn_env *env, int out, struct spawn_result *ret);

/**
 * hotplug_d_list() - the hotplug.d scripts for @name, in run order.
 * @dir: the multiplexer directory (e.g. /etc/hotplug.d)
 * @name: argv[1] of the event; must not be empty, ".", ".." or contain '/' (-EINVAL otherwise)
 * @ret_paths: array of malloc'd absolute paths (caller frees each and the array)
 * @ret_n: number of entries
 *
 * Every executable regular file DIR/NAME/ *.hotplug in lexical (strcmp) order,
 * then DIR/default/ *.hotplug in lexical order; at most HP_HOTPLUG_D_MAX_FILES
 * (the lexically first ones; NAME's before default's).  Dotfiles are skipped;
 * symlinks are followed.  A missing directory contributes nothing; NAME
 * "default" lists that directory once.  Only trusted files are listed
 * (trust_check_at(): DIR, DIR/NAME and the file, or a link's whole target
 * path, owned by the daemon's euid and not group/other-writable); each
 * refused path is logged once (HP_HOTPLUG_D_REFUSED_MAX remembered).
 * Return: 0 or negative errno.
 */
int hotplug_d_list(const char *dir, const char *name, char ***ret_paths, size_t *ret_n);

struct stat;

/**
 * hotplug_d_skip_fn - told of a path hotplug_d_list_explained() does not run.
 * @path: the file or directory (borrowed, for the call only)
 * @why: the reason: trust_check_at()'s ("not owned by root", "writable by
 *       group or others", "link target ..."), "not executable", "not named
 *       *.hotplug", "does not exist", ... (borrowed, for the call only)
 * @st: the stat of what was looked at (a refused link: of what was refused), or NULL
 * @userdata: as given
 */
typedef void (*hotplug_d_skip_fn)(const char *path, const char *why, const struct stat *st, void *userdata);

/**
 * hotplug_d_list_explained() - hotplug_d_list(), telling @skip of each path it passes over.
 * @skip: called for every entry of DIR, DIR/NAME and DIR/default that does
 *        not run, and for each of those directories that is missing or
 *        refused; NULL: as hotplug_d_list() (refusals logged once)
 * @userdata: passed to @skip
 *
 * The daemon's own walk (the multiplexer runs what hotplug_d_list() lists),
 * so that hotplugctl test shows what would run and why the rest would not.
 * With @skip, nothing is logged and the once-only memory of refusals is
 * left as it was.
 * Return: as hotplug_d_list().
 */
int hotplug_d_list_explained(const char *dir, const char *name, hotplug_d_skip_fn skip, void *userdata,
                             char ***ret_paths, size_t *ret_n);
