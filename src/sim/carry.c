/* carry.c — the trace's optional descriptive columns (user, state,
 * time_limit, gpu_type) appended to jobs-<policy>.csv, so a result row says
 * whose job it was, how it originally ended and what it asked for.  Only
 * the columns the trace has are written.  The header is written here; the
 * rows go through report.c's row buffer (carry_row there), where they cost
 * no stdio call per field. */
#include <stdio.h>

#include "lucid/sim.h"

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
