/* cmd_model.c — `lucid model train|predict|eval|explain`: Lucid's three
 * interpretable models (throughput and duration GA2Ms, the sharing tree)
 * trained, applied, evaluated and explained from the command line.
 *
 * A model file remembers which model it is (meta "model") and its target, so
 * predict/eval/explain rebuild the same features from a data file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "lucid/atomic.h"
#include "lucid/cart.h"
#include "lucid/csv.h"
#include "lucid/ebm.h"
#include "lucid/explain.h"
#include "lucid/features.h"
#include "lucid/model_file.h"
#include "lucid/util.h"

typedef struct model_opts {
    const char *kind, *data, *out, *model, *target, *until, *from, *pairs, *row, *binning, *compare,
        *compare_column, *monotone,
        *weekly_from, *transform, *warm;
    int64_t seed, bags, threads, interactions, max_rounds, test_percent, min_leaf;
    double learning_rate, alpha;
} model_opts;

static const char *default_pairs(const char *data)
{
    /* colocation_pairs.csv beside sharing_labels.csv */
    static char buf[4096];
    const char *slash = strrchr(data, '/');
    int dir = slash ? (int)(slash - data) + 1 : 0;
    snprintf(buf, sizeof buf, "%.*scolocation_pairs.csv", dir, data);
    return buf;
}

static int parse_opts(int argc, char **argv, model_opts *o)
{
    memset(o, 0, sizeof *o);
    o->seed = 42;
    o->bags = -1;
    o->threads = 2;
    o->interactions = -1;
    o->max_rounds = -1;
    o->min_leaf = -1;
    o->test_percent = 30;
    o->learning_rate = -1;
    o->alpha = 1e-4;
    struct {
        const char *name;
        const char **value;
    } strs[] = {{"--kind", &o->kind},   {"--data", &o->data},       {"--out", &o->out},
                {"--model", &o->model}, {"--target", &o->target},   {"--train-until", &o->until},
                {"--from", &o->from},   {"--pairs", &o->pairs},     {"--row", &o->row},
                {"--binning", &o->binning}, {"--compare", &o->compare},
                {"--compare-column", &o->compare_column}, {"--monotone", &o->monotone},
                {"--weekly-from", &o->weekly_from}, {"--target-transform", &o->transform},
                {"--warm-start", &o->warm}};
    struct {
        const char *name;
        int64_t *value;
    } ints[] = {{"--seed", &o->seed},
                {"--bags", &o->bags},
                {"--threads", &o->threads},
                {"--interactions", &o->interactions},
                {"--max-rounds", &o->max_rounds},
                {"--min-samples-leaf", &o->min_leaf},
                {"--test-percent", &o->test_percent}};
    for (int i = 2; i < argc; i++) {
        int hit = 0;
        for (size_t k = 0; !hit && k < sizeof strs / sizeof strs[0]; k++) {
            hit = cli_option(argc, argv, &i, strs[k].name, strs[k].value);
            if (hit < 0)
                return -1;
        }
        for (size_t k = 0; !hit && k < sizeof ints / sizeof ints[0]; k++) {
            const char *v;
            hit = cli_option(argc, argv, &i, ints[k].name, &v);
            if (hit < 0 || (hit > 0 && cli_int(ints[k].name, v, ints[k].value) < 0))
                return -1;
        }
        const char *v;
        if (!hit && (hit = cli_option(argc, argv, &i, "--learning-rate", &v)) != 0) {
            if (hit < 0 || !(o->learning_rate = strtod(v, NULL), o->learning_rate > 0)) {
                cli_fail("option --learning-rate: '%s' is not a positive number", hit < 0 ? "" : v);
                return -1;
            }
        }
        if (!hit && (hit = cli_option(argc, argv, &i, "--alpha", &v)) != 0) {
            char *end;
            if (hit < 0 || (o->alpha = strtod(v, &end), *end || !(o->alpha >= 0))) {
                cli_fail("option --alpha: '%s' is not a number >= 0", hit < 0 ? "" : v);
                return -1;
            }
        }
        if (!hit) {
            cli_fail("model %s: unknown argument '%s' (see `lucid model --help`)", argv[1],
                     argv[i]);
            return -1;
        }
    }
    if (o->threads < 1 || o->threads > 64 || o->bags == 0 || o->bags > 1000 ||
        o->test_percent < 1 || o->test_percent > 99) {
        cli_fail("--threads must be 1..64, --bags 1..1000, --test-percent 1..99");
        return -1;
    }
    return 0;
}

/* --out must not name a file the verb reads (--data, --model, --pairs). */
static int out_is_input(const model_opts *o)
{
    const char *inputs[] = {o->data, o->model, o->pairs};
    const char *what[] = {"--data", "--model", "--pairs"};
    lucid_error err = {{0}};
    if (o->out && lucid_check_not_input(o->out, inputs, 3, what, &err) < 0)
        return cli_fail("%s", err.msg);
    return 0;
}

static int need(const char *value, const char *option, const char *verb)
{
    if (value)
        return 0;
    cli_fail("model %s: %s is required", verb, option);
    return -1;
}

static int parse_time_opt(const char *option, const char *value, int64_t *out)
{
    if (lucid_time_parse(value, out) == 0)
        return 0;
    cli_fail("option %s: '%s' is not a 'YYYY-MM-DD HH:MM:SS' time", option, value);
    return -1;
}

/* ------------------------------------------------------------------ */
/* Loading data for a model                                            */

typedef struct loaded {
    lucid_dataset *ds;
    int64_t *times; /* NULL for the sharing model */
} loaded;

static void loaded_free(loaded *l)
{
    lucid_dataset_free(l->ds);
    free(l->times);
}

static int load_data(const char *model, const char *target, const char *data, const char *pairs,
                     loaded *out)
{
    lucid_error err = {{0}};
    memset(out, 0, sizeof *out);
    if (strcmp(model, "throughput") == 0)
        out->ds = lucid_features_throughput(data, target ? target : "submit_gpu_job",
                                            &out->times, &err);
    else if (strcmp(model, "duration") == 0)
        out->ds = lucid_features_duration(data, &out->times, &err);
    else if (strcmp(model, "sharing") == 0)
        out->ds = lucid_features_sharing(data, pairs ? pairs : default_pairs(data), &err);
    else
        return cli_fail("unknown model kind '%s' (throughput, duration or sharing)", model);
    return out->ds ? 0 : cli_fail("%s", err.msg);
}

/* ------------------------------------------------------------------ */
/* the sharing tree                                                    */

static int train_sharing(const model_opts *o)
{
    lucid_error err = {{0}};
    lucid_dataset *ds =
        lucid_features_sharing(o->data, o->pairs ? o->pairs : default_pairs(o->data), &err);
    if (!ds)
        return cli_fail("%s", err.msg);
    int rc = 0;
    lucid_cart *t = NULL;
    if (!ds->target)
        rc = cli_fail("%s: the data has no label column to train on", o->data);
    else if (!(t = lucid_cart_train(ds, o->alpha, (uint64_t)o->seed, &err)) ||
             lucid_cart_save(t, o->out, &err) < 0)
        rc = cli_fail("%s", err.msg);
    else
        printf("trained sharing tree on %zu workloads: %d leaves, alpha %g -> %s\n", ds->nrows,
               lucid_cart_leaves(t), o->alpha, o->out);
    lucid_cart_free(t);
    lucid_dataset_free(ds);
    return rc;
}

/* Accuracy of a tree trained on `train` rows, on `test` rows. */
static int holdout_accuracy(const lucid_dataset *ds, const size_t *train, size_t ntrain,
                            const size_t *test, size_t ntest, const model_opts *o, size_t *right,
                            int *leaves, lucid_error *err)
{
    lucid_dataset *a = lucid_dataset_subset(ds, train, ntrain, err);
    lucid_dataset *b = a ? lucid_dataset_subset(ds, test, ntest, err) : NULL;
    lucid_cart *t = b ? lucid_cart_train(a, o->alpha, (uint64_t)o->seed, err) : NULL;
    double *pred = malloc((ntest ? ntest : 1) * sizeof *pred);
    int rc = -1;
    if (t && pred && lucid_cart_predict(t, b, pred, err) == 0) {
        for (size_t i = 0; i < ntest; i++)
            *right += pred[i] == b->target[i];
        *leaves = lucid_cart_leaves(t);
        rc = 0;
    }
    free(pred);
    lucid_cart_free(t);
    lucid_dataset_free(a);
    lucid_dataset_free(b);
    return rc;
}

static int eval_sharing(const model_opts *o)
{
    lucid_error err = {{0}};
    lucid_dataset *ds =
        lucid_features_sharing(o->data, o->pairs ? o->pairs : default_pairs(o->data), &err);
    if (!ds)
        return cli_fail("%s", err.msg);
    if (!ds->target || ds->nrows < 3) {
        lucid_dataset_free(ds);
        return cli_fail("%s: need at least 3 labelled workloads", o->data);
    }
    size_t n = ds->nrows, ntest, right = 0;
    int leaves = 0, rc = 0;
    /* The reference split: scikit-learn's train_test_split with this
     * test size and random_state = seed, reproduced exactly. */
    size_t *rows = lucid_split_rows_sklearn(n, (double)o->test_percent / 100.0,
                                            (uint32_t)o->seed, &ntest);
    size_t *others = malloc(n * sizeof *others);
    if (!rows || !others) {
        rc = cli_fail("out of memory");
    } else if (holdout_accuracy(ds, rows + ntest, n - ntest, rows, ntest, o, &right, &leaves,
                                &err) < 0) {
        rc = cli_fail("%s", err.msg);
    } else {
        printf("split %zu train / %zu test (train_test_split random_state %lld): accuracy %.4f (%zu/%zu), tree of %d leaves\n",
               n - ntest, ntest, (long long)o->seed, (double)right / (double)ntest, right, ntest,
               leaves);
        size_t loo = 0;
        for (size_t k = 0; k < n && rc == 0; k++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (i != k)
                    others[m++] = i;
            if (holdout_accuracy(ds, others, n - 1, &k, 1, o, &loo, &leaves, &err) < 0)
                rc = cli_fail("%s", err.msg);
        }
        if (rc == 0)
            printf("leave-one-out accuracy %.4f (%zu/%zu)\n", (double)loo / (double)n, loo, n);
    }
    free(rows);
    free(others);
    lucid_dataset_free(ds);
    return rc;
}

/* ------------------------------------------------------------------ */
/* train                                                               */

/* --monotone "hour,day:-1": constrain those main terms to isotonic fits. */
static int apply_monotone(lucid_ebm *m, const char *spec)
{
    char buf[1024];
    lucid_error err = {{0}};
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(item, ':');
        int direction = 0;
        if (colon) {
            *colon = '\0';
            if (strcmp(colon + 1, "+1") == 0 || strcmp(colon + 1, "1") == 0)
                direction = 1;
            else if (strcmp(colon + 1, "-1") == 0)
                direction = -1;
            else
                return cli_fail("option --monotone: '%s' is not +1 or -1", colon + 1);
        }
        if (lucid_ebm_make_monotone(m, item, direction, &err) < 0)
            return cli_fail("option --monotone: %s", err.msg);
    }
    return lucid_ebm_set_meta(m, "monotone", spec, &err) < 0 ? cli_fail("%s", err.msg) : 0;
}

/* Lucid's settings for its two GA2Ms, then the command line's overrides:
 * throughput lr 0.1, 10 pairs, quantile bins; duration as
 * lucid_duration_model_params (lr 0.01, 20 pairs, uniform bins, log1p
 * target). */
static int ebm_params(const model_opts *o, lucid_ebm_params *p)
{
    int throughput = strcmp(o->kind, "throughput") == 0;
    if (throughput) {
        lucid_ebm_default_params(p);
        p->learning_rate = 0.1;
        p->interactions = 10;
        p->binning = LUCID_BIN_QUANTILE;
    } else {
        lucid_duration_model_params(p);
    }
    p->seed = (uint64_t)o->seed;
    p->threads = (int)o->threads;
    if (o->bags > 0)
        p->outer_bags = (int)o->bags;
    if (o->interactions >= 0)
        p->interactions = (int)o->interactions;
    if (o->max_rounds > 0)
        p->max_rounds = (int)o->max_rounds;
    if (o->min_leaf > 0)
        p->min_samples_leaf = (int)o->min_leaf;
    if (o->learning_rate > 0)
        p->learning_rate = o->learning_rate;
    if (o->transform) {
        if (strcmp(o->transform, "none") != 0 && strcmp(o->transform, "log1p") != 0)
            return cli_fail("option --target-transform: expected none or log1p");
        p->target_transform =
            strcmp(o->transform, "log1p") == 0 ? LUCID_TARGET_LOG1P : LUCID_TARGET_IDENTITY;
    }
    if (o->binning) {
        if (strcmp(o->binning, "uniform") != 0 && strcmp(o->binning, "quantile") != 0)
            return cli_fail("option --binning: expected uniform or quantile");
        p->binning = strcmp(o->binning, "uniform") == 0 ? LUCID_BIN_UNIFORM : LUCID_BIN_QUANTILE;
    }
    return 0;
}

static int train_ebm(const model_opts *o, const lucid_dataset *ds)
{
    lucid_ebm_params p;
    if (ebm_params(o, &p) != 0)
        return 1;
    lucid_error err = {{0}};
    lucid_ebm *start = NULL;
    if (o->warm && !(start = lucid_ebm_load(o->warm, &err)))
        return cli_fail("%s", err.msg);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lucid_ebm *m = lucid_ebm_train_warm(ds, &p, start, start ? start->train_rows : 0, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    lucid_ebm_free(start);
    if (!m)
        return cli_fail("%s", err.msg);
    int rc = o->monotone ? apply_monotone(m, o->monotone) : 0;
    if (rc != 0) {
    } else if (lucid_ebm_set_meta(m, "model", o->kind, &err) < 0 ||
        lucid_ebm_set_meta(m, "target", ds->target_name, &err) < 0 ||
        (o->until && lucid_ebm_set_meta(m, "train_until", o->until, &err) < 0) ||
        lucid_ebm_save(m, o->out, &err) < 0)
        rc = cli_fail("%s", err.msg);
    if (rc == 0) {
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        long rounds = 0;
        for (int b = 0; b < p.outer_bags; b++)
            rounds += m->bag_rounds[2 * b];
        printf("trained %s model on %zu rows, %d features, %d pairs, %d bags "
               "(mean %.0f main rounds per bag) in %.2f s -> %s\n",
               o->kind, ds->nrows, m->nfeat, m->nterms - m->nfeat, p.outer_bags,
               (double)rounds / p.outer_bags, secs, o->out);
    }
    lucid_ebm_free(m);
    return rc;
}

static int cmd_train(const model_opts *o)
{
    if (need(o->kind, "--kind", "train") < 0 || need(o->data, "--data", "train") < 0 ||
        need(o->out, "--out", "train") < 0)
        return 2;
    if (out_is_input(o) != 0)
        return 1;
    if (strcmp(o->kind, "sharing") == 0)
        return train_sharing(o);
    if (o->target && strcmp(o->kind, "throughput") != 0)
        return cli_fail("--target applies to the throughput model only");
    loaded l;
    if (load_data(o->kind, o->target, o->data, o->pairs, &l) != 0)
        return 1;
    int rc;
    if (!l.ds->target) {
        rc = cli_fail("%s: the data has no target column to train on", o->data);
    } else if (o->until) {
        int64_t until;
        lucid_dataset *train = NULL, *test = NULL;
        lucid_error err = {{0}};
        if (parse_time_opt("--train-until", o->until, &until) < 0)
            rc = 1;
        else if (lucid_split_by_time(l.ds, l.times, until, &train, &test, &err) < 0)
            rc = cli_fail("%s", err.msg);
        else
            rc = train_ebm(o, train);
        lucid_dataset_free(train);
        lucid_dataset_free(test);
    } else {
        rc = train_ebm(o, l.ds);
    }
    loaded_free(&l);
    return rc;
}

/* ------------------------------------------------------------------ */
/* predict and eval                                                    */

typedef struct any_model {
    lucid_ebm *ebm;
    lucid_cart *cart;
    const char *model, *target;
} any_model;

static int load_model(const char *path, any_model *am)
{
    lucid_error err = {{0}};
    char kind[32];
    memset(am, 0, sizeof *am);
    if (lucid_model_file_kind(path, kind, sizeof kind, &err) < 0)
        return cli_fail("%s", err.msg);
    if (strcmp(kind, "ebm") == 0) {
        if (!(am->ebm = lucid_ebm_load(path, &err)))
            return cli_fail("%s", err.msg);
        am->model = lucid_ebm_get_meta(am->ebm, "model");
        am->target = lucid_ebm_get_meta(am->ebm, "target");
    } else if (strcmp(kind, "cart") == 0) {
        if (!(am->cart = lucid_cart_load(path, &err)))
            return cli_fail("%s", err.msg);
        am->model = "sharing";
    } else {
        return cli_fail("%s: kind: unknown model kind '%s'", path, kind);
    }
    if (!am->model) {
        lucid_ebm_free(am->ebm);
        return cli_fail("%s: meta.model: missing (which of Lucid's models is this?)", path);
    }
    return 0;
}

static void free_model(any_model *am)
{
    lucid_ebm_free(am->ebm);
    lucid_cart_free(am->cart);
}

static int predict_rows(const any_model *am, const lucid_dataset *ds, double *out)
{
    lucid_error err = {{0}};
    int rc = am->ebm ? lucid_ebm_predict(am->ebm, ds, out, &err)
                     : lucid_cart_predict(am->cart, ds, out, &err);
    return rc < 0 ? cli_fail("%s", err.msg) : 0;
}

static int cmd_predict(const model_opts *o)
{
    if (need(o->model, "--model", "predict") < 0 || need(o->data, "--data", "predict") < 0 ||
        need(o->out, "--out", "predict") < 0)
        return 2;
    if (out_is_input(o) != 0)
        return 1;
    any_model am;
    if (load_model(o->model, &am) != 0)
        return 1;
    loaded l;
    int rc = load_data(am.model, am.target, o->data, o->pairs, &l);
    double *pred = NULL;
    if (rc == 0 && !(pred = malloc((l.ds->nrows ? l.ds->nrows : 1) * sizeof *pred)))
        rc = cli_fail("out of memory");
    if (rc == 0)
        rc = predict_rows(&am, l.ds, pred);
    FILE *f = NULL;
    lucid_outfile file = {0};
    lucid_error err = {{0}};
    if (rc == 0 && !(f = lucid_outfile_open(&file, o->out, &err)))
        rc = cli_fail("%s", err.msg);
    if (rc == 0) {
        fprintf(f, "%s,prediction\n", l.times && strcmp(am.model, "duration") == 0 ? "job_id"
                                      : l.times                              ? "time"
                                                                             : "workload");
        for (size_t r = 0; r < l.ds->nrows; r++)
            fprintf(f, "%s,%.17g\n", l.ds->row_keys[r], pred[r]);
        if (lucid_outfile_commit(&file, &err) < 0)
            rc = cli_fail("%s", err.msg);
    }
    free(pred);
    if (l.ds)
        loaded_free(&l);
    free_model(&am);
    return rc;
}

typedef struct metrics {
    size_t n, right;
    double abs_sum, sq_sum, y_sum, y_sq;
} metrics;

static void metrics_add(metrics *mt, double pred, double y)
{
    double e = pred - y;
    mt->n++;
    mt->abs_sum += fabs(e);
    mt->sq_sum += e * e;
    mt->y_sum += y;
    mt->y_sq += y * y;
    mt->right += pred == y;
}

static void metrics_print(const char *who, const metrics *mt, int classes)
{
    if (classes) {
        printf("%-10s rows %zu  accuracy %.4f\n", who, mt->n, (double)mt->right / (double)mt->n);
        return;
    }
    double n = (double)mt->n, ss_tot = mt->y_sq - mt->y_sum * mt->y_sum / n;
    printf("%-10s rows %zu  MAE %.4f  RMSE %.4f  R2 %.4f\n", who, mt->n, mt->abs_sum / n,
           sqrt(mt->sq_sum / n), ss_tot > 0 ? 1 - mt->sq_sum / ss_tot : 0.0);
}

/* Scores the rows from `start` (all rows without times), and, when
 * `compare` names a file, both models on the rows it covers.  Returns the
 * number of rows scored. */
static size_t report(const loaded *l, const double *pred, const double *other, int64_t start,
                     const char *compare, int classes)
{
    metrics ours = {0, 0, 0, 0, 0, 0}, both = ours, theirs = ours;
    for (size_t r = 0; r < l->ds->nrows; r++) {
        if (l->times && l->times[r] < start)
            continue;
        metrics_add(&ours, pred[r], l->ds->target[r]);
        if (compare && !isnan(other[r])) {
            metrics_add(&both, pred[r], l->ds->target[r]);
            metrics_add(&theirs, other[r], l->ds->target[r]);
        }
    }
    if (ours.n == 0)
        return 0;
    metrics_print("model", &ours, classes);
    if (compare && both.n > 0) {
        printf("on the %zu rows that %s also covers:\n", both.n, compare);
        metrics_print("model", &both, classes);
        metrics_print("compared", &theirs, classes);
    }
    return ours.n;
}

/* A log1p model's P10-P90 interval on the scored rows: how often the
 * target falls inside, below and above. */
static int report_interval(const lucid_ebm *m, const loaded *l, int64_t start)
{
    size_t n = l->ds->nrows ? l->ds->nrows : 1;
    double *lo = malloc(n * sizeof *lo), *hi = malloc(n * sizeof *hi);
    lucid_error err = {{0}};
    int rc = lo && hi ? 0 : cli_fail("out of memory");
    if (rc == 0 && (lucid_ebm_predict_quantile(m, l->ds, 0, lo, &err) < 0 ||
                    lucid_ebm_predict_quantile(m, l->ds, 2, hi, &err) < 0))
        rc = cli_fail("%s", err.msg);
    size_t rows = 0, below = 0, above = 0;
    for (size_t r = 0; rc == 0 && r < l->ds->nrows; r++) {
        if (l->times && l->times[r] < start)
            continue;
        rows++;
        below += l->ds->target[r] < lo[r];
        above += l->ds->target[r] > hi[r];
    }
    if (rc == 0 && rows > 0)
        printf("P10-P90    rows %zu  inside %.4f  below %.4f  above %.4f\n", rows,
               (double)(rows - below - above) / (double)rows, (double)below / (double)rows,
               (double)above / (double)rows);
    free(lo);
    free(hi);
    return rc;
}

/* Someone else's predictions for the same rows (first column the row key,
 * second the value), e.g. the authors' estimates_lucid.csv: NAN where absent. */
static int read_compare(const char *path, const char *column, const lucid_dataset *ds,
                        double *out)
{
    lucid_error err = {{0}};
    lucid_csv *csv = lucid_csv_open(path, &err);
    if (!csv)
        return cli_fail("%s", err.msg);
    int col = column ? lucid_csv_col(csv, column) : 1;
    if (lucid_csv_ncols(csv) < 2 || col < 1) {
        lucid_csv_close(csv);
        return column ? cli_fail("%s:1: %s: missing column", path, column)
                      : cli_fail("%s:1: expected a key column and a value column", path);
    }
    lucid_strtab *keys = lucid_strtab_new();
    double *vals = NULL;
    size_t cap = 0;
    int rc;
    while (keys && (rc = lucid_csv_next(csv, &err)) == 1) {
        int32_t id = lucid_strtab_intern(keys, lucid_csv_field(csv, 0));
        if (id < 0 || LUCID_GROW(vals, cap, (size_t)id + 1) < 0) {
            rc = -2;
            break;
        }
        if (lucid_csv_f64(csv, col, &vals[id], &err) < 0) {
            rc = -1;
            break;
        }
    }
    if (!keys || rc == -2)
        rc = cli_fail("out of memory");
    else if (rc < 0)
        rc = cli_fail("%s", err.msg);
    for (size_t r = 0; rc == 0 && r < ds->nrows; r++) {
        int32_t id = lucid_strtab_find(keys, ds->row_keys[r]);
        out[r] = id < 0 ? NAN : vals[id];
    }
    free(vals);
    if (keys)
        lucid_strtab_free(keys);
    lucid_csv_close(csv);
    return rc;
}

static int cmd_eval(const model_opts *o)
{
    if (need(o->model, "--model", "eval") < 0 || need(o->data, "--data", "eval") < 0)
        return 2;
    any_model am;
    if (load_model(o->model, &am) != 0)
        return 1;
    loaded l;
    int rc = load_data(am.model, am.target, o->data, o->pairs, &l);
    const char *from = o->from ? o->from : am.ebm ? lucid_ebm_get_meta(am.ebm, "train_until") : NULL;
    int64_t start = INT64_MIN;
    double *pred = NULL, *other = NULL;
    if (rc == 0 && !l.ds->target)
        rc = cli_fail("%s: the data has no target column to evaluate against", o->data);
    if (rc == 0 && from && l.times && parse_time_opt("--from", from, &start) < 0)
        rc = 1;
    size_t n = rc == 0 && l.ds->nrows ? l.ds->nrows : 1;
    if (rc == 0 && (!(pred = malloc(n * sizeof *pred)) || !(other = malloc(n * sizeof *other))))
        rc = cli_fail("out of memory");
    if (rc == 0)
        rc = predict_rows(&am, l.ds, pred);
    if (rc == 0 && o->compare)
        rc = read_compare(o->compare, o->compare_column, l.ds, other);
    if (rc == 0) {
        if (from && l.times)
            printf("evaluated on rows from %s\n", from);
        if (report(&l, pred, other, start, o->compare, am.cart != NULL) == 0)
            rc = cli_fail("no rows to evaluate%s%s", from ? " from " : "", from ? from : "");
        else if (am.ebm && am.ebm->params.target_transform == LUCID_TARGET_LOG1P)
            rc = report_interval(am.ebm, &l, start);
    }
    free(pred);
    free(other);
    if (l.ds)
        loaded_free(&l);
    free_model(&am);
    return rc;
}

/* Lucid retrains the duration model each week on every job submitted
 * before that week: replay that from --weekly-from to the end of the data
 * and score the concatenated predictions. */
static int train_week(const lucid_ebm_params *p, const loaded *l,
                      int64_t start, int64_t end, double *pred, size_t *rows)
{
    size_t ntrain = 0, ntest = 0, n = l->ds->nrows;
    for (size_t r = 0; r < n; r++)
        if (l->times[r] < start)
            rows[ntrain++] = r;
    for (size_t r = 0; r < n; r++)
        if (l->times[r] >= start && l->times[r] < end)
            rows[ntrain + ntest++] = r;
    if (ntest == 0)
        return 0;
    lucid_error err = {{0}};
    lucid_dataset *train = lucid_dataset_subset(l->ds, rows, ntrain, &err);
    lucid_dataset *test = train ? lucid_dataset_subset(l->ds, rows + ntrain, ntest, &err) : NULL;
    double *out = malloc(ntest * sizeof *out);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    lucid_ebm *m = test && out ? lucid_ebm_train(train, p, &err) : NULL;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int rc = 0;
    if (!m || lucid_ebm_predict(m, test, out, &err) < 0)
        rc = cli_fail("%s", err.msg[0] ? err.msg : "out of memory");
    for (size_t i = 0; rc == 0 && i < ntest; i++)
        pred[rows[ntrain + i]] = out[i];
    if (rc == 0) {
        char when[32];
        lucid_time_format(start, when, sizeof when);
        printf("week from %s: trained on %zu rows in %.1f s, predicted %zu rows\n", when, ntrain,
               (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, ntest);
    }
    lucid_ebm_free(m);
    free(out);
    lucid_dataset_free(train);
    lucid_dataset_free(test);
    return rc;
}

static int eval_weekly(const model_opts *o)
{
    if (need(o->kind, "--kind", "eval --weekly-from") < 0 || need(o->data, "--data", "eval") < 0)
        return 2;
    if (strcmp(o->kind, "sharing") == 0)
        return cli_fail("--weekly-from applies to the throughput and duration models");
    lucid_ebm_params p;
    int64_t from;
    if (ebm_params(o, &p) != 0 || parse_time_opt("--weekly-from", o->weekly_from, &from) < 0)
        return 1;
    loaded l;
    if (load_data(o->kind, o->target, o->data, o->pairs, &l) != 0)
        return 1;
    size_t n = l.ds->nrows;
    double *pred = malloc(n * sizeof *pred), *other = malloc(n * sizeof *other);
    size_t *rows = malloc(n * sizeof *rows);
    int rc = pred && other && rows ? 0 : cli_fail("out of memory");
    if (rc == 0 && !l.ds->target)
        rc = cli_fail("%s: the data has no target column to evaluate against", o->data);
    int64_t last = INT64_MIN;
    for (size_t r = 0; r < n; r++)
        last = l.times[r] > last ? l.times[r] : last;
    for (int64_t week = from; rc == 0 && week <= last; week += 7 * 86400)
        rc = train_week(&p, &l, week, week + 7 * 86400, pred, rows);
    if (rc == 0 && o->compare)
        rc = read_compare(o->compare, o->compare_column, l.ds, other);
    if (rc == 0) {
        printf("evaluated on rows from %s, each week predicted by a model of all earlier rows\n",
               o->weekly_from);
        if (report(&l, pred, other, from, o->compare, 0) == 0)
            rc = cli_fail("no rows from %s", o->weekly_from);
    }
    free(pred);
    free(other);
    free(rows);
    loaded_free(&l);
    return rc;
}

/* ------------------------------------------------------------------ */
/* features: the engineered table, for baselines and inspection          */

/* A text field, quoted when it holds a comma or a quote. */
static void write_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_cell(FILE *f, const lucid_column *col, size_t r)
{
    if (col->values) {
        if (!isnan(col->values[r]))
            fprintf(f, "%.17g", col->values[r]);
    } else if (col->ids[r] >= 0) {
        write_text(f, lucid_strtab_get(col->strings, col->ids[r]));
    }
}

static int cmd_features(const model_opts *o)
{
    if (need(o->kind, "--kind", "features") < 0 || need(o->data, "--data", "features") < 0 ||
        need(o->out, "--out", "features") < 0)
        return 2;
    if (out_is_input(o) != 0)
        return 1;
    loaded l;
    if (load_data(o->kind, o->target, o->data, o->pairs, &l) != 0)
        return 1;
    int64_t until = INT64_MAX;
    int rc = 0;
    if (o->until && parse_time_opt("--train-until", o->until, &until) < 0)
        rc = 1;
    lucid_outfile file = {0};
    lucid_error err = {{0}};
    FILE *f = rc == 0 ? lucid_outfile_open(&file, o->out, &err) : NULL;
    if (rc == 0 && !f)
        rc = cli_fail("%s", err.msg);
    if (rc == 0) {
        /* key, every feature, the target, and (time series) the split side. */
        fprintf(f, "key");
        for (size_t c = 0; c < l.ds->ncols; c++)
            fprintf(f, ",%s", l.ds->cols[c].name);
        if (l.ds->target)
            fprintf(f, ",%s", l.ds->target_name);
        if (l.times)
            fprintf(f, ",split");
        fputc('\n', f);
        for (size_t r = 0; r < l.ds->nrows; r++) {
            write_text(f, l.ds->row_keys[r]);
            for (size_t c = 0; c < l.ds->ncols; c++) {
                fputc(',', f);
                write_cell(f, &l.ds->cols[c], r);
            }
            if (l.ds->target)
                fprintf(f, ",%.17g", l.ds->target[r]);
            if (l.times)
                fprintf(f, ",%s", l.times[r] < until ? "train" : "test");
            fputc('\n', f);
        }
        if (lucid_outfile_commit(&file, &err) < 0)
            rc = cli_fail("%s", err.msg);
    }
    loaded_free(&l);
    return rc;
}

/* ------------------------------------------------------------------ */
/* explain                                                             */

static int cmd_explain(const model_opts *o)
{
    if (need(o->model, "--model", "explain") < 0)
        return 2;
    any_model am;
    if (load_model(o->model, &am) != 0)
        return 1;
    int rc = 0;
    lucid_error err = {{0}};
    if (am.cart) {
        rc = lucid_cart_print(am.cart, stdout, &err) < 0 ? cli_fail("%s", err.msg) : 0;
    } else {
        if (!o->row) /* with --row the row's terms are the answer */
            lucid_explain_importance(am.ebm, stdout);
        if (o->out && lucid_explain_write_dir(am.ebm, o->out, &err) < 0)
            rc = cli_fail("%s", err.msg);
        else if (o->out)
            printf("\nshape functions, heatmaps and charts written to %s/\n", o->out);
        if (rc == 0 && o->row) {
            loaded l;
            if (need(o->data, "--data", "explain --row") < 0 ||
                load_data(am.model, am.target, o->data, o->pairs, &l) != 0)
                rc = 1;
            else {
                if (lucid_explain_row(am.ebm, l.ds, o->row, stdout, &err) < 0)
                    rc = cli_fail("%s", err.msg);
                loaded_free(&l);
            }
        }
    }
    free_model(&am);
    return rc;
}

/* ------------------------------------------------------------------ */

static void usage(FILE *out)
{
    fputs("usage: lucid model <verb> [options]\n"
          "\n"
          "  train   --kind throughput|duration|sharing --data FILE --out MODEL\n"
          "          [--target submit_gpu_job|submit_gpu_num] (throughput)\n"
          "          [--train-until 'YYYY-MM-DD HH:MM:SS'] (throughput, duration)\n"
          "          [--pairs colocation_pairs.csv] [--alpha 1e-4] (sharing)\n"
          "          [--seed N] [--bags N] [--threads N] [--learning-rate X]\n"
          "          [--interactions N] [--max-rounds N] [--min-samples-leaf N]\n"
          "          [--binning quantile|uniform]\n"
          "          [--monotone FEATURE[:+1|:-1],...] (constrain terms to isotonic fits)\n"
          "          [--target-transform none|log1p] (duration default log1p: fit log(1 + y),\n"
          "          predict expm1)\n"
          "          [--warm-start MODEL] (boost from MODEL's terms instead of from zero)\n"
          "  predict --model MODEL --data FILE --out PRED.csv\n"
          "  eval    --model MODEL --data FILE [--from 'YYYY-MM-DD HH:MM:SS']\n"
          "          [--compare OTHER.csv [--compare-column NAME]] (someone else's predictions,\n"
          "          keyed by the first column, scored on the same rows)\n"
          "          (time series: rows from --from, default the model's --train-until)\n"
          "  eval    --kind duration|throughput --data FILE --weekly-from TIME [--compare ..]\n"
          "          (retrain every week on all earlier rows, as Lucid does, and score)\n"
          "  eval    --kind sharing --data sharing_labels.csv [--test-percent 30] [--seed N]\n"
          "          (70/30 split and leave-one-out accuracy of the sharing tree)\n"
          "  explain --model MODEL [--out DIR] [--data FILE --row KEY]\n"
          "          (importances; DIR gets shape functions and pair heatmaps as CSV\n"
          "          and SVG; --row lists the terms behind one row's estimate)\n"
          "  features --kind K --data FILE --out TABLE.csv [--train-until T] [--target T]\n"
          "          (the engineered features as CSV, e.g. for baseline models)\n",
          out);
}

typedef struct verb {
    const char *name;
    int (*run)(const model_opts *o);
} verb;

static int cmd_eval_any(const model_opts *o)
{
    if (o->weekly_from)
        return eval_weekly(o);
    if (o->kind && strcmp(o->kind, "sharing") == 0 && !o->model) {
        if (need(o->data, "--data", "eval") < 0)
            return 2;
        return eval_sharing(o);
    }
    return cmd_eval(o);
}

static const verb verbs[] = {
    {"train", cmd_train},
    {"predict", cmd_predict},
    {"eval", cmd_eval_any},
    {"explain", cmd_explain},
    {"features", cmd_features},
};

int cmd_model(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        if (strcmp(argv[1], verbs[i].name) == 0) {
            for (int k = 2; k < argc; k++)
                if (cli_is_help(argv[k])) { /* `lucid model train --help` */
                    usage(stdout);
                    return 0;
                }
            model_opts o;
            if (parse_opts(argc, argv, &o) < 0)
                return 2;
            return verbs[i].run(&o);
        }
    return cli_usage_error("model: unknown verb '%s' (see lucid model --help)", argv[1]);
}
