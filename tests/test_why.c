/* test_why.c — explanations of hand-built schedules state the known reasons
 * (worked out by hand from spec §4; see test_policies.c for the schedules). */
#include <stdio.h>
#include <stdlib.h>

#include "simtest.h"

static char *explain_dated(simtest *t, const char *policy, int64_t job_id, const int64_t *calendar)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    lucid_error err = {{0}};
    if (lucid_explain_job_dated(&t->cfg, &t->in, lucid_policy_find(policy),
                                lucid_trace_find(&t->trace, job_id), calendar, out, &err) < 0)
        fail_msg("%s", err.msg);
    fclose(out);
    return text;
}

static char *explain(simtest *t, const char *policy, int64_t job_id)
{
    return explain_dated(t, policy, job_id, NULL);
}

static void expect_line(const char *text, const char *line)
{
    if (!strstr(text, line))
        fail_msg("explanation lacks \"%s\":\n%s", line, text);
}

static void fifo_waits_behind_the_head(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,8,0,10\n2,a,4,1,5\n3,a,2,2,3\n4,a,8,3,1\n5,a,1,4,1\n");
    char *text = explain(&t, "fifo", 5);
    /* 4-10: job 1 holds the node, job 2 heads the queue (2, 3, 4 ahead, 0
     * free); 10-15: job 4 (8 GPUs) heads it, 1 job ahead, 2 free (10-13,
     * jobs 2 and 3 run) then 4 (13-15, job 2 runs); 15-16: job 4 runs, 5 is
     * at the head with no GPU free.  One line per reason, the free capacity
     * as a range over it. */
    expect_line(text, "job 5: VC a, 1 GPUs, submitted at 4, runs 1 s; policy fifo");
    expect_line(text, "waited 4-10 (6 s): behind job 2 at the head of the queue (4 GPUs), which "
                      "did not fit: the queue does not backfill; free meanwhile: 0 GPUs, 0 whole "
                      "nodes, at most 0 on one node; 3 jobs ahead (2, 3, 4)\n");
    expect_line(text, "waited 10-15 (5 s): behind job 4 at the head of the queue (8 GPUs), which "
                      "did not fit: the queue does not backfill; free meanwhile: 2-4 GPUs, 0 whole "
                      "nodes, at most 4 on one node; 1 job ahead (4)\n");
    expect_line(text, "waited 15-16 (1 s): needs 1 GPU on one node; free meanwhile: 0 GPUs, 0 "
                      "whole nodes, at most 0 on one node\n");
    expect_line(text, "started at 16 after a queueing delay of 12 s");
    expect_line(text, "ended at 17: JCT 13 s");
    free(text);
    simtest_free(&t);
}

/* With the trace's calendar known (second 0 = 2020-09-01 00:00:00 UTC,
 * Unix time 1598918400), every time gets its date; the same schedule. */
static void dates_beside_trace_seconds(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration\n"
                 "1,a,8,0,10\n2,a,4,1,5\n3,a,2,2,3\n4,a,8,3,1\n5,a,1,4,1\n");
    const int64_t calendar = 1598918400;
    char *text = explain_dated(&t, "fifo", 5, &calendar);
    expect_line(text, "job 5: VC a, 1 GPUs, submitted at 4 (2020-09-01 00:00:04 UTC), runs 1 s");
    expect_line(text, "waited 4-10 (6 s; 2020-09-01 00:00:04 - 2020-09-01 00:00:10 UTC): behind job 2");
    expect_line(text, "started at 16 (2020-09-01 00:00:16 UTC) after a queueing delay of 12 s");
    expect_line(text, "ended at 17 (2020-09-01 00:00:17 UTC): JCT 13 s");
    free(text);
    simtest_free(&t);
}

/* A wait behind eleven heads in turn stays a few lines: the first four
 * intervals, one for the four between, the last four.  Job 1 runs 0-10,
 * then jobs 2..13 (8 GPUs, 10 s each) one after another until 130 (job k
 * runs 10(k-1)-10k); job 14 arrives at 13 while job 2 runs: 13-20 behind
 * job 3, then 10 s behind each of 4..13, and at 120-130 it heads the
 * queue while job 13 holds the node: 12 intervals.  The middle four
 * (heads 7..10) span 50-90; at 50 jobs 7..13 are ahead (7), during 80-90
 * jobs 10..13 (4). */
static void long_wait_stays_short(void **state)
{
    (void)state;
    char csv[1024];
    size_t n = (size_t)snprintf(csv, sizeof csv, "job_id,vc,gpu_num,submit_time,duration\n1,a,8,0,10\n");
    for (int k = 2; k <= 13; k++)
        n += (size_t)snprintf(csv + n, sizeof csv - n, "%d,a,8,%d,10\n", k, k - 1);
    snprintf(csv + n, sizeof csv - n, "14,a,1,13,1\n");
    simtest t;
    simtest_load(&t, 1, csv);
    char *text = explain(&t, "fifo", 14);
    size_t lines = 0;
    for (const char *p = text; (p = strstr(p, "\nwaited ")) != NULL; p++)
        lines++;
    assert_int_equal(lines, 9);
    expect_line(text, "waited 13-20 (7 s): behind job 3 at the head of the queue (8 GPUs)");
    expect_line(text, "waited 50-90 (40 s): 4 intervals (the job ahead or the reason changed at "
                      "each); free meanwhile: 0 GPUs, 0 whole nodes, at most 0 on one node; 7 jobs "
                      "ahead (7, 8, 9, ...), 4 at the end\n");
    expect_line(text, "waited 110-120 (10 s): behind job 13 at the head of the queue (8 GPUs)");
    expect_line(text, "waited 120-130 (10 s): needs 1 GPU on one node");
    expect_line(text, "started at 130 after a queueing delay of 117 s");
    free(text);
    simtest_free(&t);
}

static void tiresias_waits_for_its_decision_grid(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1, "job_id,vc,gpu_num,submit_time,duration\n1,a,8,0,100\n2,a,8,10,20\n");
    t.cfg.sem = lucid_semantics_reference();
    char *text = explain(&t, "tiresias", 2);
    /* Arrives at 10 between decisions; at 60 job 1 (high queue, earlier)
     * keeps the node; job 1 ends at 101 but the next decision is 120. */
    expect_line(text, "waited 10-60 (50 s): tiresias starts jobs only at multiples of 60 s");
    expect_line(text, "waited 60-101 (41 s): needs 8 GPUs on one node; free meanwhile: 0 GPUs");
    expect_line(text, "waited 101-120 (19 s): tiresias starts jobs only at multiples of 60 s");
    expect_line(text, "started at 120 after a queueing delay of 110 s");
    free(text);
    simtest_free(&t);
}

static void lucid_packing_reasons(void **state)
{
    (void)state;
    simtest t;
    simtest_load(&t, 1,
                 "job_id,vc,gpu_num,submit_time,duration,model,dataset,batchsize,amp,gmem\n"
                 "1,a,4,0,100,NeuMF,D,32,0,1000\n"
                 "2,a,4,0,100,NeuMF,D,32,0,24000\n"
                 "3,a,4,1,50,NeuMF,D,32,0,3000\n");
    const double est[] = {100, 100, 50};
    simtest_estimates(&t, est);
    lucid_sharing sharing = {0};
    sharing.rows = calloc(1, sizeof *sharing.rows);
    sharing.count = 1;
    sharing.rows[0] = (lucid_sharing_row){
        .key = {lucid_strtab_find(t.trace.strings, "NeuMF"), lucid_strtab_find(t.trace.strings, "D"), 32, 0},
        .label = 1};
    t.in.sharing = &sharing;
    t.cfg.lucid.profiler_nodes = 1;
    t.cfg.lucid.profiler_factor = 1;
    t.cfg.lucid.profiler_autoscale = 0;
    char *text = explain(&t, "lucid", 3);
    /* Job 3 (priority 50 x 4 = 200) joins job 1 (400): scores 1 + 1, memory
     * 3000 + 1000, 200 <= 2 x 400; 4 GPUs is over the profiler's limit of 1. */
    expect_line(text, "priority: estimated duration 50 s x 4 GPUs = 200");
    expect_line(text, "profiling: not profiled: 4 GPUs is more than the profiler's limit of 1");
    expect_line(text, "started at 1 after a queueing delay of 0 s");
    expect_line(text, "packed: shared the 4 GPUs of running job 1: sharing scores 1 + 1 <= 2; "
                      "GPU memory 3000 + 1000 < 24576 MiB; priority 200 <= 2 x 400");
    free(text);
    free(sharing.rows);
    simtest_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fifo_waits_behind_the_head),
        cmocka_unit_test(dates_beside_trace_seconds),
        cmocka_unit_test(long_wait_stays_short),
        cmocka_unit_test(tiresias_waits_for_its_decision_grid),
        cmocka_unit_test(lucid_packing_reasons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
