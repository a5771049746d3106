/* SPDX-License-Identifier: MIT */
/*
 * pci: PCI_CLASS, PCI_ID, PCI_SUBSYS_ID, PCI_SLOT_NAME and MODALIAS, as
 * the 2.6 pci_hotplug() sent them and today's pci_uevent() still does.
 * They pass through; only a missing one (a synthetic or hand-made event)
 * is rebuilt from sysfs in the kernel's formats: PCI_CLASS=%04X,
 * PCI_ID=%04X:%04X, PCI_SUBSYS_ID=%04X:%04X, PCI_SLOT_NAME=the device's
 * name, MODALIAS=the modalias attribute.  Not MODALIAS on an "unbind": the
 * kernel takes it out of every unbind (zap_modalias_env()), so that an
 * agent does not load the driver just unbound again.
 */
#include <string.h>

#include "handlers/builtin.h"
#include "shared/sysfs.h"

static const char *const pci_subsystems[] = { "pci", NULL };
static const char *const pci_keys[] = { "PCI_CLASS", "PCI_ID", "PCI_SUBSYS_ID", "PCI_SLOT_NAME", "MODALIAS", NULL };
static const char *const pci_keys_unbind[] = { "PCI_CLASS", "PCI_ID", "PCI_SUBSYS_ID", "PCI_SLOT_NAME", NULL };

static int add_pair(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key, const char *a,
                    const char *b)
{
        const char *const attrs[] = { a, b, NULL };
        unsigned long v[2];

        if (builtin_get(e, key) || builtin_read_ulongs(e, e->ev->devpath, attrs, 0, v) < 0)
                return 0;
        return builtin_learnf(e, env, key, "%04lX:%04lX", v[0], v[1]);
}

static int pci_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                       struct hotplugd_env *env)
{
        const char *dp = e->ev->devpath;
        bool unbind = strcmp(e->ev->action, "unbind") == 0;
        char buf[256];
        unsigned long cls;
        int r = 0;

        if (builtin_recalling(e))
                return builtin_recall(e, env, unbind ? pci_keys_unbind : pci_keys);
        if (!builtin_get(e, "PCI_CLASS") && builtin_read_ulong(e, dp, "class", 0, &cls) >= 0)
                r = builtin_learnf(e, env, "PCI_CLASS", "%04lX", cls);
        if (r >= 0)
                r = add_pair(e, env, "PCI_ID", "vendor", "device");
        if (r >= 0)
                r = add_pair(e, env, "PCI_SUBSYS_ID", "subsystem_vendor", "subsystem_device");
        if (r >= 0 && !builtin_get(e, "PCI_SLOT_NAME"))
                r = builtin_learn(e, env, "PCI_SLOT_NAME", sysfs_basename(dp));
        if (r >= 0 && !unbind && !builtin_get(e, "MODALIAS") && builtin_read(e, dp, "modalias", buf, sizeof(buf)) > 0)
                r = builtin_learn(e, env, "MODALIAS", buf);
        return r;
}

const struct hotplugd_handler builtin_pci = {
        BUILTIN_HANDLER("pci", pci_subsystems),
        .add_env = pci_add_env,
};
