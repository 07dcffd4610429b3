/* eta.c — start-time estimates (eta.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/eta.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int lucid_eta_table_add(lucid_eta_table *t, double ratio)
{
    if (!(ratio > 0) || !isfinite(ratio))
        return 0;
    if (LUCID_GROW(t->ratios, t->cap, t->n + 1) < 0)
        return -1;
    t->ratios[t->n++] = ratio;
    t->sum += ratio;
    return 0;
}

double lucid_eta_table_mean(const lucid_eta_table *t)
{
    return t->n < LUCID_ETA_MIN_HISTORY ? 1.0 : t->sum / (double)t->n;
}

void lucid_eta_table_free(lucid_eta_table *t)
{
    free(t->ratios);
    memset(t, 0, sizeof *t);
}

double lucid_eta_table_quantile(lucid_eta_table *t, double at_least, double q)
{
    /* Re-sorting on every query would cost O(n log n) per prediction; the
     * table is re-sorted when it has grown by 5 % (the newest ratios wait). */
    if (t->n >= LUCID_ETA_MIN_HISTORY && t->n > t->sorted + 16 + t->sorted / 20) {
        qsort(t->ratios, t->n, sizeof *t->ratios, compare_doubles);
        t->sorted = t->n;
    }
    double scale = q < 0.3 ? 1.1 : q < 0.7 ? 1.5 : 3.0;
    if (t->sorted < LUCID_ETA_MIN_HISTORY) {
        double prior = q < 0.3 ? 0.25 : q < 0.7 ? 1.0 : 4.0;
        return prior > at_least ? prior : at_least * scale;
    }
    size_t lo = 0, hi = t->sorted;
    while (lo < hi) { /* first ratio >= at_least */
        size_t mid = lo + (hi - lo) / 2;
        if (t->ratios[mid] < at_least)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t left = t->sorted - lo;
    if (left == 0)
        return at_least * scale;
    double pos = (double)(left - 1) * q;
    size_t i = (size_t)floor(pos);
    size_t j = i + 1 < left ? i + 1 : i;
    double v = t->ratios[lo + i] + (t->ratios[lo + j] - t->ratios[lo + i]) * (pos - (double)i);
    return v;
}

typedef struct scenario {
    const lucid_backfill *bf;
    lucid_eta_table *table;
    double q;
} scenario;

/* A running job's time left in this scenario: its estimate times the
 * ratio's q-quantile among jobs that ran at least as long, minus elapsed. */
static int64_t scenario_remaining(void *ctx, const lucid_sched *s, int32_t job)
{
    scenario *sc = ctx;
    double est = lucid_backfill_job_estimate(s, sc->bf, job);
    double elapsed = (double)(s->now - s->run[job].start_time);
    double ratio = lucid_eta_table_quantile(sc->table, elapsed / est, sc->q);
    double left = est * ratio - elapsed;
    return left < 1 ? 1 : (int64_t)ceil(left);
}

void lucid_eta_invalidate(lucid_eta_plan *plan) { plan->valid = 0; }

void lucid_eta_plan_free(lucid_eta_plan *plan)
{
    for (int i = 0; i < 3; i++)
        lucid_profile_free(&plan->prof[i]);
    free(plan->jobs);
    free(plan->at);
    memset(plan, 0, sizeof *plan);
}

static int64_t *scenario_slot(lucid_eta *e, int sc)
{
    return sc == 0 ? &e->p10 : sc == 1 ? &e->p50 : &e->p90;
}

static void order_interval(lucid_eta *e)
{
    /* Scenario starts need not be ordered for every job (a short P10 run can
     * leave a gap a later job misses); keep the interval an interval. */
    int64_t v[3] = {e->p10, e->p50, e->p90};
    if (v[0] < 0 || v[1] < 0 || v[2] < 0)
        return;
    for (int a = 0; a < 2; a++)
        for (int b = a + 1; b < 3; b++)
            if (v[b] < v[a]) {
                int64_t tmp = v[a];
                v[a] = v[b];
                v[b] = tmp;
            }
    *e = (lucid_eta){v[0], v[1], v[2]};
}

static double work_of(const lucid_sched *s, const lucid_backfill *bf, int32_t job)
{
    return (double)s->jobs[job].gpu_num * lucid_backfill_job_estimate(s, bf, job);
}

int lucid_eta_predict(const lucid_sched *s, const lucid_backfill *bf, lucid_eta_table *t,
                      lucid_eta_plan *plan, size_t lo, size_t upto, double queued_work,
                      lucid_eta *out)
{
    static const double qs[3] = {0.1, 0.5, 0.9};
    if (upto > s->qlen)
        upto = s->qlen;
    size_t exact = upto < LUCID_ETA_EXACT_DEPTH ? upto : LUCID_ETA_EXACT_DEPTH;
    int in_order = !(bf && bf->cfg.mode != LUCID_BACKFILL_NONE);
    /* Reuse the plan if the queue still starts with the jobs it placed. */
    size_t from = 0;
    if (plan->valid && plan->placed <= exact) {
        from = plan->placed;
        for (size_t i = 0; i < plan->placed && from; i++)
            if (s->queue[i] != plan->jobs[i])
                from = 0;
    }
    if (from == 0)
        plan->head_work = 0;
    if (LUCID_GROW(plan->jobs, plan->cap_jobs, exact + 1) < 0 ||
        LUCID_GROW(plan->at, plan->cap_at, exact + 1) < 0)
        return -1;
    for (size_t i = from; i < exact; i++) {
        plan->jobs[i] = s->queue[i];
        plan->head_work += work_of(s, bf, s->queue[i]);
    }
    int64_t last[3]; /* start of the last exactly placed job, per scenario */
    for (int sc = 0; sc < 3; sc++) {
        scenario ctx = {bf, t, qs[sc]};
        lucid_profile *p = &plan->prof[sc];
        if (from == 0 && lucid_profile_build(p, s, scenario_remaining, &ctx) < 0)
            return -1;
        double ratio = lucid_eta_table_quantile(t, 0, qs[sc]);
        int64_t previous = s->now;
        if (from > 0 && *scenario_slot(&plan->at[from - 1], sc) > previous && in_order)
            previous = *scenario_slot(&plan->at[from - 1], sc);
        for (size_t i = from; i < exact; i++) {
            int32_t job = s->queue[i];
            int64_t dur = (int64_t)ceil(lucid_backfill_job_estimate(s, bf, job) * ratio);
            int nalloc = 0;
            long k = lucid_profile_fit(p, s, s->jobs[job].gpu_num, dur,
                                       in_order ? previous : s->now, &nalloc);
            int64_t at = -1;
            if (k >= 0) {
                at = p->times[k];
                if (lucid_profile_reserve(p, k, dur, nalloc) < 0)
                    return -1;
                previous = at;
            }
            *scenario_slot(&plan->at[i], sc) = at;
        }
        last[sc] = previous;
    }
    plan->placed = exact;
    plan->valid = 1;
    for (size_t i = lo; i < exact; i++) {
        out[i] = plan->at[i];
        order_interval(&out[i]);
    }
    if (upto <= exact)
        return 0;
    /* Deeper jobs by volume: the work between the exact prefix and job j is
     * the queue's total less the prefix's and less what follows j, summed
     * from the queue's end (newcomers are near it). */
    if (queued_work < 0) {
        queued_work = 0;
        for (size_t i = 0; i < s->qlen; i++)
            queued_work += work_of(s, bf, s->queue[i]);
    }
    double gpus = s->cluster.total_gpus > 0 ? (double)s->cluster.total_gpus : 1.0;
    double ratio[3];
    for (int sc = 0; sc < 3; sc++)
        ratio[sc] = lucid_eta_table_quantile(t, 0, qs[sc]);
    /* The volume ahead of a deep job is a sum of many runs: its middle
     * scenario goes by the mean ratio, not the median (durations are heavy-
     * tailed; on Venus FIFO the median error fell from 74 % to 49 %). */
    ratio[1] = lucid_eta_table_mean(t);
    size_t stop = lo > exact ? lo : exact;
    double after = 0;
    for (size_t j = s->qlen; j-- > stop;) {
        double w = work_of(s, bf, s->queue[j]);
        if (j < upto) {
            double before = queued_work - plan->head_work - after - w;
            if (before < 0)
                before = 0;
            for (int sc = 0; sc < 3; sc++)
                *scenario_slot(&out[j], sc) =
                    last[sc] + (int64_t)ceil(before * ratio[sc] / gpus);
            order_interval(&out[j]);
        }
        after += w;
    }
    return 0;
}
