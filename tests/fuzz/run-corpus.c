/* SPDX-License-Identifier: MIT */
/*
 * Regression runner for a fuzz target: feeds every file named on the
 * command line, or found in a directory named there, to
 * LLVMFuzzerTestOneInput().  A crash or abort fails the test.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "shared/bounds.h"
#include "fuzz.h"

/* Files larger than this are a mistake in the corpus, not an input. */
#define CORPUS_FILE_MAX (4 * HP_UEVENT_MAX_SIZE)

static int run_file(const char *path)
{
        static uint8_t buf[CORPUS_FILE_MAX + 1];
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -1;
        }
        n = fread(buf, 1, sizeof(buf), f);
        fclose(f);
        if (n > CORPUS_FILE_MAX) {
                fprintf(stderr, "%s: larger than %d bytes\n", path, CORPUS_FILE_MAX);
                return -1;
        }
        LLVMFuzzerTestOneInput(buf, n);
        return 0;
}

static int run_dir(const char *dir, unsigned *count)
{
        struct dirent *de;
        DIR *d = opendir(dir);
        char path[4096];
        int r = 0;

        if (!d) {
                fprintf(stderr, "%s: %s\n", dir, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (run_file(path) < 0)
                        r = -1;
                else
                        (*count)++;
        }
        closedir(d);
        return r;
}

int main(int argc, char **argv)
{
        unsigned count = 0;
        int r = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
                        return EXIT_FAILURE;
                }
                if (S_ISDIR(st.st_mode))
                        r |= run_dir(argv[i], &count);
                else if (run_file(argv[i]) < 0)
                        r = -1;
                else
                        count++;
        }
        fprintf(stderr, "%u inputs\n", count);
        return r < 0 || count == 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
