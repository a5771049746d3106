/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The handover file: what an instance of hotplugd leaves behind for the
 * next one when no service manager keeps its journal, above all across
 * the switch from the initramfs to the real root (/run survives it, a
 * memfd in a process that exits does not).  It holds:
 *  - the handover journal (handover.h), exported: the events not finished
 *    and the ledger's highest SEQNUM;
 *  - the devices the instance believed present (its resync set, as of that
 *    SEQNUM), and those whose `add` it (or an instance before it) ran in
 *    this boot.
 * The next instance runs what was not finished, continues the ledger, and
 * from the two sets knows what changed while nobody listened (resync's
 * targeted pass) and which devices a coldplug may skip.
 *
 * The file is input from another process: the reader trusts it only if it
 * is a regular file owned by the reader's user, writable by nobody else,
 * with one link, at most HP_HANDOVER_FILE_MAX bytes, written in this boot
 * (the boot ID), and every byte checks (the header's and the body's
 * CRC-32, every record's form).  Anything else is refused whole, with the
 * reason: half a handover would make the coldplug skip devices whose add
 * never ran.
 *
 * FORMAT, version 1, host byte order (written and read on one machine in
 * one boot):
 *   Header, 64 bytes:
 *     0   8  magic        "HPDHANDF"
 *     8   4  version      1
 *     12  4  header size  64
 *     16  8  journal      bytes of the exported journal (handover_export())
 *     24  8  devices      number of device records
 *     32  8  body         bytes after the header: the journal, then the records
 *     40  4  body crc     record_crc32() of the body
 *     44  4  header crc   record_crc32() of the 64 bytes with this field 0
 *     48 16  boot ID      /proc/sys/kernel/random/boot_id, as 16 bytes
 *   Body: the journal, then each device record: u8 flags (1: believed
 *   present, 2: its add ran; at least one), u8 0, u16 DEVPATH bytes
 *   (1..HP_HANDOVER_DEVPATH_MAX, starting with '/'), u16 SUBSYSTEM bytes
 *   (1..HP_HANDOVER_SUBSYSTEM_MAX, [A-Za-z0-9_.-]), u16 0, then the two
 *   strings, without NULs.  DEVPATH is printable ASCII with no "/." part.
 *
 * Written to PATH.tmp (O_EXCL, mode 0600) and renamed over PATH.
 */

#include <stddef.h>
#include <stdint.h>

#include "recovery/devset.h"

struct handover;

#define HANDOVER_FILE_MAGIC "HPDHANDF"
#define HANDOVER_FILE_VERSION 1
#define HANDOVER_FILE_HEADER_SIZE 64

enum {
        HANDOVER_DEV_PRESENT = 1,
        HANDOVER_DEV_HANDLED = 2,
};

/* What handover_file_load() took over. */
struct handover_file {
        struct handover *journal; /* owned; adopted (handover_import()) */
        struct devset present;    /* devices believed present */
        struct devset handled;    /* devices whose add ran in this boot */
};

/**
 * handover_file_save() - write the handover file.
 * @path: where (borrowed); PATH.tmp is written first
 * @journal: the journal to export (borrowed)
 * @present: devices believed present (borrowed)
 * @handled: devices whose add ran (borrowed)
 * @ret_bytes: the file's size, may be NULL
 * Return: 0 or negative errno (nothing left at @path then, and no PATH.tmp).
 */
int handover_file_save(const char *path, const struct handover *journal, const struct devset *present,
                       const struct devset *handled, uint64_t *ret_bytes);

/**
 * handover_file_load() - read and check the handover file, take it over.
 * @path: the file (borrowed); it is removed once read, taken over or not
 * @ret: filled on success; handover_file_done() frees it
 * @why: the reason for a refusal, a sentence without a final period
 * @why_size: room at @why
 *
 * Return: 0 taken over, -ENOENT no such file, another negative errno when
 * it was refused (@why says why) or could not be read.
 */
int handover_file_load(const char *path, struct handover_file *ret, char *why, size_t why_size);

/* Free what handover_file_load() filled (the journal too, unless the caller took it: set it NULL). */
void handover_file_done(struct handover_file *f);

/* This boot's ID as 16 bytes. Return: 0 or negative errno. */
int handover_boot_id(uint8_t ret[16]);
