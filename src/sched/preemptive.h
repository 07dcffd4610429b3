/* preemptive.h — scratch and quota pass shared by SRTF and Tiresias (internal). */
#ifndef LUCID_PREEMPTIVE_H
#define LUCID_PREEMPTIVE_H

#include <stddef.h>

#include "lucid/sched.h"

typedef struct lucid_sort_key {
    double key;
    size_t position; /* stable tie-break: position in the input order */
    int32_t job;
} lucid_sort_key;

typedef struct lucid_preemptive {
    int32_t *order, *prerun, *preempt;
    lucid_sort_key *keys;
    size_t cap_order, cap_keys, cap_prerun, cap_preempt;
} lucid_preemptive;

int lucid_preemptive_reserve(lucid_preemptive *p, size_t n);
void lucid_preemptive_free(lucid_preemptive *p);
/* Sorts keys[0..n) stably and writes the jobs to order[]. */
void lucid_preemptive_stable_sort(lucid_preemptive *p, size_t n);
/* The quota pass over order[0..n). */
void lucid_preemptive_apply(lucid_sched *s, lucid_preemptive *p, size_t n);

#endif
