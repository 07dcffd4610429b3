/* test_import_lucidd.c — `lucid trace import --format lucidd`: a state
 * database written by lucidd's own store (state.c) becomes a trace of what
 * ran, with the rules counted; the database is not modified; and the same
 * run read from Slurm's accounting (sacct --duplicates) gives the same jobs. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef LUCID_HAVE_STATE
#include <limits.h>

#include <sqlite3.h>

#include "lucid/import.h"
#include "lucid/state.h"

/* A job as lucidd stores it; `moved` > 0 writes the `moving` phase (the
 * profiling run's end) before the final one, as lucidd's own store does. */
static void put_at(lucid_state *st, uint32_t id, int64_t submit, lucid_phase phase, int gpus,
                   int64_t prof, int64_t moved, double profiled_s, int64_t main_start,
                   int64_t end)
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
    job.submit_time = submit;
    job.profile_start = prof;
    job.profiled_s = profiled_s;
    job.sharing_score = -1;
    lucid_error err;
    if (moved > 0) {
        job.phase = LUCID_PHASE_MOVING;
        job.phase_since = moved;
        assert_int_equal(lucid_state_put_job(st, &job, &err), 0);
    }
    job.phase = phase;
    job.phase_since = end;
    job.main_start = main_start;
    job.end_time = end;
    assert_int_equal(lucid_state_put_job(st, &job, &err), 0);
}

static void put(lucid_state *st, uint32_t id, lucid_phase phase, int gpus, int64_t prof,
                int64_t main_start, int64_t end)
{
    put_at(st, id, 1700000000 + id * 10, phase, gpus, prof, 0, 0.0, main_start, end);
}

static int64_t removed(const lucid_import *imp, const char *name)
{
    for (int r = 0; r < imp->nrules; r++)
        if (strcmp(imp->rules[r].name, name) == 0)
            return imp->rules[r].removed;
    return -1;
}

/* A new state database in a test folder of its own; its path in db. */
static lucid_state *new_db(const char *name, char *db, size_t size)
{
    char dir[512];
    test_tmpdir(dir, sizeof dir, name);
    snprintf(db, size, "%s/state.db", dir);
    lucid_error err;
    lucid_state *st = lucid_state_open(db, &err);
    assert_non_null(st);
    return st;
}

/* Imports the database at db into imp (initialised here) and returns the
 * trace text it writes (the caller frees it and imp). */
static char *import_text(const char *db, lucid_import *imp)
{
    lucid_error err;
    lucid_import_init(imp, lucid_import_find("lucidd"));
    lucid_import_options opt = {.since = INT64_MIN, .until = INT64_MAX};
    lucid_import_window win = {INT64_MIN, INT64_MAX, INT64_MIN};
    const char *paths[] = {db};
    assert_int_equal(lucid_import_lucidd(imp, paths, 1, &opt, &err), 0);
    assert_int_equal(lucid_import_finish(imp, &win, &err), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(lucid_import_write_trace(imp, &win, out), 0);
    fclose(out);
    return text;
}

static void history_to_trace(void **state)
{
    (void)state;
    char db[640];
    lucid_error err;
    lucid_state *st = new_db("import_lucidd", db, sizeof db);
    const int64_t t = 1700000000; /* job N submitted at t + 10 N */
    /* profiled t+20 to its move at t+80 (60 s), then 3600 s on main */
    put_at(st, 1, t + 10, LUCID_PHASE_DONE, 4, t + 20, t + 80, 58.0, t + 230, t + 3830);
    put(st, 2, LUCID_PHASE_DONE_IN_PROFILER, 1, t + 30, 0, t + 150);     /* 120 s in profiler */
    put(st, 3, LUCID_PHASE_RUNNING, 2, t + 40, t + 300, 0);              /* not finished */
    put(st, 4, LUCID_PHASE_FAILED, 8, 0, 0, t + 60);                     /* never started */
    /* no `moving` phase recorded: the profiling run is lucidd's measured
     * 45.4 s, rounded to 45; then 500 s on main */
    put_at(st, 5, t + 50, LUCID_PHASE_FAILED, 2, t + 60, 0, 45.4, t + 400, t + 900);
    put(st, 6, LUCID_PHASE_MAIN_QUEUE, 1, t + 70, 0, 0);                 /* not finished */
    /* profiled t+100 to t+160, cancelled at t+500 while waiting on main:
     * 60 s of runs (it was 400, end - profiler start, when waiting counted) */
    put_at(st, 7, t + 70, LUCID_PHASE_FAILED, 1, t + 100, t + 160, 60.0, 0, t + 500);
    lucid_gpu_sample mean = {55.5, 12000.0, 30.25};
    assert_int_equal(lucid_state_put_profile(st, 1, &mean, 20, 190.0, &err), 0);
    lucid_state_close(st);
    struct stat before, after;
    assert_int_equal(stat(db, &before), 0);

    lucid_import imp;
    char *text = import_text(db, &imp);
    assert_int_equal(imp.records, 7);
    assert_int_equal(imp.njobs, 4);
    assert_int_equal(removed(&imp, "not_finished"), 2);
    assert_int_equal(removed(&imp, "never_started"), 1);
    /* Origin = job 1's submit (t+10); after duration: first_start,
     * earlier_runs; the profile of job 1 in the metric columns.  Job 1:
     * 60 + 3600 s, first start t+20; job 2: 120 s, its one run; job 5: 45 +
     * 500 s from t+60; job 7: 60 s from t+100, all before its end. */
    assert_non_null(strstr(text, "\n1,u1,lucidd,4,4,done,0,3660,10,60,,,,,,55.500,30.250,12000.000,"));
    assert_non_null(strstr(text, "\n2,u0,lucidd,1,4,done-in-profiler,10,120,20,0,,,,,,,,,"));
    assert_non_null(strstr(text, "\n5,u1,lucidd,2,4,failed,40,545,50,45,"));
    assert_non_null(strstr(text, "\n7,u1,lucidd,1,4,failed,60,60,90,60,"));
    free(text);
    lucid_import_free(&imp);
    /* Read-only: the daemon's database is untouched. */
    assert_int_equal(stat(db, &after), 0);
    assert_int_equal(before.st_size, after.st_size);
    assert_true(before.st_mtime == after.st_mtime);
}

/* The same three jobs as lucidd records them and as Slurm's accounting
 * does (sacct --duplicates: a profiled job has a profiling record, Submit
 * the user's, and a main record, Submit the requeue).  From midnight
 * 2024-01-01: job 42 submitted 00:00:00, profiled 00:00:30-00:05:30, main
 * 00:07:00-01:07:00; job 43 submitted 00:00:50, never profiled, runs
 * 00:01:40-00:11:40; job 44 submitted 00:02:30, profiled 00:03:20-00:04:20,
 * cancelled at 00:15:00 waiting on main. */
static void lucidd_and_sacct_agree(void **state)
{
    (void)state;
    char db[640];
    lucid_error err;
    lucid_state *st = new_db("import_agree", db, sizeof db);
    const int64_t s = 1704067200; /* 2024-01-01 00:00:00 UTC */
    put_at(st, 42, s, LUCID_PHASE_DONE, 4, s + 30, s + 330, 299.0, s + 420, s + 4020);
    put_at(st, 43, s + 50, LUCID_PHASE_DONE, 2, 0, 0, 0.0, s + 100, s + 700);
    put_at(st, 44, s + 150, LUCID_PHASE_FAILED, 1, s + 200, s + 260, 59.0, 0, s + 900);
    lucid_state_close(st);
    const char *sacct =
        "JobID|User|Account|Partition|AllocTRES|Submit|Start|End|State\n"
        "42|u0|a|profiling|cpu=4,gres/gpu=4|2024-01-01T00:00:00|2024-01-01T00:00:30|"
        "2024-01-01T00:05:30|REQUEUED\n"
        "42|u0|a|main|cpu=4,gres/gpu=4|2024-01-01T00:05:30|2024-01-01T00:07:00|"
        "2024-01-01T01:07:00|COMPLETED\n"
        "43|u1|a|main|cpu=4,gres/gpu=2|2024-01-01T00:00:50|2024-01-01T00:01:40|"
        "2024-01-01T00:11:40|COMPLETED\n"
        "44|u0|a|profiling|cpu=4,gres/gpu=1|2024-01-01T00:02:30|2024-01-01T00:03:20|"
        "2024-01-01T00:04:20|REQUEUED\n"
        "44|u0|a|main||2024-01-01T00:04:20|None|2024-01-01T00:15:00|CANCELLED by 0\n";

    lucid_import from_db, from_sacct;
    lucid_import_options opt = {.since = INT64_MIN, .until = INT64_MAX};
    lucid_import_init(&from_db, lucid_import_find("lucidd"));
    const char *paths[] = {db};
    assert_int_equal(lucid_import_lucidd(&from_db, paths, 1, &opt, &err), 0);
    lucid_import_init(&from_sacct, lucid_import_find("sacct"));
    FILE *f = fmemopen((void *)sacct, strlen(sacct), "r");
    assert_non_null(f);
    assert_int_equal(lucid_import_sacct_stream(&from_sacct, f, "run.sacct", &opt, &err), 0);
    fclose(f);
    /* By hand: submit, first start, run time (GPU-seconds = GPUs x it),
     * run time before the last run. */
    static const struct {
        int64_t id, submit, first_start, duration, earlier;
        int32_t gpus;
    } want[] = {
        {42, 0, 30, 300 + 3600, 300, 4}, /* 15,600 GPU-s */
        {43, 50, 100, 600, 0, 2},        /* 1,200 GPU-s */
        {44, 150, 200, 60, 60, 1},       /* 60 GPU-s: the wait on main is not run time */
    };
    assert_int_equal(from_db.njobs, 3);
    assert_int_equal(from_sacct.njobs, 3);
    for (size_t i = 0; i < 3; i++) {
        const lucid_import_job *a = NULL, *b = NULL;
        for (size_t k = 0; k < 3; k++) {
            a = from_db.jobs[k].job_id == want[i].id ? &from_db.jobs[k] : a;
            b = from_sacct.jobs[k].job_id == want[i].id ? &from_sacct.jobs[k] : b;
        }
        assert_non_null(a);
        assert_non_null(b);
        const lucid_import_job *both[] = {a, b};
        for (int k = 0; k < 2; k++) {
            assert_int_equal(both[k]->submit, s + want[i].submit);
            assert_int_equal(both[k]->first_start, s + want[i].first_start);
            assert_int_equal(both[k]->duration, want[i].duration);
            assert_int_equal(both[k]->earlier_runs, want[i].earlier);
            assert_int_equal(both[k]->gpu_num, want[i].gpus);
        }
    }
    lucid_import_free(&from_db);
    lucid_import_free(&from_sacct);
}

/* Jobs Slurm requeued from main (a node failure under --requeue): the
 * runs it cut short are in the history.  Job 1, unprofiled, first ran
 * t+100 to t+300 (cut, 200 s) and again t+400 to t+1000: 800 s of runs
 * from t+100, 200 s earlier.  Job 2, profiled t+100 to its move at t+160,
 * ran on main t+200 to t+250 (cut, 50 s), then cancelled at t+500 while
 * waiting again (main_start 0): 60 + 50 s from t+100, all earlier.  Job
 * 1's time limit is in the trace.  A database from before schema 5 (no
 * such columns) reads as no cut run and no limit. */
static void requeued_main_runs(void **state)
{
    (void)state;
    char db[640];
    lucid_error err;
    lucid_state *st = new_db("import_lucidd_requeue", db, sizeof db);
    const int64_t t = 1700000000;
    put_at(st, 1, t + 10, LUCID_PHASE_DONE, 2, 0, 0, 0.0, t + 400, t + 1000);
    put_at(st, 2, t + 20, LUCID_PHASE_FAILED, 1, t + 100, t + 160, 60.0, 0, t + 500);
    lucid_job_record job;
    assert_int_equal(lucid_state_get_job(st, 1, &job, &err), 1);
    job.main_first_start = t + 100;
    job.main_earlier_s = 200;
    job.time_limit_s = 3600; /* Slurm's 60 minutes */
    assert_int_equal(lucid_state_put_job(st, &job, &err), 0);
    assert_int_equal(lucid_state_get_job(st, 2, &job, &err), 1);
    job.main_first_start = t + 200;
    job.main_earlier_s = 50;
    assert_int_equal(lucid_state_put_job(st, &job, &err), 0);
    lucid_state_close(st);

    for (int old_schema = 0; old_schema < 2; old_schema++) {
        if (old_schema) {
            sqlite3 *raw = NULL;
            assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
            assert_int_equal(sqlite3_exec(raw,
                                          "ALTER TABLE jobs DROP COLUMN main_first_start;"
                                          "ALTER TABLE jobs DROP COLUMN main_earlier_s;"
                                          "ALTER TABLE jobs DROP COLUMN time_limit_s;",
                                          NULL, NULL, NULL),
                             SQLITE_OK);
            sqlite3_close(raw);
        }
        lucid_import imp;
        char *text = import_text(db, &imp);
        /* Origin = job 1's submit (t+10). */
        if (!old_schema) {
            /* After duration: time_limit (job 1's 3600 s; job 2 none). */
            assert_non_null(strstr(text, ",duration,time_limit,first_start,earlier_runs"));
            assert_non_null(strstr(text, "\n1,u1,lucidd,2,4,done,0,800,3600,90,200,"));
            assert_non_null(strstr(text, "\n2,u0,lucidd,1,4,failed,10,110,,90,110,"));
        } else {
            /* Only the last main run: job 1 600 s from t+400; job 2 its
             * profiling run (earlier: it left the profiler). */
            assert_null(strstr(text, "time_limit"));
            assert_non_null(strstr(text, "\n1,u1,lucidd,2,4,done,0,600,390,0,"));
            assert_non_null(strstr(text, "\n2,u0,lucidd,1,4,failed,10,60,90,60,"));
        }
        free(text);
        lucid_import_free(&imp);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(history_to_trace),
                                       cmocka_unit_test(lucidd_and_sacct_agree),
                                       cmocka_unit_test(requeued_main_runs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    puts("test_import_lucidd: built without SQLite, skipped");
    return 0;
}
#endif
