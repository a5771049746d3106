/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD probe for tests/kernel/files.sh: right after each successful
 * bind() of an AF_UNIX path, before the caller can do anything else, writes
 * "PATH MODE" (octal permission bits of the new socket file) as one line to
 * the file named by $BIND_PROBE_OUT.  This is the mode the socket has from
 * the moment it exists.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

int bind(int fd, __CONST_SOCKADDR_ARG addr, socklen_t len)
{
        const struct sockaddr *sa = addr.__sockaddr__;
        const struct sockaddr_un *un = (const struct sockaddr_un *)sa;
        const char *out = getenv("BIND_PROBE_OUT");
        struct stat st;
        int r, saved;
        FILE *f;

        r = (int)syscall(SYS_bind, fd, sa, len);
        saved = errno;
        if (r == 0 && out && sa->sa_family == AF_UNIX && un->sun_path[0] && lstat(un->sun_path, &st) == 0) {
                f = fopen(out, "ae");
                if (f) {
                        fprintf(f, "%s %04o\n", un->sun_path, (unsigned)(st.st_mode & 07777));
                        fclose(f);
                }
        }
        errno = saved;
        return r;
}
