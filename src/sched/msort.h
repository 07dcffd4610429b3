/* msort.h — a merge sort with its comparison inline, for the small arrays
 * the planners sort many times (the running jobs' ends, the ratio table's
 * newest values): qsort's call through a function pointer per comparison
 * was most of each sort.
 *
 * LUCID_MERGE_SORT(name, type, less) defines
 *     static void name(type *v, type *tmp, size_t n)
 * sorting v[0..n) by less(const type *a, const type *b) (a before b),
 * stable, through tmp (room for n): insertion sort on runs of 16, then
 * bottom-up merges. */
#ifndef LUCID_MSORT_H
#define LUCID_MSORT_H

#include <stddef.h>
#include <string.h>

#define LUCID_MERGE_SORT(name, type, less)                                                       \
    static void name(type *v, type *tmp, size_t n)                                               \
    {                                                                                            \
        enum { RUN = 16 };                                                                       \
        for (size_t lo = 0; lo < n; lo += RUN) {                                                 \
            size_t hi = lo + RUN < n ? lo + RUN : n;                                             \
            for (size_t i = lo + 1; i < hi; i++) {                                               \
                type x = v[i];                                                                   \
                size_t j = i;                                                                    \
                while (j > lo && less(&x, &v[j - 1])) {                                          \
                    v[j] = v[j - 1];                                                             \
                    j--;                                                                         \
                }                                                                                \
                v[j] = x;                                                                        \
            }                                                                                    \
        }                                                                                        \
        type *src = v, *dst = tmp;                                                               \
        for (size_t width = RUN; width < n; width *= 2) {                                        \
            for (size_t lo = 0; lo < n; lo += 2 * width) {                                       \
                size_t mid = lo + width < n ? lo + width : n;                                    \
                size_t hi = lo + 2 * width < n ? lo + 2 * width : n;                             \
                size_t i = lo, j = mid, k = lo;                                                  \
                while (i < mid && j < hi)                                                        \
                    dst[k++] = less(&src[j], &src[i]) ? src[j++] : src[i++];                     \
                while (i < mid)                                                                  \
                    dst[k++] = src[i++];                                                         \
                while (j < hi)                                                                   \
                    dst[k++] = src[j++];                                                         \
            }                                                                                    \
            type *swap = src;                                                                    \
            src = dst;                                                                           \
            dst = swap;                                                                          \
        }                                                                                        \
        if (src != v)                                                                            \
            memcpy(v, src, n * sizeof *v);                                                       \
    }

#endif
