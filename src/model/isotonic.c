/* isotonic.c — weighted pool-adjacent-violators and shape smoothing (isotonic.h). */
#include "lucid/isotonic.h"

#include <stdlib.h>
#include <string.h>

int lucid_iso_pav(const double *y, const double *w, size_t n, int direction, double *out)
{
    /* Blocks on a stack: weighted mean, weight, number of entries. */
    double *mean = malloc((n ? n : 1) * sizeof *mean), *weight = malloc((n ? n : 1) * sizeof *weight);
    size_t *len = malloc((n ? n : 1) * sizeof *len);
    if (!mean || !weight || !len) {
        free(mean);
        free(weight);
        free(len);
        return -1;
    }
    double sign = direction < 0 ? -1.0 : 1.0;
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
        mean[top] = sign * y[i];
        weight[top] = w[i];
        len[top] = 1;
        top++;
        /* Pool while the last two blocks violate the order. */
        while (top > 1 && mean[top - 2] > mean[top - 1]) {
            double wt = weight[top - 2] + weight[top - 1];
            mean[top - 2] = (mean[top - 2] * weight[top - 2] + mean[top - 1] * weight[top - 1]) / wt;
            weight[top - 2] = wt;
            len[top - 2] += len[top - 1];
            top--;
        }
    }
    size_t k = 0;
    for (size_t b = 0; b < top; b++)
        for (size_t j = 0; j < len[b]; j++)
            out[k++] = sign * mean[b];
    free(mean);
    free(weight);
    free(len);
    return 0;
}

/* Average ranks (1-based) of v[0..n). */
static void ranks(const double *v, size_t n, double *rank, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = 1; i < n; i++) { /* insertion sort: shape functions are short */
        size_t x = order[i], j = i;
        while (j > 0 && v[order[j - 1]] > v[x]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && v[order[j + 1]] == v[order[i]])
            j++;
        double r = (double)(i + j) / 2 + 1;
        for (size_t k = i; k <= j; k++)
            rank[order[k]] = r;
        i = j + 1;
    }
}

int lucid_iso_auto_direction(const double *y, const double *w, size_t n)
{
    double *v = malloc((n ? n : 1) * sizeof *v), *r = malloc((n ? n : 1) * sizeof *r);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    size_t m = 0;
    for (size_t i = 0; v && i < n; i++)
        if (w[i] > 0)
            v[m++] = y[i];
    double cov = 0;
    if (v && r && order && m >= 2) {
        ranks(v, m, r, order);
        double mid = (double)(m + 1) / 2; /* mean of both rank vectors */
        for (size_t i = 0; i < m; i++)
            cov += ((double)i + 1 - mid) * (r[i] - mid);
    }
    free(v);
    free(r);
    free(order);
    return cov < 0 ? -1 : 1;
}

int lucid_iso_shape(const double *y, const double *w, size_t n, int direction, double *out)
{
    if (direction == 0)
        direction = lucid_iso_auto_direction(y, w, n);
    double *ys = malloc((n ? n : 1) * sizeof *ys), *ws = malloc((n ? n : 1) * sizeof *ws),
           *fit = malloc((n ? n : 1) * sizeof *fit);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    size_t m = 0;
    int rc = 0;
    if (ys && ws && fit && at) {
        for (size_t i = 0; i < n; i++)
            if (w[i] > 0) {
                ys[m] = y[i];
                ws[m] = w[i];
                at[m++] = i;
            }
        if (m > 0 && lucid_iso_pav(ys, ws, m, direction, fit) == 0) {
            rc = direction;
            size_t k = 0;
            for (size_t i = 0; i < n; i++) {
                while (k + 1 < m && at[k + 1] <= i)
                    k++;
                if (i <= at[0])
                    out[i] = fit[0];
                else if (i >= at[m - 1])
                    out[i] = fit[m - 1];
                else if (i == at[k])
                    out[i] = fit[k];
                else {
                    double t = (double)(i - at[k]) / (double)(at[k + 1] - at[k]);
                    out[i] = fit[k] + t * (fit[k + 1] - fit[k]);
                }
            }
        }
    }
    free(ys);
    free(ws);
    free(fit);
    free(at);
    return rc;
}
