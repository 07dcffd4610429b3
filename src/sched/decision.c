/* decision.c — the rules of a scheduling decision that do not depend on
 * where the jobs live (sched.h, "queue order and the decision pass"): the
 * order of Lucid's two queues, and the pass that starts queued jobs in that
 * order with or without packing.  The simulator's policies call them on
 * their trace-indexed queue, lucidd's decision step (src/daemon/decide.c) on
 * the live jobs it read from Slurm: one implementation of each rule. */
#include <stdlib.h>

#include "lucid/sched.h"

int lucid_queue_compare(lucid_queue_order order, const lucid_queued *a, const lucid_queued *b)
{
    if (order == LUCID_ORDER_FEWEST_GPUS) {
        if (a->gpus != b->gpus)
            return a->gpus < b->gpus ? -1 : 1;
    } else if (a->priority < b->priority) {
        return -1;
    } else if (b->priority < a->priority) {
        return 1;
    }
    /* Equal keys (or an unordered NaN priority): arrival order. */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int compare_by_priority(const void *a, const void *b)
{
    return lucid_queue_compare(LUCID_ORDER_PRIORITY, a, b);
}

static int compare_by_gpus(const void *a, const void *b)
{
    return lucid_queue_compare(LUCID_ORDER_FEWEST_GPUS, a, b);
}

void lucid_queue_sort(lucid_queue_order order, lucid_queued *jobs, size_t n)
{
    qsort(jobs, n, sizeof *jobs,
          order == LUCID_ORDER_FEWEST_GPUS ? compare_by_gpus : compare_by_priority);
}

size_t lucid_start_in_order(size_t n, int packing, const lucid_start_hooks *hooks,
                            size_t *stopped_at)
{
    size_t started = 0;
    for (size_t i = 0; i < n; i++) {
        if ((packing && hooks->pack && hooks->pack(hooks->ctx, i)) ||
            hooks->place(hooks->ctx, i)) {
            started++;
        } else if (!packing) {
            /* Head of line: the job that does not fit blocks the rest. */
            *stopped_at = i;
            return started;
        }
    }
    *stopped_at = n;
    return started;
}
