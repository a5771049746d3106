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
