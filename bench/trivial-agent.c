/* SPDX-License-Identifier: MIT */
/* The cheapest possible agent: exits 0 at once.  Linked statically when the
 * C library allows it, so the benchmark measures process creation, not ld.so. */
int main(void)
{
        return 0;
}
