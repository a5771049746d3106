/* SPDX-License-Identifier: MIT */
/* Per-subsystem filter policy (see filter-policy.h).  Later items win. */
#include <errno.h>
#include <string.h>

#include "pipeline/filter-policy.h"

static const char *const rule_names[] = {
        [FILTER_HANDLERS] = "handlers",
        [FILTER_KEEP] = "keep",
        [FILTER_DROP] = "drop",
};

const char *filter_rule_to_string(enum filter_rule r)
{
        return (unsigned)r < 3 ? rule_names[r] : "?";
}

static int rule_from(const char *s, size_t n, enum filter_rule *ret)
{
        for (unsigned i = 0; i < 3; i++)
                if (strlen(rule_names[i]) == n && memcmp(s, rule_names[i], n) == 0) {
                        *ret = (enum filter_rule)i;
                        return 0;
                }
        return -EINVAL;
}

static int set_rule(struct filter_policy *p, const char *subsys, size_t n, enum filter_rule rule)
{
        if (n == 1 && subsys[0] == '*') {
                p->fallback = rule;
                return 0;
        }
        if (n == 0 || n >= HP_NAME_MAX || memchr(subsys, '/', n))
                return -EINVAL;
        for (unsigned i = 0; i < p->n; i++)
                if (strlen(p->rules[i].subsystem) == n && memcmp(p->rules[i].subsystem, subsys, n) == 0) {
                        p->rules[i].rule = rule;
                        return 0;
                }
        if (p->n >= HP_FILTER_RULES_MAX)
                return -E2BIG;
        memcpy(p->rules[p->n].subsystem, subsys, n);
        p->rules[p->n].subsystem[n] = '\0';
        p->rules[p->n].rule = rule;
        p->n++;
        return 0;
}

static int apply(struct filter_policy *p, const char *spec, int first_may_clear)
{
        static const char sep[] = ", \t\n";

        for (const char *s = spec + strspn(spec, sep); *s; s += strspn(s, sep)) {
                size_t n = strcspn(s, sep);
                const char *eq = memchr(s, '=', n);
                enum filter_rule rule;
                int r;

                if (first_may_clear && n == 4 && memcmp(s, "none", 4) == 0) {
                        p->n = 0;
                        p->fallback = FILTER_HANDLERS;
                } else {
                        if (!eq || rule_from(eq + 1, n - (size_t)(eq + 1 - s), &rule) < 0)
                                return -EINVAL;
                        r = set_rule(p, s, (size_t)(eq - s), rule);
                        if (r < 0)
                                return r;
                }
                first_may_clear = 0;
                s += n;
        }
        return 0;
}

int filter_policy_parse(struct filter_policy *p, const char *spec)
{
        int r;

        p->n = 0;
        p->fallback = FILTER_HANDLERS;
        r = apply(p, FILTER_POLICY_DEFAULT, 0);
        if (r < 0 || !spec)
                return r;
        return apply(p, spec, 1);
}

enum filter_rule filter_policy_lookup(const struct filter_policy *p, const char *subsystem)
{
        for (unsigned i = 0; i < p->n; i++)
                if (strcmp(p->rules[i].subsystem, subsystem) == 0)
                        return p->rules[i].rule;
        return p->fallback;
}
