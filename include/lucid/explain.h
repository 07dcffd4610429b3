/* explain.h — what a GA2M model says, for people: the importance table,
 * every term's shape function or pair heatmap as CSV and SVG (with the
 * isotonic-smoothed curve beside the raw one), and the terms behind one
 * row's prediction. */
#ifndef LUCID_EXPLAIN_H
#define LUCID_EXPLAIN_H

#include <stdio.h>

#include "lucid/dataset.h"
#include "lucid/ebm.h"
#include "lucid/error.h"

/* Terms by decreasing importance (mean |score| over the training rows). */
void lucid_explain_importance(const lucid_ebm *m, FILE *out);

/* Writes into `dir` (created if needed): importance.csv/.svg, and per term
 * term_<name>.csv/.svg (main terms: bin, range or category, training rows,
 * score, spread over bags, isotonic score; pairs: a score matrix and a
 * heatmap).  Charts stay readable: a categorical term draws at most 30
 * bars (numeric categories grouped into runs, named ones as the largest
 * scores plus "others"); heatmaps leave out bins without training rows and
 * label bins by category name or the whole number they hold. */
int lucid_explain_write_dir(const lucid_ebm *m, const char *dir, lucid_error *err);

/* Term indices by decreasing importance into order[m->nterms]; -1 if out
 * of memory. */
int lucid_explain_rank(const lucid_ebm *m, int *order);
/* The name, without extension, of term t's files in lucid_explain_write_dir:
 * "term_<feature>" or "term_<first>_x_<second>". */
void lucid_explain_term_file(const lucid_ebm *m, int t, char *buf, size_t size);

/* The prediction for the row whose key is `key`, term by term, largest
 * contributions first. */
int lucid_explain_row(const lucid_ebm *m, const lucid_dataset *ds, const char *key, FILE *out,
                      lucid_error *err);

/* The first row of `one` in one line: "intercept I +c (term) ... +r (k
 * other terms)", its `top` largest contributions by magnitude and the rest
 * summed (scores rounded to whole units, as estimates in seconds are).
 * Used to say why a job got its estimate.  0 or -1. */
int lucid_explain_terms_line(const lucid_ebm *m, const lucid_dataset *one, int top, char *buf,
                             size_t size, lucid_error *err);

/* Representative x of every main-term bin of feature f (bin 0, missing,
 * gets NAN; categories get their index): xs[nbins]. */
void lucid_explain_bin_x(const lucid_bins *b, double *xs);

#endif
