/* cart.h — CART classification tree with minimal cost-complexity pruning
 * (spec models.md §2): Lucid's Packing Analyze Model.
 *
 * Gini impurity; the tree is grown until leaves are pure (or hold one row),
 * trying features in a seeded random order at each node and every threshold
 * halfway between consecutive distinct float32 values; then the weakest
 * link is collapsed while its effective alpha is <= alpha.  Leaves predict
 * their majority class (ties: the smaller label). */
#ifndef LUCID_CART_H
#define LUCID_CART_H

#include <stdint.h>
#include <stdio.h>

#include "lucid/dataset.h"
#include "lucid/error.h"

typedef struct lucid_cart_node {
    int feature;      /* -1 for a leaf */
    double threshold; /* go left if value <= threshold */
    int left, right;  /* node indices */
    int rows;
    double gini;
    int prediction; /* class index */
} lucid_cart_node;

typedef struct lucid_cart {
    int nfeat;
    char **names;
    int nclasses;
    double *classes; /* sorted class labels */
    int nnodes;      /* node 0 is the root; preorder */
    lucid_cart_node *nodes;
    int *counts; /* nnodes x nclasses training rows per class */
    double alpha;
    uint64_t seed;
    size_t train_rows;
} lucid_cart;

/* Grows a full tree on every column of `ds` against ds->target (class
 * labels: any numbers) and prunes it with `alpha`. */
lucid_cart *lucid_cart_train(const lucid_dataset *ds, double alpha, uint64_t seed,
                             lucid_error *err);
void lucid_cart_free(lucid_cart *t);

/* Collapses weakest links while their effective alpha is <= alpha.  If
 * `path` is not NULL it receives the effective alphas collapsed, in order
 * (at most `max` of them); returns their number. */
int lucid_cart_prune(lucid_cart *t, double alpha, double *path, int max);
int lucid_cart_leaves(const lucid_cart *t);

/* Class label of every row (columns matched by name). */
int lucid_cart_predict(const lucid_cart *t, const lucid_dataset *ds, double *out,
                       lucid_error *err);
/* The tree as indented text: one line per node. */
int lucid_cart_print(const lucid_cart *t, FILE *out, lucid_error *err);

/* Model file: "kind": "cart", version 1. */
char *lucid_cart_to_json(const lucid_cart *t, lucid_error *err);
int lucid_cart_save(const lucid_cart *t, const char *path, lucid_error *err);
lucid_cart *lucid_cart_from_json(const char *text, const char *name, lucid_error *err);
lucid_cart *lucid_cart_load(const char *path, lucid_error *err);

#endif
