/* testutil.c — file helpers for tests (testutil.h). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *test_path(char *buf, size_t size, const char *relative)
{
    snprintf(buf, size, "%s/%s", LUCID_SOURCE_DIR, relative);
    return buf;
}

const char *test_tmpdir(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/test-tmp/%s", LUCID_BINARY_DIR, name);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", buf, buf);
    if (system(cmd) != 0)
        fail_msg("cannot create %s", buf);
    return buf;
}

const char *test_write_file(char *buf, size_t size, const char *dir, const char *name,
                            const char *text)
{
    snprintf(buf, size, "%s/%s", dir, name);
    FILE *f = fopen(buf, "wb");
    if (!f)
        fail_msg("cannot write %s", buf);
    fputs(text, f);
    fclose(f);
    return buf;
}
