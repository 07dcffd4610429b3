/* test_model_cart.c — isotonic regression, the CART tree and its pruning,
 * the sharing model on the reference split.  Expected values are worked
 * out by hand in the comments. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/cart.h"
#include "lucid/dataset.h"
#include "lucid/features.h"
#include "lucid/isotonic.h"
#include "lucid/util.h"

static void assert_close(const double *got, const double *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fabs(got[i] - want[i]) > 1e-12)
            fail_msg("[%zu]: got %.17g, want %.17g", i, got[i], want[i]);
}

static void pav_textbook_cases(void **state)
{
    (void)state;
    double out[8];
    double ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    /* 3,2 and 4,3 violate: each pair pools to its mean. */
    double a[] = {1, 3, 2, 4, 3, 5}, wa[] = {1, 2.5, 2.5, 3.5, 3.5, 5};
    assert_int_equal(lucid_iso_pav(a, ones, 6, 1, out), 0);
    assert_close(out, wa, 6);
    /* Weights: 3 (w 1) and 2 (w 3) pool to (3 + 6) / 4 = 2.25. */
    double b[] = {1, 3, 2}, wb[] = {1, 1, 3}, eb[] = {1, 2.25, 2.25};
    assert_int_equal(lucid_iso_pav(b, wb, 3, 1, out), 0);
    assert_close(out, eb, 3);
    /* A violation that cascades: 4,5 pooled to 4.5, then 1 pulls all three to 10/3. */
    double c[] = {4, 5, 1}, ec[] = {10.0 / 3, 10.0 / 3, 10.0 / 3};
    assert_int_equal(lucid_iso_pav(c, ones, 3, 1, out), 0);
    assert_close(out, ec, 3);
    /* Decreasing: 3,4 pool to 3.5. */
    double d[] = {5, 3, 4, 1}, ed[] = {5, 3.5, 3.5, 1};
    assert_int_equal(lucid_iso_pav(d, ones, 4, -1, out), 0);
    assert_close(out, ed, 4);
    /* Auto direction is the sign of Spearman's rho. */
    double up[] = {1, 0, 2, 3}, down[] = {3, 2, 2.5, 1};
    assert_int_equal(lucid_iso_auto_direction(up, ones, 4), 1);
    assert_int_equal(lucid_iso_auto_direction(down, ones, 4), -1);
    /* Shape smoothing: empty bins interpolated, ends held. */
    double s[] = {9, 1, 7, 3, 9}, ws[] = {0, 1, 0, 1, 0}, es[] = {1, 1, 2, 3, 3};
    assert_int_equal(lucid_iso_shape(s, ws, 5, 0, out), 1);
    assert_close(out, es, 5);
}

/* x = 1..8, y = 0 0 0 0 1 1 0 1.  Full tree (weighted Gini n_L g_L + n_R g_R):
 * root x <= 4.5 (1.5, the best of 2.4 / 1.5 / 2.93 / 3.67 / 2.86);
 * its right node {5..8} = 1 1 0 1 splits at 6.5 (score 1 vs 1.33, 1.33);
 * {7, 8} = 0 1 splits at 7.5.  Four leaves.
 * With R(t) = n_t / 8 x gini_t:
 *   {7,8}:  R = 2/8 x 0.5   = 0.125,   leaves 2, g = 0.125
 *   {5..8}: R = 4/8 x 0.375 = 0.1875,  leaves 3, g = 0.1875 / 2 = 0.09375
 *   root:   R = 0.46875,               leaves 4, g = 0.46875 / 3 = 0.15625
 * so {5..8} goes first (0.09375); then root g = (0.46875 - 0.1875) / 1 = 0.28125. */
static lucid_dataset *small_tree_data(void)
{
    lucid_error err = {{0}};
    double x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {0, 0, 0, 0, 1, 1, 0, 1};
    lucid_dataset *ds = lucid_dataset_new(8, &err);
    lucid_dataset_add_numeric(ds, "x", x, &err);
    lucid_dataset_set_target(ds, "label", y, &err);
    return ds;
}

static void pruning_path_matches_the_hand_computation(void **state)
{
    (void)state;
    lucid_dataset *ds = small_tree_data();
    lucid_error err = {{0}};
    lucid_cart *t = lucid_cart_train(ds, 0.0, 1, &err);
    assert_non_null(t);
    assert_int_equal(lucid_cart_leaves(t), 4);
    assert_int_equal(t->nodes[0].feature, 0);
    assert_true(t->nodes[0].threshold == 4.5);
    double path[8];
    lucid_cart *copy = lucid_cart_train(ds, 0.0, 1, &err);
    assert_int_equal(lucid_cart_prune(copy, 1.0, path, 8), 2);
    double want[] = {0.09375, 0.28125};
    assert_close(path, want, 2);
    assert_int_equal(lucid_cart_leaves(copy), 1);
    lucid_cart_free(copy);
    /* alpha 0.1 removes only the weakest link: root + two leaves. */
    assert_int_equal(lucid_cart_prune(t, 0.1, path, 8), 1);
    assert_int_equal(lucid_cart_leaves(t), 2);
    double pred[8], expect[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    assert_int_equal(lucid_cart_predict(t, ds, pred, &err), 0);
    assert_close(pred, expect, 8);
    lucid_cart_free(t);
    lucid_dataset_free(ds);
    /* Alpha 0.09 keeps the full tree, which fits every row. */
    ds = small_tree_data();
    t = lucid_cart_train(ds, 0.09, 1, &err);
    assert_int_equal(lucid_cart_leaves(t), 4);
    assert_int_equal(lucid_cart_predict(t, ds, pred, &err), 0);
    assert_close(pred, ds->target, 8);
    lucid_cart_free(t);
    lucid_dataset_free(ds);
}

static void unsplittable_tie_predicts_the_smaller_label(void **state)
{
    (void)state;
    lucid_error err = {{0}};
    double x[] = {1, 1}, y[] = {2, 1};
    lucid_dataset *ds = lucid_dataset_new(2, &err);
    lucid_dataset_add_numeric(ds, "x", x, &err);
    lucid_dataset_set_target(ds, "label", y, &err);
    lucid_cart *t = lucid_cart_train(ds, 0, 1, &err);
    assert_int_equal(t->nnodes, 1);
    double pred[2];
    lucid_cart_predict(t, ds, pred, &err);
    assert_true(pred[0] == 1 && pred[1] == 1);
    lucid_cart_free(t);
    lucid_dataset_free(ds);
}

static void sklearn_split_is_reproduced(void **state)
{
    (void)state;
    /* numpy.random.RandomState(42).permutation(66)[:20], printed by numpy. */
    size_t want[20] = {54, 62, 0, 45, 5, 63, 16, 12, 65, 30, 33, 9, 41, 13, 34, 25, 3, 17, 40, 8};
    size_t ntest;
    size_t *rows = lucid_split_rows_sklearn(66, 0.3, 42, &ntest);
    assert_int_equal(ntest, 20);
    assert_memory_equal(rows, want, sizeof want);
    free(rows);
}

static void sharing_model_on_the_reference_split(void **state)
{
    (void)state;
    char labels[4096], pairs[4096];
    lucid_error err = {{0}};
    lucid_dataset *ds = lucid_features_sharing(
        test_path(labels, sizeof labels, "data/venus-sept/sharing_labels.csv"),
        test_path(pairs, sizeof pairs, "data/venus-sept/colocation_pairs.csv"), &err);
    assert_non_null(ds);
    assert_int_equal(ds->nrows, 66);
    assert_int_equal(ds->ncols, 6);
    size_t ntest;
    size_t *rows = lucid_split_rows_sklearn(66, 0.3, 42, &ntest);
    lucid_dataset *train = lucid_dataset_subset(ds, rows + ntest, 66 - ntest, &err);
    lucid_dataset *test = lucid_dataset_subset(ds, rows, ntest, &err);
    lucid_cart *t = lucid_cart_train(train, 1e-4, 42, &err);
    assert_non_null(t);
    /* The reference: 8 leaves, root gmem_util <= 29.643, 0.85 test accuracy. */
    assert_int_equal(lucid_cart_leaves(t), 8);
    assert_string_equal(t->names[t->nodes[0].feature], "gmem_util");
    assert_true(fabs(t->nodes[0].threshold - 29.643) < 5e-4);
    double pred[20];
    assert_int_equal(lucid_cart_predict(t, test, pred, &err), 0);
    int right = 0;
    for (int i = 0; i < 20; i++)
        right += pred[i] == test->target[i];
    assert_true(right >= 17);
    /* Round trip through the file format, and corrupt files. */
    char *text = lucid_cart_to_json(t, &err);
    lucid_cart *back = lucid_cart_from_json(text, "tree.json", &err);
    assert_non_null(back);
    char *again = lucid_cart_to_json(back, &err);
    assert_string_equal(text, again);
    char *cut = strdup(text);
    cut[strlen(cut) - 40] = '\0';
    assert_null(lucid_cart_from_json(cut, "tree.json", &err));
    assert_non_null(strstr(err.msg, "tree.json:"));
    char *loop = strdup(text);
    char *left = strstr(loop, "\"left\": ");
    assert_non_null(left);
    left[8] = '0'; /* the root's left child becomes the root itself */
    left[9] = ',';
    assert_null(lucid_cart_from_json(loop, "tree.json", &err));
    assert_string_equal(err.msg, "tree.json: nodes[0].left: children must be later nodes of the tree");
    free(text);
    free(again);
    free(cut);
    free(loop);
    lucid_cart_free(back);
    lucid_cart_free(t);
    lucid_dataset_free(train);
    lucid_dataset_free(test);
    lucid_dataset_free(ds);
    free(rows);
}

/* Seeded mutations of a valid tree file: loaded and applied, or refused
 * with a message; never a crash. */
static void mutated_tree_files_never_crash(void **state)
{
    (void)state;
    lucid_dataset *ds = small_tree_data();
    lucid_error err = {{0}};
    lucid_cart *t = lucid_cart_train(ds, 0.0, 1, &err);
    char *text = lucid_cart_to_json(t, &err);
    size_t len = strlen(text);
    char *buf = malloc(len + 1);
    lucid_rng rng;
    lucid_rng_seed(&rng, 7);
    static const char junk[] = "0123456789-.\"[]{},:x ";
    double pred[8];
    int loaded = 0;
    for (int i = 0; i < 3000; i++) {
        memcpy(buf, text, len + 1);
        size_t at = (size_t)lucid_rng_below(&rng, len);
        if (lucid_rng_below(&rng, 2) == 0)
            for (int k = 0; k < 2 && at + (size_t)k < len; k++)
                buf[at + (size_t)k] = junk[lucid_rng_below(&rng, sizeof junk - 1)];
        else
            buf[at] = '\0';
        lucid_cart *back = lucid_cart_from_json(buf, "fuzz.json", &err);
        if (!back) {
            assert_true(strlen(err.msg) > 0);
            continue;
        }
        loaded++;
        lucid_cart_predict(back, ds, pred, &err);
        lucid_cart_free(back);
    }
    assert_true(loaded > 0);
    free(buf);
    free(text);
    lucid_cart_free(t);
    lucid_dataset_free(ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pav_textbook_cases),
        cmocka_unit_test(pruning_path_matches_the_hand_computation),
        cmocka_unit_test(unsplittable_tie_predicts_the_smaller_label),
        cmocka_unit_test(sklearn_split_is_reproduced),
        cmocka_unit_test(sharing_model_on_the_reference_split),
        cmocka_unit_test(mutated_tree_files_never_crash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
