/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What a monitor client asked to see: hotplugctl monitor's
 * --subsystem-match SUBSYSTEM[/DEVTYPE] and --property-match KEY=GLOB,
 * applied in the daemon so that what is filtered out is never sent.
 *
 * An event passes when it matches one of the subsystem matches (if any was
 * given) and one of the property matches (if any was given): alternatives
 * of one kind, all kinds together, as udevadm has it.  Only the kernel's
 * variables count (SUBSYSTEM, DEVTYPE, the others), never the handlers'
 * additions, so that every record of one event gets the same answer.
 * Subsystem and DEVTYPE compare exactly; a property's value is an
 * fnmatch(3) pattern.  Pure: no I/O, no allocation: the strings live in
 * the filter's own buffer, as long as the request that carried them.
 */

#include <stdbool.h>
#include <stddef.h>

#include "shared/bounds.h"

struct uevent;

struct monitor_filter {
        char buf[HP_CONTROL_REQUEST_MAX + 1];            /* every string below points into it */
        size_t used;
        const char *subsystem[HP_CONTROL_MONITOR_MATCHES_MAX];
        const char *devtype[HP_CONTROL_MONITOR_MATCHES_MAX];         /* NULL: any DEVTYPE */
        size_t n_subsystem;
        const char *key[HP_CONTROL_MONITOR_MATCHES_MAX], *pattern[HP_CONTROL_MONITOR_MATCHES_MAX];
        size_t n_property;
};

/**
 * monitor_filter_add() - add one match, as the monitor request's word carries it.
 * @f: filter (monitor_filter_clear() before the first call)
 * @kind: "subsystem" (@value "SUBSYSTEM" or "SUBSYSTEM/DEVTYPE") or
 *        "property" (@value "KEY=PATTERN")
 * @value: unescaped value (borrowed; copied)
 * Return: 0, -EINVAL for a malformed value or an unknown kind, -E2BIG
 * past HP_CONTROL_MONITOR_MATCHES_MAX matches or the buffer.
 */
int monitor_filter_add(struct monitor_filter *f, const char *kind, const char *value);

/* True if @ev (borrowed) passes @f; an empty filter passes everything. */
bool monitor_filter_match(const struct monitor_filter *f, const struct uevent *ev);

/* Empty @f: it passes everything afterwards. */
void monitor_filter_clear(struct monitor_filter *f);
