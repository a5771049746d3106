/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "shared/distance.h"
#include "shared/macro.h"

size_t edit_distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        /* Three rows of the table: two back (for swaps), the last, this one. */
        size_t rows[3][DISTANCE_WORD_MAX + 1];

        if (la > DISTANCE_WORD_MAX || lb > DISTANCE_WORD_MAX)
                return MAX(la, lb);
        for (size_t j = 0; j <= lb; j++)
                rows[0][j] = j;
        for (size_t i = 1; i <= la; i++) {
                size_t *two = rows[(i + 1) % 3], *last = rows[(i + 2) % 3], *cur = rows[i % 3];

                cur[0] = i;
                for (size_t j = 1; j <= lb; j++) {
                        size_t cost = a[i - 1] != b[j - 1];
                        size_t d = MIN(MIN(last[j] + 1, cur[j - 1] + 1), last[j - 1] + cost);

                        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                                d = MIN(d, two[j - 2] + 1);
                        cur[j] = d;
                }
        }
        return rows[la % 3][lb];
}
