/* SPDX-License-Identifier: MIT */
/*
 * Reading a recording into a timeline model, for every verb that reads
 * one (timeline, blame): damage is reported on stderr and skipped.
 */
#include <errno.h>
#include <string.h>

#include "ctl/cli.h"
#include "ctl/timeline.h"
#include "shared/escape.h"
#include "uevent/record.h"

int timeline_load(struct timeline *tl, const char *path, const char *verb)
{
        struct record_reader *rd;
        struct record rec;
        char msg[512], esc[256];
        int r;

        escape_cstr(path, esc, sizeof(esc));
        r = record_reader_open(path, &rd);
        if (r < 0) {
                ctl_err(verb, "%s: %s", esc,
                        r == -EBADMSG ? "not a hotplugd recording"
                        : r == -ENODATA ? "empty file"
                        : r == -EPROTONOSUPPORT ? "recording format version not supported"
                                                : strerror(-r));
                return r;
        }
        while ((r = record_reader_next(rd, &rec)) > 0) {
                if (r == RECORD_NEXT_PROBLEM) {
                        ctl_err(verb, "%s: %s", esc, record_problem_format(record_reader_problem(rd), msg, sizeof(msg)));
                        continue;
                }
                r = timeline_add(tl, &rec);
                if (r < 0)
                        break;
        }
        if (r < 0)
                ctl_err(verb, "%s: %s", esc, strerror(-r));
        record_reader_free(rd);
        return r;
}
