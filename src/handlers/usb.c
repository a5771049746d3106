/* SPDX-License-Identifier: MIT */
/*
 * usb: the 2.6 usb_hotplug() variables, for USB devices and interfaces.
 *   DEVICE=/proc/bus/usb/%03d/%03d    bus and device number (usbfs name); with
 *                                     usb-device-path=dev (the default) the
 *                                     live node /dev/bus/usb/%03d/%03d
 *   PRODUCT=%x/%x/%x                  idVendor/idProduct/bcdDevice
 *   TYPE=%d/%d/%d                     bDeviceClass/SubClass/Protocol
 *   INTERFACE=%d/%d/%d                bInterfaceClass/SubClass/Protocol
 * Today's kernel still sends PRODUCT, TYPE and INTERFACE: they pass
 * through and are rebuilt from sysfs only when missing.  DEVICE is on
 * every event of a device or interface, every action: a usb_device's
 * comes from the BUSNUM/DEVNUM the kernel sends with each of its events;
 * an interface learns its device's at its first event (from the device's
 * record, else the busnum and devnum attributes of the device) and recalls
 * it afterwards, so that it outlives a surprise removal.  Sysfs keeps
 * these numbers in hex (descriptor fields) or decimal (busnum, devnum),
 * the formats above are the kernel's of 2003.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "handlers/builtin.h"

static const char *const usb_subsystems[] = { "usb", NULL };
/* DEVICE first: usb_keys + 1 are the others. */
static const char *const usb_keys[] = { "DEVICE", "PRODUCT", "TYPE", "INTERFACE", NULL };

enum usb_kind { USB_OTHER, USB_DEVICE, USB_INTERFACE };

static enum usb_kind kind_of(const struct hotplugd_event *e)
{
        const char *devtype = builtin_get(e, "DEVTYPE");
        char buf[16];

        if (devtype)
                return strcmp(devtype, "usb_device") == 0      ? USB_DEVICE
                       : strcmp(devtype, "usb_interface") == 0 ? USB_INTERFACE
                                                               : USB_OTHER;
        if (builtin_read(e, e->ev->devpath, "bInterfaceClass", buf, sizeof(buf)) >= 0)
                return USB_INTERFACE;
        if (builtin_read(e, e->ev->devpath, "idVendor", buf, sizeof(buf)) >= 0)
                return USB_DEVICE;
        return USB_OTHER;
}

static int parse_dec(const char *s, unsigned long *ret)
{
        char *end;

        if (!s || !*s || *s == '-')
                return -EINVAL;
        errno = 0;
        *ret = strtoul(s, &end, 10);
        return errno || *end ? -EINVAL : 0;
}

/* The directory DEVICE names a node in (usb-device-path). */
static const char *usbfs(const struct hotplugd_event *e)
{
        return e->cfg->usb_device_path == USB_DEVICE_PATH_DEV ? "/dev/bus/usb" : "/proc/bus/usb";
}

/* DEVICE from the BUSNUM and DEVNUM a usb_device event carries: 1 added, 0 not there. */
static int add_device_from_event(const struct hotplugd_event *e, struct hotplugd_env *env)
{
        unsigned long n[2];
        int r;

        if (parse_dec(builtin_get(e, "BUSNUM"), &n[0]) < 0 || parse_dec(builtin_get(e, "DEVNUM"), &n[1]) < 0)
                return 0;
        r = builtin_learnf(e, env, "DEVICE", "%s/%03lu/%03lu", usbfs(e), n[0], n[1]);
        return r < 0 ? r : 1;
}

/* DEVICE at a device's first event: from the event, the usb device's record, or its sysfs attributes. */
static int add_device(const struct hotplugd_event *e, struct hotplugd_env *env, enum usb_kind kind,
                      const char *usbdev)
{
        static const char *const attrs[] = { "busnum", "devnum", NULL };
        struct devcache_entry rec;
        const char *known;
        unsigned long n[2];
        int r;

        if (kind == USB_DEVICE) {
                r = add_device_from_event(e, env);
                if (r != 0)
                        return r;
        } else if (devcache_get(e->cache, usbdev, &rec) && (rec.flags & DEVCACHE_LEARNT) &&
                   (known = packed_get(rec.data, rec.size, "DEVICE")))
                return builtin_learn(e, env, "DEVICE", known);
        if (builtin_read_ulongs(e, usbdev, attrs, 10, n) < 0)
                return 0;
        return builtin_learnf(e, env, "DEVICE", "%s/%03lu/%03lu", usbfs(e), n[0], n[1]);
}

static int add_missing(const struct hotplugd_event *e, struct hotplugd_env *env, const char *key,
                       const char *devpath, const char *const *attrs, bool hex)
{
        unsigned long v[3];

        /* Sysfs shows every descriptor field in hex. */
        if (builtin_get(e, key) || builtin_read_ulongs(e, devpath, attrs, 16, v) < 0)
                return 0;
        if (hex)
                return builtin_learnf(e, env, key, "%lx/%lx/%lx", v[0], v[1], v[2]);
        return builtin_learnf(e, env, key, "%lu/%lu/%lu", v[0], v[1], v[2]);
}

static int usb_add_env(const struct hotplugd_host *host, void *data, const struct hotplugd_event *e,
                       struct hotplugd_env *env)
{
        static const char *const product[] = { "idVendor", "idProduct", "bcdDevice", NULL };
        static const char *const type[] = { "bDeviceClass", "bDeviceSubClass", "bDeviceProtocol", NULL };
        static const char *const iface[] = { "bInterfaceClass", "bInterfaceSubClass", "bInterfaceProtocol", NULL };
        char usbdev[4096];
        enum usb_kind kind;
        int r;

        kind = kind_of(e);
        if (builtin_recalling(e)) {
                /* A device's own event names it anew; the rest (and an interface's DEVICE) are recalled. */
                r = kind == USB_DEVICE ? add_device_from_event(e, env) : 0;
                return r < 0 ? r : builtin_recall(e, env, r > 0 ? usb_keys + 1 : usb_keys);
        }
        if (kind == USB_OTHER)
                return 0;
        if (kind == USB_INTERFACE) {
                if (builtin_parent(e->ev->devpath, usbdev, sizeof(usbdev)) < 0)
                        return 0;
        } else if (strlen(e->ev->devpath) < sizeof(usbdev))
                strcpy(usbdev, e->ev->devpath);
        else
                return 0;

        r = add_device(e, env, kind, usbdev);
        if (r >= 0)
                r = add_missing(e, env, "PRODUCT", usbdev, product, true);
        if (r >= 0)
                r = add_missing(e, env, "TYPE", usbdev, type, false);
        if (r >= 0 && kind == USB_INTERFACE)
                r = add_missing(e, env, "INTERFACE", e->ev->devpath, iface, false);
        return r;
}

const struct hotplugd_handler builtin_usb = {
        BUILTIN_HANDLER("usb", usb_subsystems),
        .add_env = usb_add_env,
};
