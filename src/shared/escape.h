/* SPDX-License-Identifier: MIT */
#pragma once

#include <stddef.h>

/**
 * escape_bytes() - make untrusted bytes safe to print.
 * @src: bytes to escape (borrowed)
 * @len: number of bytes
 * @dst: output buffer (borrowed), always NUL-terminated if @size > 0
 * @size: size of @dst
 *
 * Printable ASCII (0x20-0x7e) other than backslash is copied; everything
 * else becomes "\xNN" (NUL too).  Output that does not fit is cut after the
 * last whole character or escape that leaves room for "..." and the NUL,
 * then ends in "..." (in as much of "..." as fits when @size < 4).
 *
 * Return: @dst.
 */
char *escape_bytes(const void *src, size_t len, char *dst, size_t size);

/* escape_bytes() of a NUL-terminated string. */
char *escape_cstr(const char *src, char *dst, size_t size);

/* Value of one hex digit (either case), or -1. */
static inline int hexval(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}
