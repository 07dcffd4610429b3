/* test_lucidd_models.c — lucidd's models (src/daemon/models.c): the update
 * engine trains at the configured times and only on finished jobs, the
 * estimates change with each retraining, versions count up and survive a
 * restart with the model itself; the sharing tree from a file gives the
 * expected scores (a split on a feature the profiler cannot measure takes
 * the heavier branch); bad sharing files fail with one line naming the
 * file.  (That the in-memory duration features equal the trace builder's
 * is checked in test_model_features.c.) */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef LUCID_HAVE_STATE
#include "../src/daemon/models.h"

enum { MAX_JOBS = 128 };

typedef struct fixture {
    lucidd_job jobs[MAX_JOBS];
    size_t njobs;
    size_t told; /* jobs the models were told of (update) */
} fixture;

/* Held jobs wait in the main queue; finished ones ran `duration` seconds
 * on main.  Durations grow with the GPUs asked, so the model has a signal. */
static lucidd_job *add(fixture *f, lucid_phase phase, int gpus, double duration)
{
    lucidd_job *job = &f->jobs[f->njobs];
    memset(job, 0, sizeof *job);
    job->rec.job_id = (uint32_t)(100 + f->njobs);
    snprintf(job->rec.user, sizeof job->rec.user, "u%zu", f->njobs % 3);
    job->rec.gpus = gpus;
    job->rec.nodes = 1;
    job->rec.cpus = 4 * gpus;
    /* The same hours of the same day for every batch: only the durations differ. */
    job->rec.submit_time = 1600000000 + (int64_t)(f->njobs % 20) * 3600;
    job->rec.phase = phase;
    if (phase == LUCID_PHASE_DONE || phase == LUCID_PHASE_FAILED) {
        job->rec.main_start = job->rec.submit_time + 10;
        job->rec.end_time = job->rec.main_start + (int64_t)duration;
    }
    f->njobs++;
    return job;
}

static void add_finished(fixture *f, int count, double scale)
{
    for (int k = 0; k < count; k++) {
        int gpus = 1 << (k % 4);
        add(f, LUCID_PHASE_DONE, gpus, scale * (600.0 * gpus + 60.0 * (k % 5)));
    }
}

static lucidd_models_config config(void)
{
    return (lucidd_models_config){.retrain_period_s = 100,
                                  .min_history = 20,
                                  .bags = 2,
                                  .seed = 42,
                                  .vc = "main"};
}

/* A new state store in a fresh directory (path in db_path, the directory in dir). */
static lucid_state *fresh_state(const char *name, char *dir, size_t dir_size, char *db_path,
                                size_t path_size)
{
    test_tmpdir(dir, dir_size, name);
    snprintf(db_path, path_size, "%s/state.db", dir);
    lucid_error err = {{0}};
    lucid_state *db = lucid_state_open(db_path, &err);
    assert_non_null(db);
    return db;
}

static lucid_model_version stored(lucid_state *db, const char *name)
{
    lucid_model_version v;
    lucid_error err = {{0}};
    assert_int_equal(lucid_state_load_model(db, name, &v, NULL, &err), 1);
    return v;
}

/* The models are told of each job once, as the engine does when a job
 * ends (f->told: how many of f's jobs so far), then updated. */
static int update(lucidd_models *m, fixture *f, int64_t now, lucid_error *err)
{
    for (; f->told < f->njobs; f->told++)
        assert_true(lucidd_models_add_finished(m, &f->jobs[f->told]) >= 0);
    return lucidd_models_update(m, now, err);
}

/* One update that should start a training: it runs on the worker, and the
 * next update installs it as a new version. */
static void train_now(lucidd_models *m, fixture *f, int64_t now)
{
    lucid_error err = {{0}};
    assert_int_equal(update(m, f, now, &err), 0);
    assert_true(lucidd_models_training(m));
    lucidd_models_wait(m);
    assert_int_equal(update(m, f, now, &err), 1);
    assert_false(lucidd_models_training(m));
}

static void update_engine_trains_on_finished_jobs_at_its_times(void **state)
{
    (void)state;
    char dir[512], path[600];
    lucid_state *db = fresh_state("lucidd_models_update", dir, sizeof dir, path, sizeof path);
    lucid_error err = {{0}};
    lucidd_models_config cfg = config();
    lucidd_models *m = lucidd_models_open(&cfg, db, 1000, &err);
    assert_non_null(m);
    assert_int_equal(lucidd_models_version(m, "duration"), 0);
    assert_int_equal(lucidd_models_version(m, "sharing"), 0);
    assert_int_equal(lucidd_models_version(m, "forecast"), 0);

    fixture *f = calloc(1, sizeof *f);
    lucidd_job *held = add(f, LUCID_PHASE_MAIN_QUEUE, 4, 0);
    add(f, LUCID_PHASE_PROFILE_QUEUE, 2, 0);
    add(f, LUCID_PHASE_RUNNING, 8, 0);
    for (int k = 0; k < 5; k++) /* ended, but not finished: never training rows */
        add(f, LUCID_PHASE_FAILED, 1, 99999);
    add_finished(f, 19, 1.0);

    /* 19 finished jobs, 20 needed: the heuristic, however often it is asked. */
    int64_t version = -1;
    for (int64_t now = 1000; now < 1500; now += 100)
        assert_int_equal(update(m, f, now, &err), 0);
    assert_false(lucidd_models_training(m));
    assert_true(lucidd_models_estimate(m, held, 3600, &version) == 3600);
    assert_int_equal(version, 0);

    add_finished(f, 1, 1.0);
    train_now(m, f, 1500);
    lucid_model_version v1 = stored(db, "duration");
    assert_int_equal(v1.version, 1);
    assert_int_equal(v1.rows, 20); /* the finished jobs only */
    assert_int_equal(v1.trained_at, 1500);
    double first = lucidd_models_estimate(m, held, 3600, &version);
    assert_int_equal(version, 1);
    assert_true(first != 3600);
    assert_true(first > 600 && first < 4 * 600 * 8);
    held->rec.estimate_s = first;
    char why[1024];
    lucidd_models_explain(m, held, version, why, sizeof why);
    assert_non_null(strstr(why, "duration model v1 (trained on 20 finished jobs)"));
    assert_non_null(strstr(why, "intercept"));

    /* Not due again before a period has passed, however many jobs finish. */
    add_finished(f, 20, 3.0);
    assert_int_equal(update(m, f, 1599, &err), 0);
    assert_false(lucidd_models_training(m));
    train_now(m, f, 1600);
    lucid_model_version v2 = stored(db, "duration");
    assert_int_equal(v2.version, 2);
    assert_int_equal(v2.rows, 40);
    double second = lucidd_models_estimate(m, held, 3600, &version);
    assert_int_equal(version, 2);
    assert_true(second > first); /* the new jobs ran three times longer */
    lucidd_models_close(m);
    lucid_state_close(db);

    /* A restart keeps the version, the model and the training clock. */
    db = lucid_state_open(path, &err);
    assert_non_null(db);
    m = lucidd_models_open(&cfg, db, 1650, &err);
    assert_non_null(m);
    f->told = 0; /* a new lucidd loads every ended job from the store */
    assert_int_equal(lucidd_models_version(m, "duration"), 2);
    assert_true(lucidd_models_estimate(m, held, 3600, &version) == second);
    assert_int_equal(version, 2);
    assert_int_equal(update(m, f, 1650, &err), 0);
    assert_false(lucidd_models_training(m));
    train_now(m, f, 1700);
    assert_int_equal(stored(db, "duration").version, 3);
    lucidd_models_explain(m, held, 2, why, sizeof why);
    assert_non_null(strstr(why, "since replaced by v3"));
    lucidd_models_close(m);
    lucid_state_close(db);
    free(f);
}

/* The models keep the newest history_max finished jobs (up to a quarter
 * more between two trims): 60 long jobs then 40 twenty times shorter, a
 * history of 20: the model trains on short jobs only. */
static void history_keeps_the_newest_finished_jobs(void **state)
{
    (void)state;
    char dir[512], path[600];
    lucid_state *db = fresh_state("lucidd_models_history", dir, sizeof dir, path, sizeof path);
    lucid_error err = {{0}};
    lucidd_models_config cfg = config();
    cfg.history_max = 20;
    lucidd_models *m = lucidd_models_open(&cfg, db, 1000, &err);
    assert_non_null(m);
    fixture *f = calloc(1, sizeof *f);
    lucidd_job *held = add(f, LUCID_PHASE_MAIN_QUEUE, 4, 0);
    add_finished(f, 60, 20.0);
    add_finished(f, 40, 1.0);
    train_now(m, f, 1500);
    lucid_model_version v = stored(db, "duration");
    assert_true(v.rows >= 20 && v.rows <= 25);
    int64_t version = 0;
    double estimate = lucidd_models_estimate(m, held, 3600, &version);
    assert_int_equal(version, 1);
    /* The 40 newest ran 600-4,800 s (x 1); the 60 before, 12,000-96,000 s. */
    assert_true(estimate > 600 && estimate < 4 * 600 * 8);
    lucidd_models_close(m);
    lucid_state_close(db);
    free(f);
}

/* A tree small enough to follow by hand:
 *   gmem_util <= 30: gpu_util <= 25 -> 0, else 1
 *   gmem_util >  30: avg_speed <= 0.9 -> 2, else 1  (avg_speed unmeasured: 2) */
static const char tiny_tree[] =
    "{\"format\": \"lucid-model\", \"kind\": \"cart\", \"version\": 1, \"meta\": {},"
    " \"alpha\": 0.0001, \"seed\": 42, \"train_rows\": 9,"
    " \"features\": [\"gpu_util\", \"gmem_util\", \"avg_speed\"], \"classes\": [0, 1, 2],"
    " \"nodes\": [{\"feature\": \"gmem_util\", \"threshold\": %s, \"left\": 1, \"right\": 4,"
    " \"counts\": [3, 3, 3]},"
    " {\"feature\": \"gpu_util\", \"threshold\": 25, \"left\": 2, \"right\": 3,"
    " \"counts\": [3, 2, 0]},"
    " {\"counts\": [3, 0, 0]}, {\"counts\": [0, 2, 0]},"
    " {\"feature\": \"avg_speed\", \"threshold\": 0.9, \"left\": 5, \"right\": 6,"
    " \"counts\": [0, 1, 3]},"
    " {\"counts\": [0, 0, 3]}, {\"counts\": [0, 1, 0]}]}";

static const char *write_tree(char *buf, size_t size, const char *dir, const char *threshold)
{
    char text[2048];
    snprintf(text, sizeof text, tiny_tree, threshold);
    return test_write_file(buf, size, dir, "share.json", text);
}

static int score(const lucidd_models *m, double gpu_util, double gmem_util, double gmem)
{
    lucid_gpu_sample s = {.gpu_util_pct = gpu_util, .gmem_util_pct = gmem_util,
                          .gmem_used_mib = gmem};
    return lucidd_models_sharing(m, &s);
}

/* Estimates of many held jobs at once equal the one-at-a-time ones, and
 * the finished jobs' index, kept up to date as jobs finish (not rebuilt),
 * gives what a fresh one over the same jobs gives: a second lucidd_models
 * on the same store (the same stored model), told of the same jobs only
 * afterwards, estimates every held job the same. */
static void batch_estimates_and_the_kept_index_match_fresh_ones(void **state)
{
    (void)state;
    char dir[512], path[600];
    lucid_state *db = fresh_state("lucidd_models_batch", dir, sizeof dir, path, sizeof path);
    lucid_error err = {{0}};
    lucidd_models_config cfg = config();
    lucidd_models *m = lucidd_models_open(&cfg, db, 1000, &err);
    assert_non_null(m);
    fixture *f = calloc(1, sizeof *f);
    add_finished(f, 40, 1.0);
    train_now(m, f, 1500);
    enum { HELD = 12 };
    const lucidd_job *held[HELD];
    for (int k = 0; k < HELD; k++) {
        lucidd_job *job = add(f, LUCID_PHASE_MAIN_QUEUE, 1 << (k % 4), 0);
        job->rec.submit_time = 1700000000; /* after every finished job's end */
        held[k] = job;
    }
    f->told = f->njobs; /* held jobs are not finished: nothing to tell */
    int64_t version = 0;
    lucidd_models_estimate(m, held[0], 3600, &version); /* builds the index */
    assert_int_equal(version, 1);
    /* More jobs finish (ending just before the held jobs' submission, with
     * ties in end time): the index takes them one by one. */
    for (int k = 0; k < 30; k++) {
        lucidd_job *job = add(f, LUCID_PHASE_DONE, 1, 0);
        job->rec.main_start = 1700000000 - 5000 + 100 * (k / 3);
        job->rec.end_time = job->rec.main_start + 50 + 1000 * (k % 3);
    }
    assert_int_equal(update(m, f, 1500, &err), 0);
    double many[HELD];
    int64_t versions[HELD];
    for (int k = 0; k < HELD; k++)
        many[k] = 3600;
    lucidd_models_estimate_many(m, held, HELD, many, versions);
    lucidd_models *fresh = lucidd_models_open(&cfg, db, 1600, &err);
    assert_non_null(fresh);
    for (size_t i = 0; i < f->njobs; i++)
        assert_true(lucidd_models_add_finished(fresh, &f->jobs[i]) >= 0);
    for (int k = 0; k < HELD; k++) {
        int64_t v1 = 0, v2 = 0;
        double one = lucidd_models_estimate(m, held[k], 3600, &v1);
        double again = lucidd_models_estimate(fresh, held[k], 3600, &v2);
        assert_true(versions[k] == 1 && v1 == 1 && v2 == 1);
        assert_true(many[k] == one && one == again);
    }
    lucidd_models_close(fresh);
    lucidd_models_close(m);
    lucid_state_close(db);
    free(f);
}

static void sharing_tree_from_a_file(void **state)
{
    (void)state;
    char dir[512], db_path[600], tree[600];
    lucid_state *db =
        fresh_state("lucidd_models_sharing", dir, sizeof dir, db_path, sizeof db_path);
    lucid_error err = {{0}};
    lucidd_models_config cfg = config();
    lucidd_models *m = lucidd_models_open(&cfg, db, 10, &err);
    assert_non_null(m);
    /* The heuristic: utilisation < 30 light, < 60 medium, else heavy. */
    assert_int_equal(score(m, 10, 50, 1000), 0);
    assert_int_equal(score(m, 70, 20, 1000), 2);
    lucidd_models_close(m);

    cfg.sharing_model = write_tree(tree, sizeof tree, dir, "30");
    m = lucidd_models_open(&cfg, db, 20, &err);
    assert_non_null(m);
    assert_int_equal(score(m, 10, 20, 1000), 0);
    assert_int_equal(score(m, 70, 20, 1000), 1);
    assert_int_equal(score(m, 10, 50, 1000), 2); /* avg_speed unknown: the heavier side */
    assert_int_equal(score(m, 10, 30.0000001, 1000), 0); /* compared as float32, as trained */
    assert_int_equal(lucidd_models_version(m, "sharing"), 1);
    assert_non_null(strstr(stored(db, "sharing").note, "tree "));
    lucidd_models_close(m);

    /* Same file: same version; another file: the next; none: back to the heuristic. */
    m = lucidd_models_open(&cfg, db, 30, &err);
    assert_int_equal(lucidd_models_version(m, "sharing"), 1);
    lucidd_models_close(m);
    write_tree(tree, sizeof tree, dir, "60");
    m = lucidd_models_open(&cfg, db, 40, &err);
    assert_int_equal(lucidd_models_version(m, "sharing"), 2);
    assert_int_equal(score(m, 10, 50, 1000), 0);
    lucidd_models_close(m);
    cfg.sharing_model = NULL;
    m = lucidd_models_open(&cfg, db, 50, &err);
    assert_int_equal(lucidd_models_version(m, "sharing"), 3);
    assert_non_null(strstr(stored(db, "sharing").note, "heuristic"));
    lucidd_models_close(m);
    lucid_state_close(db);
}

static void expect_refused(lucid_state *db, const char *path, const char *what)
{
    lucidd_models_config cfg = config();
    cfg.sharing_model = path;
    lucid_error err = {{0}};
    assert_null(lucidd_models_open(&cfg, db, 10, &err));
    assert_non_null(strstr(err.msg, path));
    if (!strstr(err.msg, what))
        fail_msg("'%s' does not say '%s'", err.msg, what);
    assert_null(strchr(err.msg, '\n'));
}

static void bad_sharing_files_are_refused_with_one_line(void **state)
{
    (void)state;
    char dir[512], db_path[600], path[600];
    lucid_state *db = fresh_state("lucidd_models_bad", dir, sizeof dir, db_path, sizeof db_path);
    expect_refused(db, test_write_file(path, sizeof path, dir, "cut.json", "{\"format\": \"luc"),
                   "not a valid model file");
    snprintf(path, sizeof path, "%s/absent.json", dir);
    expect_refused(db, path, "absent.json");
    expect_refused(db,
                   test_write_file(path, sizeof path, dir, "ebm.json",
                                   "{\"format\": \"lucid-model\", \"kind\": \"ebm\", "
                                   "\"version\": 1}"),
                   "kind");
    char text[2048];
    snprintf(text, sizeof text, tiny_tree, "30");
    char *feature = strstr(text, "\"avg_speed\"]");
    memcpy(feature, "\"shoe_size\"", 11);
    char *split = strstr(text, "\"feature\": \"avg_speed\"");
    memcpy(split, "\"feature\": \"shoe_size\"", 22);
    expect_refused(db, test_write_file(path, sizeof path, dir, "foreign.json", text),
                   "uses feature 'shoe_size'");
    snprintf(text, sizeof text, tiny_tree, "30");
    memcpy(strstr(text, "[0, 1, 2]"), "[0, 1, 5]", 9);
    expect_refused(db, test_write_file(path, sizeof path, dir, "classes.json", text),
                   "not a sharing score");
    lucid_state_close(db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(update_engine_trains_on_finished_jobs_at_its_times),
        cmocka_unit_test(history_keeps_the_newest_finished_jobs),
        cmocka_unit_test(batch_estimates_and_the_kept_index_match_fresh_ones),
        cmocka_unit_test(sharing_tree_from_a_file),
        cmocka_unit_test(bad_sharing_files_are_refused_with_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    puts("test_lucidd_models: built without SQLite, skipped");
    return 0;
}
#endif
