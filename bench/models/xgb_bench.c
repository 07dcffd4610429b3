/* xgb_bench.c — XGBoost 1.7 (Debian libxgboost-dev, C API) as an
 * in-process baseline on the tables `lucid model features` exports: the
 * same features and split as lucid's models.  Not part of the default
 * build: bench/models/build.sh compiles it.
 *
 * usage: xgb_bench regression|sharing TABLE.csv [rounds]
 * Prints CSV lines: table,model,metric,value,train_seconds */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <xgboost/c_api.h>

#include "lucid/csv.h"
#include "lucid/dataset.h"
#include "lucid/util.h"

#define CHECK(call)                                                                  \
    do {                                                                             \
        if ((call) != 0) {                                                           \
            fprintf(stderr, "xgb_bench: %s: %s\n", #call, XGBGetLastError());       \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

typedef struct table {
    size_t n;
    int nfeat;
    float *x; /* row-major n x nfeat, NAN missing */
    float *y;
    char *train; /* 1 = training row */
} table;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the table; string columns become codes of the sorted training categories. */
static void load(const char *path, int sharing, table *t)
{
    lucid_error err = {{0}};
    lucid_csv *csv = lucid_csv_open(path, &err);
    if (!csv) {
        fprintf(stderr, "xgb_bench: %s\n", err.msg);
        exit(1);
    }
    int ncols = lucid_csv_ncols(csv), has_split = strcmp(lucid_csv_header(csv, ncols - 1), "split") == 0;
    t->nfeat = ncols - (has_split ? 3 : 2);
    size_t cap = 0;
    char ***cells = NULL;
    int rc;
    while ((rc = lucid_csv_next(csv, &err)) == 1) {
        if (LUCID_GROW(cells, cap, t->n + 1) < 0)
            exit(1);
        cells[t->n] = malloc((size_t)ncols * sizeof **cells);
        for (int c = 0; c < ncols; c++)
            cells[t->n][c] = strdup(lucid_csv_field(csv, c));
        t->n++;
    }
    if (rc < 0) {
        fprintf(stderr, "xgb_bench: %s\n", err.msg);
        exit(1);
    }
    lucid_csv_close(csv);
    t->x = malloc(t->n * (size_t)t->nfeat * sizeof *t->x);
    t->y = malloc(t->n * sizeof *t->y);
    t->train = malloc(t->n);
    if (sharing) { /* scikit-learn's train_test_split(test_size=0.3, random_state=42) */
        size_t ntest;
        size_t *perm = lucid_split_rows_sklearn(t->n, 0.3, 42, &ntest);
        for (size_t i = 0; i < t->n; i++)
            t->train[perm[i]] = i >= ntest;
        free(perm);
    } else {
        for (size_t r = 0; r < t->n; r++)
            t->train[r] = strcmp(cells[r][ncols - 1], "train") == 0;
    }
    char **cats = malloc(t->n * sizeof *cats);
    for (int f = 0; f < t->nfeat; f++) {
        int numeric = 1;
        double v;
        for (size_t r = 0; r < t->n && numeric; r++)
            numeric = !cells[r][f + 1][0] || lucid_parse_f64(cells[r][f + 1], &v) == 0;
        size_t k = 0;
        for (size_t r = 0; r < t->n && !numeric; r++)
            if (t->train[r])
                cats[k++] = cells[r][f + 1];
        qsort(cats, k, sizeof *cats, cmp_str);
        for (size_t r = 0; r < t->n; r++) {
            const char *s = cells[r][f + 1];
            float *dst = &t->x[r * (size_t)t->nfeat + (size_t)f];
            if (numeric) {
                *dst = s[0] && lucid_parse_f64(s, &v) == 0 ? (float)v : NAN;
            } else {
                char **hit = bsearch(&s, cats, k, sizeof *cats, cmp_str);
                /* equal strings are adjacent: code = index of the first */
                while (hit && hit > cats && strcmp(hit[-1], s) == 0)
                    hit--;
                *dst = hit ? (float)(hit - cats) : -1.0f;
            }
        }
    }
    for (size_t r = 0; r < t->n; r++) {
        double v;
        lucid_parse_f64(cells[r][t->nfeat + 1], &v);
        t->y[r] = (float)v;
        for (int c = 0; c < ncols; c++)
            free(cells[r][c]);
        free(cells[r]);
    }
    free(cells);
    free(cats);
}

static DMatrixHandle matrix(const table *t, int want_train, size_t *rows_out, float **y_out)
{
    size_t m = 0;
    for (size_t r = 0; r < t->n; r++)
        m += t->train[r] == want_train;
    float *x = malloc(m * (size_t)t->nfeat * sizeof *x), *y = malloc(m * sizeof *y);
    size_t k = 0;
    for (size_t r = 0; r < t->n; r++)
        if (t->train[r] == want_train) {
            memcpy(&x[k * (size_t)t->nfeat], &t->x[r * (size_t)t->nfeat], (size_t)t->nfeat * sizeof *x);
            y[k++] = t->y[r];
        }
    DMatrixHandle h;
    CHECK(XGDMatrixCreateFromMat(x, m, (bst_ulong)t->nfeat, NAN, &h));
    CHECK(XGDMatrixSetFloatInfo(h, "label", y, m));
    free(x);
    *rows_out = m;
    *y_out = y;
    return h;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: xgb_bench regression|sharing TABLE.csv [rounds]\n");
        return 2;
    }
    int sharing = strcmp(argv[1], "sharing") == 0, rounds = argc > 3 ? atoi(argv[3]) : 100;
    table t = {0, 0, NULL, NULL, NULL};
    load(argv[2], sharing, &t);
    size_t ntrain, ntest;
    float *ytrain, *ytest;
    DMatrixHandle train = matrix(&t, 1, &ntrain, &ytrain), test = matrix(&t, 0, &ntest, &ytest);
    BoosterHandle b;
    CHECK(XGBoosterCreate(&train, 1, &b));
    const char *threads = getenv("XGB_THREADS");
    CHECK(XGBoosterSetParam(b, "nthread", threads ? threads : "1"));
    CHECK(XGBoosterSetParam(b, "seed", "0"));
    if (sharing) {
        CHECK(XGBoosterSetParam(b, "objective", "multi:softmax"));
        CHECK(XGBoosterSetParam(b, "num_class", "3"));
    } else {
        CHECK(XGBoosterSetParam(b, "objective", "reg:squarederror"));
    }
    struct timespec a, z;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < rounds; i++)
        CHECK(XGBoosterUpdateOneIter(b, i, train));
    clock_gettime(CLOCK_MONOTONIC, &z);
    double secs = (double)(z.tv_sec - a.tv_sec) + (double)(z.tv_nsec - a.tv_nsec) / 1e9;
    bst_ulong len;
    const float *pred;
    CHECK(XGBoosterPredict(b, test, 0, 0, 0, &len, &pred));
    double abs_sum = 0, sq = 0, mean = 0, ss = 0;
    size_t right = 0;
    for (size_t i = 0; i < ntest; i++)
        mean += ytest[i] / (double)ntest;
    for (size_t i = 0; i < ntest; i++) {
        double e = (double)pred[i] - ytest[i];
        abs_sum += fabs(e);
        sq += e * e;
        ss += (ytest[i] - mean) * (ytest[i] - mean);
        right += pred[i] == ytest[i];
    }
    if (sharing) {
        printf("%s,XGBoost,accuracy,%.4f,%.3f\n", argv[2], (double)right / (double)ntest, secs);
    } else {
        printf("%s,XGBoost,MAE,%.4f,%.2f\n", argv[2], abs_sum / (double)ntest, secs);
        printf("%s,XGBoost,R2,%.4f,%.2f\n", argv[2], 1 - sq / ss, secs);
    }
    XGBoosterFree(b);
    XGDMatrixFree(train);
    XGDMatrixFree(test);
    free(ytrain);
    free(ytest);
    free(t.x);
    free(t.y);
    free(t.train);
    return 0;
}
