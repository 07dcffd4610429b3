/* util.h — small shared pieces: seeded random numbers, calendar time,
 * string interning and growable arrays.  No global state anywhere. */
#ifndef LUCID_UTIL_H
#define LUCID_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lucid/error.h"

/* ---- seeded randomness (xoshiro256**, seeded by splitmix64) ----
 * The same seed gives the same stream on every machine. */
typedef struct lucid_rng {
    uint64_t s[4];
} lucid_rng;

void lucid_rng_seed(lucid_rng *rng, uint64_t seed);
uint64_t lucid_rng_next(lucid_rng *rng);
/* Uniform integer in [0, n) without modulo bias; n > 0. */
uint64_t lucid_rng_below(lucid_rng *rng, uint64_t n);
/* Uniform double in [0, 1) with 53 random bits. */
double lucid_rng_unit(lucid_rng *rng);

/* ---- calendar time (UTC, proleptic Gregorian) ---- */
/* Parses "YYYY-MM-DD HH:MM:SS" (or "YYYY-MM-DDTHH:MM:SS", or "YYYY-MM-DD")
 * into seconds since 1970-01-01 00:00:00.  0 on success, -1 if malformed. */
int lucid_time_parse(const char *s, int64_t *out);
/* Formats as "YYYY-MM-DD HH:MM:SS" into buf (>= 20 bytes). */
void lucid_time_format(int64_t t, char *buf, size_t size);
/* Broken-down fields of a UTC instant. */
typedef struct lucid_tm {
    int year, month, day, hour, minute, second;
    int dayofweek; /* Monday = 0 .. Sunday = 6 (pandas' convention) */
    int dayofyear; /* 1 .. 366 */
    int isoweek;   /* 1 .. 53 */
} lucid_tm;
void lucid_time_split(int64_t t, lucid_tm *tm);

/* ---- string interning: equal strings get equal small ids ---- */
typedef struct lucid_strtab lucid_strtab;
lucid_strtab *lucid_strtab_new(void);
void lucid_strtab_free(lucid_strtab *tab);
/* Id of `s` (added if new), or -1 if out of memory. */
int32_t lucid_strtab_intern(lucid_strtab *tab, const char *s);
/* Id of `s` or -1 if absent. */
int32_t lucid_strtab_find(const lucid_strtab *tab, const char *s);
/* Equality of n bytes, inline: for the short names compared per row while
 * loading (a memcmp call cost more than the comparison).  Words, the last
 * one overlapping, so that no loop runs per byte (its exit mispredicted);
 * every load stays within the n bytes. */
static inline int lucid_bytes_equal(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        uint64_t x, y;
        for (size_t i = 0; i + 8 < n; i += 8) {
            memcpy(&x, a + i, 8);
            memcpy(&y, b + i, 8);
            if (x != y)
                return 0;
        }
        memcpy(&x, a + n - 8, 8);
        memcpy(&y, b + n - 8, 8);
        return x == y;
    }
    if (n >= 4) {
        uint32_t x1, y1, x2, y2;
        memcpy(&x1, a, 4);
        memcpy(&y1, b, 4);
        memcpy(&x2, a + n - 4, 4);
        memcpy(&y2, b + n - 4, 4);
        return ((x1 ^ y1) | (x2 ^ y2)) == 0;
    }
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}
/* The same for the n bytes at s (no NUL needed; n known saves a strlen). */
int32_t lucid_strtab_intern_n(lucid_strtab *tab, const char *s, size_t n);
int32_t lucid_strtab_find_n(const lucid_strtab *tab, const char *s, size_t n);
const char *lucid_strtab_get(const lucid_strtab *tab, int32_t id);
int32_t lucid_strtab_count(const lucid_strtab *tab);

/* A malloc'd copy of `s`, or NULL if out of memory. */
char *lucid_strdup(const char *s);
/* `s` without leading blanks and trailing blanks and line ends (edits s). */
char *lucid_trim(char *s);

/* ---- growable arrays ----
 * Grows *items (element size `size`) to hold at least `need` elements.
 * 0 on success, -1 if out of memory (the array is unchanged). */
int lucid_grow(void **items, size_t *cap, size_t need, size_t size);
/* The capacity is compared inline: most calls find room (a call per row
 * in the simulator's inner loops). */
#define LUCID_GROW(arr, cap, need)                                                                 \
    ((size_t)(need) <= (cap) ? 0 : lucid_grow((void **)&(arr), &(cap), (need), sizeof *(arr)))

/* The bits set in a mask (a node's GPUs).  Inline bit arithmetic: without
 * a popcount instruction in the target (the build does not ask for one)
 * __builtin_popcountll is a libgcc call, made for every row a placement or
 * an end touches (half a million on Venus with start-time predictions). */
static inline int32_t lucid_bits_set(uint64_t m)
{
    m = m - ((m >> 1) & 0x5555555555555555ull);
    m = (m & 0x3333333333333333ull) + ((m >> 2) & 0x3333333333333333ull);
    m = (m + (m >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (int32_t)((m * 0x0101010101010101ull) >> 56);
}

/* A hint to load memory that is about to be used (rw: 0 read, 1 write), for
 * per-job records of traces far larger than the cache; nothing where the
 * compiler has no such builtin.  A macro, not a function: GCC finds a
 * function made only of prefetches free of side effects and drops its calls. */
#if defined(__GNUC__)
#define LUCID_PREFETCH(p, rw) __builtin_prefetch((p), (rw))
#else
#define LUCID_PREFETCH(p, rw) ((void)(p))
#endif

/* Copies `src` (NULL = "") into dst[size] as valid UTF-8: a byte that does
 * not start a well-formed sequence (RFC 3629: no overlongs, surrogates or
 * code points above U+10FFFF) becomes '?', and the text is cut on a
 * character boundary, never inside one.  Returns the bytes written. */
size_t lucid_utf8_copy(char *dst, size_t size, const char *src);

#endif
