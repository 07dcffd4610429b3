/* decision.c — the rules of a scheduling decision that do not depend on
 * where the jobs live (sched.h, "queue order and the decision pass"): the
 * order of Lucid's two queues, and the pass that starts queued jobs in that
 * order with or without packing.  The simulator's policies call them on
 * their trace-indexed queue, lucidd's decision step (src/daemon/decide.c) on
 * the live jobs it read from Slurm: one implementation of each rule. */
#include <stdlib.h>

#include "lucid/sched.h"

lucid_queued lucid_queued_make(lucid_queue_order order, double priority, int32_t gpus,
                               uint32_t seq, uint32_t index)
{
    double key = order == LUCID_ORDER_FEWEST_GPUS ? (double)gpus : priority;
    return (lucid_queued){.key = key, .seq = seq, .index = index};
}

int lucid_queue_compare(const lucid_queued *a, const lucid_queued *b)
{
    if (a->key < b->key)
        return -1;
    if (b->key < a->key)
        return 1;
    /* Equal keys (or an unordered NaN priority): arrival order. */
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int compare_queued(const void *a, const void *b) { return lucid_queue_compare(a, b); }

void lucid_queue_sort(lucid_queued *jobs, size_t n)
{
    qsort(jobs, n, sizeof *jobs, compare_queued);
}

size_t lucid_start_in_order(size_t n, int packing, const lucid_start_hooks *hooks,
                            size_t *stopped_at)
{
    size_t started = 0;
    for (size_t i = 0; i < n; i++) {
        if (hooks->skip && hooks->skip(hooks->ctx, i))
            continue;
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
