/* SPDX-License-Identifier: MIT */
/*
 * Fail-fast firmware: an "add" of a firmware fallback device that the
 * built-in loader (handlers/firmware.c) found no file for carries
 * HANDLER_FIRMWARE_MISSING_KEY=1.  When such an event is done (its agents
 * ran, or there were none), a request still open is failed at once:
 * "loading" reads 0 (nobody started to load it) and "-1" is written to
 * it, so that the driver gets its error now instead of after the kernel's
 * fallback timeout (60 s by default).  An agent that served the request
 * finished it ("loading" 0 then "data" and "0": the device is gone, or the
 * kernel ignores the -1 of a request already done); an agent that is
 * still loading ("loading" reads 1) is left alone.
 *
 * Invariants: nothing is written in a dry run; every request failed is a
 * log line and counted; the names are kept, each once, up to
 * HP_FIRMWARE_MISSING_NAMES (then only counted), for hotplugctl status.
 * The writes go through the sysfs root with the sysfs rules (no link is
 * followed, nothing outside the root is opened).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loop/manager-internal.h"
#include "loop/observe-builtin.h"
#include "pipeline/handlers.h"
#include "shared/bounds.h"
#include "shared/escape.h"
#include "shared/log.h"
#include "shared/macro.h"
#include "shared/sysfs.h"
#include "uevent/uevent.h"

struct observe_firmware {
        struct manager *m;
        uint64_t failed;          /* requests failed at once */
        uint64_t untracked;       /* of those, with a new name when the list was full */
        size_t n;
        struct firmware_missing names[HP_FIRMWARE_MISSING_NAMES];
};

static void count_name(struct observe_firmware *f, const char *name)
{
        size_t len = strlen(name);

        f->failed++;
        for (size_t i = 0; i < f->n; i++)
                if (strcmp(f->names[i].name, name) == 0) {
                        f->names[i].requests++;
                        return;
                }
        if (f->n == ELEMENTSOF(f->names) || len >= sizeof(f->names[0].name)) {
                f->untracked++;
                return;
        }
        memcpy(f->names[f->n].name, name, len + 1);
        f->names[f->n++].requests = 1;
}

/* Fail @ev's request if it is still open.  Return: 1 failed now, 0 nothing to do, negative errno. */
static int fail_request(const struct manager *m, const struct uevent *ev)
{
        _cleanup_close_ int rootfd = -1, dirfd = -1, fd = -1;
        char state[16];
        int r;

        rootfd = sysfs_open_root(manager_cfg(m)->sysfs_root ? manager_cfg(m)->sysfs_root : "/sys");
        if (rootfd < 0)
                return rootfd;
        dirfd = sysfs_open_dir(rootfd, ev->devpath);
        if (dirfd < 0)
                return dirfd == -ENOENT ? 0 : dirfd; /* answered and gone, or cancelled */
        r = sysfs_read_at(dirfd, "loading", state, sizeof(state));
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (strcmp(state, "0") != 0)
                return 0; /* an agent is loading it */
        fd = openat(dirfd, "loading", O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (write(fd, "-1", 2) != 2)
                return errno == ENODEV ? 0 : -EIO;
        return 1;
}

static void on_done(void *userdata, const struct uevent *ev)
{
        struct observe_firmware *f = userdata;
        const char *name = uevent_get(ev, "FIRMWARE");
        char esc[4 * HP_FIRMWARE_NAME_MAX];
        struct log_fields lf;
        int r;

        if (!uevent_get_extra(ev, HANDLER_FIRMWARE_MISSING_KEY) || !name || manager_cfg(f->m)->dry_run)
                return;
        uevent_log_fields(ev, &lf);
        escape_cstr(name, esc, sizeof(esc));
        r = fail_request(f->m, ev);
        if (r < 0)
                log_internal(LOG_WARNING, r, &lf, "firmware %s: cannot fail the open request", esc);
        if (r <= 0)
                return;
        count_name(f, name);
        log_internal(LOG_WARNING, 0, &lf, "firmware %s: not in --firmware-path and no agent loaded it; "
                     "request failed (loading -1)", esc);
}

static void on_close(void *userdata)
{
        free(userdata);
}

static const struct manager_observer_ops firmware_ops = {
        .done = on_done,
        .close = on_close,
};

int observe_firmware_open(struct manager *m)
{
        struct observe_firmware *f = calloc(1, sizeof(*f));
        int r;

        if (!f)
                return -ENOMEM;
        f->m = m;
        r = manager_add_observer(m, &firmware_ops, f);
        if (r < 0)
                free(f);
        return r;
}

void manager_firmware_missing(const struct manager *m, struct firmware_missing_totals *ret)
{
        const struct observe_firmware *f = manager_observer_data(m, &firmware_ops);

        *ret = (struct firmware_missing_totals){ .names = NULL };
        if (!f)
                return;
        *ret = (struct firmware_missing_totals){
                .failed = f->failed,
                .untracked = f->untracked,
                .n = f->n,
                .names = f->names,
        };
}
