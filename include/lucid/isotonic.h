/* isotonic.h — isotonic regression by weighted pool-adjacent-violators
 * (spec models.md §3), used to present (and optionally constrain) a shape
 * function as a monotone curve. */
#ifndef LUCID_ISOTONIC_H
#define LUCID_ISOTONIC_H

#include <stddef.h>

/* Monotone least-squares fit of y (weights w > 0) in index order:
 * direction +1 non-decreasing, -1 non-increasing.  0 or -1 (memory). */
int lucid_iso_pav(const double *y, const double *w, size_t n, int direction, double *out);
/* Sign of the Spearman correlation between index and y over entries with
 * w > 0: +1 (also for 0 or too few points) or -1. */
int lucid_iso_auto_direction(const double *y, const double *w, size_t n);
/* A shape function's monotone version: entries with w <= 0 are dropped,
 * the rest fitted (direction 0 = auto), dropped ones filled by linear
 * interpolation between their neighbours and held constant past the ends.
 * Returns the direction used, or 0 on failure (no weighted entry, memory). */
int lucid_iso_shape(const double *y, const double *w, size_t n, int direction, double *out);

#endif
