/* test_policy_scale.c — the fast policies against straightforward ones.
 *
 * SRTF and Tiresias keep ordered structures (src/sched/preemptive.c,
 * ordset.c) instead of re-sorting every waiting and running job at every
 * decision; FIFO and SJF insert arrivals into a sorted queue instead of
 * sorting it; Lucid finds packing partners in an ordered set with bounds
 * instead of scanning its running jobs.  This test keeps the re-sorting implementations (what the
 * library did before, written out plainly here) and checks that both give
 * the same start, end, queue time and checkpoint count for every job of a
 * synthetic trace, in both semantics and with both placers that matter
 * (the random one consumes its generator at every placement try, so an
 * extra or missing decision would show).
 *
 * Size: 200,000 jobs on 2,000 nodes (about 30 s in a RelWithDebInfo build).
 * LUCID_SCALE_JOBS overrides the job count (nodes stay at 1 per 100 jobs);
 * sanitizer builds default to 20,000 jobs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/sched.h"
#include "lucid/sim.h"
#include "testutil.h"

/* ---------------- the re-sorting implementations ---------------- */

typedef struct key {
    double key;
    size_t position;
    int32_t job;
} key;

typedef struct slow_state {
    key *keys;
    int32_t *prerun, *preempt;
    size_t cap;
    double *waiting_remain; /* SRTF: sorted waiting remainders after the last decision */
    size_t nwaiting;
} slow_state;

static int compare_keys(const void *pa, const void *pb)
{
    const key *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->position < b->position ? -1 : a->position > b->position;
}

static int slow_init(lucid_sched *s, lucid_error *err)
{
    s->policy_state = calloc(1, sizeof(slow_state));
    return s->policy_state ? 0 : lucid_error_set(err, "out of memory");
}

static void slow_destroy(lucid_sched *s)
{
    slow_state *st = s->policy_state;
    if (st) {
        free(st->keys);
        free(st->prerun);
        free(st->preempt);
        free(st->waiting_remain);
    }
    free(st);
    s->policy_state = NULL;
}

static int slow_reserve(slow_state *st, size_t n)
{
    if (n <= st->cap)
        return 0;
    size_t cap = n * 2;
    key *k = realloc(st->keys, cap * sizeof *k);
    if (k)
        st->keys = k;
    int32_t *a = realloc(st->prerun, cap * sizeof *a);
    if (a)
        st->prerun = a;
    int32_t *b = realloc(st->preempt, cap * sizeof *b);
    if (b)
        st->preempt = b;
    double *w = realloc(st->waiting_remain, cap * sizeof *w);
    if (w)
        st->waiting_remain = w;
    if (!k || !a || !b || !w)
        return -1;
    st->cap = cap;
    return 0;
}

/* Sorts keys[0..n) stably and runs the quota pass over that order. */
static void slow_pass(lucid_sched *s, slow_state *st, size_t n)
{
    qsort(st->keys, n, sizeof *st->keys, compare_keys);
    int64_t quota = s->cluster.total_gpus;
    size_t nprerun = 0, npreempt = 0;
    for (size_t i = 0; i < n; i++) {
        int32_t job = st->keys[i].job, gpus = s->jobs[job].gpu_num;
        if (gpus <= quota) {
            quota -= gpus;
            if (s->run[job].status == LUCID_PENDING)
                st->prerun[nprerun++] = job;
        } else if (s->run[job].status == LUCID_RUNNING) {
            st->preempt[npreempt++] = job;
        }
    }
    for (size_t i = 0; i < npreempt; i++) {
        int32_t job = st->preempt[i];
        lucid_sched_preempt(s, job);
        s->run[job].remain += (double)lucid_preempt_overhead(&s->jobs[job]);
        if (!s->sem.queue_waits_only) /* comparable queue: the cost is work done again */
            s->run[job].queue += (double)lucid_preempt_overhead(&s->jobs[job]);
        lucid_sched_enqueue(s, job);
    }
    int started = 0;
    for (size_t i = 0; i < nprerun; i++)
        started += lucid_sched_try_start(s, st->prerun[i]);
    if (started)
        lucid_sched_compact_queue(s);
}

static int slow_arrive(lucid_sched *s, int32_t job)
{
    lucid_sched_mark_arrival(s, job);
    return lucid_sched_enqueue(s, job);
}

static void slow_srtf_decide(lucid_sched *s)
{
    slow_state *st = s->policy_state;
    size_t n = s->qlen + s->nrunning, k = 0;
    st->nwaiting = 0;
    if (s->qlen == 0 || slow_reserve(st, n) < 0)
        return;
    for (size_t i = 0; i < s->qlen; i++, k++)
        st->keys[k] = (key){s->run[s->queue[i]].remain, k, s->queue[i]};
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next, k++)
        st->keys[k] = (key){lucid_sched_remain_at(s, job, s->now), k, job};
    slow_pass(s, st, n);
    /* the waiting remainders, sorted, for the crossing computation */
    for (size_t i = 0; i < s->qlen; i++)
        st->waiting_remain[st->nwaiting++] = s->run[s->queue[i]].remain;
    for (size_t i = 1; i < st->nwaiting; i++)
        for (size_t j = i; j > 0 && st->waiting_remain[j - 1] > st->waiting_remain[j]; j--) {
            double x = st->waiting_remain[j];
            st->waiting_remain[j] = st->waiting_remain[j - 1];
            st->waiting_remain[j - 1] = x;
        }
}

static int64_t slow_srtf_next(const lucid_sched *s)
{
    const slow_state *st = s->policy_state;
    if (s->qlen == 0)
        return LUCID_NEVER;
    if (s->changed || st->nwaiting != s->qlen)
        return s->now + 1;
    int64_t next = LUCID_NEVER;
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next) {
        double x = lucid_sched_remain_at(s, job, s->now), below = -1;
        int found = 0;
        for (size_t i = 0; i < st->nwaiting; i++)
            if (st->waiting_remain[i] <= x) {
                below = st->waiting_remain[i];
                found = 1;
            }
        if (found && s->now + (int64_t)(x - below) + 1 < next)
            next = s->now + (int64_t)(x - below) + 1;
    }
    return next;
}

static const lucid_policy_ops slow_srtf = {
    .name = "srtf",
    .flags = LUCID_POLICY_REMAIN_BASED,
    .init = slow_init,
    .destroy = slow_destroy,
    .arrive = slow_arrive,
    .decide = slow_srtf_decide,
    .next_decision = slow_srtf_next,
};

static int slow_tiresias_arrive(lucid_sched *s, int32_t job)
{
    s->run[job].attained = 0;
    return slow_arrive(s, job);
}

static void slow_tiresias_decide(lucid_sched *s)
{
    slow_state *st = s->policy_state;
    size_t n = s->qlen + s->nrunning, k = 0;
    if (s->now % 60 != 0 || s->qlen == 0 || slow_reserve(st, n) < 0)
        return;
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next, k++) {
        int low = lucid_sched_attained_at(s, job, s->now) > 18000;
        st->keys[k] = (key){(double)s->jobs[job].submit_time + (low ? 1e15 : 0), k, job};
    }
    for (size_t i = 0; i < s->qlen; i++, k++) {
        int32_t job = s->queue[i];
        int low = s->run[job].attained > 18000;
        st->keys[k] = (key){(double)s->jobs[job].submit_time + (low ? 1e15 : 0), k, job};
    }
    slow_pass(s, st, n);
}

static int64_t slow_next_multiple(int64_t t) { return (t + 59) / 60 * 60; }

static int64_t slow_tiresias_next(const lucid_sched *s)
{
    if (s->qlen == 0)
        return LUCID_NEVER;
    if (s->now % 60 != 0 || s->changed)
        return slow_next_multiple(s->now + 1);
    int64_t next = LUCID_NEVER;
    for (int32_t job = s->run_head; job >= 0; job = s->run[job].run_next) {
        const lucid_jobrun *r = &s->run[job];
        int64_t gpus = s->jobs[job].gpu_num;
        if (r->attained > 18000 || gpus <= 0)
            continue;
        int64_t cross = r->base + (18000 - r->attained) / gpus + 1;
        int64_t at = slow_next_multiple(cross > s->now ? cross : s->now + 1);
        if (at < next)
            next = at;
    }
    return next;
}

static const lucid_policy_ops slow_tiresias = {
    .name = "tiresias",
    .flags = LUCID_POLICY_REMAIN_BASED,
    .decision_period = 60,
    .init = slow_init,
    .destroy = slow_destroy,
    .arrive = slow_tiresias_arrive,
    .decide = slow_tiresias_decide,
    .next_decision = slow_tiresias_next,
};

/* FIFO and SJF: the queue sorted afresh (stably: ties by arrival) before
 * every head-of-line pass. */
static void slow_sorted_decide(lucid_sched *s, int by_duration)
{
    slow_state *st = s->policy_state;
    if (s->qlen == 0 || slow_reserve(st, s->qlen) < 0)
        return;
    for (size_t i = 0; i < s->qlen; i++) {
        const lucid_job *j = &s->jobs[s->queue[i]];
        st->keys[i] = (key){(double)(by_duration ? j->duration : j->submit_time),
                            s->run[s->queue[i]].arrival_seq, s->queue[i]};
    }
    qsort(st->keys, s->qlen, sizeof *st->keys, compare_keys);
    for (size_t i = 0; i < s->qlen; i++)
        s->queue[i] = st->keys[i].job;
    lucid_decide_head_of_line(s);
}

static void slow_fifo_decide(lucid_sched *s) { slow_sorted_decide(s, 0); }
static void slow_sjf_decide(lucid_sched *s) { slow_sorted_decide(s, 1); }

static const lucid_policy_ops slow_fifo = {
    .name = "fifo",
    .flags = LUCID_POLICY_HEAD_OF_LINE,
    .init = slow_init,
    .destroy = slow_destroy,
    .arrive = slow_arrive,
    .decide = slow_fifo_decide,
    .next_decision = lucid_no_timed_decisions,
};

static const lucid_policy_ops slow_sjf = {
    .name = "sjf",
    .flags = LUCID_POLICY_HEAD_OF_LINE,
    .init = slow_init,
    .destroy = slow_destroy,
    .arrive = slow_arrive,
    .decide = slow_sjf_decide,
    .next_decision = lucid_no_timed_decisions,
};

/* Lucid: the first partner found by scanning the running list in start
 * order, as the reference does. */
static int slow_outside(const lucid_sched *s, int32_t job)
{
    int32_t model = s->jobs[job].workload.model;
    return model < 0 || (s->lucid->outside_model && s->lucid->outside_model[model]);
}

static int slow_pack(lucid_sched *s, int32_t job)
{
    const lucid_lucid_inputs *in = s->lucid;
    int32_t gpus = s->jobs[job].gpu_num;
    lucid_pair_side newcomer = {gpus, s->jobs[job].gmem, s->run[job].share_score,
                                s->priority[job]};
    for (int32_t other = s->run_head; other >= 0; other = s->run[other].run_next) {
        lucid_pair_side running = {s->jobs[other].gpu_num, s->jobs[other].gmem,
                                   s->run[other].share_score, s->priority[other]};
        if (!s->run[other].exclusive || s->jobs[other].gpu_num != gpus ||
            !lucid_pair_allowed(&newcomer, &running, in->gmem_limit, in->score_sum,
                                in->priority_ratio))
            continue;
        double speed_job = 1.0, speed_other = 1.0;
        if (!slow_outside(s, job) && !slow_outside(s, other) && in->pairs)
            lucid_pairs_speed(in->pairs, &s->jobs[job].workload, &s->jobs[other].workload,
                              &speed_job, &speed_other);
        lucid_sched_start_packed(s, job, other, speed_job, speed_other);
        return 1;
    }
    return 0;
}

static void slow_lucid_decide(lucid_sched *s)
{
    lucid_sched_start_queue(s, lucid_packing_switch_at(s->lucid, s->now), slow_pack);
}

static lucid_policy_ops slow_lucid; /* lucid's ops with the scanning decide (main) */

/* ---------------- the comparison ---------------- */

typedef struct scale_trace {
    lucid_vcs vcs;
    lucid_trace trace;
    double *est;
    lucid_sharing sharing;
    lucid_pairs pairs;
} scale_trace;

static size_t scale_jobs(void)
{
    const char *env = getenv("LUCID_SCALE_JOBS");
    if (env && atol(env) > 0)
        return (size_t)atol(env);
#if defined(__SANITIZE_ADDRESS__)
    return 20000;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    return 20000;
#endif
#endif
    return 200000;
}

static int setup(void **state)
{
    scale_trace *t = calloc(1, sizeof *t);
    lucid_vcs base_vcs = {0};
    lucid_trace base = {0};
    lucid_error err = {{0}};
    char path[4200], dir[4000];
    if (lucid_vcs_load(&base_vcs, test_path(path, sizeof path, "data/venus-sept/vc_config.csv"),
                       &err) < 0 ||
        lucid_trace_load(&base, test_path(path, sizeof path, "data/venus-sept/trace.csv"),
                         &base_vcs, &err) < 0)
        fail_msg("%s", err.msg);
    size_t jobs = scale_jobs();
    lucid_synth_config cfg = {.jobs = (int64_t)jobs,
                              .nodes = (int32_t)(jobs / 100 > 20 ? jobs / 100 : 20),
                              .vcs = 15,
                              .gpus_per_node = 8,
                              .load = 0.9,
                              .estimate_noise = 0.5,
                              .seed = 7};
    test_tmpdir(dir, sizeof dir, "policy_scale");
    if (lucid_synth_write(&cfg, &base, &base_vcs, dir, &err) < 0)
        fail_msg("%s", err.msg);
    snprintf(path, sizeof path, "%s/vc_config.csv", dir);
    if (lucid_vcs_load(&t->vcs, path, &err) < 0)
        fail_msg("%s", err.msg);
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    if (lucid_trace_load(&t->trace, path, &t->vcs, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(t->trace.njobs, jobs);
    snprintf(path, sizeof path, "%s/estimates.csv", dir);
    if (lucid_estimates_load(&t->est, &t->trace, path, &err) < 0 ||
        lucid_sharing_load(&t->sharing, &t->trace,
                           test_path(path, sizeof path, "data/venus-sept/sharing_labels.csv"),
                           &err) < 0 ||
        lucid_pairs_load(&t->pairs, &t->trace,
                         test_path(path, sizeof path, "data/venus-sept/colocation_pairs.csv"),
                         &err) < 0)
        fail_msg("%s", err.msg);
    lucid_trace_free(&base);
    lucid_vcs_free(&base_vcs);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    scale_trace *t = *state;
    lucid_trace_free(&t->trace);
    lucid_vcs_free(&t->vcs);
    free(t->est);
    lucid_sharing_free(&t->sharing);
    lucid_pairs_free(&t->pairs);
    free(t);
    return 0;
}

static void compare(scale_trace *t, const lucid_policy_ops *fast, const lucid_policy_ops *slow,
                    int reference, const char *placer)
{
    lucid_sim_config cfg;
    lucid_sim_config_defaults(&cfg);
    cfg.threads = 2;
    cfg.reference = reference;
    cfg.sem = reference ? lucid_semantics_reference() : lucid_semantics_fixed();
    cfg.placer = lucid_placer_find(placer);
    assert_non_null(cfg.placer);
    cfg.lucid.profiler_nodes = 15;
    cfg.lucid.profiler_factor = 1;
    lucid_sim_inputs in = {.trace = &t->trace, .vcs = &t->vcs, .qssf_estimates = t->est,
                           .lucid_estimates = t->est, .sharing = &t->sharing,
                           .pairs = &t->pairs};
    lucid_sim_result a = {0}, b = {0};
    lucid_error err = {{0}};
    if (lucid_simulate(&cfg, &in, &fast, 1, &a, NULL, NULL, &err) < 0 ||
        lucid_simulate(&cfg, &in, &slow, 1, &b, NULL, NULL, &err) < 0)
        fail_msg("%s: %s", fast->name, err.msg);
    size_t preempted = 0, packed = 0;
    for (size_t i = 0; i < t->trace.njobs; i++) {
        const lucid_jobresult *x = &a.run[i], *y = &b.run[i];
        if (x->start_time != y->start_time || x->end_time != y->end_time ||
            x->queue != y->queue || x->ckpt_times != y->ckpt_times || x->status != y->status)
            fail_msg("%s (%s, %s): job %lld: fast start %lld end %lld queue %.17g ckpt %d, "
                     "re-sorting %lld %lld %.17g %d",
                     fast->name, reference ? "reference" : "fixed", placer,
                     (long long)t->trace.jobs[i].job_id, (long long)x->start_time,
                     (long long)x->end_time, x->queue, x->ckpt_times, (long long)y->start_time,
                     (long long)y->end_time, y->queue, y->ckpt_times);
        assert_true(x->end_time > x->start_time && x->start_time >= t->trace.jobs[i].submit_time);
        preempted += x->ckpt_times > 0;
        packed += x->packed_with >= 0;
        if (x->packed_with != y->packed_with)
            fail_msg("%s: job %lld packed with %d, re-sorting with %d", fast->name,
                     (long long)t->trace.jobs[i].job_id, x->packed_with, y->packed_with);
    }
    /* the preemptive policies must actually preempt on this trace, or the
     * comparison would not exercise their structures */
    if ((fast->flags & LUCID_POLICY_REMAIN_BASED) && !(fast->flags & LUCID_POLICY_LUCID))
        assert_true(preempted > 0);
    if (fast->flags & LUCID_POLICY_LUCID) /* and Lucid must pack */
        assert_true(packed > 0);
    lucid_sim_result_free(&a);
    lucid_sim_result_free(&b);
}

static void srtf_matches(void **state)
{
    compare(*state, &lucid_policy_srtf, &slow_srtf, 1, "consolidate");
    compare(*state, &lucid_policy_srtf, &slow_srtf, 0, "consolidate");
    compare(*state, &lucid_policy_srtf, &slow_srtf, 1, "random");
}

static void tiresias_matches(void **state)
{
    compare(*state, &lucid_policy_tiresias, &slow_tiresias, 1, "consolidate");
    compare(*state, &lucid_policy_tiresias, &slow_tiresias, 0, "consolidate");
    compare(*state, &lucid_policy_tiresias, &slow_tiresias, 1, "random");
}

static void fifo_sjf_match(void **state)
{
    compare(*state, &lucid_policy_fifo, &slow_fifo, 1, "consolidate");
    compare(*state, &lucid_policy_sjf, &slow_sjf, 0, "consolidate");
}

static void lucid_matches(void **state)
{
    compare(*state, &lucid_policy_lucid, &slow_lucid, 1, "consolidate");
    compare(*state, &lucid_policy_lucid, &slow_lucid, 0, "consolidate");
}

int main(void)
{
    slow_lucid = lucid_policy_lucid;
    slow_lucid.decide = slow_lucid_decide;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lucid_matches),
        cmocka_unit_test(srtf_matches),
        cmocka_unit_test(tiresias_matches),
        cmocka_unit_test(fifo_sjf_match),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
