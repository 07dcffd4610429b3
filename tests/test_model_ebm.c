/* test_model_ebm.c — cuts, binning, the EBM trainer and its model file.
 *
 * Expected values are worked out by hand in the comments, not taken from
 * the implementation. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/dataset.h"
#include "lucid/ebm.h"
#include "lucid/features.h"
#include "lucid/util.h"

/* ---- cuts ---- */

static void uniform_cuts_follow_the_formula(void **state)
{
    (void)state;
    double x[] = {10, 0, NAN, 3, 7};
    double *cuts;
    /* min 0, max 10, 4 cuts: nb = 5, step = 2 -> 2 4 6 8 */
    assert_int_equal(lucid_cuts_uniform(x, 5, 4, &cuts), 4);
    double want[] = {2, 4, 6, 8};
    for (int i = 0; i < 4; i++)
        assert_true(cuts[i] == want[i]);
    free(cuts);
    /* Awkward decimals: bit-identical to min + step * i. */
    double y[] = {0.1, 0.7, 0.3};
    assert_int_equal(lucid_cuts_uniform(y, 3, 2, &cuts), 2);
    double step = (0.7 - 0.1) / 3;
    for (int i = 1; i <= 2; i++) {
        double expect = 0.1 + step * i;
        assert_memory_equal(&cuts[i - 1], &expect, sizeof expect);
    }
    free(cuts);
    double same[] = {5, 5, 5};
    assert_int_equal(lucid_cuts_uniform(same, 3, 10, &cuts), 0);
    assert_null(cuts);
}

static void quantile_cuts_on_small_arrays(void **state)
{
    (void)state;
    double *cuts;
    /* Few distinct values: every midpoint. */
    double a[] = {4, 1, 3, 2, 2};
    assert_int_equal(lucid_cuts_quantile(a, 5, 254, &cuts), 3);
    assert_true(cuts[0] == 1.5 && cuts[1] == 2.5 && cuts[2] == 3.5);
    free(cuts);
    /* 1..10 with one cut: half the rows on each side -> 5.5. */
    double b[10];
    for (int i = 0; i < 10; i++)
        b[i] = i + 1;
    assert_int_equal(lucid_cuts_quantile(b, 10, 1, &cuts), 1);
    assert_true(cuts[0] == 5.5);
    free(cuts);
    /* A heavily repeated value gets its own bin: targets at 3.33 and 6.67
     * rows both fall inside the six 5s, so the cuts go on both sides of it. */
    double c[] = {1, 2, 5, 5, 5, 5, 5, 5, 8, 9};
    assert_int_equal(lucid_cuts_quantile(c, 10, 2, &cuts), 2);
    assert_true(cuts[0] == 3.5 && cuts[1] == 6.5);
    free(cuts);
    /* Cuts a heavy value does not need go to the other values (as
     * InterpretML's cutter does): eight 0s take a bin of their own (cut 0.5),
     * and the other three cuts split 1..12 into equal thirds. */
    double h[20];
    for (int i = 0; i < 8; i++)
        h[i] = 0;
    for (int i = 8; i < 20; i++)
        h[i] = i - 7;
    assert_int_equal(lucid_cuts_quantile(h, 20, 4, &cuts), 4);
    assert_true(cuts[0] == 0.5 && cuts[1] == 3.5 && cuts[2] == 6.5 && cuts[3] == 9.5);
    free(cuts);
    /* Three heavy values with light ones between would need four cuts to
     * isolate; with three, plain equal frequency (targets 3.5, 7, 10.5). */
    double alt[] = {0, 0, 0, 0, 1, 2, 2, 2, 2, 3, 4, 4, 4, 4};
    assert_int_equal(lucid_cuts_quantile(alt, 14, 3, &cuts), 3);
    assert_true(cuts[0] == 0.5 && cuts[1] == 1.5 && cuts[2] == 3.5);
    free(cuts);
    double one[] = {NAN, 7, 7};
    assert_int_equal(lucid_cuts_quantile(one, 3, 10, &cuts), 0);
}

static void binning_is_lower_bound_inclusive_with_a_missing_bin(void **state)
{
    (void)state;
    double cuts[] = {1.5, 2.5};
    lucid_bins b = {LUCID_CONTINUOUS, 2, cuts, 0, NULL};
    assert_int_equal(lucid_bins_count(&b), 4);
    assert_int_equal(lucid_bin_value(&b, NAN), 0);
    assert_int_equal(lucid_bin_value(&b, -100), 1);
    assert_int_equal(lucid_bin_value(&b, 1.5), 2);
    assert_int_equal(lucid_bin_value(&b, 2.4999), 2);
    assert_int_equal(lucid_bin_value(&b, 2.5), 3);
    assert_int_equal(lucid_bin_value(&b, 1e9), 3);
}

static void categories_are_sorted_strings_and_unseen_ones_flagged(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    lucid_dataset *ds = lucid_dataset_new(5, &err);
    const char *users[] = {"bob", "alice", "", "carol", "bob"};
    double amp[] = {0, 1, 1, NAN, 0};
    double gpus[] = {0, 1, 2, 8, 1};
    assert_int_equal(lucid_dataset_add_strings(ds, "user", users, &err), 0);
    assert_int_equal(lucid_dataset_add_numeric(ds, "amp", amp, &err), 0);
    assert_int_equal(lucid_dataset_add_numeric(ds, "gpus", gpus, &err), 0);
    assert_int_equal(lucid_dataset_add_numeric(ds, "gpus", gpus, &err), -1);
    assert_int_equal(lucid_column_type(&ds->cols[0], 5), LUCID_CATEGORICAL);
    assert_int_equal(lucid_column_type(&ds->cols[1], 5), LUCID_CATEGORICAL);
    assert_int_equal(lucid_column_type(&ds->cols[2], 5), LUCID_CONTINUOUS);
    lucid_bins b;
    assert_int_equal(lucid_bins_fit(&b, LUCID_CATEGORICAL, &ds->cols[0], 5, 256,
                                    LUCID_BIN_QUANTILE, &err), 0);
    assert_int_equal(b.ncats, 3);
    assert_string_equal(b.cats[0], "alice");
    assert_string_equal(b.cats[2], "carol");
    uint32_t out[5];
    assert_int_equal(lucid_bins_apply(&b, &ds->cols[0], 5, out, &err), 0);
    assert_int_equal(out[0], 2);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 0);
    assert_int_equal(out[3], 3);
    assert_int_equal(lucid_bin_category(&b, "dave"), LUCID_BIN_UNSEEN);
    lucid_bins_free(&b);
    /* 0/1 numbers are categories "0" and "1"; a 2 at prediction time is unseen. */
    assert_int_equal(lucid_bins_fit(&b, LUCID_CATEGORICAL, &ds->cols[1], 5, 256,
                                    LUCID_BIN_QUANTILE, &err), 0);
    assert_int_equal(b.ncats, 2);
    assert_int_equal(lucid_bins_apply(&b, &ds->cols[2], 5, out, &err), 0);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 2);
    assert_int_equal(out[2], LUCID_BIN_UNSEEN);
    lucid_bins_free(&b);
    lucid_dataset_free(ds);
}

static void split_is_seeded_and_sized_by_ceiling(void **state)
{
    (void)state;
    lucid_rng a, b;
    lucid_rng_seed(&a, 7);
    lucid_rng_seed(&b, 7);
    size_t na, nb;
    size_t *ra = lucid_split_rows(41, 0.15, &a, &na);
    size_t *rb = lucid_split_rows(41, 0.15, &b, &nb);
    assert_int_equal(na, 7); /* ceil(41 * 0.15) = ceil(6.15) */
    assert_memory_equal(ra, rb, 41 * sizeof *ra);
    int seen[41] = {0};
    for (int i = 0; i < 41; i++)
        seen[ra[i]]++;
    for (int i = 0; i < 41; i++)
        assert_int_equal(seen[i], 1);
    free(ra);
    free(rb);
}

/* ---- training ---- */

static lucid_dataset *one_feature(int copies, double (*f)(int))
{
    lucid_error err = {{0}};
    int n = 10 * copies;
    double *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    for (int i = 0; i < n; i++) {
        x[i] = i % 10;
        y[i] = f(i % 10);
    }
    lucid_dataset *ds = lucid_dataset_new((size_t)n, &err);
    assert_int_equal(lucid_dataset_add_numeric(ds, "x", x, &err), 0);
    assert_int_equal(lucid_dataset_set_target(ds, "y", y, &err), 0);
    free(x);
    free(y);
    return ds;
}

static double three_steps(int x) { return x < 3 ? 0 : x < 7 ? 5 : 12; }

static void one_feature_finds_the_optimal_three_leaf_tree(void **state)
{
    (void)state;
    /* x = 0..9 (10 rows each), y = 0 / 5 / 12 on [0,3) / [3,7) / [7,10).
     * Root candidates: cut at 3 scores 0 + 560^2/70 = 4480, cut at 7 scores
     * 200^2/70 + 360^2/30 = 4891.4, so the root cuts at 7 and the left child
     * at 3.  With learning rate 1 one step lands on the leaf means, which
     * are the three y levels exactly. */
    lucid_dataset *ds = one_feature(10, three_steps);
    lucid_ebm_params p;
    lucid_ebm_default_params(&p);
    p.outer_bags = 1;
    p.learning_rate = 1.0;
    p.max_rounds = 1;
    p.interactions = 0;
    lucid_error err = {{0}};
    lucid_ebm *m = lucid_ebm_train(ds, &p, &err);
    assert_non_null(m);
    assert_int_equal(m->nterms, 1);
    double pred[100];
    assert_int_equal(lucid_ebm_predict(m, ds, pred, &err), 0);
    for (int i = 0; i < 100; i++)
        assert_true(fabs(pred[i] - ds->target[i]) < 1e-9);
    /* Centred: mean over rows is (30*0 + 40*5 + 30*12)/100 = 5.6. */
    assert_true(fabs(m->intercept - 5.6) < 1e-9);
    /* Importance: mean |y - 5.6| = (30*5.6 + 40*0.6 + 30*6.4)/100 = 3.84. */
    assert_true(fabs(m->terms[0].importance - 3.84) < 1e-9);
    /* No row was missing: the missing bin is zero. */
    assert_true(m->terms[0].scores[0] == 0.0);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

/* Features a, b, c on a full 4x4x4 grid; y depends on a and b only through
 * their interaction (XOR of the high halves), so no main effect exists. */
static lucid_dataset *xor_data(int copies)
{
    lucid_error err = {{0}};
    size_t n = (size_t)64 * (size_t)copies;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c),
           *y = malloc(n * sizeof *y);
    for (size_t i = 0; i < n; i++) {
        a[i] = (double)(i % 4);
        b[i] = (double)(i / 4 % 4);
        c[i] = (double)(i / 16 % 4);
        y[i] = (a[i] >= 2) == (b[i] >= 2) ? 1 : -1;
    }
    lucid_dataset *ds = lucid_dataset_new(n, &err);
    lucid_dataset_add_numeric(ds, "a", a, &err);
    lucid_dataset_add_numeric(ds, "b", b, &err);
    lucid_dataset_add_numeric(ds, "c", c, &err);
    lucid_dataset_set_target(ds, "y", y, &err);
    free(a);
    free(b);
    free(c);
    free(y);
    return ds;
}

static void fast_scores_the_planted_pair(void **state)
{
    (void)state;
    /* Gradient = -y.  For (a,b) the cut at (2,2) gives four quadrants of 16
     * rows with G = -/+16: score 4 * 16^2/16 = 64.  For (a,c) and (b,c)
     * every quadrant holds as many +1 as -1: score 0. */
    enum { N = 64 };
    uint32_t bins[3][N];
    double grad[N];
    for (int i = 0; i < N; i++) {
        int a = i % 4, b = i / 4 % 4, c = i / 16;
        bins[0][i] = (uint32_t)(1 + a);
        bins[1][i] = (uint32_t)(1 + b);
        bins[2][i] = (uint32_t)(1 + c);
        grad[i] = (a >= 2) == (b >= 2) ? -1 : 1;
    }
    uint32_t *cols[3] = {bins[0], bins[1], bins[2]};
    int nbins[3] = {5, 5, 5};
    double scores[3];
    lucid_ebm_fast_scores(cols, nbins, 3, N, grad, 2, scores);
    assert_true(fabs(scores[0] - 64) < 1e-9);
    assert_true(fabs(scores[1]) < 1e-9);
    assert_true(fabs(scores[2]) < 1e-9);

    /* End to end: with one pair allowed the model picks (a, b) and fits y. */
    lucid_dataset *ds = xor_data(4);
    lucid_ebm_params p;
    lucid_ebm_default_params(&p);
    p.learning_rate = 0.5;
    p.interactions = 1;
    p.outer_bags = 3;
    lucid_error err = {{0}};
    lucid_ebm *m = lucid_ebm_train(ds, &p, &err);
    assert_non_null(m);
    assert_int_equal(m->nterms, 4);
    assert_int_equal(m->terms[3].feat[0], 0);
    assert_int_equal(m->terms[3].feat[1], 1);
    double *pred = malloc(ds->nrows * sizeof *pred);
    assert_int_equal(lucid_ebm_predict(m, ds, pred, &err), 0);
    for (size_t i = 0; i < ds->nrows; i++)
        assert_true(fabs(pred[i] - ds->target[i]) < 0.05);
    free(pred);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

static lucid_dataset *mixed_data(void)
{
    lucid_error err = {{0}};
    enum { N = 300 };
    double x[N], z[N], amp[N], y[N];
    const char *user[N];
    static const char *const names[] = {"ann", "bo", "cy"};
    lucid_rng rng;
    lucid_rng_seed(&rng, 3);
    for (int i = 0; i < N; i++) {
        x[i] = lucid_rng_unit(&rng) * 10;
        z[i] = i % 7 == 0 ? NAN : lucid_rng_unit(&rng);
        amp[i] = i % 2;
        user[i] = names[i % 3];
        y[i] = sin(x[i]) + (i % 3) * 0.5 + amp[i] + 0.1 * lucid_rng_unit(&rng);
    }
    lucid_dataset *ds = lucid_dataset_new(N, &err);
    lucid_dataset_add_numeric(ds, "x", x, &err);
    lucid_dataset_add_numeric(ds, "z", z, &err);
    lucid_dataset_add_numeric(ds, "amp", amp, &err);
    lucid_dataset_add_strings(ds, "user", user, &err);
    lucid_dataset_set_target(ds, "y", y, &err);
    return ds;
}

/* An EBM trained with the defaults but these settings; must succeed. */
static lucid_ebm *train_ebm(const lucid_dataset *ds, double lr, int bags, int pairs, int threads,
                            uint64_t seed, int tables)
{
    lucid_ebm_params p;
    lucid_ebm_default_params(&p);
    p.learning_rate = lr;
    p.outer_bags = bags;
    p.interactions = pairs;
    p.threads = threads;
    p.seed = seed;
    p.main_tables = tables;
    lucid_error err = {{0}};
    lucid_ebm *m = lucid_ebm_train(ds, &p, &err);
    assert_non_null(m);
    return m;
}

static lucid_ebm *train_mixed(const lucid_dataset *ds, int threads, uint64_t seed)
{
    return train_ebm(ds, 0.1, 4, 2, threads, seed, LUCID_EBM_TABLES_AUTO);
}

static void same_seed_same_model_for_any_thread_count(void **state)
{
    (void)state;
    lucid_dataset *ds = mixed_data();
    lucid_error err = {{0}};
    lucid_ebm *one = train_mixed(ds, 1, 5), *two = train_mixed(ds, 2, 5),
              *other = train_mixed(ds, 2, 6);
    char *t1 = lucid_ebm_to_json(one, &err), *t2 = lucid_ebm_to_json(two, &err),
         *t3 = lucid_ebm_to_json(other, &err);
    assert_string_equal(t1, t2);
    assert_true(strcmp(t1, t3) != 0);
    /* The pair terms are real and the importances positive. */
    assert_int_equal(one->nterms, 6);
    for (int t = 0; t < 4; t++)
        assert_true(one->terms[t].importance > 0);
    free(t1);
    free(t2);
    free(t3);
    lucid_ebm_free(one);
    lucid_ebm_free(two);
    lucid_ebm_free(other);
    lucid_dataset_free(ds);
}

/* Main terms boosted in histogram space (cross tables of cell counts) and
 * by passes over the rows are the same algorithm with sums in another
 * order: every bag stops after the same rounds and the predictions agree
 * to rounding.  Each path also fits an additive target exactly. */
static lucid_ebm *train_tables(const lucid_dataset *ds, int tables, double lr, int pairs)
{
    return train_ebm(ds, lr, 3, pairs, 2, 42, tables);
}

enum { GRID = 400 };

/* u = i % 10, v = i / 10 % 10 over GRID rows (a full 10 x 10 grid, four
 * times, block i / 100), target f(u, v, i); y (GRID values) gets the
 * targets too. */
static lucid_dataset *grid_data(double (*f)(double u, double v, int i), double *y)
{
    double u[GRID], v[GRID];
    for (int i = 0; i < GRID; i++) {
        u[i] = i % 10;
        v[i] = i / 10 % 10;
        y[i] = f(u[i], v[i], i);
    }
    lucid_error err = {{0}};
    lucid_dataset *ds = lucid_dataset_new(GRID, &err);
    lucid_dataset_add_numeric(ds, "u", u, &err);
    lucid_dataset_add_numeric(ds, "v", v, &err);
    lucid_dataset_set_target(ds, "y", y, &err);
    return ds;
}

static double additive_steps(double u, double v, int i)
{
    (void)i;
    return (u < 3 ? 0 : u < 7 ? 5 : 12) + (v < 5 ? -2 : 3);
}

static double multiplicative_steps(double u, double v, int i)
{
    (void)i;
    return (u < 3 ? 1 : u < 7 ? 4 : 30) * (v < 5 ? 2 : 10) - 1;
}

static void histogram_space_boosting_matches_the_row_passes(void **state)
{
    (void)state;
    lucid_dataset *ds = mixed_data();
    lucid_ebm *rows = train_tables(ds, LUCID_EBM_TABLES_OFF, 0.1, 2),
              *tabs = train_tables(ds, LUCID_EBM_TABLES_ON, 0.1, 2);
    for (int b = 0; b < 2 * 3; b++)
        assert_int_equal(rows->bag_rounds[b], tabs->bag_rounds[b]);
    assert_true(rows->bag_rounds[0] > 10); /* real boosting, not one round */
    lucid_error err = {{0}};
    double *a = malloc(ds->nrows * sizeof *a), *b = malloc(ds->nrows * sizeof *b);
    assert_int_equal(lucid_ebm_predict(rows, ds, a, &err), 0);
    assert_int_equal(lucid_ebm_predict(tabs, ds, b, &err), 0);
    /* A near-tie between two cuts may fall the other way (here: one cell
     * of one bag, 2 of 300 rows off by 7e-4); the fit is the same. */
    size_t same = 0;
    double mse_a = 0, mse_b = 0;
    for (size_t i = 0; i < ds->nrows; i++) {
        same += fabs(a[i] - b[i]) < 1e-9;
        mse_a += (a[i] - ds->target[i]) * (a[i] - ds->target[i]);
        mse_b += (b[i] - ds->target[i]) * (b[i] - ds->target[i]);
    }
    assert_true(same >= ds->nrows * 99 / 100);
    assert_true(fabs(mse_a - mse_b) < 1e-3 * mse_a);
    free(a);
    free(b);
    lucid_ebm_free(rows);
    lucid_ebm_free(tabs);
    lucid_dataset_free(ds);

    /* y = f(u) + g(v) with f, g steps of at most three levels on a full
     * 10 x 10 grid: learning rate 1 and enough rounds fit it exactly. */
    enum { N = GRID };
    double y[N];
    lucid_dataset *add = grid_data(additive_steps, y);
    for (int mode = LUCID_EBM_TABLES_ON; mode <= LUCID_EBM_TABLES_OFF; mode++) {
        lucid_ebm *m = train_tables(add, mode, 1.0, 0);
        double pred[N];
        assert_int_equal(lucid_ebm_predict(m, add, pred, &err), 0);
        for (int i = 0; i < N; i++)
            assert_true(fabs(pred[i] - y[i]) < 1e-6);
        lucid_ebm_free(m);
    }
    lucid_dataset_free(add);
}

static void model_file_round_trips(void **state)
{
    (void)state;
    lucid_dataset *ds = mixed_data();
    lucid_error err = {{0}};
    lucid_ebm *m = train_mixed(ds, 2, 9);
    assert_int_equal(lucid_ebm_set_meta(m, "model", "test", &err), 0);
    char dir[4096], path[4200];
    test_tmpdir(dir, sizeof dir, "model_ebm_roundtrip");
    snprintf(path, sizeof path, "%s/m.json", dir);
    assert_int_equal(lucid_ebm_save(m, path, &err), 0);
    lucid_ebm *back = lucid_ebm_load(path, &err);
    assert_non_null(back);
    assert_string_equal(lucid_ebm_get_meta(back, "model"), "test");
    char *a = lucid_ebm_to_json(m, &err), *b = lucid_ebm_to_json(back, &err);
    assert_string_equal(a, b);
    double pa[300], pb[300];
    assert_int_equal(lucid_ebm_predict(m, ds, pa, &err), 0);
    assert_int_equal(lucid_ebm_predict(back, ds, pb, &err), 0);
    assert_memory_equal(pa, pb, sizeof pa);
    /* An unseen user contributes nothing: prediction = the rest of the terms. */
    double contrib[300 * 6];
    assert_int_equal(lucid_ebm_contributions(m, ds, contrib, &err), 0);
    double sum = m->intercept;
    for (int t = 0; t < m->nterms; t++)
        sum += contrib[t];
    assert_true(fabs(sum - pa[0]) < 1e-9);
    free(a);
    free(b);
    lucid_ebm_free(back);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

static void monotone_constraint_is_isotonic_and_centred(void **state)
{
    (void)state;
    lucid_dataset *ds = mixed_data();
    lucid_error err = {{0}};
    lucid_ebm *m = train_mixed(ds, 2, 4);
    double before = m->intercept;
    assert_int_equal(lucid_ebm_make_monotone(m, "x", 1, &err), 1);
    const lucid_ebm_term *t = &m->terms[0];
    double total = 0, prev = -INFINITY;
    for (int k = 1; k < t->ncells; k++) {
        total += t->counts[k] * t->scores[k];
        assert_true(t->scores[k] >= prev - 1e-12);
        prev = t->scores[k];
    }
    assert_true(fabs(total) < 1e-9 * (double)ds->nrows);
    assert_true(t->scores[0] == 0); /* x is never missing */
    /* PAV keeps the weighted mean, so the centred term stays centred. */
    assert_true(fabs(m->intercept - before) < 1e-9);
    assert_int_equal(lucid_ebm_make_monotone(m, "x", -1, &err), -1);
    assert_int_equal(lucid_ebm_make_monotone(m, "nope", 0, &err), -1);
    assert_string_equal(err.msg, "the model has no main term for 'nope'");
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

static void huge_categorical_pairs_are_not_candidates(void **state)
{
    (void)state;
    /* Two 1500-category features would make a 1501 x 1501 pair table
     * (over the 2^20-cell limit): only their pairs with x remain. */
    enum { N = 1500 };
    lucid_error err = {{0}};
    char (*names)[16] = malloc(N * sizeof *names);
    const char **a = malloc(N * sizeof *a), **b = malloc(N * sizeof *b);
    double x[N], y[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "c%04d", i);
        a[i] = names[i];
        b[i] = names[(i * 7) % N];
        x[i] = i % 10;
        y[i] = x[i] + (i % 3);
    }
    lucid_dataset *ds = lucid_dataset_new(N, &err);
    lucid_dataset_add_strings(ds, "a", a, &err);
    lucid_dataset_add_strings(ds, "b", b, &err);
    lucid_dataset_add_numeric(ds, "x", x, &err);
    lucid_dataset_set_target(ds, "y", y, &err);
    lucid_ebm_params p;
    lucid_ebm_default_params(&p);
    p.outer_bags = 2;
    p.learning_rate = 0.5;
    p.max_rounds = 20;
    p.interactions = 3;
    lucid_ebm *m = lucid_ebm_train(ds, &p, &err);
    assert_non_null(m);
    assert_int_equal(m->nterms, 3 + 2);
    for (int t = 3; t < m->nterms; t++)
        assert_int_equal(m->terms[t].feat[1], 2);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
    free(names);
    free(a);
    free(b);
}

static void expect_rejected(const char *text, const char *message)
{
    lucid_error err = {{0}};
    lucid_ebm *m = lucid_ebm_from_json(text, "bad.json", &err);
    assert_null(m);
    if (!strstr(err.msg, message))
        fail_msg("expected '%s' in '%s'", message, err.msg);
}

/* Replaces the first `from` in `text` by `to` (new string). */
static char *replace(const char *text, const char *from, const char *to)
{
    const char *at = strstr(text, from);
    assert_non_null(at);
    size_t n = strlen(text) - strlen(from) + strlen(to);
    char *out = malloc(n + 1);
    size_t head = (size_t)(at - text);
    memcpy(out, text, head);
    strcpy(out + head, to);
    strcat(out, at + strlen(from));
    return out;
}

static void corrupt_model_files_are_rejected(void **state)
{
    (void)state;
    lucid_dataset *ds = mixed_data();
    lucid_error err = {{0}};
    lucid_ebm *m = train_mixed(ds, 1, 1);
    char *text = lucid_ebm_to_json(m, &err);
    char *cut = strdup(text);
    cut[strlen(cut) / 2] = '\0';
    expect_rejected(cut, "bad.json:");
    expect_rejected(cut, "not a valid model file");
    expect_rejected("", "not a valid model file");
    expect_rejected("[1,2]", "bad.json: format: not a lucid model file");
    char *v2 = replace(text, "\"version\": 1", "\"version\": 3");
    expect_rejected(v2, "bad.json: version: version 3 is not supported (this build reads versions 1 to 2)");
    char *kind = replace(text, "\"kind\": \"ebm\"", "\"kind\": \"cart\"");
    expect_rejected(kind, "bad.json: kind: expected a model of kind \"ebm\"");
    char *scores = replace(text, "\"scores\": [\n", "\"scores\": [\n    0.5,\n");
    expect_rejected(scores, "bad.json: terms[0].scores:");
    char *bins = replace(text, "\"bins\": [\n", "\"bins\": [\n    7,\n");
    expect_rejected(bins, "bad.json: terms[0].bins:");
    char *feat = replace(text, "\"features\": [\n    \"x\"", "\"features\": [\n    \"nope\"");
    expect_rejected(feat, "bad.json: terms[0].features: names a feature the model does not have");
    char *type = replace(text, "\"continuous\"", "\"fuzzy\"");
    expect_rejected(type, "bad.json: features[0].type:");
    char *order = replace(text, "\"ann\"", "\"zed\"");
    expect_rejected(order, "bad.json: features[3].categories: categories must be sorted");
    /* Data without a feature the model needs. */
    lucid_dataset *less = lucid_dataset_new(1, &err);
    double one = 1;
    lucid_dataset_add_numeric(less, "x", &one, &err);
    double out;
    assert_int_equal(lucid_ebm_predict(m, less, &out, &err), -1);
    assert_string_equal(err.msg, "the data has no column 'z' that the model needs");
    /* A categorical feature where the model wants numbers. */
    lucid_dataset *typed = lucid_dataset_new(1, &err);
    const char *s = "a";
    lucid_dataset_add_strings(typed, "x", &s, &err);
    lucid_dataset_add_numeric(typed, "z", &one, &err);
    assert_int_equal(lucid_ebm_predict(m, typed, &out, &err), -1);
    assert_string_equal(err.msg, "x: the model expects numbers, the data has strings");
    lucid_dataset_free(less);
    lucid_dataset_free(typed);
    free(cut);
    free(v2);
    free(kind);
    free(scores);
    free(bins);
    free(feat);
    free(type);
    free(order);
    free(text);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

/* The duration model's settings (lr 0.01, log1p, warm 100 rounds at 0.05)
 * with 4 bags, 2 pairs, one thread. */
static void duration_like_params(lucid_ebm_params *p)
{
    lucid_duration_model_params(p);
    p->outer_bags = 4;
    p->interactions = 2;
    p->threads = 1;
}

/* A log1p model, learning rate 1, no pairs, one thread; *p gets its
 * parameters. */
static lucid_ebm *train_log(const lucid_dataset *ds, int bags, lucid_ebm_params *p)
{
    lucid_ebm_default_params(p);
    p->outer_bags = bags;
    p->learning_rate = 1.0;
    p->interactions = 0;
    p->threads = 1;
    p->target_transform = LUCID_TARGET_LOG1P;
    lucid_error err = {{0}};
    lucid_ebm *m = lucid_ebm_train(ds, p, &err);
    assert_non_null(m);
    return m;
}

/* 1 + y = F(u) x G(v) with F, G steps: additive in log(1 + y), so a
 * log1p model with learning rate 1 fits it exactly and its terms are the
 * log factors (independently: F(8) / F(5) = 30 / 4), where a model of y
 * itself cannot (y is not additive). */
static void log_target_recovers_a_multiplicative_target(void **state)
{
    (void)state;
    enum { N = GRID };
    double y[N];
    lucid_error err = {{0}};
    lucid_dataset *ds = grid_data(multiplicative_steps, y);
    lucid_ebm_params p;
    lucid_ebm *m = train_log(ds, 3, &p);
    double pred[N], score[N];
    assert_int_equal(lucid_ebm_predict(m, ds, pred, &err), 0);
    assert_int_equal(lucid_ebm_scores(m, ds, score, &err), 0);
    for (int i = 0; i < N; i++) {
        assert_true(fabs(pred[i] - y[i]) < 1e-6 * (1 + y[i]));
        assert_true(fabs(score[i] - log1p(y[i])) < 1e-9);
    }
    /* The u term's cells for u = 8 and u = 5 differ by log(30 / 4). */
    const lucid_ebm_term *tu = &m->terms[0];
    uint32_t b8, b5;
    lucid_column cu = {.values = (double[]){8, 5}};
    assert_int_equal(lucid_bins_apply(&m->main_bins[0], &cu, 1, &b8, &err), 0);
    cu.values = (double[]){5};
    assert_int_equal(lucid_bins_apply(&m->main_bins[0], &cu, 1, &b5, &err), 0);
    assert_true(fabs(tu->scores[b8] - tu->scores[b5] - log(30.0 / 4.0)) < 1e-9);
    /* An exact fit leaves no residual spread: P10 = P50 = P90 = y. */
    double q[N];
    for (int k = 0; k < 3; k++) {
        assert_true(fabs(m->residual_q[k]) < 1e-9);
        assert_int_equal(lucid_ebm_predict_quantile(m, ds, k, q, &err), 0);
        assert_true(fabs(q[7] - y[7]) < 1e-6 * (1 + y[7]));
    }
    /* A score beyond the training targets decodes to their range: y runs
     * from 1 x 2 - 1 = 1 to 30 x 10 - 1 = 299. */
    assert_true(fabs(lucid_ebm_decode(m, 100.0) - 299) < 1e-9);
    assert_true(fabs(lucid_ebm_decode(m, -100.0) - 1) < 1e-12);
    /* The same data on the original scale: no exact additive fit. */
    p.target_transform = LUCID_TARGET_IDENTITY;
    lucid_ebm *plain = lucid_ebm_train(ds, &p, &err);
    assert_non_null(plain);
    double other[N], worst = 0;
    assert_int_equal(lucid_ebm_predict(plain, ds, other, &err), 0);
    for (int i = 0; i < N; i++)
        worst = fmax(worst, fabs(other[i] - y[i]));
    assert_true(worst > 10);
    /* File: version 2 with the transform, byte-identical and predicting the
     * same after a reload; the untransformed model stays version 1. */
    char *text = lucid_ebm_to_json(m, &err), *plain_text = lucid_ebm_to_json(plain, &err);
    assert_non_null(strstr(text, "\"version\": 2"));
    assert_non_null(strstr(text, "\"target_transform\": \"log1p\""));
    assert_non_null(strstr(plain_text, "\"version\": 1"));
    assert_null(strstr(plain_text, "target_transform"));
    assert_null(strstr(plain_text, "decode_scale"));
    lucid_ebm *back = lucid_ebm_from_json(text, "log.json", &err);
    assert_non_null(back);
    char *again = lucid_ebm_to_json(back, &err);
    assert_string_equal(text, again);
    double pb[N];
    assert_int_equal(lucid_ebm_predict(back, ds, pb, &err), 0);
    assert_memory_equal(pred, pb, sizeof pb);
    /* A version-1 file cannot carry a transform (an older build would
     * predict on the log scale): refused with one line. */
    char *v1 = replace(text, "\"version\": 2", "\"version\": 1");
    expect_rejected(v1, "bad.json: version: target_transform and decode_scale need version 2");
    char *range = replace(text, "\"score_range\": [", "\"score_range\": [\n  9,");
    expect_rejected(range, "bad.json: score_range: expected [low, high]");
    free(range);
    char *rq = replace(text, "\"residual_quantiles\": [", "\"residual_quantiles\": [\n  9,");
    expect_rejected(rq, "bad.json: residual_quantiles: expected [p10, p50, p90]");
    free(rq);
    char *bad = replace(text, "\"log1p\"", "\"sqrt\"");
    expect_rejected(bad, "bad.json: params.target_transform: expected \"log1p\"");
    /* A target log1p cannot take. */
    y[7] = -1;
    lucid_dataset_set_target(ds, "y", y, &err);
    p.target_transform = LUCID_TARGET_LOG1P;
    assert_null(lucid_ebm_train(ds, &p, &err));
    assert_string_equal(err.msg, "row 8: a log1p target must be > -1 (found -1)");
    free(v1);
    free(bad);
    free(text);
    free(plain_text);
    free(again);
    lucid_ebm_free(back);
    lucid_ebm_free(plain);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

/* log(1 + y) = F(u) + e, e = -2, 0, 0, +2 for the four copies of the grid
 * (independent of u and v): the model fits F plus the small mean of e over
 * its random 85 % of training rows, the residuals are e minus that, so
 * their 10 / 50 / 90 % quantiles (numpy's interpolation: positions 39.9,
 * 199.5 and 359.1 of 400 sorted residuals) are -2, 0, +2 up to one shift,
 * and every row's P10 and P90 are e^4 apart on the 1 + y scale. */
static double noisy_steps(double u, double v, int i)
{
    (void)v;
    static const double e[4] = {-2, 0, 0, 2};
    return expm1((u < 5 ? 1.0 : 3.0) + e[i / 100]);
}

static void log_model_quantiles_follow_the_residuals(void **state)
{
    (void)state;
    double y[GRID], q[GRID];
    lucid_error err = {{0}};
    lucid_dataset *ds = grid_data(noisy_steps, y);
    lucid_ebm_params p;
    lucid_ebm *m = train_log(ds, 1, &p);
    double shift = m->residual_q[1];
    assert_true(fabs(shift) < 0.1);
    assert_true(fabs(m->residual_q[0] - shift + 2) < 1e-6 &&
                fabs(m->residual_q[2] - shift - 2) < 1e-6);
    double lo[GRID];
    assert_int_equal(lucid_ebm_predict_quantile(m, ds, 2, q, &err), 0);
    assert_int_equal(lucid_ebm_predict_quantile(m, ds, 0, lo, &err), 0);
    for (int i = 0; i < GRID; i++) {
        /* (1 + P90) / (1 + P10) = e^4, unless P90 meets the clamp at the
         * largest target, log1p = 5. */
        assert_true(log1p(q[i]) <= 5.0 + 1e-12);
        if (log1p(q[i]) < 5.0 - 1e-9)
            assert_true(fabs(log1p(q[i]) - log1p(lo[i]) - 4) < 1e-6);
    }
    assert_int_equal(lucid_ebm_predict_quantile(m, ds, 3, q, &err), -1);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

/* Thousands of seeded mutations of a valid file: each either loads into a
 * model that predicts, or is refused with a message; never a crash (run
 * under ASan in CI). */
static void mutated_model_files_never_crash(void **state)
{
    (void)state;
    lucid_dataset *ds = mixed_data();
    lucid_error err = {{0}};
    lucid_ebm_params p;
    lucid_ebm_default_params(&p);
    p.outer_bags = 1;
    p.max_bins = 8;
    p.max_interaction_bins = 4;
    p.interactions = 1;
    p.learning_rate = 0.2;
    lucid_ebm *m = lucid_ebm_train(ds, &p, &err);
    assert_non_null(m);
    char *text = lucid_ebm_to_json(m, &err);
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    double *pred = malloc(ds->nrows * sizeof *pred);
    lucid_rng rng;
    lucid_rng_seed(&rng, 2023);
    static const char junk[] = "0123456789-.e\"[]{},:x ";
    int loaded = 0, refused = 0;
    for (int i = 0; i < 3000; i++) {
        memcpy(buf, text, len + 1);
        size_t at = (size_t)lucid_rng_below(&rng, len);
        switch (lucid_rng_below(&rng, 3)) {
        case 0: /* overwrite a few bytes */
            for (int k = 0; k < 3 && at + (size_t)k < len; k++)
                buf[at + (size_t)k] = junk[lucid_rng_below(&rng, sizeof junk - 1)];
            break;
        case 1: /* cut out a span */
            memmove(buf + at, buf + at + (len - at) / 4 + 1, len - at - (len - at) / 4);
            break;
        default: /* truncate */
            buf[at] = '\0';
        }
        lucid_ebm *back = lucid_ebm_from_json(buf, "fuzz.json", &err);
        if (!back) {
            assert_true(strlen(err.msg) > 0);
            refused++;
            continue;
        }
        loaded++;
        lucid_ebm_predict(back, ds, pred, &err);
        char *again = lucid_ebm_to_json(back, &err);
        free(again);
        lucid_ebm_free(back);
    }
    assert_true(refused > 2500);
    assert_true(loaded > 0);
    free(pred);
    free(buf);
    free(text);
    lucid_ebm_free(m);
    lucid_dataset_free(ds);
}

static void classification_separates_classes(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    enum { N = 200 };
    double x[N], y[N];
    for (int i = 0; i < N; i++) {
        x[i] = i % 20;
        y[i] = x[i] >= 12;
    }
    lucid_dataset *ds = lucid_dataset_new(N, &err);
    lucid_dataset_add_numeric(ds, "x", x, &err);
    lucid_dataset_set_target(ds, "y", y, &err);
    lucid_ebm_params p;
    lucid_ebm_default_params(&p);
    p.task = LUCID_CLASSIFICATION;
    p.learning_rate = 0.5;
    p.outer_bags = 2;
    lucid_ebm *m = lucid_ebm_train(ds, &p, &err);
    assert_non_null(m);
    double pred[N];
    assert_int_equal(lucid_ebm_predict(m, ds, pred, &err), 0);
    for (int i = 0; i < N; i++)
        assert_true(y[i] > 0 ? pred[i] > 0.9 : pred[i] < 0.1);
    lucid_ebm_free(m);
    y[0] = 0.5;
    lucid_dataset_set_target(ds, "y", y, &err);
    assert_null(lucid_ebm_train(ds, &p, &err));
    assert_string_equal(err.msg, "row 1: a classification target must be 0 or 1");
    lucid_dataset_free(ds);
}


/* Warm start.  log(1 + y) = F(u) + G(v) + H(c) + noise, 2,000 older rows
 * (u < 8, categories a..f) and 2,000 newer ones (u up to 10, categories
 * a..h: new bins and new categories).  Three checks, each against an
 * independent answer:
 * - carried onto identical bins and barely boosted, a model reproduces
 *   itself (the projection is exact where the bins agree);
 * - warm-started from the model of the older rows and boosted on all rows,
 *   its predictions are within the documented tolerance of retraining
 *   from scratch on all rows (docs/models.md: median |difference| of the
 *   log estimates at most 0.05 here, every point within 0.25), on a grid
 *   that covers the new range and the new categories;
 * - the older model alone is not (it has never seen u >= 8 or g, h), so
 *   the check can fail. */
static double warm_truth(double u, double v, int c)
{
    return (u < 3 ? 0.5 : u < 8 ? 1.5 : 2.5) + 0.4 * v + 0.3 * (c % 4);
}

static lucid_dataset *warm_data(size_t n, const double *u, const double *v, const char *const *c,
                                const double *y)
{
    lucid_error err = {{0}};
    lucid_dataset *ds = lucid_dataset_new(n, &err);
    assert_non_null(ds);
    assert_int_equal(lucid_dataset_add_numeric(ds, "u", u, &err), 0);
    assert_int_equal(lucid_dataset_add_numeric(ds, "v", v, &err), 0);
    assert_int_equal(lucid_dataset_add_strings(ds, "c", c, &err), 0);
    if (y)
        assert_int_equal(lucid_dataset_set_target(ds, "y", y, &err), 0);
    return ds;
}

static void warm_start_stays_within_tolerance_of_full_retraining(void **state)
{
    (void)state;
    enum { N = 4000, OLD = 2000, G = 8 * 11 * 6 };
    static const char *const cats[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    static double u[N], v[N], y[N];
    static const char *c[N];
    lucid_rng rng;
    lucid_rng_seed(&rng, 7);
    for (size_t r = 0; r < N; r++) {
        int newer = r >= OLD;
        u[r] = lucid_rng_unit(&rng) * (newer ? 10 : 8);
        v[r] = lucid_rng_unit(&rng) * 5;
        int k = (int)lucid_rng_below(&rng, newer ? 8 : 6);
        c[r] = cats[k];
        double noise = 0.3 * (lucid_rng_unit(&rng) + lucid_rng_unit(&rng) - 1);
        y[r] = expm1(warm_truth(u[r], v[r], k) + noise);
    }
    lucid_error err = {{0}};
    lucid_dataset *all = warm_data(N, u, v, c, y);
    size_t rows[OLD];
    for (size_t r = 0; r < OLD; r++)
        rows[r] = r;
    lucid_dataset *old = lucid_dataset_subset(all, rows, OLD, &err);
    assert_non_null(old);
    lucid_ebm_params p;
    duration_like_params(&p);
    lucid_ebm *start = lucid_ebm_train(old, &p, &err);
    lucid_ebm *full = lucid_ebm_train(all, &p, &err);
    lucid_ebm *warm = lucid_ebm_train_warm(all, &p, start, OLD, &err);
    assert_non_null(start);
    assert_non_null(full);
    assert_non_null(warm);
    assert_true(warm->warm_rows == OLD && full->warm_rows == 0);
    for (int b = 0; b < p.outer_bags; b++)
        assert_true(warm->bag_rounds[2 * b] <= p.warm_rounds);
    /* The grid: u in 0.5 .. 9.5, v in 0 .. 5, every category. */
    static double gu[G], gv[G];
    static const char *gc[G];
    size_t g = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 11; j++)
            for (int k = 0; k < 6; k++, g++) {
                gu[g] = 0.5 + 1.2 * i;
                gv[g] = 0.5 * j;
                gc[g] = cats[k + 2];
            }
    lucid_dataset *grid = warm_data(G, gu, gv, gc, NULL);
    static double pf[G], pw[G], ps[G], d[G], ds_[G];
    assert_int_equal(lucid_ebm_predict(full, grid, pf, &err), 0);
    assert_int_equal(lucid_ebm_predict(warm, grid, pw, &err), 0);
    assert_int_equal(lucid_ebm_predict(start, grid, ps, &err), 0);
    double worst = 0;
    size_t fresh = 0; /* grid points the older rows never covered */
    for (size_t i = 0; i < G; i++) {
        d[i] = fabs(log1p(pw[i]) - log1p(pf[i]));
        worst = fmax(worst, d[i]);
        if (gu[i] >= 8 || gc[i][0] >= 'g')
            ds_[fresh++] = fabs(log1p(ps[i]) - log1p(pf[i]));
    }
    qsort(d, G, sizeof *d, lucid_cmp_double);
    qsort(ds_, fresh, sizeof *ds_, lucid_cmp_double);
    print_message("warm start vs full retraining: median %.4f worst %.4f; the older model "
                  "where it saw no rows: median %.4f\n",
                  d[G / 2], worst, ds_[fresh / 2]);
    assert_true(d[G / 2] <= 0.05);
    assert_true(worst <= 0.25);
    assert_true(ds_[fresh / 2] > 0.25);
    /* The same model on two threads (bags combined in bag order). */
    p.threads = 2;
    lucid_ebm *two = lucid_ebm_train_warm(all, &p, start, OLD, &err);
    assert_non_null(two);
    char *a = lucid_ebm_to_json(warm, &err), *b = lucid_ebm_to_json(two, &err);
    assert_string_equal(a, b);
    free(a);
    free(b);
    lucid_ebm_free(two);
    p.threads = 1;
    /* Carried onto its own bins and barely boosted, a model predicts as
     * before. */
    p.warm_rounds = 1;
    p.warm_learning_rate = 1e-12;
    lucid_ebm *self = lucid_ebm_train_warm(all, &p, full, N, &err);
    assert_non_null(self);
    assert_int_equal(lucid_ebm_predict(self, grid, pw, &err), 0);
    for (size_t i = 0; i < G; i++)
        assert_true(fabs(log1p(pw[i]) - log1p(pf[i])) < 1e-9);
    lucid_ebm_free(self);
    lucid_ebm_free(start);
    lucid_ebm_free(full);
    lucid_ebm_free(warm);
    lucid_dataset_free(grid);
    lucid_dataset_free(old);
    lucid_dataset_free(all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uniform_cuts_follow_the_formula),
        cmocka_unit_test(quantile_cuts_on_small_arrays),
        cmocka_unit_test(binning_is_lower_bound_inclusive_with_a_missing_bin),
        cmocka_unit_test(categories_are_sorted_strings_and_unseen_ones_flagged),
        cmocka_unit_test(split_is_seeded_and_sized_by_ceiling),
        cmocka_unit_test(one_feature_finds_the_optimal_three_leaf_tree),
        cmocka_unit_test(fast_scores_the_planted_pair),
        cmocka_unit_test(same_seed_same_model_for_any_thread_count),
        cmocka_unit_test(histogram_space_boosting_matches_the_row_passes),
        cmocka_unit_test(model_file_round_trips),
        cmocka_unit_test(log_target_recovers_a_multiplicative_target),
        cmocka_unit_test(log_model_quantiles_follow_the_residuals),
        cmocka_unit_test(monotone_constraint_is_isotonic_and_centred),
        cmocka_unit_test(huge_categorical_pairs_are_not_candidates),
        cmocka_unit_test(corrupt_model_files_are_rejected),
        cmocka_unit_test(mutated_model_files_never_crash),
        cmocka_unit_test(classification_separates_classes),
        cmocka_unit_test(warm_start_stays_within_tolerance_of_full_retraining),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
