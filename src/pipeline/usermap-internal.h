/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the usermap parser (usermap.c) and its file reader (usermap-load.c)
 * share: the map's layout and the line feed both read through.  Only
 * pipeline/usermap*.c include this.
 */

#include <limits.h>

#include "pipeline/usermap.h"
#include "shared/hash.h"

/* One line of a map: 24 bytes. */
struct usermap_entry {
        uint32_t line;    /* 1-based line in its file */
        uint16_t name;    /* index in names */
        uint16_t file;    /* index in files */
        uint16_t flags;   /* match_flags */
        uint16_t vendor, product, bcd_lo, bcd_hi;
        uint8_t dev[3], intf[3];
};

/* A distinct module name, stored once. */
struct usermap_name {
        uint16_t index;
        char text[];
};

struct usermap_file {
        char *name;       /* relative to the hotplug directory */
        enum usermap_kind kind;
};

struct usermap {
        struct usermap_entry *entries;
        size_t n_entries, cap_entries;
        struct usermap_name **names;    /* owned */
        size_t n_names, cap_names;
        struct hash_table name_index;   /* text -> struct usermap_name (borrowed from names) */
        struct usermap_file *files;
        size_t n_files, cap_files;
        char **black;                   /* blacklisted names, '-' written '_'; owned */
        size_t n_black, cap_black;
        bool full;                      /* HP_USERMAP_ENTRIES_MAX reached (and reported) */
};

/* Reading one file's lines, from memory or in chunks: at most HP_USERMAP_LINE_MAX bytes held. */
struct line_feed {
        struct usermap *m;
        usermap_error_fn on_error;
        void *userdata;
        unsigned file;          /* index in m->files (maps) */
        bool blacklist;
        unsigned lineno;
        size_t len;             /* bytes of the current line in buf */
        size_t bytes;           /* bytes of the file seen */
        bool overlong;          /* the current line is past HP_USERMAP_LINE_MAX: skipped */
        bool stop;              /* a limit was reached (reported): the rest is ignored */
        unsigned errors;        /* malformed lines */
        int r;                  /* -ENOMEM, once it happened */
        char epath[PATH_MAX];   /* the file's name for messages, escaped */
        char buf[HP_USERMAP_LINE_MAX + 1];
};

/* A safe module name (usermap.h) of @n bytes at @s? */
bool usermap_name_ok(const char *s, size_t n);

/* Start reading @file (stored) / @path (in messages); @kind: an enum usermap_kind, or -1 for a blacklist.
 * Return: 0, -ENOMEM, -E2BIG (too many map files; reported). */
int feed_begin(struct line_feed *f, struct usermap *m, const char *file, const char *path, int kind,
               usermap_error_fn on_error, void *userdata);
/* The next @size bytes of the file. */
void feed_bytes(struct line_feed *f, const char *data, size_t size);
/* The end of the file.  Return: 0 or -ENOMEM. */
int feed_end(struct line_feed *f);
/* Tell the caller "PATH:LINE: ..." (@line 0: "PATH: ..."). */
void feed_say(struct line_feed *f, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
