/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Per-subsystem filter policy, applied before any handler's filter():
 *   drop      no agent runs for events of this subsystem;
 *   keep      the event is kept whatever the handlers' filter() say;
 *   handlers  the handlers decide (the default for unlisted subsystems).
 * The built-in defaults drop the kobjects the 2.6 driver core never
 * announced because they are not devices: "queues" (net rx-N/tx-N
 * children) and "drivers" (driver directories).  Pure data, no I/O.
 */

#include "shared/bounds.h"

enum filter_rule {
        FILTER_HANDLERS = 0,
        FILTER_KEEP,
        FILTER_DROP,
};

struct filter_policy {
        unsigned n;
        enum filter_rule fallback;   /* for unlisted subsystems ("*=RULE") */
        struct {
                char subsystem[HP_NAME_MAX];
                enum filter_rule rule;
        } rules[HP_FILTER_RULES_MAX];
};

#define FILTER_POLICY_DEFAULT "queues=drop,drivers=drop"

/**
 * filter_policy_parse() - the defaults, then @spec on top.
 * @p: filled (caller's storage)
 * @spec: "SUBSYSTEM=keep|drop|handlers" items separated by ',' or
 *        whitespace; "*" names every unlisted subsystem; NULL or "" for the
 *        defaults only; a leading "none" item clears the defaults
 * Return: 0, or -EINVAL on a malformed item, -E2BIG past HP_FILTER_RULES_MAX.
 */
int filter_policy_parse(struct filter_policy *p, const char *spec);

enum filter_rule filter_policy_lookup(const struct filter_policy *p, const char *subsystem);

const char *filter_rule_to_string(enum filter_rule r);
