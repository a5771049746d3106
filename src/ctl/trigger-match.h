/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Which devices hotplugctl trigger selects: udevadm trigger's match options,
 * read from sysfs.  A device passes when
 *  - its subsystem matches any --subsystem-match (or none is given) and no
 *    --subsystem-nomatch;
 *  - its sysname (the directory's name, '!' read as '/') matches any
 *    --sysname-match (or none is given);
 *  - every --attr-match FILE[=GLOB] holds (FILE readable, and its value,
 *    trailing blanks dropped, matches GLOB if given) and no --attr-nomatch;
 *  - a KEY=GLOB of any --property-match matches one of its properties (the
 *    lines of its uevent file, SUBSYSTEM and DEVPATH), or none is given;
 *  - it is, or is below, any --parent-match / --name-match device, or none
 *    is given.
 * Patterns are shell patterns (fnmatch(3)).  Strings given are borrowed;
 * the parents' syspaths are owned.
 */
#include <stdbool.h>
#include <stddef.h>

#define TRIGGER_MATCH_MAX 64

enum trigger_match_kind {
        TRIGGER_MATCH_SUBSYSTEM,
        TRIGGER_NOMATCH_SUBSYSTEM,
        TRIGGER_MATCH_SYSNAME,
        TRIGGER_MATCH_ATTR,
        TRIGGER_NOMATCH_ATTR,
        TRIGGER_MATCH_PROPERTY,
        TRIGGER_MATCH_PARENT,        /* an absolute syspath, with every link resolved */
        TRIGGER_MATCH_KINDS,
};

struct trigger_match {
        const char *v[TRIGGER_MATCH_KINDS][TRIGGER_MATCH_MAX];
        size_t n[TRIGGER_MATCH_KINDS];
        char *parents[TRIGGER_MATCH_MAX];   /* the TRIGGER_MATCH_PARENT values, owned */
};

/**
 * trigger_match_add() - one more match option
 * @m: the matches
 * @kind: which option
 * @value: its value (borrowed: must outlive @m; a parent is copied)
 * Return: 0, -E2BIG (TRIGGER_MATCH_MAX of @kind already), -EINVAL (a
 * --property-match without "=", or an --attr-match FILE that is not a plain
 * relative path), -ENOMEM.
 */
int trigger_match_add(struct trigger_match *m, enum trigger_match_kind kind, const char *value);

/**
 * trigger_match_passes() - does the device pass every match option?
 * @syspath: its absolute path, ROOT included (borrowed)
 * @devpath: its DEVPATH: @syspath without ROOT (borrowed)
 * @subsystem: its subsystem, "" for none (borrowed)
 * Return: true or false; a device whose files cannot be read fails the
 * matches that need them.
 */
bool trigger_match_passes(const struct trigger_match *m, const char *syspath, const char *devpath,
                          const char *subsystem);

/* Free the parents' copies. */
void trigger_match_done(struct trigger_match *m);
