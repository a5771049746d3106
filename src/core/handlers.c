/* SPDX-License-Identifier: MIT */
/* PLACEHOLDER pass-through chain: the real registry (built-ins + external handlers) replaces this. */
#include <errno.h>
#include <stdlib.h>

#include "envbuf.h"
#include "handlers.h"
#include "uevent.h"

struct handler_chain {
        struct handler_config cfg;
};

int handler_chain_new(const struct handler_config *cfg, struct handler_chain **ret)
{
        struct handler_chain *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->cfg = *cfg;
        *ret = c;
        return 0;
}

struct handler_chain *handler_chain_free(struct handler_chain *c)
{
        free(c);
        return NULL;
}

int handler_chain_run(struct handler_chain *c, const struct uevent *ev, struct envbuf *env,
                      char name[HP_NAME_MAX])
{
        (void)c;
        (void)ev;
        (void)env;
        name[0] = '\0';
        return HANDLER_RUN;
}
