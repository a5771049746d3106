/* SPDX-License-Identifier: MIT */
/*
 * The order of hotplugctl trigger's parallel writes (see trigger-order.h).
 *
 * Invariant: trigger_parent() returns an index below @i whose path is a
 * proper ancestor of @i's, never one of another segment.
 */
#include <string.h>

#include "ctl/trigger-order.h"

/* '/' below every other byte, the rest in byte order. */
static unsigned rank(unsigned char c)
{
        return c == '/' ? 1 : c == 0 ? 0 : (unsigned)c + 1;
}

int trigger_path_cmp(const char *a, const char *b)
{
        const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;

        while (*x && *x == *y) {
                x++;
                y++;
        }
        return (int)rank(*x) - (int)rank(*y);
}

/* Compare the first @len bytes of @a (as if it ended there) with @b. */
static int prefix_cmp(const char *a, size_t len, const char *b)
{
        size_t k = 0;

        while (k < len && a[k] && a[k] == b[k])
                k++;
        return (int)(k < len ? rank((unsigned char)a[k]) : 0) - (int)rank((unsigned char)b[k]);
}

size_t trigger_segment(char *const *paths, size_t i, size_t prev)
{
        return i > 0 && trigger_path_cmp(paths[i - 1], paths[i]) < 0 ? prev : i;
}

/* Binary search of the first @len bytes of @p among the sorted [lo, hi). */
static size_t find(char *const *paths, size_t lo, size_t hi, const char *p, size_t len)
{
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = prefix_cmp(p, len, paths[mid]);

                if (c == 0)
                        return mid;
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return TRIGGER_NO_PARENT;
}

size_t trigger_parent(char *const *paths, size_t from, size_t i)
{
        const char *p = paths[i];
        size_t len = strlen(p);

        /* Each shorter prefix that ends before a '/', nearest first. */
        while (len > 1) {
                size_t k;

                do
                        len--;
                while (len > 0 && p[len] != '/');
                if (len == 0)
                        break;
                k = find(paths, from, i, p, len);
                if (k != TRIGGER_NO_PARENT)
                        return k;
        }
        return TRIGGER_NO_PARENT;
}

/* Is @a a proper ancestor of @b? */
static bool is_ancestor(const char *a, const char *b)
{
        size_t len = strlen(a);

        return strncmp(a, b, len) == 0 && b[len] == '/';
}

void trigger_prioritize(char *const *paths, char *const *subsystems, size_t n, char *const *prio, size_t n_prio,
                        size_t *ret_order, bool *placed)
{
        size_t k = 0;

        memset(placed, 0, n * sizeof(*placed));
        for (size_t s = 0; s < n_prio; s++)
                for (size_t i = 0; i < n; i++) {
                        if (placed[i] || strcmp(subsystems[i], prio[s]) != 0)
                                continue;
                        for (size_t a = 0; a < n; a++)
                                if (!placed[a] && is_ancestor(paths[a], paths[i])) {
                                        placed[a] = true;
                                        ret_order[k++] = a;
                                }
                        placed[i] = true;
                        ret_order[k++] = i;
                }
        for (size_t i = 0; i < n; i++)
                if (!placed[i])
                        ret_order[k++] = i;
}
