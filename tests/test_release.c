/* test_release.c — a VC's run releases the pages of working records whose
 * jobs have ended and are named by no structure that may read them again
 * (engine.c, vc_run_release; lucid_sched_held_jobs).  These tests build the
 * states in which a job index could outlive the job — a stale completion
 * event after a rate change, the reference's ended packing partner — and
 * check what is held; and that a job held long amid thousands that pass
 * through keeps its record to its end (a record released early is
 * published as it was then, so its result would show it still running).
 * Under AddressSanitizer (LUCID_SANITIZE) released records are poisoned as
 * well, so any read of one fails the test run.
 *
 * The record arrays themselves (release.c, lucid_record_pages): released
 * pages recycled ahead of the set-up frontier come back backed and hold
 * what is written there; released pages are gone (mapped, not backed:
 * mincore); the mapping splits as the VMA model says (/proc/self/maps); a
 * failed move falls back to handing pages back; a finished array's pages
 * serve the next. */
#define _GNU_SOURCE /* mincore, MAP_FIXED_NOREPLACE */
#include "simtest.h"

#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>

#include "../src/sim/sim_internal.h"
#include "lucid/sched.h"

#ifdef LUCID_ASAN
#include <sanitizer/asan_interface.h>
#endif

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

/* ---------------- the record arrays (release.c) ---------------- */

enum { REC_SIZE = 200 }; /* records straddle pages: 4096 / 200 is not whole */

/* Page p of the array: -1 unmapped, 0 mapped but not backed, 1 backed. */
static int page_state(const lucid_record_pages *r, size_t p)
{
    unsigned char vec = 0;
    if (mincore(r->base + p * r->page, r->page, &vec) < 0)
        return errno == ENOMEM ? -1 : -2;
    return vec & 1;
}

/* The VMAs of this process overlapping the array's mapping. */
static size_t kernel_maps(const lucid_record_pages *r)
{
    uintptr_t lo = (uintptr_t)r->base, hi = lo + r->mapped;
    FILE *f = fopen("/proc/self/maps", "r");
    assert_non_null(f);
    char line[512];
    size_t count = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long start, end;
        if (sscanf(line, "%lx-%lx", &start, &end) == 2 && start < hi && end > lo)
            count++;
    }
    fclose(f);
    return count;
}

static unsigned char fill_of(size_t i) { return (unsigned char)(i * 7 + 1); }

/* Sets up records [from, to) as the engine does: written whole. */
static void set_up(lucid_record_pages *r, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        lucid_record_pages_set(r, i);
        memset(r->base + i * REC_SIZE, fill_of(i), REC_SIZE);
    }
}

static void expect_records(const lucid_record_pages *r, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        const unsigned char *rec = r->base + i * REC_SIZE;
        for (size_t b = 0; b < REC_SIZE; b++)
            if (rec[b] != fill_of(i))
                fail_msg("record %zu byte %zu: %u, written %u", i, b, rec[b], fill_of(i));
    }
}

static void end_records(lucid_record_pages *r, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        lucid_record_pages_note_ended(r, i);
}

/* The releasable pages from `from` on: [from, *to). */
static size_t releasable_run(const lucid_record_pages *r, size_t from)
{
    size_t p = from;
    while (p < r->npages && lucid_record_pages_releasable(r, p))
        p++;
    return p;
}

static void new_array(lucid_record_pages *r, size_t n, size_t pool_pages, size_t max_maps)
{
    assert_int_equal(lucid_record_pages_alloc(r, REC_SIZE, n, 1), 0);
    assert_int_equal(r->page, 4096); /* the page numbers below are for 4 KiB pages */
    assert_int_equal(lucid_record_pages_recycle(r, pool_pages * r->page, max_maps), 0);
}

/* 4096 records of 200 bytes: 200 pages.  Records [0, 1000) set up (pages
 * [0, 49): the frontier is page 49, 200,000 / 4096 = 48.8), [0, 600)
 * ended: pages [0, 29) hold only ended records (29 x 4096 <= 120,000 <
 * 30 x 4096).  With a pool of 64 pages all 29 move to [49, 78). */
static void released_pages_come_back_ahead(void **state)
{
    (void)state;
    lucid_record_pages r;
    new_array(&r, 4096, 64, 64);
    assert_int_equal(r.npages, 200);
    set_up(&r, 0, 1000);
    end_records(&r, 0, 600);
    assert_int_equal(releasable_run(&r, 0), 29);
    assert_int_equal(page_state(&r, 49), 0); /* never touched */
    lucid_record_pages_release(&r, 0, 29);
    assert_int_equal(r.recycled, 29);
    for (size_t p = 0; p < 29; p++)
        assert_int_equal(page_state(&r, p), 0); /* gone, still mapped */
    for (size_t p = 49; p < 78; p++)
        assert_int_equal(page_state(&r, p), 1); /* backed before any record there is set up */
    assert_int_equal(page_state(&r, 78), 0);
    /* [0, 49) as mapped, [49, 78) from elsewhere, the rest */
    assert_int_equal(r.maps, 3);
    assert_int_equal(kernel_maps(&r), 3);
#ifdef LUCID_ASAN
    assert_true(__asan_address_is_poisoned(r.base + 10 * REC_SIZE));   /* released */
    assert_true(__asan_address_is_poisoned(r.base + 1000 * REC_SIZE));  /* not set up */
    assert_false(__asan_address_is_poisoned(r.base + 700 * REC_SIZE));  /* set up */
#endif
    /* Records [1000, 1400) are set up, on pages [48, 69) — moved-in ones
     * from 49 on — and read back what was written, as do the older ones. */
    set_up(&r, 1000, 1400);
    expect_records(&r, 600, 1400);
    /* Now [600, 1400) end: pages [29, 68) go (page 68 holds record 1400).
     * The frontier is page 69 (280,000 / 4096 = 68.4), 9 moved-in pages
     * wait there ([69, 78)), so 55 more fit: [29, 49) and [49, 68) move
     * separately (they came from different places) to [78, 98) and
     * [98, 117); [49, 68) is mapped afresh, one VMA with [0, 49) again.
     * [68, 78) came from [19, 29) and [78, 98) from [29, 49): one VMA.  So
     * the mapping is [0, 68), [68, 98), [98, 117) and the rest. */
    end_records(&r, 600, 1400);
    assert_int_equal(releasable_run(&r, 29), 68);
    lucid_record_pages_release(&r, 29, 68);
    assert_int_equal(r.recycled, 29 + 39);
    for (size_t p = 0; p < 68; p++)
        assert_int_equal(page_state(&r, p), 0);
    for (size_t p = 68; p < 117; p++)
        assert_int_equal(page_state(&r, p), 1);
    assert_int_equal(page_state(&r, 117), 0);
    assert_int_equal(r.maps, 4);
    assert_int_equal(kernel_maps(&r), 4);
    set_up(&r, 1400, 2400); /* pages [68, 118) */
    expect_records(&r, 1400, 2400);
    lucid_record_pages_free(&r);
}

/* When a move cannot be made the pages are handed back as before: mapped,
 * no longer backed. */
static void recycling_falls_back_to_handing_back(void **state)
{
    (void)state;
    lucid_record_pages r;
    /* At the map limit: a move could split the array into 4 mappings. */
    new_array(&r, 4096, 64, 3);
    set_up(&r, 0, 1000);
    end_records(&r, 0, 600);
    lucid_record_pages_release(&r, 0, 29);
    assert_int_equal(r.recycled, 0);
    for (size_t p = 0; p < 29; p++)
        assert_int_equal(page_state(&r, p), 0);
    assert_int_equal(page_state(&r, 49), 0);
    assert_int_equal(kernel_maps(&r), 1);
    set_up(&r, 1000, 1400);
    expect_records(&r, 600, 1400);
    lucid_record_pages_free(&r);

    /* A move that fails: the stretch starts with a hole the array does
     * not know of (mremap finds no mapping there: EFAULT); the page is
     * mapped again at once, before anything else can take its place. */
    new_array(&r, 4096, 64, 64);
    set_up(&r, 0, 1000);
    end_records(&r, 0, 600);
    assert_int_equal(munmap(r.base, r.page), 0);
    lucid_record_pages_release(&r, 0, 29);
    assert_ptr_equal(mmap(r.base, r.page, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0),
                     r.base);
    assert_int_equal(r.recycled, 0);
    for (size_t p = 1; p < 29; p++)
        assert_int_equal(page_state(&r, p), 0); /* handed back */
    assert_int_equal(page_state(&r, 49), 0);
    set_up(&r, 1000, 1400);
    expect_records(&r, 600, 1400);
    lucid_record_pages_free(&r);
}

/* A finished array's backed pages go to the front of the next: array a
 * ends with records [0, 1000) set up, [0, 600) released (moved to
 * [49, 78)): backed are pages [29, 49) and [49, 78) — 49 pages, in two
 * runs.  They become pages [0, 49) of array b, and b's first records find
 * them backed. */
static void a_finished_arrays_pages_serve_the_next(void **state)
{
    (void)state;
    lucid_record_pages a, b, spare;
    memset(&spare, 0, sizeof spare);
    new_array(&a, 4096, 64, 64);
    set_up(&a, 0, 1000);
    end_records(&a, 0, 600);
    lucid_record_pages_release(&a, 0, 29);
    lucid_record_pages_keep(&spare, &a);
    assert_null(a.base);
    new_array(&b, 3000, 64, 64);
    lucid_record_pages_adopt(&b, &spare);
    assert_null(spare.base);
    assert_int_equal(b.recycled, 49);
    assert_int_equal(b.ahead_end, 49);
    for (size_t p = 0; p < 49; p++)
        assert_int_equal(page_state(&b, p), 1);
    assert_int_equal(page_state(&b, 49), 0);
    /* [0, 20) from a's [29, 49), [20, 49) from a's [49, 78) (from its
     * [0, 29)), the rest */
    assert_int_equal(b.maps, 3);
    assert_int_equal(kernel_maps(&b), 3);
    set_up(&b, 0, 1500);
    expect_records(&b, 0, 1500);
    lucid_record_pages_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stale_event_holds_an_ended_job),
        cmocka_unit_test(reference_partner_is_let_go_at_its_end),
        cmocka_unit_test(tiresias_crossing_holds_an_ended_job),
        cmocka_unit_test(long_job_keeps_its_record),
        cmocka_unit_test(released_pages_come_back_ahead),
        cmocka_unit_test(recycling_falls_back_to_handing_back),
        cmocka_unit_test(a_finished_arrays_pages_serve_the_next),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
