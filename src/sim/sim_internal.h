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

/* An array of n records on whole pages of its own, whose pages are handed
 * back one by one: a page goes once every record overlapping it has ended
 * (counted in `ended`) and none is pinned (named by a structure at the
 * last look).  Released pages are poisoned in sanitizer builds. */
typedef struct lucid_record_pages {
    unsigned char *base; /* page-aligned */
    size_t size, n, page, npages;
    uint32_t *ended;   /* per page: records overlapping it that ended (64 KiB
                        * pages hold ~600 records: more than a byte counts) */
    uint8_t *pinned;   /* per page: a record overlapping it is held */
    uint8_t *released; /* per page */
} lucid_record_pages;

/* Allocates the array (base); 0, or -1 when out of memory.  Not
 * `releasable`: a plain array (no pages to count or hand back). */
int lucid_record_pages_alloc(lucid_record_pages *r, size_t size, size_t n, int releasable);
/* lucid_sim_config.release_min_bytes' default: 16 MiB; 0 in sanitizer
 * builds. */
size_t lucid_release_min_bytes_default(void);
void lucid_record_pages_free(lucid_record_pages *r);
void lucid_record_pages_note_ended(lucid_record_pages *r, size_t i);
void lucid_record_pages_pin(lucid_record_pages *r, size_t i);
/* The records overlapping page p: [*first, *end). */
void lucid_record_pages_records(const lucid_record_pages *r, size_t p, size_t *first, size_t *end);
int lucid_record_pages_releasable(const lucid_record_pages *r, size_t p);
/* Releases pages [from, to). */
void lucid_record_pages_release(lucid_record_pages *r, size_t from, size_t to);

#endif
