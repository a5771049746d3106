/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The usb usermaps of a hotplug directory (hotplug-dir = DIR): what
 * packages installed for their USB devices before udev, read and matched
 * as the old usb agent did.
 *
 *   DIR/usb.handmap, DIR/usb.usermap, DIR/usb/ *.usermap (strcmp order),
 *       in this order (the agent's: hand-mapped modules, then user maps):
 *       lines "module match_flags idVendor idProduct bcdDevice_lo
 *       bcdDevice_hi bDeviceClass bDeviceSubClass bDeviceProtocol
 *       bInterfaceClass bInterfaceSubClass bInterfaceProtocol driver_info"
 *   DIR/blacklist, DIR/blacklist.d/ *   one module name a line
 *
 * Invariants:
 *  - every module name stored is a safe file name: 1 to HP_USERMAP_NAME_MAX
 *    bytes of [A-Za-z0-9_.+-], not starting with '.' or '-' (so never "."
 *    or "..", never an option to modprobe); it may be used as a path
 *    component under DIR/usb/ and as an argument as it is;
 *  - every file read was opened through trust_open_at() (DIR, DIR/usb,
 *    DIR/blacklist.d and the file: owned by root or the daemon's euid and
 *    writable by nobody else, on the whole path as given);
 *  - memory is bounded: at most HP_USERMAP_ENTRIES_MAX entries of 24 bytes,
 *    each distinct module name stored once, HP_USERMAP_FILES_MAX map files,
 *    HP_USERMAP_BLACKLIST_MAX blacklisted names; a line is read into a
 *    buffer of HP_USERMAP_LINE_MAX bytes whatever its length;
 *  - a malformed line is reported ("FILE:LINE: reason") and skipped, never
 *    fatal; a map is never half-read silently (a limit reached is reported);
 *  - entries keep their file order; usermap_match() returns them in it.
 * No daemon state, no logging: problems go to the caller's callback.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "shared/bounds.h"
#include "shared/macro.h"

/* match_flags bits, as the kernel's struct usb_device_id. */
enum {
        USERMAP_MATCH_VENDOR = 0x0001,
        USERMAP_MATCH_PRODUCT = 0x0002,
        USERMAP_MATCH_DEV_LO = 0x0004,
        USERMAP_MATCH_DEV_HI = 0x0008,
        USERMAP_MATCH_DEV_CLASS = 0x0010,
        USERMAP_MATCH_DEV_SUBCLASS = 0x0020,
        USERMAP_MATCH_DEV_PROTOCOL = 0x0040,
        USERMAP_MATCH_INT_CLASS = 0x0080,
        USERMAP_MATCH_INT_SUBCLASS = 0x0100,
        USERMAP_MATCH_INT_PROTOCOL = 0x0200,
        USERMAP_MATCH_INTERFACE = USERMAP_MATCH_INT_CLASS | USERMAP_MATCH_INT_SUBCLASS | USERMAP_MATCH_INT_PROTOCOL,
};

/* Which kind of map a line came from. */
enum usermap_kind {
        USERMAP_USERMAP, /* usb.usermap, usb/ *.usermap: user-mode drivers and setup scripts */
        USERMAP_HANDMAP, /* usb.handmap: kernel modules the administrator maps by hand */
};

struct usermap;

/**
 * usermap_error_fn - told of a problem while reading the maps.
 * @msg: "FILE:LINE: reason" for a line, "FILE: reason" for a file
 *       (borrowed, for the call only; printable ASCII: names from the
 *       file system are escaped)
 * @userdata: as given
 */
typedef void (*usermap_error_fn)(const char *msg, void *userdata);

/**
 * usermap_new() - an empty map (matches nothing, blacklists nothing).
 * @ret: receives the map (owned by the caller: usermap_free())
 * Return: 0 or -ENOMEM.
 */
int usermap_new(struct usermap **ret);

/* Free @m and all it holds; NULL is fine.  Return: NULL. */
struct usermap *usermap_free(struct usermap *m);
DEFINE_FREEP(struct usermap, usermap_free)

/**
 * usermap_load() - read the maps and blacklists of the hotplug directory @dir.
 * @dir: the directory (borrowed), e.g. /etc/hotplug; its whole path is
 *       checked by the trust rule
 * @ret: receives the map (owned by the caller); untouched on failure
 * @on_error: told of every refused file and malformed line (may be NULL)
 * @userdata: passed to @on_error
 *
 * A missing @dir or file is empty, not an error.  A map file that is
 * refused (others can write it or a directory on its way), not a regular
 * file or unreadable is reported and left out: none of its lines act.  A
 * blacklist that is refused or unreadable is reported and fails the
 * load: what the administrator forbade cannot be known, so nothing may
 * act.  So does a refused @dir, DIR/usb or DIR/blacklist.d.
 * Return: 0, -EPERM (a blacklist, or a directory, refused; reported),
 * -ENOMEM, or another negative errno of reading a blacklist.
 */
int usermap_load(const char *dir, struct usermap **ret, usermap_error_fn on_error, void *userdata);

/**
 * usermap_parse() - add the lines of one map, given in memory, to @m.
 * @m: the map
 * @file: the map's name relative to the hotplug directory, as matches
 *        show it ("usb.usermap", "usb/NAME.usermap"; borrowed, copied)
 * @kind: what kind of map it is
 * @data: the file's bytes (borrowed; need not be NUL-terminated)
 * @size: their number
 * @on_error: told of each malformed line (may be NULL)
 * @userdata: passed to @on_error
 *
 * What usermap_load() does with each map file it reads; the fuzzer's entry.
 * Lines end in "\n" (a "\r" before it is ignored); blank lines and lines
 * whose first word starts with '#' are skipped.  Numbers are what the
 * agent's shell arithmetic took: 0x-prefixed hex, octal with a leading 0,
 * or decimal; no sign, no base#digits.  A line must have exactly 13
 * fields, each number in range (u16 ids and bcd, u8 classes, u16
 * match_flags of known bits only, u64 driver_info) and a safe module name.
 * At most HP_USERMAP_ERRORS_MAX malformed lines per file are reported one
 * by one, then their count; at HP_USERMAP_ENTRIES_MAX entries the rest of
 * this file and every later one is ignored, reported once.
 * Return: 0, -ENOMEM (@m keeps what was added), -E2BIG past
 * HP_USERMAP_FILES_MAX files (nothing added; reported).
 */
int usermap_parse(struct usermap *m, const char *file, enum usermap_kind kind, const void *data, size_t size,
                  usermap_error_fn on_error, void *userdata);

/**
 * usermap_parse_blacklist() - add the names of one blacklist, given in memory.
 * @m, @file, @data, @size, @on_error, @userdata: as usermap_parse()
 *
 * One module name a line, blanks around it ignored; blank lines and lines
 * starting with '#' skipped; a line that is not a safe module name is
 * reported and skipped.  At most HP_USERMAP_BLACKLIST_MAX names (reported).
 * Return: 0 or -ENOMEM.
 */
int usermap_parse_blacklist(struct usermap *m, const char *file, const void *data, size_t size,
                            usermap_error_fn on_error, void *userdata);

/* Entries, distinct module names and map files held (for tests and status). */
size_t usermap_entries(const struct usermap *m);
size_t usermap_names(const struct usermap *m);
size_t usermap_files(const struct usermap *m);

/* What a usb event says about its device: see usermap_device_parse(). */
struct usermap_device {
        uint16_t vendor, product, bcd;
        int16_t dev[3]; /* TYPE: class, subclass, protocol; -1: not sent */
        int16_t intf[3]; /* INTERFACE: class, subclass, protocol; -1: not sent */
};

/**
 * usermap_device_parse() - the device of a usb event, from its keys.
 * @product: PRODUCT, "vid/pid/bcd" in hex as the kernel prints it
 *           ("46d/c52b/1211"); required
 * @type: TYPE, "class/subclass/protocol" in decimal, or NULL if not sent
 * @interface: INTERFACE, likewise, or NULL (device events do not send it)
 * @ret: filled on success; untouched on failure
 *
 * A field that is not sent never equals a map's value (the agent gave it
 * the out-of-range value 1000): a line that asks for an interface class
 * matches no device event.  An interface event (INTERFACE sent) matches
 * only lines that ask for an interface field, checked with the device's
 * fields too (by the PRODUCT and TYPE the kernel sends with it): a line
 * about the device (its ids, its class) acts once per device, on the
 * device's own event, not once more for each of its interfaces.
 * Return: 0, or -EINVAL if a key is malformed or a value out of range.
 */
int usermap_device_parse(const char *product, const char *type, const char *interface,
                         struct usermap_device *ret);

struct usermap_match {
        const char *module;     /* borrowed from the map: valid until usermap_free() */
        const char *file;       /* the map, relative to DIR ("usb/x.usermap"), borrowed likewise */
        unsigned line;          /* 1-based */
        enum usermap_kind kind;
        bool repeat;            /* an earlier match of this call names the same module */
};

/**
 * usermap_match() - the lines of @m that match @dev, in file order.
 * @m: the map (borrowed)
 * @dev: the device (borrowed)
 * @ret: receives up to @max matches (pointing into @m)
 * @max: room in @ret
 *
 * A line matches when every field its match_flags name equals the
 * device's (bcdDevice_lo <= bcd for DEV_LO, bcd <= bcdDevice_hi for
 * DEV_HI); a line with no flags matches every device.  Blacklisting is
 * not applied here (usermap_blacklisted()).  A module named by several
 * matching lines is acted on once, at its first line: the later matches
 * are marked repeat (hotplugctl test shows them, the dispatcher skips them).
 * Return: the number of matches, which may exceed @max (only @max stored).
 */
size_t usermap_match(const struct usermap *m, const struct usermap_device *dev, struct usermap_match *ret,
                     size_t max);

/**
 * usermap_blacklisted() - is @module named in DIR/blacklist or DIR/blacklist.d/ *?
 * @m: the map (borrowed)
 * @module: a module name (borrowed)
 *
 * As the agent's grep of whole lines, with '-' and '_' taken as the same
 * character (as module names are).  A blacklisted module is neither loaded
 * nor is its DIR/usb/MODULE run.
 */
bool usermap_blacklisted(const struct usermap *m, const char *module);

/**
 * usermap_describe() - "FILE:LINE MODULE" of @match, for hotplugctl test.
 * @match: a match (borrowed)
 * @buf: receives the text, NUL-terminated, cut if it does not fit
 * @size: room in @buf
 * Return: @buf.  E.g. "usb/xpp_fxloader.usermap:3 xpp_fxloader".
 */
char *usermap_describe(const struct usermap_match *match, char *buf, size_t size);

/**
 * usermap_remover_path() - the per-device REMOVER path of a usb event.
 * @base: the remover directory, e.g. "/run/hotplugd/remover/usb" (borrowed)
 * @devpath: the event's DEVPATH, starting with '/' (borrowed)
 * @buf: receives "BASE/NAME", NUL-terminated; undefined on failure
 * @size: room in @buf
 *
 * A setup script may leave an executable at $REMOVER for the device's
 * remove event.  NAME is DEVPATH with every '/' made '%' (the old agent's
 * /var/run/usb/%devices%...), and '%', '\\' and every byte outside
 * printable ASCII written "\xNN", so that two DEVPATHs never share a
 * name; NAME contains no '/' and starts with '%' (never "." or "..").
 * Return: 0, -EINVAL (@devpath empty or not starting with '/'),
 * -ENAMETOOLONG (NAME past NAME_MAX, or the path past @size).
 */
int usermap_remover_path(const char *base, const char *devpath, char *buf, size_t size);
