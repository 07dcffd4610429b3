/* ebm.c — training and applying an Explainable Boosting Machine (ebm.h).
 *
 * Training (spec models.md §1): every feature is binned twice (main and
 * pair binning); each outer bag splits the rows into train / validation,
 * boosts the main terms cyclically with early stopping and keeps the best
 * snapshot, then scores every feature pair with FAST on its residuals.
 * Pairs are chosen by mean rank over the bags and boosted per bag from that
 * bag's best main-term scores.  Tables are averaged over the bags, centred
 * on the training rows, and their importances measured.
 *
 * Each bag owns its random stream (seeded from the model seed and the bag
 * number) and its arrays, so bags can run on any number of threads and are
 * combined in bag order: the model does not depend on the thread count. */
#include "lucid/ebm.h"
#include "lucid/isotonic.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lucid_ebm_default_params(lucid_ebm_params *p)
{
    memset(p, 0, sizeof *p);
    p->task = LUCID_REGRESSION;
    p->max_bins = 256;
    p->max_interaction_bins = 32;
    p->outer_bags = 8;
    p->learning_rate = 0.01;
    p->validation_size = 0.15;
    p->early_stopping_rounds = 50;
    p->early_stopping_tolerance = 1e-4;
    p->max_rounds = 5000;
    p->min_samples_leaf = 2;
    p->max_leaves = 3;
    p->interactions = 10;
    p->binning = LUCID_BIN_QUANTILE;
    p->seed = 42;
    p->threads = 2;
    p->warm_rounds = 100;
}

/* ------------------------------------------------------------------ */
/* Histograms and the per-term trees                                    */

typedef struct histogram {
    double *g;   /* sum of gradients per cell */
    double *h;   /* sum of hessians per cell */
    uint32_t *c; /* rows per cell */
} histogram;

static int hist_alloc(histogram *hs, size_t cells)
{
    hs->g = malloc(cells * sizeof *hs->g);
    hs->h = malloc(cells * sizeof *hs->h);
    hs->c = malloc(cells * sizeof *hs->c);
    return hs->g && hs->h && hs->c ? 0 : -1;
}

static void hist_free(histogram *hs)
{
    free(hs->g);
    free(hs->h);
    free(hs->c);
}

/* Sums over `n` rows into cells; `hess` NULL means every hessian is 1. */
static void hist_build(histogram *hs, int ncells, const uint32_t *cells, const double *grad,
                       const double *hess, size_t n)
{
    memset(hs->g, 0, (size_t)ncells * sizeof *hs->g);
    memset(hs->c, 0, (size_t)ncells * sizeof *hs->c);
    if (hess) {
        memset(hs->h, 0, (size_t)ncells * sizeof *hs->h);
        for (size_t r = 0; r < n; r++) {
            uint32_t cell = cells[r];
            hs->g[cell] += grad[r];
            hs->h[cell] += hess[r];
            hs->c[cell]++;
        }
    } else {
        for (size_t r = 0; r < n; r++) {
            hs->g[cells[r]] += grad[r];
            hs->c[cells[r]]++;
        }
        for (int k = 0; k < ncells; k++)
            hs->h[k] = hs->c[k];
    }
}

static double leaf_value(double g, double h) { return h > 0 ? -g / h : 0.0; }

/* Best cut of cells [lo, hi) of a 1-D histogram: position `pos` means
 * [lo, pos) | [pos, hi).  Ties between equal scores are broken uniformly at
 * random (reservoir sampling).  Returns 1 and the gain over not splitting. */
static int best_cut_1d(const histogram *hs, int lo, int hi, int min_leaf, lucid_rng *rng,
                       int *pos, double *gain)
{
    double gt = 0, ht = 0;
    uint64_t ct = 0;
    for (int k = lo; k < hi; k++) {
        gt += hs->g[k];
        ht += hs->h[k];
        ct += hs->c[k];
    }
    double gl = 0, hl = 0, best = -INFINITY;
    uint64_t cl = 0, ties = 0;
    for (int k = lo + 1; k < hi; k++) {
        gl += hs->g[k - 1];
        hl += hs->h[k - 1];
        cl += hs->c[k - 1];
        double hr = ht - hl;
        if (cl < (uint64_t)min_leaf || ct - cl < (uint64_t)min_leaf || hl <= 0 || hr <= 0)
            continue;
        double gr = gt - gl;
        double s = gl * gl / hl + gr * gr / hr;
        if (s > best) {
            best = s;
            *pos = k;
            ties = 1;
        } else if (s == best && lucid_rng_below(rng, ++ties) == 0) {
            *pos = k;
        }
    }
    if (ties == 0)
        return 0;
    *gain = best - (ht > 0 ? gt * gt / ht : 0);
    return 1;
}

/* Grows a best-first tree of at most `max_leaves` contiguous ranges and
 * writes each cell's update (leaf value x learning rate).  Returns 0 if no
 * valid cut exists (no update). */
static int tree_1d(const histogram *hs, int ncells, const lucid_ebm_params *p, lucid_rng *rng,
                   double *update)
{
    enum { MAX_LEAVES = 64 };
    int lo[MAX_LEAVES], hi[MAX_LEAVES], cut[MAX_LEAVES], can[MAX_LEAVES];
    double gain[MAX_LEAVES];
    int max_leaves = p->max_leaves < MAX_LEAVES ? p->max_leaves : MAX_LEAVES;
    int n = 1;
    lo[0] = 0;
    hi[0] = ncells;
    can[0] = best_cut_1d(hs, 0, ncells, p->min_samples_leaf, rng, &cut[0], &gain[0]);
    if (!can[0])
        return 0;
    while (n < max_leaves) {
        int pick = -1;
        for (int i = 0; i < n; i++)
            if (can[i] && (pick < 0 || gain[i] > gain[pick]))
                pick = i;
        if (pick < 0)
            break;
        lo[n] = cut[pick];
        hi[n] = hi[pick];
        hi[pick] = cut[pick];
        can[pick] = best_cut_1d(hs, lo[pick], hi[pick], p->min_samples_leaf, rng, &cut[pick],
                                &gain[pick]);
        can[n] = best_cut_1d(hs, lo[n], hi[n], p->min_samples_leaf, rng, &cut[n], &gain[n]);
        n++;
    }
    for (int i = 0; i < n; i++) {
        double g = 0, h = 0;
        for (int k = lo[i]; k < hi[i]; k++) {
            g += hs->g[k];
            h += hs->h[k];
        }
        double v = leaf_value(g, h) * p->learning_rate;
        for (int k = lo[i]; k < hi[i]; k++)
            update[k] = v;
    }
    return 1;
}

/* Sums of a group of cells. */
typedef struct sums {
    double g, h;
    uint64_t c;
} sums;

static void sums_add(sums *s, double g, double h, uint64_t c)
{
    s->g += g;
    s->h += h;
    s->c += c;
}

static int sums_ok(const sums *s, int min_leaf) { return s->c >= (uint64_t)min_leaf && s->h > 0; }

static double sums_score(const sums *s) { return s->g * s->g / s->h; }

/* Best cut of a column-indexed side (per-column sums `col`, m columns,
 * `pre[j]` the sums of columns [0, j)): first best wins.  Returns 1 with
 * the score and the cut.  Written without branches on the data (they
 * mispredict): every cut is scored, invalid ones as -inf.  An empty column
 * adds exact zeros (no sum here is ever -0), so the cut after it scores
 * exactly as the one before it and, first best winning, would never be
 * picked: it is marked invalid. */
static int best_side_cut(const sums *col, const sums *pre, int m, int min_leaf, double *score,
                         int *cut)
{
    sums tot = pre[m];
    double best = -INFINITY;
    int at = 0;
    for (int j = 1; j < m; j++) {
        sums left = pre[j];
        double rg = tot.g - left.g, rh = tot.h - left.h;
        uint64_t rc = tot.c - left.c;
        int ok = (col[j - 1].c != 0) & (left.c >= (uint64_t)min_leaf) & (left.h > 0) &
                 (rc >= (uint64_t)min_leaf) & (rh > 0);
        double s = left.g * left.g / (ok ? left.h : 1.0) + rg * rg / (ok ? rh : 1.0);
        s = ok ? s : -INFINITY;
        int better = s > best;
        best = better ? s : best;
        at = better ? j : at;
    }
    if (at == 0)
        return 0;
    *score = best;
    *cut = at;
    return 1;
}

/* The best cuts of both sides of a first-axis cut.  Their prefix sums are
 * two independent chains of additions, run side by side in one loop; each
 * is the running sum in column order (its last entry the side's total). */
static int best_side_cuts(const sums *lcol, const sums *rcol, int m, int min_leaf, sums *pl,
                          sums *pr, double *sl, int *bl, double *sr, int *br)
{
    sums a = {0, 0, 0}, b = {0, 0, 0};
    pl[0] = a;
    pr[0] = b;
    for (int j = 0; j < m; j++) {
        sums_add(&a, lcol[j].g, lcol[j].h, lcol[j].c);
        sums_add(&b, rcol[j].g, rcol[j].h, rcol[j].c);
        pl[j + 1] = a;
        pr[j + 1] = b;
    }
    return best_side_cut(lcol, pl, m, min_leaf, sl, bl) &
           best_side_cut(rcol, pr, m, min_leaf, sr, br);
}

typedef struct pair_cut {
    double score;
    int a, b_left, b_right; /* cut on the first axis, then on the second per side */
} pair_cut;

/* Best two-level tree cutting axis 0 first of an n1 x n2 histogram given as
 * accessor strides (so the transposed orientation reuses the code).
 * Columns without rows are left out of the side cuts (exact: they only add
 * zeros, see best_side_cut; `idx` maps kept columns back), and a first-axis
 * cut after an empty row repeats the previous cut's result exactly, so it
 * is not recomputed (its tie handling, rng draw included, is kept). */
static int best_pair_cut(const histogram *hs, int n1, int n2, int s1, int s2, int min_leaf,
                         lucid_rng *rng, sums *scratch, int *idx, pair_cut *out)
{
    sums *left = scratch, *right = scratch + n2, *tot = scratch + 2 * n2;
    sums *pre_l = scratch + 3 * n2, *pre_r = scratch + 4 * n2 + 1; /* n2 + 1 each */
    int m = 0;
    for (int j = 0; j < n2; j++) {
        sums t = {0, 0, 0};
        for (int i = 0; i < n1; i++) {
            size_t k = (size_t)i * (size_t)s1 + (size_t)j * (size_t)s2;
            sums_add(&t, hs->g[k], hs->h[k], hs->c[k]);
        }
        if (t.c > 0) {
            idx[m] = j;
            left[m] = (sums){0, 0, 0};
            tot[m++] = t;
        }
    }
    uint64_t ties = 0;
    int ok = 0, bl = 0, br = 0;
    double s = 0;
    for (int a = 1; a < n1; a++) {
        uint64_t rowc = 0;
        for (int q = 0; q < m; q++) {
            size_t k = (size_t)(a - 1) * (size_t)s1 + (size_t)idx[q] * (size_t)s2;
            rowc += hs->c[k];
            sums_add(&left[q], hs->g[k], hs->h[k], hs->c[k]);
            right[q] = (sums){tot[q].g - left[q].g, tot[q].h - left[q].h, tot[q].c - left[q].c};
        }
        if (a == 1 || rowc > 0) {
            double sl, sr;
            ok = best_side_cuts(left, right, m, min_leaf, pre_l, pre_r, &sl, &bl, &sr, &br);
            if (ok) {
                s = sl + sr;
                bl = idx[bl - 1] + 1;
                br = idx[br - 1] + 1;
            }
        }
        if (!ok)
            continue;
        if (ties == 0 || s > out->score) {
            *out = (pair_cut){s, a, bl, br};
            ties = 1;
        } else if (s == out->score && lucid_rng_below(rng, ++ties) == 0) {
            *out = (pair_cut){s, a, bl, br};
        }
    }
    return ties > 0;
}

/* The pair update: one cut on one feature, an independent cut on the other
 * on each side, four rectangles each given -G/H x learning rate; the better
 * of the two orientations.  Returns 0 if no valid tree exists. */
static int tree_2d(const histogram *hs, int n1, int n2, const lucid_ebm_params *p,
                   lucid_rng *rng, sums *scratch, int *idx, int *which, double *update)
{
    pair_cut rows = {0, 0, 0, 0}, cols = {0, 0, 0, 0};
    int ok_rows = best_pair_cut(hs, n1, n2, n2, 1, p->min_samples_leaf, rng, scratch, idx, &rows);
    int ok_cols = best_pair_cut(hs, n2, n1, 1, n2, p->min_samples_leaf, rng, scratch, idx, &cols);
    if (!ok_rows && !ok_cols)
        return 0;
    int by_rows = ok_rows && (!ok_cols || rows.score >= cols.score);
    pair_cut c = by_rows ? rows : cols;
    /* Each quadrant is a rectangle of the n1 x n2 grid: summed in its own
     * registers, its cells in increasing cell order. */
    double v[4];
    for (int q = 0; q < 4; q++) {
        int side = q >> 1, sub = q & 1, second = side ? c.b_right : c.b_left;
        int f0 = side ? c.a : 0, f1 = side ? (by_rows ? n1 : n2) : c.a;
        int s0 = sub ? second : 0, s1 = sub ? (by_rows ? n2 : n1) : second;
        int i0 = by_rows ? f0 : s0, i1 = by_rows ? f1 : s1;
        int j0 = by_rows ? s0 : f0, j1 = by_rows ? s1 : f1;
        sums quad = {0, 0, 0};
        for (int i = i0; i < i1; i++)
            for (int j = j0; j < j1; j++) {
                size_t k = (size_t)i * (size_t)n2 + (size_t)j;
                sums_add(&quad, hs->g[k], hs->h[k], hs->c[k]);
                which[k] = q;
            }
        v[q] = leaf_value(quad.g, quad.h) * p->learning_rate;
    }
    for (size_t k = 0; k < (size_t)n1 * (size_t)n2; k++)
        update[k] = v[which[k]];
    return 1;
}

/* ------------------------------------------------------------------ */
/* FAST: the best single 2x2 cut of each pair's histogram                */

/* Pairs with more cells than this are never candidates (memory, time). */
#define MAX_PAIR_CELLS ((size_t)1 << 20)

static double fast_pair_score(const histogram *hs, int n1, int n2, int min_leaf, sums *prefix)
{
    /* prefix[(i)(n2+1) + j] = sums over cells [0,i) x [0,j). */
    size_t w = (size_t)n2 + 1;
    for (int j = 0; j <= n2; j++)
        prefix[j] = (sums){0, 0, 0};
    for (int i = 1; i <= n1; i++) {
        sums row = {0, 0, 0};
        prefix[(size_t)i * w] = (sums){0, 0, 0};
        for (int j = 1; j <= n2; j++) {
            size_t k = (size_t)(i - 1) * (size_t)n2 + (size_t)(j - 1);
            sums_add(&row, hs->g[k], hs->h[k], hs->c[k]);
            const sums *up = &prefix[(size_t)(i - 1) * w + (size_t)j];
            prefix[(size_t)i * w + (size_t)j] = (sums){up->g + row.g, up->h + row.h, up->c + row.c};
        }
    }
    const sums *all = &prefix[(size_t)n1 * w + (size_t)n2];
    double best = 0;
    for (int a = 1; a < n1; a++) {
        const sums *top_col = &prefix[(size_t)a * w + (size_t)n2];
        for (int b = 1; b < n2; b++) {
            const sums *tl = &prefix[(size_t)a * w + (size_t)b];
            const sums *left_col = &prefix[(size_t)n1 * w + (size_t)b];
            sums q[4];
            q[0] = *tl;
            q[1] = (sums){top_col->g - tl->g, top_col->h - tl->h, top_col->c - tl->c};
            q[2] = (sums){left_col->g - tl->g, left_col->h - tl->h, left_col->c - tl->c};
            q[3] = (sums){all->g - q[0].g - q[1].g - q[2].g, all->h - q[0].h - q[1].h - q[2].h,
                          all->c - q[0].c - q[1].c - q[2].c};
            int ok = 1;
            double s = 0;
            for (int k = 0; k < 4 && ok; k++) {
                ok = sums_ok(&q[k], min_leaf);
                if (ok)
                    s += sums_score(&q[k]);
            }
            if (ok && s > best)
                best = s;
        }
    }
    return best;
}

/* Scores all pairs; `hess` NULL means unit hessians.  0 or -1 (memory). */
static int fast_scores(uint32_t *const *bins, const int *nbins, int nfeat, size_t n,
                       const double *grad, const double *hess, int min_leaf, double *scores)
{
    size_t maxcells = 1, maxprefix = 1;
    for (int i = 0; i < nfeat; i++)
        for (int j = i + 1; j < nfeat; j++) {
            size_t cells = (size_t)nbins[i] * (size_t)nbins[j];
            size_t prefix = ((size_t)nbins[i] + 1) * ((size_t)nbins[j] + 1);
            if (cells <= MAX_PAIR_CELLS && cells > maxcells)
                maxcells = cells;
            if (cells <= MAX_PAIR_CELLS && prefix > maxprefix)
                maxprefix = prefix;
        }
    histogram hs;
    uint32_t *cells = malloc((n ? n : 1) * sizeof *cells);
    sums *prefix = malloc(maxprefix * sizeof *prefix);
    int rc = hist_alloc(&hs, maxcells);
    if (rc < 0 || !cells || !prefix) {
        free(cells);
        free(prefix);
        hist_free(&hs);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < nfeat; i++)
        for (int j = i + 1; j < nfeat; j++, k++) {
            if ((size_t)nbins[i] * (size_t)nbins[j] > MAX_PAIR_CELLS) {
                scores[k] = -INFINITY; /* e.g. two features of thousands of categories */
                continue;
            }
            uint32_t n2 = (uint32_t)nbins[j];
            for (size_t r = 0; r < n; r++)
                cells[r] = bins[i][r] * n2 + bins[j][r];
            hist_build(&hs, nbins[i] * nbins[j], cells, grad, hess, n);
            scores[k] = fast_pair_score(&hs, nbins[i], nbins[j], min_leaf, prefix);
        }
    free(cells);
    free(prefix);
    hist_free(&hs);
    return 0;
}

void lucid_ebm_fast_scores(uint32_t *const *bins, const int *nbins, int nfeat, size_t n,
                           const double *gradient, int min_samples_leaf, double *scores)
{
    if (fast_scores(bins, nbins, nfeat, n, gradient, NULL, min_samples_leaf, scores) < 0)
        for (int k = 0; k < nfeat * (nfeat - 1) / 2; k++)
            scores[k] = NAN;
}

/* ------------------------------------------------------------------ */
/* One bag                                                              */

typedef struct shared_data {
    const lucid_ebm_params *p;
    size_t n;
    int nfeat;
    uint32_t **main_bins; /* [feature][row], all rows */
    int *main_nb;
    uint32_t **pair_bins;
    int *pair_nb;
    const double *y;
    int npairs;
    int (*pairs)[2];
    /* Warm start (lucid_ebm_train_warm): every row's starting score (the
     * start model's intercept and main terms on this training's bins) and
     * the start model's tables so carried ([term]: mains, then the selected
     * pairs, nbase of them); the bags boost from there.  NULL for a
     * training from scratch. */
    double *init;
    double **base;
    int nbase;
    size_t seen; /* warm start: the first `seen` rows are ones the start model saw */
} shared_data;

typedef struct bag_state {
    int index;
    int failed;
    lucid_rng rng;
    size_t ntrain, nrows; /* train rows come first, then validation rows */
    double *y, *score, *grad, *hess;
    uint32_t **main_cells; /* [feature][bag row] */
    uint32_t **pair_bins;  /* [feature][bag row] */
    double **main_tables;  /* best snapshot of the main stage */
    double **pair_tables;
    double *fast;
    int rounds[2];
    double metric[2];
} bag_state;

static double sigmoid(double s) { return 1.0 / (1.0 + exp(-s)); }

/* Sets gradient (and hessian) of every bag row from its score, and returns
 * the validation metric (MSE or log loss). */
static double refresh_gradients(bag_state *bag, lucid_task task)
{
    double metric = 0;
    for (size_t r = 0; r < bag->nrows; r++) {
        if (task == LUCID_REGRESSION) {
            bag->grad[r] = bag->score[r] - bag->y[r];
            if (r >= bag->ntrain)
                metric += bag->grad[r] * bag->grad[r];
        } else {
            double pr = sigmoid(bag->score[r]);
            bag->grad[r] = pr - bag->y[r];
            bag->hess[r] = pr * (1 - pr);
            if (r >= bag->ntrain) {
                double q = bag->y[r] > 0.5 ? pr : 1 - pr;
                metric -= log(q > 1e-15 ? q : 1e-15);
            }
        }
    }
    size_t nval = bag->nrows - bag->ntrain;
    return nval ? metric / (double)nval : 0;
}

/* Classification: adds update[cell] to every bag row's score, refreshes
 * the gradients and returns the new validation metric. */
static double apply_update(bag_state *bag, lucid_task task, const uint32_t *cells,
                           const double *update)
{
    for (size_t r = 0; r < bag->nrows; r++)
        bag->score[r] += update[cells[r]];
    return refresh_gradients(bag, task);
}

/* Regression: adds update[cell] to the validation rows' residuals and
 * returns their MSE (the early-stopping metric). */
static double update_validation(bag_state *bag, const uint32_t *cells, const double *update)
{
    double metric = 0, *grad = bag->grad;
    for (size_t r = bag->ntrain; r < bag->nrows; r++) {
        double g = grad[r] + update[cells[r]];
        grad[r] = g;
        metric += g * g;
    }
    size_t nval = bag->nrows - bag->ntrain;
    return nval ? metric / (double)nval : 0;
}

/* Regression: adds update[cell] to every bag row's residual (the gradient;
 * the scores are rebuilt from the best snapshot at the end, so they are not
 * kept during boosting), sums the new training residuals into the next
 * term's gradient histogram `next_g` (cells `next`) in the same row order a
 * separate pass would, and returns the validation MSE. */
static double apply_update_regression(bag_state *bag, const uint32_t *cells, const double *update,
                                      const uint32_t *next, double *next_g, int next_ncells,
                                      int runs)
{
    double *grad = bag->grad;
    memset(next_g, 0, (size_t)next_ncells * sizeof *next_g);
    if (runs && bag->ntrain > 0) {
        /* Rows mostly continue the previous row's cell (time-ordered data):
         * keep that cell's running sum in a register instead of a chain of
         * stores and reloads; the additions per cell are the same, in the
         * same order. */
        uint32_t cur = next[0];
        double s = 0;
        for (size_t r = 0; r < bag->ntrain; r++) {
            double g = grad[r] + update[cells[r]];
            grad[r] = g;
            uint32_t c = next[r];
            if (c != cur) {
                next_g[cur] = s;
                cur = c;
                s = next_g[c];
            }
            s += g;
        }
        next_g[cur] = s;
    } else {
        for (size_t r = 0; r < bag->ntrain; r++) {
            double g = grad[r] + update[cells[r]];
            grad[r] = g;
            next_g[next[r]] += g;
        }
    }
    return update_validation(bag, cells, update);
}

/* Terms whose rows continue the previous row's cell at least this often
 * get the run-keeping histogram loop (below it, its branch mispredicts more
 * than the store chain costs; measured on the venus trace). */
#define RUNS_MIN 0.8

typedef struct stage {
    int keep_start; /* warm start: the unchanged start is a snapshot too */
    int nterms;
    uint32_t **cells; /* [term][bag row] */
    int *ncells;
    int *n2; /* 0 for a main term, else the pair's second dimension */
} stage;

static double **alloc_tables(const stage *st)
{
    double **t = calloc((size_t)st->nterms + 1, sizeof *t);
    if (!t)
        return NULL;
    for (int k = 0; k < st->nterms; k++)
        if (!(t[k] = calloc((size_t)st->ncells[k], sizeof **t))) {
            for (int i = 0; i < k; i++)
                free(t[i]);
            free(t);
            return NULL;
        }
    return t;
}

static void free_tables(double **t, int n)
{
    if (!t)
        return;
    for (int k = 0; k < n; k++)
        free(t[k]);
    free(t);
}

/* ---- Main terms in histogram space ----
 *
 * In regression every hessian is 1, so a term's gradient histogram is the
 * sum of the training residuals per cell, and an update of term t (a
 * constant per cell) moves the histogram of every other term s by
 *     sum over t's cells k of  update[k] x (training rows in s-cell b and t-cell k).
 * Those counts are fixed for the bag.  With them as cumulative tables over
 * t's non-empty cells, an update costs (non-empty cells of s) x (runs of
 * equal update values of t) per other term instead of a pass over the
 * training rows; the validation rows (the early-stopping metric) are still
 * updated one by one, so the metric is computed as in the row path.  The
 * training residuals themselves are rebuilt from the best snapshot at the
 * end, as in the row path.  Same algorithm; only the order of the sums in
 * the histograms differs. */
typedef struct cross_tables {
    int nterms;
    int *m;          /* non-empty cells per term */
    uint32_t **sel;  /* [t][j]: the cell of t's j-th non-empty cell */
    uint32_t **tab;  /* [s * nterms + t]: m[s] x (m[t] + 1) cumulative counts (NULL: s == t) */
    int *run_lo, *run_hi; /* runs of equal update values, in t's non-empty cells */
    double *run_v;
} cross_tables;

static void cross_free(cross_tables *x)
{
    for (int t = 0; x->sel && t < x->nterms; t++)
        free(x->sel[t]);
    for (int k = 0; x->tab && k < x->nterms * x->nterms; k++)
        free(x->tab[k]);
    free(x->sel);
    free(x->tab);
    free(x->m);
    free(x->run_lo);
    free(x->run_hi);
    free(x->run_v);
    memset(x, 0, sizeof *x);
}

/* Whether histogram space pays for this stage: only 1-D terms (a tree's
 * update then has at most max_leaves runs), and per update the table work
 * must be well under a pass over the training rows; the tables must also
 * stay small.  `counts` holds every term's cells at `offset`. */
static int cross_worth(const stage *st, const lucid_ebm_params *p, const uint32_t *counts,
                       const size_t *offset, size_t ntrain)
{
    if (p->main_tables == LUCID_EBM_TABLES_OFF)
        return 0;
    size_t cells = 0, sum_m = 0, entries = 0;
    for (int t = 0; t < st->nterms; t++) {
        if (st->n2[t])
            return 0;
        size_t m = 0;
        for (int k = 0; k < st->ncells[t]; k++)
            m += counts[offset[t] + (size_t)k] > 0;
        sum_m += m;
        cells += m + 1;
    }
    for (int t = 0; t < st->nterms; t++) {
        size_t m = 0;
        for (int k = 0; k < st->ncells[t]; k++)
            m += counts[offset[t] + (size_t)k] > 0;
        entries += m * cells;
    }
    if (entries > ((size_t)16 << 20) / sizeof(uint32_t))
        return 0;
    if (p->main_tables == LUCID_EBM_TABLES_ON)
        return 1;
    return sum_m * 4 * (size_t)p->max_leaves < ntrain;
}

/* Builds the tables from the bag's training rows.  -1 if out of memory. */
static int cross_build(cross_tables *x, const stage *st, const uint32_t *counts,
                       const size_t *offset, size_t ntrain)
{
    int n = st->nterms;
    x->nterms = n;
    x->m = calloc((size_t)n + 1, sizeof *x->m);
    x->sel = calloc((size_t)n + 1, sizeof *x->sel);
    x->tab = calloc((size_t)n * (size_t)n + 1, sizeof *x->tab);
    uint32_t **rank = calloc((size_t)n + 1, sizeof *rank);
    int maxm = 1;
    int rc = x->m && x->sel && x->tab && rank ? 0 : -1;
    for (int t = 0; rc == 0 && t < n; t++) {
        int nc = st->ncells[t];
        x->sel[t] = malloc(((size_t)nc + 1) * sizeof **x->sel);
        rank[t] = malloc(((size_t)nc + 1) * sizeof **rank);
        if (!x->sel[t] || !rank[t]) {
            rc = -1;
            break;
        }
        uint32_t m = 0;
        for (int k = 0; k < nc; k++) {
            rank[t][k] = m;
            if (counts[offset[t] + (size_t)k] > 0)
                x->sel[t][m++] = (uint32_t)k;
        }
        x->m[t] = (int)m;
        if ((int)m > maxm)
            maxm = (int)m;
    }
    x->run_lo = malloc((size_t)maxm * sizeof *x->run_lo);
    x->run_hi = malloc((size_t)maxm * sizeof *x->run_hi);
    x->run_v = malloc((size_t)maxm * sizeof *x->run_v);
    if (!x->run_lo || !x->run_hi || !x->run_v)
        rc = -1;
    for (int s = 0; rc == 0 && s < n; s++)
        for (int t = 0; rc == 0 && t < n; t++) {
            if (s == t)
                continue;
            size_t w = (size_t)x->m[t] + 1;
            uint32_t *tab = calloc((size_t)x->m[s] * w + 1, sizeof *tab);
            if (!(x->tab[s * n + t] = tab)) {
                rc = -1;
                break;
            }
            for (size_t r = 0; r < ntrain; r++)
                tab[(size_t)rank[s][st->cells[s][r]] * w + rank[t][st->cells[t][r]] + 1]++;
            for (int j = 0; j < x->m[s]; j++)
                for (size_t k = 1; k < w; k++)
                    tab[(size_t)j * w + k] += tab[(size_t)j * w + k - 1];
        }
    if (rank)
        for (int t = 0; t < n; t++)
            free(rank[t]);
    free(rank);
    if (rc < 0)
        cross_free(x);
    return rc;
}

/* Term t's update in histogram space: every term's training gradient sums
 * (`gall` at `offset`) move by the update, the validation rows are updated
 * one by one; returns the validation MSE. */
static double cross_update(const cross_tables *x, bag_state *bag, const stage *st, int t,
                           const double *update, double *gall, const uint32_t *counts,
                           const size_t *offset)
{
    int nruns = 0;
    for (int j = 0; j < x->m[t]; j++) {
        double v = update[x->sel[t][j]];
        if (nruns > 0 && x->run_v[nruns - 1] == v && x->run_hi[nruns - 1] == j) {
            x->run_hi[nruns - 1] = j + 1;
        } else if (v != 0) {
            x->run_lo[nruns] = j;
            x->run_hi[nruns] = j + 1;
            x->run_v[nruns++] = v;
        }
    }
    for (int j = 0; j < x->m[t]; j++) {
        size_t c = offset[t] + x->sel[t][j];
        gall[c] += update[x->sel[t][j]] * (double)counts[c];
    }
    for (int s = 0; s < x->nterms && nruns > 0; s++) {
        if (s == t)
            continue;
        const uint32_t *tab = x->tab[s * x->nterms + t];
        size_t w = (size_t)x->m[t] + 1;
        double *g = gall + offset[s];
        for (int j = 0; j < x->m[s]; j++) {
            const uint32_t *row = tab + (size_t)j * w;
            double d = 0;
            for (int q = 0; q < nruns; q++)
                d += x->run_v[q] * (double)(row[x->run_hi[q]] - row[x->run_lo[q]]);
            g[x->sel[s][j]] += d;
        }
    }
    return update_validation(bag, st->cells[t], update);
}

/* Cyclic boosting of the stage's terms from the bag's current scores.  On
 * return *best holds the best snapshot and the bag's scores are those of
 * that snapshot.  -1 if out of memory. */
static int boost(bag_state *bag, const lucid_ebm_params *p, const stage *st, double ***best,
                 int *rounds_out, double *metric_out)
{
    int maxcells = 1;
    size_t allcells = 1;
    for (int k = 0; k < st->nterms; k++) {
        if (st->ncells[k] > maxcells)
            maxcells = st->ncells[k];
        allcells += (size_t)st->ncells[k];
    }
    int regression = p->task == LUCID_REGRESSION;
    double **cur = alloc_tables(st), **snap = alloc_tables(st);
    double *update = malloc((size_t)maxcells * sizeof *update);
    double *start = malloc((bag->nrows ? bag->nrows : 1) * sizeof *start);
    char *dirty = calloc((size_t)st->nterms + 1, 1);
    sums *scratch = malloc(5 * ((size_t)maxcells + 1) * sizeof *scratch);
    int *iscratch = malloc(((size_t)maxcells + 1) * sizeof *iscratch);
    /* Regression: every hessian is 1, so each term's per-cell row counts
     * (and hessian sums) are fixed for the bag; only gradient sums change. */
    uint32_t *counts = regression ? calloc(allcells, sizeof *counts) : NULL;
    double *hsums = regression ? malloc(allcells * sizeof *hsums) : NULL;
    double *gsums = regression ? malloc(2 * (size_t)maxcells * sizeof *gsums) : NULL;
    size_t *offset = regression ? malloc(((size_t)st->nterms + 1) * sizeof *offset) : NULL;
    char *runs = regression ? calloc((size_t)st->nterms + 1, 1) : NULL;
    cross_tables x = {0};
    double *gall = NULL; /* histogram space: every term's gradient sums, at offset */
    int *leaf_of = malloc(((size_t)maxcells + 1) * sizeof *leaf_of); /* tree_2d's cell -> leaf */
    histogram hs = {0, 0, 0};
    int rc = -1; /* out of memory until the end */
    if (!cur || !snap || !update || !start || !dirty || !scratch || !iscratch || !leaf_of ||
        (regression && (!counts || !hsums || !gsums || !offset || !runs)) ||
        (!regression && hist_alloc(&hs, (size_t)maxcells) < 0))
        goto done;
    if (regression) { /* offset[t]: the first cell of term t in counts / hsums */
        size_t at = 0;
        for (int t = 0; t < st->nterms; t++) {
            offset[t] = at;
            for (size_t r = 0; r < bag->ntrain; r++)
                counts[at + st->cells[t][r]]++;
            for (int k = 0; k < st->ncells[t]; k++)
                hsums[at + (size_t)k] = counts[at + (size_t)k];
            at += (size_t)st->ncells[t];
            size_t same = 0;
            for (size_t r = 1; r < bag->ntrain; r++)
                same += st->cells[t][r] == st->cells[t][r - 1];
            runs[t] = (double)same >= RUNS_MIN * (double)bag->ntrain;
        }
        if (cross_worth(st, p, counts, offset, bag->ntrain) &&
            (!(gall = malloc(allcells * sizeof *gall)) ||
             cross_build(&x, st, counts, offset, bag->ntrain) < 0))
            goto done;
    }
    memcpy(start, bag->score, bag->nrows * sizeof *start);
    double metric = refresh_gradients(bag, p->task);
    if (gall) {
        memset(gall, 0, allcells * sizeof *gall);
        for (int t = 0; t < st->nterms; t++)
            for (size_t r = 0; r < bag->ntrain; r++)
                gall[offset[t] + st->cells[t][r]] += bag->grad[r];
    }
    /* From scratch the first update is always kept (as the reference
     * does); a warm start counts its start as the first snapshot, so that
     * updates which only worsen an already fitted model are not kept. */
    double min_metric = st->keep_start ? metric : INFINITY, frozen = INFINITY;
    int no_change = 0, round = 0;
    int have_sums = 0, which = 0; /* gsums + which * maxcells: the current term's gradient sums */
    /* A warm start refits an already fitted model: a few rounds (a faster
     * step where one is set) instead of running to early stopping, which
     * with the new rows as validation overfits them (docs/models.md). */
    int max_rounds = p->max_rounds;
    lucid_ebm_params warm;
    if (st->keep_start) {
        warm = *p;
        if (p->warm_rounds > 0 && p->warm_rounds < max_rounds)
            max_rounds = p->warm_rounds;
        if (p->warm_learning_rate > 0)
            warm.learning_rate = p->warm_learning_rate;
        p = &warm;
    }
    while (round < max_rounds && st->nterms > 0) {
        for (int t = 0; t < st->nterms; t++) {
            histogram view = hs;
            if (gall) {
                view = (histogram){gall + offset[t], hsums + offset[t], counts + offset[t]};
            } else if (regression) {
                double *g = gsums + (size_t)which * (size_t)maxcells;
                if (!have_sums) {
                    memset(g, 0, (size_t)st->ncells[t] * sizeof *g);
                    for (size_t r = 0; r < bag->ntrain; r++)
                        g[st->cells[t][r]] += bag->grad[r];
                }
                have_sums = 0;
                view = (histogram){g, hsums + offset[t], counts + offset[t]};
            } else {
                hist_build(&hs, st->ncells[t], st->cells[t], bag->grad, bag->hess, bag->ntrain);
            }
            int ok = st->n2[t] ? tree_2d(&view, st->ncells[t] / st->n2[t], st->n2[t], p,
                                         &bag->rng, scratch, iscratch, leaf_of, update)
                               : tree_1d(&view, st->ncells[t], p, &bag->rng, update);
            if (ok) {
                for (int k = 0; k < st->ncells[t]; k++)
                    cur[t][k] += update[k];
                dirty[t] = 1;
                if (gall) {
                    metric = cross_update(&x, bag, st, t, update, gall, counts, offset);
                } else if (regression) {
                    int nt = t + 1 < st->nterms ? t + 1 : 0;
                    which = 1 - which;
                    metric = apply_update_regression(
                        bag, st->cells[t], update, st->cells[nt],
                        gsums + (size_t)which * (size_t)maxcells, st->ncells[nt], runs[nt]);
                    have_sums = 1;
                } else {
                    metric = apply_update(bag, p->task, st->cells[t], update);
                }
            }
            if (metric < min_metric) {
                min_metric = metric;
                for (int k = 0; k < st->nterms; k++)
                    if (dirty[k]) {
                        memcpy(snap[k], cur[k], (size_t)st->ncells[k] * sizeof **snap);
                        dirty[k] = 0;
                    }
            }
        }
        round++;
        /* The reference's window: the metric frozen when the run of rounds
         * without progress starts must be beaten by more than the tolerance. */
        if (no_change == 0)
            frozen = min_metric;
        if (min_metric + p->early_stopping_tolerance < frozen)
            no_change = 0;
        else
            no_change++;
        if (p->early_stopping_rounds > 0 && no_change >= p->early_stopping_rounds)
            break;
    }
    /* Scores of the best snapshot. */
    memcpy(bag->score, start, bag->nrows * sizeof *start);
    for (int t = 0; t < st->nterms; t++)
        for (size_t r = 0; r < bag->nrows; r++)
            bag->score[r] += snap[t][st->cells[t][r]];
    refresh_gradients(bag, p->task);
    *best = snap;
    snap = NULL;
    *rounds_out = round;
    *metric_out = min_metric;
    rc = 0;
done:
    free_tables(cur, st->nterms);
    free_tables(snap, st->nterms);
    free(update);
    free(start);
    free(dirty);
    free(scratch);
    free(iscratch);
    free(counts);
    free(hsums);
    free(gsums);
    free(offset);
    free(runs);
    free(gall);
    cross_free(&x);
    free(leaf_of);
    hist_free(&hs);
    return rc;
}

static void stage_free(stage *st)
{
    if (st->cells)
        for (int k = 0; k < st->nterms; k++)
            free(st->cells[k]);
    free(st->cells);
    free(st->ncells);
    free(st->n2);
}

static int stage_alloc(stage *st, int nterms, size_t nrows)
{
    st->nterms = nterms;
    st->cells = calloc((size_t)nterms + 1, sizeof *st->cells);
    st->ncells = calloc((size_t)nterms + 1, sizeof *st->ncells);
    st->n2 = calloc((size_t)nterms + 1, sizeof *st->n2);
    if (!st->cells || !st->ncells || !st->n2)
        return -1;
    for (int k = 0; k < nterms; k++)
        if (!(st->cells[k] = malloc((nrows ? nrows : 1) * sizeof **st->cells)))
            return -1;
    return 0;
}

/* Warm start: a bag's validation rows come from the rows the start model
 * has not seen (the last n - seen), validation_size of them: the start
 * model was fitted to the others, so on them the metric would flatter it.
 * Same layout as lucid_split_rows: the validation rows, then the training
 * rows, each ascending. */
static size_t *split_unseen(const shared_data *sh, lucid_rng *rng, size_t *nval)
{
    size_t fresh = sh->n - sh->seen, v = 0;
    size_t *part = lucid_split_rows(fresh, sh->p->validation_size, rng, &v);
    size_t *rows = malloc((sh->n ? sh->n : 1) * sizeof *rows);
    if (!part || !rows) {
        free(part);
        free(rows);
        return NULL;
    }
    for (size_t i = 0; i < v; i++)
        rows[i] = sh->seen + part[i];
    for (size_t i = 0; i < sh->seen; i++)
        rows[v + i] = i;
    for (size_t i = v; i < fresh; i++)
        rows[sh->seen + i] = sh->seen + part[i];
    free(part);
    *nval = v;
    return rows;
}

static uint64_t bag_seed(uint64_t seed, int bag)
{
    return seed * 0x9E3779B97F4A7C15ULL + (uint64_t)bag * 0xD1B54A32D192ED03ULL + 1;
}

/* Phase 1 of a bag: split, boost the main terms, score pairs with FAST. */
static void bag_mains(bag_state *bag, const shared_data *sh)
{
    const lucid_ebm_params *p = sh->p;
    lucid_rng_seed(&bag->rng, bag_seed(p->seed, bag->index));
    size_t nval = 0;
    size_t *rows = sh->seen > 0 && sh->seen < sh->n ? split_unseen(sh, &bag->rng, &nval)
                                                    : lucid_split_rows(sh->n, p->validation_size,
                                                                       &bag->rng, &nval);
    stage st = {0, 0, 0, 0, 0};
    st.keep_start = sh->init != NULL;
    bag->nrows = sh->n;
    bag->ntrain = sh->n - nval;
    bag->y = malloc((sh->n ? sh->n : 1) * sizeof *bag->y);
    bag->score = calloc(sh->n ? sh->n : 1, sizeof *bag->score);
    bag->grad = malloc((sh->n ? sh->n : 1) * sizeof *bag->grad);
    bag->hess = malloc((sh->n ? sh->n : 1) * sizeof *bag->hess);
    bag->pair_bins = calloc((size_t)sh->nfeat + 1, sizeof *bag->pair_bins);
    int npairs = sh->nfeat * (sh->nfeat - 1) / 2;
    bag->fast = calloc((size_t)npairs + 1, sizeof *bag->fast);
    if (!rows || !bag->y || !bag->score || !bag->grad || !bag->hess || !bag->pair_bins ||
        !bag->fast || stage_alloc(&st, sh->nfeat, sh->n) < 0)
        goto fail;
    /* Bag order: train rows, then validation rows (they come last in `rows`
     * after rotating the validation block to the end). */
    size_t *order = malloc((sh->n ? sh->n : 1) * sizeof *order);
    if (!order)
        goto fail;
    memcpy(order, rows + nval, bag->ntrain * sizeof *order);
    memcpy(order + bag->ntrain, rows, nval * sizeof *order);
    free(rows);
    rows = order;
    for (size_t r = 0; r < sh->n; r++) {
        bag->y[r] = sh->y[rows[r]];
        if (sh->init)
            bag->score[r] = sh->init[rows[r]];
    }
    for (int f = 0; f < sh->nfeat; f++) {
        st.ncells[f] = sh->main_nb[f];
        bag->pair_bins[f] = malloc((sh->n ? sh->n : 1) * sizeof **bag->pair_bins);
        if (!bag->pair_bins[f])
            goto fail;
        for (size_t r = 0; r < sh->n; r++) {
            st.cells[f][r] = sh->main_bins[f][rows[r]];
            bag->pair_bins[f][r] = sh->pair_bins[f][rows[r]];
        }
    }
    if (boost(bag, p, &st, &bag->main_tables, &bag->rounds[0], &bag->metric[0]) < 0)
        goto fail;
    if (p->interactions > 0 && npairs > 0 &&
        fast_scores(bag->pair_bins, sh->pair_nb, sh->nfeat, bag->ntrain, bag->grad,
                    p->task == LUCID_REGRESSION ? NULL : bag->hess, p->min_samples_leaf,
                    bag->fast) < 0)
        goto fail;
    free(rows);
    stage_free(&st);
    return;
fail:
    free(rows);
    stage_free(&st);
    bag->failed = 1;
}

/* Phase 2 of a bag: boost the chosen pairs from the best main scores. */
static void bag_pairs(bag_state *bag, const shared_data *sh)
{
    stage st = {0, 0, 0, 0, 0};
    st.keep_start = sh->init != NULL;
    if (bag->failed)
        return;
    if (stage_alloc(&st, sh->npairs, bag->nrows) < 0) {
        bag->failed = 1;
        stage_free(&st);
        return;
    }
    for (int k = 0; k < sh->npairs; k++) {
        int i = sh->pairs[k][0], j = sh->pairs[k][1];
        uint32_t n2 = (uint32_t)sh->pair_nb[j];
        st.ncells[k] = sh->pair_nb[i] * sh->pair_nb[j];
        st.n2[k] = (int)n2;
        for (size_t r = 0; r < bag->nrows; r++)
            st.cells[k][r] = bag->pair_bins[i][r] * n2 + bag->pair_bins[j][r];
        /* Warm start: the pair's start table joins the best main scores. */
        for (size_t r = 0; sh->base && r < bag->nrows; r++)
            bag->score[r] += sh->base[sh->nfeat + k][st.cells[k][r]];
    }
    if (sh->npairs > 0 &&
        boost(bag, sh->p, &st, &bag->pair_tables, &bag->rounds[1], &bag->metric[1]) < 0)
        bag->failed = 1;
    stage_free(&st);
}

static void bag_release(bag_state *bag, int nfeat)
{
    free(bag->y);
    free(bag->score);
    free(bag->grad);
    free(bag->hess);
    if (bag->pair_bins)
        for (int f = 0; f < nfeat; f++)
            free(bag->pair_bins[f]);
    free(bag->pair_bins);
    free(bag->fast);
    bag->y = bag->score = bag->grad = bag->hess = bag->fast = NULL;
    bag->pair_bins = NULL;
}

/* ------------------------------------------------------------------ */
/* Running the bags on threads                                          */

/* Threads take the next unstarted bag until none is left: bags differ a
 * lot in length, and each bag's result depends only on its own stream, so
 * who runs it does not matter. */
typedef struct bag_queue {
    bag_state *bags;
    int nbags, next;
    pthread_mutex_t lock;
    const shared_data *sh;
    void (*fn)(bag_state *, const shared_data *);
} bag_queue;

static void *worker_main(void *arg)
{
    bag_queue *q = arg;
    for (;;) {
        pthread_mutex_lock(&q->lock);
        int b = q->next < q->nbags ? q->next++ : -1;
        pthread_mutex_unlock(&q->lock);
        if (b < 0)
            return NULL;
        q->fn(&q->bags[b], q->sh);
    }
}

static void run_bags(bag_state *bags, int nbags, int threads, const shared_data *sh,
                     void (*fn)(bag_state *, const shared_data *))
{
    enum { MAX_THREADS = 64 };
    if (threads > nbags)
        threads = nbags;
    if (threads > MAX_THREADS)
        threads = MAX_THREADS;
    bag_queue q = {bags, nbags, 0, PTHREAD_MUTEX_INITIALIZER, sh, fn};
    pthread_t tid[MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&tid[started], NULL, worker_main, &q) == 0)
            started++;
    worker_main(&q); /* this thread works too; with no helpers it does everything */
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

/* ------------------------------------------------------------------ */
/* Pair selection                                                       */

typedef struct ranked {
    double key;
    int index;
} ranked;

static int cmp_score_desc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int cmp_key_asc(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Keeps the `want` pairs of best mean rank over the bags. */
static int select_pairs(const bag_state *bags, int nbags, int nfeat, int want, int (**out)[2])
{
    int npairs = nfeat * (nfeat - 1) / 2;
    if (want > npairs)
        want = npairs;
    *out = NULL;
    if (want <= 0)
        return 0;
    ranked *order = malloc((size_t)npairs * sizeof *order);
    ranked *mean = calloc((size_t)npairs, sizeof *mean);
    int(*pairs)[2] = malloc((size_t)want * sizeof *pairs);
    if (!order || !mean || !pairs) {
        free(order);
        free(mean);
        free(pairs);
        return -1;
    }
    for (int k = 0; k < npairs; k++)
        mean[k].index = k;
    for (int b = 0; b < nbags; b++) {
        for (int k = 0; k < npairs; k++)
            order[k] = (ranked){bags[b].fast[k], k};
        qsort(order, (size_t)npairs, sizeof *order, cmp_score_desc);
        for (int r = 0; r < npairs; r++)
            mean[order[r].index].key += r;
    }
    qsort(mean, (size_t)npairs, sizeof *mean, cmp_key_asc);
    int eligible = 0;
    for (int k = 0; k < npairs; k++)
        eligible += bags[0].fast[k] > -INFINITY;
    if (want > eligible)
        want = eligible;
    for (int s = 0; s < want; s++) {
        int k = mean[s].index, i = 0;
        while (k >= nfeat - 1 - i) {
            k -= nfeat - 1 - i;
            i++;
        }
        pairs[s][0] = i;
        pairs[s][1] = i + 1 + k;
    }
    free(order);
    free(mean);
    *out = pairs;
    return want;
}

/* ------------------------------------------------------------------ */
/* Putting a model together                                             */

void lucid_ebm_free(lucid_ebm *m)
{
    if (!m)
        return;
    for (int f = 0; f < m->nfeat; f++) {
        if (m->names)
            free(m->names[f]);
        if (m->main_bins)
            lucid_bins_free(&m->main_bins[f]);
        if (m->pair_bins)
            lucid_bins_free(&m->pair_bins[f]);
    }
    free(m->names);
    free(m->main_bins);
    free(m->pair_bins);
    if (m->terms)
        for (int t = 0; t < m->nterms; t++) {
            free(m->terms[t].scores);
            free(m->terms[t].spread);
            free(m->terms[t].counts);
        }
    free(m->terms);
    free(m->bag_rounds);
    free(m->bag_metric);
    for (int i = 0; i < m->nmeta; i++) {
        free(m->meta_key[i]);
        free(m->meta_value[i]);
    }
    free(m);
}

/* Cell of `row` for a term, or LUCID_BIN_UNSEEN. */
static uint32_t term_cell(const lucid_ebm_term *t, uint32_t *const *main_bins,
                          uint32_t *const *pair_bins, size_t row)
{
    if (t->nfeat == 1)
        return main_bins[t->feat[0]][row];
    uint32_t a = pair_bins[t->feat[0]][row], b = pair_bins[t->feat[1]][row];
    if (a == LUCID_BIN_UNSEEN || b == LUCID_BIN_UNSEEN)
        return LUCID_BIN_UNSEEN;
    return a * (uint32_t)t->nbins[1] + b;
}

/* Averages bag tables, centres, zeroes unused missing slices, measures importance. */
static void finish_terms(lucid_ebm *m, bag_state *bags, int nbags, const shared_data *sh)
{
    char *has_missing = calloc((size_t)m->nfeat + 1, 1);
    for (int f = 0; f < m->nfeat && has_missing; f++)
        for (size_t r = 0; r < sh->n && !has_missing[f]; r++)
            has_missing[f] = sh->main_bins[f][r] == 0;
    for (int t = 0; t < m->nterms; t++) {
        lucid_ebm_term *term = &m->terms[t];
        for (int k = 0; k < term->ncells; k++) {
            double sum = 0, sq = 0;
            for (int b = 0; b < nbags; b++) {
                double v = t < m->nfeat ? bags[b].main_tables[t][k]
                                        : bags[b].pair_tables[t - m->nfeat][k];
                sum += v;
                sq += v * v;
            }
            double mean = sum / nbags, var = sq / nbags - mean * mean;
            term->scores[k] = mean + (sh->base ? sh->base[t][k] : 0.0);
            term->spread[k] = var > 0 ? sqrt(var) : 0;
        }
        double total = 0;
        for (size_t r = 0; r < sh->n; r++) {
            uint32_t cell = term_cell(term, sh->main_bins, sh->pair_bins, r);
            total += term->scores[cell];
            term->counts[cell]++;
        }
        double centre = sh->n ? total / (double)sh->n : 0;
        for (int k = 0; k < term->ncells; k++)
            term->scores[k] -= centre;
        m->intercept += centre;
        for (int d = 0; d < term->nfeat && has_missing; d++) {
            if (has_missing[term->feat[d]])
                continue;
            for (int k = 0; k < term->ncells; k++) {
                int coord = term->nfeat == 1 ? k : d == 0 ? k / term->nbins[1] : k % term->nbins[1];
                if (coord == 0)
                    term->scores[k] = term->spread[k] = 0;
            }
        }
        double imp = 0;
        for (size_t r = 0; r < sh->n; r++)
            imp += fabs(term->scores[term_cell(term, sh->main_bins, sh->pair_bins, r)]);
        term->importance = sh->n ? imp / (double)sh->n : 0;
    }
    free(has_missing);
}

/* The training rows' residuals on the fitted scale, at 10, 50 and 90 %. */
static int residual_quantiles(lucid_ebm *m, const shared_data *sh)
{
    double *r = malloc((sh->n ? sh->n : 1) * sizeof *r);
    if (!r)
        return -1;
    for (size_t i = 0; i < sh->n; i++) {
        double s = m->intercept;
        for (int t = 0; t < m->nterms; t++)
            s += m->terms[t].scores[term_cell(&m->terms[t], sh->main_bins, sh->pair_bins, i)];
        r[i] = sh->y[i] - s;
    }
    qsort(r, sh->n, sizeof *r, lucid_cmp_double);
    static const double q[3] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        double at = q[k] * (double)(sh->n - 1);
        size_t lo = (size_t)at;
        size_t hi = lo + 1 < sh->n ? lo + 1 : lo;
        m->residual_q[k] = r[lo] + (at - (double)lo) * (r[hi] - r[lo]);
    }
    free(r);
    return 0;
}

static int check_params(const lucid_ebm_params *p, const lucid_dataset *ds, lucid_error *err)
{
    if (!ds->target)
        return lucid_error_set(err, "the dataset has no target column");
    if (ds->ncols == 0 || ds->nrows < 2)
        return lucid_error_set(err, "nothing to train on (%zu rows, %zu features)", ds->nrows,
                               ds->ncols);
    if (p->max_bins < 3 || p->max_bins > 65536 || p->max_interaction_bins < 3 ||
        p->max_interaction_bins > 4096)
        return lucid_error_set(err, "max_bins must be 3..65536 and max_interaction_bins 3..4096");
    if (p->outer_bags < 1 || p->outer_bags > 1000)
        return lucid_error_set(err, "outer_bags must be 1..1000");
    if (!(p->learning_rate > 0) || !(p->validation_size > 0 && p->validation_size < 1))
        return lucid_error_set(err, "learning_rate must be > 0 and validation_size in (0, 1)");
    if (p->max_rounds < 1 || p->max_leaves < 2 || p->min_samples_leaf < 1)
        return lucid_error_set(err, "max_rounds >= 1, max_leaves >= 2, min_samples_leaf >= 1");
    for (size_t r = 0; r < ds->nrows; r++) {
        double y = ds->target[r];
        if (!isfinite(y))
            return lucid_error_set(err, "row %zu: the target is missing or not finite", r + 1);
        if (p->task == LUCID_CLASSIFICATION && y != 0 && y != 1)
            return lucid_error_set(err, "row %zu: a classification target must be 0 or 1", r + 1);
        if (p->target_transform == LUCID_TARGET_LOG1P && !(y > -1))
            return lucid_error_set(err, "row %zu: a log1p target must be > -1 (found %g)", r + 1,
                                   y);
    }
    if (p->target_transform != LUCID_TARGET_IDENTITY &&
        (p->task != LUCID_REGRESSION || p->target_transform != LUCID_TARGET_LOG1P))
        return lucid_error_set(err, "a target transform applies to regression only (log1p)");
    return 0;
}

/* Fits both binnings and bins every row. */
static int bin_features(lucid_ebm *m, const lucid_dataset *ds, shared_data *sh, lucid_error *err)
{
    size_t n = ds->nrows;
    m->names = calloc(ds->ncols, sizeof *m->names);
    m->main_bins = calloc(ds->ncols, sizeof *m->main_bins);
    m->pair_bins = calloc(ds->ncols, sizeof *m->pair_bins);
    sh->main_bins = calloc(ds->ncols, sizeof *sh->main_bins);
    sh->pair_bins = calloc(ds->ncols, sizeof *sh->pair_bins);
    sh->main_nb = calloc(ds->ncols, sizeof *sh->main_nb);
    sh->pair_nb = calloc(ds->ncols, sizeof *sh->pair_nb);
    if (!m->names || !m->main_bins || !m->pair_bins || !sh->main_bins || !sh->pair_bins ||
        !sh->main_nb || !sh->pair_nb)
        return lucid_error_set(err, "out of memory");
    for (size_t f = 0; f < ds->ncols; f++) {
        const lucid_column *col = &ds->cols[f];
        lucid_feature_type type = lucid_column_type(col, n);
        m->nfeat++;
        if (!(m->names[f] = strdup(col->name)))
            return lucid_error_set(err, "out of memory");
        if (lucid_bins_fit(&m->main_bins[f], type, col, n, m->params.max_bins,
                           m->params.binning, err) < 0 ||
            lucid_bins_fit(&m->pair_bins[f], type, col, n, m->params.max_interaction_bins,
                           m->params.binning, err) < 0)
            return -1;
        sh->main_nb[f] = lucid_bins_count(&m->main_bins[f]);
        sh->pair_nb[f] = lucid_bins_count(&m->pair_bins[f]);
        sh->main_bins[f] = malloc(n * sizeof **sh->main_bins);
        sh->pair_bins[f] = malloc(n * sizeof **sh->pair_bins);
        if (!sh->main_bins[f] || !sh->pair_bins[f])
            return lucid_error_set(err, "out of memory");
        if (lucid_bins_apply(&m->main_bins[f], col, n, sh->main_bins[f], err) < 0 ||
            lucid_bins_apply(&m->pair_bins[f], col, n, sh->pair_bins[f], err) < 0)
            return -1;
    }
    sh->nfeat = m->nfeat;
    return 0;
}

static void shared_free(shared_data *sh, int nfeat)
{
    for (int f = 0; f < nfeat; f++) {
        if (sh->main_bins)
            free(sh->main_bins[f]);
        if (sh->pair_bins)
            free(sh->pair_bins[f]);
    }
    free(sh->main_bins);
    free(sh->pair_bins);
    free(sh->main_nb);
    free(sh->pair_nb);
    free(sh->pairs);
    free(sh->init);
    for (int t = 0; sh->base && t < sh->nbase; t++)
        free(sh->base[t]);
    free(sh->base);
}

static int make_terms(lucid_ebm *m, const shared_data *sh, lucid_error *err)
{
    m->nterms = m->nfeat + sh->npairs;
    m->terms = calloc((size_t)m->nterms, sizeof *m->terms);
    if (!m->terms)
        return lucid_error_set(err, "out of memory");
    for (int t = 0; t < m->nterms; t++) {
        lucid_ebm_term *term = &m->terms[t];
        if (t < m->nfeat) {
            term->nfeat = 1;
            term->feat[0] = t;
            term->nbins[0] = sh->main_nb[t];
            term->nbins[1] = 1;
        } else {
            term->nfeat = 2;
            for (int d = 0; d < 2; d++) {
                term->feat[d] = sh->pairs[t - m->nfeat][d];
                term->nbins[d] = sh->pair_nb[term->feat[d]];
            }
        }
        term->ncells = term->nbins[0] * term->nbins[1];
        term->scores = calloc((size_t)term->ncells, sizeof *term->scores);
        term->spread = calloc((size_t)term->ncells, sizeof *term->spread);
        term->counts = calloc((size_t)term->ncells, sizeof *term->counts);
        if (!term->scores || !term->spread || !term->counts)
            return lucid_error_set(err, "out of memory");
    }
    return 0;
}

/* ---- Warm start ----
 *
 * The start model's tables are carried onto this training's bins (which may
 * differ: uniform cuts follow the data's range, categories the data), the
 * rows' scores start from them and the bags boost from there.  A new cell
 * takes the mean of the start term's score over the training rows in it
 * (the start model's own binning of their values); a cell without rows
 * takes the start term's score at the cell's representative value (the
 * middle of a continuous bin, its category).  The start model's pairs are
 * kept: FAST is not run again. */

static int bin_for_model(const lucid_ebm *m, const lucid_dataset *ds, uint32_t ***main_out,
                         uint32_t ***pair_out, lucid_error *err);
static void free_bin_arrays(uint32_t **a, int n);

/* The value bin k of `b` stands for: *x for continuous bins, *label for a
 * category; 0 for the missing bin. */
static int bin_representative(const lucid_bins *b, uint32_t k, double *x, const char **label)
{
    *x = (double)NAN;
    *label = NULL;
    if (k == 0)
        return 0;
    if (b->type != LUCID_CONTINUOUS) {
        *label = (int)k - 1 < b->ncats ? b->cats[k - 1] : NULL;
        return 1;
    }
    int i = (int)k - 1; /* bin k holds [cuts[i - 1], cuts[i]) */
    if (b->ncuts == 0)
        *x = 0;
    else if (i == 0)
        *x = nextafter(b->cuts[0], -INFINITY);
    else if (i >= b->ncuts)
        *x = b->cuts[b->ncuts - 1];
    else
        *x = 0.5 * (b->cuts[i - 1] + b->cuts[i]);
    return 1;
}

/* The start model's bin of new bin k (see bin_representative). */
static uint32_t start_bin(const lucid_bins *old, const lucid_bins *now, uint32_t k)
{
    double x;
    const char *label;
    if (!bin_representative(now, k, &x, &label))
        return 0;
    return old->type == LUCID_CONTINUOUS ? lucid_bin_value(old, x) : lucid_bin_category(old, label);
}

/* Whether `start` can seed a training on `ds`: the same task, target and
 * features in the same order, none that start bins as numbers now holding
 * strings.  (A feature typed otherwise by this data — a column of only 0/1
 * so far is categorical — starts its terms at 0.) */
static int warm_compatible(const lucid_ebm *start, const lucid_ebm *m, const lucid_dataset *ds)
{
    if (start->task != m->task || start->nfeat != m->nfeat ||
        start->params.target_transform != m->params.target_transform)
        return 0;
    for (int f = 0; f < m->nfeat; f++)
        if (strcmp(start->names[f], m->names[f]) != 0 ||
            (start->main_bins[f].type == LUCID_CONTINUOUS && !ds->cols[f].values))
            return 0;
    return 1;
}

/* The start model's term over features (a, b) (b < 0: main term) carried
 * onto this training's bins: a calloc'd table, all 0 when the start model
 * has no such term or types a feature otherwise; NULL if out of memory.
 * `omb` / `opb`: the training rows binned by the start model. */
static double *warm_table(const lucid_ebm *start, const lucid_ebm *m, const shared_data *sh,
                          uint32_t *const *omb, uint32_t *const *opb, int a, int b)
{
    int pair = b >= 0, n2 = pair ? sh->pair_nb[b] : 1;
    size_t cells = (size_t)(pair ? sh->pair_nb[a] : sh->main_nb[a]) * (size_t)n2;
    double *base = calloc(cells + 1, sizeof *base);
    double *sum = calloc(cells + 1, sizeof *sum);
    uint32_t *cnt = calloc(cells + 1, sizeof *cnt);
    const lucid_ebm_term *ot = NULL;
    for (int t = 0; t < start->nterms && !ot; t++)
        if (start->terms[t].nfeat == (pair ? 2 : 1) && start->terms[t].feat[0] == a &&
            (!pair || start->terms[t].feat[1] == b))
            ot = &start->terms[t];
    if (!base || !sum || !cnt || !ot || start->main_bins[a].type != m->main_bins[a].type ||
        (pair && start->main_bins[b].type != m->main_bins[b].type)) {
        free(sum);
        free(cnt);
        if (base && (!sum || !cnt)) {
            free(base);
            return NULL;
        }
        return base;
    }
    for (size_t r = 0; r < sh->n; r++) {
        uint32_t oc = term_cell(ot, omb, opb, r);
        size_t nc = pair ? (size_t)sh->pair_bins[a][r] * (size_t)n2 + sh->pair_bins[b][r]
                         : sh->main_bins[a][r];
        sum[nc] += oc == LUCID_BIN_UNSEEN ? 0.0 : ot->scores[oc];
        cnt[nc]++;
    }
    for (size_t c = 0; c < cells; c++) {
        if (cnt[c] > 0) {
            base[c] = sum[c] / cnt[c];
            continue;
        }
        uint32_t oc;
        if (!pair) {
            oc = start_bin(&start->main_bins[a], &m->main_bins[a], (uint32_t)c);
        } else {
            uint32_t o0 = start_bin(&start->pair_bins[a], &m->pair_bins[a], (uint32_t)(c / (size_t)n2));
            uint32_t o1 = start_bin(&start->pair_bins[b], &m->pair_bins[b], (uint32_t)(c % (size_t)n2));
            oc = o0 == LUCID_BIN_UNSEEN || o1 == LUCID_BIN_UNSEEN ? LUCID_BIN_UNSEEN
                                                                  : o0 * (uint32_t)ot->nbins[1] + o1;
        }
        base[c] = oc == LUCID_BIN_UNSEEN ? 0.0 : ot->scores[oc];
    }
    free(sum);
    free(cnt);
    return base;
}

/* The start model's main terms on this training's bins (sh->base) and
 * every row's starting score, its intercept plus those (sh->init): the
 * main stage boosts from there.  -1 if out of memory. */
static int warm_mains(const lucid_ebm *start, const lucid_ebm *m, shared_data *sh,
                      uint32_t *const *omb, uint32_t *const *opb, lucid_error *err)
{
    sh->base = calloc((size_t)m->nfeat + 1, sizeof *sh->base);
    sh->init = malloc((sh->n ? sh->n : 1) * sizeof *sh->init);
    if (!sh->base || !sh->init)
        return lucid_error_set(err, "out of memory");
    for (int f = 0; f < m->nfeat; f++, sh->nbase++)
        if (!(sh->base[f] = warm_table(start, m, sh, omb, opb, f, -1)))
            return lucid_error_set(err, "out of memory");
    for (size_t r = 0; r < sh->n; r++) {
        double s = start->intercept;
        for (int f = 0; f < m->nfeat; f++)
            s += sh->base[f][sh->main_bins[f][r]];
        sh->init[r] = s;
    }
    return 0;
}

/* After the pairs are selected: the start model's tables of those pairs
 * (0 for a pair it lacks), appended to sh->base.  -1 if out of memory. */
static int warm_pairs(const lucid_ebm *start, const lucid_ebm *m, shared_data *sh,
                      uint32_t *const *omb, uint32_t *const *opb, lucid_error *err)
{
    double **base = realloc(sh->base, ((size_t)m->nfeat + (size_t)sh->npairs + 1) * sizeof *base);
    if (!base)
        return lucid_error_set(err, "out of memory");
    sh->base = base;
    for (int k = 0; k < sh->npairs; k++, sh->nbase++)
        if (!(base[m->nfeat + k] =
                  warm_table(start, m, sh, omb, opb, sh->pairs[k][0], sh->pairs[k][1])))
            return lucid_error_set(err, "out of memory");
    return 0;
}

static lucid_ebm *train(const lucid_dataset *ds, const lucid_ebm_params *p, const lucid_ebm *start,
                        size_t seen, lucid_error *err);

lucid_ebm *lucid_ebm_train(const lucid_dataset *ds, const lucid_ebm_params *p, lucid_error *err)
{
    return train(ds, p, NULL, 0, err);
}

lucid_ebm *lucid_ebm_train_warm(const lucid_dataset *ds, const lucid_ebm_params *p,
                                const lucid_ebm *start, size_t seen, lucid_error *err)
{
    return train(ds, p, start, seen, err);
}

static lucid_ebm *train(const lucid_dataset *ds, const lucid_ebm_params *p, const lucid_ebm *start,
                        size_t seen, lucid_error *err)
{
    if (check_params(p, ds, err) < 0)
        return NULL;
    lucid_ebm *m = calloc(1, sizeof *m);
    shared_data sh;
    memset(&sh, 0, sizeof sh);
    uint32_t **omb = NULL, **opb = NULL; /* warm start: the rows in the start model's bins */
    bag_state *bags = calloc((size_t)p->outer_bags, sizeof *bags);
    if (!m || !bags) {
        lucid_error_set(err, "out of memory");
        free(bags);
        free(m);
        return NULL;
    }
    m->params = *p;
    m->task = p->task;
    m->decode_scale = 1.0;
    m->train_rows = ds->nrows;
    sh.p = &m->params;
    sh.n = ds->nrows;
    sh.y = ds->target;
    double *logy = NULL; /* the target on the fitted scale, when transformed */
    if (p->target_transform == LUCID_TARGET_LOG1P) {
        if (!(logy = malloc(ds->nrows * sizeof *logy))) {
            lucid_error_set(err, "out of memory");
            goto fail;
        }
        m->score_min = INFINITY;
        m->score_max = -INFINITY;
        for (size_t r = 0; r < ds->nrows; r++) {
            logy[r] = log1p(ds->target[r]);
            m->score_min = fmin(m->score_min, logy[r]);
            m->score_max = fmax(m->score_max, logy[r]);
        }
        sh.y = logy;
    }
    if (bin_features(m, ds, &sh, err) < 0)
        goto fail;
    if (start && warm_compatible(start, m, ds)) {
        if (bin_for_model(start, ds, &omb, &opb, err) < 0 ||
            warm_mains(start, m, &sh, omb, opb, err) < 0)
            goto fail;
        m->intercept = start->intercept;
        m->warm_rows = start->train_rows;
        sh.seen = seen;
    }
    for (int b = 0; b < p->outer_bags; b++)
        bags[b].index = b;
    run_bags(bags, p->outer_bags, p->threads, &sh, bag_mains);
    for (int b = 0; b < p->outer_bags; b++)
        if (bags[b].failed) {
            lucid_error_set(err, "out of memory while training bag %d", b);
            goto fail;
        }
    sh.npairs = select_pairs(bags, p->outer_bags, m->nfeat, p->interactions, &sh.pairs);
    if (sh.npairs < 0) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    if (sh.init && warm_pairs(start, m, &sh, omb, opb, err) < 0)
        goto fail;
    run_bags(bags, p->outer_bags, p->threads, &sh, bag_pairs);
    for (int b = 0; b < p->outer_bags; b++)
        if (bags[b].failed) {
            lucid_error_set(err, "out of memory while training bag %d", b);
            goto fail;
        }
    if (make_terms(m, &sh, err) < 0)
        goto fail;
    m->bag_rounds = calloc(2 * (size_t)p->outer_bags, sizeof *m->bag_rounds);
    m->bag_metric = calloc(2 * (size_t)p->outer_bags, sizeof *m->bag_metric);
    if (!m->bag_rounds || !m->bag_metric) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    for (int b = 0; b < p->outer_bags; b++)
        for (int s = 0; s < 2; s++) {
            m->bag_rounds[2 * b + s] = bags[b].rounds[s];
            m->bag_metric[2 * b + s] = bags[b].metric[s];
        }
    finish_terms(m, bags, p->outer_bags, &sh);
    if (logy && residual_quantiles(m, &sh) < 0) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    for (int b = 0; b < p->outer_bags; b++) {
        bag_release(&bags[b], m->nfeat);
        free_tables(bags[b].main_tables, m->nfeat);
        free_tables(bags[b].pair_tables, sh.npairs);
    }
    free(bags);
    shared_free(&sh, m->nfeat);
    free(logy);
    if (start) {
        free_bin_arrays(omb, start->nfeat);
        free_bin_arrays(opb, start->nfeat);
    }
    return m;
fail:
    for (int b = 0; b < p->outer_bags; b++) {
        bag_release(&bags[b], m->nfeat);
        free_tables(bags[b].main_tables, m->nfeat);
        free_tables(bags[b].pair_tables, sh.npairs > 0 ? sh.npairs : 0);
    }
    free(bags);
    shared_free(&sh, m->nfeat);
    free(logy);
    if (start) {
        free_bin_arrays(omb, start->nfeat);
        free_bin_arrays(opb, start->nfeat);
    }
    lucid_ebm_free(m);
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Prediction                                                           */

/* Bins the model's features of `ds` (matched by name). */
static int bin_for_model(const lucid_ebm *m, const lucid_dataset *ds, uint32_t ***main_out,
                         uint32_t ***pair_out, lucid_error *err)
{
    size_t n = ds->nrows ? ds->nrows : 1;
    uint32_t **mb = calloc((size_t)m->nfeat, sizeof *mb);
    uint32_t **pb = calloc((size_t)m->nfeat, sizeof *pb);
    *main_out = mb;
    *pair_out = pb;
    if (!mb || !pb)
        return lucid_error_set(err, "out of memory");
    for (int f = 0; f < m->nfeat; f++) {
        int c = lucid_dataset_find(ds, m->names[f]);
        if (c < 0)
            return lucid_error_set(err, "the data has no column '%s' that the model needs",
                                   m->names[f]);
        mb[f] = malloc(n * sizeof **mb);
        pb[f] = malloc(n * sizeof **pb);
        if (!mb[f] || !pb[f])
            return lucid_error_set(err, "out of memory");
        if (lucid_bins_apply(&m->main_bins[f], &ds->cols[c], ds->nrows, mb[f], err) < 0 ||
            lucid_bins_apply(&m->pair_bins[f], &ds->cols[c], ds->nrows, pb[f], err) < 0)
            return -1;
    }
    return 0;
}

static void free_bin_arrays(uint32_t **a, int n)
{
    if (!a)
        return;
    for (int f = 0; f < n; f++)
        free(a[f]);
    free(a);
}

int lucid_ebm_contributions(const lucid_ebm *m, const lucid_dataset *ds, double *contrib,
                            lucid_error *err)
{
    uint32_t **mb, **pb;
    int rc = bin_for_model(m, ds, &mb, &pb, err);
    if (rc == 0)
        for (size_t r = 0; r < ds->nrows; r++)
            for (int t = 0; t < m->nterms; t++) {
                uint32_t cell = term_cell(&m->terms[t], mb, pb, r);
                contrib[r * (size_t)m->nterms + (size_t)t] =
                    cell == LUCID_BIN_UNSEEN ? 0.0 : m->terms[t].scores[cell];
            }
    free_bin_arrays(mb, m->nfeat);
    free_bin_arrays(pb, m->nfeat);
    return rc;
}

int lucid_ebm_scores(const lucid_ebm *m, const lucid_dataset *ds, double *out, lucid_error *err)
{
    uint32_t **mb, **pb;
    int rc = bin_for_model(m, ds, &mb, &pb, err);
    if (rc == 0)
        for (size_t r = 0; r < ds->nrows; r++) {
            double s = m->intercept;
            for (int t = 0; t < m->nterms; t++) {
                uint32_t cell = term_cell(&m->terms[t], mb, pb, r);
                if (cell != LUCID_BIN_UNSEEN)
                    s += m->terms[t].scores[cell];
            }
            out[r] = s;
        }
    free_bin_arrays(mb, m->nfeat);
    free_bin_arrays(pb, m->nfeat);
    return rc;
}

double lucid_ebm_decode(const lucid_ebm *m, double score)
{
    if (m->task == LUCID_CLASSIFICATION)
        return sigmoid(score);
    if (m->params.target_transform == LUCID_TARGET_LOG1P)
        return exp(fmin(fmax(score, m->score_min), m->score_max)) * m->decode_scale - 1.0;
    return score;
}

int lucid_ebm_predict_quantile(const lucid_ebm *m, const lucid_dataset *ds, int k, double *out,
                               lucid_error *err)
{
    if (m->params.target_transform != LUCID_TARGET_LOG1P || k < 0 || k > 2)
        return lucid_error_set(err, "quantiles come from log1p models only (P10, P50, P90)");
    if (lucid_ebm_scores(m, ds, out, err) < 0)
        return -1;
    for (size_t r = 0; r < ds->nrows; r++)
        out[r] = lucid_ebm_decode(m, out[r] + m->residual_q[k]);
    return 0;
}

int lucid_ebm_predict(const lucid_ebm *m, const lucid_dataset *ds, double *out, lucid_error *err)
{
    if (lucid_ebm_scores(m, ds, out, err) < 0)
        return -1;
    for (size_t r = 0; r < ds->nrows; r++)
        out[r] = lucid_ebm_decode(m, out[r]);
    return 0;
}

const char *lucid_ebm_term_name(const lucid_ebm *m, int term, char *buf, size_t size)
{
    const lucid_ebm_term *t = &m->terms[term];
    if (t->nfeat == 1)
        snprintf(buf, size, "%s", m->names[t->feat[0]]);
    else
        snprintf(buf, size, "%s x %s", m->names[t->feat[0]], m->names[t->feat[1]]);
    return buf;
}

int lucid_ebm_make_monotone(lucid_ebm *m, const char *feature, int direction, lucid_error *err)
{
    int t = -1;
    for (int k = 0; k < m->nterms && t < 0; k++)
        if (m->terms[k].nfeat == 1 && strcmp(m->names[m->terms[k].feat[0]], feature) == 0)
            t = k;
    if (t < 0)
        return lucid_error_set(err, "the model has no main term for '%s'", feature);
    lucid_ebm_term *term = &m->terms[t];
    if (term->ncells < 2)
        return direction < 0 ? -1 : 1;
    /* The missing bin (0) is not part of the order. */
    int used = lucid_iso_shape(term->scores + 1, term->counts + 1, (size_t)term->ncells - 1,
                               direction, term->scores + 1);
    if (used == 0)
        return lucid_error_set(err, "'%s': no training rows to fit a monotone shape to", feature);
    double rows = 0, total = 0, absolute = 0;
    for (int k = 0; k < term->ncells; k++) {
        rows += term->counts[k];
        total += term->counts[k] * term->scores[k];
    }
    double centre = rows > 0 ? total / rows : 0;
    for (int k = 0; k < term->ncells; k++) {
        if (k == 0 && term->counts[0] == 0)
            continue; /* an unused missing bin stays zero */
        term->scores[k] -= centre;
        absolute += term->counts[k] * fabs(term->scores[k]);
    }
    m->intercept += centre;
    term->importance = rows > 0 ? absolute / rows : 0;
    return used;
}

int lucid_ebm_set_meta(lucid_ebm *m, const char *key, const char *value, lucid_error *err)
{
    for (int i = 0; i < m->nmeta; i++)
        if (strcmp(m->meta_key[i], key) == 0) {
            char *v = strdup(value);
            if (!v)
                return lucid_error_set(err, "out of memory");
            free(m->meta_value[i]);
            m->meta_value[i] = v;
            return 0;
        }
    if (m->nmeta >= LUCID_EBM_MAX_META)
        return lucid_error_set(err, "too many metadata entries");
    m->meta_key[m->nmeta] = strdup(key);
    m->meta_value[m->nmeta] = strdup(value);
    if (!m->meta_key[m->nmeta] || !m->meta_value[m->nmeta]) {
        free(m->meta_key[m->nmeta]);
        free(m->meta_value[m->nmeta]);
        return lucid_error_set(err, "out of memory");
    }
    m->nmeta++;
    return 0;
}

const char *lucid_ebm_get_meta(const lucid_ebm *m, const char *key)
{
    for (int i = 0; i < m->nmeta; i++)
        if (strcmp(m->meta_key[i], key) == 0)
            return m->meta_value[i];
    return NULL;
}
