/* ebm.h — Explainable Boosting Machine (GA2M): training, prediction, files.
 *
 * A model predicts intercept + sum over terms of a table lookup, one table
 * per feature (main terms) and per selected feature pair (interaction
 * terms).  Training follows spec models.md §1: outer bags of cyclic
 * boosting with early stopping, FAST pair detection, pair boosting, bag
 * averaging, centring.  Bags run on up to `threads` threads; the result does
 * not depend on the thread count. */
#ifndef LUCID_EBM_H
#define LUCID_EBM_H

#include <stdint.h>

#include "lucid/dataset.h"
#include "lucid/error.h"

typedef enum lucid_task {
    LUCID_REGRESSION = 0,
    LUCID_CLASSIFICATION = 1, /* binary: targets 0/1, predictions are P(y = 1) */
} lucid_task;

/* Regression on a transformed target: the terms add up on the transformed
 * scale and predictions are decoded back.  LUCID_TARGET_LOG1P fits
 * log(1 + y) (y > -1; heavy-tailed positive targets such as durations,
 * where squared error on y is ruled by the few largest values): the terms
 * are then factors on 1 + y, and a prediction is
 * expm1(score) — the conditional median of y when the errors on the log
 * scale are symmetric — with the score clamped to the training targets'
 * range (lucid_ebm.score_min/max) and 1 + y scaled by decode_scale (1
 * unless set). */
typedef enum lucid_target_transform {
    LUCID_TARGET_IDENTITY = 0,
    LUCID_TARGET_LOG1P = 1,
} lucid_target_transform;

typedef struct lucid_ebm_params {
    lucid_task task;
    lucid_target_transform target_transform; /* identity; regression only */
    int max_bins;             /* main terms, missing bin included (256) */
    int max_interaction_bins; /* 32 */
    int outer_bags;           /* 8 */
    double learning_rate;     /* 0.01 */
    double validation_size;   /* 0.15 */
    int early_stopping_rounds;       /* 50 */
    double early_stopping_tolerance; /* 1e-4 */
    int max_rounds;                  /* 5000 */
    int min_samples_leaf;            /* 2 */
    int max_leaves;                  /* 3 */
    int interactions;                /* 10 */
    lucid_binning binning;           /* quantile */
    uint64_t seed;                   /* 42 */
    int threads;                     /* 2 */
    /* Regression, main terms: boost in histogram space (cross tables of the
     * terms' cell counts) when that is cheaper than passes over the rows.
     * Same algorithm, sums in another order.  LUCID_EBM_TABLES_AUTO (0)
     * decides by cost; _ON / _OFF force it (tests, benchmarks). */
    int main_tables;
    /* lucid_ebm_train_warm: each stage boosts at most warm_rounds rounds
     * (100), at warm_learning_rate (0: learning_rate). */
    int warm_rounds;
    double warm_learning_rate;
} lucid_ebm_params;

enum { LUCID_EBM_TABLES_AUTO = 0, LUCID_EBM_TABLES_ON = 1, LUCID_EBM_TABLES_OFF = 2 };

#define LUCID_EBM_MAX_META 16

typedef struct lucid_ebm_term {
    int nfeat;      /* 1 or 2 */
    int feat[2];    /* feature indices */
    int nbins[2];   /* main binning for 1 feature, pair binning for 2 */
    int ncells;     /* nbins[0] (* nbins[1]) */
    double *scores; /* row-major: cell = b0 * nbins[1] + b1 */
    double *spread; /* standard deviation over the bags, per cell */
    double *counts; /* training rows per cell */
    double importance;
} lucid_ebm_term;

typedef struct lucid_ebm {
    lucid_task task;
    int nfeat;
    char **names;
    lucid_bins *main_bins;
    lucid_bins *pair_bins;
    double intercept;
    int nterms;
    lucid_ebm_term *terms;
    lucid_ebm_params params;
    /* LUCID_TARGET_LOG1P: a prediction is (1 + y_hat) * decode_scale - 1,
     * y_hat = expm1(score); 1 keeps the median-oriented decoding. */
    double decode_scale;
    /* LUCID_TARGET_LOG1P: a score is clamped to the training targets'
     * range, [log1p(min y), log1p(max y)], before decoding: a sum of
     * several large terms would otherwise decode (exp) to estimates far
     * beyond any duration ever seen (measured: 4.9e6 s against a longest
     * job of 1.3e6 s). */
    double score_min, score_max;
    /* LUCID_TARGET_LOG1P: the 10 %, 50 % and 90 % quantiles of the training
     * rows' residuals log1p(y) - score (numpy's linear interpolation), so
     * that expm1(score + residual_q[k]) is an estimate of y's P10 / P50 /
     * P90 (lucid_ebm_predict_quantile): one spread for every job, measured
     * in-sample, hence optimistic (docs/models.md gives its coverage on
     * later jobs). */
    double residual_q[3];
    size_t train_rows;
    size_t warm_rows;     /* warm-started: the start model's training rows; 0 from scratch */
    int *bag_rounds;      /* per bag: main rounds, then pair rounds (2 x outer_bags) */
    double *bag_metric;   /* per bag: best validation metric after mains, after pairs */
    int nmeta;            /* free-form key/value pairs kept in the file */
    char *meta_key[LUCID_EBM_MAX_META];
    char *meta_value[LUCID_EBM_MAX_META];
} lucid_ebm;

void lucid_ebm_default_params(lucid_ebm_params *p);

/* Trains on every column of `ds` (all are features) against ds->target. */
lucid_ebm *lucid_ebm_train(const lucid_dataset *ds, const lucid_ebm_params *p, lucid_error *err);
void lucid_ebm_free(lucid_ebm *m);

/* Warm start, for retraining on a grown data set: trains on `ds` as
 * lucid_ebm_train does, but every bag starts from `start`'s main terms
 * carried onto this training's bins (a cell's start is the mean of start's
 * score over the training rows in it, else start's score at the cell's
 * middle value or category) and boosts at most params.warm_rounds rounds
 * from there; pairs are selected again (FAST) and a selected pair that
 * `start` has starts from its table.  A stage keeps its start when no
 * update improves its validation metric.  The first `seen` rows of `ds`
 * are the ones `start` was trained on: the bags' validation rows are drawn
 * from the others (0: from all rows).  With `start` NULL, or with other
 * features, task or target transform, it trains from scratch; a feature
 * typed otherwise than in `start` starts its terms at 0.  Not equal to a
 * training from scratch: docs/models.md gives the tolerance. */
lucid_ebm *lucid_ebm_train_warm(const lucid_dataset *ds, const lucid_ebm_params *p,
                                const lucid_ebm *start, size_t seen, lucid_error *err);

/* Predictions for every row of `ds` on the target's own scale (decoded
 * when the target is transformed); columns are matched by feature name
 * (extra columns are ignored).  lucid_ebm_scores gives the additive score
 * itself (intercept + terms; the logit for classification, log(1 + y) for
 * a LOG1P model). */
int lucid_ebm_predict(const lucid_ebm *m, const lucid_dataset *ds, double *out, lucid_error *err);
int lucid_ebm_scores(const lucid_ebm *m, const lucid_dataset *ds, double *out, lucid_error *err);
/* The prediction for an additive score. */
double lucid_ebm_decode(const lucid_ebm *m, double score);
/* LUCID_TARGET_LOG1P models: the estimated P10 (k = 0), P50 (1) or P90 (2)
 * of every row's target, expm1 of the score plus residual_q[k] (clamped as
 * lucid_ebm_decode).  -1 with an error for other models or k. */
int lucid_ebm_predict_quantile(const lucid_ebm *m, const lucid_dataset *ds, int k, double *out,
                               lucid_error *err);
/* Per-row term contributions: contrib[row * nterms + term]. */
int lucid_ebm_contributions(const lucid_ebm *m, const lucid_dataset *ds, double *contrib,
                            lucid_error *err);
/* "hour" or "hour x dayofweek" into buf. */
const char *lucid_ebm_term_name(const lucid_ebm *m, int term, char *buf, size_t size);

/* Constrains the main term of `feature` to its isotonic fit (weighted by
 * the training rows per bin; direction +1, -1 or 0 = the sign of the
 * Spearman correlation), re-centred on the training rows, its importance
 * recomputed.  Returns the direction used, or -1 with an error. */
int lucid_ebm_make_monotone(lucid_ebm *m, const char *feature, int direction, lucid_error *err);

int lucid_ebm_set_meta(lucid_ebm *m, const char *key, const char *value, lucid_error *err);
const char *lucid_ebm_get_meta(const lucid_ebm *m, const char *key);

/* Model file (JSON, "format": "lucid-model", "kind": "ebm"): version 1, or
 * version 2 when the target is transformed (params.target_transform,
 * decode_scale, score_range and residual_quantiles; a build that reads only version 1 refuses such a file
 * instead of predicting on the wrong scale).  The text is byte-identical
 * for identical models. */
char *lucid_ebm_to_json(const lucid_ebm *m, lucid_error *err);
int lucid_ebm_save(const lucid_ebm *m, const char *path, lucid_error *err);
lucid_ebm *lucid_ebm_from_json(const char *text, const char *name, lucid_error *err);
lucid_ebm *lucid_ebm_load(const char *path, lucid_error *err);

/* FAST pair scores on fixed residuals (exposed for tests): for every pair
 * (i < j) of `nfeat` binned features over `n` rows, the best 2x2 cut's
 * sum of G^2/H; scores[k] for the k-th pair in (0,1), (0,2), .. order. */
void lucid_ebm_fast_scores(uint32_t *const *bins, const int *nbins, int nfeat, size_t n,
                           const double *gradient, int min_samples_leaf, double *scores);

#endif
