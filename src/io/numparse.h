/* numparse.h — the allocation-free fast paths of number parsing, inline so
 * that the trace loader calls them per field without a function call
 * (internal to src/io; lucid_parse_i64/f64 in csv.c fall back to strtoll /
 * strtod for everything else and give the errors). */
#ifndef LUCID_IO_NUMPARSE_H
#define LUCID_IO_NUMPARSE_H

#include <stdint.h>
#include <string.h>

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

/* Eight bytes at a time (SWAR), for a field of n bytes whose 8 bytes from s
 * may be read even past its end — true of the CSV window's fields (csv.h:
 * lucid_csv_row_lens).  A loop per digit mispredicted its exit at the end
 * of every number; these have no data-dependent branch but the verdict.
 * Little-endian only (the bytes' order in the word); elsewhere they decline
 * and the loops above take every field. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LUCID_SWAR 1 /* the word parsers take what they can (tests know) */
/* w: the field's bytes shifted to the word's top with '0's filling the low
 * (most significant) places.  1 and the value when all 8 are digits. */
static inline int lucid_swar_digits8(uint64_t w, uint64_t *out)
{
    if ((((w & 0xF0F0F0F0F0F0F0F0u) | (((w + 0x0606060606060606u) & 0xF0F0F0F0F0F0F0F0u) >> 4)) !=
         0x3333333333333333u))
        return 0;
    w = ((w & 0x0F0F0F0F0F0F0F0Fu) * 2561) >> 8;
    w = ((w & 0x00FF00FF00FF00FFu) * 6553601) >> 16;
    *out = (uint32_t)(((w & 0x0000FFFF0000FFFFu) * 42949672960001u) >> 32);
    return 1;
}

/* The n (1..8) digits of w's low bytes as the word lucid_swar_digits8 takes. */
static inline uint64_t lucid_swar_align(uint64_t w, size_t n)
{
    unsigned shift = (unsigned)(8 - n) * 8;
    return (w << shift) | (0x3030303030303030u & ~(~(uint64_t)0 << shift));
}

/* 1..8 plain digits: 1 and the value, 0 for anything else. */
static inline int lucid_swar_i64(const char *s, size_t n, int64_t *out)
{
    uint64_t w, v;
    if (n - 1 >= 8)
        return 0;
    memcpy(&w, s, 8);
    if (!lucid_swar_digits8(lucid_swar_align(w, n), &v))
        return 0;
    *out = (int64_t)v;
    return 1;
}

/* digits[.digits], 1..8 bytes with at least one digit: the same value as
 * lucid_fast_f64 (at most 7 digits: m / 10^k, both exact). */
static inline int lucid_swar_f64(const char *s, size_t n, double *out)
{
    uint64_t w, m;
    if (n - 1 >= 8)
        return 0;
    memcpy(&w, s, 8);
    w = lucid_swar_align(w, n); /* the field in the top n bytes */
    uint64_t x = w ^ 0x2E2E2E2E2E2E2E2Eu; /* '.' bytes become 0 */
    uint64_t dots = (x - 0x0101010101010101u) & ~x & 0x8080808080808080u;
    if (!dots)
        return lucid_swar_digits8(w, &m) ? (*out = (double)m, 1) : 0;
    if (n == 1)
        return 0;
    /* Remove the first dot: the bytes below it (more significant digits)
     * move up by one into its place, a '0' fills the bottom. */
    unsigned at = (unsigned)__builtin_ctzll(dots) / 8; /* byte index of the dot */
    uint64_t below = at ? w & (~(uint64_t)0 >> (64 - 8 * at)) : 0;
    uint64_t above = at < 7 ? w & (~(uint64_t)0 << (8 * at + 8)) : 0;
    if (!lucid_swar_digits8(above | (below << 8) | 0x30u, &m))
        return 0;
    *out = (double)m / lucid_pow10_exact[7 - at]; /* 7 - at digits follow the dot */
    return 1;
}
#else
#define LUCID_SWAR 0
static inline int lucid_swar_i64(const char *s, size_t n, int64_t *out)
{
    (void)s, (void)n, (void)out;
    return 0;
}
static inline int lucid_swar_f64(const char *s, size_t n, double *out)
{
    (void)s, (void)n, (void)out;
    return 0;
}
#endif

#endif
