/* SPDX-License-Identifier: MIT */
/*
 * udev-enumerate: print the syspath of every device libudev's enumeration
 * lists, in its order, one a line: the reference hotplugctl trigger's own
 * walk of sysfs is checked against (tests/kernel/trigger.sh).
 * Exit: 0, or 1 with a message.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libudev.h>

int main(void)
{
        struct udev *udev = udev_new();
        struct udev_enumerate *e = udev ? udev_enumerate_new(udev) : NULL;
        struct udev_list_entry *entry;
        int r = e ? udev_enumerate_scan_devices(e) : -ENOMEM;

        if (r < 0) {
                fprintf(stderr, "udev-enumerate: %s\n", strerror(-r));
                return 1;
        }
        udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e))
                printf("%s\n", udev_list_entry_get_name(entry));
        udev_enumerate_unref(e);
        udev_unref(udev);
        return fflush(stdout) == 0 ? 0 : 1;
}
