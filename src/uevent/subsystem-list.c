/* SPDX-License-Identifier: MIT */
/* A list of subsystem names (see subsystem-list.h).  Invariant: a name is
 * a maximal run of bytes other than ',', ' ' and '\t'. */
#include <errno.h>
#include <string.h>

#include "uevent/subsystem-list.h"
#include "uevent/uevent.h"

#define LIST_SEP ", \t"

/* The next name at *@cursor (advanced past it), its length in *@ret_len; NULL after the last. */
static const char *next_name(const char **cursor, size_t *ret_len)
{
        const char *s = *cursor + strspn(*cursor, LIST_SEP);

        if (!*s)
                return NULL;
        *ret_len = strcspn(s, LIST_SEP);
        *cursor = s + *ret_len;
        return s;
}

int subsystem_list_check(const char *spec, const char **ret_bad, size_t *ret_len)
{
        const char *c = spec ? spec : "", *name;
        size_t n;

        while ((name = next_name(&c, &n)))
                if (!uevent_subsystem_valid(name, n)) {
                        *ret_bad = name;
                        *ret_len = n;
                        return -EINVAL;
                }
        return 0;
}

bool subsystem_list_has(const char *spec, const char *subsystem)
{
        const char *c = spec ? spec : "", *name;
        size_t n, len = strlen(subsystem);
        bool any = false;

        while ((name = next_name(&c, &n))) {
                if (n == len && memcmp(name, subsystem, n) == 0)
                        return true;
                any = true;
        }
        return !any;
}
