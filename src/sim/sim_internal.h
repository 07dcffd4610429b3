/* sim_internal.h — pieces shared by the simulator's files (not public). */
#ifndef LUCID_SIM_INTERNAL_H
#define LUCID_SIM_INTERNAL_H

#include <stdint.h>

#include "lucid/sim.h"

/* The k-th smallest of v[0..n) (0-based, n > 0); reorders v so that what
 * precedes k is <= it and what follows is >= it (selection, O(n)). */
double lucid_select_kth(double *v, size_t n, size_t k);

/* The reference's look-ahead on the forecast (spec §4.5): rows whose time
 * (start + offset) is strictly greater than t; the first 5 if at least 6
 * remain, else all.  The reference filters its table in place, so the
 * first look after the last row is gone reads an empty table (NaN, which
 * compares false) and later looks return `when_empty`. */
typedef struct lucid_forecast_cursor {
    const lucid_forecast *fc;
    const double *values;
    int64_t start;
    size_t pos;      /* first row not yet dropped */
    int exhausted;   /* the table was seen empty */
    double when_empty;
} lucid_forecast_cursor;

void lucid_forecast_cursor_init(lucid_forecast_cursor *c, const lucid_forecast *fc,
                                const double *values, int64_t start, double when_empty);
double lucid_forecast_cursor_look(lucid_forecast_cursor *c, int64_t t);

/* Result of the profiling pass. */
typedef struct lucid_profile_log {
    int64_t *times;
    int32_t *deltas; /* +1: the profiler took a node; -1: gave it back */
    size_t count;
} lucid_profile_log;

/* Runs Lucid's profiling pass over all jobs, on working records of its own
 * (one lucid_jobrun per trace job), and sets *prof to a new array of each
 * job's profiling run (the caller frees it). */
int lucid_profile_pass(const lucid_sim_config *cfg, const lucid_sim_inputs *in,
                       const unsigned char *excluded, lucid_prof_run **prof,
                       lucid_profile_log *log, lucid_error *err);
void lucid_profile_log_free(lucid_profile_log *log);

/* An array of records whose prefix [0, done) is released: never read
 * again, its whole pages handed back to the system (release.c).  In
 * sanitizer builds the released records are poisoned, so reading one
 * fails loudly; lucid_released_end unpoisons them before the array is
 * freed. */
typedef struct lucid_released {
    unsigned char *base;
    size_t size;      /* bytes per record */
    size_t done;      /* records [0, done) are released */
    size_t page;
    uintptr_t given_to; /* pages below this address are handed back */
} lucid_released;

void lucid_released_init(lucid_released *r, void *base, size_t size);
/* Releases records [done, count) (nothing if count <= done). */
void lucid_released_upto(lucid_released *r, size_t count);
void lucid_released_end(lucid_released *r);

/* AddressSanitizer builds poison released records (release.c) and, in a
 * releasable array, records not set up yet. */
#if defined(__SANITIZE_ADDRESS__)
#define LUCID_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LUCID_ASAN 1
#endif
#endif

/* An array of n records on whole pages of its own, whose pages are handed
 * back one by one: a page goes once every record overlapping it has ended
 * (counted in `ended`) and none is pinned (named by a structure at the
 * last look).  Released pages are poisoned in sanitizer builds.
 *
 * A releasable array is a mapping of its own, and may recycle what it
 * hands back (lucid_record_pages_recycle): a released stretch's pages are
 * moved, backed as they are, to just ahead of the records set up so far
 * (records are set up roughly in index order, each written whole), so that
 * setting up the next records faults in no fresh page; the stretch moved
 * from stays mapped, empty (release.c). */
typedef struct lucid_record_pages {
    unsigned char *base; /* page-aligned */
    size_t size, n, page, npages;
    uint32_t *ended;   /* per page: records overlapping it that ended (64 KiB
                        * pages hold ~600 records: more than a byte counts) */
    uint8_t *pinned;   /* per page: a record overlapping it is held */
    uint8_t *released; /* per page: 0, RECORD_PAGE_RELEASED or _LOST */
    size_t mapped;     /* releasable: bytes mapped at base, else 0 */
    size_t set_end;    /* records from set_end on were never set up */
    /* Recycling (0 pool_max: off).  Pages [.., ahead_end) up to pool_max
     * past the set-up frontier hold moved-in pages.  origin[p]: the page
     * now at p was mapped first at address origin[p] x page (the kernel
     * keeps pages in one VMA only where those addresses are consecutive);
     * maps: the VMAs the array is split into by that count, kept at most
     * maps_max (moves that could pass it hand the pages back instead). */
    size_t pool_max, ahead_end;
    uintptr_t *origin;
    size_t maps, maps_max;
    size_t recycled; /* pages moved in so far (ahead, or adopted) */
} lucid_record_pages;

enum { RECORD_PAGE_RELEASED = 1, RECORD_PAGE_LOST = 2 };

/* Allocates the array (base); 0, or -1 when out of memory.  Not
 * `releasable`: a plain array (no pages to count or hand back). */
int lucid_record_pages_alloc(lucid_record_pages *r, size_t size, size_t n, int releasable);
/* Releasable arrays: from now on, released stretches are moved ahead of the
 * set-up frontier while at most pool_bytes lie there unused and the array
 * stays within max_maps mappings; 0, or -1 when out of memory (recycling
 * stays off, the array works as before). */
int lucid_record_pages_recycle(lucid_record_pages *r, size_t pool_bytes, size_t max_maps);
/* The mappings all recycling arrays of a process may split into
 * together: a quarter of the system's vm.max_map_count. */
size_t lucid_record_pages_maps_budget(void);
/* A finished array's backed pages, kept for the next array of the same
 * worker: *spare takes r's mapping (the previous spare is freed) and r is
 * freed.  Only recycling arrays are kept; others are just freed. */
void lucid_record_pages_keep(lucid_record_pages *spare, lucid_record_pages *r);
/* Moves the backed pages of *spare to the front of r, a recycling array
 * with nothing set up yet, where its first records will be set up, and
 * frees *spare (what does not fit or move is unmapped). */
void lucid_record_pages_adopt(lucid_record_pages *r, lucid_record_pages *spare);
/* lucid_sim_config.release_min_bytes' default: 16 MiB; 0 in sanitizer
 * builds. */
size_t lucid_release_min_bytes_default(void);
void lucid_record_pages_free(lucid_record_pages *r);
#ifdef LUCID_ASAN
void lucid_record_pages_unpoison(const lucid_record_pages *r, size_t i);
#endif
/* Record i is about to be set up: written whole before it is read (its
 * bytes may be a recycled page's).  Moves the set-up frontier. */
static inline void lucid_record_pages_set(lucid_record_pages *r, size_t i)
{
    if (i >= r->set_end)
        r->set_end = i + 1;
#ifdef LUCID_ASAN
    lucid_record_pages_unpoison(r, i);
#endif
}
void lucid_record_pages_note_ended(lucid_record_pages *r, size_t i);
void lucid_record_pages_pin(lucid_record_pages *r, size_t i);
/* The records overlapping page p: [*first, *end). */
void lucid_record_pages_records(const lucid_record_pages *r, size_t p, size_t *first, size_t *end);
int lucid_record_pages_releasable(const lucid_record_pages *r, size_t p);
/* Releases pages [from, to): recycled as far as the pool takes them, the
 * rest handed back (madvise). */
void lucid_record_pages_release(lucid_record_pages *r, size_t from, size_t to);

#endif
