/* backfill.c — the availability profile and backfill with reservations
 * (backfill.h).
 *
 * The profile is a step function: for each future segment, the free GPUs
 * of every node once the running jobs have ended at their estimated ends,
 * minus what reservations hold.  A job "fits" at a segment when the placer
 * (the same rule that places jobs for real) finds GPUs on a cluster whose
 * nodes have, each, the fewest free GPUs over the job's whole estimated run:
 * then it can start there without touching anything reserved later. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "lucid/backfill.h"
#include "msort.h"

int lucid_backfill_mode_parse(const char *text)
{
    if (strcmp(text, "none") == 0)
        return LUCID_BACKFILL_NONE;
    if (strcmp(text, "easy") == 0)
        return LUCID_BACKFILL_EASY;
    if (strcmp(text, "conservative") == 0)
        return LUCID_BACKFILL_CONSERVATIVE;
    return -1;
}

int lucid_backfill_estimate_parse(const char *text)
{
    if (strcmp(text, "model") == 0)
        return LUCID_BACKFILL_EST_MODEL;
    if (strcmp(text, "time_limit") == 0)
        return LUCID_BACKFILL_EST_TIME_LIMIT;
    return -1;
}

int lucid_backfill_reservable(const lucid_backfill_config *cfg, int32_t gpus, int packing)
{
    return (!packing || gpus > LUCID_PACK_MAX_GPUS) && gpus >= cfg->min_gpus;
}

int lucid_backfill_in_window(const lucid_backfill_config *cfg, int64_t now, int64_t start)
{
    /* A start further off than the window is planned on estimates that are
     * off by 2x for half the jobs: holding GPUs for it would block jobs now
     * for a start that will move anyway. */
    return cfg->window <= 0 || start - now <= cfg->window;
}

const char *lucid_backfill_mode_name(int mode)
{
    return mode == LUCID_BACKFILL_EASY           ? "easy"
           : mode == LUCID_BACKFILL_CONSERVATIVE ? "conservative"
                                                 : "none";
}

/* ---------------- profile ---------------- */

void lucid_profile_held_jobs(const lucid_profile *p, lucid_job_visit visit, void *ctx)
{
    for (size_t i = p->next_end; i < p->nends; i++)
        visit(ctx, p->ends[i].job);
}

void lucid_profile_free(lucid_profile *p)
{
    free(p->times);
    free(p->ord);
    free(p->freec);
    free(p->total);
    free(p->whole);
    free(p->ends);
    free(p->winmin);
    free(p->alloc);
    if (p->hypo_ready)
        lucid_cluster_free(&p->hypo);
    memset(p, 0, sizeof *p);
}

typedef struct lucid_profile_end ending;

/* GPUs in a mask (util.h: inline, not libgcc's popcount call). */
static inline int32_t gpu_count(uint64_t m) { return lucid_bits_set(m); }

static int32_t *row(lucid_profile *p, size_t k)
{
    return p->freec + (size_t)p->ord[k] * (size_t)p->nslots;
}

/* Inserts segment `at` starting at t, a copy of segment at - 1 (at >= 1),
 * or the first; only the small index arrays move. */
static int insert_row(lucid_profile *p, size_t at, int64_t t)
{
    if (LUCID_GROW(p->times, p->cap_times, p->m + 1) < 0 ||
        LUCID_GROW(p->ord, p->cap_ord, p->m + 1) < 0 ||
        LUCID_GROW(p->freec, p->cap_free, (p->m + 1) * (size_t)p->nslots) < 0 ||
        LUCID_GROW(p->total, p->cap_total, p->m + 1) < 0 ||
        LUCID_GROW(p->whole, p->cap_whole, p->m + 1) < 0)
        return -1;
    int32_t fresh = (int32_t)p->m;
    p->total[fresh] = 0;
    p->whole[fresh] = 0;
    if (at > 0) {
        memcpy(p->freec + (size_t)fresh * (size_t)p->nslots, row(p, at - 1),
               (size_t)p->nslots * sizeof *p->freec);
        p->total[fresh] = p->total[p->ord[at - 1]];
        p->whole[fresh] = p->whole[p->ord[at - 1]];
    }
    if (p->m - at <= 8) { /* usually a few rows after it: memmove's calls cost more */
        for (size_t j = p->m; j > at; j--) {
            p->times[j] = p->times[j - 1];
            p->ord[j] = p->ord[j - 1];
        }
    } else {
        memmove(p->times + at + 1, p->times + at, (p->m - at) * sizeof *p->times);
        memmove(p->ord + at + 1, p->ord + at, (p->m - at) * sizeof *p->ord);
    }
    p->times[at] = t;
    p->ord[at] = fresh;
    p->m++;
    return 0;
}

static int add_row(lucid_profile *p, int64_t t) { return insert_row(p, p->m, t); }

/* How a node's free count going from `before` to `after` moves its row's
 * count of whole free nodes. */
static inline int32_t whole_change(const lucid_profile *p, int32_t before, int32_t after)
{
    return (int32_t)(after >= p->gpus_per_node) - (int32_t)(before >= p->gpus_per_node);
}

/* The hypothetical cluster mirrors the real one's slots (dead ones removed). */
static int hypo_prepare(lucid_profile *p, const lucid_cluster *c)
{
    if (p->hypo_ready && (p->hypo.nslots != c->nslots || p->hypo.gpus_per_node != c->gpus_per_node)) {
        lucid_cluster_free(&p->hypo);
        p->hypo_ready = 0;
    }
    if (!p->hypo_ready) {
        lucid_error err;
        if (lucid_cluster_init(&p->hypo, c->nslots, c->gpus_per_node, &err) < 0)
            return -1;
        p->hypo_ready = 1;
    }
    for (int32_t i = 0; i < c->nslots; i++)
        if (p->hypo.nodes[i].alive && !c->nodes[i].alive)
            lucid_cluster_remove_node(&p->hypo, i); /* a node lent away: no GPUs */
    return 0;
}

/* Sets hypo node `slot` to exactly `mask` free. */
static void hypo_set(lucid_profile *p, int32_t slot, uint64_t mask)
{
    lucid_node *n = &p->hypo.nodes[slot];
    if (!n->alive || n->free_mask == mask)
        return;
    lucid_alloc give = {.node = slot, .mask = mask & ~n->free_mask};
    lucid_alloc take = {.node = slot, .mask = n->free_mask & ~mask};
    if (give.mask) {
        lucid_cluster_give(&p->hypo, &give, 1);
        n->jobs++;
    }
    if (take.mask) {
        lucid_cluster_take(&p->hypo, &take, 1);
        n->jobs--;
    }
}


/* Index of the segment holding time t (the last start <= t). */
static size_t segment_of(const lucid_profile *p, int64_t t)
{
    if (p->times[p->m - 1] <= t) /* the usual case: rows are made up to t first */
        return p->m - 1;
    /* The last row starting at or before t is in [at, at + len): halved
     * without a branch (a conditional move), whose mispredictions cost
     * more than the search's instructions. */
    size_t at = 0, len = p->m;
    while (len > 1) {
        size_t half = len / 2;
        at += p->times[at + half] <= t ? half : 0;
        len -= half;
    }
    return at;
}

/* Makes the rows of the running jobs' ends up to time t (all of them for
 * LUCID_NEVER). */
static int make_ends_until(lucid_profile *p, int64_t t)
{
    const lucid_sched *s = p->src;
    while (p->next_end < p->nends && p->ends[p->next_end].time <= t) {
        const ending *e = &p->ends[p->next_end++];
        if (e->time < 0)
            continue;
        /* Every row so far starts at or before this end (rows are made in
         * time order up to any time a search or reservation looked at). */
        if (p->times[p->m - 1] < e->time && add_row(p, e->time) < 0)
            return -1;
        size_t k = segment_of(p, e->time);
        const lucid_jobrun *r = &s->run[e->job];
        /* Node by node (each row's nodes in the same order as before: rows
         * are independent), so that a node's GPUs are counted once, not
         * once per row. */
        for (int32_t a = 0; a < r->alloc_n; a++) {
            const lucid_alloc *al = &s->allocs[r->alloc_off + a];
            int32_t gpus = gpu_count(al->mask), node = al->node;
            for (size_t j = k; j < p->m; j++) {
                int32_t *cells = row(p, j);
                int32_t before = cells[node];
                cells[node] += gpus;
                if (cells[node] > p->gpus_per_node)
                    cells[node] = p->gpus_per_node;
                p->total[p->ord[j]] += cells[node] - before;
                p->whole[p->ord[j]] += whole_change(p, before, cells[node]);
            }
        }
    }
    return 0;
}

/* The same, with the usual case (no end left by t) inline: it is asked
 * at every segment a search tries. */
static inline int ensure_until(lucid_profile *p, int64_t t)
{
    if (p->next_end >= p->nends || p->ends[p->next_end].time > t)
        return 0;
    return make_ends_until(p, t);
}

/* Ends by (time, job) — a total order (jobs are distinct), so any correct
 * sort gives the same array (msort.h: inline, not qsort's comparison
 * calls, which were most of a profile build). */
static inline int ending_before(const ending *a, const ending *b)
{
    return a->time < b->time || (a->time == b->time && a->job < b->job);
}
LUCID_MERGE_SORT(sort_endings, ending, ending_before)

/* One profile's start: the cluster now, no ends yet (room for `nends`). */
static int build_start(lucid_profile *p, const lucid_sched *s, size_t nends)
{
    const lucid_cluster *c = &s->cluster;
    p->m = 0;
    p->nslots = c->nslots;
    p->gpus_per_node = c->gpus_per_node;
    p->src = s;
    p->nends = p->next_end = 0;
    if (!p->consolidate)
        p->consolidate = lucid_placer_find("consolidate");
    /* Twice the ends: the second half is the sort's scratch. */
    p->hypo_synced = 0; /* made when a search needs it (not for the consolidated placer) */
    if (add_row(p, s->now) < 0 ||
        LUCID_GROW(p->ends, p->cap_ends, 2 * nends + 1) < 0)
        return -1;
    for (int32_t i = 0; i < c->nslots; i++) {
        row(p, 0)[i] = c->nodes[i].alive ? c->nodes[i].free : 0;
        p->total[p->ord[0]] += row(p, 0)[i];
        p->whole[p->ord[0]] += row(p, 0)[i] >= p->gpus_per_node;
    }
    return 0;
}

int lucid_profile_build_many(lucid_profile *const *p, int np, const lucid_sched *s,
                             lucid_remaining_many_fn remaining, void *ctx)
{
    size_t n = 0;
    for (int32_t j = s->run_head; j >= 0; j = s->run[j].run_next)
        n++;
    for (int k = 0; k < np; k++)
        if (build_start(p[k], s, n) < 0)
            return -1;
    int64_t left[LUCID_PROFILE_MAX_MANY];
    n = 0;
    for (int32_t j = s->run_head; j >= 0; j = s->run[j].run_next, n++) {
        remaining(ctx, s, j, left);
        for (int k = 0; k < np; k++)
            p[k]->ends[n] = (ending){s->now + left[k], j};
    }
    /* A packed pair frees its GPUs when the later of the two ends. */
    for (size_t i = 0; i < n; i++) {
        int32_t job = p[0]->ends[i].job;
        int32_t partner = s->run[job].partner;
        if (partner < 0 || s->run[partner].status != LUCID_RUNNING)
            continue;
        remaining(ctx, s, partner, left);
        for (int k = 0; k < np; k++) {
            ending *e = &p[k]->ends[i];
            int64_t other = s->now + left[k];
            if (other > e->time || (other == e->time && partner > job))
                e->time = -1; /* the partner gives the GPUs back */
        }
    }
    for (int k = 0; k < np; k++) {
        sort_endings(p[k]->ends, p[k]->ends + n, n);
        p[k]->nends = n;
    }
    return 0;
}

typedef struct single_remaining {
    lucid_remaining_fn fn;
    void *ctx;
} single_remaining;

static void one_remaining(void *ctx, const lucid_sched *s, int32_t job, int64_t *out)
{
    const single_remaining *one = ctx;
    out[0] = one->fn(one->ctx, s, job);
}

int lucid_profile_build(lucid_profile *p, const lucid_sched *s, lucid_remaining_fn remaining,
                        void *ctx)
{
    single_remaining one = {remaining, ctx};
    return lucid_profile_build_many(&p, 1, s, one_remaining, &one);
}

/* Makes t a segment start; returns its index. */
static long split_at(lucid_profile *p, int64_t t)
{
    if (ensure_until(p, t) < 0)
        return -1;
    size_t k = segment_of(p, t);
    if (p->times[k] == t)
        return (long)k;
    return insert_row(p, k + 1, t) < 0 ? -1 : (long)(k + 1);
}

/* Room for the job's GPUs before a search: the scratch buffers. */
static int fit_prepare(lucid_profile *p, int32_t gpus)
{
    int need = gpus > 1 ? gpus : 1;
    if (LUCID_GROW(p->winmin, p->cap_winmin, (size_t)p->nslots + 1) < 0)
        return -1;
    if (p->cap_alloc < need) {
        lucid_alloc *grown = realloc(p->alloc, (size_t)need * sizeof *grown);
        if (!grown)
            return -1;
        p->alloc = grown;
        p->cap_alloc = need;
    }
    return 0;
}

/* Node `slot`'s `count` GPUs of a window starting at segment k, as the
 * placer would take them on the hypothetical cluster: at k = 0 its lowest
 * free GPUs; later only the count matters (a reservation takes counts), and
 * the lowest bits stand for them. */
static lucid_alloc window_alloc(const lucid_cluster *c, size_t k, int32_t slot, int32_t count)
{
    uint64_t low = count >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << count) - 1;
    return (lucid_alloc){.node = slot,
                         .gpus = count,
                         .mask = k == 0 ? lucid_mask_lowest(c->nodes[slot].free_mask, count)
                                        : low};
}

/* The consolidated placer (cluster.c: select_consolidate) on the window's
 * free counts p->winmin, worked out directly: the hypothetical cluster's
 * updates and bucket searches were a quarter of a prediction.  Same rule:
 * a job of up to one node's GPUs on the alive node with the fewest free
 * GPUs that still fit (the first such in slot order); a larger one on the
 * first whole free nodes in slot order and its remainder on the next whole
 * free node, else on the first node with the most free GPUs below a whole
 * node.  w: the window's free counts per node.  Returns the allocations
 * made (p->alloc), 0 if it does not fit. */
static int consolidate_window(lucid_profile *p, const lucid_cluster *c, size_t k, int32_t gpus,
                              const int32_t *w)
{
    const int32_t g = p->gpus_per_node;
    int32_t n = p->nslots;
    /* Usually every node is alive: then no node's flag is read. */
    const int all_alive = c->alive_nodes == n;
#define WINDOW_FREE(i) (all_alive || c->nodes[i].alive ? (w[i] < g ? w[i] : g) : 0)
    if (gpus <= 0)
        return 0;
    if (gpus <= g) {
        int32_t best = -1, best_free = g + 1;
        for (int32_t i = 0; i < n && best_free > gpus; i++) {
            int32_t f = WINDOW_FREE(i);
            /* gpus <= f < best_free as one unsigned comparison (best_free >
             * gpus here) and conditional moves: which node fits varies too
             * much for a branch to be predicted. */
            int take = (uint32_t)(f - gpus) < (uint32_t)(best_free - gpus);
            best = take ? i : best;
            best_free = take ? f : best_free;
        }
        if (best < 0)
            return 0;
        p->alloc[0] = window_alloc(c, k, best, gpus);
        return 1;
    }
    int32_t whole = gpus / g, rest = gpus % g;
    if (whole + (rest ? 1 : 0) > p->cap_alloc)
        return 0;
    int m = 0;
    int32_t i = 0;
    for (; i < n && m < whole; i++)
        if (WINDOW_FREE(i) == g)
            p->alloc[m++] = window_alloc(c, k, i, g);
    if (m < whole)
        return 0;
    if (rest == 0)
        return m;
    int32_t next = -1;
    for (; i < n && next < 0; i++)
        if (WINDOW_FREE(i) == g)
            next = i;
    if (next < 0) {
        int32_t most = 0;
        for (int32_t j = 0; j < n; j++) {
            int32_t f = WINDOW_FREE(j);
            if (f < g && f > most) {
                most = f;
                next = j;
            }
        }
    }
    if (next < 0 || WINDOW_FREE(next) < rest)
        return 0;
#undef WINDOW_FREE
    p->alloc[m++] = window_alloc(c, k, next, rest);
    return m;
}

/* w[i] = min(w[i], r[i]) over a window's nodes.  Four nodes an
 * instruction where the target has SSE2 (every x86-64): -O2 leaves this
 * loop scalar, and it was a quarter of a fit's instructions. */
static void window_min(int32_t *restrict w, const int32_t *restrict r, int32_t n)
{
    int32_t i = 0;
#if defined(__SSE2__)
    for (; i + 4 <= n; i += 4) {
        __m128i a = _mm_loadu_si128((const __m128i *)(const void *)(w + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r + i));
        __m128i less = _mm_cmplt_epi32(b, a);
        _mm_storeu_si128((__m128i *)(void *)(w + i),
                         _mm_or_si128(_mm_and_si128(less, b), _mm_andnot_si128(less, a)));
    }
#endif
    for (; i < n; i++)
        w[i] = r[i] < w[i] ? r[i] : w[i];
}

/* The sum of a window's free counts (each 0 to one node's GPUs, so 32-bit
 * lanes cannot overflow). */
static int64_t window_total(const int32_t *w, int32_t n)
{
    int64_t total = 0;
    int32_t i = 0;
#if defined(__SSE2__)
    __m128i sum = _mm_setzero_si128();
    for (; i + 4 <= n; i += 4)
        sum = _mm_add_epi32(sum, _mm_loadu_si128((const __m128i *)(const void *)(w + i)));
    int32_t lanes[4];
    _mm_storeu_si128((__m128i *)(void *)lanes, sum);
    total = (int64_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
#endif
    for (; i < n; i++)
        total += w[i];
    return total;
}

/* Whether the job fits at segment k (p->alloc, *nalloc): 1 yes, 0 no (then
 * *skip_to is the last segment no start up to which can fit), -1 out of
 * memory. */
static int fit_at(lucid_profile *p, const lucid_sched *s, size_t k, int32_t gpus,
                  int64_t duration, int *nalloc, size_t *skip_to)
{
    const lucid_cluster *c = &s->cluster;
    *skip_to = k;
    int64_t end = p->times[k] + duration;
    if (ensure_until(p, end) < 0)
        return -1;
    /* A segment in the window with too few free GPUs in all rules out
     * every start up to it (its window holds that segment too): go on
     * after it.  So does one with too few whole free nodes, for a job the
     * consolidated placer puts on whole nodes (gpus / a node's GPUs of
     * them, each free throughout the window, so in each of its segments):
     * a 32-GPU job on a cluster of part-busy nodes skips to where four
     * nodes are whole, not trying every end before it over every node. */
    int32_t wholes = s->placer == p->consolidate && p->gpus_per_node > 0
                         ? gpus / p->gpus_per_node
                         : 0;
    for (size_t j = k; j < p->m && (j == k || p->times[j] < end); j++)
        if (p->total[p->ord[j]] < gpus || p->whole[p->ord[j]] < wholes) {
            *skip_to = j;
            return 0;
        }
    int32_t *restrict w = p->winmin;
    const int32_t nslots = p->nslots;
    /* One segment: its own counts (whose total was checked above), read
     * in place by the consolidated placer, copied for the others. */
    const int32_t *win = row(p, k);
    if (k + 1 < p->m && p->times[k + 1] < end) {
        /* More than one segment: the least free of each node over them. */
        memcpy(w, win, (size_t)nslots * sizeof *w);
        win = w;
        for (size_t j = k + 1; j < p->m && p->times[j] < end; j++)
            window_min(w, row(p, j), nslots);
        if (window_total(w, nslots) < gpus)
            return 0;
    }
    if (s->placer == p->consolidate) {
        int n = consolidate_window(p, c, k, gpus, win);
        *nalloc = n;
        return n > 0;
    }
    if (win != w)
        memcpy(w, win, (size_t)nslots * sizeof *w);
    if (!p->hypo_synced) {
        if (hypo_prepare(p, c) < 0)
            return -1;
        p->hypo_synced = 1;
    }
    for (int32_t i = 0; i < p->nslots; i++) {
        if (!c->nodes[i].alive)
            continue;
        /* Past k = 0 only counts matter to the placer, not which GPUs. */
        if (k > 0 && p->hypo.nodes[i].free == p->winmin[i])
            continue;
        /* At k = 0 the window is within what is free now: keep real GPUs.
         * Later, the lowest winmin[i] of all the node's GPUs: the low bits
         * (what lucid_mask_lowest of the full mask gives, without its
         * loop per GPU). */
        uint64_t mask;
        if (k == 0)
            mask = lucid_mask_lowest(c->nodes[i].free_mask, p->winmin[i]);
        else {
            int32_t f = w[i] < p->gpus_per_node ? w[i] : p->gpus_per_node;
            mask = f <= 0 ? 0 : f >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << f) - 1;
        }
        hypo_set(p, i, mask);
    }
    lucid_rng rng = s->rng; /* a copy: planning never moves the real generator */
    int n = s->placer->select(&p->hypo, gpus, &rng, p->alloc, p->cap_alloc);
    if (n > 0) {
        *nalloc = n;
        return 1;
    }
    return 0;
}

long lucid_profile_fit(lucid_profile *p, const lucid_sched *s, int32_t gpus, int64_t duration,
                       int64_t not_before, int *nalloc)
{
    if (duration < 1)
        duration = 1;
    if (fit_prepare(p, gpus) < 0)
        return -1;
    size_t k0 = 0;
    if (not_before > p->times[0]) {
        /* A start inside a segment: the segment from there on is the same. */
        long at = split_at(p, not_before);
        if (at < 0)
            return -1;
        k0 = (size_t)at;
    }
    for (size_t k = k0;; k++) {
        if (k >= p->m) {
            if (p->next_end >= p->nends)
                break;
            if (ensure_until(p, p->ends[p->next_end].time) < 0) /* one more end */
                return -1;
            if (k >= p->m)
                continue;
        }
        size_t skip_to;
        int fits = fit_at(p, s, k, gpus, duration, nalloc, &skip_to);
        if (fits < 0)
            return -1;
        if (fits)
            return (long)k;
        k = skip_to;
    }
    return -1;
}

int lucid_profile_fits_now(lucid_profile *p, const lucid_sched *s, int32_t gpus,
                           int64_t duration, int *nalloc)
{
    size_t skip_to;
    if (duration < 1)
        duration = 1;
    if (fit_prepare(p, gpus) < 0)
        return -1;
    return fit_at(p, s, 0, gpus, duration, nalloc, &skip_to);
}

static int reserve_gpus(lucid_profile *p, long k, int64_t duration, const lucid_alloc *alloc,
                        int nalloc)
{
    if (duration < 1)
        duration = 1;
    /* The window is segments k to e - 1 (split_at inserts after k only). */
    long e = split_at(p, p->times[k] + duration);
    if (e < 0)
        return -1;
    if (nalloc == 1) { /* the usual case: one node */
        int32_t gpus = gpu_count(alloc[0].mask), node = alloc[0].node;
        for (long j = k; j < e; j++) {
            int32_t *r = row(p, (size_t)j);
            int32_t after = r[node] > gpus ? r[node] - gpus : 0;
            p->total[p->ord[j]] += after - r[node];
            p->whole[p->ord[j]] += whole_change(p, r[node], after);
            r[node] = after;
        }
        return 0;
    }
    /* Node by node, its GPUs counted once (rows are independent). */
    for (int a = 0; a < nalloc; a++) {
        int32_t gpus = gpu_count(alloc[a].mask), node = alloc[a].node;
        for (long j = k; j < e; j++) {
            int32_t *r = row(p, (size_t)j);
            int32_t before = r[node];
            r[node] -= gpus;
            if (r[node] < 0)
                r[node] = 0;
            p->total[p->ord[j]] += r[node] - before;
            p->whole[p->ord[j]] += whole_change(p, before, r[node]);
        }
    }
    return 0;
}

int lucid_profile_reserve(lucid_profile *p, long k, int64_t duration, int nalloc)
{
    return reserve_gpus(p, k, duration, p->alloc, nalloc);
}

int lucid_profile_reserve_from(lucid_profile *p, int64_t from, int64_t duration,
                               const lucid_alloc *alloc, int nalloc)
{
    long k = split_at(p, from);
    return k < 0 ? -1 : reserve_gpus(p, k, duration, alloc, nalloc);
}

/* ---------------- backfill ---------------- */

double lucid_backfill_job_estimate(const lucid_sched *s, const lucid_backfill *bf, int32_t job)
{
    const lucid_job *j = &s->jobs[job];
    if (bf && bf->cfg.estimate == LUCID_BACKFILL_EST_TIME_LIMIT && j->time_limit > 0)
        return (double)j->time_limit;
    double est = -1;
    if (s->priority && j->gpu_num > 0)
        est = s->priority[job] / j->gpu_num; /* the reference's: negative -> 1000 already */
    else if (bf && bf->estimate)
        est = bf->estimate[job];
    if (!(est > 0))
        est = 1000.0;
    return est < 1 ? 1 : est;
}

/* A running job's estimated time left: its estimate minus the time it has
 * run.  One that has outrun its estimate is expected to run half as long
 * again as it has so far (at least a minute): the durations are heavy-tailed,
 * and a reservation that keeps being due in a second would block all
 * backfill behind a job that overran. */
int64_t lucid_backfill_remaining(void *ctx, const lucid_sched *s, int32_t job)
{
    const lucid_backfill *bf = ctx;
    double est = lucid_backfill_job_estimate(s, bf, job);
    double elapsed = (double)(s->now - s->run[job].start_time);
    double left = est - elapsed;
    if (left < 1) {
        left = elapsed * 0.5;
        if (left < 60)
            left = 60;
    }
    return (int64_t)ceil(left);
}

static int64_t planned_duration(const lucid_sched *s, const lucid_backfill *bf, int32_t job)
{
    double d = lucid_backfill_job_estimate(s, bf, job) * (bf->cfg.margin >= 1 ? bf->cfg.margin : 1);
    return (int64_t)ceil(d);
}

static void note_reservation(lucid_backfill *bf, int32_t job, int64_t at)
{
    int64_t before = bf->reserved_at[job];
    if (before < 0)
        bf->stats.reservations++;
    else if (at > before + 60)
        bf->stats.moved_later++;
    else if (at < before - 60)
        bf->stats.moved_earlier++;
    bf->reserved_at[job] = at;
}

/* Starts `job` now on the GPUs the profile chose (p->alloc). */
static int start_reserved(lucid_sched *s, lucid_backfill *bf, int32_t job, int64_t dur, int nalloc)
{
    if (lucid_profile_reserve(&bf->prof, 0, dur, nalloc) < 0 ||
        !lucid_sched_start_on(s, job, bf->prof.alloc, nalloc))
        return 0;
    bf->reserved_at[job] = -1;
    return 1;
}

size_t lucid_backfill_pass(lucid_sched *s, const int32_t *jobs, size_t n,
                           int (*pack)(lucid_sched *s, int32_t job), size_t *stopped_at)
{
    lucid_backfill *bf = s->backfill;
    lucid_profile *p = &bf->prof;
    size_t started = 0, held = 0;
    size_t depth = bf->cfg.mode == LUCID_BACKFILL_CONSERVATIVE ? (size_t)-1 : 1;
    int built = 0;
    /* A reservation, once given, is kept until its job starts: the jobs that
     * hold one are placed first, so no job — not even one that joined the
     * queue ahead of them since — may delay them. */
    for (size_t i = 0; i < n; i++) {
        int32_t job = jobs[i];
        if (bf->reserved_at[job] < 0)
            continue;
        if (!built && lucid_profile_build(p, s, lucid_backfill_remaining, bf) < 0)
            return started;
        built = 1;
        int64_t dur = planned_duration(s, bf, job);
        int nalloc = 0;
        long k = lucid_profile_fit(p, s, s->jobs[job].gpu_num, dur, s->now, &nalloc);
        if (k == 0) {
            started += (size_t)start_reserved(s, bf, job, dur, nalloc);
        } else if (k > 0) {
            note_reservation(bf, job, p->times[k]);
            if (lucid_profile_reserve(p, k, dur, nalloc) < 0)
                return started;
            held++;
        }
    }
    for (size_t i = 0; i < n; i++) {
        int32_t job = jobs[i];
        if (s->run[job].status != LUCID_PENDING || bf->reserved_at[job] >= 0)
            continue; /* started above, or holds its reservation */
        if (pack && pack(s, job)) { /* a partner's GPUs: no free GPU taken */
            started++;
            bf->stats.backfilled += held > 0;
            continue;
        }
        if (held == 0) {
            /* Until a job is blocked the pass is the policy's own. */
            if (lucid_sched_try_start(s, job)) {
                started++;
                built = 0; /* the profile no longer matches the cluster */
                continue;
            }
        }
        /* While packing, a job that could share GPUs waits for a partner as
         * Lucid has it; reservations are for those that cannot, and for
         * jobs of at least `min_gpus` GPUs (a size class: the others never
         * hold GPUs that smaller jobs could use). */
        int reservable = lucid_backfill_reservable(&bf->cfg, s->jobs[job].gpu_num, pack != NULL);
        if (held == 0 && !reservable)
            continue;
        if (!built && lucid_profile_build(p, s, lucid_backfill_remaining, bf) < 0)
            break;
        built = 1;
        int64_t dur = planned_duration(s, bf, job);
        int nalloc = 0;
        long k = lucid_profile_fit(p, s, s->jobs[job].gpu_num, dur, s->now, &nalloc);
        if (k == 0 && held > 0) {
            /* Fits now on GPUs no reservation needs during its run. */
            if (start_reserved(s, bf, job, dur, nalloc)) {
                bf->stats.backfilled++;
                started++;
            }
        } else if (k > 0 && held < depth && reservable &&
                   lucid_backfill_in_window(&bf->cfg, s->now, p->times[k])) {
            note_reservation(bf, job, p->times[k]);
            if (lucid_profile_reserve(p, k, dur, nalloc) < 0)
                break;
            held++;
        } else if (k < 0 && held == 0) {
            held++; /* never fits on this cluster's profile: nothing to protect */
        }
    }
    *stopped_at = n;
    for (size_t i = 0; i < n; i++)
        if (s->run[jobs[i]].status == LUCID_PENDING) {
            *stopped_at = i;
            break;
        }
    return started;
}

void lucid_backfill_free(lucid_backfill *bf) { lucid_profile_free(&bf->prof); }

int lucid_backfill_reservation(const lucid_sched *s, int32_t job, int64_t *at, char *nodes,
                               size_t size)
{
    lucid_backfill *bf = s->backfill;
    if (!bf || bf->reserved_at[job] < 0 || s->run[job].status != LUCID_PENDING)
        return 0;
    lucid_profile p = {0};
    int found = 0;
    if (lucid_profile_build(&p, s, lucid_backfill_remaining, bf) == 0)
        for (size_t i = 0; i < s->qlen; i++) {
            int32_t other = s->queue[i];
            if (bf->reserved_at[other] < 0)
                continue;
            int64_t dur = planned_duration(s, bf, other);
            int nalloc = 0;
            long k = lucid_profile_fit(&p, s, s->jobs[other].gpu_num, dur, s->now, &nalloc);
            if (k < 0)
                continue;
            if (other == job) {
                *at = p.times[k];
                size_t used = 0;
                nodes[0] = '\0';
                for (int a = 0; a < nalloc && used < size; a++)
                    used += (size_t)snprintf(nodes + used, size - used, "%sn%d", a ? "," : "",
                                             s->cluster.nodes[p.alloc[a].node].label);
                found = 1;
                break;
            }
            if (lucid_profile_reserve(&p, k, dur, nalloc) < 0)
                break;
        }
    lucid_profile_free(&p);
    return found;
}
