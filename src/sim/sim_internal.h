/* sim_internal.h — pieces shared by the simulator's files (not public). */
#ifndef LUCID_SIM_INTERNAL_H
#define LUCID_SIM_INTERNAL_H

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

#endif
