/* release.c — handing back the working records of jobs that are done with
 * (sim_internal.h: lucid_released, a prefix at a time, for the profiler;
 * lucid_record_pages, page by page, for a VC's run).  Whole pages of the
 * released stretch go back to the system (madvise(MADV_DONTNEED): the
 * memory stays mapped, and a read of it would see zeros); in sanitizer
 * builds the stretch is also poisoned byte for byte, so that any later read
 * of a released record fails loudly instead of reading zeros or a stale
 * copy: the release points are audited by every test that runs under
 * AddressSanitizer.
 *
 * Recycling (lucid_record_pages_recycle).  A page handed back and a fresh
 * one faulted in for the next records cost the kernel a free, a zeroing
 * and a fault each — on a VM that hands freed memory back to its host, a
 * fault in the host too — and a 10M-job run sets up 2.5 GB of records
 * (docs/benchmarks.md).  So a releasable array is a mapping of its own, and
 * a released stretch's pages are moved, backed as they are (mremap: the
 * page-table entries move, no page is freed or cleared), to the records
 * just past the set-up frontier (set_end, moved by lucid_record_pages_set):
 * records are set up roughly in index order and every record is written
 * whole when it is set up (a struct copy, a memset), so what those pages
 * held does not matter and the next set-ups find them backed.  The
 * stretch moved from stays mapped, empty (MREMAP_DONTUNMAP): a read of it
 * sees zeros, as after madvise, and in sanitizer builds it is poisoned
 * like any released record (records not set up yet are poisoned too, so a
 * read of a recycled page's stale bytes fails as loudly).  It must not
 * become a hole: free address space inside the array, where the kernel
 * may place any thread's next mapping, which unmapping the array would
 * then destroy.  At most pool_max moved pages wait past the frontier, so
 * peak memory does not grow by more; what does not fit is handed back as
 * before, and so is everything when a move fails.  When a VC's run ends,
 * its arrays' backed pages go to the front of the same worker's next
 * run's arrays (lucid_record_pages_keep, _adopt) instead of back to the
 * system.
 *
 * Moved pages split the mapping into VMAs: the kernel keeps pages in one
 * VMA only where they are adjacent and were mapped first at adjacent
 * addresses (an anonymous VMA's page offset moves with its pages), which
 * `origin` models; emptied pages that came from elsewhere are mapped afresh
 * so they merge back (remap_fresh).  The model's count stays at most
 * maps_max, a share of vm.max_map_count; moves that could pass it hand the
 * pages back instead. */
#define _GNU_SOURCE /* mremap, MREMAP_FIXED, MREMAP_DONTUNMAP */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim_internal.h"

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4 /* Linux 5.7; older C libraries lack the name */
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
    /* A mapping of its own, not the allocator's memory: recycling remaps
     * parts of it. */
    size_t bytes = (r->npages + 1) * r->page;
    void *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        r->npages = 0;
        return -1;
    }
    r->base = base;
    r->mapped = bytes;
    r->ended = calloc(r->npages + 1, sizeof *r->ended);
    r->pinned = calloc(r->npages + 1, 1);
    r->released = calloc(r->npages + 1, 1);
    if (!r->ended || !r->pinned || !r->released) {
        lucid_record_pages_free(r);
        return -1;
    }
#ifdef LUCID_ASAN
    ASAN_POISON_MEMORY_REGION(r->base, n * size); /* not set up yet */
#endif
    return 0;
}

int lucid_record_pages_recycle(lucid_record_pages *r, size_t pool_bytes, size_t max_maps)
{
    if (!r->mapped)
        return 0; /* a plain array: nothing to recycle */
    if (!r->origin) {
        r->origin = malloc((r->npages + 1) * sizeof *r->origin);
        if (!r->origin)
            return -1;
        uintptr_t first = (uintptr_t)r->base / r->page;
        for (size_t p = 0; p <= r->npages; p++)
            r->origin[p] = first + p;
        r->maps = 1;
    }
    r->pool_max = pool_bytes / r->page;
    r->maps_max = max_maps;
    return 0;
}

size_t lucid_record_pages_maps_budget(void)
{
    long max = 65530; /* Linux's default */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &max) != 1)
            max = 65530;
        fclose(f);
    }
    return max > 0 ? (size_t)max / 4 : 0;
}

void lucid_record_pages_free(lucid_record_pages *r)
{
    /* The whole mapping, but for pages lost to a failed remap (remap_fresh:
     * they may be another mapping's now). */
    for (size_t p = 0; r->mapped && p <= r->npages;) {
        size_t end = p;
        while (end <= r->npages && !(r->released && r->released[end] == RECORD_PAGE_LOST))
            end++;
        if (end > p) {
#ifdef LUCID_ASAN
            /* the next mapping here is not ours */
            ASAN_UNPOISON_MEMORY_REGION(r->base + p * r->page, (end - p) * r->page);
#endif
            munmap(r->base + p * r->page, (end - p) * r->page);
        }
        p = end + 1;
    }
    if (!r->mapped)
        free(r->base);
    free(r->ended);
    free(r->pinned);
    free(r->released);
    free(r->origin);
    memset(r, 0, sizeof *r);
}

#ifdef LUCID_ASAN
void lucid_record_pages_unpoison(const lucid_record_pages *r, size_t i)
{
    if (r->mapped && i < r->n)
        ASAN_UNPOISON_MEMORY_REGION(r->base + i * r->size, r->size);
}
#endif

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

/* Whether page q (<= npages) starts a VMA of the array: the kernel keeps
 * adjacent pages of an anonymous mapping in one VMA where they were
 * mapped first at adjacent addresses (the VMA's page offset). */
static int starts_map(const lucid_record_pages *r, size_t q)
{
    return q == 0 || r->origin[q - 1] + 1 != r->origin[q];
}

/* The VMAs starting at pages [from, to] (to included: whether it starts
 * one depends on the page before it). */
static size_t maps_in(const lucid_record_pages *r, size_t from, size_t to)
{
    size_t count = 0;
    for (size_t q = from; q <= to && q <= r->npages; q++)
        count += (size_t)starts_map(r, q);
    return count;
}

/* Moves len backed pages at src, whose first mappings were at src_origin
 * (a run the kernel keeps in one VMA), to page dest of r: 0, or -1 when the
 * kernel refuses.  MREMAP_DONTUNMAP leaves the source mapped and empty:
 * a hole there would be free address space, another mapping (any
 * thread's) could be placed in it, and freeing the array would unmap that
 * too. */
static int move_in(lucid_record_pages *r, size_t dest, unsigned char *src,
                   const uintptr_t *src_origin, size_t len)
{
    size_t before = maps_in(r, dest, dest + len);
    if (mremap(src, len * r->page, len * r->page, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
               r->base + dest * r->page) == MAP_FAILED)
        return -1; /* e.g. ENOMEM at the map limit, EINVAL before Linux 5.7 */
    for (size_t k = 0; k < len; k++)
        r->origin[dest + k] = src_origin[k];
    r->maps = r->maps + maps_in(r, dest, dest + len) - before;
    r->recycled += len;
    return 0;
}

/* Pages [p, p + len) of r, emptied by a move: those that came from
 * elsewhere are mapped afresh (MAP_FIXED over our own mapping, in one
 * step), so that they join their neighbours' VMA again instead of staying
 * a VMA of their own.  Should that fail, the range may have become a hole:
 * it is marked lost, never unmapped by us again. */
static void remap_fresh(lucid_record_pages *r, size_t p, size_t len)
{
    uintptr_t first = (uintptr_t)r->base / r->page;
    size_t k = 0;
    while (k < len) {
        if (r->origin[p + k] == first + p + k) {
            k++;
            continue;
        }
        size_t from = p + k;
        while (k < len && r->origin[p + k] != first + p + k)
            k++;
        size_t to = p + k, before = maps_in(r, from, to);
        if (mmap(r->base + from * r->page, (to - from) * r->page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
            memset(r->released + from, RECORD_PAGE_LOST, to - from);
            continue;
        }
        for (size_t q = from; q < to; q++)
            r->origin[q] = first + q;
        r->maps = r->maps + maps_in(r, from, to) - before;
    }
}

/* A move adds at most two VMAs where it lands (the stretch, the rest of
 * the VMA it lands in) and remapping its source at most two. */
#define MOVE_MAPS 4

static void hand_back(lucid_record_pages *r, size_t from, size_t to)
{
#ifdef MADV_DONTNEED
    if (to > from)
        madvise(r->base + from * r->page, (to - from) * r->page, MADV_DONTNEED);
#endif
}

/* Runs of fewer pages are handed back, not moved: a move costs a system
 * call or two, more than the faults it saves on a page or two, and each
 * moved run can be a VMA of its own for as long as it lives.  Its pages
 * keep their page offset, so runs only get shorter as they are moved on:
 * moving every run, 10,000 of the 13,400 moves of a 1M-job SJF run were
 * of 1-3 pages (docs/benchmarks.md). */
#define MOVE_MIN_PAGES 8

/* Moves released pages [from, to) past the set-up frontier, in runs the
 * kernel keeps in one VMA (a move across VMAs fails before Linux 6.17), as
 * far as the pool takes them; hands back the rest. */
static void recycle(lucid_record_pages *r, size_t from, size_t to)
{
    /* no record is set up from page `frontier` on */
    size_t frontier = (r->set_end * r->size + r->page - 1) / r->page;
    if (to > frontier) { /* a record released before it was set up: no telling what is ahead */
        hand_back(r, from, to);
        return;
    }
    size_t dest = r->ahead_end > frontier ? r->ahead_end : frontier;
    size_t waiting = dest - frontier, p = from, given = from; /* [given, p): to hand back */
    while (p < to) {
        size_t room = r->pool_max > waiting ? r->pool_max - waiting : 0, len = 1;
        if (room > r->npages - dest)
            room = r->npages - dest;
        if (room < MOVE_MIN_PAGES || r->maps + MOVE_MAPS > r->maps_max)
            break;
        while (p + len < to && len < room && r->origin[p + len] == r->origin[p] + len)
            len++;
        if (len < MOVE_MIN_PAGES) {
            p += len;
            continue;
        }
        if (move_in(r, dest, r->base + p * r->page, r->origin + p, len) < 0)
            break;
        hand_back(r, given, p);
        remap_fresh(r, p, len);
        p += len;
        given = p;
        dest += len;
        waiting += len;
        r->ahead_end = dest;
    }
    hand_back(r, given, to);
}

void lucid_record_pages_release(lucid_record_pages *r, size_t from, size_t to)
{
    if (to <= from)
        return;
#ifdef LUCID_ASAN
    ASAN_POISON_MEMORY_REGION(r->base + from * r->page, (to - from) * r->page);
#endif
    for (size_t q = from; q < to; q++)
        r->released[q] = RECORD_PAGE_RELEASED;
    if (r->pool_max > 0)
        recycle(r, from, to);
    else
        hand_back(r, from, to);
}

void lucid_record_pages_keep(lucid_record_pages *spare, lucid_record_pages *r)
{
    lucid_record_pages_free(spare);
    if (!r->origin) {
        lucid_record_pages_free(r);
        return;
    }
    *spare = *r;
    memset(r, 0, sizeof *r);
}

/* Whether the spare's page p is backed: set up or moved in, and not
 * released since. */
static int spare_backed(const lucid_record_pages *spare, size_t p)
{
    size_t frontier = (spare->set_end * spare->size + spare->page - 1) / spare->page;
    return spare->released[p] == 0 && (p < frontier || p < spare->ahead_end);
}

void lucid_record_pages_adopt(lucid_record_pages *r, lucid_record_pages *spare)
{
    size_t p = 0;
    while (r->origin && r->set_end == 0 && spare->mapped && p < spare->npages &&
           r->ahead_end < r->npages && r->maps + MOVE_MAPS <= r->maps_max) {
        if (!spare_backed(spare, p)) {
            p++;
            continue;
        }
        size_t len = 1, room = r->npages - r->ahead_end;
        while (p + len < spare->npages && len < room && spare_backed(spare, p + len) &&
               spare->origin[p + len] == spare->origin[p] + len)
            len++;
        if (len < MOVE_MIN_PAGES) { /* as in recycle */
            p += len;
            continue;
        }
        if (move_in(r, r->ahead_end, spare->base + p * spare->page, spare->origin + p, len) < 0)
            break;
        r->ahead_end += len;
        p += len;
    }
    lucid_record_pages_free(spare);
}
