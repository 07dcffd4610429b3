/* explain.c — importance tables, shape-function and heatmap files, and
 * per-row explanations of a GA2M (explain.h).  Charts are drawn with our
 * SVG writer: a line chart (raw score, band of +/- one bag spread,
 * isotonic curve), a horizontal bar chart and a diverging heatmap. */
#include "lucid/explain.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lucid/atomic.h"
#include "lucid/isotonic.h"
#include "lucid/svg.h"

typedef struct ranked_term {
    double importance;
    int term;
} ranked_term;

static int cmp_importance(const void *a, const void *b)
{
    const ranked_term *x = a, *y = b;
    if (x->importance != y->importance)
        return x->importance > y->importance ? -1 : 1;
    return x->term - y->term;
}

/* Term indices by decreasing importance (caller frees). */
static ranked_term *rank_terms(const lucid_ebm *m)
{
    ranked_term *r = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *r);
    if (!r)
        return NULL;
    for (int t = 0; t < m->nterms; t++)
        r[t] = (ranked_term){m->terms[t].importance, t};
    qsort(r, (size_t)m->nterms, sizeof *r, cmp_importance);
    return r;
}

/* Mean over the training rows of the term's spread between bags. */
static double term_spread(const lucid_ebm_term *t)
{
    double rows = 0, sum = 0;
    for (int k = 0; k < t->ncells; k++) {
        rows += t->counts[k];
        sum += t->counts[k] * t->spread[k];
    }
    return rows > 0 ? sum / rows : 0;
}

int lucid_explain_rank(const lucid_ebm *m, int *order)
{
    ranked_term *r = rank_terms(m);
    if (!r)
        return -1;
    for (int t = 0; t < m->nterms; t++)
        order[t] = r[t].term;
    free(r);
    return 0;
}

void lucid_explain_importance(const lucid_ebm *m, FILE *out)
{
    ranked_term *r = rank_terms(m);
    if (!r)
        return;
    const char *model = lucid_ebm_get_meta(m, "model"), *target = lucid_ebm_get_meta(m, "target");
    fprintf(out, "%s model%s%s: intercept %.6g, %d terms, trained on %zu rows\n\n",
            model ? model : "GA2M", target ? " of " : "", target ? target : "", m->intercept,
            m->nterms, m->train_rows);
    fprintf(out, "rank  importance  bag spread  term\n");
    double top = m->nterms ? r[0].importance : 0;
    char name[256];
    for (int i = 0; i < m->nterms; i++) {
        int bar = top > 0 ? (int)lround(30 * r[i].importance / top) : 0;
        fprintf(out, "%4d  %10.4f  %10.4f  %-36s ", i + 1, r[i].importance,
                term_spread(&m->terms[r[i].term]), lucid_ebm_term_name(m, r[i].term, name, sizeof name));
        for (int k = 0; k < bar; k++)
            fputc('#', out);
        fputc('\n', out);
    }
    free(r);
}

void lucid_explain_bin_x(const lucid_bins *b, double *xs)
{
    int n = lucid_bins_count(b);
    xs[0] = NAN;
    if (b->type == LUCID_CATEGORICAL) {
        for (int k = 1; k < n; k++)
            xs[k] = k - 1;
        return;
    }
    if (b->ncuts == 0) {
        xs[1] = 0;
        return;
    }
    for (int k = 1; k < n; k++) {
        int i = k - 1; /* bin k holds [cuts[i-1], cuts[i]) */
        if (i == 0) {
            double w = b->ncuts > 1 ? b->cuts[1] - b->cuts[0] : 1;
            xs[k] = b->cuts[0] - w / 2;
        } else if (i == b->ncuts) {
            double w = b->ncuts > 1 ? b->cuts[i - 1] - b->cuts[i - 2] : 1;
            xs[k] = b->cuts[i - 1] + w / 2;
        } else {
            xs[k] = (b->cuts[i - 1] + b->cuts[i]) / 2;
        }
    }
}

/* ---- charts ---- */

enum { CHART_W = 760, CHART_H = 450, LEFT = 80, RIGHT = 30, TOP = 64, BOTTOM = 60 };

/* About five round tick values covering [lo, hi]. */
typedef struct frame {
    double x0, x1, y0, y1; /* data ranges */
} frame;

static double px(const frame *f, double x)
{
    return LEFT + (x - f->x0) / (f->x1 - f->x0) * (CHART_W - LEFT - RIGHT);
}

static double py(const frame *f, double y)
{
    return CHART_H - BOTTOM - (y - f->y0) / (f->y1 - f->y0) * (CHART_H - TOP - BOTTOM);
}

static void axes(lucid_svg *svg, const frame *f, const char *title, const char *xlabel,
                 const char *ylabel)
{
    double ticks[16];
    char label[64];
    int n = lucid_svg_ticks(f->y0, f->y1, ticks, 16);
    for (int i = 0; i < n; i++) {
        double y = py(f, ticks[i]);
        lucid_svg_line(svg, LEFT, y, CHART_W - RIGHT, y, ticks[i] == 0 ? "#888888" : "#e5e5e5", 1);
        snprintf(label, sizeof label, "%g", ticks[i]);
        lucid_svg_text(svg, LEFT - 6, y + 4, 11, "end", 0, label);
    }
    n = lucid_svg_ticks(f->x0, f->x1, ticks, 16);
    for (int i = 0; i < n; i++) {
        double x = px(f, ticks[i]);
        lucid_svg_line(svg, x, CHART_H - BOTTOM, x, CHART_H - BOTTOM + 5, "#333333", 1);
        snprintf(label, sizeof label, "%g", ticks[i]);
        lucid_svg_text(svg, x, CHART_H - BOTTOM + 18, 11, "middle", 0, label);
    }
    lucid_svg_rect(svg, LEFT, TOP, CHART_W - LEFT - RIGHT, CHART_H - TOP - BOTTOM, "none", "#333333");
    lucid_svg_text(svg, CHART_W / 2.0, 28, 16, "middle", 0, title);
    lucid_svg_text(svg, (LEFT + CHART_W - RIGHT) / 2.0, CHART_H - 18, 13, "middle", 0, xlabel);
    lucid_svg_text(svg, 20, (TOP + CHART_H - BOTTOM) / 2.0, 13, "middle", -90, ylabel);
}

/* Raw shape (with a +/- spread band) and its isotonic version. */
static int line_chart(const char *path, const char *title, const char *xlabel, const double *xs,
                      const double *ys, const double *spread, const double *iso, int n,
                      lucid_error *err)
{
    frame f = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    for (int i = 0; i < n; i++) {
        f.x0 = fmin(f.x0, xs[i]);
        f.x1 = fmax(f.x1, xs[i]);
        f.y0 = fmin(f.y0, fmin(ys[i] - spread[i], iso[i]));
        f.y1 = fmax(f.y1, fmax(ys[i] + spread[i], iso[i]));
    }
    if (!(f.x1 > f.x0)) {
        f.x0 -= 1;
        f.x1 += 1;
    }
    double pad = (f.y1 - f.y0) * 0.05;
    if (!(pad > 0))
        pad = 1;
    f.y0 -= pad;
    f.y1 += pad;
    lucid_svg *svg = lucid_svg_new(CHART_W, CHART_H);
    double *bx = malloc(2 * (size_t)n * sizeof *bx), *by = malloc(2 * (size_t)n * sizeof *by);
    if (!svg || !bx || !by) {
        lucid_svg_free(svg);
        free(bx);
        free(by);
        return lucid_error_set(err, "out of memory");
    }
    axes(svg, &f, title, xlabel, "score (contribution to the prediction)");
    for (int i = 0; i < n; i++) { /* the band: upper edge forward, lower edge back */
        bx[i] = bx[2 * n - 1 - i] = px(&f, xs[i]);
        by[i] = py(&f, ys[i] + spread[i]);
        by[2 * n - 1 - i] = py(&f, ys[i] - spread[i]);
    }
    lucid_svg_polygon(svg, bx, by, 2 * n, "#1f77b4", 0.2);
    for (int i = 0; i < n; i++)
        by[i] = py(&f, ys[i]);
    lucid_svg_polyline(svg, bx, by, n, "#1f77b4", 2.5, NULL);
    for (int i = 0; i < n; i++)
        by[i] = py(&f, iso[i]);
    lucid_svg_polyline(svg, bx, by, n, "#d62728", 2, "6 4");
    /* Legend between the title and the plot, clear of the data. */
    lucid_svg_line(svg, LEFT + 10, TOP - 14, LEFT + 35, TOP - 14, "#1f77b4", 2.5);
    lucid_svg_text(svg, LEFT + 40, TOP - 10, 11, "start", 0, "score (band: +/- spread over bags)");
    /* Drawn as the curve is: dashed. */
    double lx[2] = {LEFT + 290, LEFT + 315}, ly[2] = {TOP - 14, TOP - 14};
    lucid_svg_polyline(svg, lx, ly, 2, "#d62728", 2, "6 4");
    lucid_svg_text(svg, LEFT + 320, TOP - 10, 11, "start", 0,
                   "isotonic fit (weighted by training rows)");
    int rc = lucid_svg_save(svg, path, err);
    lucid_svg_free(svg);
    free(bx);
    free(by);
    return rc;
}

/* Horizontal bars from zero, one per label. */
static int bar_chart(const char *path, const char *title, const char *const *labels,
                     const double *values, int n, lucid_error *err)
{
    double lo = 0, hi = 0;
    for (int i = 0; i < n; i++) {
        lo = fmin(lo, values[i]);
        hi = fmax(hi, values[i]);
    }
    if (!(hi > lo))
        hi = lo + 1;
    const double left = 260, right = 90, top = 50, row = 22;
    double height = top + row * n + 40, width = 760;
    lucid_svg *svg = lucid_svg_new(width, height);
    if (!svg)
        return lucid_error_set(err, "out of memory");
    lucid_svg_text(svg, width / 2, 28, 16, "middle", 0, title);
    double scale = (width - left - right) / (hi - lo), zero = left - lo * scale;
    char text[64];
    for (int i = 0; i < n; i++) {
        double y = top + row * i, x = values[i] >= 0 ? zero : zero + values[i] * scale;
        lucid_svg_rect(svg, x, y + 3, fabs(values[i]) * scale, row - 6,
                       values[i] >= 0 ? "#1f77b4" : "#d62728", "none");
        lucid_svg_text(svg, left - 8, y + row / 2 + 4, 11, "end", 0, labels[i]);
        snprintf(text, sizeof text, "%.4g", values[i]);
        lucid_svg_text(svg, values[i] >= 0 ? x + fabs(values[i]) * scale + 4 : zero + 4,
                       y + row / 2 + 4, 10, "start", 0, text);
    }
    lucid_svg_line(svg, zero, top, zero, top + row * n, "#333333", 1);
    int rc = lucid_svg_save(svg, path, err);
    lucid_svg_free(svg);
    return rc;
}

/* Blue (negative) - white - red (positive). */
static void diverging(double v, double scale, char *buf, size_t size)
{
    double t = scale > 0 ? fmax(-1, fmin(1, v / scale)) : 0;
    int r = 255, g = 255, b = 255;
    if (t > 0) {
        g = b = (int)lround(255 * (1 - t));
        r = 255 - (int)lround(41 * t);
    } else if (t < 0) {
        r = g = (int)lround(255 * (1 + t));
        b = 255 - (int)lround(75 * -t);
    }
    snprintf(buf, size, "#%02x%02x%02x", r, g, b);
}

/* A readable label of bin k (>= 1) of a binning: the category's name; for
 * a continuous bin, the one whole number it holds when it holds exactly one
 * (integer features such as dayofweek on uniform bins), else its range. */
static void bin_label(const lucid_bins *b, const double *xs, int k, char *buf, size_t size)
{
    if (k == 0) {
        snprintf(buf, size, "missing");
        return;
    }
    if (b->type == LUCID_CATEGORICAL) {
        snprintf(buf, size, "%s", b->cats[k - 1]);
        return;
    }
    if (b->ncuts == 0) {
        snprintf(buf, size, "all");
        return;
    }
    int i = k - 1; /* [cuts[i-1], cuts[i]); the open ends as wide as their neighbour */
    double w = b->ncuts > 1 ? b->cuts[1] - b->cuts[0] : 1;
    double lo = i > 0 ? b->cuts[i - 1] : b->cuts[0] - w;
    double hi = i < b->ncuts ? b->cuts[i] : 2 * xs[k] - lo;
    double first = ceil(lo);
    if (first < hi && first + 1 >= hi)
        snprintf(buf, size, "%.0f", first);
    else
        snprintf(buf, size, "%.3g-%.3g", lo, hi);
}

/* Bins of one axis of a pair term that hold training rows (the others are
 * left out of the heatmap); returns how many, indices in keep[]. */
static int kept_bins(const lucid_ebm_term *t, int axis, int *keep)
{
    int n1 = t->nbins[0], n2 = t->nbins[1], n = axis == 0 ? n1 : n2, k = 0;
    for (int i = 0; i < n; i++) {
        double rows = 0;
        for (int j = 0; j < (axis == 0 ? n2 : n1); j++)
            rows += axis == 0 ? t->counts[i * n2 + j] : t->counts[j * n2 + i];
        if (rows > 0)
            keep[k++] = i;
    }
    if (k == 0) /* nothing trained: show the non-missing bins */
        for (int i = 1; i < n; i++)
            keep[k++] = i;
    return k;
}

/* At most `max` labels along an axis: every k-th. */
static int label_step(int n, int max)
{
    return n > max ? (n + max - 1) / max : 1;
}

static int heatmap(const char *path, const char *title, const lucid_ebm *m, const lucid_ebm_term *t,
                   lucid_error *err)
{
    int n1 = t->nbins[0], n2 = t->nbins[1];
    const lucid_bins *b1 = &m->pair_bins[t->feat[0]], *b2 = &m->pair_bins[t->feat[1]];
    double scale = 0;
    for (int k = 0; k < t->ncells; k++)
        scale = fmax(scale, fabs(t->scores[k]));
    const double left = 130, top = 50, size = 440;
    lucid_svg *svg = lucid_svg_new(left + size + 120, top + size + 100);
    double *x1 = malloc((size_t)n1 * sizeof *x1), *x2 = malloc((size_t)n2 * sizeof *x2);
    int *rows = malloc((size_t)n1 * sizeof *rows), *cols = malloc((size_t)n2 * sizeof *cols);
    if (!svg || !x1 || !x2 || !rows || !cols) {
        lucid_svg_free(svg);
        free(x1);
        free(x2);
        free(rows);
        free(cols);
        return lucid_error_set(err, "out of memory");
    }
    lucid_explain_bin_x(b1, x1);
    lucid_explain_bin_x(b2, x2);
    int nr = kept_bins(t, 0, rows), nc = kept_bins(t, 1, cols);
    double cw = size / nc, ch = size / nr;
    lucid_svg_text(svg, left + size / 2, 28, 16, "middle", 0, title);
    char colour[16], label[64];
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < nc; c++) {
            diverging(t->scores[rows[r] * n2 + cols[c]], scale, colour, sizeof colour);
            /* rows of the first feature grow upwards */
            lucid_svg_rect(svg, left + c * cw, top + size - (r + 1) * ch, cw + 0.3, ch + 0.3,
                           colour, "none");
        }
    int step1 = label_step(nr, b1->type == LUCID_CATEGORICAL ? 30 : 12);
    int step2 = label_step(nc, b2->type == LUCID_CATEGORICAL ? 30 : 12);
    for (int r = 0; r < nr; r += step1) {
        bin_label(b1, x1, rows[r], label, sizeof label);
        lucid_svg_text(svg, left - 6, top + size - (r + 0.5) * ch + 4, 10, "end", 0, label);
    }
    for (int c = 0; c < nc; c += step2) {
        bin_label(b2, x2, cols[c], label, sizeof label);
        /* Slanted so that names and ranges do not run into each other. */
        lucid_svg_text(svg, left + (c + 0.5) * cw + 3, top + size + 12, 10, "end", -45, label);
    }
    lucid_svg_rect(svg, left, top, size, size, "none", "#333333");
    lucid_svg_text(svg, left + size / 2, top + size + 86, 13, "middle", 0, m->names[t->feat[1]]);
    lucid_svg_text(svg, 20, top + size / 2, 13, "middle", -90, m->names[t->feat[0]]);
    for (int k = 0; k <= 10; k++) { /* colour key */
        double v = scale * (1 - k / 5.0);
        diverging(v, scale, colour, sizeof colour);
        lucid_svg_rect(svg, left + size + 30, top + k * 30, 20, 30, colour, "none");
        snprintf(label, sizeof label, "%.3g", v);
        lucid_svg_text(svg, left + size + 56, top + k * 30 + 18, 10, "start", 0, label);
    }
    int rc = lucid_svg_save(svg, path, err);
    lucid_svg_free(svg);
    free(x1);
    free(x2);
    free(rows);
    free(cols);
    return rc;
}

/* ---- files ---- */

static void safe_name(const char *in, char *out, size_t size)
{
    size_t k = 0;
    for (; *in && k + 1 < size; in++)
        out[k++] = (char)((*in >= 'a' && *in <= 'z') || (*in >= 'A' && *in <= 'Z') ||
                                  (*in >= '0' && *in <= '9') || *in == '-' || *in == '_'
                              ? *in
                              : '_');
    out[k] = '\0';
}

void lucid_explain_term_file(const lucid_ebm *m, int t, char *buf, size_t size)
{
    const lucid_ebm_term *term = &m->terms[t];
    char a[256], b[256];
    safe_name(m->names[term->feat[0]], a, sizeof a);
    if (term->nfeat == 1) {
        snprintf(buf, size, "term_%s", a);
        return;
    }
    safe_name(m->names[term->feat[1]], b, sizeof b);
    snprintf(buf, size, "term_%s_x_%s", a, b);
}

static FILE *open_out(lucid_outfile *o, const char *dir, const char *name, const char *ext,
                      lucid_error *err)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext);
    return lucid_outfile_open(o, path, err);
}

/* A categorical term as at most MAX_BARS bars: one per category when they
 * fit; else numeric categories (dayofyear's "001".."366") in MAX_BARS runs
 * of consecutive values, and named ones (users) the MAX_BARS - 1 of largest
 * |score| plus one bar for the others; a group's bar is its row-weighted
 * mean score.  The CSV beside the chart keeps every category. */
enum { MAX_BARS = 30 };

static int numeric_categories(const lucid_bins *b)
{
    for (int i = 0; i < b->ncats; i++) {
        char *end;
        strtod(b->cats[i], &end);
        if (end == b->cats[i] || *end)
            return 0;
    }
    return 1;
}

/* Row-weighted mean score of bins order[from..to) (plain mean if no rows). */
static double group_score(const lucid_ebm_term *t, const ranked_term *order, int from, int to)
{
    double rows = 0, sum = 0, plain = 0;
    for (int i = from; i < to; i++) {
        rows += t->counts[order[i].term];
        sum += t->counts[order[i].term] * t->scores[order[i].term];
        plain += t->scores[order[i].term];
    }
    return rows > 0 ? sum / rows : plain / (to - from);
}

static int category_chart(const char *path, const char *title, const lucid_bins *b,
                          const lucid_ebm_term *t, lucid_error *err)
{
    int n = b->ncats;
    if (n <= MAX_BARS)
        return bar_chart(path, title, (const char *const *)b->cats, t->scores + 1, n, err);
    /* Bins ranked (ranked_term, largest first): numeric categories by
     * decreasing -value, i.e. in increasing order; named ones by |score|. */
    ranked_term *order = malloc((size_t)n * sizeof *order);
    char(*names)[80] = malloc(MAX_BARS * sizeof *names);
    if (!order || !names) {
        free(order);
        free(names);
        return lucid_error_set(err, "out of memory");
    }
    const char *labels[MAX_BARS];
    double values[MAX_BARS];
    int numeric = numeric_categories(b), bars = 0;
    for (int i = 0; i < n; i++)
        order[i] = (ranked_term){numeric ? -strtod(b->cats[i], NULL) : fabs(t->scores[i + 1]), i + 1};
    qsort(order, (size_t)n, sizeof *order, cmp_importance);
    char full[512];
    if (numeric) {
        int per = (n + MAX_BARS - 1) / MAX_BARS;
        for (int from = 0; from < n; from += per, bars++) {
            int to = from + per < n ? from + per : n;
            snprintf(names[bars], sizeof names[bars], "%s-%s", b->cats[order[from].term - 1],
                     b->cats[order[to - 1].term - 1]);
            values[bars] = group_score(t, order, from, to);
        }
        snprintf(full, sizeof full, "%s (%d categories, %d per bar)", title, n, per);
    } else {
        for (; bars < MAX_BARS - 1; bars++) {
            snprintf(names[bars], sizeof names[bars], "%s", b->cats[order[bars].term - 1]);
            values[bars] = t->scores[order[bars].term];
        }
        snprintf(names[bars], sizeof names[bars], "%d others (mean)", n - bars);
        values[bars] = group_score(t, order, bars, n);
        bars++;
        snprintf(full, sizeof full, "%s (the %d of %d categories with the largest scores)", title,
                 MAX_BARS - 1, n);
    }
    for (int i = 0; i < bars; i++)
        labels[i] = names[i];
    int rc = bar_chart(path, full, labels, values, bars, err);
    free(order);
    free(names);
    return rc;
}

static int write_main_term(const lucid_ebm *m, int t, const char *dir, lucid_error *err)
{
    const lucid_ebm_term *term = &m->terms[t];
    const lucid_bins *b = &m->main_bins[term->feat[0]];
    int n = term->nbins[0];
    double *xs = malloc((size_t)n * sizeof *xs), *iso = malloc((size_t)n * sizeof *iso);
    if (!xs || !iso) {
        free(xs);
        free(iso);
        return lucid_error_set(err, "out of memory");
    }
    lucid_explain_bin_x(b, xs);
    /* The isotonic curve over the non-missing bins, weighted by training rows. */
    for (int k = 0; k < n; k++)
        iso[k] = term->scores[k];
    int direction = n > 1 ? lucid_iso_shape(term->scores + 1, term->counts + 1, (size_t)(n - 1), 0, iso + 1) : 1;
    char base[600], path[4400];
    lucid_explain_term_file(m, t, base, sizeof base);
    lucid_outfile csv;
    FILE *f = open_out(&csv, dir, base, "csv", err);
    int rc = f ? 0 : -1;
    if (f) {
        fprintf(f, "bin,%s,lower,upper,rows,score,spread,isotonic\n",
                b->type == LUCID_CATEGORICAL ? "category" : "x");
        for (int k = 0; k < n; k++) {
            fprintf(f, "%d,", k);
            if (k == 0)
                fprintf(f, "missing,,");
            else if (b->type == LUCID_CATEGORICAL)
                fprintf(f, "\"%s\",,", b->cats[k - 1]);
            else {
                fprintf(f, "%.10g,", xs[k]);
                if (k >= 2)
                    fprintf(f, "%.10g", b->cuts[k - 2]);
                fprintf(f, ",");
            }
            if (k >= 1 && b->type == LUCID_CONTINUOUS && k - 1 < b->ncuts)
                fprintf(f, "%.10g", b->cuts[k - 1]);
            fprintf(f, ",%.0f,%.10g,%.10g,%.10g\n", term->counts[k], term->scores[k], term->spread[k],
                    iso[k]);
        }
        rc = lucid_outfile_commit(&csv, err);
    }
    char title[400];
    if (b->type == LUCID_CATEGORICAL)
        snprintf(title, sizeof title, "%s: score per category (importance %.4g)",
                 m->names[term->feat[0]], term->importance);
    else
        snprintf(title, sizeof title, "%s: shape function (importance %.4g, isotonic %s)",
                 m->names[term->feat[0]], term->importance,
                 direction < 0 ? "decreasing" : "increasing");
    snprintf(path, sizeof path, "%s/%s.svg", dir, base);
    if (rc == 0 && b->type == LUCID_CONTINUOUS && n > 1)
        rc = line_chart(path, title, m->names[term->feat[0]], xs + 1, term->scores + 1,
                        term->spread + 1, iso + 1, n - 1, err);
    else if (rc == 0 && n > 1)
        rc = category_chart(path, title, b, term, err);
    free(xs);
    free(iso);
    return rc;
}

static int write_pair_term(const lucid_ebm *m, int t, const char *dir, lucid_error *err)
{
    const lucid_ebm_term *term = &m->terms[t];
    char base[600], path[4400];
    lucid_explain_term_file(m, t, base, sizeof base);
    lucid_outfile csv;
    FILE *f = open_out(&csv, dir, base, "csv", err);
    if (!f)
        return -1;
    int n1 = term->nbins[0], n2 = term->nbins[1];
    double *x1 = malloc((size_t)n1 * sizeof *x1), *x2 = malloc((size_t)n2 * sizeof *x2);
    if (!x1 || !x2) {
        lucid_outfile_abort(&csv);
        free(x1);
        free(x2);
        return lucid_error_set(err, "out of memory");
    }
    lucid_explain_bin_x(&m->pair_bins[term->feat[0]], x1);
    lucid_explain_bin_x(&m->pair_bins[term->feat[1]], x2);
    /* Rows: bins of the first feature; columns: bins of the second. */
    fprintf(f, "%s \\ %s", m->names[term->feat[0]], m->names[term->feat[1]]);
    for (int j = 0; j < n2; j++)
        j == 0 ? fprintf(f, ",missing") : fprintf(f, ",%.6g", x2[j]);
    fputc('\n', f);
    for (int i = 0; i < n1; i++) {
        i == 0 ? fprintf(f, "missing") : fprintf(f, "%.6g", x1[i]);
        for (int j = 0; j < n2; j++)
            fprintf(f, ",%.10g", term->scores[i * n2 + j]);
        fputc('\n', f);
    }
    free(x1);
    free(x2);
    if (lucid_outfile_commit(&csv, err) < 0)
        return -1;
    char title[600];
    snprintf(title, sizeof title, "%s x %s (importance %.4g)", m->names[term->feat[0]],
             m->names[term->feat[1]], term->importance);
    snprintf(path, sizeof path, "%s/%s.svg", dir, base);
    return heatmap(path, title, m, term, err);
}

static int write_importance(const lucid_ebm *m, const char *dir, lucid_error *err)
{
    ranked_term *r = rank_terms(m);
    char (*names)[256] = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *names);
    const char **labels = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *labels);
    double *values = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *values);
    char path[4400];
    int rc = -1;
    lucid_outfile csv;
    FILE *f = NULL;
    if (!r || !names || !labels || !values)
        lucid_error_set(err, "out of memory");
    else if ((f = open_out(&csv, dir, "importance", "csv", err)) != NULL) {
        fprintf(f, "rank,term,importance,bag_spread\n");
        for (int i = 0; i < m->nterms; i++) {
            labels[i] = lucid_ebm_term_name(m, r[i].term, names[i], sizeof names[i]);
            values[i] = r[i].importance;
            fprintf(f, "%d,\"%s\",%.10g,%.10g\n", i + 1, labels[i], values[i],
                    term_spread(&m->terms[r[i].term]));
        }
        rc = lucid_outfile_commit(&csv, err);
        snprintf(path, sizeof path, "%s/importance.svg", dir);
        if (rc == 0)
            rc = bar_chart(path, "term importance (mean |score| over the training rows)", labels,
                           values, m->nterms, err);
    }
    free(r);
    free(names);
    free(labels);
    free(values);
    return rc;
}

int lucid_explain_write_dir(const lucid_ebm *m, const char *dir, lucid_error *err)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return lucid_error_set(err, "%s: cannot create: %s", dir, strerror(errno));
    if (write_importance(m, dir, err) < 0)
        return -1;
    for (int t = 0; t < m->nterms; t++) {
        int rc = m->terms[t].nfeat == 1 ? write_main_term(m, t, dir, err)
                                        : write_pair_term(m, t, dir, err);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- one row ---- */

static void value_text(const lucid_dataset *ds, const char *name, size_t row, char *buf, size_t size)
{
    int c = lucid_dataset_find(ds, name);
    if (c >= 0 && ds->cols[c].values && !isnan(ds->cols[c].values[row])) {
        snprintf(buf, size, "%.10g", ds->cols[c].values[row]);
        return;
    }
    char tmp[40];
    const char *label = c < 0 ? NULL : lucid_column_label(&ds->cols[c], row, tmp, sizeof tmp);
    snprintf(buf, size, "%s", label ? label : "missing");
}

int lucid_explain_row(const lucid_ebm *m, const lucid_dataset *ds, const char *key, FILE *out,
                      lucid_error *err)
{
    size_t row = ds->nrows;
    for (size_t r = 0; ds->row_keys && r < ds->nrows && row == ds->nrows; r++)
        if (strcmp(ds->row_keys[r], key) == 0)
            row = r;
    if (row == ds->nrows)
        return lucid_error_set(err, "no row with key '%s' in the data", key);
    lucid_dataset *one = lucid_dataset_subset(ds, &row, 1, err);
    double *contrib = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *contrib);
    ranked_term *order = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *order);
    int rc = -1;
    if (!one || !contrib || !order)
        lucid_error_set(err, "out of memory");
    else if (lucid_ebm_contributions(m, one, contrib, err) == 0) {
        double total = m->intercept;
        for (int t = 0; t < m->nterms; t++) {
            total += contrib[t];
            order[t] = (ranked_term){fabs(contrib[t]), t};
        }
        qsort(order, (size_t)m->nterms, sizeof *order, cmp_importance);
        int logt = m->params.target_transform == LUCID_TARGET_LOG1P;
        if (logt)
            fprintf(out,
                    "row %s: prediction %.6g; log(1 + prediction) = intercept %.6g + the terms "
                    "below (each multiplies 1 + prediction by the factor shown)",
                    key, lucid_ebm_decode(m, total), m->intercept + log(m->decode_scale));
        else
            fprintf(out, "row %s: prediction %.6g = intercept %.6g + the terms below", key,
                    lucid_ebm_decode(m, total), m->intercept);
        if (ds->target)
            fprintf(out, " (actual %.6g)", ds->target[row]);
        fprintf(out, "\n\n  contribution  term = value\n");
        char name[256], v1[128], v2[128];
        for (int i = 0; i < m->nterms; i++) {
            const lucid_ebm_term *t = &m->terms[order[i].term];
            value_text(ds, m->names[t->feat[0]], row, v1, sizeof v1);
            lucid_ebm_term_name(m, order[i].term, name, sizeof name);
            char factor[32] = "";
            if (logt)
                snprintf(factor, sizeof factor, " (x%.3g)", exp(contrib[order[i].term]));
            if (t->nfeat == 1) {
                fprintf(out, "  %+12.6g%s  %s = %s\n", contrib[order[i].term], factor, name, v1);
            } else {
                value_text(ds, m->names[t->feat[1]], row, v2, sizeof v2);
                fprintf(out, "  %+12.6g%s  %s = %s, %s\n", contrib[order[i].term], factor, name,
                        v1, v2);
            }
        }
        rc = 0;
    }
    lucid_dataset_free(one);
    free(contrib);
    free(order);
    return rc;
}

int lucid_explain_terms_line(const lucid_ebm *m, const lucid_dataset *one, int top, char *buf,
                             size_t size, lucid_error *err)
{
    double *contrib = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *contrib);
    ranked_term *order = malloc((size_t)(m->nterms ? m->nterms : 1) * sizeof *order);
    if (!contrib || !order || size == 0) {
        free(contrib);
        free(order);
        return lucid_error_set(err, "out of memory");
    }
    int rc = lucid_ebm_contributions(m, one, contrib, err);
    if (rc == 0) {
        for (int t = 0; t < m->nterms; t++)
            order[t] = (ranked_term){fabs(contrib[t]), t};
        qsort(order, (size_t)m->nterms, sizeof *order, cmp_importance);
        /* A log1p model multiplies: 1 + estimate = e^intercept x e^term ... */
        int logt = m->params.target_transform == LUCID_TARGET_LOG1P;
        size_t used = logt ? (size_t)snprintf(buf, size, "1 + estimate = intercept %.0f",
                                              exp(m->intercept) * m->decode_scale)
                           : (size_t)snprintf(buf, size, "intercept %.0f", m->intercept);
        int shown = m->nterms < top ? m->nterms : top;
        double rest = 0;
        for (int t = shown; t < m->nterms; t++)
            rest += contrib[order[t].term];
        char name[128];
        for (int k = 0; k < shown && used < size; k++) {
            lucid_ebm_term_name(m, order[k].term, name, sizeof name);
            double c = contrib[order[k].term];
            used += (size_t)(logt ? snprintf(buf + used, size - used, " x%.3g (%s)", exp(c), name)
                                  : snprintf(buf + used, size - used, " %+.0f (%s)", c, name));
        }
        if (used < size && m->nterms > shown) {
            if (logt)
                snprintf(buf + used, size - used, " x%.3g (%d other terms)", exp(rest),
                         m->nterms - shown);
            else
                snprintf(buf + used, size - used, " %+.0f (%d other terms)", rest,
                         m->nterms - shown);
        }
    }
    free(contrib);
    free(order);
    return rc;
}
