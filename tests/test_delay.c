/* test_delay.c — the comparable metrics (docs/semantics.md, "Queueing
 * delay and delay"): every policy on one three-job trace, the expected
 * start, end, queue, delay = JCT - duration and profiler time of each job
 * worked out by hand in the comments from spec §4, in the fixed semantics
 * (comparable accounting) and, where the accounting differs, in the
 * reference's (waiting only); then the summary's averages and the
 * jobs-<policy>.csv row of Lucid's profiled and restarted job. */
#include <stdio.h>

#include "simtest.h"

/* One VC "a" of one node (8 GPUs). */
static const char *trace3 = "job_id,vc,gpu_num,submit_time,duration\n"
                            "1,a,8,0,100\n"
                            "2,a,8,10,20\n"
                            "3,a,4,20,15\n";

typedef struct want {
    int64_t id, start, end;
    double queue;
    int64_t profiler_s; /* -1: not profiled */
} want;

/* Runs `policy` over trace3 with estimates est (NULL: true durations) and
 * checks every job, delay = end - submit - duration included, and the
 * summary (avg queue, avg delay = avg JCT - mean duration, profiler
 * GPU-seconds). */
static void check_policy(const char *policy, lucid_semantics sem, const double *est,
                         const want *w, double profiler_gpu_s, int line)
{
    static const double durations[] = {100, 20, 15};
    simtest t;
    simtest_load(&t, 1, trace3);
    simtest_estimates(&t, est ? est : durations);
    t.cfg.sem = sem;
    t.cfg.lucid.profiler_nodes = 1;
    t.cfg.lucid.profiler_factor = 8;
    t.cfg.lucid.profiler_time_limit = 50;
    t.cfg.lucid.profiler_autoscale = 0;
    simtest_run_ok(&t, policy);
    double queue = 0, delay = 0;
    for (int k = 0; k < 3; k++) {
        int64_t i = lucid_trace_find(&t.trace, w[k].id);
        const lucid_job *job = &t.trace.jobs[i];
        expect_job(&t, w[k].id, w[k].start, w[k].end, w[k].queue, line);
        int64_t d = w[k].end - job->submit_time - job->duration;
        queue += w[k].queue;
        delay += (double)d;
        int64_t prof = t.result.prof && t.result.prof[i].start >= 0
                           ? t.result.prof[i].end - t.result.prof[i].start
                           : -1;
        if (prof != w[k].profiler_s)
            fail_msg("line %d: %s job %lld: profiler %lld s, want %lld", line, policy,
                     (long long)w[k].id, (long long)prof, (long long)w[k].profiler_s);
    }
    lucid_summary s;
    assert_int_equal(lucid_summarize(&t.trace, &t.result, -1, INT32_MIN, INT32_MAX, &s), 0);
    if (s.avg_queue != queue / 3 || s.avg_delay != delay / 3 || s.profiler_gpu_s != profiler_gpu_s)
        fail_msg("line %d: %s: summary queue %g delay %g profiler %g GPU-s, want %g %g %g", line,
                 policy, s.avg_queue, s.avg_delay, s.profiler_gpu_s, queue / 3, delay / 3,
                 profiler_gpu_s);
    /* The one-pass figures of summary.csv agree. */
    lucid_summary all[2];
    assert_int_equal(lucid_summarize_vcs(&t.trace, &t.result, 1, all), 0);
    assert_true(all[1].avg_delay == s.avg_delay && all[1].profiler_gpu_s == s.profiler_gpu_s &&
                all[1].avg_queue == s.avg_queue && all[1].avg_profiler_s == s.avg_profiler_s);
    simtest_free(&t);
}

#define CHECK(policy, sem, est, w, gpu_s) check_policy((policy), (sem), (est), (w), (gpu_s), __LINE__)

/* Start-based policies: queue = start - submit = delay. */
static void fifo_sjf_qssf(void **state)
{
    (void)state;
    /* FIFO: 1 runs 0-100; 2 (8 GPUs) 100-120; 3 behind it 120-135. */
    const want fifo[] = {{1, 0, 100, 0, -1}, {2, 100, 120, 90, -1}, {3, 120, 135, 100, -1}};
    CHECK("fifo", lucid_semantics_fixed(), NULL, fifo, 0);
    CHECK("fifo", lucid_semantics_reference(), NULL, fifo, 0);
    /* SJF: at 100, 3 (15 s) before 2 (20 s): 3 100-115, 2 blocked until 115. */
    const want sjf[] = {{1, 0, 100, 0, -1}, {3, 100, 115, 80, -1}, {2, 115, 135, 105, -1}};
    CHECK("sjf", lucid_semantics_fixed(), NULL, sjf, 0);
    /* QSSF on estimates 100, 5, 15: priorities 2 -> 40, 3 -> 60: FIFO's order. */
    const double est[] = {100, 5, 15};
    CHECK("qssf", lucid_semantics_fixed(), est, fifo, 0);
}

/* SRTF: at 10, 2 (20 left) beats 1 (90 left): 1 is preempted and pays 40 s
 * of checkpoint cost (130 left).  At 20, 3 (15) waits behind 2 (10 left).
 * 2 ends 30; 3 (15) starts 30 and ends 45 (1's 8 GPUs do not fit beside
 * it); 1 restarts at 45 and ends 175.  Comparable queue of 1: it waited
 * 10-45 (35 s) and pays 40 s again: 75 = JCT 175 - duration 100.  The
 * reference's accounting counts the waits: 35. */
static void srtf(void **state)
{
    (void)state;
    const want fixed[] = {{1, 0, 175, 75, -1}, {2, 10, 30, 0, -1}, {3, 30, 45, 10, -1}};
    CHECK("srtf", lucid_semantics_fixed(), NULL, fixed, 0);
    lucid_semantics waits = lucid_semantics_fixed();
    waits.queue_waits_only = 1;
    const want waits_only[] = {{1, 0, 175, 35, -1}, {2, 10, 30, 0, -1}, {3, 30, 45, 10, -1}};
    CHECK("srtf", waits, NULL, waits_only, 0);
    /* Reference: each remain-based job ends one second late: 2 ends 31, 3
     * runs 31-47, 1 restarts at 47 and ends 47 + 130 + 1 = 178; queue 37
     * (waits only), delay 78. */
    const want ref[] = {{1, 0, 178, 37, -1}, {2, 10, 31, 0, -1}, {3, 31, 47, 11, -1}};
    CHECK("srtf", lucid_semantics_reference(), NULL, ref, 0);
}

/* Tiresias decides at multiples of 60 s only: 1 runs from 0 and ends at
 * 100 (8 x 100 GPU-s, high queue throughout); at 120, 2 (earlier submit)
 * takes the node until 140; 3 starts at the next decision, 180, ends 195.
 * No preemption: queue = delay. */
static void tiresias(void **state)
{
    (void)state;
    const want fixed[] = {{1, 0, 100, 0, -1}, {2, 120, 140, 110, -1}, {3, 180, 195, 160, -1}};
    CHECK("tiresias", lucid_semantics_fixed(), NULL, fixed, 0);
}

/* Lucid, profiler of one 8-GPU node, time limit 50 s, no autoscaling.
 * 1 is profiled 0-50, does not finish (100 > 50), joins the main queue at
 * 50 and restarts there: 50-150.  Its queue is all of 0-50 (the profiling
 * run is discarded), delay 150 - 100 = 50, 50 s in the profiler.  At 50
 * the profiler's queue in least-GPU order is 3 (4 GPUs), 2 (8): 3 runs
 * 50-65 and finishes there (queue 30); 2 waits for the whole node until
 * 65 and finishes at 85 (queue 55).  Profiler GPU-seconds: 8 x 50 + 4 x 15
 * + 8 x 20 = 620.  Waiting-only accounting (fixed otherwise) gives 1 a
 * queue of 0: the profiler's wait (0) plus the main queue's (0). */
static void lucid_profiled_and_restarted(void **state)
{
    (void)state;
    const want fixed[] = {{1, 50, 150, 50, 50}, {2, 65, 85, 55, 20}, {3, 50, 65, 30, 15}};
    CHECK("lucid", lucid_semantics_fixed(), NULL, fixed, 620);
    lucid_semantics waits = lucid_semantics_fixed();
    waits.queue_waits_only = 1;
    const want waits_only[] = {{1, 50, 150, 0, 50}, {2, 65, 85, 55, 20}, {3, 50, 65, 30, 15}};
    CHECK("lucid", waits, NULL, waits_only, 620);
    /* Reference: 1 rejoins at submit and starts on the main node at 0
     * while it is profiled; it ends 0 + 100 + 1; queue profqueue 0 + 0. */
    const want ref[] = {{1, 0, 101, 0, 50}, {2, 65, 85, 55, 20}, {3, 50, 65, 30, 15}};
    CHECK("lucid", lucid_semantics_reference(), NULL, ref, 620);
}

/* jobs-lucid.csv carries delay and profiler_s beside queue and jct. */
static void jobs_csv_columns(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, trace3);
    const double est[] = {100, 20, 15};
    simtest_estimates(&t, est);
    t.cfg.lucid.profiler_nodes = 1;
    t.cfg.lucid.profiler_factor = 8;
    t.cfg.lucid.profiler_time_limit = 50;
    t.cfg.lucid.profiler_autoscale = 0;
    simtest_run_ok(&t, "lucid");
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    assert_non_null(out);
    assert_int_equal(lucid_write_jobs(out, &t.trace, &t.vcs, &t.result), 0);
    assert_int_equal(fclose(out), 0);
    assert_string_equal(text, "job_id,vc,gpu_num,submit_time,duration,start_time,end_time,queue,"
                              "jct,delay,profiled,finished_in_profiler,profiler_s,packed_with\n"
                              "1,a,8,0,100,50,150,50,150,50,1,0,50,\n"
                              "2,a,8,10,20,65,85,55,75,55,1,1,20,\n"
                              "3,a,4,20,15,50,65,30,45,30,1,1,15,\n");
    free(text);
    simtest_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_sjf_qssf),
        cmocka_unit_test(srtf),
        cmocka_unit_test(tiresias),
        cmocka_unit_test(lucid_profiled_and_restarted),
        cmocka_unit_test(jobs_csv_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
