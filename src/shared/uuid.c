/* SPDX-License-Identifier: MIT */
/* UUID text form and generation (shared/uuid.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "shared/escape.h"
#include "shared/macro.h"
#include "shared/uuid.h"

#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004
#endif

int uuid_random(char buf[UUID_STRING_MAX])
{
        uint8_t u[16];
        ssize_t n = getrandom(u, sizeof(u), GRND_INSECURE);

        /* Kernels before 5.6 refuse GRND_INSECURE. */
        if (n < 0 && errno == EINVAL)
                n = getrandom(u, sizeof(u), GRND_NONBLOCK);
        if (n != (ssize_t)sizeof(u))
                return n < 0 ? negative_errno() : -EIO;
        u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
        u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
        uuid_to_string(u, buf);
        return 0;
}

int uuid_from_string(const char *s, uint8_t ret[16])
{
        uint8_t u[16];
        size_t n = 0;

        for (size_t i = 0; i < 36; i++) {
                int hi, lo;

                if (i == 8 || i == 13 || i == 18 || i == 23) {
                        if (s[i] != '-')
                                return -EINVAL;
                        continue;
                }
                hi = hexval(s[i]);
                lo = hi < 0 ? -1 : hexval(s[i + 1]);
                if (lo < 0)
                        return -EINVAL;
                u[n++] = (uint8_t)(hi * 16 + lo);
                i++;
        }
        if (s[36] != '\0')
                return -EINVAL;
        memcpy(ret, u, 16);
        return 0;
}

void uuid_to_string(const uint8_t u[16], char buf[UUID_STRING_MAX])
{
        snprintf(buf, UUID_STRING_MAX,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3],
                 u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}
