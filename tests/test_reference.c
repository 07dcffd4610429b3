/* test_reference.c — the contract: with reference semantics, every Venus
 * job's start, end and queue equal the reference simulator's results
 * (data/venus-sept/reference) for all six policies, and the summary equals
 * the reference summary.csv.  Also: results do not depend on the thread
 * count, and the invariants hold in both semantics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/sim.h"
#include "testutil.h"

typedef struct venus {
    lucid_vcs vcs;
    lucid_trace trace;
    double *est;
    lucid_sharing sharing;
    lucid_pairs pairs;
    lucid_forecast forecast;
    int32_t *nodes_from;
    lucid_sim_config cfg;
    lucid_sim_inputs in;
} venus;

static venus V;

static void must(int rc, const lucid_error *err)
{
    if (rc < 0)
        fail_msg("%s", err->msg);
}

static int setup(void **state)
{
    (void)state;
    char p[4096];
    lucid_error err = {{0}};
    must(lucid_vcs_load(&V.vcs, test_path(p, sizeof p, "data/venus-sept/vc_config.csv"), &err), &err);
    must(lucid_trace_load(&V.trace, test_path(p, sizeof p, "data/venus-sept/trace.csv"), &V.vcs, &err), &err);
    must(lucid_estimates_load(&V.est, &V.trace, test_path(p, sizeof p, "data/venus-sept/estimates_lucid.csv"), &err), &err);
    must(lucid_sharing_load(&V.sharing, &V.trace, test_path(p, sizeof p, "data/venus-sept/sharing_labels.csv"), &err), &err);
    must(lucid_pairs_load(&V.pairs, &V.trace, test_path(p, sizeof p, "data/venus-sept/colocation_pairs.csv"), &err), &err);
    must(lucid_forecast_load(&V.forecast, test_path(p, sizeof p, "data/venus-sept/throughput_forecast.csv"), &err), &err);
    V.nodes_from = calloc((size_t)V.vcs.count, sizeof *V.nodes_from);
    V.nodes_from[lucid_strtab_find(V.vcs.names, "vc8Gr")] = 1;
    V.nodes_from[lucid_strtab_find(V.vcs.names, "vcefl")] = 1;
    lucid_sim_config_defaults(&V.cfg);
    V.cfg.start = 13219200;
    V.cfg.lucid.borrow_vc = lucid_strtab_find(V.vcs.names, "vcYVn");
    V.cfg.lucid.nodes_from = V.nodes_from;
    V.in = (lucid_sim_inputs){.trace = &V.trace, .vcs = &V.vcs, .qssf_estimates = V.est,
                              .lucid_estimates = V.est, .sharing = &V.sharing,
                              .pairs = &V.pairs, .forecast = &V.forecast};
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    lucid_trace_free(&V.trace);
    lucid_vcs_free(&V.vcs);
    free(V.est);
    lucid_sharing_free(&V.sharing);
    lucid_pairs_free(&V.pairs);
    lucid_forecast_free(&V.forecast);
    free(V.nodes_from);
    return 0;
}

static void run_all(lucid_sim_result *results, lucid_semantics sem, int threads)
{
    lucid_sim_config cfg = V.cfg;
    cfg.sem = sem;
    cfg.threads = threads;
    lucid_error err = {{0}};
    must(lucid_simulate(&cfg, &V.in, lucid_policy_list(), 6, results, NULL, NULL, &err), &err);
}

static void compare_with_reference(const lucid_sim_result *res)
{
    char rel[256], p[4096];
    snprintf(rel, sizeof rel, "data/venus-sept/reference/jobs-%s.csv", res->policy->name);
    lucid_error err = {{0}};
    lucid_csv *csv = lucid_csv_open(test_path(p, sizeof p, rel), &err);
    assert_non_null(csv);
    int c_id = lucid_csv_col(csv, "job_id"), c_start = lucid_csv_col(csv, "start_time"),
        c_end = lucid_csv_col(csv, "end_time"), c_queue = lucid_csv_col(csv, "queue"),
        c_prof = lucid_csv_col(csv, "profiled"), c_fin = lucid_csv_col(csv, "finished_in_profiler");
    size_t rows = 0, mismatches = 0;
    while (lucid_csv_next(csv, &err) == 1) {
        int64_t id, start, end;
        double queue;
        must(lucid_csv_i64(csv, c_id, &id, &err), &err);
        must(lucid_csv_i64(csv, c_start, &start, &err), &err);
        must(lucid_csv_i64(csv, c_end, &end, &err), &err);
        must(lucid_csv_f64(csv, c_queue, &queue, &err), &err);
        int64_t i = lucid_trace_find(&V.trace, id);
        assert_true(i >= 0);
        const lucid_jobresult *r = &res->run[i];
        int bad = r->start_time != start || r->end_time != end || r->queue != queue;
        if (c_prof >= 0) {
            int64_t prof, fin;
            must(lucid_csv_i64(csv, c_prof, &prof, &err), &err);
            must(lucid_csv_i64(csv, c_fin, &fin, &err), &err);
            bad |= r->profiled != prof || r->finished_in_profiler != fin;
        }
        if (bad && mismatches++ < 3)
            print_error("%s job %lld: start %lld/%lld end %lld/%lld queue %g/%g\n",
                        res->policy->name, (long long)id, (long long)r->start_time,
                        (long long)start, (long long)r->end_time, (long long)end, r->queue, queue);
        rows++;
    }
    lucid_csv_close(csv);
    assert_int_equal(rows, 23859);
    assert_int_equal(mismatches, 0);
}

static void compare_summary(const lucid_sim_result *res)
{
    char p[4096];
    lucid_error err = {{0}};
    lucid_csv *csv = lucid_csv_open(test_path(p, sizeof p, "data/venus-sept/reference/summary.csv"), &err);
    assert_non_null(csv);
    int found = 0;
    while (lucid_csv_next(csv, &err) == 1) {
        if (strcmp(lucid_csv_field(csv, 0), res->policy->name) != 0)
            continue;
        const char *vc_name = lucid_csv_field(csv, 1);
        int32_t vc = strcmp(vc_name, "all") == 0 ? -1 : lucid_strtab_find(V.vcs.names, vc_name);
        lucid_summary s;
        assert_int_equal(lucid_summarize(&V.trace, res, vc, 0, INT32_MAX, &s), 0);
        double jobs, jct, queue, p999;
        must(lucid_csv_f64(csv, 2, &jobs, &err), &err);
        must(lucid_csv_f64(csv, 3, &jct, &err), &err);
        must(lucid_csv_f64(csv, 4, &queue, &err), &err);
        must(lucid_csv_f64(csv, 5, &p999, &err), &err);
        assert_true(s.jobs == (int64_t)jobs);
        assert_true(fabs(s.avg_jct - jct) < 0.0006);
        assert_true(fabs(s.avg_queue - queue) < 0.0006);
        assert_true(fabs(s.p999_queue - p999) < 0.0006);
        found++;
    }
    lucid_csv_close(csv);
    assert_int_equal(found, 16); /* 15 VCs + all */
}

static void reference_mode_matches_job_by_job(void **state)
{
    (void)state;
    lucid_sim_result results[6];
    run_all(results, lucid_semantics_reference(), 2);
    for (int p = 0; p < 6; p++) {
        compare_with_reference(&results[p]);
        compare_summary(&results[p]);
        if (results[p].policy->flags & LUCID_POLICY_LUCID) {
            assert_int_equal(results[p].profiled, 21417);
            assert_int_equal(results[p].finished_in_profiler, 10644);
            assert_int_equal(results[p].packed_at_end, 3619);
        }
    }
    /* One thread gives the same answer. */
    lucid_sim_result single[6];
    run_all(single, lucid_semantics_reference(), 1);
    for (int p = 0; p < 6; p++) {
        assert_memory_equal(single[p].run, results[p].run, V.trace.njobs * sizeof(lucid_jobresult));
        lucid_sim_result_free(&single[p]);
        lucid_sim_result_free(&results[p]);
    }
}

/* Invariants on every job: it ends exactly once, after it starts, never
 * before its submit time; queues are non-negative; JCT >= duration unless
 * it was sped up by sharing; and for non-preemptive policies the GPUs in use
 * never exceed the VC (a packed newcomer uses its partner's GPUs). */
static int32_t share_of(const venus *d, int32_t job)
{
    int64_t row = lucid_sharing_find(&d->sharing, &d->trace.jobs[job].workload);
    return row >= 0 ? d->sharing.rows[row].label : 2;
}

static double priority_of(const venus *d, int32_t job)
{
    return (d->est[job] < 0 ? 1000 : d->est[job]) * d->trace.jobs[job].gpu_num;
}

/* Every packed newcomer met Lucid's rules with the job it joined. */
static void check_packing_rules(const venus *d, const lucid_sim_result *res)
{
    const lucid_trace *tr = &d->trace;
    size_t packed = 0;
    for (size_t i = 0; i < tr->njobs; i++) {
        int32_t t = res->run[i].packed_onto;
        if (t < 0)
            continue;
        packed++;
        const lucid_job *a = &tr->jobs[i], *b = &tr->jobs[t];
        assert_int_equal(a->gpu_num, b->gpu_num);
        assert_true(a->gpu_num <= 8);
        assert_true(b->gmem < 24576 - a->gmem);
        assert_true(share_of(d, (int32_t)i) + share_of(d, t) <= 2);
        assert_true(priority_of(d, (int32_t)i) <= 2 * priority_of(d, t));
        assert_true(res->run[t].start_time <= res->run[i].start_time);
    }
    assert_true(packed > 0);
}

static void check_invariants(const venus *d, const lucid_sim_result *res, int reference)
{
    const lucid_trace *tr = &d->trace;
    int preemptive = strcmp(res->policy->name, "srtf") == 0 || strcmp(res->policy->name, "tiresias") == 0;
    int lucid = (res->policy->flags & LUCID_POLICY_LUCID) != 0;
    for (size_t i = 0; i < tr->njobs; i++) {
        const lucid_job *j = &tr->jobs[i];
        const lucid_jobresult *r = &res->run[i];
        assert_int_equal(r->status, LUCID_DONE);
        assert_true(r->start_time >= j->submit_time);
        assert_true(r->end_time > r->start_time);
        assert_true(r->queue >= 0);
        if (r->packed_with < 0)
            assert_true(r->end_time - j->submit_time >= j->duration);
        else
            assert_true((double)(r->end_time - j->submit_time) >= (double)j->duration / 1.5); /* fastest measured co-located speed: 1.498 */
        if (!preemptive && !(lucid && r->profiled))
            assert_true(r->queue == (double)(r->start_time - j->submit_time));
    }
    if (lucid)
        check_packing_rules(d, res);
    /* GPU use (summary.csv's gpu_util): never more busy than available. */
    assert_int_equal(res->ngpu_use, d->vcs.count);
    for (int32_t vc = 0; vc < d->vcs.count; vc++)
        assert_true(res->gpu_use[vc].busy <= res->gpu_use[vc].capacity);
    if (preemptive)
        return;
    /* Sweep start/end events per VC. */
    for (int32_t vc = 0; vc < d->vcs.count; vc++) {
        int64_t capacity = (int64_t)d->vcs.nodes[vc] * 8;
        if (lucid) {
            capacity -= d->nodes_from ? d->nodes_from[vc] * 8 : 0;
            if (vc == d->cfg.lucid.borrow_vc && reference)
                capacity += 8; /* a lost borrow followed by a return (spec §4.5) */
        }
        size_t n = 0;
        typedef struct ev { int64_t t; int64_t delta; } ev;
        ev *evs = malloc(2 * tr->njobs * sizeof *evs);
        for (size_t i = 0; i < tr->njobs; i++) {
            const lucid_jobresult *r = &res->run[i];
            if (tr->jobs[i].vc != vc || (lucid && r->finished_in_profiler))
                continue;
            /* A packed newcomer holds its target's GPUs: it adds nothing
             * while the target runs, and holds them alone if it outlives it. */
            int32_t t = r->packed_onto;
            int newcomer = t >= 0;
            if (newcomer) {
                if (r->end_time > res->run[t].end_time) {
                    evs[n++] = (ev){res->run[t].end_time, tr->jobs[i].gpu_num};
                    evs[n++] = (ev){r->end_time, -tr->jobs[i].gpu_num};
                }
                continue;
            }
            evs[n++] = (ev){r->start_time, tr->jobs[i].gpu_num};
            evs[n++] = (ev){r->end_time, -tr->jobs[i].gpu_num};
        }
        /* Ends before starts at the same second. */
        for (size_t a = 1; a < n; a++) {
            ev x = evs[a];
            size_t b = a;
            while (b > 0 && (evs[b - 1].t > x.t || (evs[b - 1].t == x.t && evs[b - 1].delta > x.delta))) {
                evs[b] = evs[b - 1];
                b--;
            }
            evs[b] = x;
        }
        int64_t used = 0, busy = 0;
        for (size_t k = 0; k < n; k++) {
            if (k > 0)
                busy += used * (evs[k].t - evs[k - 1].t);
            used += evs[k].delta;
            if (used > capacity)
                fail_msg("%s (%s): VC %s uses %lld of %lld GPUs at %lld", res->policy->name,
                         reference ? "reference" : "fixed", lucid_vcs_name(&d->vcs, vc), (long long)used, (long long)capacity,
                         (long long)evs[k].t);
        }
        /* The engine's GPU-seconds busy, integrated step by step, equal
         * this sweep's over the jobs' starts and ends. */
        if (n > 0 && (double)busy != res->gpu_use[vc].busy)
            fail_msg("%s (%s): VC %s busy %lld GPU-s by the sweep, %.0f by the engine",
                     res->policy->name, reference ? "reference" : "fixed",
                     lucid_vcs_name(&d->vcs, vc), (long long)busy, res->gpu_use[vc].busy);
        free(evs);
    }
}

static void invariants_hold_in_both_semantics(void **state)
{
    (void)state;
    for (int reference = 1; reference >= 0; reference--) {
        lucid_sim_result results[6];
        run_all(results, reference ? lucid_semantics_reference() : lucid_semantics_fixed(), 2);
        for (int p = 0; p < 6; p++) {
            check_invariants(&V, &results[p], reference);
            lucid_sim_result_free(&results[p]);
        }
    }
}

/* The same invariants on a synthetic trace (lucid trace synth's generator). */
static void invariants_hold_on_synthetic_trace(void **state)
{
    (void)state;
    char dir[2048], p[4096], q[4096];
    test_tmpdir(dir, sizeof dir, "synthetic");
    lucid_error err = {{0}};
    lucid_synth_config sc = {.jobs = 4000, .nodes = 48, .vcs = 5, .gpus_per_node = 8,
                             .load = 0.9, .estimate_noise = 0.5, .seed = 11};
    must(lucid_synth_write(&sc, &V.trace, &V.vcs, dir, &err), &err);
    venus S;
    memset(&S, 0, sizeof S);
    snprintf(q, sizeof q, "%s/vc_config.csv", dir);
    must(lucid_vcs_load(&S.vcs, q, &err), &err);
    snprintf(q, sizeof q, "%s/trace.csv", dir);
    must(lucid_trace_load(&S.trace, q, &S.vcs, &err), &err);
    snprintf(q, sizeof q, "%s/estimates.csv", dir);
    must(lucid_estimates_load(&S.est, &S.trace, q, &err), &err);
    must(lucid_sharing_load(&S.sharing, &S.trace, test_path(p, sizeof p, "data/venus-sept/sharing_labels.csv"), &err), &err);
    must(lucid_pairs_load(&S.pairs, &S.trace, test_path(p, sizeof p, "data/venus-sept/colocation_pairs.csv"), &err), &err);
    lucid_sim_config_defaults(&S.cfg);
    S.cfg.lucid.profiler_nodes = 1;
    S.cfg.lucid.profiler_factor = 8;
    S.in = (lucid_sim_inputs){.trace = &S.trace, .vcs = &S.vcs, .qssf_estimates = S.est,
                              .lucid_estimates = S.est, .sharing = &S.sharing, .pairs = &S.pairs};
    for (int reference = 1; reference >= 0; reference--) {
        lucid_sim_config cfg = S.cfg;
        cfg.sem = reference ? lucid_semantics_reference() : lucid_semantics_fixed();
        lucid_sim_result results[6];
        must(lucid_simulate(&cfg, &S.in, lucid_policy_list(), 6, results, NULL, NULL, &err), &err);
        for (int k = 0; k < 6; k++) {
            check_invariants(&S, &results[k], reference);
            lucid_sim_result_free(&results[k]);
        }
    }
    lucid_trace_free(&S.trace);
    lucid_vcs_free(&S.vcs);
    free(S.est);
    lucid_sharing_free(&S.sharing);
    lucid_pairs_free(&S.pairs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reference_mode_matches_job_by_job),
        cmocka_unit_test(invariants_hold_in_both_semantics),
        cmocka_unit_test(invariants_hold_on_synthetic_trace),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
