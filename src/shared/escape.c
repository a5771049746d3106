/* SPDX-License-Identifier: MIT */
/*
 * Escaping of untrusted bytes for log lines.  The output is always
 * NUL-terminated, never cut inside a "\xNN" sequence, and marked with
 * "..." when input was left out.
 */
#include <assert.h>
#include <string.h>

#include "shared/escape.h"

static size_t escaped_len(unsigned char c)
{
        return (c >= 0x20 && c < 0x7f && c != '\\') ? 1 : 4;
}

static size_t put(char *dst, unsigned char c)
{
        static const char hex[] = "0123456789abcdef";

        if (escaped_len(c) == 1) {
                dst[0] = (char)c;
                return 1;
        }
        dst[0] = '\\';
        dst[1] = 'x';
        dst[2] = hex[c >> 4];
        dst[3] = hex[c & 15];
        return 4;
}

char *escape_bytes(const void *src, size_t len, char *dst, size_t size)
{
        const unsigned char *s = src;
        size_t total = 0, room, o = 0, i;

        if (size == 0)
                return dst;
        for (i = 0; i < len && total < size; i++)
                total += escaped_len(s[i]);

        /* Everything fits: no marker.  Otherwise keep whole escapes that
         * leave room for "..." and the NUL. */
        room = (i == len && total < size) ? size - 1 : (size >= 4 ? size - 4 : 0);
        for (i = 0; i < len && o + escaped_len(s[i]) <= room; i++)
                o += put(dst + o, s[i]);
        if (i < len) {
                size_t dots = size - 1 - o < 3 ? size - 1 - o : 3;

                memcpy(dst + o, "...", dots);
                o += dots;
        }
        assert(o < size); /* room for the NUL, as the sums above keep */
        dst[o] = '\0';
        return dst;
}

char *escape_cstr(const char *src, char *dst, size_t size)
{
        return escape_bytes(src, src ? strlen(src) : 0, dst, size);
}
