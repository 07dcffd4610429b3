/* targets.c — what the fuzzers exercise: the trace reader (and through it
 * the CSV reader and number/date parsing) followed by a simulation of what
 * it accepted, the experiment-file parser, the trace importers' JSON
 * (Philly) and sacct readers, and lucidd's reader of sacctmgr's limits. */
#include "targets.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/experiment.h"
#include "lucid/import.h"
#include "lucid/sim.h"
#include "lucid/trace.h"
#include "../src/daemon/limits.h"

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
        /* Simulate what was accepted: extreme times and durations must not
         * overflow anywhere (run under UBSan); every simulated job ends
         * after it starts, and not before it was submitted. */
        const lucid_policy_ops *policies[] = {&lucid_policy_fifo, &lucid_policy_sjf,
                                              &lucid_policy_srtf, &lucid_policy_tiresias};
        lucid_sim_result results[4];
        lucid_sim_config cfg;
        lucid_sim_config_defaults(&cfg);
        cfg.threads = 1;
        cfg.skip_oversized = 1;
        cfg.sem = lucid_semantics_reference();
        lucid_sim_inputs in = {.trace = &trace, .vcs = &vcs};
        if (lucid_simulate(&cfg, &in, policies, 4, results, NULL, NULL, &err) == 0) {
            for (int p = 0; p < 4; p++) {
                for (size_t i = 0; i < trace.njobs; i++) {
                    const lucid_jobresult *r = &results[p].run[i];
                    if (!results[p].excluded[i] &&
                        (r->start_time < trace.jobs[i].submit_time || r->end_time <= r->start_time ||
                         r->end_time - r->start_time < trace.jobs[i].duration))
                        abort();
                }
                lucid_sim_result_free(&results[p]);
            }
        }
        lucid_trace_free(&trace);
    }
    lucid_vcs_free(&vcs);
    return 0;
}

/* The input as a C string (malloc'ed), or NULL out of memory. */
static char *nul_terminated(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text) {
        memcpy(text, data, size);
        text[size] = '\0';
    }
    return text;
}

int lucid_fuzz_experiment(const uint8_t *data, size_t size)
{
    char *text = nul_terminated(data, size);
    if (!text)
        return 0;
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    lucid_error err;
    lucid_experiment_load_mem(&exp, "fuzz.ini", "/base", text, &err);
    lucid_experiment_free(&exp);
    free(text);
    return 0;
}

/* Reads with one importer over the bytes, then runs the shared rules and
 * writes the trace to a discarded stream, so every accepted job is used. */
static int fuzz_import(const uint8_t *data, size_t size, const char *format,
                       int (*read)(lucid_import *, FILE *, const char *,
                                   const lucid_import_options *, lucid_error *),
                       const lucid_import_options *opt)
{
    if (size == 0)
        return 0;
    FILE *f = fmemopen((void *)(uintptr_t)data, size, "r");
    if (!f)
        return 0;
    lucid_import imp;
    lucid_import_init(&imp, lucid_import_find(format));
    lucid_error err;
    lucid_import_window win = {INT64_MIN, INT64_MAX, INT64_MIN};
    if (read(&imp, f, "fuzz", opt, &err) == 0 && lucid_import_finish(&imp, &win, &err) == 0) {
        FILE *out = fopen("/dev/null", "w");
        if (out) {
            lucid_import_write_trace(&imp, &win, out);
            lucid_import_write_vcs(&imp, out);
            fclose(out);
        }
    }
    lucid_import_free(&imp);
    fclose(f);
    return 0;
}

int lucid_fuzz_philly(const uint8_t *data, size_t size)
{
    lucid_import_options opt = {.since = INT64_MIN, .until = INT64_MAX};
    /* The first byte picks the attempts mode, so all three are exercised. */
    static const char *const modes[] = {"sum", "span", "each"};
    opt.attempts = modes[size ? data[0] % 3 : 0];
    return fuzz_import(data, size, "philly", lucid_import_philly_stream, &opt);
}

int lucid_fuzz_sacct(const uint8_t *data, size_t size)
{
    lucid_import_options opt = {.since = INT64_MIN, .until = INT64_MAX};
    opt.include_running = size > 0 && (data[size - 1] & 1);
    opt.vc_by = size > 0 && (data[size - 1] & 2) ? "account" : "partition";
    return fuzz_import(data, size, "sacct", lucid_import_sacct_stream, &opt);
}

int lucid_fuzz_limits(const uint8_t *data, size_t size)
{
    char *text = nul_terminated(data, size);
    if (!text)
        return 0;
    lucid_error err = {{0}};
    char bad[256];
    slurm_limits site = {0};
    /* The same bytes as QOS lines and as association lines. */
    site.nqos = limits_parse_qos(text, &site.qos, bad, sizeof bad, &err);
    site.nassoc = limits_parse_assoc(text, &site.assoc, bad, sizeof bad, &err);
    free(text);
    if (site.nqos < 0 || site.nassoc < 0) {
        limits_free(&site);
        return 0;
    }
    /* Jobs named after the records read, so the look-ups find them. */
    limits_job jobs[4];
    int njobs = 0;
    for (long k = 0; k < site.nassoc && njobs < 4; k++, njobs++) {
        const limit_assoc *a = &site.assoc[k];
        jobs[njobs] = (limits_job){a->user, a->account,
                                   site.nqos > 0 ? site.qos[k % site.nqos].name : "",
                                   a->partition, (int)(k % 9)};
    }
    fit_limits per_job[4];
    limits_book book;
    if (limits_book_build(&book, &site, jobs, (size_t)njobs, per_job, jobs, (size_t)njobs, &err) == 0) {
        for (int k = 0; k < njobs; k++) {
            char why[200];
            if (fit_limits_ever(&per_job[k], jobs[k].gpus, why, sizeof why) &&
                fit_limits_now(&per_job[k], jobs[k].gpus, why, sizeof why))
                fit_limits_take(&per_job[k], jobs[k].gpus);
        }
        limits_book_free(&book);
    }
    limits_free(&site);
    return 0;
}
