/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Random (version 4) UUIDs in their RFC 4122 text form, as the kernel takes
 * them in SYNTH_UUID ("add UUID" written to a uevent file).
 */

#include <stdint.h>

#define UUID_STRING_MAX 37 /* 36 characters and the NUL */

/**
 * uuid_random() - a new random UUID as text.
 * @buf: receives the lower-case text form (UUID_STRING_MAX bytes)
 *
 * Never blocks: it needs uniqueness, not secrecy, so it does not wait for
 * the kernel's random pool at early boot.
 * Return: 0, or negative errno with @buf untouched.
 */
int uuid_random(char buf[UUID_STRING_MAX]);

/* Parse "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (any hex case). Return: 0 or -EINVAL. */
int uuid_from_string(const char *s, uint8_t ret[16]);

/* Lower-case text form into @buf (UUID_STRING_MAX bytes). */
void uuid_to_string(const uint8_t uuid[16], char buf[UUID_STRING_MAX]);
