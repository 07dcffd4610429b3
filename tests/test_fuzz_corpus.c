/* test_fuzz_corpus.c — replays every saved fuzz input (tests/fuzz/trace,
 * tests/fuzz/experiment, tests/fuzz/philly, tests/fuzz/sacct, tests/fuzz/limits:
 * seeds and any
 * input that once crashed) through the parsers; under the sanitizer build
 * this is the regression suite. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/targets.h"
#include "testutil.h"

static int replay(const char *dir_rel, int (*target)(const uint8_t *, size_t))
{
    char dir[4096], path[8192];
    test_path(dir, sizeof dir, dir_rel);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        static uint8_t buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        target(buf, n);
        count++;
    }
    closedir(d);
    return count;
}

static void trace_corpus(void **state)
{
    (void)state;
    assert_true(replay("tests/fuzz/trace", lucid_fuzz_trace) >= 5);
}

static void experiment_corpus(void **state)
{
    (void)state;
    assert_true(replay("tests/fuzz/experiment", lucid_fuzz_experiment) >= 3);
}

static void philly_corpus(void **state)
{
    (void)state;
    assert_true(replay("tests/fuzz/philly", lucid_fuzz_philly) >= 5);
}

static void sacct_corpus(void **state)
{
    (void)state;
    assert_true(replay("tests/fuzz/sacct", lucid_fuzz_sacct) >= 5);
}

static void limits_corpus(void **state)
{
    (void)state;
    assert_true(replay("tests/fuzz/limits", lucid_fuzz_limits) >= 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trace_corpus),
        cmocka_unit_test(experiment_corpus),
        cmocka_unit_test(philly_corpus),
        cmocka_unit_test(sacct_corpus),
        cmocka_unit_test(limits_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
