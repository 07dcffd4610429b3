/* carry.c — the trace's optional descriptive columns (user, state,
 * time_limit, gpu_type) appended to jobs-<policy>.csv, so a result row says
 * whose job it was, how it originally ended and what it asked for.  Only
 * the columns the trace has are written; kept apart from report.c's writer,
 * which calls these two functions. */
#include <stdio.h>

#include "lucid/csv.h"
#include "lucid/sim.h"

static void put_text(FILE *out, const lucid_trace *trace, int32_t id)
{
    fputc(',', out);
    if (id >= 0 && trace->strings)
        lucid_csv_write_field(out, lucid_strtab_get(trace->strings, id));
}

void lucid_carry_header(FILE *out, const lucid_trace *trace)
{
    if (trace->has_user)
        fputs(",user", out);
    if (trace->has_state)
        fputs(",state", out);
    if (trace->has_time_limit)
        fputs(",time_limit", out);
    if (trace->has_gpu_type)
        fputs(",gpu_type", out);
}

void lucid_carry_row(FILE *out, const lucid_trace *trace, const lucid_job *job)
{
    if (trace->has_user)
        put_text(out, trace, job->user);
    if (trace->has_state)
        put_text(out, trace, job->state);
    if (trace->has_time_limit) {
        fputc(',', out);
        if (job->time_limit >= 0)
            fprintf(out, "%lld", (long long)job->time_limit);
    }
    if (trace->has_gpu_type)
        put_text(out, trace, job->gpu_type);
}
