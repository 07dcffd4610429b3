/* test_slurm_policy.c — the simulator's "slurm" policy (issue 26): Slurm's
 * priority/multifactor order started by sched/builtin's head-of-line rule,
 * on schedules worked out by hand.  Its fair share moving the order at
 * recalculations is tested with the other policies' in test_fairshare.c. */
#include "simtest.h"
#include "lucid/fairshare.h"

#include <stdio.h>

#include "exptest.h"

/* With slurm.conf's default weights (all 0) every job has priority 0:
 * submission order, head of line — FIFO, job for job. */
static void default_weights_are_fifo(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,alice,a,6,0,1000\n"
                               "2,bob,a,4,10,100\n"
                               "3,alice,a,1,20,50\n"
                               "4,carol,a,8,30,10\n"
                               "5,bob,a,2,40,500\n";
    simtest a, b;
    simtest_load(&a, 1, trace);
    simtest_load(&b, 1, trace);
    simtest_run_ok(&a, "fifo");
    simtest_run_ok(&b, "slurm");
    for (int64_t id = 1; id <= 5; id++) {
        const lucid_jobresult *x = simtest_job(&a, id), *y = simtest_job(&b, id);
        assert_int_equal(x->start_time, y->start_time);
        assert_int_equal(x->end_time, y->end_time);
    }
    /* And the hand-worked answer: 2 waits for 4 GPUs until 1000, blocking
     * 3 behind it (head of line); 4 needs the whole node after 2. */
    EXPECT_JOB(&b, 1, 0, 1000, 0);
    EXPECT_JOB(&b, 2, 1000, 1100, 990);
    EXPECT_JOB(&b, 3, 1000, 1050, 980);
    EXPECT_JOB(&b, 4, 1100, 1110, 1070);
    EXPECT_JOB(&b, 5, 1110, 1610, 1070);
    simtest_free(&a);
    simtest_free(&b);
}

/* PriorityWeightJobSize 1000 on one node of 8 GPUs (Slurm 22.05's factor:
 * the mean of the job's share of the nodes and of the CPUs, the GPUs
 * standing for CPUs in a trace without them): job 1 holds the node until
 * 1000; job 2 (1 GPU, t = 10) has size (1/1 + 1/8) / 2, P = trunc(562.5);
 * job 3 (8 GPUs, t = 20) size (1 + 1) / 2, P = 1000: job 3 runs first,
 * 1000..1100, and job 2 after it.  With PriorityFavorSmall the factor is
 * ((1 - 1) + (1 - 1/8)) / 2: job 2 P = 437, job 3 P = 0, submission order
 * again (job 2 at 1000, job 3 when it ends at 1100). */
static void job_size_orders_the_queue(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,alice,a,8,0,1000\n"
                               "2,alice,a,1,10,100\n"
                               "3,alice,a,8,20,100\n";
    for (int small = 0; small <= 1; small++) {
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.slurm.weight_jobsize = 1000;
        t.cfg.slurm.favor_small = small;
        simtest_run_ok(&t, "slurm");
        EXPECT_JOB(&t, 1, 0, 1000, 0);
        if (!small) {
            EXPECT_JOB(&t, 3, 1000, 1100, 980);
            EXPECT_JOB(&t, 2, 1100, 1200, 1090);
        } else {
            EXPECT_JOB(&t, 2, 1000, 1100, 990);
            EXPECT_JOB(&t, 3, 1100, 1200, 1080);
        }
        simtest_free(&t);
    }
}

/* Age: PriorityWeightAge 1000, PriorityMaxAge 1000 s, and job size 600.
 * Job 1 holds the node until 3000.  Job 2 (1 GPU, t = 0, size (1 + 1/8) /
 * 2 = 0.5625) and job 3 (8 GPUs, t = 1500, size 1) wait.  At 3000 (a
 * recalculation): job 2's age saturates (1000) plus 600 x 0.5625 = 337.5:
 * P = 1337; job 3's age 1500 -> 1000, plus 600: 1600.  Job 3 first
 * (3000..3100), job 2 after it.  With PriorityMaxAge 10000 s: job 2 has
 * 300 + 337.5 = 637, job 3 150 + 600 = 750: job 3 first as well; with job
 * size 400: job 2 300 + 225 = 525, job 3 150 + 400 = 550, still job 3;
 * with job size 300: 468 against 450: job 2 first. */
static void age_saturates_at_max_age(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,alice,a,8,0,3000\n"
                               "2,alice,a,1,0,100\n"
                               "3,alice,a,8,1500,100\n";
    static const struct {
        int64_t max_age;
        double size;
        int job3_first;
    } cases[] = {{1000, 600, 1}, {10000, 600, 1}, {10000, 400, 1}, {10000, 300, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.slurm.weight_age = 1000;
        t.cfg.slurm.max_age = cases[c].max_age;
        t.cfg.slurm.weight_jobsize = cases[c].size;
        simtest_run_ok(&t, "slurm");
        if (cases[c].job3_first) {
            EXPECT_JOB(&t, 3, 3000, 3100, 1500);
            EXPECT_JOB(&t, 2, 3100, 3200, 3100);
        } else {
            EXPECT_JOB(&t, 2, 3000, 3100, 3000);
            EXPECT_JOB(&t, 3, 3100, 3200, 1600);
        }
        simtest_free(&t);
    }
}

/* sched/backfill on the users' time limits (EASY, margin 1), one node of
 * 8 GPUs, every weight 0 (submission order), a backfill pass at every
 * decision (bf_interval 1):
 *   job 1  6 GPUs t=0   d=1000 limit 1000: runs 0..1000, 2 GPUs free
 *   job 2  4 GPUs t=10  d=100  limit 100:  waits; reserved 4 GPUs at 1000
 *   job 3  2 GPUs t=20  d=500  limit 500:  ends by 520 < 1000: backfilled,
 *                                          20..520
 *   job 4  2 GPUs t=600 d=100  limit 2000: runs past 1000, but at 1000 the
 *                                          node has 8 - 2 >= 4 for job 2:
 *                                          backfilled, 600..700
 *   job 5  6 GPUs t=700 d=100  limit 100:  behind job 2; at 1000 4 GPUs are
 *                                          left: 1100..1200
 * and job 2 keeps its reservation, 1000..1100.  With Slurm's default
 * bf_interval of 30 s the main scheduler alone meets job 3 at 20 (job 2
 * blocks it); the backfill pass at 30 starts it, 30..530; job 4 arrives at
 * 600, a pass: 600..700.  Without backfill (the builtin rule) job 2 blocks
 * the node's 2 free GPUs until 1000: job 3 1000..1500, job 4 1000..1100,
 * job 5 at 1100 when 6 are free. */
static void backfill_on_time_limits(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration,time_limit\n"
                               "1,alice,a,6,0,1000,1000\n"
                               "2,bob,a,4,10,100,100\n"
                               "3,carol,a,2,20,500,500\n"
                               "4,carol,a,2,600,100,2000\n"
                               "5,bob,a,6,700,100,100\n";
    static const struct {
        int backfill;
        int64_t interval, start3, start4;
    } cases[] = {{0, 30, 1000, 1000}, {1, 1, 20, 600}, {1, 30, 30, 600}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        simtest t;
        simtest_load(&t, 1, trace);
        if (cases[c].backfill) {
            t.cfg.backfill[0] = (lucid_sim_backfill){
                .policy = &lucid_policy_slurm,
                .cfg = {.mode = LUCID_BACKFILL_EASY, .estimate = LUCID_BACKFILL_EST_TIME_LIMIT,
                        .margin = 1.0}};
            t.cfg.nbackfill = 1;
        }
        t.cfg.slurm.bf_interval = cases[c].interval;
        simtest_run_ok(&t, "slurm");
        EXPECT_JOB(&t, 1, 0, 1000, 0);
        EXPECT_JOB(&t, 2, 1000, 1100, 990);
        EXPECT_JOB(&t, 5, 1100, 1200, 400);
        int64_t s3 = cases[c].start3, s4 = cases[c].start4;
        EXPECT_JOB(&t, 3, s3, s3 + 500, (double)(s3 - 20));
        EXPECT_JOB(&t, 4, s4, s4 + 100, (double)(s4 - 600));
        simtest_free(&t);
    }
}

/* [slurm]'s keys: refused out of range with the file, line and key;
 * accepted ones kept as written and written back; unset ones not. */
static void config_keys_checked(void **state)
{
    (void)state;
    exptest_refused("[slurm]\nweight_age = -1\n",
                   "exp.ini:2: [slurm] weight_age: -1 out of range 0..4294967295");
    exptest_refused("[slurm]\n\nweight_fairshare = 4294967296\n", "exp.ini:3: [slurm] weight_fairshare");
    exptest_refused("[slurm]\nweight_jobsize = big\n", "'big' is not a number");
    exptest_refused("[slurm]\nmax_age = 0\n", "exp.ini:2: [slurm] max_age: 0 out of range 1..");
    exptest_refused("[slurm]\ncalc_period = 86401\n",
                   "[slurm] calc_period: 86401 out of range 1..86400");
    exptest_refused("[slurm]\nfavor_small = maybe\n",
                   "exp.ini:2: [slurm] favor_small: 'maybe' is not yes or no");
    exptest_refused("[slurm]\nbackfill_interval = 0\n",
                    "exp.ini:2: [slurm] backfill_interval: 0 out of range 1..10800");
    exptest_refused("[slurm]\nweight_qos = 1\n", "exp.ini:2: [slurm] weight_qos: unknown key");
    lucid_experiment exp;
    lucid_error err = {{0}};
    assert_int_equal(exptest_load(&exp,
                          "[slurm]\nweight_age = 1000\nweight_fairshare = 10000\nmax_age = 86400\n"
                          "favor_small = on\nbackfill = easy\n",
                          &err),
                     0);
    assert_string_equal(exp.slurm_weight_fairshare, "10000");
    assert_string_equal(exp.slurm_favor_small, "yes"); /* "on" kept as yes */
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(lucid_experiment_write(out, &exp), 0);
    fclose(out);
    assert_non_null(strstr(text, "[slurm]\nweight_age = 1000\nweight_fairshare = 10000\n"));
    assert_non_null(strstr(text, "favor_small = yes\nbackfill = easy\n"));
    free(text);
    lucid_experiment_free(&exp);
    assert_int_equal(exptest_load(&exp, "[simulate]\nseed = 3\n", &err), 0);
    out = open_memstream(&text, &size);
    assert_non_null(out);
    assert_int_equal(lucid_experiment_write(out, &exp), 0);
    fclose(out);
    assert_null(strstr(text, "[slurm]"));
    free(text);
    lucid_experiment_free(&exp);
}

/* Slurm's time strings, by slurm.conf(5)'s forms. */
static void slurm_times(void **state)
{
    (void)state;
    assert_int_equal(lucid_slurm_time_parse("5", 0), 300);          /* minutes */
    assert_int_equal(lucid_slurm_time_parse("5:30", 0), 330);       /* M:S */
    assert_int_equal(lucid_slurm_time_parse("1:02:03", 0), 3723);   /* H:M:S */
    assert_int_equal(lucid_slurm_time_parse("7-0", 0), 604800);     /* D-H */
    assert_int_equal(lucid_slurm_time_parse("1-2:3", 0), 93780);    /* D-H:M */
    assert_int_equal(lucid_slurm_time_parse("1-2:3:4", 0), 93784);  /* D-H:M:S */
    assert_int_equal(lucid_slurm_time_parse("INFINITE", 42), 42);
    assert_int_equal(lucid_slurm_time_parse("unlimited", 42), 42);
    static const char *const bad[] = {"", "x", "7-", "-7", "1:2:3:4", "1-2-3", "5m", "1:", "1-2:3:4:5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (lucid_slurm_time_parse(bad[i], 0) != -1)
            fail_msg("'%s' parsed", bad[i]);
}

static void write_conf(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A site's slurm.conf (the lab's site profile's priority lines, with other
 * keys around them) sets the slurm policy's keys; priority/basic zeroes
 * the weights; a bad value is refused with slurm.conf's file and line. */
static void slurm_conf_read(void **state)
{
    (void)state;
    char dir[512], path[600];
    test_tmpdir(dir, sizeof dir, "slurm_conf");
    snprintf(path, sizeof path, "%s/slurm.conf", dir);
    write_conf(path, "# a site\nClusterName=lab\nSchedulerType=sched/backfill\n"
                     "SchedulerParameters=sched_interval=1,bf_interval=10,bf_continue,bf_window=60\n"
                     "PriorityType=priority/multifactor\npriorityDecayHalfLife=7-0  # weekly\n"
                     "PriorityCalcPeriod=1\nPriorityMaxAge=2-0\nPriorityWeightFairshare=10000\n"
                     "PriorityWeightAge=1000\nPriorityWeightJobSize=1000\nPriorityWeightQOS=2000\n"
                     "PriorityFavorSmall=YES\n"
                     "NodeName=n1 Gres=gpu:8 CPUs=16 State=UNKNOWN\n");
    lucid_experiment exp;
    lucid_error err = {{0}};
    lucid_experiment_defaults(&exp);
    if (lucid_slurm_conf_apply(&exp, path, &err) < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(exp.slurm_weight_fairshare, "10000");
    assert_string_equal(exp.slurm_weight_age, "1000");
    assert_string_equal(exp.slurm_weight_jobsize, "1000");
    assert_string_equal(exp.slurm_calc_period, "60");
    assert_string_equal(exp.slurm_max_age, "172800");
    assert_string_equal(exp.slurm_favor_small, "yes");
    assert_string_equal(exp.fairshare_half_life, "604800");
    assert_string_equal(exp.backfill[LUCID_EXP_BF_SLURM], "conservative");
    assert_string_equal(exp.slurm_backfill_interval, "10");
    assert_string_equal(exp.backfill_window[LUCID_EXP_BF_SLURM], "3600");
    assert_null(exp.slurm_fair_tree); /* no PriorityFlags: Slurm's default, Fair Tree */
    lucid_experiment_free(&exp);

    write_conf(path, "PriorityFlags=SMALL_RELATIVE_TO_TIME,NO_FAIR_TREE\n"
                     "TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.5\n");
    lucid_experiment_defaults(&exp);
    if (lucid_slurm_conf_apply(&exp, path, &err) < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(exp.slurm_fair_tree, "no");
    assert_string_equal(exp.slurm_billing_cpu, "1.0");
    assert_string_equal(exp.slurm_billing_gpu, "2.5");
    lucid_experiment_free(&exp);

    /* The weights on partition lines (the lab's): the default partition's. */
    write_conf(path, "PartitionName=debug Nodes=n1 TRESBillingWeights=CPU=2\n"
                     "PartitionName=main Nodes=n1 Default=YES MaxTime=INFINITE "
                     "TRESBillingWeights=CPU=1.0,GRES/gpu=8.0,GRES/lucidshare=8.0\n");
    lucid_experiment_defaults(&exp);
    if (lucid_slurm_conf_apply(&exp, path, &err) < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(exp.slurm_billing_cpu, "1.0");
    assert_string_equal(exp.slurm_billing_gpu, "8.0");
    lucid_experiment_free(&exp);

    write_conf(path, "PriorityWeightAge=1000\nPriorityType=priority/basic\nSchedulerType=sched/builtin\n");
    lucid_experiment_defaults(&exp);
    assert_int_equal(lucid_slurm_conf_apply(&exp, path, &err), 0);
    assert_string_equal(exp.slurm_weight_age, "0");
    assert_string_equal(exp.backfill[LUCID_EXP_BF_SLURM], "none");
    lucid_experiment_free(&exp);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"ClusterName=x\nPriorityMaxAge=7days\n", "slurm.conf:2: PriorityMaxAge: '7days' is not a Slurm time"},
        {"PriorityWeightAge=-5\n", "slurm.conf:1: [slurm] weight_age: -5 out of range"},
        {"SchedulerType=sched/gang\n", "slurm.conf:1: SchedulerType: 'sched/gang'"},
        {"\nSchedulerParameters=bf_interval=often\n", "slurm.conf:2: SchedulerParameters: bf_interval: 'often'"},
        {"TRESBillingWeights=CPU=lots\n", "slurm.conf:1: TRESBillingWeights: CPU: 'lots' is not a weight"},
        {"TRESBillingWeights=GRES/gpu\n", "slurm.conf:1: TRESBillingWeights: 'GRES/gpu' is not TRES=WEIGHT"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_conf(path, bad[i].text);
        lucid_experiment_defaults(&exp);
        lucid_error_clear(&err);
        assert_int_equal(lucid_slurm_conf_apply(&exp, path, &err), -1);
        if (!strstr(err.msg, bad[i].want))
            fail_msg("'%s' does not say '%s'", err.msg, bad[i].want);
        lucid_experiment_free(&exp);
    }
    lucid_experiment_defaults(&exp);
    snprintf(path, sizeof path, "%s/none.conf", dir);
    assert_int_equal(lucid_slurm_conf_apply(&exp, path, &err), -1);
    assert_non_null(strstr(err.msg, "none.conf: cannot open"));
    lucid_experiment_free(&exp);
}

/* Fair Tree (Slurm's default) against the classic factor, one node of 8
 * GPUs, PriorityWeightFairshare 1000 only:
 *   job 1  u1 6 GPUs t=0  d=1000     job 2  u3 2 GPUs t=0  d=1000
 *   job 3  u2 8 GPUs t=10 d=100      job 4  u3 8 GPUs t=20 d=100
 * At 1000 jobs 3 and 4 wait; usage (billed as CPUs, the GPUs here): u1
 * 6000, u2 0, u3 2000 (total 8000; a 7-day half-life takes 0.1 %).
 * - Every user under the root (equal shares 1/3): LF = (1/3) / (U / 8000):
 *   u2 infinite, u3 1.33, u1 0.44; ranks 3, 2, 1 of 3: u2 1.0 (P 1000),
 *   u3 0.667 (666): job 3 at 1000, job 4 at 1100.  The classic factor
 *   orders them the same (u2 2^0 = 1, u3 2^-0.75).
 * - Accounts A = {u1, u2}, B = {u3}: at the root A has LF (1/2) / 0.75 =
 *   0.67, B (1/2) / 0.25 = 2: B first, u3 rank 3 (1.0); then A's users, u2
 *   (LF infinite) rank 2 (0.667), u1 rank 1: job 4 at 1000, job 3 at 1100. */
static void fair_tree_ranks_accounts_first(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,u1,a,6,0,1000\n"
                               "2,u3,a,2,0,1000\n"
                               "3,u2,a,8,10,100\n"
                               "4,u3,a,8,20,100\n";
    for (int mode = 0; mode < 3; mode++) { /* flat Fair Tree, classic, accounts */
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.slurm.weight_fairshare = 1000;
        t.cfg.slurm.fair_tree = mode != 1;
        if (mode == 2)
            t.cfg.slurm_accounts = "A:u1,u2 B:u3";
        simtest_run_ok(&t, "slurm");
        EXPECT_JOB(&t, 1, 0, 1000, 0);
        if (mode != 2) {
            EXPECT_JOB(&t, 3, 1000, 1100, 990);
            EXPECT_JOB(&t, 4, 1100, 1200, 1080);
        } else {
            EXPECT_JOB(&t, 4, 1000, 1100, 980);
            EXPECT_JOB(&t, 3, 1100, 1200, 1090);
        }
        simtest_free(&t);
    }
}

/* Slurm charges usage and recomputes the fair-share factors once every
 * PriorityCalcPeriod (its decay pass); between two, the factors stand.
 * One node of 8 GPUs, fair share 1000 only:
 *   job 1  u1 8 GPUs t=0  d=100     job 2  u1 8 GPUs t=10 d=100
 *   job 3  u2 8 GPUs t=20 d=100
 * With the default 300-s period the factors in force at 100 are those of
 * 0, when nobody had used anything: equal, so submission order, job 2 at
 * 100 and job 3 at 200.  With a 50-s period they are those of 100: u1 used
 * 800, u2 nothing, so job 3 at 100 and job 2 at 200. */
static void fair_share_stands_between_recalculations(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,u1,a,8,0,100\n"
                               "2,u1,a,8,10,100\n"
                               "3,u2,a,8,20,100\n";
    for (int period = 300; period >= 50; period -= 250) {
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.slurm.weight_fairshare = 1000;
        t.cfg.slurm.calc_period = period;
        simtest_run_ok(&t, "slurm");
        if (period == 300) {
            EXPECT_JOB(&t, 2, 100, 200, 90);
            EXPECT_JOB(&t, 3, 200, 300, 180);
        } else {
            EXPECT_JOB(&t, 3, 100, 200, 80);
            EXPECT_JOB(&t, 2, 200, 300, 190);
        }
        simtest_free(&t);
    }
}

/* [slurm] start_latency 0.5: every start half a second after its decision,
 * in whole seconds with the fraction carried: four 8-GPU jobs of 10 s on
 * one node, all submitted at 0, start at 0 (carry 0.5), 11 (1.0: one
 * second), 21 (0.5) and 32 (1.0); without it at 0, 10, 20 and 30. */
static void starts_take_slurms_latency(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,u1,a,8,0,10\n"
                               "2,u1,a,8,0,10\n"
                               "3,u1,a,8,0,10\n"
                               "4,u1,a,8,0,10\n";
    static const int64_t with[] = {0, 11, 21, 32}, without[] = {0, 10, 20, 30};
    for (int on = 0; on <= 1; on++) {
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.slurm.start_latency = on ? 0.5 : 0;
        simtest_run_ok(&t, "slurm");
        for (int k = 0; k < 4; k++) {
            int64_t start = on ? with[k] : without[k];
            EXPECT_JOB(&t, k + 1, start, start + 10, (double)start);
        }
        simtest_free(&t);
    }
}

/* Usage is Slurm's billing: the job's CPUs unless TRESBillingWeights says
 * otherwise.  One node of 8 GPUs, fair share only:
 *   job 1  u1 6 GPUs 1 CPU  t=0  d=1000   job 2  u3 2 GPUs 4 CPUs t=0 d=1000
 *   job 3  u3 8 GPUs 1 CPU  t=10 d=100    job 4  u1 8 GPUs 1 CPU  t=20 d=100
 * By CPUs u1 used 1000, u3 4000: u1 ranks first, job 4 at 1000.  With
 * billing GRES/gpu=1, CPU=0: u1 6000, u3 2000: job 3 at 1000. */
static void usage_is_slurms_billing(void **state)
{
    (void)state;
    static const char *trace = "job_id,user,vc,gpu_num,cpu_num,submit_time,duration\n"
                               "1,u1,a,6,1,0,1000\n"
                               "2,u3,a,2,4,0,1000\n"
                               "3,u3,a,8,1,10,100\n"
                               "4,u1,a,8,1,20,100\n";
    for (int by_gpu = 0; by_gpu <= 1; by_gpu++) {
        simtest t;
        simtest_load(&t, 1, trace);
        t.cfg.slurm.weight_fairshare = 1000;
        if (by_gpu) {
            t.cfg.slurm.bill_cpu = 0;
            t.cfg.slurm.bill_gpu = 1;
        }
        simtest_run_ok(&t, "slurm");
        if (!by_gpu) {
            EXPECT_JOB(&t, 4, 1000, 1100, 980);
            EXPECT_JOB(&t, 3, 1100, 1200, 1090);
        } else {
            EXPECT_JOB(&t, 3, 1000, 1100, 990);
            EXPECT_JOB(&t, 4, 1100, 1200, 1080);
        }
        simtest_free(&t);
    }
}

/* [slurm] accounts: the text is checked (one clear message), users the
 * trace lacks are passed over. */
static void accounts_parsed(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    assert_int_equal(lucid_slurm_accounts_parse("A:u1,u2  B:u3", NULL, 0, NULL, &err), 2);
    static const char *const bad[] = {"A", ":u1", "A:", "A:u1,,u2", "A:u1 B"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lucid_error_clear(&err);
        if (lucid_slurm_accounts_parse(bad[i], NULL, 0, NULL, &err) != -1 ||
            !strstr(err.msg, "[slurm] accounts"))
            fail_msg("'%s' accepted (%s)", bad[i], err.msg);
    }
    lucid_strtab *users = lucid_strtab_new();
    assert_non_null(users);
    int32_t u1 = lucid_strtab_intern(users, "u1"), u3 = lucid_strtab_intern(users, "u3");
    int32_t account[4] = {-1, -1, -1, -1};
    assert_int_equal(lucid_slurm_accounts_parse("A:u1,ghost B:u3", users, 4, account, &err), 2);
    assert_int_equal(account[lucid_fairshare_slot(u1, 4)], 0);
    assert_int_equal(account[lucid_fairshare_slot(u3, 4)], 1);
    assert_int_equal(account[0], -1); /* jobs without a user */
    lucid_strtab_free(users);
}

/* The policy is found by name but is not one of the paper's six. */
static void named_only(void **state)
{
    (void)state;
    assert_non_null(lucid_policy_find("slurm"));
    for (const lucid_policy_ops *const *p = lucid_policy_list(); *p; p++)
        assert_string_not_equal((*p)->name, "slurm");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fair_tree_ranks_accounts_first),
        cmocka_unit_test(usage_is_slurms_billing),
        cmocka_unit_test(fair_share_stands_between_recalculations),
        cmocka_unit_test(starts_take_slurms_latency),
        cmocka_unit_test(accounts_parsed),
        cmocka_unit_test(default_weights_are_fifo),
        cmocka_unit_test(job_size_orders_the_queue),
        cmocka_unit_test(age_saturates_at_max_age),
        cmocka_unit_test(backfill_on_time_limits),
        cmocka_unit_test(config_keys_checked),
        cmocka_unit_test(slurm_times),
        cmocka_unit_test(slurm_conf_read),
        cmocka_unit_test(named_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
