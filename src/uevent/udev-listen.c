/* SPDX-License-Identifier: MIT */
/*
 * udevd's broadcasts through libudev's monitor (udev-listen.h).  libudev
 * does the sender checks (credentials of uid 0, its own framing) and the
 * parsing; this file keeps only the three fields hotplugd pairs with the
 * kernel's events.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <libudev.h>

#include "shared/hash.h"
#include "shared/macro.h"
#include "uevent/udev-listen.h"

struct udev_listen {
        struct udev *udev;
        struct udev_monitor *mon;
};

struct udev_listen *udev_listen_free(struct udev_listen *l)
{
        if (!l)
                return NULL;
        udev_monitor_unref(l->mon);
        udev_unref(l->udev);
        free(l);
        return NULL;
}

int udev_listen_open(int rcvbuf, struct udev_listen **ret)
{
        struct udev_listen *l = calloc(1, sizeof(*l));
        int r;

        if (!l)
                return -ENOMEM;
        l->udev = udev_new();
        if (!l->udev) {
                r = errno > 0 ? -errno : -ENOMEM;
                goto fail;
        }
        l->mon = udev_monitor_new_from_netlink(l->udev, "udev");
        if (!l->mon) {
                r = errno > 0 ? -errno : -EIO;
                goto fail;
        }
        /* A burst of broadcasts must not overflow the socket while the loop works. */
        if (rcvbuf > 0)
                (void)udev_monitor_set_receive_buffer_size(l->mon, rcvbuf);
        r = udev_monitor_enable_receiving(l->mon);
        if (r < 0)
                goto fail;
        *ret = l;
        return 0;
fail:
        udev_listen_free(l);
        return r;
}

int udev_listen_fd(const struct udev_listen *l)
{
        return udev_monitor_get_fd(l->mon);
}

int udev_listen_receive(struct udev_listen *l, struct udev_confirm *ret)
{
        struct udev_device *d;
        const char *devpath, *action;

        errno = 0;
        d = udev_monitor_receive_device(l->mon);
        if (!d) {
                if (errno == EAGAIN || errno == EWOULDBLOCK || errno == 0)
                        return 0;
                return -errno;
        }
        *ret = (struct udev_confirm){ .seqnum = udev_device_get_seqnum(d) };
        devpath = udev_device_get_devpath(d);
        action = udev_device_get_action(d);
        udev_devpath_hashes(devpath ? devpath : "", &ret->devpath_hash, &ret->parent_hash);
        ret->renamed = udev_device_get_property_value(d, "INTERFACE_OLD") != NULL;
        snprintf(ret->action, sizeof(ret->action), "%s", action ? action : "");
        udev_device_unref(d);
        return 1;
}

void udev_devpath_hashes(const char *devpath, uint64_t *ret_hash, uint64_t *ret_parent)
{
        const char *slash = strrchr(devpath, '/');

        *ret_hash = hash_string(devpath, NULL);
        *ret_parent = hash_bytes(devpath, slash ? (size_t)(slash - devpath) : 0);
}

bool udev_confirm_matches(const struct udev_confirm *c, uint64_t seqnum, uint64_t devpath_hash, uint64_t parent_hash,
                          const char *action)
{
        /* A longer action (no kernel sends one) was cut: it never matches. */
        return c->seqnum == seqnum && (c->devpath_hash == devpath_hash || (c->renamed && c->parent_hash == parent_hash)) &&
               strncmp(c->action, action, sizeof(c->action)) == 0;
}

/*
 * Whether udevd runs: its control socket takes a connection.  A udevd that
 * was killed leaves the socket file behind, which is not a udevd (after-udev
 * would wait for its broadcasts, load-modules leave it the modules).
 * Only a refusal (ECONNREFUSED: nobody listens on it) or a missing file
 * says "not running"; a stopped udevd's socket still takes a connection
 * (its backlog), and any other error is taken as running, as the file's
 * existence was before.  udevd sees a connection closed without a message.
 */
bool udevd_running(void)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = UDEVD_CONTROL_SOCKET };
        int fd, r;

        if (access(UDEVD_CONTROL_SOCKET, F_OK) < 0)
                return false;
        fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return true;
        r = connect(fd, (const struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno : 0;
        safe_close(fd);
        return r != ECONNREFUSED && r != ENOENT;
}
