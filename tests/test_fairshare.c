/* test_fairshare.c — the site's priority in the simulator (docs/fairshare.md):
 * the core's order value and usage ledger with values worked out by hand,
 * a schedule where fair share changes who starts first (and one where it
 * must change nothing), finish-time fairness on a hand-computed schedule,
 * and the configuration keys' checks. */
#include <math.h>
#include <stdio.h>

#include "lucid/bounds.h"
#include "lucid/experiment.h"
#include "lucid/fairshare.h"
#include "exptest.h"
#include "simtest.h"

static void assert_near(double got, double want, double tolerance)
{
    if (!(fabs(got - want) <= tolerance))
        fail_msg("got %.17g, want %.17g", got, want);
}

/* priority x 10^(W (1/2 - F)) x 2^(-W_age min(wait, 7 d) / 7 d) */
static void order_value_by_hand(void **state)
{
    (void)state;
    /* Weights 0: the priority itself, bit for bit, whatever F and wait. */
    assert_true(lucid_order_value(1234.5, 0, 0.2, 0, 99999) == 1234.5);
    /* At its share (F = 1/2) the factor is 1; unknown F (< 0) leaves it out. */
    assert_true(lucid_order_value(100, 2, 0.5, 0, 0) == 100);
    assert_true(lucid_order_value(100, 2, -1, 0, 0) == 100);
    /* Used nothing (F = 1): 10^-1; far above (F = 0): 10^+1. */
    assert_near(lucid_order_value(100, 2, 1, 0, 0), 10, 1e-12);
    assert_near(lucid_order_value(100, 2, 0, 0, 0), 1000, 1e-9);
    assert_near(lucid_order_value(100, 1, 0.25, 0, 0), 100 * pow(10, 0.25), 1e-9);
    /* Age: a week halves it at weight 1, longer waits count as a week. */
    double week = 7 * 86400.0;
    assert_near(lucid_order_value(100, 0, 0.5, 1, week), 50, 1e-12);
    assert_near(lucid_order_value(100, 0, 0.5, 1, 2 * week), 50, 1e-12);
    assert_near(lucid_order_value(100, 0, 0.5, 2, week / 2), 50, 1e-12);
    /* Both: 100 x 10^-1 x 2^-1 */
    assert_near(lucid_order_value(100, 2, 1, 1, week), 5, 1e-12);
    /* The QOS term: x 10^(-W_qos x Q), Q clamped to 1, off at 0. */
    assert_near(lucid_order_qos(100, 2, 1), 1, 1e-12);
    assert_near(lucid_order_qos(100, 2, 0.5), 10, 1e-12);
    assert_near(lucid_order_qos(100, 1, 3), 10, 1e-12);
    assert_true(lucid_order_qos(100, 0, 1) == 100);
    assert_true(lucid_order_qos(100, 2, 0) == 100);
}

static void ledger_decays_by_half_lives(void **state)
{
    (void)state;
    lucid_fairshare f;
    lucid_error err = {{0}};
    assert_int_equal(lucid_fairshare_init(&f, 3, 2, 100, &err), 0);
    lucid_fairshare_charge(&f, 0, 1000, 0);
    assert_true(lucid_fairshare_usage(&f, 0, 0) == 1000);
    /* one half-life: half, two: a quarter (exact in binary) */
    assert_true(lucid_fairshare_usage(&f, 0, 100) == 500);
    assert_true(lucid_fairshare_usage(&f, 0, 200) == 250);
    assert_true(lucid_fairshare_usage(&f, -1, 200) == 250); /* the total */
    /* Running 2 GPUs from t = 200 on: after one half-life the old 250 is
     * 125, and the run added 2 x (100 / ln 2) x (1 - 1/2) = 100 / ln 2. */
    lucid_fairshare_run(&f, 1, 2, 200);
    assert_near(lucid_fairshare_usage(&f, 1, 300), 100 / log(2.0), 1e-9);
    assert_near(lucid_fairshare_usage(&f, 0, 300), 125, 1e-12);
    assert_near(lucid_fairshare_usage(&f, -1, 300), 125 + 100 / log(2.0), 1e-9);
    /* Stopped at 300: it decays from there like any usage. */
    lucid_fairshare_run(&f, 1, -2, 300);
    assert_near(lucid_fairshare_usage(&f, 1, 400), 50 / log(2.0), 1e-9);
    /* A long run approaches g x h / ln 2 (the steady state). */
    lucid_fairshare_run(&f, 2, 1, 400);
    assert_near(lucid_fairshare_usage(&f, 2, 400 + 100 * 60), 100 / log(2.0), 1e-6);
    /* Users outside the ledger are ignored, not written. */
    lucid_fairshare_charge(&f, 7, 5, 500);
    lucid_fairshare_run(&f, -3, 5, 500);
    assert_true(lucid_fairshare_usage(&f, 7, 500) == 0);
    lucid_fairshare_free(&f);
    assert_int_equal(lucid_fairshare_init(&f, 1, 1, 0, &err), -1);
    assert_non_null(strstr(err.msg, "half-life"));
}

/* F = 2^(-(U / U_total) / S), S = 1 / shares */
static void factor_of_two_users(void **state)
{
    (void)state;
    lucid_fairshare f;
    lucid_error err = {{0}};
    assert_int_equal(lucid_fairshare_init(&f, 2, 2, 604800, &err), 0);
    /* Nobody used anything: everyone at 1. */
    assert_true(lucid_fairshare_factor(&f, 0, 0) == 1);
    lucid_fairshare_charge(&f, 0, 300, 10);
    lucid_fairshare_charge(&f, 1, 100, 10);
    /* A: U = 3/4, F = 2^(-1.5); B: U = 1/4, F = 2^(-0.5) */
    assert_near(lucid_fairshare_factor(&f, 0, 10), pow(2, -1.5), 1e-12);
    assert_near(lucid_fairshare_factor(&f, 1, 10), pow(2, -0.5), 1e-12);
    /* Decay keeps the ratios. */
    assert_near(lucid_fairshare_factor(&f, 0, 10 + 604800), pow(2, -1.5), 1e-12);
    /* Equal usage: each exactly at its share, F = 1/2. */
    lucid_fairshare_charge(&f, 1, 200, 10);
    assert_near(lucid_fairshare_factor(&f, 0, 10), 0.5, 1e-12);
    assert_near(lucid_fairshare_factor(&f, 1, 10), 0.5, 1e-12);
    lucid_fairshare_free(&f);
}

/* One node (8 GPUs).  User A's job 1 holds it from 0 to 1000; A's job 2
 * (t = 10) and B's job 3 (t = 20) wait for it, 100 s each.  At 1000 all
 * the usage is A's: with two users F_A = 2^(-1 x 2) = 1/4, F_B = 1.
 * FIFO under weight 2: job 2's value 10^(2 x 1/4) = 3.16, job 3's
 * 10^(2 x -1/2) = 0.1: B starts first.  Weight 0: the reference order. */
static const char *two_users = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,alice,a,8,0,1000\n"
                               "2,alice,a,8,10,100\n"
                               "3,bob,a,8,20,100\n";

static void run_two_users(const char *policy, double weight, int64_t start2, int64_t start3)
{
    static const double estimates[] = {1000, 100, 100};
    simtest t;
    simtest_load(&t, 1, two_users);
    simtest_estimates(&t, estimates);
    t.cfg.fairshare_weight = weight;
    simtest_run_ok(&t, policy);
    EXPECT_JOB(&t, 1, 0, 1000, 0);
    EXPECT_JOB(&t, 2, start2, start2 + 100, (double)(start2 - 10));
    EXPECT_JOB(&t, 3, start3, start3 + 100, (double)(start3 - 20));
    simtest_free(&t);
}

static void fair_share_changes_who_starts(void **state)
{
    (void)state;
    run_two_users("fifo", 0, 1000, 1100);
    run_two_users("fifo", 2, 1100, 1000);
    /* SJF: equal durations; QSSF: equal estimates x GPUs (800 each). */
    run_two_users("sjf", 0, 1000, 1100);
    run_two_users("sjf", 2, 1100, 1000);
    run_two_users("qssf", 0, 1000, 1100);
    run_two_users("qssf", 2, 1100, 1000);
}

/* A policy without a fair_priority (SRTF) runs as without fair share. */
static void srtf_ignores_fair_share(void **state)
{
    (void)state;
    simtest a, b;
    simtest_load(&a, 1, two_users);
    simtest_load(&b, 1, two_users);
    b.cfg.fairshare_weight = 2;
    simtest_run_ok(&a, "srtf");
    simtest_run_ok(&b, "srtf");
    assert_memory_equal(a.result.run, b.result.run, a.trace.njobs * sizeof *a.result.run);
    simtest_free(&a);
    simtest_free(&b);
}

/* The order moves between events as usage is charged and decays
 * (half-life 1000 s here).  One node: alice's job 1 held all 8 GPUs over
 * [0, 1000); bob's job 2 (6 GPUs) runs from 1000 to 6000, leaving 2 free;
 * bob's job 3 (4 GPUs, t = 1100) cannot start before 6000, alice's job 4
 * (1 GPU, t = 1200) could start at once but for FIFO's head of line.
 * With x = (t - 1000) / 1000: U_alice = 8 (h / ln 2)(1 - 1/2) 2^-x =
 * 5770.8 x 2^-x, U_bob = 6 (h / ln 2)(1 - 2^-x) = 8656.2 (1 - 2^-x); they
 * cross where 2^-x = 0.6, t = 1737.  Before, alice used more: job 3 (bob)
 * heads the queue and blocks job 4.  The recalculation at 1800 (every
 * 300 s while jobs wait behind running ones) finds bob above alice and
 * job 4 starts there.  Weight 0: job 4 waits for job 3, until 6000. */
static void order_moves_with_usage_between_events(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,alice,a,8,0,1000\n"
                               "2,bob,a,6,1000,5000\n"
                               "3,bob,a,4,1100,10\n"
                               "4,alice,a,1,1200,10\n";
    for (int on = 0; on <= 1; on++) {
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.fairshare_weight = on ? 2 : 0;
        t.cfg.fairshare_half_life = 1000;
        simtest_run_ok(&t, "fifo");
        EXPECT_JOB(&t, 2, 1000, 6000, 0);
        EXPECT_JOB(&t, 3, 6000, 6010, 4900);
        if (on)
            EXPECT_JOB(&t, 4, 1800, 1810, 600);
        else
            EXPECT_JOB(&t, 4, 6000, 6010, 4800);
        simtest_free(&t);
    }
    /* The slurm policy (PriorityWeightFairshare 1000 x F, the same ledger)
     * moves at Slurm's recalculations: every 300 s as above (1800), every
     * 700 s the first after the crossing is 2100 (1400 comes before it);
     * weight 0 is FIFO's 6000. */
    static const struct {
        double weight;
        int64_t period, start4;
    } slurm[] = {{1000, 300, 1800}, {1000, 700, 2100}, {0, 300, 6000}};
    for (size_t c = 0; c < sizeof slurm / sizeof slurm[0]; c++) {
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.slurm.weight_fairshare = slurm[c].weight;
        t.cfg.slurm.calc_period = slurm[c].period;
        t.cfg.fairshare_half_life = 1000;
        simtest_run_ok(&t, "slurm");
        EXPECT_JOB(&t, 3, 6000, 6010, 4900);
        int64_t s4 = slurm[c].start4;
        EXPECT_JOB(&t, 4, s4, s4 + 10, (double)(s4 - 1200));
        simtest_free(&t);
    }
}

/* Finish-time fairness by hand, one node of 8 GPUs, FIFO:
 *   job 1 A 4 GPUs t=0   d=100: runs 0..100, N = 1 (A): private 100, rho 1
 *   job 2 B 8 GPUs t=10  d=50:  waits for 8 free, runs 100..150, JCT 140;
 *                               N = 2 (A, B): slice 4 GPUs, private 50 x 8/4
 *                               = 100, rho 1.4
 *   job 3 A 2 GPUs t=20  d=10:  behind job 2 (head of line), 150..160,
 *                               JCT 140; N = 2, 2 <= 4: private 10, rho 14
 *   job 4 C 1 GPU  t=200 d=10:  200..210, alone: rho 1
 *   job 5 B 1 GPU  t=210 d=5:   210..215; job 4 ended at 210, not in the
 *                               system: N = 1, rho 1
 * max 14, share above 1: 2 of 5. */
static void finish_time_fairness_by_hand(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,A,a,4,0,100\n"
                               "2,B,a,8,10,50\n"
                               "3,A,a,2,20,10\n"
                               "4,C,a,1,200,10\n"
                               "5,B,a,1,210,5\n";
    simtest t;
    simtest_load(&t, 1, trace);
    simtest_run_ok(&t, "fifo");
    EXPECT_JOB(&t, 2, 100, 150, 90);
    EXPECT_JOB(&t, 3, 150, 160, 130);
    double rho[5];
    assert_int_equal(lucid_finish_time_fairness(&t.trace, &t.result, rho), 0);
    const double want[] = {1, 1.4, 14, 1, 1};
    for (int k = 0; k < 5; k++)
        assert_near(rho[lucid_trace_find(&t.trace, k + 1)], want[k], 1e-12);
    lucid_metrics m;
    assert_int_equal(lucid_metrics_compute(&t.trace, &t.result, -1, &m), 0);
    assert_near(m.ftf_max, 14, 1e-12);
    assert_near(m.ftf_over1, 0.4, 1e-12);
    /* summary.csv's figures, made in one pass, agree */
    lucid_policy_summary ps;
    assert_int_equal(lucid_policy_summary_make(&ps, &t.trace, &t.vcs, &t.result), 0);
    assert_near(ps.metrics[ps.nvcs].ftf_max, 14, 1e-12);
    assert_near(ps.metrics[ps.nvcs].ftf_over1, 0.4, 1e-12);
    assert_near(ps.metrics[0].ftf_max, 14, 1e-12);
    /* size class of 1..8 GPUs: all five */
    assert_near(ps.class_metrics[1].ftf_over1, 0.4, 1e-12);
    assert_true(isnan(ps.class_metrics[0].ftf_max)); /* no job above 8 GPUs */
    lucid_policy_summary_free(&ps);
    simtest_free(&t);
}

static void config_keys_checked(void **state)
{
    (void)state;
    exptest_refused("[simulate]\nfairshare_weight = -1\n",
                   "exp.ini:2: [simulate] fairshare_weight: -1 out of range 0..10");
    exptest_refused("[simulate]\n\nfairshare_weight = 10.5\n", "exp.ini:3: [simulate] fairshare_weight");
    exptest_refused("[simulate]\nfairshare_weight = lots\n", "'lots' is not a number");
    exptest_refused("[simulate]\nfairshare_weight = nan\n", "'nan' is not a number");
    exptest_refused("[simulate]\nfairshare_half_life = 0\n",
                   "exp.ini:2: [simulate] fairshare_half_life: 0 out of range 1..");
    exptest_refused("[simulate]\nfairshare_half_life = 1.5\n", "'1.5' is not an integer");
    lucid_experiment exp;
    lucid_error err = {{0}};
    assert_int_equal(exptest_load(&exp, "[simulate]\nfairshare_weight = 2.5\nfairshare_half_life = 3600\n",
                          &err),
                     0);
    assert_string_equal(exp.fairshare_weight, "2.5");
    assert_string_equal(exp.fairshare_half_life, "3600");
    lucid_experiment_free(&exp);
    /* Unset keys are not written back (outputs keep their bytes). */
    assert_int_equal(exptest_load(&exp, "[simulate]\nseed = 3\n", &err), 0);
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(lucid_experiment_write(out, &exp), 0);
    fclose(out);
    assert_null(strstr(text, "fairshare"));
    free(text);
    lucid_experiment_free(&exp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(order_value_by_hand),
        cmocka_unit_test(ledger_decays_by_half_lives),
        cmocka_unit_test(factor_of_two_users),
        cmocka_unit_test(fair_share_changes_who_starts),
        cmocka_unit_test(srtf_ignores_fair_share),
        cmocka_unit_test(order_moves_with_usage_between_events),
        cmocka_unit_test(finish_time_fairness_by_hand),
        cmocka_unit_test(config_keys_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
