/* SPDX-License-Identifier: MIT */
/*
 * scsi: legacy scsi.agent knew SCSI devices only (it reads their "type"
 * attribute to pick sd/st/sr); 2.6 kernels announced neither SCSI hosts
 * nor targets on the scsi bus.  So events with DEVTYPE=scsi_host or
 * scsi_target are filtered out; "scsi=keep" in the filter policy or
 * pass_all (--all) lets them through.
 */
#include <string.h>

#include "handlers/builtin.h"

static const char *const scsi_subsystems[] = { "scsi", NULL };

static int scsi_filter(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e)
{
        const char *devtype = builtin_get(e, "DEVTYPE");

        if (devtype && (strcmp(devtype, "scsi_host") == 0 || strcmp(devtype, "scsi_target") == 0))
                return HOTPLUGD_DROP;
        return HOTPLUGD_KEEP;
}

const struct hotplugd_handler builtin_scsi = {
        BUILTIN_HANDLER("scsi", scsi_subsystems),
        .filter = scsi_filter,
};
