/* test_import_lucidd.c — `lucid trace import --format lucidd`: a state
 * database written by lucidd's own store (state.c) becomes a trace of what
 * ran, with the rules counted; the database is not modified. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef LUCID_HAVE_STATE
#include <limits.h>

#include "lucid/import.h"
#include "lucid/state.h"

static void put(lucid_state *st, uint32_t id, lucid_phase phase, int gpus, int64_t prof,
                int64_t main_start, int64_t end)
{
    lucid_job_record job;
    memset(&job, 0, sizeof job);
    job.job_id = id;
    snprintf(job.user, sizeof job.user, "u%u", id % 2);
    snprintf(job.name, sizeof job.name, "job-%u", id);
    snprintf(job.partition, sizeof job.partition, "main");
    job.gpus = gpus;
    job.nodes = 1;
    job.cpus = 4;
    job.submit_time = 1700000000 + id * 10;
    job.phase = phase;
    job.profile_start = prof;
    job.main_start = main_start;
    job.end_time = end;
    job.sharing_score = -1;
    lucid_error err;
    assert_int_equal(lucid_state_put_job(st, &job, &err), 0);
}

static void history_to_trace(void **state)
{
    (void)state;
    char dir[512], db[640];
    test_tmpdir(dir, sizeof dir, "import_lucidd");
    snprintf(db, sizeof db, "%s/state.db", dir);
    lucid_error err;
    lucid_state *st = lucid_state_open(db, &err);
    assert_non_null(st);
    const int64_t t = 1700000000;
    put(st, 1, LUCID_PHASE_DONE, 4, t + 20, t + 230, t + 3830);          /* 3600 s on main */
    put(st, 2, LUCID_PHASE_DONE_IN_PROFILER, 1, t + 30, 0, t + 150);     /* 120 s in profiler */
    put(st, 3, LUCID_PHASE_RUNNING, 2, t + 40, t + 300, 0);              /* not finished */
    put(st, 4, LUCID_PHASE_FAILED, 8, 0, 0, t + 60);                     /* never started */
    put(st, 5, LUCID_PHASE_FAILED, 2, t + 60, t + 400, t + 900);         /* failed on main: 500 s */
    put(st, 6, LUCID_PHASE_MAIN_QUEUE, 1, t + 70, 0, 0);                 /* not finished */
    lucid_gpu_sample mean = {55.5, 12000.0, 30.25};
    assert_int_equal(lucid_state_put_profile(st, 1, &mean, 20, 190.0, &err), 0);
    lucid_state_close(st);
    struct stat before, after;
    assert_int_equal(stat(db, &before), 0);

    lucid_import imp;
    lucid_import_init(&imp, lucid_import_find("lucidd"));
    lucid_import_options opt = {.since = INT64_MIN, .until = INT64_MAX};
    lucid_import_window win = {INT64_MIN, INT64_MAX, INT64_MIN};
    const char *paths[] = {db};
    assert_int_equal(lucid_import_lucidd(&imp, paths, 1, &opt, &err), 0);
    assert_int_equal(lucid_import_finish(&imp, &win, &err), 0);
    assert_int_equal(imp.records, 6);
    assert_int_equal(imp.njobs, 3);
    int64_t not_finished = -1, never = -1;
    for (int r = 0; r < imp.nrules; r++) {
        if (strcmp(imp.rules[r].name, "not_finished") == 0)
            not_finished = imp.rules[r].removed;
        if (strcmp(imp.rules[r].name, "never_started") == 0)
            never = imp.rules[r].removed;
    }
    assert_int_equal(not_finished, 2);
    assert_int_equal(never, 1);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(lucid_import_write_trace(&imp, &win, out), 0);
    fclose(out);
    /* Origin = job 1's submit; the profile of job 1 in the metric columns. */
    assert_non_null(strstr(text, "\n1,u1,lucidd,4,4,done,0,3600,,,,,,55.500,30.250,12000.000,"));
    assert_non_null(strstr(text, "\n2,u0,lucidd,1,4,done-in-profiler,10,120,,,,,,,,,"));
    assert_non_null(strstr(text, "\n5,u1,lucidd,2,4,failed,40,500,"));
    free(text);
    lucid_import_free(&imp);
    /* Read-only: the daemon's database is untouched. */
    assert_int_equal(stat(db, &after), 0);
    assert_int_equal(before.st_size, after.st_size);
    assert_true(before.st_mtime == after.st_mtime);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(history_to_trace)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    puts("test_import_lucidd: built without SQLite, skipped");
    return 0;
}
#endif
