/* dataset.h — tables of features for the models, and how features are binned.
 *
 * A dataset is a set of named columns over the same rows plus an optional
 * target.  A column holds numbers (NAN = missing) or strings ("" = missing).
 * Whether a feature is modelled as continuous or categorical is decided when
 * a model is trained (lucid_column_is_categorical): strings and numeric
 * columns holding only 0 and 1 are categorical.  The raw values are kept so a
 * model can apply its own typing to new data.
 *
 * Binning maps a value to a small integer: 0 is the missing bin; a
 * continuous value x gets 1 + #{cuts <= x}; a category gets 1 + its index
 * among the training categories sorted as strings, or LUCID_BIN_UNSEEN. */
#ifndef LUCID_DATASET_H
#define LUCID_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "lucid/error.h"
#include "lucid/util.h"

typedef enum lucid_feature_type {
    LUCID_CONTINUOUS = 0,
    LUCID_CATEGORICAL = 1,
} lucid_feature_type;

typedef enum lucid_binning {
    LUCID_BIN_QUANTILE = 0,
    LUCID_BIN_UNIFORM = 1,
} lucid_binning;

/* A category never seen in training: every term using it contributes 0. */
#define LUCID_BIN_UNSEEN UINT32_MAX

typedef struct lucid_column {
    char *name;
    double *values;        /* numeric column: one value per row, NAN = missing */
    int32_t *ids;          /* string column: id in `strings` per row, -1 = missing */
    lucid_strtab *strings; /* string column only */
} lucid_column;

typedef struct lucid_dataset {
    size_t nrows;
    size_t ncols;
    lucid_column *cols;
    double *target; /* NULL until set */
    char *target_name;
    char **row_keys; /* optional per-row label written by `predict` (time or job id) */
} lucid_dataset;

lucid_dataset *lucid_dataset_new(size_t nrows, lucid_error *err);
void lucid_dataset_free(lucid_dataset *ds);
/* Copies `values` (nrows of them).  0 or -1 (duplicate name, no memory). */
int lucid_dataset_add_numeric(lucid_dataset *ds, const char *name, const double *values,
                              lucid_error *err);
/* Copies the strings; NULL or "" is missing. */
int lucid_dataset_add_strings(lucid_dataset *ds, const char *name, const char *const *values,
                              lucid_error *err);
int lucid_dataset_set_target(lucid_dataset *ds, const char *name, const double *values,
                             lucid_error *err);
/* Sets the per-row key strings (copied). */
int lucid_dataset_set_keys(lucid_dataset *ds, const char *const *keys, lucid_error *err);
/* Column index by name, or -1. */
int lucid_dataset_find(const lucid_dataset *ds, const char *name);
/* The rows in `rows` (count n) as a new dataset (columns, target, keys). */
lucid_dataset *lucid_dataset_subset(const lucid_dataset *ds, const size_t *rows, size_t n,
                                    lucid_error *err);
/* String columns and numeric columns whose values are all 0/1 (ignoring
 * missing, at least one present) are categorical. */
lucid_feature_type lucid_column_type(const lucid_column *col, size_t nrows);
/* The category label of row `row`: the string, or the number written with
 * %.17g; NULL if missing.  `buf` (>= 32 bytes) holds numeric labels. */
const char *lucid_column_label(const lucid_column *col, size_t row, char *buf, size_t size);

/* qsort comparator for doubles (ascending; NANs are not expected). */
int lucid_cmp_double(const void *a, const void *b);

/* ---- cuts ---- */
/* Both write at most `max_cuts` ascending cuts into a new array *cuts (NULL
 * when none) and return their number, or -1 if out of memory.  NAN values
 * are ignored. */
int lucid_cuts_uniform(const double *x, size_t n, int max_cuts, double **cuts);
int lucid_cuts_quantile(const double *x, size_t n, int max_cuts, double **cuts);

/* ---- one feature's binning ---- */
typedef struct lucid_bins {
    lucid_feature_type type;
    int ncuts;
    double *cuts;
    int ncats;
    char **cats; /* sorted by strcmp */
} lucid_bins;

/* Fits a binning with at most `max_bins` bins (missing bin included) for a
 * feature of the given type. */
int lucid_bins_fit(lucid_bins *b, lucid_feature_type type, const lucid_column *col, size_t nrows,
                   int max_bins, lucid_binning method, lucid_error *err);
void lucid_bins_free(lucid_bins *b);
int lucid_bins_count(const lucid_bins *b);
uint32_t lucid_bin_value(const lucid_bins *b, double x);
uint32_t lucid_bin_category(const lucid_bins *b, const char *label);
/* Bins every row of `col` into out[nrows].  Fails with a message naming the
 * feature if a continuous feature is given a string column. */
int lucid_bins_apply(const lucid_bins *b, const lucid_column *col, size_t nrows, uint32_t *out,
                     lucid_error *err);

/* ---- seeded split ---- */
/* Shuffles 0..n-1 with `rng` and returns them: the first ceil(n * frac)
 * are validation rows (each part sorted ascending). */
size_t *lucid_split_rows(size_t n, double frac, lucid_rng *rng, size_t *nval);

/* scikit-learn's train_test_split(test_size=frac, random_state=seed) on n
 * rows, reproduced exactly (numpy's legacy MT19937 permutation): returns
 * the permutation; its first *ntest = ceil(n * frac) entries are the test
 * rows, the rest the training rows, in sklearn's order.  Used to compare
 * with results published from that split. */
size_t *lucid_split_rows_sklearn(size_t n, double frac, uint32_t seed, size_t *ntest);

#endif
