/* test_backfill.c — backfill with reservations and start-time estimates on
 * hand-built schedules (one node of 8 GPUs, consolidated placement); every
 * expected value is worked out in the comments from backfill.h / eta.h. */
#include <math.h>

#include "lucid/eta.h"
#include "simtest.h"

static void use_backfill(simtest *t, const double *est, int mode, double margin)
{
    simtest_estimates(t, est);
    t->in.plan_estimates = t->est;
    t->cfg.backfill[0] = (lucid_sim_backfill){
        .policy = &lucid_policy_fifo,
        .cfg = {.mode = mode, .estimate = LUCID_BACKFILL_EST_MODEL, .margin = margin}};
    t->cfg.nbackfill = mode == LUCID_BACKFILL_NONE ? 0 : 1;
}

/* 1: 6 GPUs 0-10; 2: the whole node, blocked behind 1; 3: 2 GPUs for 4 s;
 * 4: 2 GPUs for 20 s.  Estimates are exact. */
static const char *easy_trace = "job_id,vc,gpu_num,submit_time,duration\n"
                                "1,a,6,0,10\n"
                                "2,a,8,1,5\n"
                                "3,a,2,2,4\n"
                                "4,a,2,3,20\n";
static const double easy_est[] = {10, 5, 4, 20};

static void fifo_without_backfill_blocks(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, easy_trace);
    use_backfill(&t, easy_est, LUCID_BACKFILL_NONE, 1.2);
    simtest_run_ok(&t, "fifo");
    /* 2 blocks the queue: 2 runs 10-15, then 3 and 4 together from 15. */
    EXPECT_JOB(&t, 2, 10, 15, 9);
    EXPECT_JOB(&t, 3, 15, 19, 13);
    EXPECT_JOB(&t, 4, 15, 35, 12);
    simtest_free(&t);
}

static void easy_backfills_only_what_does_not_delay_the_head(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, easy_trace);
    use_backfill(&t, easy_est, LUCID_BACKFILL_EASY, 1.2);
    simtest_run_ok(&t, "fifo");
    /* At 1, 2 is reserved the node from 10 (1's estimated end).  At 2, 3
     * (4 s x 1.2 margin = 5 s: ends by 7 <= 10) starts on the 2 free GPUs.
     * 4 (24 s planned) would still hold its GPUs at 10: never backfilled,
     * neither at 3 nor when 3 ends at 6.  2 starts at 10 as reserved; 4
     * then holds the next reservation and starts at 15. */
    EXPECT_JOB(&t, 1, 0, 10, 0);
    EXPECT_JOB(&t, 3, 2, 6, 0);
    EXPECT_JOB(&t, 2, 10, 15, 9);
    EXPECT_JOB(&t, 4, 15, 35, 12);
    assert_int_equal(t.result.backfill_stats.backfilled, 1);
    assert_int_equal(t.result.backfill_stats.reservations, 2); /* 2, then 4 */
    assert_int_equal(t.result.backfill_stats.moved_later, 0);
    simtest_free(&t);
}

static void conservative_same_on_a_single_blocker(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, easy_trace);
    use_backfill(&t, easy_est, LUCID_BACKFILL_CONSERVATIVE, 1.2);
    simtest_run_ok(&t, "fifo");
    /* 4 also holds a reservation (from 15) at once; starts do not change. */
    EXPECT_JOB(&t, 3, 2, 6, 0);
    EXPECT_JOB(&t, 2, 10, 15, 9);
    EXPECT_JOB(&t, 4, 15, 35, 12);
    simtest_free(&t);
}

static void reservation_moves_when_the_estimate_is_wrong(void **state)
{
    (void)state;
    simtest t;
    /* 1 is estimated at 10 s but runs 20 s. */
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,6,0,20\n"
                 "2,a,8,1,5\n"
                 "3,a,2,2,4\n"
                 "4,a,2,11,30\n");
    const double est[] = {10, 5, 4, 30};
    use_backfill(&t, est, LUCID_BACKFILL_EASY, 1.2);
    simtest_run_ok(&t, "fifo");
    /* 2 is reserved at 10; 3 backfills 2-6 as before.  At 11 (4 arrives)
     * 1 has outrun its estimate: it is now expected to run max(60, 11 / 2)
     * s more, to 71, and 2's reservation moves from 10 to 71 (counted).
     * 4 (36 s planned: ends by 47 <= 71) backfills at 11 and runs to 41.
     * 1 really ends at 20: 2's reservation is now 41 (4's estimated end),
     * where 2 starts. */
    EXPECT_JOB(&t, 3, 2, 6, 0);
    EXPECT_JOB(&t, 4, 11, 41, 0);
    EXPECT_JOB(&t, 2, 41, 46, 40);
    assert_int_equal(t.result.backfill_stats.moved_later, 1);
    assert_int_equal(t.result.backfill_stats.moved_earlier, 0);
    assert_int_equal(t.result.backfill_stats.backfilled, 2);
    simtest_free(&t);
}

static void predictions_at_submission(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,8,0,100\n"
                 "2,a,8,10,50\n"
                 "3,a,8,20,50\n");
    const double est[] = {100, 50, 50};
    use_backfill(&t, est, LUCID_BACKFILL_NONE, 1.2);
    t.cfg.eta = 1;
    simtest_run_ok(&t, "fifo");
    /* Fewer than 20 jobs ended: the prior ratios 0.25 / 1 / 4.  At 10, job 1
     * (elapsed 10 of 100) ends at 25 / 100 / 400, so 2 starts then.  At 20
     * nothing started or ended: 3 follows 2 (50 x ratio): 25 + 13 = 38,
     * 100 + 50 = 150, 400 + 200 = 600.  Job 1 started at once. */
    const lucid_sim_result *r = &t.result;
    assert_int_equal(r->eta_p10[0], 0);
    assert_int_equal(r->eta_p90[0], 0);
    assert_int_equal(r->eta_p10[1], 25);
    assert_int_equal(r->eta_p50[1], 100);
    assert_int_equal(r->eta_p90[1], 400);
    assert_int_equal(r->eta_p10[2], 38);
    assert_int_equal(r->eta_p50[2], 150);
    assert_int_equal(r->eta_p90[2], 600);
    /* Both waiting jobs started inside their interval, exactly at P50. */
    double coverage, error;
    int64_t n;
    lucid_eta_calibration(&t.trace, r, -1, &coverage, &error, &n);
    assert_int_equal(n, 2);
    assert_true(coverage == 1.0);
    assert_true(error == 0.0);
    simtest_free(&t);
}

static void ratio_table_conditions_on_elapsed(void **state)
{
    (void)state;
    lucid_eta_table t = {0};
    /* Ratios 0.1, 0.2, ..., 4.0 (40 of them). */
    for (int i = 1; i <= 40; i++)
        assert_int_equal(lucid_eta_table_add(&t, i / 10.0), 0);
    /* Unconditioned median of 0.1..4.0: 2.05. */
    assert_true(fabs(lucid_eta_table_quantile(&t, 0, 0.5) - 2.05) < 1e-9);
    /* A job that ran 3 x its estimate: only 3.0..4.0 count; median 3.5. */
    assert_true(fabs(lucid_eta_table_quantile(&t, 3.0, 0.5) - 3.5) < 1e-9);
    /* Beyond every ratio seen: at_least x 1.5 for the median. */
    assert_true(fabs(lucid_eta_table_quantile(&t, 10.0, 0.5) - 15.0) < 1e-9);
    lucid_eta_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_without_backfill_blocks),
        cmocka_unit_test(easy_backfills_only_what_does_not_delay_the_head),
        cmocka_unit_test(conservative_same_on_a_single_blocker),
        cmocka_unit_test(reservation_moves_when_the_estimate_is_wrong),
        cmocka_unit_test(predictions_at_submission),
        cmocka_unit_test(ratio_table_conditions_on_elapsed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
