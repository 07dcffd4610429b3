/* cart.c — CART classifier: growing, cost-complexity pruning, prediction,
 * printing and the model file (cart.h). */
#include "lucid/cart.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/model_file.h"
#include "lucid/util.h"
#include "model_json.h"

void lucid_cart_free(lucid_cart *t)
{
    if (!t)
        return;
    for (int f = 0; t->names && f < t->nfeat; f++)
        free(t->names[f]);
    free(t->names);
    free(t->classes);
    free(t->nodes);
    free(t->counts);
    free(t);
}

/* ---- growing ---- */

typedef struct grower {
    lucid_cart *t;
    size_t n;
    double **x; /* [feature][row], values rounded to float32 as the reference does */
    int *y;     /* class index per row */
    lucid_rng rng;
    int cap;
    size_t *sorted; /* scratch */
    struct keyed *keys;
    int *left_counts;
    int *order;
    int failed;
} grower;

static double gini_of(const int *counts, int k, int n)
{
    if (n == 0)
        return 0;
    double s = 0;
    for (int c = 0; c < k; c++) {
        double p = (double)counts[c] / n;
        s += p * p;
    }
    return 1 - s;
}

static int majority(const int *counts, int k)
{
    int best = 0;
    for (int c = 1; c < k; c++)
        if (counts[c] > counts[best])
            best = c;
    return best;
}

static int new_node(grower *g)
{
    lucid_cart *t = g->t;
    if (t->nnodes == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        lucid_cart_node *nodes = realloc(t->nodes, (size_t)cap * sizeof *nodes);
        if (nodes)
            t->nodes = nodes;
        int *counts = realloc(t->counts, (size_t)cap * (size_t)t->nclasses * sizeof *counts);
        if (counts)
            t->counts = counts;
        if (!nodes || !counts) {
            g->failed = 1;
            return -1;
        }
        g->cap = cap;
    }
    return t->nnodes++;
}

typedef struct keyed {
    double value;
    size_t row;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

typedef struct split {
    int feature;
    double threshold, score;
} split;

/* Best split of rows[0..n) on feature f; updates *best if strictly better. */
static void try_feature(grower *g, const size_t *rows, size_t n, int f, const int *counts,
                        split *best)
{
    int k = g->t->nclasses;
    const double *x = g->x[f];
    for (size_t i = 0; i < n; i++)
        g->keys[i] = (keyed){x[rows[i]], rows[i]};
    qsort(g->keys, n, sizeof *g->keys, cmp_keyed);
    memset(g->left_counts, 0, (size_t)k * sizeof *g->left_counts);
    int *right = g->left_counts + k;
    for (size_t i = 0; i + 1 < n; i++) {
        g->left_counts[g->y[g->keys[i].row]]++;
        double a = g->keys[i].value, b = g->keys[i + 1].value;
        if (!(a < b))
            continue;
        for (int c = 0; c < k; c++)
            right[c] = counts[c] - g->left_counts[c];
        int nl = (int)(i + 1), nr = (int)(n - i - 1);
        double score = nl * gini_of(g->left_counts, k, nl) + nr * gini_of(right, k, nr);
        if (best->feature < 0 || score < best->score) {
            double th = a / 2.0 + b / 2.0;
            if (th == b || isinf(th))
                th = a;
            *best = (split){f, th, score};
        }
    }
}

static int grow(grower *g, size_t *rows, size_t n)
{
    int id = new_node(g);
    if (id < 0)
        return -1;
    lucid_cart *t = g->t;
    int k = t->nclasses;
    int *counts = &t->counts[(size_t)id * (size_t)k];
    memset(counts, 0, (size_t)k * sizeof *counts);
    for (size_t i = 0; i < n; i++)
        counts[g->y[rows[i]]]++;
    lucid_cart_node node = {-1, 0, -1, -1, (int)n, gini_of(counts, k, (int)n), majority(counts, k)};
    t->nodes[id] = node;
    if (node.gini <= 0 || n < 2)
        return id;
    /* Features in a seeded random order; the first strictly best split wins. */
    for (int f = 0; f < t->nfeat; f++)
        g->order[f] = f;
    for (int f = t->nfeat; f > 1; f--) {
        int j = (int)lucid_rng_below(&g->rng, (uint64_t)f);
        int tmp = g->order[f - 1];
        g->order[f - 1] = g->order[j];
        g->order[j] = tmp;
    }
    split best = {-1, 0, 0};
    int *node_counts = malloc((size_t)k * sizeof *node_counts);
    if (!node_counts) {
        g->failed = 1;
        return -1;
    }
    memcpy(node_counts, counts, (size_t)k * sizeof *counts);
    for (int i = 0; i < t->nfeat; i++)
        try_feature(g, rows, n, g->order[i], node_counts, &best);
    free(node_counts);
    if (best.feature < 0)
        return id;
    /* Partition rows in place: left (<= threshold) first, order kept. */
    size_t nl = 0;
    for (size_t i = 0; i < n; i++)
        if (g->x[best.feature][rows[i]] <= best.threshold)
            g->sorted[nl++] = rows[i];
    size_t nr = nl;
    for (size_t i = 0; i < n; i++)
        if (!(g->x[best.feature][rows[i]] <= best.threshold))
            g->sorted[nr++] = rows[i];
    memcpy(rows, g->sorted, n * sizeof *rows);
    int left = grow(g, rows, nl);
    int right = left < 0 ? -1 : grow(g, rows + nl, n - nl);
    if (right < 0)
        return -1;
    t->nodes[id].feature = best.feature;
    t->nodes[id].threshold = best.threshold;
    t->nodes[id].left = left;
    t->nodes[id].right = right;
    return id;
}

static int setup_classes(lucid_cart *t, const lucid_dataset *ds, int *y, lucid_error *err)
{
    double *v = malloc(ds->nrows * sizeof *v);
    if (!v)
        return lucid_error_set(err, "out of memory");
    memcpy(v, ds->target, ds->nrows * sizeof *v);
    qsort(v, ds->nrows, sizeof *v, lucid_cmp_double);
    int k = 0;
    for (size_t i = 0; i < ds->nrows; i++)
        if (k == 0 || v[i] != v[k - 1])
            v[k++] = v[i];
    t->classes = v;
    t->nclasses = k;
    for (size_t r = 0; r < ds->nrows; r++) {
        double *hit = bsearch(&ds->target[r], v, (size_t)k, sizeof *v, lucid_cmp_double);
        y[r] = (int)(hit - v);
    }
    return 0;
}

lucid_cart *lucid_cart_train(const lucid_dataset *ds, double alpha, uint64_t seed,
                             lucid_error *err)
{
    if (!ds->target || ds->nrows == 0 || ds->ncols == 0) {
        lucid_error_set(err, "nothing to train on: the tree needs rows, features and a target");
        return NULL;
    }
    for (size_t r = 0; r < ds->nrows; r++)
        if (!isfinite(ds->target[r])) {
            lucid_error_set(err, "row %zu: the class label is missing", r + 1);
            return NULL;
        }
    lucid_cart *t = calloc(1, sizeof *t);
    grower g;
    memset(&g, 0, sizeof g);
    size_t n = ds->nrows;
    size_t *rows = malloc(n * sizeof *rows);
    g.x = calloc(ds->ncols, sizeof *g.x);
    g.y = malloc(n * sizeof *g.y);
    g.sorted = malloc(n * sizeof *g.sorted);
    g.keys = malloc(n * sizeof *g.keys);
    g.order = malloc(ds->ncols * sizeof *g.order);
    if (!t || !rows || !g.x || !g.y || !g.sorted || !g.keys || !g.order ||
        !(t->names = calloc(ds->ncols, sizeof *t->names))) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    t->alpha = alpha;
    t->seed = seed;
    t->train_rows = n;
    g.t = t;
    for (size_t f = 0; f < ds->ncols; f++) {
        const lucid_column *col = &ds->cols[f];
        t->nfeat++;
        if (!(t->names[f] = strdup(col->name)) || !(g.x[f] = malloc(n * sizeof **g.x))) {
            lucid_error_set(err, "out of memory");
            goto fail;
        }
        if (!col->values) {
            lucid_error_set(err, "%s: the tree needs numeric features", col->name);
            goto fail;
        }
        for (size_t r = 0; r < n; r++)
            g.x[f][r] = (double)(float)col->values[r];
    }
    if (setup_classes(t, ds, g.y, err) < 0)
        goto fail;
    if (!(g.left_counts = malloc(2 * (size_t)t->nclasses * sizeof *g.left_counts))) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    for (size_t r = 0; r < n; r++)
        rows[r] = r;
    lucid_rng_seed(&g.rng, seed);
    if (grow(&g, rows, n) < 0 || g.failed) {
        lucid_error_set(err, "out of memory");
        goto fail;
    }
    lucid_cart_prune(t, alpha, NULL, 0);
    goto done;
fail:
    lucid_cart_free(t);
    t = NULL;
done:
    for (size_t f = 0; g.x && f < ds->ncols; f++)
        free(g.x[f]);
    free(g.x);
    free(g.y);
    free(g.sorted);
    free(g.keys);
    free(g.order);
    free(g.left_counts);
    free(rows);
    return t;
}

/* ---- pruning ---- */

/* R(T_t) and leaf count of the subtree at `id`. */
static double subtree_risk(const lucid_cart *t, int id, int *leaves)
{
    const lucid_cart_node *nd = &t->nodes[id];
    if (nd->feature < 0) {
        *leaves = 1;
        return (double)nd->rows / t->nodes[0].rows * nd->gini;
    }
    int l, r;
    double risk = subtree_risk(t, nd->left, &l) + subtree_risk(t, nd->right, &r);
    *leaves = l + r;
    return risk;
}

/* Keeps the nodes reachable from the root, renumbered in preorder. */
static void compact(lucid_cart *t)
{
    int *map = malloc((size_t)t->nnodes * sizeof *map);
    int *stack = malloc((size_t)t->nnodes * sizeof *stack);
    lucid_cart_node *nodes = malloc((size_t)t->nnodes * sizeof *nodes);
    int *counts = malloc((size_t)t->nnodes * (size_t)t->nclasses * sizeof *counts);
    if (!map || !stack || !nodes || !counts) { /* keep the uncompacted tree: still valid */
        free(map);
        free(stack);
        free(nodes);
        free(counts);
        return;
    }
    int top = 0, n = 0;
    stack[top++] = 0;
    while (top > 0) {
        int id = stack[--top];
        map[id] = n;
        nodes[n] = t->nodes[id];
        memcpy(&counts[(size_t)n * (size_t)t->nclasses], &t->counts[(size_t)id * (size_t)t->nclasses],
               (size_t)t->nclasses * sizeof *counts);
        n++;
        if (t->nodes[id].feature >= 0) {
            stack[top++] = t->nodes[id].right;
            stack[top++] = t->nodes[id].left;
        }
    }
    for (int i = 0; i < n; i++)
        if (nodes[i].feature >= 0) {
            nodes[i].left = map[nodes[i].left];
            nodes[i].right = map[nodes[i].right];
        } else {
            nodes[i].left = nodes[i].right = -1;
        }
    free(t->nodes);
    free(t->counts);
    t->nodes = nodes;
    t->counts = counts;
    t->nnodes = n;
    free(map);
    free(stack);
}

int lucid_cart_prune(lucid_cart *t, double alpha, double *path, int max)
{
    int collapsed = 0;
    for (;;) {
        int weakest = -1;
        double weakest_g = 0;
        /* Preorder walk of the live tree; the first smallest wins ties. */
        for (int id = 0; id < t->nnodes; id++) {
            const lucid_cart_node *nd = &t->nodes[id];
            if (nd->feature < 0)
                continue;
            int leaves;
            double sub = subtree_risk(t, id, &leaves);
            double own = (double)nd->rows / t->nodes[0].rows * nd->gini;
            double g = (own - sub) / (leaves - 1);
            if (weakest < 0 || g < weakest_g) {
                weakest = id;
                weakest_g = g;
            }
        }
        if (weakest < 0 || weakest_g > alpha)
            break;
        t->nodes[weakest].feature = -1;
        if (path && collapsed < max)
            path[collapsed] = weakest_g;
        collapsed++;
        compact(t);
    }
    compact(t);
    return collapsed;
}

int lucid_cart_leaves(const lucid_cart *t)
{
    int n = 0;
    for (int i = 0; i < t->nnodes; i++)
        n += t->nodes[i].feature < 0;
    return n;
}

/* ---- prediction and printing ---- */

int lucid_cart_predict(const lucid_cart *t, const lucid_dataset *ds, double *out,
                       lucid_error *err)
{
    int *col = malloc((size_t)t->nfeat * sizeof *col);
    if (!col)
        return lucid_error_set(err, "out of memory");
    for (int f = 0; f < t->nfeat; f++) {
        col[f] = lucid_dataset_find(ds, t->names[f]);
        if (col[f] < 0 || !ds->cols[col[f]].values) {
            int missing = col[f] < 0;
            free(col);
            return missing ? lucid_error_set(err, "the data has no column '%s' that the model needs",
                                             t->names[f])
                           : lucid_error_set(err, "%s: the model expects numbers, the data has strings",
                                             t->names[f]);
        }
    }
    for (size_t r = 0; r < ds->nrows; r++) {
        int id = 0;
        while (t->nodes[id].feature >= 0) {
            const lucid_cart_node *nd = &t->nodes[id];
            double v = (double)(float)ds->cols[col[nd->feature]].values[r];
            id = v <= nd->threshold ? nd->left : nd->right;
        }
        out[r] = t->classes[t->nodes[id].prediction];
    }
    free(col);
    return 0;
}

static void print_node(const lucid_cart *t, int id, int depth, FILE *out)
{
    const lucid_cart_node *nd = &t->nodes[id];
    for (int d = 0; d < depth; d++)
        fputs("|   ", out);
    if (nd->feature < 0) {
        fprintf(out, "|--- class %g  (%d %s:", t->classes[nd->prediction], nd->rows,
                nd->rows == 1 ? "row" : "rows");
        for (int c = 0; c < t->nclasses; c++)
            fprintf(out, " %g=%d", t->classes[c], t->counts[(size_t)id * (size_t)t->nclasses + (size_t)c]);
        fputs(")\n", out);
        return;
    }
    fprintf(out, "|--- %s <= %.3f\n", t->names[nd->feature], nd->threshold);
    print_node(t, nd->left, depth + 1, out);
    for (int d = 0; d < depth; d++)
        fputs("|   ", out);
    fprintf(out, "|--- %s >  %.3f\n", t->names[nd->feature], nd->threshold);
    print_node(t, nd->right, depth + 1, out);
}

int lucid_cart_print(const lucid_cart *t, FILE *out, lucid_error *err)
{
    fprintf(out, "decision tree: %d leaves, %d nodes, alpha %g, trained on %zu rows\n",
            lucid_cart_leaves(t), t->nnodes, t->alpha, t->train_rows);
    print_node(t, 0, 0, out);
    if (ferror(out))
        return lucid_error_set(err, "write failed");
    return 0;
}

/* ---- model file ---- */

char *lucid_cart_to_json(const lucid_cart *t, lucid_error *err)
{
    json_t *root = lucid_model_file_header("cart");
    json_t *meta = json_object();
    json_object_set_new(meta, "model", json_string("sharing"));
    json_object_set_new(root, "meta", meta);
    json_object_set_new(root, "alpha", json_real(t->alpha));
    json_object_set_new(root, "seed", json_integer((json_int_t)t->seed));
    json_object_set_new(root, "train_rows", json_integer((json_int_t)t->train_rows));
    json_t *features = json_array(), *classes = json_array(), *nodes = json_array();
    for (int f = 0; f < t->nfeat; f++)
        json_array_append_new(features, json_string(t->names[f]));
    for (int c = 0; c < t->nclasses; c++)
        json_array_append_new(classes, json_real(t->classes[c]));
    for (int i = 0; i < t->nnodes; i++) {
        const lucid_cart_node *nd = &t->nodes[i];
        json_t *o = json_object(), *counts = json_array();
        if (nd->feature >= 0) {
            json_object_set_new(o, "feature", json_string(t->names[nd->feature]));
            json_object_set_new(o, "threshold", json_real(nd->threshold));
            json_object_set_new(o, "left", json_integer(nd->left));
            json_object_set_new(o, "right", json_integer(nd->right));
        }
        for (int c = 0; c < t->nclasses; c++)
            json_array_append_new(counts,
                                  json_integer(t->counts[(size_t)i * (size_t)t->nclasses + (size_t)c]));
        json_object_set_new(o, "counts", counts);
        json_array_append_new(nodes, o);
    }
    json_object_set_new(root, "features", features);
    json_object_set_new(root, "classes", classes);
    json_object_set_new(root, "nodes", nodes);
    char *text = lucid_model_file_dump(root, err);
    json_decref(root);
    return text;
}

int lucid_cart_save(const lucid_cart *t, const char *path, lucid_error *err)
{
    char *text = lucid_cart_to_json(t, err);
    if (!text)
        return -1;
    int rc = lucid_model_file_write(path, text, err);
    free(text);
    return rc;
}

static int node_from_json(lucid_cart *t, json_t *o, int i, const char *name, lucid_error *err)
{
    char field[64];
    lucid_cart_node *nd = &t->nodes[i];
    snprintf(field, sizeof field, "nodes[%d].counts", i);
    json_t *counts = json_object_get(o, "counts");
    if (!json_is_array(counts) || json_array_size(counts) != (size_t)t->nclasses)
        return lucid_error_at(err, name, 0, field, "expected one count per class");
    int rows = 0;
    for (int c = 0; c < t->nclasses; c++) {
        json_t *v = json_array_get(counts, (size_t)c);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > INT32_MAX)
            return lucid_error_at(err, name, 0, field, "expected counts >= 0");
        t->counts[(size_t)i * (size_t)t->nclasses + (size_t)c] = (int)json_integer_value(v);
        rows += (int)json_integer_value(v);
    }
    *nd = (lucid_cart_node){-1, 0, -1, -1, rows,
                            gini_of(&t->counts[(size_t)i * (size_t)t->nclasses], t->nclasses, rows),
                            majority(&t->counts[(size_t)i * (size_t)t->nclasses], t->nclasses)};
    json_t *feature = json_object_get(o, "feature");
    if (!feature)
        return 0;
    snprintf(field, sizeof field, "nodes[%d].feature", i);
    for (int f = 0; f < t->nfeat; f++)
        if (json_is_string(feature) && strcmp(json_string_value(feature), t->names[f]) == 0)
            nd->feature = f;
    if (nd->feature < 0)
        return lucid_error_at(err, name, 0, field, "names a feature the model does not have");
    snprintf(field, sizeof field, "nodes[%d].threshold", i);
    json_t *th = json_object_get(o, "threshold");
    if (!json_is_number(th) || !isfinite(json_number_value(th)))
        return lucid_error_at(err, name, 0, field, "expected a finite number");
    nd->threshold = json_number_value(th);
    json_t *l = json_object_get(o, "left"), *r = json_object_get(o, "right");
    snprintf(field, sizeof field, "nodes[%d].left", i);
    /* Preorder: children come after their parent, so no cycle is possible. */
    if (!json_is_integer(l) || !json_is_integer(r) || json_integer_value(l) <= i ||
        json_integer_value(r) <= i || json_integer_value(l) >= t->nnodes ||
        json_integer_value(r) >= t->nnodes || json_integer_value(l) == json_integer_value(r))
        return lucid_error_at(err, name, 0, field, "children must be later nodes of the tree");
    nd->left = (int)json_integer_value(l);
    nd->right = (int)json_integer_value(r);
    return 0;
}

static int cart_from_root(lucid_cart *t, json_t *root, const char *name, lucid_error *err)
{
    json_t *features = json_object_get(root, "features"), *classes = json_object_get(root, "classes"),
           *nodes = json_object_get(root, "nodes");
    if (!json_is_array(features) || json_array_size(features) == 0 || json_array_size(features) > 10000)
        return lucid_error_at(err, name, 0, "features", "expected an array of names");
    if (!json_is_array(classes) || json_array_size(classes) == 0 || json_array_size(classes) > 10000)
        return lucid_error_at(err, name, 0, "classes", "expected an array of labels");
    if (!json_is_array(nodes) || json_array_size(nodes) == 0 || json_array_size(nodes) > 10000000)
        return lucid_error_at(err, name, 0, "nodes", "expected a non-empty array");
    json_t *alpha = json_object_get(root, "alpha");
    t->alpha = json_is_number(alpha) ? json_number_value(alpha) : 0;
    json_t *seed = json_object_get(root, "seed");
    t->seed = json_is_integer(seed) ? (uint64_t)json_integer_value(seed) : 0;
    json_t *rows = json_object_get(root, "train_rows");
    t->train_rows = json_is_integer(rows) && json_integer_value(rows) > 0 ? (size_t)json_integer_value(rows) : 0;
    size_t nf = json_array_size(features), nc = json_array_size(classes), nn = json_array_size(nodes);
    t->names = calloc(nf, sizeof *t->names);
    t->classes = malloc(nc * sizeof *t->classes);
    t->nodes = malloc(nn * sizeof *t->nodes);
    t->counts = malloc(nn * nc * sizeof *t->counts);
    if (!t->names || !t->classes || !t->nodes || !t->counts)
        return lucid_error_set(err, "out of memory");
    for (size_t f = 0; f < nf; f++) {
        const char *s = json_string_value(json_array_get(features, f));
        t->nfeat++;
        if (!s || !s[0] || !(t->names[f] = strdup(s)))
            return lucid_error_at(err, name, 0, "features", "expected non-empty names");
    }
    for (size_t c = 0; c < nc; c++) {
        json_t *v = json_array_get(classes, c);
        if (!json_is_number(v) || (c > 0 && !(json_number_value(v) > t->classes[c - 1])))
            return lucid_error_at(err, name, 0, "classes", "expected increasing numbers");
        t->classes[c] = json_number_value(v);
    }
    t->nclasses = (int)nc;
    t->nnodes = (int)nn;
    for (size_t i = 0; i < nn; i++)
        if (node_from_json(t, json_array_get(nodes, i), (int)i, name, err) < 0)
            return -1;
    return 0;
}

lucid_cart *lucid_cart_from_json(const char *text, const char *name, lucid_error *err)
{
    json_t *root = lucid_model_file_parse(text, name, "cart", err);
    if (!root)
        return NULL;
    lucid_cart *t = calloc(1, sizeof *t);
    if (!t)
        lucid_error_set(err, "out of memory");
    if (t && cart_from_root(t, root, name, err) < 0) {
        lucid_cart_free(t);
        t = NULL;
    }
    json_decref(root);
    return t;
}

lucid_cart *lucid_cart_load(const char *path, lucid_error *err)
{
    char *text = lucid_model_file_read(path, err);
    if (!text)
        return NULL;
    lucid_cart *t = lucid_cart_from_json(text, path, err);
    free(text);
    return t;
}
