/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Decimal numbers as hotplugd reads them everywhere (options, the control
 * protocol, sysfs): ASCII digits only, no sign, no blanks, no base prefix,
 * overflow refused.  strtoull() accepts "+1", " 1" and "-1" (as a huge
 * number), so it is not used for this.
 */

#include <errno.h>
#include <stdint.h>

/**
 * decimal_prefix() - the decimal number at the start of @s.
 * @s: text starting with at least one digit
 * @ret: the value; untouched on failure
 * @end: where the digits end (may be NULL)
 * Return: 0, -EINVAL if @s does not start with a digit, -ERANGE past UINT64_MAX.
 */
static inline int decimal_prefix(const char *s, uint64_t *ret, const char **end)
{
        uint64_t v = 0;

        if (*s < '0' || *s > '9')
                return -EINVAL;
        for (; *s >= '0' && *s <= '9'; s++) {
                if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*s - '0');
        }
        *ret = v;
        if (end)
                *end = s;
        return 0;
}

/* decimal_prefix() of all of @s: -EINVAL if anything follows the digits. */
static inline int decimal_u64(const char *s, uint64_t *ret)
{
        const char *end;
        uint64_t v;
        int r = decimal_prefix(s, &v, &end);

        if (r < 0)
                return r;
        if (*end != '\0')
                return -EINVAL;
        *ret = v;
        return 0;
}
