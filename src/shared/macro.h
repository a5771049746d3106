/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Small helpers used everywhere: cleanup attributes, array sizes, errno
 * conversion.  Nothing here holds state.
 */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)
#define _noreturn_ __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define STRLEN(s) (sizeof(s) - 1)

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* Turn a libc "-1 and errno" result into a negative errno, at the boundary. */
static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

static inline void freep(void *p)
{
        free(*(void **)p);
}

static inline int safe_close(int fd)
{
        if (fd >= 0) {
                int saved = errno;
                (void)close(fd);
                errno = saved;
        }
        return -1;
}

static inline void closep(int *fd)
{
        safe_close(*fd);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)

/* Define foo_freep() for a type with foo_free(). */
#define DEFINE_FREEP(type, func)                                                                           \
        static inline void func##p(type **p)                                                               \
        {                                                                                                  \
                if (*p)                                                                                    \
                        func(*p);                                                                          \
        }

#define TAKE_PTR(p) take_ptr_((void **)&(p))
static inline void *take_ptr_(void **p)
{
        void *v = *p;
        *p = NULL;
        return v;
}

static inline int take_fd(int *fd)
{
        int v = *fd;
        *fd = -1;
        return v;
}
