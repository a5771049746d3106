/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The libFuzzer entry point every tests/fuzz/fuzz-*.c defines.  The same
 * function runs under libFuzzer (meson option fuzz=true, clang) and under
 * run-corpus.c, which feeds it the checked-in corpus in every build.
 */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#include <stdio.h>
#include <stdlib.h>

/* An invariant of a target: a failure names itself, then aborts (a crash to libFuzzer). */
#define fuzz_check(expr)                                                                          \
        do {                                                                                      \
                if (!(expr)) {                                                                    \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #expr); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)
