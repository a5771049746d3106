/* SPDX-License-Identifier: MIT */
/*
 * vm-sysfs-write FILE STRING: write STRING (no newline added) to FILE in
 * one write(), as the kernel's sysfs store methods want it, and print
 * "rc=0" or "rc=-ERRNO" (the write's error) on stdout.  The VM suite uses
 * it for test_firmware's trigger_request, whose write blocks until the
 * firmware request ended and fails with the request's error: a shell's
 * echo would hide that error.  Exit status 0 when the write succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char *argv[])
{
        size_t n;
        ssize_t w;
        int fd, err = 0;

        if (argc != 3) {
                fprintf(stderr, "usage: vm-sysfs-write FILE STRING\n");
                return 64;
        }
        n = strlen(argv[2]);
        fd = open(argv[1], O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                err = errno;
        else {
                w = write(fd, argv[2], n);
                if (w < 0)
                        err = errno;
                else if ((size_t)w != n)
                        err = EIO;
                if (close(fd) < 0 && !err)
                        err = errno;
        }
        printf("rc=%d\n", -err);
        return err != 0;
}
