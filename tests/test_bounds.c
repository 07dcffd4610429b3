/* test_bounds.c — the JCT floors and the schedule metrics (bounds.h)
 * against values worked out by hand on small traces. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/bounds.h"
#include "lucid/sim.h"
#include "lucid/trace.h"
#include "testutil.h"

/* cmocka compares floats only; these are doubles. */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* One 8-GPU machine; work 800, 400 at t=0 and 80 at t=10 (GPU-seconds).
 * SRPT: the 400 runs 0..10 (320 left), the 80 runs 10..20, the 400 ends at
 * 60, the 800 at 160: flows 160 + 60 + 10 = 230 over 3 jobs. */
static void srpt_by_hand(void **state)
{
    (void)state;
    int64_t release[] = {0, 0, 10};
    double work[] = {800, 400, 80};
    int ok;
    assert_near(lucid_srpt_mean_flow(release, work, 3, 8, &ok), 230.0 / 3, 1e-9);
    assert_int_equal(ok, 1);
    /* A gap: the machine idles until the second release. */
    int64_t r2[] = {0, 100};
    double w2[] = {80, 80};
    assert_near(lucid_srpt_mean_flow(r2, w2, 2, 8, &ok), 10.0, 1e-9);
}

static const char bounds_trace[] = "job_id,user,vc,gpu_num,submit_time,duration\n"
                                   "1,u1,a,8,0,100\n"
                                   "2,u1,a,8,0,50\n"
                                   "3,u2,a,4,10,20\n"
                                   "4,u2,b,1,0,100\n";

static void bounds_by_hand(void **state)
{
    (void)state;
    lucid_vcs vcs = {0};
    lucid_vcs_add(&vcs, "a", 1);
    lucid_vcs_add(&vcs, "b", 1);
    lucid_trace trace;
    lucid_error err;
    assert_int_equal(lucid_trace_load_mem(&trace, "t.csv", bounds_trace, strlen(bounds_trace),
                                          &vcs, &err),
                     0);
    lucid_bounds b;
    assert_int_equal(lucid_bounds_compute(&trace, &vcs, 8, &b, &err), 0);
    /* Mean duration (100 + 50 + 20 + 100) / 4. */
    assert_near(b.mean_duration, 67.5, 1e-9);
    /* VC a: relaxation 230/3 (srpt_by_hand) above its mean duration 170/3;
     * VC b: one job, relaxation 100/8 below its duration 100. */
    assert_near(b.vc[0].mean_duration, 170.0 / 3, 1e-9);
    assert_near(b.vc[0].relaxation, 230.0 / 3, 1e-9);
    assert_near(b.vc[1].relaxation, 12.5, 1e-9);
    assert_near(b.per_vc, (230.0 + 100.0) / 4, 1e-9);
    /* Pooled, 16 GPUs: flows 6.25, 5, 36.25, 86.25 (mean 33.44) < 67.5. */
    assert_near(b.pooled, 67.5, 1e-9);
    assert_int_equal(b.gpus, 16);
    lucid_bounds_free(&b);
    lucid_trace_free(&trace);
    lucid_vcs_free(&vcs);
}

/* Three jobs: JCT 20 on a 5 s job (slowdown over the 10 s threshold: 2),
 * 300 on 100 s (3), 50 on 50 s (1).  Users u1 {2, 3} and u2 {1}: means 2.5
 * and 1, Jain 3.5^2 / (2 x 7.25); the VCs split the same way. */
static void metrics_by_hand(void **state)
{
    (void)state;
    static const char text[] = "job_id,user,vc,gpu_num,submit_time,duration\n"
                               "1,u1,a,1,0,5\n"
                               "2,u1,a,1,0,100\n"
                               "3,u2,b,1,0,50\n";
    lucid_vcs vcs = {0};
    lucid_vcs_add(&vcs, "a", 1);
    lucid_vcs_add(&vcs, "b", 1);
    lucid_trace trace;
    lucid_error err;
    assert_int_equal(lucid_trace_load_mem(&trace, "m.csv", text, strlen(text), &vcs, &err), 0);
    lucid_sim_result result;
    memset(&result, 0, sizeof result);
    result.run = calloc(3, sizeof *result.run);
    result.excluded = calloc(3, 1);
    assert_non_null(result.run);
    assert_non_null(result.excluded);
    result.run[0].end_time = 20;
    result.run[1].end_time = 300;
    result.run[2].end_time = 50;
    lucid_metrics m;
    assert_int_equal(lucid_metrics_compute(&trace, &result, -1, &m), 0);
    assert_int_equal(m.jobs, 3);
    assert_near(m.floor, 155.0 / 3, 1e-9);
    assert_near(m.gap, 370.0 / 155 - 1, 1e-9);
    assert_near(m.bsld_mean, 2.0, 1e-9);
    assert_near(m.bsld_p99, 2.98, 1e-9); /* rank 1.98 between 2 and 3 */
    assert_near(m.jain_users, 12.25 / 14.5, 1e-9);
    assert_near(m.jain_vcs, 12.25 / 14.5, 1e-9);
    /* One VC: Jain across VCs is undefined; across its one user too. */
    assert_int_equal(lucid_metrics_compute(&trace, &result, 1, &m), 0);
    assert_int_equal(m.jobs, 1);
    assert_true(isnan(m.jain_vcs));
    assert_true(isnan(m.jain_users));
    assert_near(m.gap, 0.0, 1e-12);
    /* An excluded job is not counted. */
    result.excluded[1] = 1;
    assert_int_equal(lucid_metrics_compute(&trace, &result, -1, &m), 0);
    assert_int_equal(m.jobs, 2);
    assert_near(m.bsld_mean, 1.5, 1e-9);
    free(result.run);
    free(result.excluded);
    lucid_trace_free(&trace);
    lucid_vcs_free(&vcs);
}

/* VCs a, b, c (the random traces below use these) and one without jobs. */
static const char *const *four_vcs(lucid_vcs *vcs)
{
    static const char *const names[] = {"a", "b", "c", "empty"};
    for (int v = 0; v < 4; v++)
        lucid_vcs_add(vcs, names[v], 4);
    return names;
}

/* A trace of 4 VCs (one without jobs), 7 users, jobs of 1-32 GPUs (both
 * of Table 5's size classes, and a class empty when `gpus` says so),
 * excluded jobs and random end times, with its result. */
typedef struct random_run {
    lucid_vcs vcs;
    lucid_trace trace;
    lucid_sim_result result;
    char *text;
} random_run;

static void random_run_make(random_run *rr, uint64_t seed, int only_small)
{
    memset(rr, 0, sizeof *rr);
    const char *const *names = four_vcs(&rr->vcs);
    static const int gpus[] = {1, 1, 2, 4, 8, 16, 32};
    size_t cap = 1 << 20, len = 0;
    rr->text = malloc(cap);
    assert_non_null(rr->text);
    len += (size_t)snprintf(rr->text, cap, "job_id,user,vc,gpu_num,submit_time,duration\n");
    uint64_t x = seed;
    const int njobs = 3000;
    for (int i = 0; i < njobs; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        unsigned r = (unsigned)(x >> 33);
        len += (size_t)snprintf(rr->text + len, cap - len, "%d,u%u,%s,%d,%d,%u\n", i + 1, r % 7,
                                names[r % 3], gpus[(r >> 8) % (only_small ? 5u : 7u)], i,
                                1 + r % 500);
    }
    lucid_error err;
    assert_int_equal(lucid_trace_load_mem(&rr->trace, "v.csv", rr->text, len, &rr->vcs, &err), 0);
    rr->result.run = calloc(rr->trace.njobs, sizeof *rr->result.run);
    rr->result.excluded = calloc(rr->trace.njobs, 1);
    assert_non_null(rr->result.run);
    assert_non_null(rr->result.excluded);
    for (size_t i = 0; i < rr->trace.njobs; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        rr->result.run[i].end_time = rr->trace.jobs[i].submit_time + rr->trace.jobs[i].duration +
                                     (int64_t)((x >> 33) % 2000);
        rr->result.run[i].queue = (double)((x >> 40) % 700);
        rr->result.excluded[i] = (x >> 20) % 17 == 0;
    }
}

static void random_run_free(random_run *rr)
{
    free(rr->result.run);
    free(rr->result.excluded);
    lucid_trace_free(&rr->trace);
    lucid_vcs_free(&rr->vcs);
    free(rr->text);
}

static void assert_same_metrics(const lucid_metrics *got, const lucid_metrics *want)
{
    assert_int_equal(got->jobs, want->jobs);
    const double want_v[] = {want->floor,      want->gap,      want->bsld_mean, want->bsld_p99,
                             want->jain_users, want->jain_vcs, want->gpu_util};
    const double got_v[] = {got->floor,      got->gap,      got->bsld_mean, got->bsld_p99,
                            got->jain_users, got->jain_vcs, got->gpu_util};
    for (size_t k = 0; k < sizeof want_v / sizeof want_v[0]; k++)
        if (!(isnan(want_v[k]) && isnan(got_v[k])))
            assert_memory_equal(&got_v[k], &want_v[k], sizeof want_v[k]);
}

static void assert_same_summary(const lucid_summary *got, const lucid_summary *want)
{
    assert_int_equal(got->jobs, want->jobs);
    const double want_v[] = {want->avg_jct, want->avg_queue, want->p999_queue};
    const double got_v[] = {got->avg_jct, got->avg_queue, got->p999_queue};
    assert_memory_equal(got_v, want_v, sizeof want_v);
}

/* The one-pass metrics of every VC (summary.csv) must be the bits of one
 * lucid_metrics_compute call per VC. */
static void metrics_of_all_vcs_match_one_by_one(void **state)
{
    (void)state;
    random_run rr;
    random_run_make(&rr, 99, 0);
    lucid_metrics all[5], one;
    assert_int_equal(lucid_metrics_compute_vcs(&rr.trace, &rr.result, 4, all), 0);
    for (int v = -1; v < 4; v++) {
        assert_int_equal(lucid_metrics_compute(&rr.trace, &rr.result, v, &one), 0);
        assert_same_metrics(&all[v < 0 ? 4 : v], &one);
    }
    assert_int_equal(all[3].jobs, 0);
    assert_true(all[0].jobs > 500 && !isnan(all[0].jain_users) && !isnan(all[4].jain_vcs));
    random_run_free(&rr);
}

/* A policy's figures, made in two passes for every VC, all jobs and both
 * size classes (summary.csv and the terminal's Tables 4 and 5), must be
 * the bits of the straightforward one-row functions, each of which reads
 * every job: lucid_summarize and lucid_metrics_compute(_sized).  Also
 * with the large class empty. */
static void policy_summary_matches_one_row_at_a_time(void **state)
{
    (void)state;
    for (int only_small = 0; only_small <= 1; only_small++) {
        random_run rr;
        random_run_make(&rr, 7 + (uint64_t)only_small, only_small);
        lucid_policy_summary ps;
        assert_int_equal(lucid_policy_summary_make(&ps, &rr.trace, &rr.vcs, &rr.result), 0);
        assert_int_equal(ps.nvcs, 4);
        lucid_summary s;
        lucid_metrics m;
        for (int v = -1; v < 4; v++) {
            assert_int_equal(lucid_summarize(&rr.trace, &rr.result, v, INT32_MIN, INT32_MAX, &s), 0);
            assert_same_summary(&ps.sums[v < 0 ? 4 : v], &s);
            assert_int_equal(lucid_metrics_compute(&rr.trace, &rr.result, v, &m), 0);
            assert_same_metrics(&ps.metrics[v < 0 ? 4 : v], &m);
        }
        const int32_t above[] = {LUCID_LARGE_JOB_GPUS, 0}, upto[] = {INT32_MAX, LUCID_LARGE_JOB_GPUS};
        for (int c = 0; c < LUCID_SIZE_CLASSES; c++) {
            assert_int_equal(lucid_summarize(&rr.trace, &rr.result, -1, above[c], upto[c], &s), 0);
            assert_same_summary(&ps.class_sums[c], &s);
            assert_int_equal(
                lucid_metrics_compute_sized(&rr.trace, &rr.result, -1, above[c], upto[c], &m), 0);
            assert_same_metrics(&ps.class_metrics[c], &m);
        }
        /* Both classes hold jobs (but the large one without them), and
         * together every job of the run. */
        assert_int_equal(ps.class_sums[0].jobs == 0, only_small);
        assert_int_equal(ps.class_sums[0].jobs + ps.class_sums[1].jobs, ps.sums[4].jobs);
        assert_true(ps.class_sums[1].jobs > 1000 && !isnan(ps.class_metrics[1].jain_users) &&
                    !isnan(ps.class_metrics[1].jain_vcs) && isnan(ps.class_metrics[1].gpu_util));
        lucid_policy_summary_free(&ps);
        random_run_free(&rr);
    }
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* lucid_percentile selects rather than sorts: it must give the bits the
 * textbook definition gives on the sorted values (linear interpolation
 * between ranks floor(pos) and floor(pos) + 1), on inputs with many ties
 * (queue times are mostly 0), sorted and reversed inputs and tiny sizes. */
static void percentile_matches_sorted_definition(void **state)
{
    (void)state;
    static double v[5000], sorted[5000];
    const double ps[] = {0, 1, 50, 99, 99.9, 100};
    uint64_t x = 7;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)(round * 37 % 5000);
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned r = (unsigned)(x >> 33);
            v[i] = round % 4 == 0 ? (double)(r % 3)               /* ties */
                   : round % 4 == 1 ? (double)i                   /* sorted */
                   : round % 4 == 2 ? (double)(n - i)             /* reversed */
                                    : (r % 2 ? 0.0 : (double)(r % 100000) / 7);
        }
        for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
            memcpy(sorted, v, n * sizeof *v);
            qsort(sorted, n, sizeof *sorted, by_value);
            double pos = (double)(n - 1) * ps[k] / 100.0;
            size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
            double want = sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - (double)lo);
            double work[5000];
            memcpy(work, v, n * sizeof *v);
            double got = lucid_percentile(work, n, ps[k]);
            assert_memory_equal(&got, &want, sizeof got);
        }
    }
    double one = 42;
    assert_true(lucid_percentile(&one, 1, 99.9) == 42);
}

/* eta-summary.csv's calibration per VC in one pass against the definition
 * worked straight: per VC, the jobs that waited > 60 s after their
 * prediction, the share inside [P10, P90] and the sorted median of the
 * relative errors (even and odd counts, a VC without jobs). */
static void eta_calibration_of_all_vcs_matches_definition(void **state)
{
    (void)state;
    lucid_vcs vcs = {0};
    const char *const *names = four_vcs(&vcs);
    char *text = malloc(1 << 18);
    assert_non_null(text);
    size_t len = (size_t)sprintf(text, "job_id,vc,gpu_num,submit_time,duration\n");
    uint64_t x = 5;
    for (int i = 0; i < 2001; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        len += (size_t)sprintf(text + len, "%d,%s,1,%d,100\n", i + 1, names[(x >> 33) % 3], i);
    }
    lucid_trace trace;
    lucid_error err;
    assert_int_equal(lucid_trace_load_mem(&trace, "e.csv", text, len, &vcs, &err), 0);
    size_t nj = trace.njobs;
    lucid_sim_result r;
    memset(&r, 0, sizeof r);
    r.run = calloc(nj, sizeof *r.run);
    r.excluded = calloc(nj, 1);
    r.eta_p10 = malloc(nj * sizeof *r.eta_p10);
    r.eta_p50 = malloc(nj * sizeof *r.eta_p50);
    r.eta_p90 = malloc(nj * sizeof *r.eta_p90);
    r.eta_at = malloc(nj * sizeof *r.eta_at);
    assert_true(r.run && r.excluded && r.eta_p10 && r.eta_p50 && r.eta_p90 && r.eta_at);
    for (size_t i = 0; i < nj; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int64_t at = trace.jobs[i].submit_time + (int64_t)((x >> 40) % 30);
        r.eta_at[i] = at;
        r.run[i].start_time = (x >> 20) % 11 == 0 ? -1 : at + (int64_t)((x >> 33) % 400);
        r.eta_p50[i] = (x >> 25) % 13 == 0 ? -1 : at + (int64_t)((x >> 45) % 400);
        r.eta_p10[i] = r.eta_p50[i] - 50;
        r.eta_p90[i] = r.eta_p50[i] + 80;
        r.excluded[i] = (x >> 30) % 19 == 0;
    }
    double cov[5], med[5];
    int64_t n[5];
    lucid_eta_calibration_vcs(&trace, &r, 4, cov, med, n);
    double *errs = malloc(nj * sizeof *errs);
    assert_non_null(errs);
    for (int v = -1; v < 4; v++) {
        size_t k = 0, inside = 0;
        for (size_t i = 0; i < nj; i++) {
            int64_t start = r.run[i].start_time;
            if (r.excluded[i] || (v >= 0 && trace.jobs[i].vc != v) || start < 0 ||
                r.eta_p50[i] < 0 || start - r.eta_at[i] <= 60)
                continue;
            inside += start >= r.eta_p10[i] && start <= r.eta_p90[i];
            double wait = (double)(start - r.eta_at[i]);
            errs[k++] = fabs((double)(r.eta_p50[i] - r.eta_at[i]) - wait) / wait;
        }
        size_t at = v < 0 ? 4 : (size_t)v;
        assert_int_equal(n[at], (int64_t)k);
        if (k == 0) {
            assert_true(isnan(cov[at]) && isnan(med[at]));
            continue;
        }
        qsort(errs, k, sizeof *errs, by_value);
        double want_med = k % 2 ? errs[k / 2] : (errs[k / 2 - 1] + errs[k / 2]) / 2;
        double want_cov = (double)inside / (double)k;
        assert_memory_equal(&med[at], &want_med, sizeof want_med);
        assert_memory_equal(&cov[at], &want_cov, sizeof want_cov);
    }
    assert_int_equal(n[3], 0);
    int parities = 0; /* both the odd and the even median were exercised */
    for (int v = 0; v < 5; v++)
        parities |= n[v] > 0 ? 1 << (n[v] % 2) : 0;
    assert_true(n[0] > 100);
    assert_int_equal(parities, 3);
    double c1, m1;
    int64_t n1;
    lucid_eta_calibration(&trace, &r, 1, &c1, &m1, &n1); /* the one-VC call agrees */
    assert_int_equal(n1, n[1]);
    assert_memory_equal(&m1, &med[1], sizeof m1);
    free(errs);
    free(r.run);
    free(r.excluded);
    free(r.eta_p10);
    free(r.eta_p50);
    free(r.eta_p90);
    free(r.eta_at);
    lucid_trace_free(&trace);
    lucid_vcs_free(&vcs);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(srpt_by_hand),
        cmocka_unit_test(bounds_by_hand),
        cmocka_unit_test(metrics_by_hand),
        cmocka_unit_test(percentile_matches_sorted_definition),
        cmocka_unit_test(metrics_of_all_vcs_match_one_by_one),
        cmocka_unit_test(policy_summary_matches_one_row_at_a_time),
        cmocka_unit_test(eta_calibration_of_all_vcs_matches_definition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
