/* targets.c — what the fuzzers exercise: the trace reader (and through it
 * the CSV reader and number/date parsing), and the experiment-file parser. */
#include "targets.h"

#include <stdlib.h>
#include <string.h>

#include "lucid/experiment.h"
#include "lucid/trace.h"

int lucid_fuzz_trace(const uint8_t *data, size_t size)
{
    lucid_vcs vcs = {0};
    lucid_vcs_add(&vcs, "a", 2);
    lucid_vcs_add(&vcs, "vcA", 1);
    lucid_trace trace;
    lucid_error err;
    if (lucid_trace_load_mem(&trace, "fuzz.csv", (const char *)data, size, &vcs, &err) == 0) {
        /* Exercise the id index on what was accepted. */
        for (size_t i = 0; i < trace.njobs; i++)
            if (lucid_trace_find(&trace, trace.jobs[i].job_id) < 0)
                abort();
        lucid_trace_free(&trace);
    }
    lucid_vcs_free(&vcs);
    return 0;
}

int lucid_fuzz_experiment(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    lucid_error err;
    lucid_experiment_load_mem(&exp, "fuzz.ini", "/base", text, &err);
    lucid_experiment_free(&exp);
    free(text);
    return 0;
}
