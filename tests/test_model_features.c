/* test_model_features.c — the feature engineering of the three models, on
 * small files whose features are computed by hand. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/features.h"
#include "lucid/util.h"

static double col(const lucid_dataset *ds, const char *name, size_t row)
{
    int c = lucid_dataset_find(ds, name);
    if (c < 0)
        fail_msg("no column %s", name);
    return ds->cols[c].values[row];
}

/* The label of a categorical column's row (a period of the year). */
static const char *label(const lucid_dataset *ds, const char *name, size_t row)
{
    int c = lucid_dataset_find(ds, name);
    if (c < 0)
        fail_msg("no column %s", name);
    char buf[64];
    const char *l = lucid_column_label(&ds->cols[c], row, buf, sizeof buf);
    return l && ds->cols[c].ids ? l : "(not a category)";
}

/* 160 bins from 2020-04-01 00:00; job count t^2 and GPU count 3t at bin t. */
static const char *write_series(char *path, size_t size, int gap_at)
{
    char dir[4096];
    test_tmpdir(dir, sizeof dir, "model_features");
    size_t cap = 160 * 64 + 128;
    char *text = malloc(cap), *p = text;
    p += sprintf(p, "time,submit_gpu_job,submit_gpu_num\n");
    int64_t t0;
    lucid_time_parse("2020-04-01 00:00:00", &t0);
    for (int t = 0; t < 160; t++) {
        char when[32];
        lucid_time_format(t0 + 600 * (t + (t >= gap_at)), when, sizeof when);
        p += sprintf(p, "%s,%d,%d\n", when, t * t, 3 * t);
    }
    test_write_file(path, size, dir, gap_at < 160 ? "gap.csv" : "series.csv", text);
    free(text);
    return path;
}

static void throughput_features_by_hand(void **state)
{
    (void)state;
    char path[4200];
    lucid_error err = {{0}};
    int64_t *times = NULL;
    lucid_dataset *ds =
        lucid_features_throughput(write_series(path, sizeof path, 1000), "submit_gpu_job", &times, &err);
    assert_non_null(ds);
    assert_int_equal(ds->nrows, 160);
    assert_int_equal(ds->ncols, 25);
    assert_string_equal(ds->target_name, "submit_gpu_job");
    assert_true(ds->target[12] == 144);
    /* 2020-04-01 was a Wednesday, day 92 of the year, in ISO week 14.  The
     * periods of the year are categories labelled in calendar order, so a
     * period after the training rows is an unseen category. */
    assert_true(col(ds, "day", 0) == 1 && col(ds, "hour", 0) == 0 && col(ds, "dayofweek", 0) == 2);
    assert_string_equal(label(ds, "month", 0), "04");
    assert_string_equal(label(ds, "dayofyear", 0), "092");
    assert_string_equal(label(ds, "week", 0), "14");
    assert_string_equal(label(ds, "dayofyear", 159), "093");
    /* Bin 151 is 25 h 10 min later: Thursday 2020-04-02 01:10. */
    assert_true(col(ds, "day", 151) == 2 && col(ds, "hour", 151) == 1 &&
                col(ds, "minute", 151) == 10 && col(ds, "dayofweek", 151) == 3);
    /* Lags of t^2 at t = 150: 144^2, 132^2, 6^2. */
    assert_true(col(ds, "job_lag_1h", 150) == 144.0 * 144);
    assert_true(col(ds, "job_lag_3h", 150) == 132.0 * 132);
    assert_true(col(ds, "job_lag_1d", 150) == 36);
    /* Soft lag: 0.5 (t-6)^2 + 0.25 (t-7)^2 + 0.25 (t-5)^2 = (t-6)^2 + 0.5. */
    assert_true(col(ds, "job_soft_1h", 150) == 144.0 * 144 + 0.5);
    assert_true(col(ds, "gpu_soft_1d", 150) == 3 * 6);
    /* The 6 bins ending 1 h before t = 20: 9^2 .. 14^2 = 81 100 121 144 169 196. */
    assert_true(fabs(col(ds, "job_mean_1h", 20) - 811.0 / 6) < 1e-12);
    assert_true(col(ds, "job_median_1h", 20) == 132.5);
    assert_true(fabs(col(ds, "job_std_1h", 20) - 43.11573571988151) < 1e-9);
    assert_true(col(ds, "gpu_mean_1h", 20) == 3 * 11.5);
    /* Before the history exists the features are missing. */
    assert_true(isnan(col(ds, "job_lag_1h", 5)) && !isnan(col(ds, "job_lag_1h", 6)));
    assert_true(isnan(col(ds, "job_soft_1h", 6)) && !isnan(col(ds, "job_soft_1h", 7)));
    assert_true(isnan(col(ds, "job_mean_1h", 10)) && !isnan(col(ds, "job_mean_1h", 11)));
    assert_true(isnan(col(ds, "job_lag_1d", 143)));
    assert_string_equal(ds->row_keys[1], "2020-04-01 00:10:00");
    assert_true(times[1] - times[0] == 600);
    /* A time split keeps order. */
    lucid_dataset *train, *test;
    int64_t until = times[100];
    assert_int_equal(lucid_split_by_time(ds, times, until, &train, &test, &err), 0);
    assert_int_equal(train->nrows, 100);
    assert_int_equal(test->nrows, 60);
    assert_true(test->target[0] == 10000);
    lucid_dataset_free(train);
    lucid_dataset_free(test);
    free(times);
    lucid_dataset_free(ds);
}

static void throughput_input_errors_are_located(void **state)
{
    (void)state;
    char path[4200], dir[4096], msg[8400];
    lucid_error err = {{0}};
    int64_t *times = NULL;
    assert_null(lucid_features_throughput(write_series(path, sizeof path, 3), "submit_gpu_job",
                                          &times, &err));
    snprintf(msg, sizeof msg, "%s:5: time: expected the bin 10 minutes after the previous row", path);
    assert_string_equal(err.msg, msg);
    test_tmpdir(dir, sizeof dir, "model_features_bad");
    test_write_file(path, sizeof path, dir, "bad.csv",
                    "time,submit_gpu_job,submit_gpu_num\n2020-04-01 00:00:00,1,2\n"
                    "2020-04-01 00:10:00,x,2\n");
    assert_null(lucid_features_throughput(path, "submit_gpu_job", &times, &err));
    assert_non_null(strstr(err.msg, "bad.csv:3: submit_gpu_job:"));
    test_write_file(path, sizeof path, dir, "nocol.csv", "time,submit_gpu_job\n");
    assert_null(lucid_features_throughput(path, "submit_gpu_job", &times, &err));
    assert_non_null(strstr(err.msg, "nocol.csv:1: submit_gpu_num: missing column"));
    assert_null(lucid_features_throughput(path, "jobs", &times, &err));
    assert_non_null(strstr(err.msg, "unknown throughput target 'jobs'"));
}

static void duration_features_from_a_small_trace(void **state)
{
    (void)state;
    char dir[4096], path[4200];
    lucid_error err = {{0}};
    test_tmpdir(dir, sizeof dir, "model_features_trace");
    test_write_file(path, sizeof path, dir, "trace.csv",
                    "job_id,user,vc,gpu_num,cpu_num,duration,amp,gpu_util,gmem_util,gmem,"
                    "submit_datetime\n"
                    "7,alice,vcA,1,4,100,0,50.5,10,2048,2020-09-01 00:02:34\n"
                    "8,bob,vcB,8,32,7200,1,,20,4096,2020-09-06 23:59:59\n");
    int64_t *times = NULL;
    lucid_dataset *ds = lucid_features_duration(path, &times, &err);
    assert_non_null(ds);
    assert_int_equal(ds->ncols, 15);
    /* Two users, one job each: no history, nothing ended the day before. */
    assert_true(isnan(col(ds, "user_log_last", 0)) && isnan(col(ds, "user_log_median", 1)));
    assert_true(col(ds, "user_ended_24h", 0) == 0 && col(ds, "user_ended_24h", 1) == 0);
    assert_int_equal(lucid_column_type(&ds->cols[lucid_dataset_find(ds, "user")], 2),
                     LUCID_CATEGORICAL);
    assert_int_equal(lucid_column_type(&ds->cols[lucid_dataset_find(ds, "amp")], 2),
                     LUCID_CATEGORICAL);
    /* 2020-09-01 was a Tuesday (1); 2020-09-06 a Sunday (6). */
    assert_true(col(ds, "dayofweek", 0) == 1 && col(ds, "dayofweek", 1) == 6);
    assert_true(col(ds, "hour", 1) == 23 && col(ds, "month", 1) == 9 && col(ds, "day", 1) == 6);
    assert_true(isnan(col(ds, "gpu_util", 1)));
    assert_true(ds->target[1] == 7200);
    assert_string_equal(ds->row_keys[1], "8");
    /* The same jobs from memory (lucidd's path) give the same columns. */
    const lucid_duration_job jobs[2] = {
        {"7", "alice", "vcA", 1, 4, times[0], 0, 50.5, 10, 2048, 100, times[0] + 100, 0},
        {"8", "bob", "vcB", 8, 32, times[1], 1, NAN, 20, 4096, 7200, times[1] + 7200, 0},
    };
    lucid_dataset *mem = lucid_features_duration_jobs(jobs, 2, 1, &err);
    assert_non_null(mem);
    assert_int_equal(mem->ncols, ds->ncols);
    for (size_t c = 0; c < ds->ncols; c++) {
        assert_string_equal(mem->cols[c].name, ds->cols[c].name);
        for (size_t r = 0; r < 2; r++) {
            char a[64], b[64];
            const char *la = lucid_column_label(&mem->cols[c], r, a, sizeof a);
            const char *lb = lucid_column_label(&ds->cols[c], r, b, sizeof b);
            assert_true((la == NULL) == (lb == NULL));
            if (la)
                assert_string_equal(la, lb);
        }
    }
    for (size_t r = 0; r < 2; r++) {
        assert_string_equal(mem->row_keys[r], ds->row_keys[r]);
        assert_true(mem->target[r] == ds->target[r]);
    }
    lucid_dataset_free(mem);
    free(times);
    lucid_dataset_free(ds);
    /* A trace's own end times, when it has them: job 1 queued and ended at
     * 5,000 s, after job 2's submission (1,800 s), so job 2 has no history;
     * without end_time job 1 is taken to end at submit + duration = 100 s. */
    static const char *const head = "job_id,user,vc,gpu_num,cpu_num,duration,amp,gpu_util,"
                                    "gmem_util,gmem,submit_datetime,submit_time%s\n";
    static const char *const rows[2] = {"1,u,v,1,1,100,0,1,1,1,2020-09-01 00:00:00,0%s\n",
                                        "2,u,v,1,1,50,0,1,1,1,2020-09-01 00:30:00,1800%s\n"};
    char text[512];
    for (int with_end = 0; with_end < 2; with_end++) {
        snprintf(text, sizeof text, head, with_end ? ",end_time" : "");
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, rows[0], with_end ? ",5000" : "");
        used = strlen(text);
        snprintf(text + used, sizeof text - used, rows[1], with_end ? ",1850" : "");
        test_write_file(path, sizeof path, dir, "ends.csv", text);
        lucid_dataset *e = lucid_features_duration(path, &times, &err);
        assert_non_null(e);
        if (with_end)
            assert_true(isnan(col(e, "user_log_last", 1)) && col(e, "user_ended_24h", 1) == 0);
        else
            assert_true(col(e, "user_log_last", 1) == log1p(100));
        free(times);
        lucid_dataset_free(e);
    }
    /* Only gpu_num is required (issue 25: the GA2M learns on the columns a
     * trace has); a missing column is a missing value in every row. */
    test_write_file(path, sizeof path, dir, "nogpu.csv", "job_id,user\n1,a\n");
    assert_null(lucid_features_duration(path, &times, &err));
    assert_non_null(strstr(err.msg, "nogpu.csv:1: gpu_num: missing column"));
    test_write_file(path, sizeof path, dir, "itp.csv",
                    "job_id,gpu_num,submit_datetime,duration\n1,8,2021-03-04 00:00:00,100\n"
                    "2,1,2021-03-05 12:00:00,50\n");
    lucid_dataset *bare = lucid_features_duration(path, &times, &err);
    assert_non_null(bare);
    assert_true(col(bare, "gpu_num", 0) == 8 && col(bare, "gpu_num", 1) == 1);
    assert_true(isnan(col(bare, "amp", 0)) && isnan(col(bare, "gpu_util", 1)));
    free(times);
    lucid_dataset_free(bare);
}

static lucid_duration_job hjob(const char *key, const char *user, int64_t submit, double d)
{
    return (lucid_duration_job){.key = key, .user = user, .vc = "v", .gpu_num = 1, .cpu_num = 1,
                                .submit_time = submit, .amp = NAN, .gpu_util = NAN,
                                .gmem_util = NAN, .gmem = NAN, .duration = d,
                                .end_time = submit + (int64_t)d};
}

/* The users' recent jobs, computed by hand: only jobs of the same user that
 * ended strictly before the job's submission (or its known_at). */
static void duration_history_features_by_hand(void **state)
{
    (void)state;
    enum { NJ = 9, NC = 12 };
    lucid_duration_job jobs[NJ + NC];
    jobs[0] = hjob("1", "a", 1000, 100); /* ends 1100 */
    jobs[1] = hjob("2", "a", 1050, 950); /* ends 2000 */
    jobs[2] = hjob("3", "a", 1200, 100); /* ends 1300 */
    jobs[2].duration = 50;               /* (ended late: it queued 50 s) */
    jobs[3] = hjob("4", "a", 1500, 10);  /* ends 1510 */
    jobs[4] = hjob("5", "a", 2000, 30);  /* ends 2030 */
    jobs[5] = hjob("6", "a", 87501, 5);
    jobs[6] = hjob("7", "b", 1500, 9);
    jobs[7] = hjob("8", NULL, 1500, 9);
    jobs[8] = hjob("9", "a", 2000, 70); /* estimated at 1400, not ended */
    jobs[8].known_at = 1400;
    jobs[8].end_time = 0;
    for (int k = 0; k < NC - 1; k++) /* user c: durations 1..11 ending at 10, 20, .. 110 */
        jobs[NJ + k] = hjob("c", "c", 10 * (k + 1) - (k + 1), k + 1);
    jobs[NJ + NC - 1] = hjob("c12", "c", 1000, 12);
    lucid_error err = {{0}};
    lucid_dataset *ds = lucid_features_duration_jobs(jobs, NJ + NC, 1, &err);
    assert_non_null(ds);
    /* Job 1: nothing ended before 1000. */
    assert_true(isnan(col(ds, "user_log_last", 0)) && col(ds, "user_ended_24h", 0) == 0);
    /* Job 2 (1050): still nothing (job 1 ends at 1100). */
    assert_true(isnan(col(ds, "user_log_median", 1)));
    /* Job 4 (1500): jobs 1 (1100) and 3 (1300); job 2 ends at 2000. */
    assert_true(col(ds, "user_log_last", 3) == log1p(50));
    assert_true(col(ds, "user_log_median", 3) == log1p(75));
    assert_true(col(ds, "user_ended_24h", 3) == 2);
    /* Job 5 (2000): 1, 3, 4; job 2 ends exactly at 2000, not before. */
    assert_true(col(ds, "user_log_last", 4) == log1p(10));
    assert_true(col(ds, "user_log_median", 4) == log1p(50));
    assert_true(col(ds, "user_ended_24h", 4) == 3);
    /* Job 6 (87501): all five; the day before is [1101, 87501): not job 1. */
    assert_true(col(ds, "user_log_last", 5) == log1p(30));
    assert_true(col(ds, "user_log_median", 5) == log1p(50)); /* of 100, 950, 50, 10, 30 */
    assert_true(col(ds, "user_ended_24h", 5) == 4);
    /* Another user's jobs and a job without a user give nothing. */
    assert_true(isnan(col(ds, "user_log_last", 6)) && col(ds, "user_ended_24h", 6) == 0);
    assert_true(isnan(col(ds, "user_log_last", 7)) && isnan(col(ds, "user_ended_24h", 7)));
    /* Job 9 was estimated at 1400: as job 4, although submitted at 2000. */
    assert_true(col(ds, "user_log_last", 8) == log1p(50));
    assert_true(col(ds, "user_ended_24h", 8) == 2);
    /* User c's last job (submitted at 1000): the 11 others ended before;
     * the median looks at the last 10 (durations 2..11): 6.5. */
    assert_true(col(ds, "user_log_last", NJ + NC - 1) == log1p(11));
    assert_true(col(ds, "user_log_median", NJ + NC - 1) == log1p(6.5));
    assert_true(col(ds, "user_ended_24h", NJ + NC - 1) == 11);
    /* The same query against a separate history gives the same values,
     * and a job's own duration never enters (a history of only itself). */
    lucid_duration_job q = jobs[3];
    lucid_dataset *one = lucid_features_duration_history(&q, 1, jobs, NJ, 0, &err);
    assert_non_null(one);
    assert_true(col(one, "user_log_median", 0) == log1p(75) && one->target == NULL);
    lucid_dataset_free(one);
    q = hjob("x", "a", 5000, 0); /* ends at its submission */
    one = lucid_features_duration_history(&q, 1, &q, 1, 0, &err);
    assert_true(isnan(col(one, "user_log_last", 0)) && col(one, "user_ended_24h", 0) == 0);
    lucid_dataset_free(one);
    lucid_dataset_free(ds);
}

/* An index kept up to date row by row (lucid_duration_history_add) gives
 * the same table as one built over the whole history at once: equal ends
 * (the history's order breaks ties), rows without a user or a duration
 * (left out), and queries between the ends. */
static void duration_history_index_kept_row_by_row(void **state)
{
    (void)state;
    enum { NH = 60, NQ = 20 };
    static const char *const users[] = {"a", "b", "c", ""};
    char keys[NH + NQ][8];
    lucid_duration_job hist[NH], query[NQ];
    for (int i = 0; i < NH; i++) {
        snprintf(keys[i], sizeof keys[i], "%d", i);
        /* Submits 100 s apart, durations 50..450 s: many equal ends. */
        hist[i] = hjob(keys[i], users[i % 4], 1000 + 100 * (i / 2), 50.0 + 100 * (i % 5));
        if (i % 11 == 7)
            hist[i].duration = NAN; /* never ended with a measured run */
    }
    /* 45 ends with 41 (user b, 3,150 s); being later in the history it is
     * b's last job for query 13 (submitted at 3,210 s): 140 s, not 150. */
    hist[45] = hjob(keys[45], "b", hist[41].submit_time + 10, hist[41].duration - 10);
    for (int q = 0; q < NQ; q++) {
        snprintf(keys[NH + q], sizeof keys[NH + q], "q%d", q);
        query[q] = hjob(keys[NH + q], users[q % 3], 1000 + 170 * q, 0);
    }
    lucid_error err = {{0}};
    lucid_duration_history *kept = lucid_duration_history_new(hist, NH / 3, &err);
    assert_non_null(kept);
    for (size_t i = NH / 3; i < NH; i++)
        assert_int_equal(lucid_duration_history_add(kept, &hist[i], i, &err), 0);
    lucid_dataset *a = lucid_features_duration_indexed(query, NQ, kept, 0, &err);
    lucid_dataset *b = lucid_features_duration_history(query, NQ, hist, NH, 0, &err);
    assert_non_null(a);
    assert_non_null(b);
    int some = 0;
    static const char *const cols[] = {"user_log_last", "user_log_median", "user_ended_24h"};
    for (int c = 0; c < 3; c++)
        for (size_t q = 0; q < NQ; q++) {
            double x = col(a, cols[c], q), y = col(b, cols[c], q);
            assert_true((isnan(x) && isnan(y)) || x == y);
            some += c == 1 && !isnan(x);
        }
    assert_true(some > 5); /* most queries have a history */
    assert_true(col(a, "user_log_last", 13) == log1p(140));
    lucid_dataset_free(a);
    lucid_dataset_free(b);
    lucid_duration_history_free(kept);
}

static void sharing_features_average_both_sides(void **state)
{
    (void)state;
    char dir[4096], labels[4200], pairs[4200];
    lucid_error err = {{0}};
    test_tmpdir(dir, sizeof dir, "model_features_sharing");
    test_write_file(labels, sizeof labels, dir, "labels.csv",
                    "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\n"
                    "A,x,32,0,1,50,20,1000,1\n"
                    "B,y,64,1,1,90,60,9000,2\n"
                    "C,z,16,0,1,10,5,500,0\n");
    /* A: 0.8 (side 1) and 0.9 (side 2) -> 0.85 -> label 1 (not < 0.85);
     * B: 0.7 and 0.7 -> 2; C never measured -> 0 -> 2. */
    test_write_file(pairs, sizeof pairs, dir, "pairs.csv",
                    ",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,"
                    "batchsize2,amp2,speed2,gpu_util,gmem_util,gmem\n"
                    "0,A,x,1,32,0,0.8,B,y,1,64.0,1,0.7,1,1,1\n"
                    "1,B,y,1,64,1,0.7,A,x,1,32,0,0.9,1,1,1\n");
    lucid_dataset *ds = lucid_features_sharing(labels, pairs, &err);
    assert_non_null(ds);
    assert_true(fabs(col(ds, "avg_speed", 0) - 0.85) < 1e-12);
    assert_true(col(ds, "avg_speed", 1) == 0.7 && col(ds, "avg_speed", 2) == 0);
    assert_true(col(ds, "auto_label", 1) == 2 && col(ds, "auto_label", 2) == 2);
    /* (0.8 + 0.9) / 2 is 0.8500000000000001 in doubles: not < 0.85. */
    assert_true(col(ds, "auto_label", 0) == 1);
    assert_string_equal(ds->row_keys[1], "B/y/64/1");
    lucid_dataset_free(ds);
}

/* Seeded mutations of small valid inputs of all three builders: each is
 * read or refused with a message, never a crash (ASan in CI). */
static void mutated_inputs_never_crash(void **state)
{
    (void)state;
    char dir[4096], path[4200], pairs[4200];
    test_tmpdir(dir, sizeof dir, "model_features_fuzz");
    static const char *const inputs[3] = {
        "time,submit_gpu_job,submit_gpu_num\n2020-04-01 00:00:00,1,2\n2020-04-01 00:10:00,3,4\n"
        "2020-04-01 00:20:00,5,6\n",
        "job_id,user,vc,gpu_num,cpu_num,duration,amp,gpu_util,gmem_util,gmem,submit_datetime\n"
        "7,alice,vcA,1,4,100,0,50.5,10,2048,2020-09-01 00:02:34\n"
        "8,\"b,ob\",vcB,8,32,7200,1,,20,4096,2020-09-06 23:59:59\n",
        "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\nA,x,32,0,1,50,20,1000,1\n"
        "B,y,64,1,1,90,60,9000,2\n"};
    test_write_file(pairs, sizeof pairs, dir, "pairs.csv",
                    ",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,"
                    "batchsize2,amp2,speed2,gpu_util,gmem_util,gmem\n"
                    "0,A,x,1,32,0,0.8,B,y,1,64.0,1,0.7,1,1,1\n");
    static const char junk[] = "0123456789-.e,\"\n\r x:";
    lucid_rng rng;
    lucid_rng_seed(&rng, 99);
    char buf[512];
    int read = 0;
    for (int i = 0; i < 900; i++) {
        int kind = i % 3;
        size_t len = strlen(inputs[kind]);
        memcpy(buf, inputs[kind], len + 1);
        for (int k = 0; k < 2; k++)
            buf[lucid_rng_below(&rng, len)] = junk[lucid_rng_below(&rng, sizeof junk - 1)];
        if (lucid_rng_below(&rng, 4) == 0)
            buf[lucid_rng_below(&rng, len)] = '\0';
        test_write_file(path, sizeof path, dir, "in.csv", buf);
        lucid_error err = {{0}};
        int64_t *times = NULL;
        lucid_dataset *ds = kind == 0   ? lucid_features_throughput(path, "submit_gpu_job", &times, &err)
                            : kind == 1 ? lucid_features_duration(path, &times, &err)
                                        : lucid_features_sharing(path, pairs, &err);
        if (ds)
            read++;
        else
            assert_true(strlen(err.msg) > 0);
        free(times);
        lucid_dataset_free(ds);
    }
    assert_true(read > 0 && read < 900);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(throughput_features_by_hand),
        cmocka_unit_test(throughput_input_errors_are_located),
        cmocka_unit_test(duration_features_from_a_small_trace),
        cmocka_unit_test(duration_history_features_by_hand),
        cmocka_unit_test(duration_history_index_kept_row_by_row),
        cmocka_unit_test(sharing_features_average_both_sides),
        cmocka_unit_test(mutated_inputs_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
