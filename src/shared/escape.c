/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "escape.h"

char *escape_bytes(const void *src, size_t len, char *dst, size_t size)
{
        static const char hex[] = "0123456789abcdef";
        const unsigned char *s = src;
        size_t o = 0;

        if (size == 0)
                return dst;

        for (size_t i = 0; i < len; i++) {
                unsigned char c = s[i];
                size_t need = (c >= 0x20 && c < 0x7f && c != '\\') ? 1 : 4;

                if (o + need + 1 > size) {
                        /* Mark the cut; keep room for "..." and NUL. */
                        while (o > 0 && o + 4 > size)
                                o--;
                        if (o + 4 <= size) {
                                memcpy(dst + o, "...", 3);
                                o += 3;
                        }
                        break;
                }
                if (need == 1)
                        dst[o++] = (char)c;
                else {
                        dst[o++] = '\\';
                        dst[o++] = 'x';
                        dst[o++] = hex[c >> 4];
                        dst[o++] = hex[c & 15];
                }
        }
        dst[o] = '\0';
        return dst;
}

char *escape_cstr(const char *src, char *dst, size_t size)
{
        return escape_bytes(src, src ? strlen(src) : 0, dst, size);
}
