/* capacity.c — Lucid's profiler at the baselines' capacity (sim.h,
 * lucid_profiler_take): which VCs give the profiler its nodes, so that
 * Lucid's main cluster plus its profiler hold the GPUs the other policies
 * get.  One rule for `lucid tune`, `trace import` and `trace synth`. */
#include "lucid/sim.h"

int lucid_profiler_take(const int32_t *nodes, const int32_t *min_nodes, int32_t nvcs,
                        int32_t want, int32_t *taken)
{
    int32_t sum = 0;
    for (int32_t v = 0; v < nvcs; v++)
        sum += taken[v];
    while (sum < want) {
        /* the VC with the most nodes left that still holds its largest job
         * (ties: the first) */
        int32_t pick = -1;
        for (int32_t v = 0; v < nvcs; v++)
            if (nodes[v] - taken[v] - 1 >= min_nodes[v] &&
                (pick < 0 || nodes[v] - taken[v] > nodes[pick] - taken[pick]))
                pick = v;
        if (pick < 0)
            return -1;
        taken[pick]++;
        sum++;
    }
    while (sum > want) {
        /* back to the VC that gave the most (ties: the last) */
        int32_t pick = -1;
        for (int32_t v = 0; v < nvcs; v++)
            if (taken[v] > 0 && (pick < 0 || taken[v] >= taken[pick]))
                pick = v;
        taken[pick]--;
        sum--;
    }
    return 0;
}
