/* dataset.c — feature tables, feature typing, cuts and binning (dataset.h).
 *
 * Owns the rules of spec models.md §1.2: which columns are categorical, the
 * uniform and quantile cutters, and the value -> bin mapping shared by every
 * model that bins its inputs. */
#include "lucid/dataset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lucid_dataset *lucid_dataset_new(size_t nrows, lucid_error *err)
{
    lucid_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    ds->nrows = nrows;
    return ds;
}

static void column_free(lucid_column *col)
{
    free(col->name);
    free(col->values);
    free(col->ids);
    if (col->strings)
        lucid_strtab_free(col->strings);
}

void lucid_dataset_free(lucid_dataset *ds)
{
    if (!ds)
        return;
    for (size_t c = 0; c < ds->ncols; c++)
        column_free(&ds->cols[c]);
    free(ds->cols);
    free(ds->target);
    free(ds->target_name);
    if (ds->row_keys)
        for (size_t r = 0; r < ds->nrows; r++)
            free(ds->row_keys[r]);
    free(ds->row_keys);
    free(ds);
}

int lucid_dataset_find(const lucid_dataset *ds, const char *name)
{
    for (size_t c = 0; c < ds->ncols; c++)
        if (strcmp(ds->cols[c].name, name) == 0)
            return (int)c;
    return -1;
}

static lucid_column *new_column(lucid_dataset *ds, const char *name, lucid_error *err)
{
    if (lucid_dataset_find(ds, name) >= 0) {
        lucid_error_set(err, "duplicate column '%s'", name);
        return NULL;
    }
    lucid_column *cols = realloc(ds->cols, (ds->ncols + 1) * sizeof *cols);
    if (!cols) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    ds->cols = cols;
    lucid_column *col = &cols[ds->ncols];
    memset(col, 0, sizeof *col);
    col->name = strdup(name);
    if (!col->name) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    ds->ncols++;
    return col;
}

int lucid_dataset_add_numeric(lucid_dataset *ds, const char *name, const double *values,
                              lucid_error *err)
{
    lucid_column *col = new_column(ds, name, err);
    if (!col)
        return -1;
    col->values = malloc((ds->nrows ? ds->nrows : 1) * sizeof *col->values);
    if (!col->values)
        return lucid_error_set(err, "out of memory");
    if (ds->nrows)
        memcpy(col->values, values, ds->nrows * sizeof *values);
    return 0;
}

int lucid_dataset_add_strings(lucid_dataset *ds, const char *name, const char *const *values,
                              lucid_error *err)
{
    lucid_column *col = new_column(ds, name, err);
    if (!col)
        return -1;
    col->ids = malloc((ds->nrows ? ds->nrows : 1) * sizeof *col->ids);
    col->strings = lucid_strtab_new();
    if (!col->ids || !col->strings)
        return lucid_error_set(err, "out of memory");
    for (size_t r = 0; r < ds->nrows; r++) {
        if (!values[r] || !values[r][0]) {
            col->ids[r] = -1;
            continue;
        }
        col->ids[r] = lucid_strtab_intern(col->strings, values[r]);
        if (col->ids[r] < 0)
            return lucid_error_set(err, "out of memory");
    }
    return 0;
}

int lucid_dataset_set_target(lucid_dataset *ds, const char *name, const double *values,
                             lucid_error *err)
{
    free(ds->target);
    free(ds->target_name);
    ds->target = malloc((ds->nrows ? ds->nrows : 1) * sizeof *ds->target);
    ds->target_name = strdup(name);
    if (!ds->target || !ds->target_name)
        return lucid_error_set(err, "out of memory");
    if (ds->nrows)
        memcpy(ds->target, values, ds->nrows * sizeof *values);
    return 0;
}

int lucid_dataset_set_keys(lucid_dataset *ds, const char *const *keys, lucid_error *err)
{
    ds->row_keys = calloc(ds->nrows ? ds->nrows : 1, sizeof *ds->row_keys);
    if (!ds->row_keys)
        return lucid_error_set(err, "out of memory");
    for (size_t r = 0; r < ds->nrows; r++)
        if (!(ds->row_keys[r] = strdup(keys[r] ? keys[r] : "")))
            return lucid_error_set(err, "out of memory");
    return 0;
}

lucid_dataset *lucid_dataset_subset(const lucid_dataset *ds, const size_t *rows, size_t n,
                                    lucid_error *err)
{
    lucid_dataset *out = lucid_dataset_new(n, err);
    double *num = malloc((n ? n : 1) * sizeof *num);
    const char **str = malloc((n ? n : 1) * sizeof *str);
    if (!out || !num || !str)
        goto fail;
    for (size_t c = 0; c < ds->ncols; c++) {
        const lucid_column *col = &ds->cols[c];
        int rc;
        if (col->values) {
            for (size_t i = 0; i < n; i++)
                num[i] = col->values[rows[i]];
            rc = lucid_dataset_add_numeric(out, col->name, num, err);
        } else {
            for (size_t i = 0; i < n; i++)
                str[i] = col->ids[rows[i]] < 0 ? NULL
                                               : lucid_strtab_get(col->strings, col->ids[rows[i]]);
            rc = lucid_dataset_add_strings(out, col->name, str, err);
        }
        if (rc < 0)
            goto fail;
    }
    if (ds->target) {
        for (size_t i = 0; i < n; i++)
            num[i] = ds->target[rows[i]];
        if (lucid_dataset_set_target(out, ds->target_name, num, err) < 0)
            goto fail;
    }
    if (ds->row_keys) {
        for (size_t i = 0; i < n; i++)
            str[i] = ds->row_keys[rows[i]];
        if (lucid_dataset_set_keys(out, str, err) < 0)
            goto fail;
    }
    free(num);
    free(str);
    return out;
fail:
    if (!out || !num || !str)
        lucid_error_set(err, "out of memory");
    free(num);
    free(str);
    lucid_dataset_free(out);
    return NULL;
}

lucid_feature_type lucid_column_type(const lucid_column *col, size_t nrows)
{
    if (!col->values)
        return LUCID_CATEGORICAL;
    size_t present = 0;
    for (size_t r = 0; r < nrows; r++) {
        double v = col->values[r];
        if (isnan(v))
            continue;
        if (v != 0.0 && v != 1.0)
            return LUCID_CONTINUOUS;
        present++;
    }
    return present ? LUCID_CATEGORICAL : LUCID_CONTINUOUS;
}

const char *lucid_column_label(const lucid_column *col, size_t row, char *buf, size_t size)
{
    if (col->ids)
        return col->ids[row] < 0 ? NULL : lucid_strtab_get(col->strings, col->ids[row]);
    double v = col->values[row];
    if (isnan(v))
        return NULL;
    snprintf(buf, size, "%.17g", v);
    return buf;
}

/* ---- cuts ---- */

int lucid_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorted copy of the non-missing values; returns their number or -1. */
static long sorted_present(const double *x, size_t n, double **out)
{
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i]))
            v[m++] = x[i];
    qsort(v, m, sizeof *v, lucid_cmp_double);
    *out = v;
    return (long)m;
}

int lucid_cuts_uniform(const double *x, size_t n, int max_cuts, double **cuts)
{
    *cuts = NULL;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            continue;
        if (x[i] < lo)
            lo = x[i];
        if (x[i] > hi)
            hi = x[i];
    }
    if (max_cuts <= 0 || !(lo < hi))
        return 0;
    double *out = malloc((size_t)max_cuts * sizeof *out);
    if (!out)
        return -1;
    int nb = max_cuts + 1, count = 0;
    double step = (hi - lo) / nb;
    for (int i = 1; i < nb; i++) {
        double cut = lo + step * i;
        if (count > 0 && cut == out[count - 1])
            continue;
        out[count++] = cut;
    }
    *cuts = out;
    return count;
}

/* A cut strictly above `a` and at most `b` (a < b): the midpoint, unless the
 * two values are adjacent doubles. */
static double midpoint(double a, double b)
{
    double mid = a + (b - a) / 2;
    return mid <= a ? b : mid;
}

/* Equal frequency: the k-th boundary goes to the value change nearest to
 * k*m/nb rows; a value repeated across several targets gets a bin of its own
 * (and the targets it swallowed are lost). */
static int quantile_snap(const double *v, const size_t *cum, size_t d, long m, int max_cuts,
                         double *out)
{
    int nb = max_cuts + 1, count = 0;
    long last = -1;
    for (int k = 1; k < nb; k++) {
        double target = (double)k * (double)m / nb;
        size_t lo = 0, hi = d - 1; /* first i with cum[i] >= target */
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if ((double)cum[mid] >= target)
                hi = mid;
            else
                lo = mid + 1;
        }
        size_t j = lo;
        if (lo > 0 && target - (double)cum[lo - 1] <= (double)cum[lo] - target)
            j = lo - 1;
        if (j + 1 >= d || (long)j <= last)
            continue;
        last = (long)j;
        out[count++] = midpoint(v[j], v[j + 1]);
    }
    return count;
}

/* Cuts of the sorted distinct values v[0..d-1] (cum: cumulative row
 * counts, m rows in all) when they need more than max_cuts cuts, in the
 * manner of InterpretML's quantile cutter: a value holding at least an
 * average bin's worth of rows (m / (max_cuts + 1)) is uncuttable and gets a
 * bin of its own (a cut on each side); the runs of values between such
 * values are cutting ranges, and the remaining cuts go one at a time to the
 * range whose bins are widest (rows / (cuts + 1)), as long as it has value
 * changes left; inside a range each cut goes to the value change nearest to
 * an equal share of the rows still to split, so every cut is used.  Returns
 * the number of cuts written (at most max_cuts) or -1. */
static int quantile_spread(const double *v, const size_t *cum, size_t d, long m, int max_cuts,
                           double *out)
{
#define ROWS(i) (cum[i] - ((i) ? cum[(i) - 1] : 0))
    double width = (double)m / (max_cuts + 1);
    char *heavy = malloc(d);
    size_t *lo = malloc((d + 1) * sizeof *lo), *hi = malloc((d + 1) * sizeof *hi);
    int *take = calloc(d + 1, sizeof *take);
    if (!heavy || !lo || !hi || !take) {
        free(heavy);
        free(lo);
        free(hi);
        free(take);
        return -1;
    }
    size_t forced = 0, nr = 0;
    for (size_t i = 0; i < d; i++)
        heavy[i] = (double)ROWS(i) >= width;
    for (size_t i = 0; i + 1 < d; i++)
        forced += heavy[i] || heavy[i + 1];
    int count = 0;
    if (forced > (size_t)max_cuts) {
        /* Heavy and light values alternate so much that the heavy ones
         * cannot all be isolated: plain equal frequency instead. */
        count = quantile_snap(v, cum, d, m, max_cuts, out);
        goto done;
    }
    /* Cutting ranges: maximal runs of values that are not heavy. */
    for (size_t i = 0; i < d;) {
        if (heavy[i]) {
            i++;
            continue;
        }
        size_t j = i;
        while (j + 1 < d && !heavy[j + 1])
            j++;
        lo[nr] = i;
        hi[nr] = j;
        nr++;
        i = j + 1;
    }
    int left = max_cuts - (int)forced;
    while (left > 0) {
        long best = -1;
        double best_w = -1;
        for (size_t r = 0; r < nr; r++) {
            if ((size_t)take[r] >= hi[r] - lo[r])
                continue; /* no value change left in the range */
            double rows = (double)(cum[hi[r]] - (lo[r] ? cum[lo[r] - 1] : 0));
            double w = rows / (take[r] + 1);
            if (w > best_w) {
                best_w = w;
                best = (long)r;
            }
        }
        if (best < 0)
            break;
        take[best]++;
        left--;
    }
    for (size_t i = 0; i + 1 < d; i++)
        if (heavy[i] || heavy[i + 1])
            out[count++] = midpoint(v[i], v[i + 1]);
    for (size_t r = 0; r < nr; r++) {
        size_t prev = lo[r]; /* cuts go after value index c, lo <= c < hi */
        size_t first = lo[r];
        for (int k = 0; k < take[r]; k++) {
            int after = take[r] - k - 1; /* cuts still to place after this one */
            double start = (double)(first ? cum[first - 1] : 0);
            double rows = (double)cum[hi[r]] - start;
            double target = start + rows / (take[r] - k + 1);
            size_t c_min = k == 0 ? lo[r] : prev + 1, c_max = hi[r] - 1 - (size_t)after;
            size_t c = c_min;
            while (c < c_max && (double)cum[c] < target)
                c++;
            if (c > c_min && target - (double)cum[c - 1] <= (double)cum[c] - target)
                c--;
            out[count++] = midpoint(v[c], v[c + 1]);
            prev = c;
            first = c + 1;
        }
    }
    qsort(out, (size_t)count, sizeof *out, lucid_cmp_double);
done:
    free(heavy);
    free(lo);
    free(hi);
    free(take);
    return count;
#undef ROWS
}

int lucid_cuts_quantile(const double *x, size_t n, int max_cuts, double **cuts)
{
    *cuts = NULL;
    double *v;
    long m = sorted_present(x, n, &v);
    if (m < 0)
        return -1;
    /* Distinct values in place, with cumulative counts. */
    size_t *cum = malloc(((size_t)m + 1) * sizeof *cum);
    if (!cum) {
        free(v);
        return -1;
    }
    size_t d = 0;
    for (long i = 0; i < m; i++) {
        if (d > 0 && v[i] == v[d - 1]) {
            cum[d - 1]++;
            continue;
        }
        v[d] = v[i];
        cum[d] = (d ? cum[d - 1] : 0) + 1;
        d++;
    }
    int count = 0;
    double *out = NULL;
    if (d >= 2 && max_cuts > 0) {
        out = malloc((size_t)max_cuts * sizeof *out);
        if (!out) {
            free(v);
            free(cum);
            return -1;
        }
    }
    if (out && d - 1 <= (size_t)max_cuts) {
        for (size_t i = 0; i + 1 < d; i++)
            out[count++] = midpoint(v[i], v[i + 1]);
    } else if (out) {
        count = quantile_spread(v, cum, d, m, max_cuts, out);
        if (count < 0) {
            free(v);
            free(cum);
            free(out);
            return -1;
        }
    }
    free(v);
    free(cum);
    if (count == 0) {
        free(out);
        out = NULL;
    }
    *cuts = out;
    return count;
}

/* ---- binning ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int fit_categories(lucid_bins *b, const lucid_column *col, size_t nrows, lucid_error *err)
{
    lucid_strtab *seen = lucid_strtab_new();
    if (!seen)
        return lucid_error_set(err, "out of memory");
    char buf[40];
    for (size_t r = 0; r < nrows; r++) {
        const char *label = lucid_column_label(col, r, buf, sizeof buf);
        if (label && lucid_strtab_intern(seen, label) < 0) {
            lucid_strtab_free(seen);
            return lucid_error_set(err, "out of memory");
        }
    }
    int k = lucid_strtab_count(seen);
    b->cats = calloc(k ? (size_t)k : 1, sizeof *b->cats);
    if (!b->cats) {
        lucid_strtab_free(seen);
        return lucid_error_set(err, "out of memory");
    }
    for (int i = 0; i < k; i++) {
        b->cats[i] = strdup(lucid_strtab_get(seen, i));
        if (!b->cats[i]) {
            lucid_strtab_free(seen);
            return lucid_error_set(err, "out of memory");
        }
        b->ncats++;
    }
    lucid_strtab_free(seen);
    qsort(b->cats, (size_t)b->ncats, sizeof *b->cats, cmp_str);
    return 0;
}

int lucid_bins_fit(lucid_bins *b, lucid_feature_type type, const lucid_column *col, size_t nrows,
                   int max_bins, lucid_binning method, lucid_error *err)
{
    memset(b, 0, sizeof *b);
    b->type = type;
    if (type == LUCID_CATEGORICAL)
        return fit_categories(b, col, nrows, err);
    if (!col->values)
        return lucid_error_set(err, "%s: a continuous feature needs numbers", col->name);
    int max_cuts = max_bins - 2;
    int n = method == LUCID_BIN_UNIFORM ? lucid_cuts_uniform(col->values, nrows, max_cuts, &b->cuts)
                                        : lucid_cuts_quantile(col->values, nrows, max_cuts, &b->cuts);
    if (n < 0)
        return lucid_error_set(err, "out of memory");
    b->ncuts = n;
    return 0;
}

void lucid_bins_free(lucid_bins *b)
{
    free(b->cuts);
    for (int i = 0; i < b->ncats; i++)
        free(b->cats[i]);
    free(b->cats);
    memset(b, 0, sizeof *b);
}

int lucid_bins_count(const lucid_bins *b)
{
    return b->type == LUCID_CONTINUOUS ? b->ncuts + 2 : b->ncats + 1;
}

uint32_t lucid_bin_value(const lucid_bins *b, double x)
{
    if (isnan(x))
        return 0;
    int lo = 0, hi = b->ncuts; /* #{cuts <= x} */
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (b->cuts[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (uint32_t)(1 + lo);
}

uint32_t lucid_bin_category(const lucid_bins *b, const char *label)
{
    if (!label)
        return 0;
    char **hit = bsearch(&label, b->cats, (size_t)b->ncats, sizeof *b->cats, cmp_str);
    return hit ? (uint32_t)(1 + (hit - b->cats)) : LUCID_BIN_UNSEEN;
}

int lucid_bins_apply(const lucid_bins *b, const lucid_column *col, size_t nrows, uint32_t *out,
                     lucid_error *err)
{
    if (b->type == LUCID_CONTINUOUS) {
        if (!col->values)
            return lucid_error_set(err, "%s: the model expects numbers, the data has strings",
                                   col->name);
        for (size_t r = 0; r < nrows; r++)
            out[r] = lucid_bin_value(b, col->values[r]);
        return 0;
    }
    if (col->ids) { /* look each distinct string up once */
        int32_t k = lucid_strtab_count(col->strings);
        uint32_t *map = malloc((k ? (size_t)k : 1) * sizeof *map);
        if (!map)
            return lucid_error_set(err, "out of memory");
        for (int32_t i = 0; i < k; i++)
            map[i] = lucid_bin_category(b, lucid_strtab_get(col->strings, i));
        for (size_t r = 0; r < nrows; r++)
            out[r] = col->ids[r] < 0 ? 0 : map[col->ids[r]];
        free(map);
        return 0;
    }
    char buf[40];
    for (size_t r = 0; r < nrows; r++)
        out[r] = lucid_bin_category(b, lucid_column_label(col, r, buf, sizeof buf));
    return 0;
}

/* ---- split ---- */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

size_t *lucid_split_rows(size_t n, double frac, lucid_rng *rng, size_t *nval)
{
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows)
        return NULL;
    for (size_t i = 0; i < n; i++)
        rows[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)lucid_rng_below(rng, i);
        size_t t = rows[i - 1];
        rows[i - 1] = rows[j];
        rows[j] = t;
    }
    size_t v = (size_t)ceil((double)n * frac);
    if (v > n)
        v = n;
    qsort(rows, v, sizeof *rows, cmp_size);
    qsort(rows + v, n - v, sizeof *rows, cmp_size);
    *nval = v;
    return rows;
}

/* ---- numpy's RandomState(seed).permutation(n), for sklearn's splits ---- */

typedef struct mt19937 {
    uint32_t key[624];
    int pos;
} mt19937;

static void mt_seed(mt19937 *mt, uint32_t seed)
{
    for (int i = 0; i < 624; i++) {
        mt->key[i] = seed;
        seed = 1812433253U * (seed ^ (seed >> 30)) + (uint32_t)i + 1;
    }
    mt->pos = 624;
}

static uint32_t mt_next(mt19937 *mt)
{
    if (mt->pos >= 624) {
        for (int i = 0; i < 624; i++) {
            uint32_t y = (mt->key[i] & 0x80000000U) | (mt->key[(i + 1) % 624] & 0x7fffffffU);
            mt->key[i] = mt->key[(i + 397) % 624] ^ (y >> 1) ^ (y & 1 ? 0x9908b0dfU : 0);
        }
        mt->pos = 0;
    }
    uint32_t y = mt->key[mt->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= y >> 18;
    return y;
}

/* numpy's random_interval: uniform in [0, max] by masked rejection. */
static uint32_t mt_interval(mt19937 *mt, uint32_t max)
{
    if (max == 0)
        return 0;
    uint32_t mask = max;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    uint32_t v;
    while ((v = mt_next(mt) & mask) > max)
        ;
    return v;
}

size_t *lucid_split_rows_sklearn(size_t n, double frac, uint32_t seed, size_t *ntest)
{
    size_t *rows = malloc((n ? n : 1) * sizeof *rows);
    if (!rows || n > UINT32_MAX) {
        free(rows);
        return NULL;
    }
    mt19937 mt;
    mt_seed(&mt, seed);
    for (size_t i = 0; i < n; i++)
        rows[i] = i;
    for (size_t i = n; i-- > 1;) {
        size_t j = mt_interval(&mt, (uint32_t)i);
        size_t t = rows[i];
        rows[i] = rows[j];
        rows[j] = t;
    }
    size_t v = (size_t)ceil((double)n * frac);
    *ntest = v > n ? n : v;
    return rows;
}
