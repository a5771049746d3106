/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The linux-hotplug USB dispatch (hotplug-dir = DIR): what a usb event
 * runs beside the agent, from the usermaps of DIR (pipeline/usermap.h).
 *
 *   add      for each map line that matches the event (a line about the
 *            device on the device's event, a line about interfaces on an
 *            interface's event), once per module, unless the module is
 *            blacklisted: DIR/usb/MODULE if it is an executable regular
 *            file that passes the trust rule, else "modprobe -b -q --
 *            MODULE"; scripts get REMOVER, a path under the remover
 *            directory where one may leave an executable for the
 *            device's remove;
 *   remove   the executable left at the device's REMOVER, if any (it must
 *            pass the trust rule), removed once it has run;
 *   others   nothing.
 *
 * Invariants: a module name comes from the map, which only holds safe
 * file names; every script and remover run was checked by the trust rule
 * when the plan was made; nothing here runs anything or keeps state.
 */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "shared/bounds.h"

struct uevent;
struct usermap;
struct usermap_match;

enum usb_step_kind {
        USB_STEP_SCRIPT,  /* argv { DIR/usb/MODULE } */
        USB_STEP_MODULE,  /* argv { MODPROBE, "-b", "-q", "--", MODULE } */
        USB_STEP_REMOVER, /* argv { REMOVER }, then the file is removed */
};

struct usb_step {
        enum usb_step_kind kind;
        const char *module;  /* borrowed from the map (SCRIPT, MODULE) */
        char *path;          /* owned: the script, modprobe, or the remover */
};

struct usb_plan {
        struct usb_step step[HP_USERMAP_MATCHES_MAX + 1];
        size_t n;
        char remover[PATH_MAX]; /* add: REMOVER for the scripts; remove: the remover's path; "" none */
};

/* Why a match does or does not run, for hotplugctl test and the log; @problem: something the
 * administrator should hear of (a refused script or remover, malformed keys, matches left out). */
typedef void (*usb_plan_note_fn)(void *userdata, const struct usermap_match *m, bool problem, const char *what);

/**
 * usb_plan_build() - what @ev runs through the usermaps of @dir.
 * @map: the maps of @dir (borrowed), usermap_load()'s
 * @dir: the hotplug directory (borrowed)
 * @remover_dir: where removers are kept (borrowed), e.g. HOTPLUGD_RUNDIR "/remover/usb"
 * @ev: the event (borrowed)
 * @ret: receives the plan (release with usb_plan_free(), also when empty)
 * @note: told of each match and what comes of it, and of a remover found
 *        or refused (may be NULL)
 * @userdata: passed to @note
 *
 * Only usb events with PRODUCT have a plan; an event whose PRODUCT, TYPE
 * or INTERFACE is malformed has none (said through @note with a NULL match).
 * Return: the number of steps, or -ENOMEM.
 */
/**
 * usb_remover_dir() - where removers are kept: "remover/usb" in the
 * directory of the control socket @control (HOTPLUGD_RUNDIR when it is
 * NULL or "", or has no directory).
 * @control: the control socket's path (borrowed), or NULL
 * @buf: receives the directory
 * @size: room in @buf
 * Return: @buf.
 */
char *usb_remover_dir(const char *control, char *buf, size_t size);

int usb_plan_build(const struct usermap *map, const char *dir, const char *remover_dir, const struct uevent *ev,
                   struct usb_plan *ret, usb_plan_note_fn note, void *userdata);
void usb_plan_free(struct usb_plan *p);

/**
 * usb_step_argv() - the argv of @s.
 * @s: a step (borrowed; the argv points into it)
 * @argv: receives it, NULL-terminated
 * Return: @argv.
 */
const char **usb_step_argv(const struct usb_step *s, const char *argv[6]);
