/* test_release.c — a VC's run releases the pages of working records whose
 * jobs have ended and are named by no structure that may read them again
 * (engine.c, vc_run_release; lucid_sched_held_jobs).  These tests build the
 * states in which a job index could outlive the job — a stale completion
 * event after a rate change, the reference's ended packing partner — and
 * check what is held; and that a job held long amid thousands that pass
 * through keeps its record to its end (a record released early is
 * published as it was then, so its result would show it still running).
 * Under AddressSanitizer (LUCID_SANITIZE) released records are poisoned as
 * well, so any read of one fails the test run. */
#include "simtest.h"

#include "lucid/sched.h"

enum { NJOBS = 3 };

typedef struct small_sched {
    lucid_job jobs[NJOBS];
    lucid_jobrun run[NJOBS];
    double priority[NJOBS];
    int32_t share[NJOBS];
    lucid_lucid_inputs inputs;
    lucid_sched s;
} small_sched;

/* One node of 8 GPUs under `policy`; jobs of 1 GPU with these durations,
 * all waiting. */
static void small_init(small_sched *t, const lucid_policy_ops *policy, lucid_semantics sem,
                       const int64_t *durations)
{
    memset(t, 0, sizeof *t);
    for (int j = 0; j < NJOBS; j++) {
        t->jobs[j] = (lucid_job){.job_id = j + 1, .duration = durations[j], .gpu_num = 1,
                                 .workload = {.model = -1}};
        t->run[j] = (lucid_jobrun){.start_time = -1, .end_time = -1, .partner = -1,
                                   .packed_with = -1, .packed_onto = -1, .exclusive = 1,
                                   .remain = (double)durations[j], .rate = 1,
                                   .status = LUCID_PENDING};
        t->priority[j] = 1;
    }
    t->inputs = (lucid_lucid_inputs){.share = t->share, .gmem_limit = 24576,
                                     .priority_ratio = 2, .score_sum = 2};
    lucid_error err = {{0}};
    assert_int_equal(lucid_sched_init(&t->s, t->jobs, t->run, 0, 1, 8,
                                      lucid_placer_find("consolidate"), policy, sem, 1, &err),
                     0);
    t->s.priority = t->priority;
    t->s.lucid = &t->inputs;
    assert_true(!policy->init || policy->init(&t->s, &err) == 0);
}

static int events_of(const lucid_sched *s, int32_t job)
{
    int n = 0;
    for (size_t i = 0; i < s->nheap; i++)
        n += s->heap[i].job == job;
    return n;
}

/* Job 0 (100 s) slows to half speed at 10 and is back to full speed at 20:
 * 10 s + 10 s x 0.5 done, 85 s left, so it ends at 105 — before the event
 * the slow-down scheduled (10 + 90 / 0.5 = 190), which stays in the heap,
 * stale, behind job 2's end at 150.  When it reaches the top,
 * lucid_sched_next_end reads job 0's record to drop it: until then job 0
 * counts, although it has ended and jobs 1 and 2 are all that run. */
static void stale_event_holds_an_ended_job(void **state)
{
    (void)state;
    small_sched t;
    const int64_t durations[NJOBS] = {100, 1000, 150};
    small_init(&t, &lucid_policy_fifo, lucid_semantics_fixed(), durations);
    lucid_sched *s = &t.s;
    s->now = 0;
    assert_int_equal(lucid_sched_try_start(s, 0), 1);
    assert_int_equal(lucid_sched_try_start(s, 1), 1);
    assert_int_equal(lucid_sched_try_start(s, 2), 1);
    s->now = 10;
    lucid_sched_set_rate(s, 0, 0.5);
    s->now = 20;
    lucid_sched_set_rate(s, 0, 1.0);
    assert_int_equal(lucid_sched_next_end(s), 105);
    assert_int_equal(lucid_sched_finish_due(s, 105), 1);
    assert_int_equal(t.run[0].status, LUCID_DONE);
    assert_int_equal(events_of(s, 0), 1); /* the stale event at 190 */
    assert_int_equal(lucid_sched_oldest_job(s), 0);
    /* Job 2 ends at 150 and the stale event, at the top now, is dropped:
     * job 1 is all that is held. */
    assert_int_equal(lucid_sched_next_end(s), 150);
    assert_int_equal(lucid_sched_finish_due(s, 150), 1);
    assert_int_equal(events_of(s, 0), 0);
    assert_int_equal(lucid_sched_next_end(s), 1000);
    assert_int_equal(lucid_sched_oldest_job(s), 1);
    lucid_sched_free(s);
}

/* Reference semantics: job 1 packs onto job 0 (both at half speed); job 0,
 * the pair's first, ends and — the reference's partner lookup — does not
 * hand its partner back to full speed: job 1 runs on at half speed.  The
 * ended partner's record is read only within that step (recover_partner);
 * at its end job 1 forgets it (partner -1, packed_with still names it for
 * the report, which maps the index without reading the record), so job 0
 * is no longer held and job 1 is the oldest job held. */
static void reference_partner_is_let_go_at_its_end(void **state)
{
    (void)state;
    small_sched t;
    const int64_t durations[NJOBS] = {100, 1000, 1000};
    small_init(&t, &lucid_policy_lucid, lucid_semantics_reference(), durations);
    lucid_sched *s = &t.s;
    s->now = 0;
    assert_int_equal(lucid_sched_try_start(s, 0), 1);
    lucid_sched_start_packed(s, 1, 0, 0.5, 0.5);
    assert_int_equal(lucid_sched_try_start(s, 2), 1);
    assert_int_equal(lucid_sched_oldest_job(s), 0);
    /* job 0: 100 s at half speed, 200 s; Lucid's ends are by remaining
     * work, and the reference ends such a job one step late (end_lag) */
    int64_t end = lucid_sched_next_end(s);
    assert_int_equal(end, 201);
    assert_int_equal(lucid_sched_finish_due(s, end), 1);
    assert_int_equal(t.run[0].status, LUCID_DONE);
    assert_int_equal(t.run[1].status, LUCID_RUNNING);
    assert_true(t.run[1].rate == 0.5); /* not recovered: the reference's lookup */
    assert_int_equal(t.run[1].partner, -1);
    assert_int_equal(t.run[1].packed_with, 0);
    assert_int_equal(events_of(s, 0), 0);
    assert_int_equal(lucid_sched_oldest_job(s), 1);
    lucid_sched_free(s);
}

/* Tiresias notes when each running job will cross its priority
 * threshold (18,000 GPU-seconds) in a heap, and drops the notes of jobs
 * that stopped only when they reach the top (reading the job's record).
 * Job 0 (1 GPU, 100 s) ends long before its crossing at 18,000: its note
 * stays, so job 0 counts while job 1 (the only job running) runs on. */
static void tiresias_crossing_holds_an_ended_job(void **state)
{
    (void)state;
    small_sched t;
    const int64_t durations[NJOBS] = {100, 100000, 100000};
    small_init(&t, &lucid_policy_tiresias, lucid_semantics_fixed(), durations);
    lucid_sched *s = &t.s;
    s->now = 0;
    assert_int_equal(lucid_policy_tiresias.arrive(s, 0), 0);
    assert_int_equal(lucid_policy_tiresias.arrive(s, 1), 0);
    lucid_policy_tiresias.decide(s);
    assert_int_equal(t.run[0].status, LUCID_RUNNING);
    assert_int_equal(t.run[1].status, LUCID_RUNNING);
    assert_int_equal(lucid_sched_next_end(s), 100);
    assert_int_equal(lucid_sched_finish_due(s, 100), 1);
    assert_int_equal(t.run[0].status, LUCID_DONE);
    assert_int_equal(s->qlen, 0);
    assert_int_equal(events_of(s, 0), 0);
    assert_int_equal(lucid_sched_oldest_job(s), 0);
    lucid_sched_free(s);
}

/* One VC of one node: 10,000 jobs of 4 GPUs and 1 s, one a minute (so
 * that Tiresias, which decides every 60 s, starts them at once too), and
 * submitted with the 301st of them one of 4 GPUs that runs 200,000 s.
 * Every job starts at its submission (the long one takes half the node;
 * each short one ends before the next arrives).  The pages of the short
 * jobs go back as the run goes; the long one is held — running, its
 * completion event pending, for Tiresias in its crossing heap — while the
 * ~9,700 after it pass through, and its page must stay to its end
 * (released early, its result would be published as it was then:
 * running, no end).  Two rules keep it: a page goes only once all its
 * jobs have ended, and a running job is held; this fails only when both
 * are broken, the tests above check the holding on its own. */
static void long_job_keeps_its_record(void **state)
{
    (void)state;
    enum { SHORT = 10000, LONG_ROW = 300 };
    const int64_t long_submit = 60 * LONG_ROW, long_run = 200000;
    size_t cap = 64 + (SHORT + 1) * 32, len = 0;
    char *csv = malloc(cap);
    assert_non_null(csv);
    len += (size_t)snprintf(csv + len, cap - len, "job_id,vc,gpu_num,submit_time,duration\n");
    for (int k = 0; k < SHORT; k++) {
        if (k == LONG_ROW)
            len += (size_t)snprintf(csv + len, cap - len, "100000,a,4,%lld,%lld\n",
                                    (long long)long_submit, (long long)long_run);
        len += (size_t)snprintf(csv + len, cap - len, "%d,a,4,%d,1\n", k + 1, 60 * k);
    }
    static const char *const policies[] = {"fifo", "srtf", "tiresias", "sjf"};
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++) {
        simtest t;
        simtest_load(&t, 1, csv);
        double *est = malloc((SHORT + 1) * sizeof *est);
        assert_non_null(est);
        for (int k = 0; k <= SHORT; k++)
            est[k] = k == LONG_ROW ? (double)long_run : 1;
        simtest_estimates(&t, est);
        t.cfg.release_min_bytes = 0; /* this VC is small: release anyway */
        simtest_run_ok(&t, policies[p]);
        for (int k = 0; k < SHORT; k++)
            EXPECT_JOB(&t, k + 1, 60 * k, 60 * k + 1, 0);
        EXPECT_JOB(&t, 100000, long_submit, long_submit + long_run, 0);
        assert_int_equal(simtest_job(&t, 100000)->ckpt_times, 0);
        simtest_free(&t);
        free(est);
    }
    free(csv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_event_holds_an_ended_job),
        cmocka_unit_test(reference_partner_is_let_go_at_its_end),
        cmocka_unit_test(tiresias_crossing_holds_an_ended_job),
        cmocka_unit_test(long_job_keeps_its_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
