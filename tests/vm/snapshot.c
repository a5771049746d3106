/* SPDX-License-Identifier: MIT */
/*
 * vm-snapshot: what the guest's sysfs holds, for tests/vm/check.py, which
 * needs the devices that existed before the capture started (the capture
 * says nothing about them).  Prints one line per bus and per device:
 *
 *   bus<TAB>NAME                          each entry of /sys/bus
 *   dev<TAB>DEVPATH<TAB>SUBSYSTEM<TAB>KIND<TAB>DRIVER<TAB>DEVTYPE<TAB>BUSNUM<TAB>DEVNUM
 *
 * for every directory below /sys/devices with a "uevent" file.  SUBSYSTEM
 * is the basename of the "subsystem" link, KIND "bus" if that link leads
 * into /sys/bus, "class" otherwise; DRIVER the basename of the "driver"
 * link; DEVTYPE from the uevent file; BUSNUM/DEVNUM the attributes (usb
 * devices).  A missing value is "-".  Symbolic links are never followed
 * while walking.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PATHMAX 4096

/* Basename of the target of link @name in @dirfd into @out, or "-". */
static void link_base(int dirfd, const char *name, char *out, size_t size, int *into_bus)
{
        char target[PATHMAX];
        ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);
        const char *slash, *base;

        snprintf(out, size, "-");
        if (n <= 0)
                return;
        target[n] = '\0';
        slash = strrchr(target, '/');
        base = slash ? slash + 1 : target;
        if (strlen(base) < size)
                memcpy(out, base, strlen(base) + 1);
        if (into_bus)
                *into_bus = strstr(target, "/bus/") != NULL;
}

/* First line of attribute @name, or "-". */
static void read_attr(int dirfd, const char *name, char *out, size_t size)
{
        int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t n = fd >= 0 ? read(fd, out, size - 1) : -1;

        if (fd >= 0)
                close(fd);
        if (n <= 0) {
                snprintf(out, size, "-");
                return;
        }
        out[n] = '\0';
        out[strcspn(out, "\n")] = '\0';
        if (!out[0])
                snprintf(out, size, "-");
}

/* DEVTYPE= from the uevent file, or "-". */
static void read_devtype(int dirfd, char *out, size_t size)
{
        char buf[8192];
        int fd = openat(dirfd, "uevent", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

        if (fd >= 0)
                close(fd);
        snprintf(out, size, "-");
        if (n <= 0)
                return;
        buf[n] = '\0';
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
                if (strncmp(line, "DEVTYPE=", 8) == 0)
                        snprintf(out, size, "%s", line + 8);
}

static void show_device(int dirfd, const char *devpath)
{
        char subsystem[256], driver[256], devtype[256], busnum[32], devnum[32];
        int into_bus = 0;

        link_base(dirfd, "subsystem", subsystem, sizeof(subsystem), &into_bus);
        link_base(dirfd, "driver", driver, sizeof(driver), NULL);
        read_devtype(dirfd, devtype, sizeof(devtype));
        read_attr(dirfd, "busnum", busnum, sizeof(busnum));
        read_attr(dirfd, "devnum", devnum, sizeof(devnum));
        printf("dev\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", devpath, subsystem,
               strcmp(subsystem, "-") == 0 ? "-" : into_bus ? "bus" : "class", driver, devtype, busnum, devnum);
}

static void walk(int dirfd, char *path, size_t len)
{
        struct stat st;
        struct dirent *de;
        DIR *d;

        if (fstatat(dirfd, "uevent", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                show_device(dirfd, path + 4); /* DEVPATH: without "/sys" */
        d = fdopendir(dup(dirfd));
        if (!d)
                return;
        while ((de = readdir(d))) {
                int sub;
                size_t n = strlen(de->d_name);

                if (de->d_type != DT_DIR || de->d_name[0] == '.' || len + n + 2 > PATHMAX)
                        continue;
                sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0)
                        continue;
                path[len] = '/';
                memcpy(path + len + 1, de->d_name, n + 1);
                walk(sub, path, len + 1 + n);
                path[len] = '\0';
                close(sub);
        }
        closedir(d);
}

int main(void)
{
        char path[PATHMAX] = "/sys/devices";
        struct dirent *de;
        DIR *buses = opendir("/sys/bus");
        int root;

        if (!buses) {
                perror("/sys/bus");
                return 1;
        }
        while ((de = readdir(buses)))
                if (de->d_name[0] != '.')
                        printf("bus\t%s\n", de->d_name);
        closedir(buses);
        root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0) {
                perror(path);
                return 1;
        }
        walk(root, path, strlen(path));
        close(root);
        return fflush(stdout) != 0;
}
