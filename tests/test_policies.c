/* test_policies.c — hand-computed schedules for every policy, ties
 * included, in both semantics (expected values worked out in the comments
 * from spec §4, not taken from the program). */
#include "exptest.h"
#include "simtest.h"

/* One node of 8 GPUs. */
static const char *fifo_trace = "job_id,vc,gpu_num,submit_time,duration\n"
                                "1,a,8,0,10\n"
                                "2,a,4,1,5\n"
                                "3,a,2,2,3\n"
                                "4,a,8,3,1\n"
                                "5,a,1,4,1\n";

static void fifo_blocks_at_head(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, fifo_trace);
    simtest_run_ok(&t, "fifo");
    /* 1 runs 0-10; at 10 jobs 2 (4 GPUs) and 3 (2 GPUs) start; 4 needs the
     * whole node: 3 ends 13, 2 ends 15 -> 4 runs 15-16; 5 waits behind 4. */
    EXPECT_JOB(&t, 1, 0, 10, 0);
    EXPECT_JOB(&t, 2, 10, 15, 9);
    EXPECT_JOB(&t, 3, 10, 13, 8);
    EXPECT_JOB(&t, 4, 15, 16, 12);
    EXPECT_JOB(&t, 5, 16, 17, 12);
    simtest_free(&t);
}

static void sjf_orders_by_duration_ties_by_arrival(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, fifo_trace);
    simtest_run_ok(&t, "sjf");
    /* At 10 the queue is 4 (d1), 5 (d1, later), 3 (d3), 2 (d5): 4 takes the
     * node 10-11, 5 blocks; at 11: 5, 3, 2 all start. */
    EXPECT_JOB(&t, 4, 10, 11, 7);
    EXPECT_JOB(&t, 5, 11, 12, 7);
    EXPECT_JOB(&t, 3, 11, 14, 9);
    EXPECT_JOB(&t, 2, 11, 16, 10);
    simtest_free(&t);
}

static void qssf_newcomers_in_gpu_order_then_priority(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,4,0,10\n"
                 "2,a,4,1,5\n"
                 "3,a,2,1,5\n"
                 "4,a,2,2,1\n");
    /* priorities: 2 -> 10 x 4 = 40, 3 -> 100 x 2 = 200, 4 -> -5 counts as 1000 x 2 */
    const double est[] = {10, 10, 100, -5};
    simtest_estimates(&t, est);
    simtest_run_ok(&t, "qssf");
    /* At 1 only newcomers wait: GPU order puts 3 first; it fits in the 4 free
     * GPUs, then 2 (4 GPUs) does not.  Priority order would have started 2. */
    EXPECT_JOB(&t, 1, 0, 10, 0);
    EXPECT_JOB(&t, 3, 1, 6, 0);
    /* At 2: old jobs wait -> priority order 2 (40), 4 (2000): 2 does not fit
     * (2 free), 4 is behind it.  At 6, 3 ends: 2 starts (4 free), then 4 does
     * not fit (0 free) until 1 ends at 10. */
    EXPECT_JOB(&t, 2, 6, 11, 5);
    EXPECT_JOB(&t, 4, 10, 11, 8);
    simtest_free(&t);
}

static const char *preempt_trace = "job_id,vc,gpu_num,submit_time,duration\n"
                                   "1,a,8,0,100\n"
                                   "2,a,8,10,20\n";

static void srtf_preempts_with_overhead(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, preempt_trace);
    t.cfg.sem = lucid_semantics_reference();
    simtest_run_ok(&t, "srtf");
    /* At 10: 2 (remain 20) beats 1 (remain 90): 1 preempted, remain 90+40.
     * Reference ends one second late: 2 ends 10+20+1 = 31; 1 restarts at 31
     * and ends 31+130+1 = 162; its queue is 31-10 = 21. */
    EXPECT_JOB(&t, 2, 10, 31, 0);
    EXPECT_JOB(&t, 1, 0, 162, 21);
    assert_int_equal(simtest_job(&t, 1)->ckpt_times, 1);
    simtest_free(&t);

    simtest_load(&t, 1, preempt_trace);
    t.cfg.sem = lucid_semantics_fixed();
    simtest_run_ok(&t, "srtf");
    /* Fixed: no late second: 2 ends 30, 1 restarts 30 and ends 160; its
     * queue is the 20 s it waited plus the 40 s checkpoint cost it pays
     * again (comparable accounting), = JCT 160 - duration 100. */
    EXPECT_JOB(&t, 2, 10, 30, 0);
    EXPECT_JOB(&t, 1, 0, 160, 60);
    simtest_free(&t);

    simtest_load(&t, 1, preempt_trace);
    t.cfg.sem = lucid_semantics_fixed();
    t.cfg.sem.queue_waits_only = 1; /* the reference's accounting: waits only */
    simtest_run_ok(&t, "srtf");
    EXPECT_JOB(&t, 1, 0, 160, 20);
    simtest_free(&t);
}

static void tiresias_demotes_after_threshold(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,8,0,3000\n"
                 "2,a,8,10,20\n");
    t.cfg.sem = lucid_semantics_reference();
    simtest_run_ok(&t, "tiresias");
    /* 1 attains 8 GPU-s per second: 17,760 at 2220 (high queue), 18,240 at
     * 2280 (low).  At 2280 job 2 (high) takes the node, 1 is preempted with
     * remain 3000-2280+40 = 760.  2 ends 2280+20+1 = 2301; the next decision
     * is 2340: 1 restarts (queue 60) and ends 2340+760+1 = 3101. */
    EXPECT_JOB(&t, 2, 2280, 2301, 2270);
    EXPECT_JOB(&t, 1, 0, 3101, 60);
    simtest_free(&t);

    /* Without the demotion, a waiting job only starts at a multiple of 60. */
    simtest_load(&t, 1, preempt_trace);
    t.cfg.sem = lucid_semantics_reference();
    simtest_run_ok(&t, "tiresias");
    EXPECT_JOB(&t, 1, 0, 101, 0);
    EXPECT_JOB(&t, 2, 120, 141, 110);
    simtest_free(&t);
}

/* Every workload of these traces is light (sharing score 0). */
static lucid_sharing light_workloads;

static void make_light(simtest *t)
{
    static const char *const models[] = {"M1", "M2", "NeuMF"};
    free(light_workloads.rows);
    light_workloads.rows = calloc(3, sizeof *light_workloads.rows);
    light_workloads.count = 0;
    int32_t d = lucid_strtab_find(t->trace.strings, "D");
    for (int i = 0; i < 3; i++) {
        int32_t m = lucid_strtab_find(t->trace.strings, models[i]);
        if (m >= 0)
            light_workloads.rows[light_workloads.count++] =
                (lucid_sharing_row){.key = {m, d, 32, 0}, .label = 0};
    }
    t->in.sharing = &light_workloads;
}

/* A pair table with one measured pair (model_a, model_b) at `speed` each. */
static void one_pair(const simtest *t, const char *model_a, const char *model_b, double speed,
                     lucid_pairs *pairs)
{
    pairs->rows = calloc(1, sizeof *pairs->rows);
    pairs->count = 1;
    int32_t a = lucid_strtab_find(t->trace.strings, model_a),
            b = lucid_strtab_find(t->trace.strings, model_b),
            d = lucid_strtab_find(t->trace.strings, "D");
    pairs->rows[0] = (lucid_pair_row){{a, d, 32, 0}, {b, d, 32, 0}, speed, speed, 50, 2000};
}

/* Lucid without profiling (GPU limit 1 x 1 = 1 keeps these 4-GPU jobs out)
 * and with packing on from step 0 (no forecast). */
static void lucid_setup(simtest *t, const char *csv, const double *est)
{
    simtest_load(t, 1, csv);
    simtest_estimates(t, est);
    make_light(t);
    t->cfg.lucid.profiler_nodes = 1;
    t->cfg.lucid.profiler_factor = 1;
    t->cfg.lucid.profiler_autoscale = 0;
}

static void lucid_packs_and_recovers(void **state)
{
    (void)state;
    const char *csv = "job_id,vc,gpu_num,submit_time,duration,model,dataset,batchsize,amp,gmem\n"
                      "1,a,4,0,100,M1,D,32,0,1000\n"
                      "2,a,4,0,100,M1,D,32,0,24000\n" /* too big to share with anyone */
                      "3,a,4,1,50,M2,D,32,0,1000\n";
    const double est[] = {100, 100, 50};
    for (int reference = 1; reference >= 0; reference--) {
        simtest t;
        lucid_setup(&t, csv, est);
        t.cfg.sem = reference ? lucid_semantics_reference() : lucid_semantics_fixed();
        lucid_pairs pairs = {0};
        one_pair(&t, "M2", "M1", 0.5, &pairs);
        t.in.pairs = &pairs;
        simtest_run_ok(&t, "lucid");
        /* Jobs 1 and 2 fill the node at 0.  At 1, job 3 (priority 200 <=
         * 2 x 400, same GPU count, light) shares job 1's GPUs; both run at 0.5.
         * Job 3: 50 s of work at 0.5 = 100 s: ends 1+100 (+1 reference).
         * Job 1: 99 left after step 1; at 0.5 until 3 ends, then full speed. */
        if (reference) {
            EXPECT_JOB(&t, 3, 1, 102, 0);
            /* 99 - 101 x 0.5 = 48.5 left after step 102 -> 49 more -> ends 152 */
            EXPECT_JOB(&t, 1, 0, 152, 0);
            EXPECT_JOB(&t, 2, 0, 101, 0);
            assert_int_equal(t.result.packed_at_end, 1); /* job 3 ended packed */
        } else {
            EXPECT_JOB(&t, 3, 1, 101, 0);
            /* 99 - 100 x 0.5 = 49 left after step 101 -> ends 150 */
            EXPECT_JOB(&t, 1, 0, 150, 0);
            EXPECT_JOB(&t, 2, 0, 100, 0);
        }
        assert_int_equal(simtest_job(&t, 3)->packed_with, 0); /* index of job 1 */
        free(pairs.rows);
        simtest_free(&t);
    }
}

static void lucid_partner_bug_only_in_reference(void **state)
{
    (void)state;
    const char *csv = "job_id,vc,gpu_num,submit_time,duration,model,dataset,batchsize,amp,gmem\n"
                      "1,a,8,0,10,NeuMF,D,32,0,1000\n"
                      "3,a,8,1,100,M2,D,32,0,1000\n";
    const double est[] = {100, 10};
    for (int reference = 1; reference >= 0; reference--) {
        simtest t;
        lucid_setup(&t, csv, est);
        t.cfg.sem = reference ? lucid_semantics_reference() : lucid_semantics_fixed();
        lucid_pairs pairs = {0};
        t.in.pairs = &pairs;
        simtest_run_ok(&t, "lucid");
        /* NeuMF is outside the pair table: both keep speed 1.0. */
        if (reference) {
            EXPECT_JOB(&t, 1, 0, 11, 0);
            EXPECT_JOB(&t, 3, 1, 102, 0);
        } else {
            EXPECT_JOB(&t, 1, 0, 10, 0);
            EXPECT_JOB(&t, 3, 1, 101, 0);
        }
        simtest_free(&t);
    }
    /* With a measured slowdown, the partner of a first-ending target keeps
     * its slowed speed in the reference, and recovers when fixed. */
    const char *csv2 = "job_id,vc,gpu_num,submit_time,duration,model,dataset,batchsize,amp,gmem\n"
                       "1,a,8,0,10,M1,D,32,0,1000\n"
                       "3,a,8,1,100,M2,D,32,0,1000\n";
    for (int reference = 1; reference >= 0; reference--) {
        simtest t;
        lucid_setup(&t, csv2, est);
        t.cfg.sem = reference ? lucid_semantics_reference() : lucid_semantics_fixed();
        lucid_pairs pairs = {0};
        one_pair(&t, "M1", "M2", 0.5, &pairs);
        t.in.pairs = &pairs;
        simtest_run_ok(&t, "lucid");
        if (reference) {
            /* 1: 9 left after step 1, 18 steps at 0.5 -> done after 19, ends 20.
             * 3 stays at 0.5: 200 steps from 2 -> ends 202. */
            EXPECT_JOB(&t, 1, 0, 20, 0);
            EXPECT_JOB(&t, 3, 1, 202, 0);
        } else {
            /* 1 ends 19; 3 has 100 - 18 x 0.5 = 91 left -> ends 19 + 91 = 110. */
            EXPECT_JOB(&t, 1, 0, 19, 0);
            EXPECT_JOB(&t, 3, 1, 110, 0);
        }
        free(pairs.rows);
        simtest_free(&t);
    }
}

static void lucid_packing_rules_refuse(void **state)
{
    (void)state;
    /* Each newcomer breaks one rule, so none is packed and each waits for
     * the 8-GPU job to end at 101 (reference) — checked in fixed mode: 100. */
    const char *csv = "job_id,vc,gpu_num,submit_time,duration,model,dataset,batchsize,amp,gmem\n"
                      "1,a,8,0,100,M1,D,32,0,1000\n"
                      "2,a,4,1,10,M1,D,32,0,1000\n"    /* different GPU count */
                      "3,a,8,2,10,M1,D,32,0,24000\n";  /* memory: 1000 + 24000 > 24576 */
    const double est[] = {100, 10, 10};
    simtest t;
    lucid_setup(&t, csv, est);
    simtest_run_ok(&t, "lucid");
    /* Priority order 2 (40) then 3 (80): 2 starts at 100, 3 needs the whole node. */
    EXPECT_JOB(&t, 2, 100, 110, 99);
    EXPECT_JOB(&t, 3, 110, 120, 108);
    simtest_free(&t);
    /* Priority ratio: 8 x 300 = 2400 > 2 x (8 x 100) -> not packed. */
    const char *csv2 = "job_id,vc,gpu_num,submit_time,duration,model,dataset,batchsize,amp,gmem\n"
                       "1,a,8,0,100,M1,D,32,0,1000\n"
                       "2,a,8,1,10,M1,D,32,0,1000\n";
    const double est2[] = {100, 300};
    lucid_setup(&t, csv2, est2);
    simtest_run_ok(&t, "lucid");
    EXPECT_JOB(&t, 2, 100, 110, 99);
    simtest_free(&t);
}

/* Lucid's profiler as these tests run it: one 8-GPU profiling node, jobs
 * of up to 8 GPUs, a 100-s limit, no autoscaling. */
static void one_profiling_node(simtest *t)
{
    t->cfg.lucid.profiler_nodes = 1;
    t->cfg.lucid.profiler_factor = 8;
    t->cfg.lucid.profiler_time_limit = 100;
    t->cfg.lucid.profiler_autoscale = 0;
}

static void lucid_profiler_then_main_pass(void **state)
{
    (void)state;
    const char *csv = "job_id,vc,gpu_num,submit_time,duration\n"
                      "1,a,1,0,50\n"
                      "2,a,8,0,500\n";
    const double est[] = {50, 500};
    for (int reference = 1; reference >= 0; reference--) {
        simtest t;
        simtest_load(&t, 1, csv);
        simtest_estimates(&t, est);
        t.cfg.sem = reference ? lucid_semantics_reference() : lucid_semantics_fixed();
        one_profiling_node(&t);
        simtest_run_ok(&t, "lucid");
        /* Least GPU first: 1 (1 GPU) profiles 0-50 and finishes there; 2
         * needs the whole profiling node: 50-150 (limit 100), profqueue 50. */
        EXPECT_JOB(&t, 1, 0, 50, 0);
        assert_int_equal(simtest_job(&t, 1)->finished_in_profiler, 1);
        assert_int_equal(simtest_job(&t, 2)->profiled, 1);
        assert_int_equal(simtest_job(&t, 2)->finished_in_profiler, 0);
        if (reference) /* rejoins at submit: main start 0, ends 0+500+1, queue 50 + 0 */
            EXPECT_JOB(&t, 2, 0, 501, 50);
        else /* joins the main queue at 150, restarts: ends 650; queue = all
              * of 0-150 (50 s waiting for the profiler, 100 s profiling
              * run discarded by the restart) */
            EXPECT_JOB(&t, 2, 150, 650, 150);
        simtest_free(&t);
    }
}

/* [lucid] profiler_overhead: a job that leaves the profiler keeps its GPUs
 * that much longer and reaches main's queue that much later (lucidd's
 * limit checked per tick, Slurm's requeue and epilog); a job that ends in
 * the profiler frees them at its end.  One 8-GPU profiling node, limit 100,
 * overhead 7; main has two nodes.  Least GPU first: 1 (1 GPU, 50 s) and 3
 * (1 GPU, 300 s) profile from 0; 1 ends there at 50; 3 leaves at 100 + 7 =
 * 107 and runs its 300 s on main, 107-407 (queue 107: waiting and the
 * discarded run).  2 (8 GPUs) needs the whole node: 107-214, then main
 * 214-714 (queue 214).  Overhead 0 is the schedule before: 3 on main
 * 100-400, 2 profiled 100-200, main 200-700. */
static void lucid_profiler_overhead_holds_the_gpus(void **state)
{
    (void)state;
    const char *csv = "job_id,vc,gpu_num,submit_time,duration\n"
                      "1,a,1,0,50\n"
                      "2,a,8,0,500\n"
                      "3,a,1,0,300\n";
    const double est[] = {50, 500, 300};
    for (int overhead = 7; overhead >= 0; overhead -= 7) {
        simtest t;
        simtest_load(&t, 2, csv);
        simtest_estimates(&t, est);
        t.cfg.sem = lucid_semantics_fixed();
        one_profiling_node(&t);
        t.cfg.lucid.profiler_overhead = overhead;
        simtest_run_ok(&t, "lucid");
        EXPECT_JOB(&t, 1, 0, 50, 0);
        assert_int_equal(simtest_job(&t, 1)->finished_in_profiler, 1);
        EXPECT_JOB(&t, 3, 100 + overhead, 400 + overhead, 100 + overhead);
        int64_t i = lucid_trace_find(&t.trace, 2);
        assert_int_equal(t.result.prof[i].start, 100 + overhead);
        assert_int_equal(t.result.prof[i].end, 200 + 2 * overhead);
        EXPECT_JOB(&t, 2, 200 + 2 * overhead, 700 + 2 * overhead, 200 + 2 * overhead);
        simtest_free(&t);
    }
}

/* The key: seconds 0..86400, unset by default (then not written, and 0:
 * the reference's schedule; tests/cli_simulate.sh runs it). */
static void lucid_profiler_overhead_key(void **state)
{
    (void)state;
    exptest_refused("[lucid]\nprofiler_overhead = -1\n",
                    "exp.ini:2: [lucid] profiler_overhead: -1 out of range 0..86400");
    exptest_refused("[lucid]\nprofiler_overhead = 2.5\n", "'2.5' is not an integer");
    lucid_experiment exp;
    lucid_error err = {{0}};
    assert_int_equal(exptest_load(&exp, "[lucid]\nprofiler_time_limit = 7\n", &err), 0);
    assert_null(exp.profiler_overhead);
    lucid_experiment_free(&exp);
    assert_int_equal(exptest_load(&exp, "[lucid]\nprofiler_overhead = 2\n", &err), 0);
    assert_string_equal(exp.profiler_overhead, "2");
    lucid_experiment_free(&exp);
}

/* The profiling pass hands back the working records of jobs that have left
 * the profiler (profiler.c); a job still waiting there must keep its own.
 * One 8-GPU profiling node; a 1-GPU job of 50 s arrives every 10 s from 0
 * to 99,990 (10,000 jobs: five run at any time, each finishes in the
 * profiler), and at 60,005 a 4-GPU job that needs 4 free GPUs: least GPU
 * first, every newcomer takes a freed GPU before it, so it waits until the
 * flood ends — at 100,000 the job of 99,950 ends, four are busy, it starts:
 * profiled 100,000-100,100 (limit 100), then 1,000 s on the main cluster. */
static void lucid_profiler_keeps_waiting_job(void **state)
{
    (void)state;
    enum { FLOOD = 10000 };
    size_t cap = 64 + (FLOOD + 1) * 32, len = 0;
    char *csv = malloc(cap);
    double *est = malloc((FLOOD + 1) * sizeof *est);
    assert_true(csv && est);
    len += (size_t)snprintf(csv + len, cap - len, "job_id,vc,gpu_num,submit_time,duration\n");
    for (int k = 0, row = 0; k < FLOOD; k++) {
        len += (size_t)snprintf(csv + len, cap - len, "%d,a,1,%d,50\n", k + 1, 10 * k);
        est[row++] = 50;
        if (10 * k == 60000) {
            len += (size_t)snprintf(csv + len, cap - len, "100000,a,4,60005,1000\n");
            est[row++] = 1000;
        }
    }
    simtest t;
    simtest_load(&t, 1, csv);
    simtest_estimates(&t, est);
    t.cfg.sem = lucid_semantics_fixed();
    one_profiling_node(&t);
    simtest_run_ok(&t, "lucid");
    for (int k = 0; k < FLOOD; k++) {
        EXPECT_JOB(&t, k + 1, 10 * k, 10 * k + 50, 0);
        assert_int_equal(simtest_job(&t, k + 1)->finished_in_profiler, 1);
    }
    int64_t i = lucid_trace_find(&t.trace, 100000);
    assert_int_equal(t.result.prof[i].start, 100000);
    assert_int_equal(t.result.prof[i].end, 100100);
    assert_int_equal(simtest_job(&t, 100000)->profiled, 1);
    assert_int_equal(simtest_job(&t, 100000)->finished_in_profiler, 0);
    /* joins the main queue at 100,100 and runs its whole 1,000 s there;
     * queue = its profiler wait, 100,000 - 60,005, plus its 100 s
     * profiling run, discarded by the restart */
    EXPECT_JOB(&t, 100000, 100100, 101100, 40095);
    simtest_free(&t);
    free(csv);
    free(est);
}

static void oversized_jobs_refused_or_skipped(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, "job_id,vc,gpu_num,submit_time,duration\n1,a,4,0,5\n2,a,16,1,5\n");
    lucid_error err = {{0}};
    assert_int_equal(simtest_run(&t, "fifo", &err), -1);
    assert_non_null(strstr(err.msg, "trace line 3: job 2 asks for 16 GPUs but VC a has only 8"));
    t.cfg.skip_oversized = 1;
    simtest_run_ok(&t, "fifo");
    EXPECT_JOB(&t, 1, 0, 5, 0);
    assert_int_equal(t.result.excluded[1], 1);
    simtest_free(&t);
}

static void datetime_submit_times(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,8,2020-09-01 00:00:05,10\n"
                 "2,a,8,2020-09-01 00:00:06,10\n");
    t.cfg.start = -1; /* midnight before the first job */
    simtest_run_ok(&t, "fifo");
    /* 2020-09-01 00:00:00 UTC = 1598918400 s since 1970. */
    EXPECT_JOB(&t, 1, 1598918405, 1598918415, 0);
    EXPECT_JOB(&t, 2, 1598918415, 1598918425, 9);
    simtest_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_blocks_at_head),
        cmocka_unit_test(sjf_orders_by_duration_ties_by_arrival),
        cmocka_unit_test(qssf_newcomers_in_gpu_order_then_priority),
        cmocka_unit_test(srtf_preempts_with_overhead),
        cmocka_unit_test(tiresias_demotes_after_threshold),
        cmocka_unit_test(lucid_packs_and_recovers),
        cmocka_unit_test(lucid_partner_bug_only_in_reference),
        cmocka_unit_test(lucid_packing_rules_refuse),
        cmocka_unit_test(lucid_profiler_then_main_pass),
        cmocka_unit_test(lucid_profiler_overhead_holds_the_gpus),
        cmocka_unit_test(lucid_profiler_overhead_key),
        cmocka_unit_test(lucid_profiler_keeps_waiting_job),
        cmocka_unit_test(oversized_jobs_refused_or_skipped),
        cmocka_unit_test(datetime_submit_times),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    free(light_workloads.rows);
    return failed;
}
