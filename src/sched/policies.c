/* policies.c — the table of scheduling policies: one row per policy file. */
#include <string.h>

#include "lucid/sched.h"

static const lucid_policy_ops *const policies[] = {
    &lucid_policy_fifo, &lucid_policy_sjf,      &lucid_policy_srtf,
    &lucid_policy_qssf, &lucid_policy_tiresias, &lucid_policy_lucid, NULL};

const lucid_policy_ops *const *lucid_policy_list(void) { return policies; }

/* Baselines outside the paper's tables: run when named. */
static const lucid_policy_ops *const named_only[] = {&lucid_policy_slurm, NULL};

const lucid_policy_ops *lucid_policy_find(const char *name)
{
    for (int i = 0; policies[i]; i++)
        if (strcmp(policies[i]->name, name) == 0)
            return policies[i];
    for (int i = 0; named_only[i]; i++)
        if (strcmp(named_only[i]->name, name) == 0)
            return named_only[i];
    return NULL;
}
