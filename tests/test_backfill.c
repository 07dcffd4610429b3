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

/* FIFO with EASY backfill (margin 1.2), a window and a size class. */
static void run_easy(simtest *t, int nodes, const char *trace, const double *est, int64_t window,
                     int32_t min_gpus)
{
    simtest_load(t, nodes, trace);
    use_backfill(t, est, LUCID_BACKFILL_EASY, 1.2);
    t->cfg.backfill[0].cfg.window = window;
    t->cfg.backfill[0].cfg.min_gpus = min_gpus;
    simtest_run_ok(t, "fifo");
}

/* backfill_window: a job whose earliest start is more than the window away
 * gets no reservation and is passed over. */
static void window_passes_over_a_far_reservation(void **state)
{
    (void)state;
    simtest t;
    run_easy(&t, 1, easy_trace, easy_est, 5, 0);
    /* At 1, 2's earliest start is 10 (1's end), 9 s away > 5: no
     * reservation.  At 2, nothing is held, so 3 starts as FIFO has it
     * (2-6).  At 3, 2's start is still 10 (7 s away); 4 does not fit now
     * and its earliest start is 6 (3's estimated end), 3 s away: 4 is
     * reserved and starts at 6 (6-26).  2's earliest start is then 26 (4's
     * estimated end), never within 5 s before it comes: 2 runs 26-31.
     * Without the window (above) 2 ran 10-15 and 4 15-35. */
    EXPECT_JOB(&t, 3, 2, 6, 0);
    EXPECT_JOB(&t, 4, 6, 26, 3);
    EXPECT_JOB(&t, 2, 26, 31, 25);
    assert_int_equal(t.result.backfill_stats.reservations, 1); /* 4 only */
    assert_int_equal(t.result.backfill_stats.backfilled, 0);
    simtest_free(&t);
}

static void window_keeps_a_reservation_that_moves_beyond_it(void **state)
{
    (void)state;
    simtest t;
    /* reservation_moves_when_the_estimate_is_wrong's trace, window 9 s. */
    const double est[] = {10, 5, 4, 30};
    run_easy(&t, 1,
             "job_id,vc,gpu_num,submit_time,duration\n"
             "1,a,6,0,20\n"
             "2,a,8,1,5\n"
             "3,a,2,2,4\n"
             "4,a,2,11,30\n",
             est, 9, 0);
    /* At 1, 2's start (10) is 9 s away: reserved.  At 11 it moves to 71,
     * 60 s away, far beyond the window, and is kept: 4 backfills only
     * because it ends by 47, and 2 starts at 41 as without a window. */
    EXPECT_JOB(&t, 3, 2, 6, 0);
    EXPECT_JOB(&t, 4, 11, 41, 0);
    EXPECT_JOB(&t, 2, 41, 46, 40);
    assert_int_equal(t.result.backfill_stats.moved_later, 1);
    simtest_free(&t);
}

/* backfill_min_gpus: only jobs of that size hold reservations.  Two nodes of
 * 8 GPUs; estimates exact.  1 (8 GPUs, 0-10) takes n1, 2 (4 GPUs, 0-20) half
 * of n2; 3 (8 GPUs) waits at 1, 4 (16 GPUs) at 2; 5 (4 GPUs, 30 s) comes at
 * 3 and would fit now on n2's 4 free GPUs. */
static const char *size_trace = "job_id,vc,gpu_num,submit_time,duration\n"
                                "1,a,8,0,10\n"
                                "2,a,4,0,20\n"
                                "3,a,8,1,5\n"
                                "4,a,16,2,5\n"
                                "5,a,4,3,30\n";
static const double size_est[] = {10, 20, 5, 5, 30};

static void easy_reserves_for_the_first_blocked_job(void **state)
{
    (void)state;
    simtest t;
    run_easy(&t, 2, size_trace, size_est, 0, 0);
    /* 3 holds the reservation (n1 from 10); 4 is not the first blocked job.
     * 5 (36 s planned on n2) delays nothing reserved: backfilled 3-33.  3
     * runs 10-15; 4 then waits for 5's end on n2: reserved at 33, 33-38. */
    EXPECT_JOB(&t, 5, 3, 33, 0);
    EXPECT_JOB(&t, 3, 10, 15, 9);
    EXPECT_JOB(&t, 4, 33, 38, 31);
    assert_int_equal(t.result.backfill_stats.reservations, 2);
    simtest_free(&t);
}

static void min_gpus_reserves_for_the_large_job_only(void **state)
{
    (void)state;
    simtest t;
    run_easy(&t, 2, size_trace, size_est, 0, 9);
    /* 3 (8 GPUs) holds nothing and is passed over.  4 (16 GPUs) is reserved
     * both nodes from 20 (2's end).  5 would hold n2 past 20: it waits.  At
     * 10, 3 (6 s planned: ends by 16 <= 20) backfills on n1, 10-15.  4 runs
     * 20-25, then 5 25-55. */
    EXPECT_JOB(&t, 3, 10, 15, 9);
    EXPECT_JOB(&t, 4, 20, 25, 18);
    EXPECT_JOB(&t, 5, 25, 55, 22);
    assert_int_equal(t.result.backfill_stats.reservations, 1); /* 4 only */
    assert_int_equal(t.result.backfill_stats.backfilled, 1);   /* 3 */
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
    /* Ratios 0.1, 0.2, ..., 3.8 (38 of them).  The table is sorted when it
     * reaches 20 ratios and then when it has grown by 16 + 5 %: at 20 and at
     * 38 (> 20 + 16 + 1), so all 38 count. */
    for (int i = 1; i <= 38; i++)
        assert_int_equal(lucid_eta_table_add(&t, i / 10.0), 0);
    /* Unconditioned median of 0.1..3.8: (1.9 + 2.0) / 2. */
    assert_true(fabs(lucid_eta_table_quantile(&t, 0, 0.5) - 1.95) < 1e-9);
    /* A job that ran 3 x its estimate: only 3.0..3.8 count; median 3.4. */
    assert_true(fabs(lucid_eta_table_quantile(&t, 3.0, 0.5) - 3.4) < 1e-9);
    /* Beyond every ratio seen: at_least x 1.5 for the median. */
    assert_true(fabs(lucid_eta_table_quantile(&t, 10.0, 0.5) - 15.0) < 1e-9);
    /* A 39th ratio waits for the next sort (past 38 + 16 + 1 = 55 ratios):
     * the answers stay those of the 38, however often the table is asked. */
    assert_int_equal(lucid_eta_table_add(&t, 0.05), 0);
    assert_true(fabs(lucid_eta_table_quantile(&t, 0, 0.5) - 1.95) < 1e-9);
    for (int i = 0; i < 16; i++)
        assert_int_equal(lucid_eta_table_add(&t, 0.05), 0);
    assert_true(fabs(lucid_eta_table_quantile(&t, 0, 0.5) - 1.95) < 1e-9); /* 55: not yet */
    assert_int_equal(lucid_eta_table_add(&t, 0.05), 0);
    /* 56 ratios, sorted: eighteen 0.05 then 0.1..3.8; the median lies
     * between the 28th (1.0) and the 29th (1.1). */
    assert_true(fabs(lucid_eta_table_quantile(&t, 0, 0.5) - 1.05) < 1e-9);
    lucid_eta_table_free(&t);
}

/* A Lucid scheduler on `nodes` 8-GPU nodes (consolidated placement, fixed
 * semantics) with the case's priorities and packing inputs. */
static void lucid_sched_for_lucid(lucid_sched *s, const lucid_job *jobs, lucid_jobrun *run,
                                  int32_t nodes, double *priority, lucid_lucid_inputs *inputs)
{
    lucid_error err = {{0}};
    assert_int_equal(lucid_sched_init(s, jobs, run, 0, nodes, 8, lucid_placer_find("consolidate"),
                                      &lucid_policy_lucid, lucid_semantics_fixed(), 1, &err),
                     0);
    s->priority = priority;
    s->lucid = inputs;
    assert_int_equal(lucid_policy_lucid.init(s, &err), 0);
}

/* Lucid's queue on two 8-GPU nodes, replayed by lucid_eta_predict with the
 * packing switch on or off.  R1 (8 GPUs, estimate 100) runs on n1, R2 (8,
 * 200) on n2, both from 0, sharing score 2 (no partner for anyone).
 * Waiting, in Lucid's order (estimate x GPUs): Q1 16 GPUs x 10 s (160), Q2
 * 8 x 150 (1200), Q3 8 x 300 (2400), Q2 and Q3 scoring 1 (a pair).  No job
 * has ended: running jobs end at their estimate x the prior's 0.25 / 1 / 4,
 * waiting ones run estimate x the same. */
typedef struct lucid_queue_case {
    lucid_job jobs[5];
    lucid_jobrun run[5];
    double priority[5];
    int32_t share[5];
    lucid_lucid_inputs inputs;
    lucid_sched s;
} lucid_queue_case;

static void lucid_queue_setup(lucid_queue_case *c, int packing)
{
    static const int gpus[5] = {8, 8, 16, 8, 8};
    static const double est[5] = {100, 200, 10, 150, 300};
    static const int32_t share[5] = {2, 2, 0, 1, 1};
    memset(c, 0, sizeof *c);
    for (int j = 0; j < 5; j++) {
        c->jobs[j] = (lucid_job){.job_id = j + 1, .duration = 1000, .gpu_num = gpus[j],
                                 .gmem = 0, .workload = {.model = -1}};
        c->run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                   .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                   .remain = 1000, .rate = 1};
        c->priority[j] = est[j] * gpus[j];
        c->share[j] = share[j];
    }
    c->inputs = (lucid_lucid_inputs){.share = c->share, .gmem_limit = 24576,
                                     .priority_ratio = 2, .score_sum = 2,
                                     .switch_initial = (int8_t)packing};
    lucid_sched_for_lucid(&c->s, c->jobs, c->run, 2, c->priority, &c->inputs);
    c->s.now = 0;
    for (int32_t j = 0; j < 2; j++) /* R1, R2 start */
        assert_int_equal(lucid_policy_lucid.arrive(&c->s, j), 0);
    lucid_policy_lucid.decide(&c->s);
    for (int32_t j = 2; j < 5; j++) /* the queue: nothing fits or packs */
        assert_int_equal(lucid_policy_lucid.arrive(&c->s, j), 0);
    lucid_policy_lucid.decide(&c->s);
    assert_int_equal(c->s.qlen, 3);
    assert_int_equal(c->s.queue[0], 2);
    assert_int_equal(c->s.queue[1], 3);
    assert_int_equal(c->s.queue[2], 4);
}

static void expect_eta(const lucid_eta *e, int64_t p10, int64_t p50, int64_t p90, int line)
{
    if (e->p10 != p10 || e->p50 != p50 || e->p90 != p90)
        fail_msg("line %d: predicted %lld / %lld / %lld, want %lld / %lld / %lld", line,
                 (long long)e->p10, (long long)e->p50, (long long)e->p90, (long long)p10,
                 (long long)p50, (long long)p90);
}
#define EXPECT_ETA(e, a, b, c) expect_eta((e), (a), (b), (c), __LINE__)

/* The case's predictions with the packing switch on or off. */
static void predict_lucid_queue(int packing, lucid_eta out[3])
{
    lucid_queue_case c;
    lucid_queue_setup(&c, packing);
    lucid_eta_table table = {0};
    lucid_eta_plan plan = {0};
    assert_int_equal(lucid_eta_predict(&c.s, NULL, &table, &plan, 0, 3, -1, out), 0);
    lucid_eta_plan_free(&plan);
    lucid_eta_table_free(&table);
    lucid_sched_free(&c.s);
}

static void lucid_replay_packs_and_passes_over(void **state)
{
    (void)state;
    lucid_eta out[3];
    predict_lucid_queue(1, out);
    /* P50: R1 ends at 100.  Q1 needs both nodes (R2 holds n2 until 200);
     * packing is on, so Q1 holds no place: Q2 starts on n1 at 100 (150 s),
     * and Q3 joins it on its GPUs at once (a new partner: same GPU count,
     * scores 1 + 1 <= 2, priority 2400 <= 2 x 1200).  Q3 runs 300 s, past
     * Q2's end at 250: the pair holds n1 until 400, when Q1 starts.
     * P10 (x 0.25): R1 ends at 25, R2 at 50; Q2 25-63 (38 s), Q3 on it
     * 25-100 (75 s): Q1 at 100.  P90 (x 4): R1 400, R2 800; Q2 400-1000, Q3
     * 400-1600: Q1 at 1600. */
    EXPECT_ETA(&out[0], 100, 400, 1600);
    EXPECT_ETA(&out[1], 25, 100, 400);
    EXPECT_ETA(&out[2], 25, 100, 400);
}

static void lucid_replay_head_of_line_without_packing(void **state)
{
    (void)state;
    lucid_eta out[3];
    predict_lucid_queue(0, out);
    /* Switch off: head of line.  P50: Q1 when both nodes are free (200),
     * 10 s; Q2 no earlier than Q1: 210 on n1; Q3 no earlier: 210 on n2.
     * P10: Q1 at 50 (3 s), Q2 and Q3 at 53.  P90: Q1 at 800 (40 s), the
     * others at 840. */
    EXPECT_ETA(&out[0], 50, 200, 800);
    EXPECT_ETA(&out[1], 53, 210, 840);
    EXPECT_ETA(&out[2], 53, 210, 840);
}

/* Lucid on one 8-GPU node with packing on, up to 4 jobs of 8 GPUs: each
 * job k arrives at arrive_at[k] (in order) and the pass runs after it. */
typedef struct one_node_lucid {
    lucid_job jobs[4];
    lucid_jobrun run[4];
    double priority[4];
    int32_t share[4];
    lucid_lucid_inputs inputs;
    lucid_sched s;
    lucid_eta_table table;
    lucid_eta_plan plan;
} one_node_lucid;

static void one_node_lucid_free(one_node_lucid *c)
{
    lucid_eta_plan_free(&c->plan);
    lucid_eta_table_free(&c->table);
    lucid_sched_free(&c->s);
}

static void one_node_lucid_run(one_node_lucid *c, int n, const double *est,
                               const int32_t *share, const int32_t *user,
                               const int64_t *arrive_at)
{
    memset(c, 0, sizeof *c);
    for (int j = 0; j < n; j++) {
        c->jobs[j] = (lucid_job){.job_id = j + 1, .duration = 1000, .gpu_num = 8, .gmem = 0,
                                 .user = user[j], .workload = {.model = -1}};
        c->run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                   .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                   .remain = 1000, .rate = 1};
        c->priority[j] = est[j] * 8;
        c->share[j] = share[j];
    }
    c->inputs = (lucid_lucid_inputs){.share = c->share, .gmem_limit = 24576,
                                     .priority_ratio = 2, .score_sum = 2, .switch_initial = 1};
    lucid_sched_for_lucid(&c->s, c->jobs, c->run, 1, c->priority, &c->inputs);
    for (int32_t j = 0; j < n; j++) {
        c->s.now = arrive_at[j];
        assert_int_equal(lucid_policy_lucid.arrive(&c->s, j), 0);
        lucid_policy_lucid.decide(&c->s);
    }
}

/* A running job that shares its GPUs becomes a partner again when its
 * partner ends (the pass makes it a candidate then).  One 8-GPU node,
 * packing on, no job ended (prior ratios 0.25 / 1 / 4).  R1 (8 GPUs,
 * estimate 100, score 1) starts at 0 on the node; R2 (8, 150, score 1)
 * packs onto it at once (priority 1200 <= 2 x 800).  Waiting, in Lucid's
 * order: X (8 GPUs, estimate 10, score 2: it can pack with nobody) and W
 * (8, 200, score 1).  Neither can start: no free GPU, and R1 and R2 share. */
static void lucid_replay_packs_onto_a_running_job_whose_partner_ended(void **state)
{
    (void)state;
    static const double est[4] = {100, 150, 10, 200};
    static const int32_t share[4] = {1, 1, 2, 1}, user[4] = {0, 0, 0, 0};
    static const int64_t at[4] = {0, 0, 0, 0};
    one_node_lucid c;
    one_node_lucid_run(&c, 4, est, share, user, at);
    lucid_sched *s = &c.s;
    const lucid_jobrun *run = c.run;
    assert_int_equal(run[1].packed_onto, 0); /* R2 on R1's GPUs */
    assert_int_equal(s->qlen, 2);
    assert_int_equal(s->queue[0], 2); /* X (priority 80), then W (1600) */
    assert_int_equal(s->queue[1], 3);
    lucid_eta_table *table = &c.table;
    lucid_eta_plan *plan = &c.plan;
    lucid_eta out[2];
    assert_int_equal(lucid_eta_predict(s, NULL, table, plan, 0, 2, -1, out), 0);
    /* P50: R1 ends at 100, R2 at 150 (the pair holds the node until then).
     * At 100 R2 runs alone and takes a partner: W packs onto it (scores
     * 1 + 1, priority 1600 <= 2 x 1200) and runs 200 s, to 300, past R2's
     * end: the node stays taken until 300, when X, which needs it free,
     * starts.  (Without the rule: X at 150, W at 160.)  P10 (x 0.25): R1 25,
     * R2 38 (37.5 up), W 25-75 (50 s): X at 75.  P90 (x 4): R1 400, R2 600,
     * W 400-1200: X at 1200. */
    EXPECT_ETA(&out[0], 75, 300, 1200);
    EXPECT_ETA(&out[1], 25, 100, 400);
    one_node_lucid_free(&c);
}

/* The submitter's running jobs.  A table of 40 runs estimated at 100 s
 * that ran 10, 20, ..., 400 s (ratios 0.1 .. 4.0; the 38 first are sorted,
 * the last two wait for the next re-sort).  On one 8-GPU node Lucid runs R
 * (user 7, 8 GPUs, estimate 1000, score 2) from 0; at 500 W (user 7, 8
 * GPUs, score 2: no partner) waits for it. */
static void submitters_running_jobs_end_at_their_levels(void **state)
{
    (void)state;
    static const double est[2] = {1000, 100};
    static const int32_t share[2] = {2, 2}, user[2] = {7, 7};
    static const int64_t at[2] = {0, 500};
    one_node_lucid c;
    one_node_lucid_run(&c, 2, est, share, user, at);
    lucid_sched *s = &c.s;
    assert_int_equal(s->qlen, 1);
    lucid_eta_table *table = &c.table;
    for (int k = 1; k <= 40; k++)
        assert_int_equal(lucid_eta_table_add_run(table, 100, 10.0 * k), 0);
    assert_int_equal(table->sorted, 38);
    /* Only user 7 has a running job. */
    assert_int_equal(lucid_eta_table_note_submission(table, s, NULL, 8), 0);
    /* R noted at 500 (ratio >= 0.5: the 34 sorted ratios 0.5 .. 3.8) and
     * ending after 100 (i + 6) s, i = 0..19 (ratio 0.6 .. 2.5, the i + 1-th
     * of them): level (mid-rank) (i + 1.5) / 34 = (2i + 3) / 68.  Below 20
     * levels the scenarios keep their q. */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(lucid_eta_table_note_submission(table, s, NULL, 7), 1);
        assert_int_equal(table->npending, 1);
        if (i == 19)
            assert_true(fabs(lucid_eta_table_submitter_level(table, 0.5) - 0.5) < 1e-12);
        assert_int_equal(lucid_eta_table_note_end(table, 0, 1000, 100.0 * (i + 6)), 0);
        assert_int_equal(table->npending, 0);
    }
    assert_true(fabs(table->levels[0] - 3.0 / 68) < 1e-12);
    /* Levels 3/68 .. 41/68: P10 at rank 1.9 = 6.8/68 = 0.1, P50 at 9.5 =
     * 22/68, P90 at 17.1 = 37.2/68. */
    assert_true(fabs(lucid_eta_table_submitter_level(table, 0.1) - 0.1) < 1e-12);
    assert_true(fabs(lucid_eta_table_submitter_level(table, 0.5) - 22.0 / 68) < 1e-12);
    assert_true(fabs(lucid_eta_table_submitter_level(table, 0.9) - 37.2 / 68) < 1e-12);
    /* A job preempted, or ended without a note, adds no level. */
    assert_int_equal(lucid_eta_table_note_submission(table, s, NULL, 7), 1);
    assert_int_equal(lucid_eta_table_note_end(table, 0, 1000, -1), 0);
    assert_int_equal(lucid_eta_table_note_end(table, 0, 1000, 700), 0);
    assert_int_equal(table->nlevels, 20);
    /* W's start is R's end.  For another user's job, R ends at the ratios'
     * q-quantiles over 0.5 .. 3.8 (33 steps of 0.1): P10 at rank 3.3 = 0.83,
     * P50 at 16.5 = 2.15, P90 at 29.7 = 3.47: 830 / 2150 / 3470.  For its
     * own user's, at ranks 33 x the levels: 3.3 -> 830; 33 x 22/68 = 10.676
     * -> 1.5676 -> 1567.6 (1568); 33 x 37.2/68 = 18.053 -> 2.3053 -> 2305.3
     * (2306). */
    lucid_eta_plan *plan = &c.plan;
    lucid_eta out[1];
    assert_int_equal(lucid_eta_predict(s, NULL, table, plan, 0, 1, -1, out), 0);
    EXPECT_ETA(&out[0], 830, 2150, 3470);
    plan->submitter = 7;
    plan->submitter_set = 1;
    assert_int_equal(lucid_eta_predict(s, NULL, table, plan, 0, 1, -1, out), 0);
    EXPECT_ETA(&out[0], 830, 1568, 2306);
    plan->submitter = 8; /* a user with no running job: as for no submitter */
    assert_int_equal(lucid_eta_predict(s, NULL, table, plan, 0, 1, -1, out), 0);
    EXPECT_ETA(&out[0], 830, 2150, 3470);
    one_node_lucid_free(&c);
}

/* Later arrivals that overtake: in the P90 scenario the arrivals of the
 * last LUCID_ETA_GHOST_WINDOW s arrive again, mirrored about now, at their
 * place in Lucid's order.  One 8-GPU node, packing on, no job ended (prior
 * ratios 0.25 / 1 / 4).  R (8 GPUs, estimate 100, score 2) arrives and
 * starts at 0; at 50 W (8 GPUs, score 2: no partner) waits for it.  R ran
 * 50 s of 100: it ends at 100 x (0.5 x 1.1, 1, 4) = 55 / 100 / 400. */
static void later_arrivals_overtake_in_the_p90(void **state)
{
    (void)state;
    static const int32_t share[2] = {2, 2}, user[2] = {1, 2};
    static const int64_t at[2] = {0, 50};
    for (int behind = 0; behind < 2; behind++) {
        /* W's estimate 200 (priority 1600, behind R's 800), or 50 (400,
         * ahead of it). */
        const double est[2] = {100, behind ? 50 : 200};
        one_node_lucid c;
        one_node_lucid_run(&c, 2, est, share, user, at);
        lucid_sched *s = &c.s;
        assert_int_equal(s->qlen, 1);
        assert_int_equal(s->queue[0], 1);
        lucid_eta_table *table = &c.table;
        lucid_eta out[1];
        /* No arrival noted: W starts when R ends. */
        assert_int_equal(lucid_eta_predict(s, NULL, table, &c.plan, 0, 1, -1, out), 0);
        EXPECT_ETA(&out[0], 55, 100, 400);
        /* An arrival 21,601 s before 50 has left the window when the one at
         * 50 is noted; W's own arrival (at now) is no arrival to come. */
        assert_int_equal(lucid_eta_table_note_arrival(table, 1, 50 - LUCID_ETA_GHOST_WINDOW - 1), 0);
        assert_int_equal(lucid_eta_table_note_arrival(table, 0, 0), 0);
        assert_int_equal(lucid_eta_table_note_arrival(table, 1, 50), 0);
        assert_int_equal(table->narr - table->arr_head, 2);
        assert_int_equal(lucid_eta_predict(s, NULL, table, &c.plan, 0, 1, -1, out), 0);
        if (behind)
            /* R's copy arrives at 2 x 50 - 0 = 100 and waits for R's end
             * (400) with W; W, first in the order, starts then. */
            EXPECT_ETA(&out[0], 55, 100, 400);
        else
            /* R's copy goes first at 400 and runs 100 x 4 = 400 s: W starts
             * at 800 (P10 and P50 as before). */
            EXPECT_ETA(&out[0], 55, 100, 800);
        one_node_lucid_free(&c);
    }
}

/* A running job that has outrun its estimate ends at a duration drawn from
 * the finished jobs that ran at least as long, when that rule has predicted
 * such jobs' ends better so far, else at a ratio.  FIFO on one
 * 8-GPU node: R (8 GPUs, estimate 1000) started at 0; at 2000 W (8 GPUs)
 * waits for it.  The table holds 38 finished runs estimated at 100 s that
 * ran 100, 200, ..., 3800 s (ratios 1..38). */
static void overrun_job_ends_by_durations(void **state)
{
    (void)state;
    lucid_job jobs[2] = {{.job_id = 1, .duration = 5000, .gpu_num = 8, .workload = {.model = -1}},
                         {.job_id = 2, .duration = 10, .gpu_num = 8, .workload = {.model = -1}}};
    lucid_jobrun run[2];
    for (int j = 0; j < 2; j++)
        run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                .remain = (double)jobs[j].duration, .rate = 1};
    const double est[2] = {1000, 100};
    lucid_sched s;
    lucid_error err = {{0}};
    assert_int_equal(lucid_sched_init(&s, jobs, run, 0, 1, 8, lucid_placer_find("consolidate"),
                                      &lucid_policy_fifo, lucid_semantics_fixed(), 1, &err),
                     0);
    s.now = 0;
    assert_int_equal(lucid_policy_fifo.arrive(&s, 0), 0);
    lucid_policy_fifo.decide(&s);
    s.now = 2000;
    assert_int_equal(lucid_policy_fifo.arrive(&s, 1), 0);
    lucid_policy_fifo.decide(&s);
    assert_int_equal(s.qlen, 1);
    lucid_backfill bf = {.cfg = {.mode = LUCID_BACKFILL_NONE, .margin = 1.2}, .estimate = est};
    lucid_eta_table table = {0};
    for (int k = 1; k <= 38; k++)
        assert_int_equal(lucid_eta_table_add_run(&table, 100, 100.0 * k), 0);
    /* With one estimate the two rules agree (ratios are durations / 100):
     * equal scores, and the ratio rule is kept on a tie. */
    assert_true(table.miss_ratio > 0);
    assert_true(fabs(table.miss_ratio - table.miss_duration) < 1e-9 * table.miss_ratio);
    /* A job estimated at 1000 s that ran 3000 s scores them, weighted by
     * its 2000 s past its estimate.  At 1000 s run: the ratio rule says
     * 1000 x median(ratios 1..38) = 19500, so 18500 s more; the duration
     * rule median(1000..3800) = 2400, so 1400 s; it had 2000.  At
     * sqrt(1000 x 3000) = 1732.05 s: ratios 2..38 -> 20000, durations
     * 1800..3800 -> 2800; it had 1267.95 s. */
    double r0 = table.miss_ratio, d0 = table.miss_duration, mid = sqrt(3e6);
    assert_int_equal(lucid_eta_table_add_run(&table, 1000, 3000), 0);
    double want_r = 2000 * (log(18500.0 / 2000) + log((20000 - mid) / (3000 - mid)));
    double want_d = 2000 * (log(2000.0 / 1400) + log((3000 - mid) / (2800 - mid)));
    assert_true(fabs(table.miss_ratio - r0 - want_r) < 1e-6);
    assert_true(fabs(table.miss_duration - d0 - want_d) < 1e-6);
    /* The duration rule has predicted better: R's end comes from the
     * durations >= 2000 (R has run 2000 s; the 39th run waits for the next
     * sort): 2000..3800, 19 of them; P10 at rank 1.8 = 2180, P50 2900, P90
     * at rank 16.2 = 3620.  So R ends at 2180 / 2900 / 3620, when W starts.
     * (By ratios >= 2000 / 1000 = 2 — 2..38, median 20 — R would run to
     * 20,000 s.) */
    assert_true(fabs(lucid_eta_table_duration(&table, 2000, 0.5) - 2900) < 1e-9);
    lucid_eta_plan plan = {0};
    lucid_eta out[1];
    assert_int_equal(lucid_eta_predict(&s, &bf, &table, &plan, 0, 1, -1, out), 0);
    EXPECT_ETA(&out[0], 2180, 2900, 3620);
    /* Had the ratio rule scored better, R would run to 20,000 s. */
    table.miss_duration = table.miss_ratio + 1;
    lucid_eta_invalidate(&plan);
    assert_int_equal(lucid_eta_predict(&s, &bf, &table, &plan, 0, 1, -1, out), 0);
    assert_int_equal(out[0].p50, 20000);
    /* A table without durations (runs added as bare ratios) keeps the ratio
     * rule: R's remaining time from ratios 2..38 (P50: 20 x 1000). */
    lucid_eta_table ratios = {0};
    for (int k = 1; k <= 38; k++)
        assert_int_equal(lucid_eta_table_add(&ratios, k), 0);
    assert_true(lucid_eta_table_duration(&ratios, 2000, 0.5) < 0);
    lucid_eta_invalidate(&plan);
    assert_int_equal(lucid_eta_predict(&s, &bf, &ratios, &plan, 0, 1, -1, out), 0);
    assert_int_equal(out[0].p50, 20000);
    lucid_eta_plan_free(&plan);
    lucid_eta_table_free(&ratios);
    lucid_eta_table_free(&table);
    lucid_sched_free(&s);
}

/* FIFO on `nodes` 8-GPU nodes at time 0: the first `nrun` of jobs[] start
 * (estimates est[]), the others wait in queue order. */
typedef struct gated_case {
    lucid_job jobs[4];
    lucid_jobrun run[4];
    lucid_sched s;
    int64_t reserved_at[4];
    lucid_backfill bf;
    lucid_eta_table table;
    lucid_eta_plan plan;
} gated_case;

static void gated_setup(gated_case *c, int32_t nodes, const int32_t *gpus, const double *est,
                        int n, int nrun)
{
    memset(c, 0, sizeof *c);
    for (int j = 0; j < n; j++) {
        c->jobs[j] = (lucid_job){.job_id = j + 1, .duration = 100000, .gpu_num = gpus[j],
                                 .workload = {.model = -1}};
        c->run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                   .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                   .remain = 100000, .rate = 1};
        c->reserved_at[j] = -1;
    }
    lucid_error err = {{0}};
    assert_int_equal(lucid_sched_init(&c->s, c->jobs, c->run, 0, nodes, 8,
                                      lucid_placer_find("consolidate"), &lucid_policy_fifo,
                                      lucid_semantics_fixed(), 1, &err),
                     0);
    c->s.now = 0;
    for (int j = 0; j < nrun; j++)
        assert_int_equal(lucid_policy_fifo.arrive(&c->s, j), 0);
    lucid_policy_fifo.decide(&c->s);
    for (int j = nrun; j < n; j++)
        assert_int_equal(lucid_policy_fifo.arrive(&c->s, j), 0);
    lucid_policy_fifo.decide(&c->s);
    assert_int_equal(c->s.qlen, (size_t)(n - nrun));
    c->bf = (lucid_backfill){.cfg = {.mode = LUCID_BACKFILL_EASY, .margin = 1.2},
                             .estimate = est, .reserved_at = c->reserved_at};
}

static void gated_predict(gated_case *c, int64_t window, int32_t min_gpus, lucid_eta *out)
{
    c->bf.cfg.window = window;
    c->bf.cfg.min_gpus = min_gpus;
    lucid_eta_invalidate(&c->plan);
    assert_int_equal(lucid_eta_predict(&c->s, &c->bf, &c->table, &c->plan, 0, c->s.qlen, -1, out),
                     0);
}

/* The two waiting jobs' predictions under (window, min_gpus): a and b as
 * P10, P50, P90. */
static void expect_gated(gated_case *c, int64_t window, int32_t min_gpus, const int64_t *a,
                         const int64_t *b, int line)
{
    lucid_eta out[2];
    gated_predict(c, window, min_gpus, out);
    expect_eta(&out[0], a[0], a[1], a[2], line);
    expect_eta(&out[1], b[0], b[1], b[2], line);
}
#define EXPECT_GATED(c, w, m, a, b) expect_gated((c), (w), (m), (a), (b), __LINE__)

static void gated_free(gated_case *c)
{
    lucid_eta_plan_free(&c->plan);
    lucid_eta_table_free(&c->table);
    lucid_sched_free(&c->s);
}

/* The backfill replay follows backfill_window (the decision pass's rule:
 * a job whose earliest start is beyond it gets no reservation, and a later
 * job that gets one passes it).  Two 8-GPU nodes at time 0: R1 (8 GPUs,
 * estimate 100) on n1, R2 (8 GPUs, 1000) on n2; A (16 GPUs, 100) then B
 * (8 GPUs, 2000) wait.  An empty ratio table answers the prior 0.25 / 1 /
 * 4: R1 ends at 25 / 100 / 400, R2 at 250 / 1000 / 4000; A runs 25 / 100 /
 * 400, B 500 / 2000 / 8000.
 *   Every job holding (no window): A at both nodes' end, 250 / 1000 /
 * 4000; B cannot run on n1 before A's reservation there (gaps 225, 900,
 * 3600 s, all shorter than its run), so after A: 275 / 1100 / 4400.
 *   Window 500 s: at P10 A's 250 is within it, the same as above.  At P50
 * A's 1000 is not: A holds nothing; B fits n1 at 100 (100-2100), within
 * the window: reserved; A then waits for n1 too: 2100.  At P90 likewise:
 * B at 400 (400-8400), A at 8400.  So A: 250 / 2100 / 8400, and B's starts
 * 275 / 100 / 400 are shown as the interval 100 / 275 / 400.  (The pass
 * itself: at 0, A's fit 1000 is past the window, B's 100 is not: B
 * reserved; at 100 B starts, A's next fit 2100 — as replayed.)
 *   A that holds a reservation already keeps it whatever the window: as
 * with no window. */
static void replay_follows_the_backfill_window(void **state)
{
    (void)state;
    gated_case c;
    const int32_t gpus[4] = {8, 8, 16, 8};
    const double est[4] = {100, 1000, 100, 2000};
    gated_setup(&c, 2, gpus, est, 4, 2);
    const int64_t a_all[3] = {250, 1000, 4000}, b_all[3] = {275, 1100, 4400};
    EXPECT_GATED(&c, 0, 0, a_all, b_all);
    EXPECT_GATED(&c, 500, 0, ((const int64_t[]){250, 2100, 8400}),
                 ((const int64_t[]){100, 275, 400}));
    c.reserved_at[2] = 1000; /* A holds one */
    EXPECT_GATED(&c, 500, 0, a_all, b_all);
    gated_free(&c);
}

/* ... and backfill_min_gpus: one 8-GPU node, R (8 GPUs, estimate 100)
 * runs; A (4 GPUs, 100) then B (8 GPUs, 100) wait.  R ends at 25 / 100 /
 * 400, each waiting job runs 25 / 100 / 400.  Every job holding: A at R's
 * end, B after A (A holds half the node): 25 / 100 / 400 and 50 / 200 /
 * 800.  With min_gpus 8, A (4 GPUs) holds nothing and B does: B at R's end,
 * A after it: A 50 / 200 / 800, B 25 / 100 / 400.  (The pass: at 0 A is
 * passed over, B reserved; at R's end B starts first, A waits for it.) */
static void replay_follows_backfill_min_gpus(void **state)
{
    (void)state;
    gated_case c;
    const int32_t gpus[3] = {8, 4, 8};
    const double est[3] = {100, 100, 100};
    gated_setup(&c, 1, gpus, est, 3, 1);
    const int64_t first[3] = {25, 100, 400}, second[3] = {50, 200, 800};
    EXPECT_GATED(&c, 0, 0, first, second);
    EXPECT_GATED(&c, 0, 8, second, first);
    EXPECT_GATED(&c, 0, 4, first, second); /* 4 GPUs meet a minimum of 4: as with none */
    gated_free(&c);
}

/* FIFO, one 8-GPU node: job 1 runs 0-10000 (estimated exactly), job 2
 * (8 GPUs) arrives at 1000 and waits until 10000.  With eta_hourly it is
 * predicted again at 3600 and 7200 (the whole hours while it waits). */
static void hourly_repredictions(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,8,0,10000\n"
                 "2,a,8,1000,100\n");
    const double est[] = {10000, 100};
    use_backfill(&t, est, LUCID_BACKFILL_NONE, 1.2);
    t.cfg.eta = 1;
    t.cfg.eta_hourly = 1;
    simtest_run_ok(&t, "fifo");
    const lucid_sim_result *r = &t.result;
    /* At 1000 job 1 has run 0.1 of its estimate: the prior's 0.25 / 1 / 4
     * (all above 0.1): ends 2500 / 10000 / 40000. */
    assert_int_equal(r->eta_at[1], 1000);
    assert_int_equal(r->eta_p10[1], 2500);
    assert_int_equal(r->eta_p50[1], 10000);
    assert_int_equal(r->eta_p90[1], 40000);
    /* At 3600 it has run 0.36: the P10 ratio 0.25 is below that, so
     * 0.36 x 1.1 = 0.396 (3960); at 7200, 0.72 x 1.1 = 0.792 (7920). */
    assert_int_equal(r->neta_hourly, 2);
    const lucid_eta_row *h = r->eta_hourly;
    assert_int_equal(h[0].job, 1);
    assert_int_equal(h[0].at, 3600);
    assert_int_equal(h[0].p10, 3960);
    assert_int_equal(h[0].p50, 10000);
    assert_int_equal(h[0].p90, 40000);
    assert_int_equal(h[1].job, 1);
    assert_int_equal(h[1].at, 7200);
    assert_int_equal(h[1].p10, 7920);
    assert_int_equal(h[1].p50, 10000);
    assert_int_equal(h[1].p90, 40000);
    simtest_free(&t);
    /* Without eta_hourly: the same prediction at submission, no rows. */
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,8,0,10000\n"
                 "2,a,8,1000,100\n");
    use_backfill(&t, est, LUCID_BACKFILL_NONE, 1.2);
    t.cfg.eta = 1;
    simtest_run_ok(&t, "fifo");
    assert_int_equal(t.result.eta_p10[1], 2500);
    assert_int_equal(t.result.neta_hourly, 0);
    simtest_free(&t);
}

/* A running job's time left in the profile checks below: spread over
 * 1..900 s by its index. */
static int64_t spread_remaining(void *ctx, const lucid_sched *s, int32_t job)
{
    (void)ctx;
    (void)s;
    return 1 + (job * 379) % 900;
}

/* The profile applies the consolidated placer itself, on the window's free
 * counts, instead of on its hypothetical cluster (the placer's own code):
 * both must choose the same start, nodes and GPU counts for every job, and
 * at the first segment (a start now) the same GPUs.  A copy of the placer's
 * ops is a different placer to the profile, so it takes the general path.
 * 400 random clusters (6 nodes of 8 GPUs, one of them sometimes lent away)
 * with random running jobs, 40 random placements reserved in each. */
static void direct_consolidation_matches_the_placer(void **state)
{
    (void)state;
    const lucid_placer_ops *fast = lucid_placer_find("consolidate");
    lucid_placer_ops general = *fast;
    enum { NJOBS = 60 };
    static const int32_t sizes[] = {1, 1, 2, 3, 4, 6, 8, 8, 12, 16, 20, 24, 40};
    lucid_rng rng;
    lucid_rng_seed(&rng, 42);
    int compared = 0, now_fits = 0, later_fits = 0, multi = 0;
    for (int round = 0; round < 400; round++) {
        lucid_job jobs[NJOBS];
        lucid_jobrun run[NJOBS];
        for (int j = 0; j < NJOBS; j++) {
            int32_t g = sizes[lucid_rng_below(&rng, sizeof sizes / sizeof sizes[0])];
            jobs[j] = (lucid_job){.job_id = j + 1, .duration = 1000, .gpu_num = g,
                                  .workload = {.model = -1}};
            run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                    .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                    .remain = 1000, .rate = 1};
        }
        lucid_sched s;
        lucid_error err = {{0}};
        assert_int_equal(lucid_sched_init(&s, jobs, run, 0, 6, 8, fast, &lucid_policy_sjf,
                                          lucid_semantics_fixed(), 1, &err),
                         0);
        s.now = 0;
        /* Running jobs: the small ones the policy starts (they fill nodes
         * unevenly); the rest are the placements tried. */
        for (int32_t j = 0; j < 20; j++)
            if (jobs[j].gpu_num <= 8 && lucid_rng_below(&rng, 2))
                lucid_sched_try_start(&s, j);
        if (lucid_rng_below(&rng, 3) == 0)
            for (int32_t i = 0; i < s.cluster.nslots; i++)
                if (s.cluster.nodes[i].free == 8) {
                    lucid_cluster_remove_node(&s.cluster, i);
                    break;
                }
        s.now = 100;
        lucid_profile a = {0}, b = {0};
        assert_int_equal(lucid_profile_build(&a, &s, spread_remaining, NULL), 0);
        assert_int_equal(lucid_profile_build(&b, &s, spread_remaining, NULL), 0);
        for (int32_t j = 20; j < 60; j++) {
            int64_t dur = 1 + (int64_t)lucid_rng_below(&rng, 1200);
            int64_t from = 100 + (int64_t)lucid_rng_below(&rng, 3) * (int64_t)lucid_rng_below(&rng, 400);
            int na = 0, nb = 0;
            s.placer = fast;
            long ka = lucid_profile_fit(&a, &s, jobs[j].gpu_num, dur, from, &na);
            s.placer = &general;
            long kb = lucid_profile_fit(&b, &s, jobs[j].gpu_num, dur, from, &nb);
            assert_int_equal(ka, kb);
            compared++;
            if (ka < 0)
                continue;
            assert_int_equal(a.times[ka], b.times[kb]);
            assert_int_equal(na, nb);
            for (int i = 0; i < na; i++) {
                assert_int_equal(a.alloc[i].node, b.alloc[i].node);
                assert_int_equal(a.alloc[i].gpus, b.alloc[i].gpus);
                assert_int_equal(__builtin_popcountll(a.alloc[i].mask), a.alloc[i].gpus);
                if (ka == 0)
                    assert_true(a.alloc[i].mask == b.alloc[i].mask);
            }
            now_fits += ka == 0;
            later_fits += ka > 0;
            multi += na > 1;
            assert_int_equal(lucid_profile_reserve(&a, ka, dur, na), 0);
            assert_int_equal(lucid_profile_reserve(&b, kb, dur, nb), 0);
        }
        s.placer = fast;
        lucid_profile_free(&a);
        lucid_profile_free(&b);
        lucid_sched_free(&s);
    }
    /* The cases all occurred: starts now and later, jobs over several nodes. */
    assert_true(compared == 400 * 40);
    assert_true(now_fits > 100 && later_fits > 1000 && multi > 500);
}

static int64_t paired_remaining(void *ctx, const lucid_sched *s, int32_t job)
{
    (void)s;
    return ((const int64_t *)ctx)[job];
}

/* Where whole nodes come free: four 8-GPU nodes, each with two 4-GPU jobs
 * (the consolidated placer pairs them: jobs 0-1 on n0, 2-3 on n1, ...),
 * ending at 10 and 50 (n0), 20 and 30 (n1), 40 and 60 (n2), 5 and 70
 * (n3).  For a long run: 4 GPUs fit at 5 (n3's first end), 8 at 30 (n1
 * whole), 12 at 30 (n1 whole and 4 on n0), 16 at 50 (n0 and n1 whole), 24
 * at 60, 32 at 70.  The segments before a job's start are ruled out by
 * counting whole nodes (fit_at), the start itself found by the placer. */
static void whole_nodes_rule_out_starts_before_them(void **state)
{
    (void)state;
    enum { N = 8 };
    lucid_job jobs[N];
    lucid_jobrun run[N];
    for (int j = 0; j < N; j++) {
        jobs[j] = (lucid_job){.job_id = j + 1, .duration = 1000, .gpu_num = 4,
                              .workload = {.model = -1}};
        run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                .remain = 1000, .rate = 1};
    }
    lucid_sched s;
    lucid_error err = {{0}};
    assert_int_equal(lucid_sched_init(&s, jobs, run, 0, 4, 8, lucid_placer_find("consolidate"),
                                      &lucid_policy_fifo, lucid_semantics_fixed(), 1, &err),
                     0);
    s.now = 0;
    for (int32_t j = 0; j < N; j++)
        assert_true(lucid_sched_try_start(&s, j));
    for (int32_t j = 0; j < N; j++)
        assert_int_equal(s.allocs[run[j].alloc_off].node, j / 2);
    int64_t left[N] = {10, 50, 20, 30, 40, 60, 5, 70};
    static const int32_t gpus[] = {4, 8, 12, 16, 24, 32, 40};
    static const int64_t at[] = {5, 30, 30, 50, 60, 70, -1};
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        lucid_profile p = {0};
        assert_int_equal(lucid_profile_build(&p, &s, paired_remaining, left), 0);
        int nalloc = 0;
        long k = lucid_profile_fit(&p, &s, gpus[i], 100000, 0, &nalloc);
        if (at[i] < 0) {
            assert_int_equal(k, -1);
        } else {
            assert_true(k >= 0);
            assert_int_equal(p.times[k], at[i]);
            int32_t placed = 0;
            for (int a = 0; a < nalloc; a++)
                placed += p.alloc[a].gpus;
            assert_int_equal(placed, gpus[i]);
        }
        lucid_profile_free(&p);
    }
    lucid_sched_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_without_backfill_blocks),
        cmocka_unit_test(easy_backfills_only_what_does_not_delay_the_head),
        cmocka_unit_test(conservative_same_on_a_single_blocker),
        cmocka_unit_test(reservation_moves_when_the_estimate_is_wrong),
        cmocka_unit_test(window_passes_over_a_far_reservation),
        cmocka_unit_test(window_keeps_a_reservation_that_moves_beyond_it),
        cmocka_unit_test(easy_reserves_for_the_first_blocked_job),
        cmocka_unit_test(min_gpus_reserves_for_the_large_job_only),
        cmocka_unit_test(predictions_at_submission),
        cmocka_unit_test(ratio_table_conditions_on_elapsed),
        cmocka_unit_test(lucid_replay_packs_and_passes_over),
        cmocka_unit_test(lucid_replay_head_of_line_without_packing),
        cmocka_unit_test(lucid_replay_packs_onto_a_running_job_whose_partner_ended),
        cmocka_unit_test(submitters_running_jobs_end_at_their_levels),
        cmocka_unit_test(later_arrivals_overtake_in_the_p90),
        cmocka_unit_test(hourly_repredictions),
        cmocka_unit_test(overrun_job_ends_by_durations),
        cmocka_unit_test(replay_follows_the_backfill_window),
        cmocka_unit_test(replay_follows_backfill_min_gpus),
        cmocka_unit_test(direct_consolidation_matches_the_placer),
        cmocka_unit_test(whole_nodes_rule_out_starts_before_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
