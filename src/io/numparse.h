/* numparse.h — the allocation-free fast paths of number parsing, inline so
 * that the trace loader calls them per field without a function call
 * (internal to src/io; lucid_parse_i64/f64 in csv.c fall back to strtoll /
 * strtod for everything else and give the errors). */
#ifndef LUCID_IO_NUMPARSE_H
#define LUCID_IO_NUMPARSE_H

#include <stdint.h>

/* Exact powers of ten as doubles. */
static const double lucid_pow10_exact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                           1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* [-]digits, at most 18 of them (no overflow), NUL-terminated.  1 when
 * done, 0 when the text needs the full parser. */
static inline int lucid_fast_i64(const char *s, int64_t *out)
{
    const char *p = s + (*s == '-');
    int64_t v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 18) {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (*p != '\0' || digits == 0)
        return 0;
    *out = *s == '-' ? -v : v;
    return 1;
}

/* [-]digits[.digits] with at most 15 significant digits in all and at most
 * 22 after the point: the digits as an integer m < 2^53 and a power of ten
 * are both exact doubles, so m / 10^k is the correctly rounded value — the
 * one strtod gives (Clinger's fast path), at a fraction of its cost.
 * 1 when done, 0 when the text needs strtod. */
static inline int lucid_fast_f64(const char *s, double *out)
{
    int negative = *s == '-';
    s += negative;
    uint64_t m = 0;
    int digits = 0, frac = -1;
    for (;; s++) {
        if (*s >= '0' && *s <= '9') {
            if (++digits > 15)
                return 0;
            m = m * 10 + (uint64_t)(*s - '0');
            if (frac >= 0)
                frac++;
        } else if (*s == '.' && frac < 0) {
            frac = 0;
        } else {
            break;
        }
    }
    if (*s != '\0' || digits == 0 || frac > 22)
        return 0;
    double v = (double)m;
    if (frac > 0)
        v /= lucid_pow10_exact[frac];
    *out = negative ? -v : v;
    return 1;
}

#endif
