/* test_state.c — lucidd's SQLite state store: round trips of every record,
 * phase history, crash recovery (a writer killed mid-transaction leaves the
 * last committed state), and clear errors for corrupted or foreign files. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef LUCID_HAVE_STATE
#include <sqlite3.h>

#include "lucid/state.h"

static const char *fresh_db(char *buf, size_t size, const char *name)
{
    char dir[512];
    test_tmpdir(dir, sizeof dir, name);
    snprintf(buf, size, "%s/state.db", dir);
    return buf;
}

static lucid_job_record sample_job(uint32_t id, lucid_phase phase)
{
    lucid_job_record job;
    memset(&job, 0, sizeof job);
    job.job_id = id;
    snprintf(job.user, sizeof job.user, "alice");
    snprintf(job.name, sizeof job.name, "train-%u", id);
    snprintf(job.partition, sizeof job.partition, "profiling");
    job.gpus = 4;
    job.nodes = 1;
    job.submit_time = 1700000000 + id;
    job.phase = phase;
    job.phase_since = 1700000100;
    job.estimate_s = 3600.5;
    job.priority = 14402;
    job.sharing_score = -1;
    snprintf(job.reason, sizeof job.reason, "waiting for the profiler");
    return job;
}

static void jobs_round_trip_with_phase_history(void **state)
{
    (void)state;
    char path[600];
    lucid_error err = {{0}};
    lucid_state *db = lucid_state_open(fresh_db(path, sizeof path, "state_jobs"), &err);
    assert_non_null(db);
    lucid_job_record job = sample_job(17, LUCID_PHASE_PROFILE_QUEUE);
    assert_int_equal(lucid_state_put_job(db, &job, &err), 0);
    job.phase = LUCID_PHASE_PROFILING;
    job.phase_since = 1700000200;
    job.profile_start = 1700000200;
    assert_int_equal(lucid_state_put_job(db, &job, &err), 0);
    /* Same phase again: no new history row. */
    snprintf(job.reason, sizeof job.reason, "profiling on p1");
    assert_int_equal(lucid_state_put_job(db, &job, &err), 0);
    job.phase = LUCID_PHASE_MAIN_QUEUE;
    job.phase_since = 1700000400;
    job.packed_with = 12;
    snprintf(job.node_list, sizeof job.node_list, "n1,n2");
    snprintf(job.gpu_list, sizeof job.gpu_list, "0-3");
    job.runs = 1;
    assert_int_equal(lucid_state_put_job(db, &job, &err), 0);

    lucid_job_record back;
    assert_int_equal(lucid_state_get_job(db, 17, &back, &err), 1);
    assert_int_equal(back.job_id, 17);
    assert_string_equal(back.user, "alice");
    assert_string_equal(back.name, "train-17");
    assert_int_equal(back.phase, LUCID_PHASE_MAIN_QUEUE);
    assert_int_equal(back.submit_time, 1700000017);
    assert_int_equal(back.profile_start, 1700000200);
    assert_true(back.estimate_s == 3600.5);
    assert_true(back.priority == 14402);
    assert_int_equal(back.sharing_score, -1);
    assert_int_equal(back.packed_with, 12);
    assert_string_equal(back.node_list, "n1,n2");
    assert_string_equal(back.gpu_list, "0-3");
    assert_string_equal(back.reason, "profiling on p1");
    assert_int_equal(back.runs, 1);
    assert_int_equal(lucid_state_get_job(db, 18, &back, &err), 0);

    lucid_phase phases[8];
    int64_t times[8];
    assert_int_equal(lucid_state_phase_history(db, 17, phases, times, 8, &err), 3);
    assert_int_equal(phases[0], LUCID_PHASE_PROFILE_QUEUE);
    assert_int_equal(phases[1], LUCID_PHASE_PROFILING);
    assert_int_equal(times[1], 1700000200);
    assert_int_equal(phases[2], LUCID_PHASE_MAIN_QUEUE);

    lucid_job_record done = sample_job(5, LUCID_PHASE_DONE_IN_PROFILER);
    assert_int_equal(lucid_state_put_job(db, &done, &err), 0);
    lucid_job_record *list = NULL;
    assert_int_equal(lucid_state_list_jobs(db, 0, &list, &err), 1);
    assert_int_equal(list[0].job_id, 17);
    free(list);
    assert_int_equal(lucid_state_list_jobs(db, 1, &list, &err), 2);
    assert_int_equal(list[0].job_id, 5);
    assert_int_equal(list[1].job_id, 17);
    free(list);

    job.phase = (lucid_phase)99;
    assert_int_equal(lucid_state_put_job(db, &job, &err), -1);
    assert_string_equal(err.msg, "job 17: invalid phase 99");
    lucid_state_close(db);
}

static void profiles_estimates_decisions_models_settings(void **state)
{
    (void)state;
    char path[600];
    lucid_error err = {{0}};
    lucid_state *db = lucid_state_open(fresh_db(path, sizeof path, "state_records"), &err);
    assert_non_null(db);

    lucid_gpu_sample mean = {55.5, 20480, 31}, back;
    int64_t samples = 0;
    assert_int_equal(lucid_state_get_profile(db, 3, &back, &samples, &err), 0);
    assert_int_equal(lucid_state_put_profile(db, 3, &mean, 40, 20.0, &err), 0);
    assert_int_equal(lucid_state_get_profile(db, 3, &back, &samples, &err), 1);
    assert_int_equal(samples, 40);
    assert_true(back.gpu_util_pct == 55.5 && back.gmem_used_mib == 20480 && back.gmem_util_pct == 31);

    assert_int_equal(lucid_state_add_estimate(db, 3, "duration", 2, 7200, 1700000000, &err), 0);

    lucid_decision_record d = {.at = 1700000300, .job_id = 3, .acked = 0};
    snprintf(d.action, sizeof d.action, "start");
    snprintf(d.target, sizeof d.target, "n2");
    snprintf(d.reason, sizeof d.reason, "highest priority that fits");
    int64_t first = lucid_state_add_decision(db, &d, &err);
    assert_true(first > 0);
    d.job_id = 4;
    int64_t second = lucid_state_add_decision(db, &d, &err);
    assert_true(second > first);
    assert_int_equal(lucid_state_ack_decision(db, first, &err), 0);
    assert_int_equal(lucid_state_ack_decision(db, 999, &err), -1);
    assert_non_null(strstr(err.msg, "no decision 999"));

    lucid_decision_record *list = NULL;
    assert_int_equal(lucid_state_list_decisions(db, 0, &list, &err), 1);
    assert_int_equal(list[0].id, second);
    assert_int_equal(list[0].job_id, 4);
    free(list);
    assert_int_equal(lucid_state_list_decisions(db, 3, &list, &err), 1);
    assert_int_equal(list[0].acked, 1);
    assert_string_equal(list[0].reason, "highest priority that fits");
    assert_string_equal(list[0].target, "n2");
    free(list);

    lucid_model_version model = {.version = 3, .trained_at = 1700000000};
    snprintf(model.name, sizeof model.name, "duration");
    snprintf(model.note, sizeof model.note, "heuristic");
    assert_int_equal(lucid_state_set_model_version(db, &model, &err), 0);
    model.version = 4;
    assert_int_equal(lucid_state_set_model_version(db, &model, &err), 0);
    lucid_model_version *models = NULL;
    assert_int_equal(lucid_state_list_model_versions(db, &models, &err), 1);
    assert_int_equal(models[0].version, 4);
    free(models);

    char value[32];
    assert_int_equal(lucid_state_get_setting(db, "packing", value, sizeof value, &err), 0);
    assert_int_equal(lucid_state_set_setting(db, "packing", "on", &err), 0);
    assert_int_equal(lucid_state_get_setting(db, "packing", value, sizeof value, &err), 1);
    assert_string_equal(value, "on");
    lucid_state_close(db);
}

/* A writer killed (SIGKILL, no close) between commits and inside an open
 * transaction: the reopened store has exactly the committed jobs. */
static void recovery_after_kill_keeps_committed_state(void **state)
{
    (void)state;
    char path[600];
    fresh_db(path, sizeof path, "state_recovery");
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        lucid_error err = {{0}};
        lucid_state *db = lucid_state_open(path, &err);
        if (!db)
            _exit(2);
        for (uint32_t id = 1; id <= 20; id++) {
            lucid_job_record job = sample_job(id, LUCID_PHASE_MAIN_QUEUE);
            if (lucid_state_put_job(db, &job, &err) < 0)
                _exit(3);
        }
        /* Half-done step: a job moved to running and its decision, never committed. */
        if (lucid_state_begin(db, &err) < 0)
            _exit(4);
        lucid_job_record job = sample_job(7, LUCID_PHASE_RUNNING);
        lucid_state_put_job(db, &job, &err);
        lucid_job_record extra = sample_job(21, LUCID_PHASE_PROFILE_QUEUE);
        lucid_state_put_job(db, &extra, &err);
        raise(SIGKILL);
        _exit(5);
    }
    int status = 0;
    waitpid(child, &status, 0);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    lucid_error err = {{0}};
    lucid_state *db = lucid_state_open(path, &err);
    assert_non_null(db);
    lucid_job_record *list = NULL;
    assert_int_equal(lucid_state_list_jobs(db, 1, &list, &err), 20);
    for (int i = 0; i < 20; i++) {
        assert_int_equal(list[i].job_id, (uint32_t)i + 1);
        assert_int_equal(list[i].phase, LUCID_PHASE_MAIN_QUEUE);
    }
    free(list);
    lucid_state_close(db);
}

static void corrupted_database_is_a_clear_error(void **state)
{
    (void)state;
    char path[600];
    lucid_error err = {{0}};
    fresh_db(path, sizeof path, "state_corrupt");

    /* Not a database at all. */
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (int i = 0; i < 1000; i++)
        fputs("this is not sqlite ", f);
    fclose(f);
    assert_null(lucid_state_open(path, &err));
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "is corrupted"));
    assert_non_null(strstr(err.msg, "move it aside"));
    assert_null(strchr(err.msg, '\n'));

    /* A real store whose pages are overwritten in the middle. */
    unlink(path);
    lucid_state *db = lucid_state_open(path, &err);
    assert_non_null(db);
    for (uint32_t id = 1; id <= 300; id++) {
        lucid_job_record job = sample_job(id, LUCID_PHASE_MAIN_QUEUE);
        assert_int_equal(lucid_state_put_job(db, &job, &err), 0);
    }
    lucid_state_close(db);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 8192);
    f = fopen(path, "r+b");
    assert_non_null(f);
    /* Whole pages in the middle: b-tree headers included. */
    fseek(f, 4 * 4096, SEEK_SET);
    for (int i = 0; i < 8 * 4096; i++)
        fputc(0xA5, f);
    fclose(f);
    db = lucid_state_open(path, &err);
    assert_null(db);
    assert_non_null(strstr(err.msg, "is corrupted"));

    /* A valid SQLite file that is some other program's database. */
    unlink(path);
    char cmd[800];
    snprintf(cmd, sizeof cmd,
             "sqlite3 '%s' \"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
             " INSERT INTO meta VALUES('schema','99');\" 2>/dev/null",
             path);
    if (system(cmd) == 0) {
        assert_null(lucid_state_open(path, &err));
        assert_non_null(strstr(err.msg, "schema version 99"));
    }

    assert_null(lucid_state_open("/nonexistent/dir/state.db", &err));
    assert_non_null(strstr(err.msg, "cannot open"));
}

/* A model's version, training rows and file text survive a reopen; a
 * schema-1 database (no job CPUs, no model rows or files) is upgraded in
 * place, through 2 and 3 to 4 (a backfill reservation's start) and 5 (a
 * requeued job's first main start and earlier main runs), with its jobs
 * kept. */
static void model_files_and_schema_upgrade(void **state)
{
    (void)state;
    char path[600];
    fresh_db(path, sizeof path, "state_upgrade");
    sqlite3 *raw = NULL;
    assert_int_equal(sqlite3_open(path, &raw), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(raw,
                     "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                     "INSERT INTO meta VALUES('schema', '1');"
                     "CREATE TABLE jobs(job_id INTEGER PRIMARY KEY, user TEXT NOT NULL,"
                     " name TEXT NOT NULL, partition TEXT NOT NULL, gpus INTEGER NOT NULL,"
                     " nodes INTEGER NOT NULL, submit_time INTEGER NOT NULL, phase TEXT NOT NULL,"
                     " phase_since INTEGER NOT NULL, profile_start INTEGER NOT NULL,"
                     " main_start INTEGER NOT NULL, end_time INTEGER NOT NULL,"
                     " estimate_s REAL NOT NULL, priority REAL NOT NULL,"
                     " sharing_score INTEGER NOT NULL, packed_with INTEGER NOT NULL,"
                     " node_list TEXT NOT NULL, gpu_list TEXT NOT NULL, reason TEXT NOT NULL,"
                     " runs INTEGER NOT NULL);"
                     "INSERT INTO jobs VALUES(7, 'bob', 'j', 'main', 2, 1, 100, 'done', 0, 0,"
                     " 110, 170, 60, 120, -1, 0, 'n1', '', 'completed', 1);"
                     "CREATE TABLE models(name TEXT PRIMARY KEY, version INTEGER NOT NULL,"
                     " trained_at INTEGER NOT NULL, note TEXT NOT NULL);"
                     "INSERT INTO models VALUES('duration', 0, 5, 'heuristic');",
                     NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(raw);

    lucid_error err = {{0}};
    lucid_state *db = lucid_state_open(path, &err);
    assert_non_null(db);
    lucid_job_record job;
    assert_int_equal(lucid_state_get_job(db, 7, &job, &err), 1);
    assert_int_equal(job.cpus, 0);
    assert_int_equal(job.end_time, 170);
    /* Schema 3's columns exist after the upgrade, empty until written. */
    assert_string_equal(job.outcome, "");
    assert_true(job.profiled_s == 0);
    assert_int_equal(job.reserved_since, 0); /* schema 4's */
    /* Schema 5's: the first main start is the one main start schema 4 kept. */
    assert_int_equal(job.main_first_start, 110);
    assert_int_equal(job.main_earlier_s, 0);
    assert_int_equal(job.time_limit_s, 0);
    job.cpus = 12;
    job.reserved_since = 1700000123;
    job.main_first_start = 90;
    job.main_earlier_s = 15;
    job.time_limit_s = 7200;
    snprintf(job.outcome, sizeof job.outcome, "completed");
    snprintf(job.ended_in, sizeof job.ended_in, "main");
    snprintf(job.gpu_request, sizeof job.gpu_request, "tpn=gres:gpu:2");
    job.profiled_s = 2.75;
    job.user_hold = 1;
    assert_int_equal(lucid_state_put_job(db, &job, &err), 0);
    lucid_model_version model = {.version = 3, .trained_at = 1700000000, .rows = 120};
    snprintf(model.name, sizeof model.name, "duration");
    snprintf(model.note, sizeof model.note, "GA2M on 120 finished jobs");
    assert_int_equal(lucid_state_save_model(db, &model, "{\"kind\": \"ebm\"}", &err), 0);
    lucid_state_close(db);

    db = lucid_state_open(path, &err);
    assert_non_null(db);
    assert_int_equal(lucid_state_get_job(db, 7, &job, &err), 1);
    assert_int_equal(job.cpus, 12);
    assert_string_equal(job.outcome, "completed");
    assert_string_equal(job.ended_in, "main");
    assert_string_equal(job.gpu_request, "tpn=gres:gpu:2");
    assert_true(job.profiled_s == 2.75);
    assert_int_equal(job.user_hold, 1);
    assert_int_equal(job.reserved_since, 1700000123);
    assert_int_equal(job.main_first_start, 90);
    assert_int_equal(job.main_earlier_s, 15);
    assert_int_equal(job.time_limit_s, 7200);
    lucid_model_version back;
    char *body = NULL;
    assert_int_equal(lucid_state_load_model(db, "duration", &back, &body, &err), 1);
    assert_int_equal(back.version, 3);
    assert_int_equal(back.rows, 120);
    assert_string_equal(back.note, "GA2M on 120 finished jobs");
    assert_string_equal(body, "{\"kind\": \"ebm\"}");
    free(body);
    assert_int_equal(lucid_state_load_model(db, "forecast", &back, NULL, &err), 0);
    lucid_state_close(db);
}

/* Pruning deletes jobs that ended before the cutoff, oldest first, at most
 * `limit`, with everything kept about them; it keeps jobs not ended, jobs
 * ended since, and jobs with a decision not yet acknowledged. */
static void prune_deletes_old_ended_jobs_only(void **state)
{
    (void)state;
    char path[600];
    lucid_error err = {{0}};
    lucid_state *db = lucid_state_open(fresh_db(path, sizeof path, "state_prune"), &err);
    assert_non_null(db);
    static const struct {
        uint32_t id;
        lucid_phase phase;
        int64_t end;
    } jobs[] = {
        {1, LUCID_PHASE_DONE, 1000},   {2, LUCID_PHASE_FAILED, 1100},
        {3, LUCID_PHASE_DONE, 1200},   {4, LUCID_PHASE_ENDED_UNKNOWN, 1300},
        {5, LUCID_PHASE_DONE, 5000},   {6, LUCID_PHASE_MAIN_QUEUE, 0},
        {7, LUCID_PHASE_DONE_IN_PROFILER, 900},
    };
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
        lucid_job_record job = sample_job(jobs[k].id, jobs[k].phase);
        job.end_time = jobs[k].end;
        assert_int_equal(lucid_state_put_job(db, &job, &err), 0);
        assert_int_equal(lucid_state_add_estimate(db, jobs[k].id, "duration", 0, 60, 10, &err), 0);
        lucid_gpu_sample mean = {.gpu_util_pct = 50, .gmem_used_mib = 100, .gmem_util_pct = 5};
        assert_int_equal(lucid_state_put_profile(db, jobs[k].id, &mean, 3, 30, &err), 0);
        lucid_decision_record dec = {.at = 10, .job_id = jobs[k].id};
        snprintf(dec.action, sizeof dec.action, "start");
        int64_t id = lucid_state_add_decision(db, &dec, &err);
        assert_true(id > 0);
        if (jobs[k].id != 7) /* job 7's decision was never acknowledged */
            assert_int_equal(lucid_state_ack_decision(db, id, &err), 0);
    }
    /* Ended before 2000: jobs 1-4 and 7 (kept: unacknowledged); at most 3, oldest first. */
    assert_int_equal(lucid_state_prune(db, 2000, 3, &err), 3);
    lucid_job_record out;
    for (uint32_t id = 1; id <= 3; id++) {
        assert_int_equal(lucid_state_get_job(db, id, &out, &err), 0);
        lucid_gpu_sample mean;
        int64_t samples = 0;
        assert_int_equal(lucid_state_get_profile(db, id, &mean, &samples, &err), 0);
        lucid_decision_record *list = NULL;
        assert_int_equal(lucid_state_list_decisions(db, id, &list, &err), 0);
        free(list);
        lucid_phase phases[8];
        int64_t times[8];
        assert_int_equal(lucid_state_phase_history(db, id, phases, times, 8, &err), 0);
    }
    assert_int_equal(lucid_state_get_job(db, 4, &out, &err), 1);
    assert_int_equal(lucid_state_prune(db, 2000, 100, &err), 1); /* job 4 */
    assert_int_equal(lucid_state_prune(db, 2000, 100, &err), 0);
    for (uint32_t id = 4; id <= 7; id++)
        assert_int_equal(lucid_state_get_job(db, id, &out, &err), id == 4 ? 0 : 1);
    lucid_decision_record *pending = NULL;
    assert_int_equal(lucid_state_list_decisions(db, 0, &pending, &err), 1);
    assert_int_equal(pending[0].job_id, 7);
    free(pending);
    lucid_state_close(db);
}

static void phase_names_round_trip(void **state)
{
    (void)state;
    for (int i = 0; i < LUCID_PHASE_COUNT; i++) {
        lucid_phase back;
        assert_int_equal(lucid_phase_parse(lucid_phase_name((lucid_phase)i), &back), 0);
        assert_int_equal(back, i);
    }
    lucid_phase back;
    assert_int_equal(lucid_phase_parse("sleeping", &back), -1);
    assert_null(lucid_phase_name(LUCID_PHASE_COUNT));
    assert_true(lucid_phase_is_final(LUCID_PHASE_DONE_IN_PROFILER));
    assert_false(lucid_phase_is_final(LUCID_PHASE_MOVING));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobs_round_trip_with_phase_history),
        cmocka_unit_test(profiles_estimates_decisions_models_settings),
        cmocka_unit_test(recovery_after_kill_keeps_committed_state),
        cmocka_unit_test(corrupted_database_is_a_clear_error),
        cmocka_unit_test(model_files_and_schema_upgrade),
        cmocka_unit_test(prune_deletes_old_ended_jobs_only),
        cmocka_unit_test(phase_names_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    puts("test_state: built without SQLite, skipped");
    return 0;
}
#endif
