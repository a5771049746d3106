/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A directory of a unit test's own under /tmp: made with test_dir_make(),
 * paths in it with test_dir_at(), removed (whatever is in it, links not
 * followed) with test_dir_remove().  No shell: nothing of the path is ever
 * interpreted.
 */

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

/*
 * Make /tmp/NAME.PID.XXXXXX, mode 0755, into @dir (at least 64 bytes).  The
 * umask becomes 022: what the test makes in it has the modes the trust rules
 * expect, whatever umask the test was started with (002 makes files that
 * every rule refuses).
 */
static inline void test_dir_make(char *dir, size_t size, const char *name)
{
        umask(022);
        snprintf(dir, size, "/tmp/%s.%ld.XXXXXX", name, (long)getpid());
        check(mkdtemp(dir));
        check_int(chmod(dir, 0755), 0);
}

/* "@dir/@rel", in one of four buffers used in turn (a call may pass two). */
static inline char *test_dir_at(const char *dir, const char *rel)
{
        static char bufs[4][PATH_MAX];
        static unsigned next;
        char *b = bufs[next++ % 4];

        snprintf(b, PATH_MAX, "%s/%s", dir, rel);
        return b;
}

static inline int test_dir_rm_one_(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st, (void)flag, (void)ftw;
        return remove(path);
}

/* Remove @dir and everything in it.  Return: 0, or -1 if something could not be removed. */
static inline int test_dir_remove(const char *dir)
{
        return nftw(dir, test_dir_rm_one_, 16, FTW_DEPTH | FTW_PHYS);
}
