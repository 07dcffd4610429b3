/* release.c — handing back the working records of jobs that are done with
 * (sim_internal.h: lucid_released, a prefix at a time, for the profiler;
 * lucid_record_pages, page by page, for a VC's run).  Whole pages of the released stretch go
 * back to the system (madvise(MADV_DONTNEED): the memory stays mapped, and a
 * read of it would see zeros); in sanitizer builds the stretch is also
 * poisoned byte for byte, so that any later read of a released record fails
 * loudly instead of reading zeros or a stale copy: the release points are
 * audited by every test that runs under AddressSanitizer. */
#define _DEFAULT_SOURCE /* madvise */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define LUCID_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LUCID_ASAN 1
#endif
#endif
#ifdef LUCID_ASAN
#include <sanitizer/asan_interface.h>
#endif

void lucid_released_init(lucid_released *r, void *base, size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    r->base = (unsigned char *)base;
    r->size = size;
    r->page = page > 0 ? (size_t)page : 4096;
    r->done = 0;
    r->given_to = ((uintptr_t)base + r->page - 1) / r->page * r->page;
}

void lucid_released_upto(lucid_released *r, size_t count)
{
    if (!r->base || count <= r->done)
        return;
#ifdef LUCID_ASAN
    ASAN_POISON_MEMORY_REGION(r->base + r->done * r->size, (count - r->done) * r->size);
#endif
    r->done = count;
#ifdef MADV_DONTNEED
    uintptr_t end = (uintptr_t)(r->base + count * r->size) / r->page * r->page;
    if (end > r->given_to && madvise((void *)r->given_to, end - r->given_to, MADV_DONTNEED) == 0)
        r->given_to = end;
#endif
}

void lucid_released_end(lucid_released *r)
{
#ifdef LUCID_ASAN
    if (r->base && r->done > 0)
        ASAN_UNPOISON_MEMORY_REGION(r->base, r->done * r->size);
#endif
    r->base = NULL;
    r->done = 0;
}

/* ---------------- page by page (a VC's run) ---------------- */

size_t lucid_release_min_bytes_default(void)
{
#ifdef LUCID_ASAN
    return 0; /* every run releases, so every sanitizer run audits the release points */
#else
    return (size_t)16 << 20;
#endif
}

int lucid_record_pages_alloc(lucid_record_pages *r, size_t size, size_t n, int releasable)
{
    memset(r, 0, sizeof *r);
    long page = sysconf(_SC_PAGESIZE);
    r->page = page > 0 ? (size_t)page : 4096;
    r->size = size;
    r->n = n;
    if (!releasable) { /* a plain array: no pages counted, none handed back */
        r->base = malloc((n + 1) * size);
        return r->base ? 0 : -1;
    }
    r->npages = (n * size + r->page - 1) / r->page;
    void *base = NULL;
    if (posix_memalign(&base, r->page, (r->npages + 1) * r->page) != 0)
        return -1;
    r->base = base;
    r->ended = calloc(r->npages + 1, sizeof *r->ended);
    r->pinned = calloc(r->npages + 1, 1);
    r->released = calloc(r->npages + 1, 1);
    if (!r->ended || !r->pinned || !r->released) {
        lucid_record_pages_free(r);
        return -1;
    }
    return 0;
}

void lucid_record_pages_free(lucid_record_pages *r)
{
#ifdef LUCID_ASAN
    if (r->base && r->npages > 0)
        ASAN_UNPOISON_MEMORY_REGION(r->base, (r->npages + 1) * r->page);
#endif
    free(r->base);
    free(r->ended);
    free(r->pinned);
    free(r->released);
    memset(r, 0, sizeof *r);
}

void lucid_record_pages_note_ended(lucid_record_pages *r, size_t i)
{
    if (r->npages == 0)
        return;
    size_t last = ((i + 1) * r->size - 1) / r->page;
    for (size_t p = i * r->size / r->page; p <= last; p++)
        r->ended[p]++;
}

void lucid_record_pages_pin(lucid_record_pages *r, size_t i)
{
    if (i >= r->n || r->npages == 0)
        return;
    size_t last = ((i + 1) * r->size - 1) / r->page;
    for (size_t p = i * r->size / r->page; p <= last; p++)
        r->pinned[p] = 1;
}

void lucid_record_pages_records(const lucid_record_pages *r, size_t p, size_t *first, size_t *end)
{
    *first = p * r->page / r->size;
    *end = ((p + 1) * r->page + r->size - 1) / r->size;
    if (*end > r->n)
        *end = r->n;
}

int lucid_record_pages_releasable(const lucid_record_pages *r, size_t p)
{
    if (r->released[p] || r->pinned[p])
        return 0;
    size_t first, end;
    lucid_record_pages_records(r, p, &first, &end);
    return end > first && r->ended[p] == end - first;
}

void lucid_record_pages_release(lucid_record_pages *r, size_t from, size_t to)
{
    if (to <= from)
        return;
    for (size_t p = from; p < to; p++)
        r->released[p] = 1;
#ifdef LUCID_ASAN
    ASAN_POISON_MEMORY_REGION(r->base + from * r->page, (to - from) * r->page);
#endif
#ifdef MADV_DONTNEED
    madvise(r->base + from * r->page, (to - from) * r->page, MADV_DONTNEED);
#endif
}
