/* SPDX-License-Identifier: MIT */
/*
 * The keys kernels put into uevents, in one table.  Invariants: every name
 * is [A-Z0-9_]+ and none is one env_key_refused() refuses (the test checks
 * both), so a key passes the allow list or the block list, never both; the
 * table is searched sorted (sorted once, at the first call).
 *
 * Where the names come from: every key of an add_uevent_var() or
 * kobject_uevent_env() call in Linux 6.1 (lib/, drivers/, sound/, net/,
 * fs/, block/, virt/, arch/), with the variables of the kernel's own
 * uevent helper (HOME, PATH: never on the socket) left out; keys added
 * since (drm's WEDGED and TASK, HID_FIRMWARE_VERSION); and the keys 2.6
 * kernels sent that hotplugd's handlers rebuild (PHYSDEVPATH, PHYSDEVBUS,
 * PHYSDEVDRIVER, and DEVICE for USB).  Keys whose names a driver makes up
 * at run time are not here: the Mellanox platform's hotplug labels
 * (mlxreg-hotplug), and the lower-case keys of xen-netback, which
 * uevent_parse() rejects anyway.
 */
#include <stdlib.h>
#include <string.h>

#include "shared/envbuf.h"
#include "shared/macro.h"
#include "uevent/kernel-keys.h"
#include "uevent/uevent.h"

static const char *kernel_keys[] = {
        /* The core (lib/kobject_uevent.c, drivers/base/). */
        "ACTION", "DEVPATH", "SUBSYSTEM", "SEQNUM", "DEVPATH_OLD", "SYNTH_UUID", "DEVTYPE", "DRIVER", "MAJOR",
        "MINOR", "DEVNAME", "DEVMODE", "DEVUID", "DEVGID", "MODALIAS", "FIRMWARE", "TIMEOUT", "ASYNC",
        /* The legacy keys of 2.6 kernels that hotplugd's handlers rebuild (DEVICE: USB's /proc/bus/usb path). */
        "PHYSDEVPATH", "PHYSDEVBUS", "PHYSDEVDRIVER", "DEVICE",
        /* Block devices and the device mapper, md. */
        "DISKSEQ", "PARTN", "PARTNAME", "RESIZE", "DISK_MEDIA_CHANGE", "DISK_EJECT_REQUEST", "DISK_RO", "DM_ACTION",
        "DM_NAME", "DM_UUID", "DM_PATH", "DM_SEQNUM", "DM_TARGET", "DM_NR_VALID_PATHS", "DM_COOKIE",
        "DM_VERITY_ERR_BLOCK_NR", "CACHED_LABEL", "CACHED_UUID", "DEVICE_UUID", "RAID_DISK",
        /* Buses: PCI, USB, Thunderbolt, type-C, MMC/SDIO, HID, input and serio. */
        "PCI_CLASS", "PCI_ID", "PCI_SUBSYS_ID", "PCI_SLOT_NAME", "DEVICE_ONLINE", "ERROR_EVENT", "PRODUCT", "TYPE",
        "INTERFACE", "BUSNUM", "DEVNUM", "ERROR", "OVER_CURRENT_COUNT", "OVER_CURRENT_PORT", "PRODUCT_TYPE", "SVID",
        "MODE", "TYPEC_PORT", "USB_CHARGER_STATE", "USB_CHARGER_TYPE", "USB_ROLE_SWITCH", "USB_UDC_DRIVER",
        "USB_UDC_NAME", "AUTHORIZED", "USB4_TYPE", "USB4_VERSION", "MMC_NAME", "MMC_TYPE", "SDIO_CLASS", "SDIO_ID",
        "SDIO_REVISION", "HID_ID", "HID_NAME", "HID_PHYS", "HID_UNIQ", "HID_FIRMWARE_VERSION", "NAME", "PHYS",
        "UNIQ", "PROP", "EV", "KEY", "REL", "ABS", "MSC", "LED", "SND", "FF", "SW", "SERIO_TYPE", "SERIO_PROTO",
        "SERIO_ID", "SERIO_EXTRA", "SERIO_FIRMWARE_ID",
        /* Other buses: AMBA, MIPS CDMM, PCMCIA, Zorro, PA-RISC, MEI, TIFM, memstick, W1, WMI, Xen, greybus, devicetree. */
        "AMBA_ID", "CDMM_CPU", "CDMM_REV", "CDMM_TYPE", "SOCKET_NO", "DEVICE_NO", "ZORRO_ID", "ZORRO_SLOT_ADDR",
        "ZORRO_SLOT_NAME", "PARISC_NAME", "MEI_CL_NAME", "MEI_CL_UUID", "MEI_CL_VERSION", "TIFM_CARD_TYPE",
        "MEMSTICK_CATEGORY", "MEMSTICK_CLASS", "MEMSTICK_TYPE", "W1_FID", "W1_SLAVE_ID", "WMI_GUID",
        "XENBUS_BASE_PATH", "XENBUS_PATH", "XENBUS_TYPE", "BUNDLE", "BUNDLE_CLASS", "BUS", "GREYBUS_ID", "MODULE",
        "GBPHY", "INTF_ID", "PROTOCOL_ID", "VID", "OF_NAME", "OF_TYPE", "OF_FULLNAME",
        /* s390: channel subsystem, crypto adapters, qeth, SMSG. */
        "CU_TYPE", "CU_MODEL", "DEV_TYPE", "DEV_MODEL", "ST", "APMASK", "AQMASK", "BINDINGS", "COMPLETECOUNT",
        "CONFIG", "INITSCAN", "ONLINE", "BRIDGEDHOST", "BRIDGEPORT", "MAC", "MEDIUM_STATE", "ROLE", "STATE", "VLAN",
        "NTOK_BUSID", "NTOK_CHID", "NTOK_CHPID", "NTOK_IID", "SMSG_ID", "SMSG_SENDER", "SMSG_TEXT",
        /* Networking: net devices, rfkill, wireless, batman-adv, wwan, NVMe over fabrics, SCSI. */
        "IFINDEX", "RFKILL_NAME", "RFKILL_TYPE", "RFKILL_STATE", "RFKILL_HW_BLOCK_REASON", "COUNTRY", "BATACTION",
        "BATDATA", "BATTYPE", "IOSM_EVENT", "FW_DUMP", "HW_REV", "SOURCE", "NVME_EVENT", "NVME_AEN", "NVME_TRTYPE",
        "NVME_TRADDR", "NVME_TRSVCID", "NVME_HOST_TRADDR", "NVME_HOST_IFACE", "NVMEFC_TRADDR", "NVMEFC_HOST_TRADDR",
        "FC_EVENT", "SDEV_MEDIA_CHANGE", "SDEV_UA", "GRCDUMP", "BAY_EVENT",
        /* Graphics and media: drm (hotplug, leases, wedged devices), i915, dvb, v4l. */
        "HOTPLUG", "CONNECTOR", "PROPERTY", "LEASE", "WEDGED", "PID", "TASK", "L3_PARITY_ERROR", "RESET", "ROW",
        "BANK", "SUBBANK", "SLICE", "GVT_DISPLAY_READY", "VMID", "DVB_ADAPTER_NUM", "DVB_DEVICE_NUM",
        "DVB_DEVICE_TYPE", "DEV_NAME", "DRV_NAME",
        /* Classes: power supply, thermal, LEDs, PWM, GNSS, mdev, KVM, sound. */
        "POWER_SUPPLY_NAME", "TEMP", "TRIP", "TRIGGER", "EXPORT", "UNEXPORT", "GNSS_TYPE", "MDEV_STATE", "CREATED",
        "COUNT", "STATS_PATH", "EVENT",
        /* File systems: gfs2, dlm. */
        "FIRSTMOUNT", "JID", "JOURNALID", "LOCKPROTO", "LOCKTABLE", "LOCKSPACE", "RDONLY", "RECOVERY", "SPECTATOR",
        "UUID",
};

/* Families whose names the kernel builds at run time (SYNTH_ARG_ has its own rule, synth_arg()). */
static const char *const kernel_prefixes[] = { "POWER_SUPPLY_", "OF_COMPATIBLE_", "OF_ALIAS_", "SDIO_INFO" };

#define SYNTH_ARG "SYNTH_ARG_"

/*
 * SYNTH_ARG_NAME: the kernel takes NAME=VALUE from what is written to a
 * uevent file, NAME letters and digits only (kobject_action_args()), so
 * never SYNTH_ARG_LD_PRELOAD.  A NAME the block list refuses
 * (SYNTH_ARG_PYTHONPATH) is not taken from a file either: an agent that
 * strips the prefix would make it the variable.
 */
static bool synth_arg(const char *key, size_t len)
{
        size_t plen = strlen(SYNTH_ARG);

        if (len <= plen || memcmp(key, SYNTH_ARG, plen) != 0)
                return false;
        for (size_t i = plen; i < len; i++)
                if (!((key[i] >= 'A' && key[i] <= 'Z') || (key[i] >= '0' && key[i] <= '9')))
                        return false;
        return !env_key_refused(key + plen, len - plen);
}

static int name_cmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *const *uevent_kernel_keys(size_t *ret_n)
{
        static bool sorted;

        if (!sorted) {
                qsort(kernel_keys, ELEMENTSOF(kernel_keys), sizeof(kernel_keys[0]), name_cmp);
                sorted = true;
        }
        *ret_n = ELEMENTSOF(kernel_keys);
        return kernel_keys;
}

bool uevent_key_sent_by_kernel(const char *key, size_t len)
{
        size_t lo = 0, hi;
        const char *const *keys = uevent_kernel_keys(&hi);

        if (!key || len == 0)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(kernel_prefixes); i++) {
                size_t plen = strlen(kernel_prefixes[i]);

                if (len > plen && memcmp(key, kernel_prefixes[i], plen) == 0)
                        return true;
        }
        if (synth_arg(key, len))
                return true;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = strncmp(key, keys[mid], len);

                if (c == 0 && keys[mid][len] == '\0')
                        return true;
                if (c < 0 || (c == 0 && keys[mid][len] != '\0'))
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return false;
}

size_t uevent_strip_unsent(const struct uevent *ev, char *out, size_t *ret_size, const char **ret_dropped)
{
        size_t used = strlen(ev->buf) + 1, n = 0;

        memcpy(out, ev->buf, used); /* "ACTION@DEVPATH" */
        for (unsigned i = 0; i < ev->n_vars; i++) {
                const char *v = uevent_var(ev, i);
                size_t klen = strcspn(v, "="), len = strlen(v) + 1;

                if (uevent_key_sent_by_kernel(v, klen) || env_key_refused(v, klen)) {
                        memcpy(out + used, v, len);
                        used += len;
                } else
                        ret_dropped[n++] = v;
        }
        *ret_size = used;
        return n;
}
