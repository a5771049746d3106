/* SPDX-License-Identifier: MIT */
/*
 * vm-clock: print the guest's CLOCK_MONOTONIC as seconds with nine
 * decimals, the VM suite's timestamps (tests/vm/init-lib.sh,
 * tests/vm/record.hotplug); busybox has no way to read it.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
        struct timespec ts;

        if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0) {
                perror("vm-clock: clock_gettime");
                return 1;
        }
        printf("%lld.%09ld\n", (long long)ts.tv_sec, ts.tv_nsec);
        return 0;
}
