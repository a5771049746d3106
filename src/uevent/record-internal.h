/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the recording's format, writer and reader share (uevent/ only):
 * little-endian field access, the file header and the CRC-32 table.  The
 * format itself is described in record.h.
 */

#include <stddef.h>
#include <stdint.h>

#include "uevent/record.h"

static inline void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
}

static inline void put32(uint8_t *p, uint32_t v)
{
        for (int i = 0; i < 4; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put64(uint8_t *p, uint64_t v)
{
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t get16(const uint8_t *p)
{
        return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get32(const uint8_t *p)
{
        return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const uint8_t *p)
{
        return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* The 256-entry table of the reflected CRC-32 (shared by every caller, filled at the first call). */
const uint32_t *record_crc_table(void);

/* Our version 1 file header into @h. */
void record_file_header(uint8_t h[RECORD_FILE_HEADER_SIZE]);

/**
 * record_check_header() - check a file header.
 * @h: the first @n bytes of the file (borrowed)
 * @n: bytes in @h
 * @ret_version: the file's version, or NULL
 *
 * Return: the header size (>= RECORD_FILE_HEADER_SIZE); -EBADMSG if it is
 * not a recording; -EPROTONOSUPPORT for a newer version.
 */
int record_check_header(const uint8_t *h, size_t n, unsigned *ret_version);
