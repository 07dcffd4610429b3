/* ebm_file.c — the EBM model file: JSON text, versioned, checked on load.
 *
 * Layout (version 1): format/kind/version, task, meta (strings), params,
 * training (rows, rounds and best metric per bag), features (name, type,
 * cuts and pair_cuts or categories), intercept, terms (features, bins,
 * importance, scores, spread).  Reals are written with 17 significant digits
 * so a loaded model predicts exactly what the saved one did, and keys keep
 * their order so equal models give byte-identical files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lucid/ebm.h"
#include "lucid/model_file.h"
#include "model_json.h"

static json_t *reals(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        json_array_append_new(a, isfinite(v[i]) ? json_real(v[i]) : json_null());
    return a;
}

static json_t *feature_json(const lucid_ebm *m, int f)
{
    const lucid_bins *mb = &m->main_bins[f], *pb = &m->pair_bins[f];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(m->names[f]));
    if (mb->type == LUCID_CONTINUOUS) {
        json_object_set_new(o, "type", json_string("continuous"));
        json_object_set_new(o, "cuts", reals(mb->cuts, (size_t)mb->ncuts));
        json_object_set_new(o, "pair_cuts", reals(pb->cuts, (size_t)pb->ncuts));
    } else {
        json_object_set_new(o, "type", json_string("categorical"));
        json_t *cats = json_array();
        for (int i = 0; i < mb->ncats; i++)
            json_array_append_new(cats, json_string(mb->cats[i]));
        json_object_set_new(o, "categories", cats);
    }
    return o;
}

static json_t *params_json(const lucid_ebm_params *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "max_bins", json_integer(p->max_bins));
    json_object_set_new(o, "max_interaction_bins", json_integer(p->max_interaction_bins));
    json_object_set_new(o, "outer_bags", json_integer(p->outer_bags));
    json_object_set_new(o, "learning_rate", json_real(p->learning_rate));
    json_object_set_new(o, "validation_size", json_real(p->validation_size));
    json_object_set_new(o, "early_stopping_rounds", json_integer(p->early_stopping_rounds));
    json_object_set_new(o, "early_stopping_tolerance", json_real(p->early_stopping_tolerance));
    json_object_set_new(o, "max_rounds", json_integer(p->max_rounds));
    json_object_set_new(o, "min_samples_leaf", json_integer(p->min_samples_leaf));
    json_object_set_new(o, "max_leaves", json_integer(p->max_leaves));
    json_object_set_new(o, "interactions", json_integer(p->interactions));
    json_object_set_new(o, "binning",
                        json_string(p->binning == LUCID_BIN_UNIFORM ? "uniform" : "quantile"));
    json_object_set_new(o, "seed", json_integer((json_int_t)p->seed));
    if (p->target_transform == LUCID_TARGET_LOG1P) /* version 2 only */
        json_object_set_new(o, "target_transform", json_string("log1p"));
    return o;
}

char *lucid_ebm_to_json(const lucid_ebm *m, lucid_error *err)
{
    json_t *root = lucid_model_file_header("ebm");
    json_object_set_new(root, "task", json_string(m->task == LUCID_CLASSIFICATION
                                                      ? "classification"
                                                      : "regression"));
    json_t *meta = json_object();
    for (int i = 0; i < m->nmeta; i++)
        json_object_set_new(meta, m->meta_key[i], json_string(m->meta_value[i]));
    json_object_set_new(root, "meta", meta);
    json_object_set_new(root, "params", params_json(&m->params));
    json_t *training = json_object();
    json_object_set_new(training, "rows", json_integer((json_int_t)m->train_rows));
    json_t *rounds = json_array(), *metric = json_array();
    for (int i = 0; m->bag_rounds && i < 2 * m->params.outer_bags; i++) {
        json_array_append_new(rounds, json_integer(m->bag_rounds[i]));
        json_array_append_new(metric, isfinite(m->bag_metric[i]) ? json_real(m->bag_metric[i])
                                                                 : json_null());
    }
    json_object_set_new(training, "bag_rounds", rounds);
    json_object_set_new(training, "bag_metric", metric);
    json_object_set_new(root, "training", training);
    json_t *features = json_array();
    for (int f = 0; f < m->nfeat; f++)
        json_array_append_new(features, feature_json(m, f));
    json_object_set_new(root, "features", features);
    json_object_set_new(root, "intercept", json_real(m->intercept));
    if (m->params.target_transform != LUCID_TARGET_IDENTITY) {
        json_object_set_new(root, "version", json_integer(2));
        json_object_set_new(root, "decode_scale", json_real(m->decode_scale));
        double range[2] = {m->score_min, m->score_max};
        json_object_set_new(root, "score_range", reals(range, 2));
        json_object_set_new(root, "residual_quantiles", reals(m->residual_q, 3));
    }
    json_t *terms = json_array();
    for (int t = 0; t < m->nterms; t++) {
        const lucid_ebm_term *term = &m->terms[t];
        json_t *o = json_object(), *feats = json_array(), *bins = json_array();
        for (int d = 0; d < term->nfeat; d++) {
            json_array_append_new(feats, json_string(m->names[term->feat[d]]));
            json_array_append_new(bins, json_integer(term->nbins[d]));
        }
        json_object_set_new(o, "features", feats);
        json_object_set_new(o, "bins", bins);
        json_object_set_new(o, "importance", json_real(term->importance));
        json_object_set_new(o, "scores", reals(term->scores, (size_t)term->ncells));
        json_object_set_new(o, "spread", reals(term->spread, (size_t)term->ncells));
        json_object_set_new(o, "counts", reals(term->counts, (size_t)term->ncells));
        json_array_append_new(terms, o);
    }
    json_object_set_new(root, "terms", terms);
    char *text = lucid_model_file_dump(root, err);
    json_decref(root);
    return text;
}

int lucid_ebm_save(const lucid_ebm *m, const char *path, lucid_error *err)
{
    char *text = lucid_ebm_to_json(m, err);
    if (!text)
        return -1;
    int rc = lucid_model_file_write(path, text, err);
    free(text);
    return rc;
}

/* ---- loading ---- */

typedef struct loader {
    const char *name;
    lucid_error *err;
} loader;

static int bad(const loader *ld, const char *field, const char *what)
{
    return lucid_error_at(ld->err, ld->name, 0, field, "%s", what);
}

static int read_cuts(const loader *ld, json_t *arr, const char *field, lucid_bins *b, int max)
{
    if (!json_is_array(arr))
        return bad(ld, field, "expected an array of numbers");
    size_t n = json_array_size(arr);
    if (n > (size_t)max)
        return bad(ld, field, "more cuts than the binning allows");
    b->type = LUCID_CONTINUOUS;
    b->cuts = malloc((n ? n : 1) * sizeof *b->cuts);
    if (!b->cuts)
        return bad(ld, field, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(arr, i);
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return bad(ld, field, "expected finite numbers");
        b->cuts[i] = json_number_value(v);
        if (i > 0 && !(b->cuts[i] > b->cuts[i - 1]))
            return bad(ld, field, "cuts must be strictly increasing");
        b->ncuts++;
    }
    return 0;
}

static int read_categories(const loader *ld, json_t *arr, const char *field, lucid_bins *b)
{
    if (!json_is_array(arr))
        return bad(ld, field, "expected an array of strings");
    size_t n = json_array_size(arr);
    if (n > 1000000)
        return bad(ld, field, "too many categories");
    b->type = LUCID_CATEGORICAL;
    b->cats = calloc(n ? n : 1, sizeof *b->cats);
    if (!b->cats)
        return bad(ld, field, "out of memory");
    for (size_t i = 0; i < n; i++) {
        const char *s = json_string_value(json_array_get(arr, i));
        if (!s || !s[0])
            return bad(ld, field, "expected non-empty strings");
        if (i > 0 && strcmp(b->cats[i - 1], s) >= 0)
            return bad(ld, field, "categories must be sorted and distinct");
        if (!(b->cats[i] = strdup(s)))
            return bad(ld, field, "out of memory");
        b->ncats++;
    }
    return 0;
}

static int copy_bins(lucid_bins *dst, const lucid_bins *src)
{
    memset(dst, 0, sizeof *dst);
    dst->type = src->type;
    dst->cats = calloc(src->ncats ? (size_t)src->ncats : 1, sizeof *dst->cats);
    if (!dst->cats)
        return -1;
    for (int i = 0; i < src->ncats; i++) {
        if (!(dst->cats[i] = strdup(src->cats[i])))
            return -1;
        dst->ncats++;
    }
    return 0;
}

static int read_features(const loader *ld, json_t *root, lucid_ebm *m)
{
    json_t *features = json_object_get(root, "features");
    if (!json_is_array(features) || json_array_size(features) == 0 ||
        json_array_size(features) > 100000)
        return bad(ld, "features", "expected a non-empty array");
    size_t n = json_array_size(features);
    m->names = calloc(n, sizeof *m->names);
    m->main_bins = calloc(n, sizeof *m->main_bins);
    m->pair_bins = calloc(n, sizeof *m->pair_bins);
    if (!m->names || !m->main_bins || !m->pair_bins)
        return bad(ld, "features", "out of memory");
    char field[96];
    for (size_t f = 0; f < n; f++) {
        json_t *o = json_array_get(features, f);
        m->nfeat++;
        snprintf(field, sizeof field, "features[%zu].name", f);
        const char *name = json_string_value(json_object_get(o, "name"));
        if (!name || !name[0])
            return bad(ld, field, "expected a non-empty string");
        for (size_t g = 0; g < f; g++)
            if (strcmp(m->names[g], name) == 0)
                return bad(ld, field, "duplicate feature name");
        if (!(m->names[f] = strdup(name)))
            return bad(ld, field, "out of memory");
        snprintf(field, sizeof field, "features[%zu].type", f);
        const char *type = json_string_value(json_object_get(o, "type"));
        if (type && strcmp(type, "continuous") == 0) {
            snprintf(field, sizeof field, "features[%zu].cuts", f);
            if (read_cuts(ld, json_object_get(o, "cuts"), field, &m->main_bins[f],
                          m->params.max_bins - 2) < 0)
                return -1;
            snprintf(field, sizeof field, "features[%zu].pair_cuts", f);
            if (read_cuts(ld, json_object_get(o, "pair_cuts"), field, &m->pair_bins[f],
                          m->params.max_interaction_bins - 2) < 0)
                return -1;
        } else if (type && strcmp(type, "categorical") == 0) {
            snprintf(field, sizeof field, "features[%zu].categories", f);
            if (read_categories(ld, json_object_get(o, "categories"), field,
                                &m->main_bins[f]) < 0)
                return -1;
            if (copy_bins(&m->pair_bins[f], &m->main_bins[f]) < 0)
                return bad(ld, field, "out of memory");
        } else {
            return bad(ld, field, "expected \"continuous\" or \"categorical\"");
        }
    }
    return 0;
}

static int read_real_array(const loader *ld, json_t *arr, const char *field, double *out,
                           size_t want)
{
    if (!json_is_array(arr))
        return bad(ld, field, "expected an array of numbers");
    if (json_array_size(arr) != want)
        return lucid_error_at(ld->err, ld->name, 0, field, "expected %zu numbers, found %zu",
                              want, json_array_size(arr));
    for (size_t i = 0; i < want; i++) {
        json_t *v = json_array_get(arr, i);
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return bad(ld, field, "expected finite numbers");
        out[i] = json_number_value(v);
    }
    return 0;
}

static int read_term(const loader *ld, json_t *o, size_t t, lucid_ebm *m)
{
    lucid_ebm_term *term = &m->terms[t];
    char field[96];
    snprintf(field, sizeof field, "terms[%zu].features", t);
    json_t *feats = json_object_get(o, "features"), *bins = json_object_get(o, "bins");
    size_t nf = json_array_size(feats);
    if (!json_is_array(feats) || nf < 1 || nf > 2)
        return bad(ld, field, "expected one or two feature names");
    term->nfeat = (int)nf;
    term->nbins[1] = 1;
    for (size_t d = 0; d < nf; d++) {
        const char *name = json_string_value(json_array_get(feats, d));
        int f = -1;
        for (int g = 0; name && g < m->nfeat; g++)
            if (strcmp(m->names[g], name) == 0)
                f = g;
        if (f < 0)
            return bad(ld, field, "names a feature the model does not have");
        term->feat[d] = f;
        const lucid_bins *b = nf == 1 ? &m->main_bins[f] : &m->pair_bins[f];
        term->nbins[d] = lucid_bins_count(b);
    }
    if (nf == 2 && term->feat[0] == term->feat[1])
        return bad(ld, field, "a pair needs two different features");
    snprintf(field, sizeof field, "terms[%zu].bins", t);
    if (!json_is_array(bins) || json_array_size(bins) != nf)
        return bad(ld, field, "expected one bin count per feature");
    for (size_t d = 0; d < nf; d++)
        if (json_integer_value(json_array_get(bins, d)) != term->nbins[d])
            return bad(ld, field, "does not match the feature's binning");
    term->ncells = term->nbins[0] * term->nbins[1];
    term->scores = malloc((size_t)term->ncells * sizeof *term->scores);
    term->spread = malloc((size_t)term->ncells * sizeof *term->spread);
    term->counts = malloc((size_t)term->ncells * sizeof *term->counts);
    if (!term->scores || !term->spread || !term->counts)
        return bad(ld, field, "out of memory");
    snprintf(field, sizeof field, "terms[%zu].scores", t);
    if (read_real_array(ld, json_object_get(o, "scores"), field, term->scores,
                        (size_t)term->ncells) < 0)
        return -1;
    snprintf(field, sizeof field, "terms[%zu].spread", t);
    if (read_real_array(ld, json_object_get(o, "spread"), field, term->spread,
                        (size_t)term->ncells) < 0)
        return -1;
    snprintf(field, sizeof field, "terms[%zu].counts", t);
    if (read_real_array(ld, json_object_get(o, "counts"), field, term->counts,
                        (size_t)term->ncells) < 0)
        return -1;
    snprintf(field, sizeof field, "terms[%zu].importance", t);
    json_t *imp = json_object_get(o, "importance");
    if (!json_is_number(imp) || !(json_number_value(imp) >= 0))
        return bad(ld, field, "expected a number >= 0");
    term->importance = json_number_value(imp);
    return 0;
}

static int read_int(const loader *ld, json_t *o, const char *key, int lo, int hi, int *out)
{
    json_t *v = json_object_get(o, key);
    char field[64];
    snprintf(field, sizeof field, "params.%s", key);
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return lucid_error_at(ld->err, ld->name, 0, field, "expected an integer in %d..%d", lo,
                              hi);
    *out = (int)json_integer_value(v);
    return 0;
}

static int read_params(const loader *ld, json_t *o, lucid_ebm_params *p)
{
    lucid_ebm_default_params(p);
    if (!json_is_object(o))
        return bad(ld, "params", "expected an object");
    if (read_int(ld, o, "max_bins", 3, 65536, &p->max_bins) < 0 ||
        read_int(ld, o, "max_interaction_bins", 3, 4096, &p->max_interaction_bins) < 0 ||
        read_int(ld, o, "outer_bags", 1, 1000, &p->outer_bags) < 0)
        return -1;
    /* The rest describe how the model was made. */
    if (read_int(ld, o, "early_stopping_rounds", 0, 1000000, &p->early_stopping_rounds) < 0 ||
        read_int(ld, o, "max_rounds", 1, 100000000, &p->max_rounds) < 0 ||
        read_int(ld, o, "min_samples_leaf", 1, 1000000000, &p->min_samples_leaf) < 0 ||
        read_int(ld, o, "max_leaves", 2, 64, &p->max_leaves) < 0 ||
        read_int(ld, o, "interactions", 0, 1000000, &p->interactions) < 0)
        return -1;
    static const char *const reals[3] = {"learning_rate", "validation_size",
                                         "early_stopping_tolerance"};
    double *dst[3] = {&p->learning_rate, &p->validation_size, &p->early_stopping_tolerance};
    for (int i = 0; i < 3; i++) {
        json_t *v = json_object_get(o, reals[i]);
        char field[64];
        snprintf(field, sizeof field, "params.%s", reals[i]);
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return bad(ld, field, "expected a number");
        *dst[i] = json_number_value(v);
    }
    json_t *seed = json_object_get(o, "seed");
    if (!json_is_integer(seed))
        return bad(ld, "params.seed", "expected an integer");
    p->seed = (uint64_t)json_integer_value(seed);
    const char *binning = json_string_value(json_object_get(o, "binning"));
    if (!binning || (strcmp(binning, "uniform") != 0 && strcmp(binning, "quantile") != 0))
        return bad(ld, "params.binning", "expected \"uniform\" or \"quantile\"");
    p->binning = strcmp(binning, "uniform") == 0 ? LUCID_BIN_UNIFORM : LUCID_BIN_QUANTILE;
    json_t *transform = json_object_get(o, "target_transform");
    if (transform) {
        const char *t = json_string_value(transform);
        if (!t || strcmp(t, "log1p") != 0)
            return bad(ld, "params.target_transform", "expected \"log1p\" (or no such key)");
        p->target_transform = LUCID_TARGET_LOG1P;
    }
    return 0;
}

/* Rounds and best metric of every bag (informational, but kept exactly). */
static int read_training(const loader *ld, json_t *training, lucid_ebm *m)
{
    json_t *rows = json_object_get(training, "rows");
    if (!json_is_integer(rows) || json_integer_value(rows) < 0)
        return bad(ld, "training.rows", "expected an integer >= 0");
    m->train_rows = (size_t)json_integer_value(rows);
    json_t *rounds = json_object_get(training, "bag_rounds");
    json_t *metric = json_object_get(training, "bag_metric");
    size_t n = 2 * (size_t)m->params.outer_bags;
    if (!json_is_array(rounds) || json_array_size(rounds) != n)
        return bad(ld, "training.bag_rounds", "expected two counts per bag");
    if (!json_is_array(metric) || json_array_size(metric) != n)
        return bad(ld, "training.bag_metric", "expected two values per bag");
    m->bag_rounds = calloc(n, sizeof *m->bag_rounds);
    m->bag_metric = calloc(n, sizeof *m->bag_metric);
    if (!m->bag_rounds || !m->bag_metric)
        return bad(ld, "training", "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *r = json_array_get(rounds, i), *v = json_array_get(metric, i);
        if (!json_is_integer(r) || json_integer_value(r) < 0 || json_integer_value(r) > INT32_MAX)
            return bad(ld, "training.bag_rounds", "expected counts >= 0");
        m->bag_rounds[i] = (int)json_integer_value(r);
        if (!json_is_number(v) && !json_is_null(v))
            return bad(ld, "training.bag_metric", "expected numbers");
        m->bag_metric[i] = json_is_null(v) ? INFINITY : json_number_value(v);
    }
    return 0;
}

static int read_model(const loader *ld, json_t *root, lucid_ebm *m)
{
    const char *task = json_string_value(json_object_get(root, "task"));
    if (!task || (strcmp(task, "regression") != 0 && strcmp(task, "classification") != 0))
        return bad(ld, "task", "expected \"regression\" or \"classification\"");
    m->task = strcmp(task, "classification") == 0 ? LUCID_CLASSIFICATION : LUCID_REGRESSION;
    if (read_params(ld, json_object_get(root, "params"), &m->params) < 0)
        return -1;
    m->params.task = m->task;
    json_t *meta = json_object_get(root, "meta");
    if (meta && !json_is_object(meta))
        return bad(ld, "meta", "expected an object of strings");
    const char *key;
    json_t *value;
    json_object_foreach(meta, key, value)
    {
        if (!json_is_string(value))
            return bad(ld, "meta", "expected an object of strings");
        if (lucid_ebm_set_meta(m, key, json_string_value(value), ld->err) < 0)
            return -1;
    }
    if (read_training(ld, json_object_get(root, "training"), m) < 0)
        return -1;
    if (read_features(ld, root, m) < 0)
        return -1;
    json_t *icp = json_object_get(root, "intercept");
    if (!json_is_number(icp) || !isfinite(json_number_value(icp)))
        return bad(ld, "intercept", "expected a finite number");
    m->intercept = json_number_value(icp);
    /* Version 2 names the target transform and its decoding; a version-1
     * file has neither (an untransformed target). */
    json_int_t version = json_integer_value(json_object_get(root, "version"));
    json_t *scale = json_object_get(root, "decode_scale");
    json_t *range = json_object_get(root, "score_range");
    m->decode_scale = 1.0;
    if (version < 2 && (scale || range || json_object_get(root, "residual_quantiles") ||
                        m->params.target_transform != LUCID_TARGET_IDENTITY))
        return bad(ld, "version", "target_transform and decode_scale need version 2");
    if (m->params.target_transform != LUCID_TARGET_IDENTITY) {
        if (!json_is_number(scale) || !(json_number_value(scale) > 0) ||
            !isfinite(json_number_value(scale)))
            return bad(ld, "decode_scale", "expected a finite number > 0");
        m->decode_scale = json_number_value(scale);
        json_t *lo = json_array_get(range, 0), *hi = json_array_get(range, 1);
        if (!json_is_array(range) || json_array_size(range) != 2 || !json_is_number(lo) ||
            !json_is_number(hi) || !isfinite(json_number_value(lo)) ||
            !isfinite(json_number_value(hi)) || json_number_value(lo) > json_number_value(hi))
            return bad(ld, "score_range", "expected [low, high], two finite numbers, low <= high");
        m->score_min = json_number_value(lo);
        m->score_max = json_number_value(hi);
        json_t *rq = json_object_get(root, "residual_quantiles");
        for (size_t k = 0; k < 3; k++) {
            json_t *v = json_array_get(rq, k);
            if (!json_is_array(rq) || json_array_size(rq) != 3 || !json_is_number(v) ||
                !isfinite(json_number_value(v)) ||
                (k > 0 && json_number_value(v) < m->residual_q[k - 1]))
                return bad(ld, "residual_quantiles",
                           "expected [p10, p50, p90], three finite ascending numbers");
            m->residual_q[k] = json_number_value(v);
        }
    } else if (scale || range || json_object_get(root, "residual_quantiles")) {
        return bad(ld, scale ? "decode_scale" : range ? "score_range" : "residual_quantiles",
                   "applies to a transformed target only");
    }
    json_t *terms = json_object_get(root, "terms");
    if (!json_is_array(terms) || json_array_size(terms) > 1000000)
        return bad(ld, "terms", "expected an array");
    m->nterms = (int)json_array_size(terms);
    m->terms = calloc(m->nterms ? (size_t)m->nterms : 1, sizeof *m->terms);
    if (!m->terms)
        return bad(ld, "terms", "out of memory");
    for (size_t t = 0; t < json_array_size(terms); t++)
        if (read_term(ld, json_array_get(terms, t), t, m) < 0)
            return -1;
    return 0;
}

lucid_ebm *lucid_ebm_from_json(const char *text, const char *name, lucid_error *err)
{
    json_t *root = lucid_model_file_parse(text, name, "ebm", err);
    if (!root)
        return NULL;
    lucid_ebm *m = calloc(1, sizeof *m);
    loader ld = {name, err};
    if (!m) {
        lucid_error_set(err, "out of memory");
    } else if (read_model(&ld, root, m) < 0) {
        lucid_ebm_free(m);
        m = NULL;
    }
    json_decref(root);
    return m;
}

lucid_ebm *lucid_ebm_load(const char *path, lucid_error *err)
{
    char *text = lucid_model_file_read(path, err);
    if (!text)
        return NULL;
    lucid_ebm *m = lucid_ebm_from_json(text, path, err);
    free(text);
    return m;
}
