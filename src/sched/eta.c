/* eta.c — start-time estimates (eta.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/eta.h"
#include "msort.h"

/* The ratio table's values are finite, so any correct sort gives the
 * same array (msort.h: inline, not qsort's comparison calls). */
static inline int value_before(const double *a, const double *b) { return *a < *b; }
LUCID_MERGE_SORT(sort_doubles, double, value_before)

/* Appends v to a sample (values[0..*n)), re-sorting it when it has grown by
 * 5 %: re-sorting on every query would cost O(n log n) per prediction, so
 * the newest values wait.  Sorting here, not when asked, keeps every answer
 * a function of the values added so far, whoever asked in between.  The
 * re-sort sorts only the values added since the last and merges them into
 * the sorted prefix (from the back, in place): O(n) instead of a full sort
 * of mostly sorted values, which was a sixth of a Venus run.  The result is
 * the same array (the values are positive and finite, so equal values are
 * the same bits and their order is immaterial). */
static int sample_add(double **values, size_t *n, size_t *cap, size_t *sorted, double v)
{
    if (LUCID_GROW(*values, *cap, *n + 1) < 0)
        return -1;
    double *a = *values;
    a[(*n)++] = v;
    if (*n >= LUCID_ETA_MIN_HISTORY && *n > *sorted + 16 + *sorted / 20) {
        size_t old = *sorted, total = *n, fresh = total - old;
        /* The new values to the end of the buffer (room after them: *cap
         * >= total; grow for a copy of them and the sort's scratch), sorted,
         * then merged. */
        if (LUCID_GROW(*values, *cap, total + 2 * fresh) < 0)
            return -1;
        a = *values;
        double *tail = a + total;
        memcpy(tail, a + old, fresh * sizeof *a);
        sort_doubles(tail, tail + fresh, fresh);
        size_t i = old, j = fresh, k = total;
        while (j > 0) {
            if (i > 0 && a[i - 1] > tail[j - 1])
                a[--k] = a[--i];
            else
                a[--k] = tail[--j];
        }
        *sorted = total;
    }
    return 0;
}

int lucid_eta_table_add(lucid_eta_table *t, double ratio)
{
    if (!(ratio > 0) || !isfinite(ratio))
        return 0;
    t->sum += ratio;
    return sample_add(&t->ratios, &t->n, &t->cap, &t->sorted, ratio);
}

static size_t sample_first_at_least(const double *values, size_t n, double at_least);
static double sample_quantile(const double *values, size_t n, double at_least, double q);

/* How far off a predicted remaining time was, in log terms. */
static double log_miss(double predicted, double actual)
{
    return fabs(log((predicted > 1 ? predicted : 1) / actual));
}

int lucid_eta_table_add_run(lucid_eta_table *t, double estimate, double duration)
{
    if (!(estimate > 0) || !(duration > 0) || !isfinite(duration))
        return 0;
    /* A job that outran its estimate scores the two rules for such jobs:
     * what each would have said about the time it still had to run when it
     * reached its estimate and halfway (geometrically) from there to its
     * end (before it joins the table). */
    for (int k = 0; k < 2 && duration > estimate + 1 && t->sorted_d >= LUCID_ETA_MIN_HISTORY; k++) {
        double elapsed = k == 0 ? estimate : sqrt(estimate * duration);
        double actual = duration - elapsed;
        double weight = duration - estimate;
        t->miss_ratio += weight * log_miss(estimate * lucid_eta_table_quantile(
                                                          t, elapsed / estimate, 0.5) -
                                               elapsed,
                                           actual);
        t->miss_duration +=
            weight * log_miss(lucid_eta_table_duration(t, elapsed, 0.5) - elapsed, actual);
    }
    if (lucid_eta_table_add(t, duration / estimate) < 0)
        return -1;
    return sample_add(&t->durations, &t->nd, &t->cap_d, &t->sorted_d, duration);
}

double lucid_eta_table_mean(const lucid_eta_table *t)
{
    return t->n < LUCID_ETA_MIN_HISTORY ? 1.0 : t->sum / (double)t->n;
}

/* Whether a running job's remaining time comes from the durations (it has
 * outrun its estimate and that rule has scored better) or the ratios. */
static int by_duration(const lucid_eta_table *t, double elapsed, double estimate)
{
    return elapsed > estimate && t->miss_duration < t->miss_ratio &&
           t->sorted_d >= LUCID_ETA_MIN_HISTORY;
}

int lucid_eta_table_note_submission(lucid_eta_table *t, const lucid_sched *s,
                                    const lucid_backfill *bf, int32_t user)
{
    if (user < 0)
        return 0;
    int noted = 0;
    for (int32_t j = s->run_head; j >= 0; j = s->run[j].run_next) {
        if (s->jobs[j].user != user)
            continue;
        noted++;
        double elapsed = (double)(s->now - s->run[j].start_time);
        double estimate = lucid_backfill_job_estimate(s, bf, j);
        if ((size_t)j >= t->cap_slot_of) {
            size_t old = t->cap_slot_of;
            if (LUCID_GROW(t->slot_of, t->cap_slot_of, (size_t)j + 1) < 0)
                return -1;
            memset(t->slot_of + old, 0, (t->cap_slot_of - old) * sizeof *t->slot_of);
        }
        size_t i = t->slot_of[j] ? t->slot_of[j] - 1 : t->npending;
        if (i == t->npending) {
            if (LUCID_GROW(t->pending, t->cap_pending, t->npending + 1) < 0)
                return -1;
            t->npending++;
            t->slot_of[j] = (uint32_t)t->npending;
        }
        t->pending[i] = (lucid_eta_pending){j, elapsed, estimate, by_duration(t, elapsed, estimate)};
    }
    return noted;
}

int lucid_eta_table_note_end(lucid_eta_table *t, int32_t job, double estimate, double duration)
{
    if (job < 0 || (size_t)job >= t->cap_slot_of || t->slot_of[job] == 0)
        return 0;
    size_t i = t->slot_of[job] - 1;
    lucid_eta_pending note = t->pending[i];
    t->slot_of[job] = 0;
    t->pending[i] = t->pending[--t->npending];
    if (i < t->npending)
        t->slot_of[t->pending[i].job] = (uint32_t)i + 1;
    (void)estimate; /* the note's estimate is the one its prediction used */
    if (!(duration > 0) || t->sorted < LUCID_ETA_MIN_HISTORY)
        return 0;
    /* Its level (mid-rank of ties) in the distribution its remaining time
     * came from then: the durations >= elapsed, or the ratios >= elapsed /
     * estimate. */
    const double *values = note.by_duration ? t->durations : t->ratios;
    size_t count = note.by_duration ? t->sorted_d : t->sorted;
    double at_least = note.by_duration ? note.elapsed : note.elapsed / note.estimate;
    double value = note.by_duration ? duration : duration / note.estimate;
    size_t lo = sample_first_at_least(values, count, at_least);
    size_t n = count - lo;
    if (n == 0)
        return 0;
    size_t below = sample_first_at_least(values + lo, n, value);
    size_t upto = below;
    while (upto < n && values[lo + upto] <= value)
        upto++;
    double level = ((double)below + (double)upto) / 2 / (double)n;
    if (level < 0.5 / (double)n)
        level = 0.5 / (double)n;
    if (level > 1 - 0.5 / (double)n)
        level = 1 - 0.5 / (double)n;
    return sample_add(&t->levels, &t->nlevels, &t->cap_levels, &t->sorted_levels, level);
}

double lucid_eta_table_submitter_level(const lucid_eta_table *t, double q)
{
    if (t->sorted_levels < LUCID_ETA_MIN_HISTORY)
        return q;
    return sample_quantile(t->levels, t->sorted_levels, 0, q);
}

int lucid_eta_table_note_arrival(lucid_eta_table *t, int32_t job, int64_t time)
{
    /* Drop what left the window (arrivals come in time order); compact
     * once the dropped prefix is half the array. */
    while (t->arr_head < t->narr && t->arrivals[t->arr_head].time < time - LUCID_ETA_GHOST_WINDOW)
        t->arr_head++;
    if (t->arr_head > 0 && t->arr_head * 2 >= t->narr) {
        memmove(t->arrivals, t->arrivals + t->arr_head,
                (t->narr - t->arr_head) * sizeof *t->arrivals);
        t->narr -= t->arr_head;
        t->arr_head = 0;
    }
    if (LUCID_GROW(t->arrivals, t->cap_arr, t->narr + 1) < 0)
        return -1;
    t->arrivals[t->narr++] = (lucid_eta_arrival){time, job};
    return 0;
}

void lucid_eta_table_held_jobs(const lucid_eta_table *t, lucid_job_visit visit, void *ctx)
{
    for (size_t i = 0; i < t->npending; i++)
        visit(ctx, t->pending[i].job);
    for (size_t i = t->arr_head; i < t->narr; i++)
        visit(ctx, t->arrivals[i].job);
}

void lucid_eta_table_free(lucid_eta_table *t)
{
    free(t->arrivals);
    free(t->levels);
    free(t->pending);
    free(t->slot_of);
    free(t->durations);
    free(t->ratios);
    memset(t, 0, sizeof *t);
}

/* The first of the sorted values[0..n) that is >= at_least (n if none).
 * Unconditioned asks (at_least 0, every waiting job's run) need no search. */
static size_t sample_first_at_least(const double *values, size_t n, double at_least)
{
    if (n == 0 || at_least <= values[0])
        return 0;
    /* The last value below at_least is in [at, at + len): halved without a
     * branch (a conditional move), whose mispredictions cost more than the
     * search's instructions. */
    size_t at = 0, len = n;
    while (len > 1) {
        size_t half = len / 2;
        at += values[at + half] < at_least ? half : 0;
        len -= half;
    }
    return at + 1;
}

/* The q-quantile of values[lo..n) (interpolated between closest ranks), the
 * values >= at_least of a sorted sample whose first such is values[lo];
 * at_least x (1.1, 1.5, 3) when there is none. */
static double sample_quantile_from(const double *values, size_t n, size_t lo, double at_least,
                                   double q)
{
    size_t left = n - lo;
    if (left == 0)
        return at_least * (q < 0.3 ? 1.1 : q < 0.7 ? 1.5 : 3.0);
    double pos = (double)(left - 1) * q;
    size_t i = (size_t)pos; /* floor: pos >= 0 (floor was a libm call per quantile) */
    size_t j = i + 1 < left ? i + 1 : i;
    return values[lo + i] + (values[lo + j] - values[lo + i]) * (pos - (double)i);
}

/* The q-quantile of the sorted values[0..n) that are >= at_least. */
static double sample_quantile(const double *values, size_t n, double at_least, double q)
{
    return sample_quantile_from(values, n, sample_first_at_least(values, n, at_least), at_least,
                                q);
}

double lucid_eta_table_quantile(lucid_eta_table *t, double at_least, double q)
{
    if (t->sorted < LUCID_ETA_MIN_HISTORY) {
        double prior = q < 0.3 ? 0.25 : q < 0.7 ? 1.0 : 4.0;
        return prior > at_least ? prior : at_least * (q < 0.3 ? 1.1 : q < 0.7 ? 1.5 : 3.0);
    }
    return sample_quantile(t->ratios, t->sorted, at_least, q);
}

double lucid_eta_table_duration(const lucid_eta_table *t, double at_least, double q)
{
    if (t->sorted_d < LUCID_ETA_MIN_HISTORY)
        return -1;
    return sample_quantile(t->durations, t->sorted_d, at_least, q);
}

typedef struct scenarios {
    const lucid_backfill *bf;
    lucid_eta_table *table;
    const double *q; /* the scenarios' quantiles, nq of them */
    int nq;
    int32_t submitter;   /* whose running jobs end at submitter_q instead (-1: none) */
    const double *submitter_q;
} scenarios;

/* A running job's time left in each scenario q: its estimate times the
 * ratio's q-quantile among jobs that ran at least as long, minus elapsed.
 * The scenarios share the job's estimate and where it falls in the sorted
 * samples (one search, not one per scenario). */
static void scenario_remaining(void *ctx, const lucid_sched *s, int32_t job, int64_t *out)
{
    const scenarios *sc = ctx;
    const lucid_eta_table *t = sc->table;
    const double *q = sc->submitter >= 0 && s->jobs[job].user == sc->submitter ? sc->submitter_q
                                                                               : sc->q;
    double est = lucid_backfill_job_estimate(s, sc->bf, job);
    double elapsed = (double)(s->now - s->run[job].start_time);
    /* A job that has outrun its estimate: where estimates are poor, the
     * ratios of jobs that outran theirs as far come mostly from tiny
     * estimates with huge ratios (on Venus the P50 remaining time of such
     * jobs was 1.7x the actual), and the durations of jobs that ran at least
     * as long say more (1.2x); where estimates are good (a noisy but
     * unbiased estimate) the ratio says more.  The table keeps score of the
     * two rules on the finished jobs that outran their estimates and this
     * uses the better so far (lucid_eta_table_duration: -1, so the ratio,
     * below LUCID_ETA_MIN_HISTORY durations). */
    if (by_duration(t, elapsed, est)) {
        size_t lo = sample_first_at_least(t->durations, t->sorted_d, elapsed);
        for (int k = 0; k < sc->nq; k++) {
            double d = sample_quantile_from(t->durations, t->sorted_d, lo, elapsed, q[k]);
            double left = d - elapsed - 1e-6;
            out[k] = left < 1 ? 1 : (int64_t)ceil(left);
        }
        return;
    }
    double at_least = elapsed / est;
    size_t lo = t->sorted >= LUCID_ETA_MIN_HISTORY
                    ? sample_first_at_least(t->ratios, t->sorted, at_least)
                    : 0;
    for (int k = 0; k < sc->nq; k++) {
        double ratio = t->sorted >= LUCID_ETA_MIN_HISTORY
                           ? sample_quantile_from(t->ratios, t->sorted, lo, at_least, q[k])
                           : lucid_eta_table_quantile(sc->table, at_least, q[k]);
        /* Whole seconds up, but not for the rounding noise of the product
         * (8000 x 0.45 x 1.1 is 3960.0000000000005, not a second more). */
        double left = est * ratio - elapsed - 1e-6;
        out[k] = left < 1 ? 1 : (int64_t)ceil(left);
    }
}

void lucid_eta_invalidate(lucid_eta_plan *plan) { plan->valid = 0; }

void lucid_eta_plan_held_jobs(const lucid_eta_plan *plan, lucid_job_visit visit, void *ctx)
{
    for (int k = 0; k < 3; k++)
        lucid_profile_held_jobs(&plan->prof[k], visit, ctx);
}

void lucid_eta_plan_free(lucid_eta_plan *plan)
{
    for (int i = 0; i < 3; i++)
        lucid_profile_free(&plan->prof[i]);
    free(plan->jobs);
    free(plan->at);
    memset(plan, 0, sizeof *plan);
}

/* A waiting job's run in each scenario: its estimate times the ratio's
 * unconditioned quantile of the scenario (ratio0[sc]). */
static void planned_runs(const lucid_sched *s, const lucid_backfill *bf, const double *ratio0,
                         int32_t job, int64_t *dur)
{
    double est = lucid_backfill_job_estimate(s, bf, job);
    for (int sc = 0; sc < 3; sc++) {
        double run = ceil(est * ratio0[sc]);
        dur[sc] = run < 1 ? 1 : (int64_t)run;
    }
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

/* How the policy's decision pass starts jobs, which the replay follows. */
enum {
    REPLAY_IN_ORDER, /* head of line: a job starts no earlier than the one ahead */
    REPLAY_ANY_FIT,  /* backfill: each job at its earliest fit after those ahead */
    REPLAY_GREEDY    /* Lucid while packing is on: at every moment, every job tried in
                      * order (partner first, then free GPUs); none holds a place */
};

static int replay_mode(const lucid_sched *s, const lucid_backfill *bf)
{
    if (bf && bf->cfg.mode != LUCID_BACKFILL_NONE)
        return REPLAY_ANY_FIT;
    if (s->lucid && s->priority && lucid_packing_switch_at(s->lucid, s->now))
        return REPLAY_GREEDY;
    return REPLAY_IN_ORDER;
}

/* Whether the backfill replay must follow the keys that decide who gets a
 * reservation (backfill_window, backfill_min_gpus): with both off every job
 * is given one at its earliest fit, as before. */
static int gated_reservations(const lucid_backfill *bf, int mode)
{
    return mode == REPLAY_ANY_FIT && (bf->cfg.window > 0 || bf->cfg.min_gpus > 0);
}

/* Whether `job` holds a reservation already (the pass keeps it, whatever
 * the keys say now). */
static int holds_reservation(const lucid_backfill *bf, int32_t job)
{
    return bf->reserved_at && bf->reserved_at[job] >= 0;
}

/* REPLAY_ANY_FIT under backfill_window / backfill_min_gpus, one scenario
 * over queue positions [0, exact), as lucid_backfill_pass decides who
 * holds a reservation: the jobs that hold one already first (the pass
 * places them before any other), then the others in queue order, each
 * given a reservation at its earliest fit if it could get one
 * (lucid_backfill_reservable by size; lucid_backfill_in_window for that
 * fit); a job that could not holds nothing, so any later job that gets
 * one may pass it: those are placed last, in queue order, on what the
 * holders left.  (As in the plain replay every holder is kept, EASY's
 * single reservation included, and packing's rule is not modelled.)
 * at[i] gets each start; *last the start of the job placed last. */
static int replay_gated(const lucid_sched *s, const lucid_backfill *bf, lucid_profile *p,
                        size_t exact, int64_t (*runs)[3], int sc, lucid_eta *at, int64_t *last)
{
    unsigned char placed[LUCID_ETA_EXACT_DEPTH] = {0};
    for (int pass = 0; pass < 3; pass++) {
        for (size_t i = 0; i < exact; i++) {
            int32_t job = s->queue[i];
            int holds = holds_reservation(bf, job);
            if (placed[i] || (pass == 0 && !holds))
                continue;
            int32_t gpus = s->jobs[job].gpu_num;
            int64_t dur = runs[i][sc];
            int nalloc = 0;
            long k = lucid_profile_fit(p, s, gpus, dur, s->now, &nalloc);
            if (pass == 1 && k >= 0 && !holds &&
                !(lucid_backfill_reservable(&bf->cfg, gpus, 0) &&
                  lucid_backfill_in_window(&bf->cfg, s->now, p->times[k])))
                continue; /* holds none: placed after the later holders */
            placed[i] = 1;
            *scenario_slot(&at[i], sc) = k >= 0 ? p->times[k] : -1;
            if (k < 0)
                continue;
            if (lucid_profile_reserve(p, k, dur, nalloc) < 0)
                return -1;
            *last = p->times[k];
        }
    }
    return 0;
}

int lucid_eta_uses_submitter(const lucid_sched *s, const lucid_backfill *bf)
{
    /* Only the greedy replay reads the levels (see lucid_eta_predict). */
    return !(bf && bf->cfg.mode != LUCID_BACKFILL_NONE) && s->lucid && s->priority;
}

static lucid_pair_side pair_side(const lucid_sched *s, int32_t job)
{
    return (lucid_pair_side){.gpus = s->jobs[job].gpu_num,
                             .gmem_mib = s->jobs[job].gmem,
                             .score = s->run[job].share_score,
                             .priority = s->priority[job]};
}

/* A running job that shares its GPUs and outlives its partner becomes a
 * partner again when the partner ends (the pass makes it a candidate then),
 * until it ends itself: [from, until) in one scenario. */
typedef struct late_partner {
    int32_t job;
    int64_t from, until;
} late_partner;

enum { ETA_MAX_LATE = 32 }; /* late partners kept per scenario (the first started) */

/* The running packed jobs (of at most 8 GPUs) that outlive their partners,
 * per scenario k of the nk whose remaining times `remaining` gives (the
 * profile's tie rule: on equal ends the job of the higher index holds the
 * GPUs).  late[k][0..nlate[k]). */
static void late_partners(const lucid_sched *s, lucid_remaining_many_fn remaining, void *ctx,
                          int nk, late_partner (*late)[ETA_MAX_LATE], size_t *nlate)
{
    for (int k = 0; k < nk; k++)
        nlate[k] = 0;
    for (int32_t j = s->run_head; j >= 0; j = s->run[j].run_next) {
        int32_t partner = s->run[j].partner;
        if (partner < 0 || s->run[partner].status != LUCID_RUNNING ||
            s->jobs[j].gpu_num > LUCID_PACK_MAX_GPUS)
            continue;
        int64_t mine[LUCID_PROFILE_MAX_MANY], theirs[LUCID_PROFILE_MAX_MANY];
        remaining(ctx, s, j, mine);
        remaining(ctx, s, partner, theirs);
        for (int k = 0; k < nk; k++)
            if ((mine[k] > theirs[k] || (mine[k] == theirs[k] && j > partner)) &&
                nlate[k] < ETA_MAX_LATE)
                late[k][nlate[k]++] =
                    (late_partner){j, s->now + theirs[k], s->now + mine[k]};
    }
}

/* One scenario of REPLAY_GREEDY over queue positions [0, n): Lucid's pass
 * replayed at every moment the profile changes.  At a moment T the waiting
 * jobs are tried in queue order: on the GPUs of a job that may take a
 * partner at T — a job the replay started (on free GPUs, not yet sharing,
 * still running), or a running job whose partner has ended (`late`) — that
 * the pair rule allows, the earliest started first, else on GPUs free for
 * their whole run from T.  A job that fits neither way is tried again at
 * the first moment it could: its earliest fit on free GPUs (which only
 * moves later as jobs are placed), when a job of its GPU count starts on
 * free GPUs, or when a late partner of its GPU count becomes free.  Running
 * jobs that are not sharing are not tried: a job that waits at the
 * prediction found no partner among them (it would have packed already).
 * A packed job takes no free GPU; the pair's GPUs are freed when the later
 * of the two ends.  Entries with arrive[i] after now are arrivals to come
 * (LUCID_ETA_GHOST_WINDOW), first tried at their arrival. */
enum { GREEDY_MAX_ALLOC = 8 }; /* GPU groups kept per started job (a partner has <= 8 GPUs) */
enum { GREEDY_MAX = LUCID_ETA_EXACT_DEPTH + LUCID_ETA_MAX_GHOSTS }; /* queue jobs and arrivals to come */

/* The first moment after T when a late partner of job's GPU count that the
 * pair rule allows becomes free (-1: none). */
static int64_t late_wakeup(const lucid_sched *s, int32_t job, const late_partner *late,
                           size_t nlate, const signed char *ltaken, int64_t T)
{
    int64_t best = -1;
    int32_t gpus = s->jobs[job].gpu_num;
    if (nlate == 0 || gpus > LUCID_PACK_MAX_GPUS)
        return -1;
    const lucid_lucid_inputs *in = s->lucid;
    for (size_t l = 0; l < nlate; l++) {
        if (ltaken[l] || late[l].from <= T || late[l].from >= late[l].until ||
            s->jobs[late[l].job].gpu_num != gpus || (best >= 0 && late[l].from >= best))
            continue;
        lucid_pair_side me = pair_side(s, job), other = pair_side(s, late[l].job);
        if (lucid_pair_allowed(&me, &other, in->gmem_limit, in->score_sum, in->priority_ratio))
            best = late[l].from;
    }
    return best;
}

static int64_t earlier_of(int64_t a, int64_t b) { return a < 0 ? b : b < 0 ? a : a < b ? a : b; }

static int replay_greedy(const lucid_sched *s, const int32_t *jobs, const int64_t *arrive,
                         const int64_t *dur, const signed char *want, lucid_profile *p, size_t n,
                         const late_partner *late, size_t nlate, int64_t *start)
{
    /* want[i]: the caller reads start[i]; the replay stops once every such
     * entry has started (a start is final when made: later moments only
     * place other jobs), so arrivals to come after that cost nothing. */
    size_t wanted = 0;
    for (size_t i = 0; i < n; i++)
        wanted += want[i] != 0;
    int64_t next[GREEDY_MAX];
    signed char state[GREEDY_MAX]; /* 0 waits, 1 on free GPUs, 2 packed */
    signed char taken[GREEDY_MAX], ltaken[ETA_MAX_LATE] = {0};
    lucid_alloc held[GREEDY_MAX][GREEDY_MAX_ALLOC]; /* where each started */
    int nheld[GREEDY_MAX];
    const lucid_lucid_inputs *in = s->lucid;
    for (size_t i = 0; i < n; i++) {
        int32_t job = jobs[i];
        if (arrive[i] > s->now) {
            next[i] = arrive[i]; /* an arrival to come: tried when it comes */
        } else {
            int nalloc = 0;
            long k = lucid_profile_fit(p, s, s->jobs[job].gpu_num, dur[i], s->now, &nalloc);
            next[i] = earlier_of(k >= 0 ? p->times[k] : -1,
                                 late_wakeup(s, job, late, nlate, ltaken, s->now - 1));
        }
        start[i] = -1;
        state[i] = taken[i] = 0;
        nheld[i] = 0;
    }
    while (wanted > 0) {
        int64_t T = -1;
        for (size_t i = 0; i < n; i++)
            if (state[i] == 0 && next[i] >= 0 && (T < 0 || next[i] < T))
                T = next[i];
        if (T < 0)
            break;
        for (size_t i = 0; i < n; i++) {
            if (state[i] != 0 || next[i] != T)
                continue;
            int32_t job = jobs[i];
            int32_t gpus = s->jobs[job].gpu_num;
            lucid_pair_side me = pair_side(s, job);
            /* Late partners first: they started before any job the replay starts. */
            size_t lp = nlate;
            for (size_t l = 0; l < nlate && gpus <= LUCID_PACK_MAX_GPUS; l++) {
                if (ltaken[l] || late[l].from > T || late[l].until <= T ||
                    s->jobs[late[l].job].gpu_num != gpus)
                    continue;
                lucid_pair_side other = pair_side(s, late[l].job);
                if (lucid_pair_allowed(&me, &other, in->gmem_limit, in->score_sum,
                                       in->priority_ratio) &&
                    (lp == nlate ||
                     s->run[late[l].job].start_time < s->run[late[lp].job].start_time))
                    lp = l;
            }
            if (lp < nlate) {
                state[i] = 2;
                wanted -= want[i] != 0;
                ltaken[lp] = 1;
                start[i] = T;
                /* Outliving the running job, it keeps the GPUs the profile
                 * frees at that job's end. */
                const lucid_jobrun *r = &s->run[late[lp].job];
                if (T + dur[i] > late[lp].until &&
                    lucid_profile_reserve_from(p, late[lp].until, T + dur[i] - late[lp].until,
                                               s->allocs + r->alloc_off, r->alloc_n) < 0)
                    return -1;
                continue;
            }
            size_t partner = n;
            for (size_t j = 0; j < n && gpus <= LUCID_PACK_MAX_GPUS; j++) {
                if (state[j] != 1 || taken[j] || start[j] > T || start[j] + dur[j] <= T ||
                    s->jobs[jobs[j]].gpu_num != gpus)
                    continue;
                lucid_pair_side other = pair_side(s, jobs[j]);
                if (lucid_pair_allowed(&me, &other, in->gmem_limit, in->score_sum,
                                       in->priority_ratio) &&
                    (partner == n || start[j] < start[partner]))
                    partner = j;
            }
            if (partner < n) {
                state[i] = 2;
                wanted -= want[i] != 0;
                taken[partner] = 1;
                start[i] = T;
                /* It takes no free GPU; if it outlives its partner, the pair's
                 * GPUs stay taken until it ends.  Nothing the replay placed
                 * can be on them then: every placement so far starts by T,
                 * when the partner held them, and runs through (GPUs are
                 * taken for a placement's whole run). */
                int64_t partner_end = start[partner] + dur[partner];
                if (T + dur[i] > partner_end && nheld[partner] > 0 &&
                    lucid_profile_reserve_from(p, partner_end, T + dur[i] - partner_end,
                                               held[partner], nheld[partner]) < 0)
                    return -1;
                continue;
            }
            int nalloc = 0;
            long k = lucid_profile_fit(p, s, gpus, dur[i], T, &nalloc);
            if (k >= 0 && p->times[k] == T) {
                if (lucid_profile_reserve(p, k, dur[i], nalloc) < 0)
                    return -1;
                state[i] = 1;
                wanted -= want[i] != 0;
                start[i] = T;
                /* Kept for a partner that may outlive it (0: too many groups to keep). */
                nheld[i] = nalloc <= GREEDY_MAX_ALLOC ? nalloc : 0;
                if (nheld[i] > 0)
                    memcpy(held[i], p->alloc, (size_t)nalloc * sizeof *p->alloc);
                /* A new partner at T for the waiting jobs of its GPU count. */
                for (size_t j = 0; j < n && gpus <= LUCID_PACK_MAX_GPUS; j++)
                    if (state[j] == 0 && s->jobs[jobs[j]].gpu_num == gpus && arrive[j] <= T &&
                        (next[j] < 0 || next[j] > T))
                        next[j] = T;
                i = (size_t)-1; /* jobs ahead of this one may pack onto it now */
                continue;
            }
            next[i] = earlier_of(k >= 0 ? p->times[k] : -1,
                                 late_wakeup(s, job, late, nlate, ltaken, T));
        }
    }
    return 0;
}

int lucid_eta_predict(const lucid_sched *s, const lucid_backfill *bf, lucid_eta_table *t,
                      lucid_eta_plan *plan, size_t lo, size_t upto, double queued_work,
                      lucid_eta *out)
{
    static const double qs[3] = {0.1, 0.5, 0.9};
    if (upto > s->qlen)
        upto = s->qlen;
    size_t exact = upto < LUCID_ETA_EXACT_DEPTH ? upto : LUCID_ETA_EXACT_DEPTH;
    int mode = replay_mode(s, bf), in_order = mode == REPLAY_IN_ORDER;
    /* Reuse the plan if the queue still starts with the jobs it placed (not
     * in the greedy replay, where a newcomer may start before jobs ahead of
     * it and so change their starts; Lucid's queues are short). */
    size_t from = 0;
    int gated = gated_reservations(bf, mode);
    /* The submitter's running jobs at their own levels: in the greedy
     * replay only, which rebuilds its plan at every prediction anyway; in
     * the others it would stop the plan being extended (FIFO's predictions
     * cost 1.7x on Venus) for a gain there that came with lower coverage. */
    int32_t submitter = plan->submitter_set && mode == REPLAY_GREEDY ? plan->submitter : -1;
    if (plan->valid && plan->placed <= exact && mode != REPLAY_GREEDY && !gated &&
        plan->built_for == submitter) {
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
    /* The table does not change during a prediction: the waiting jobs'
     * runs per scenario are worked out once, not per scenario and replay. */
    double ratio0[3];
    for (int sc = 0; sc < 3; sc++)
        ratio0[sc] = lucid_eta_table_quantile(t, 0, qs[sc]);
    int64_t runs[LUCID_ETA_EXACT_DEPTH][3];
    for (size_t i = mode == REPLAY_GREEDY ? 0 : from; i < exact; i++)
        planned_runs(s, bf, ratio0, s->queue[i], runs[i]);
    /* Arrivals to come (eta.h, LUCID_ETA_GHOST_WINDOW): the latest arrivals
     * before now, each mirrored as far after it, in Lucid's order (priority,
     * then arrival; insertion: at most LUCID_ETA_MAX_GHOSTS).  Only the P90
     * scenario has them: with them in the P50 too the median error moved
     * by -0.6 to +1.8 points over four seeds (online, Venus), and with
     * oracle durations from 17.8 to 27.7 % (docs/backfill.md). */
    lucid_eta_arrival ghosts[LUCID_ETA_MAX_GHOSTS];
    int64_t ghost_runs[LUCID_ETA_MAX_GHOSTS][3];
    size_t nghosts = 0;
    if (mode == REPLAY_GREEDY && exact > 0) {
        for (size_t a = t->narr; a-- > t->arr_head && nghosts < LUCID_ETA_MAX_GHOSTS;) {
            const lucid_eta_arrival *r = &t->arrivals[a];
            if (r->time >= s->now) /* this step's: in the queue, or started */
                continue;
            if (r->time < s->now - LUCID_ETA_GHOST_WINDOW)
                break;
            int64_t when = 2 * s->now - r->time;
            double key = s->priority[r->job];
            size_t k = nghosts++;
            for (; k > 0 && (s->priority[ghosts[k - 1].job] > key ||
                             (s->priority[ghosts[k - 1].job] == key && ghosts[k - 1].time > when));
                 k--)
                ghosts[k] = ghosts[k - 1];
            ghosts[k] = (lucid_eta_arrival){when, r->job};
        }
        for (size_t g = 0; g < nghosts; g++)
            planned_runs(s, bf, ratio0, ghosts[g].job, ghost_runs[g]);
    }
    int64_t last[3]; /* start of the last exactly placed job, per scenario */
    late_partner late[3][ETA_MAX_LATE];
    size_t nlate[3] = {0, 0, 0};
    if (from == 0) {
        double submitter_q[3] = {qs[0], qs[1], qs[2]};
        for (int k = 0; k < 3 && submitter >= 0; k++)
            submitter_q[k] = lucid_eta_table_submitter_level(t, qs[k]);
        scenarios ctx = {bf, t, qs, 3, submitter, submitter_q};
        plan->built_for = submitter;
        lucid_profile *const profs[3] = {&plan->prof[0], &plan->prof[1], &plan->prof[2]};
        if (lucid_profile_build_many(profs, 3, s, scenario_remaining, &ctx) < 0)
            return -1;
        /* Late partners only matter to a waiting job that can pack. */
        int can_pack = 0;
        for (size_t i = 0; i < exact && !can_pack; i++)
            can_pack = s->jobs[s->queue[i]].gpu_num <= LUCID_PACK_MAX_GPUS;
        if (mode == REPLAY_GREEDY && can_pack)
            late_partners(s, scenario_remaining, &ctx, 3, late, nlate);
    }
    for (int sc = 0; sc < 3; sc++) {
        lucid_profile *p = &plan->prof[sc];
        int64_t previous = s->now;
        /* Extending: the reservation the last call left undone first (a
         * rebuilt profile has none; with nothing to place it can wait). */
        if (from == 0 || from < exact) {
            if (from > 0 && plan->defer_n[sc] > 0 &&
                lucid_profile_reserve(p, plan->defer_k[sc], plan->defer_dur[sc],
                                      plan->defer_n[sc]) < 0)
                return -1;
            plan->defer_n[sc] = 0;
        }
        if (from > 0 && *scenario_slot(&plan->at[from - 1], sc) > previous && in_order)
            previous = *scenario_slot(&plan->at[from - 1], sc);
        if (mode == REPLAY_GREEDY) {
            int32_t jobs[GREEDY_MAX];
            int64_t arrive[GREEDY_MAX], dur[GREEDY_MAX], start[GREEDY_MAX];
            signed char want[GREEDY_MAX] = {0};
            size_t pos[LUCID_ETA_EXACT_DEPTH];
            size_t n = 0, g = 0, use = sc == 2 ? nghosts : 0;
            /* The queue and the arrivals to come, merged in Lucid's order (an
             * arrival after the queued jobs of its priority). */
            for (size_t i = 0; i < exact; i++) {
                int32_t job = s->queue[i];
                for (; g < use && s->priority[ghosts[g].job] < s->priority[job]; g++, n++) {
                    jobs[n] = ghosts[g].job;
                    arrive[n] = ghosts[g].time;
                    dur[n] = ghost_runs[g][sc];
                }
                pos[i] = n;
                jobs[n] = job;
                arrive[n] = s->now;
                /* Read below: the jobs asked for, and, for the deeper jobs'
                 * volume after them, the latest start of the prefix. */
                want[n] = i >= lo || upto > exact;
                dur[n++] = runs[i][sc];
            }
            for (; g < use; g++, n++) {
                jobs[n] = ghosts[g].job;
                arrive[n] = ghosts[g].time;
                dur[n] = ghost_runs[g][sc];
            }
            if (replay_greedy(s, jobs, arrive, dur, want, p, n, late[sc], nlate[sc], start) < 0)
                return -1;
            for (size_t i = 0; i < exact; i++)
                *scenario_slot(&plan->at[i], sc) = start[pos[i]];
            for (size_t i = 0; i < exact; i++)
                if (*scenario_slot(&plan->at[i], sc) > previous)
                    previous = *scenario_slot(&plan->at[i], sc);
        }
        if (gated && replay_gated(s, bf, p, exact, runs, sc, plan->at, &previous) < 0)
            return -1;
        for (size_t i = mode == REPLAY_GREEDY || gated ? exact : from; i < exact; i++) {
            int32_t job = s->queue[i];
            int64_t dur = runs[i][sc];
            int nalloc = 0;
            long k = lucid_profile_fit(p, s, s->jobs[job].gpu_num, dur,
                                       in_order ? previous : s->now, &nalloc);
            int64_t at = -1;
            if (k >= 0) {
                at = p->times[k];
                if (i + 1 == exact) { /* nothing after it in this call */
                    plan->defer_k[sc] = k;
                    plan->defer_dur[sc] = dur;
                    plan->defer_n[sc] = nalloc;
                } else if (lucid_profile_reserve(p, k, dur, nalloc) < 0) {
                    return -1;
                }
                previous = at;
            }
            *scenario_slot(&plan->at[i], sc) = at;
        }
        last[sc] = previous;
    }
    plan->placed = exact;
    /* A greedy plan stops at the jobs asked for (replay_greedy): its
     * profile and starts are not a prefix another call may extend. */
    plan->valid = mode != REPLAY_GREEDY && !gated; /* a gated plan is no prefix either */
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
    double ratio[3] = {ratio0[0], ratio0[1], ratio0[2]};
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
