/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The unit test harness: a failed check prints where and what, then aborts,
 * so meson counts the test as failed.  Run a test with run_test(fn).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define check(expr)                                                                                        \
        do {                                                                                               \
                if (!(expr)) {                                                                             \
                        fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__,     \
                                #expr);                                                                    \
                        abort();                                                                           \
                }                                                                                          \
        } while (0)

#define check_int(a, b)                                                                                    \
        do {                                                                                               \
                long long a_ = (long long)(a), b_ = (long long)(b);                                        \
                if (a_ != b_) {                                                                            \
                        fprintf(stderr, "%s:%d: %s: %s == %lld, expected %s == %lld\n", __FILE__,          \
                                __LINE__, __func__, #a, a_, #b, b_);                                       \
                        abort();                                                                           \
                }                                                                                          \
        } while (0)

#define check_str(a, b)                                                                                    \
        do {                                                                                               \
                const char *a_ = (a), *b_ = (b);                                                           \
                if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                                   \
                        fprintf(stderr, "%s:%d: %s: %s == \"%s\", expected \"%s\"\n", __FILE__, __LINE__,  \
                                __func__, #a, a_ ? a_ : "(null)", b_ ? b_ : "(null)");                     \
                        abort();                                                                           \
                }                                                                                          \
        } while (0)

#define run_test(fn)                                                                                       \
        do {                                                                                               \
                fprintf(stderr, "== %s\n", #fn);                                                           \
                fn();                                                                                      \
        } while (0)

/*
 * A test that needs something this machine may lack (root, /sys) skips with
 * exit 77 and says why, unless HOTPLUGD_TEST_REQUIRE_ROOT=1 (CI as root):
 * then a skip is a failure.
 */
static inline int test_skip(const char *why)
{
        const char *req = getenv("HOTPLUGD_TEST_REQUIRE_ROOT");

        if (req && strcmp(req, "1") == 0) {
                fprintf(stderr, "FAIL: cannot run (%s), and this run requires every test\n", why);
                return 1;
        }
        fprintf(stderr, "SKIP: %s\n", why);
        return 77;
}
