/* import_acme.c — Shanghai AI Lab's Acme (NSDI'24), InternLM/AcmeTrace:
 * trace_seren.csv and trace_kalos.csv, one row per job with time-zone-aware
 * times ("2023-03-01 00:18:22+08:00" in Seren, "+00:00" in Kalos).
 *
 * Rules (docs/traces.md): each file is one VC named after its cluster
 * (trace_seren.csv -> seren); times are converted to UTC with their offsets,
 * so the two clusters share one timeline; GPUs = gpu_num (the job's total;
 * node_num x 8 is only checked, and jobs where they disagree are counted in
 * the notes); cpu_only (gpu_num 0: 410,243 of the 880,740 jobs, per the
 * README's counts), no_times (no start or end and no duration: never ran),
 * zero_duration; the five documented states are kept, any other is an
 * error.  Numeric job ids (Seren) are kept; others (Kalos: "dlctk696s0jbvitv")
 * become FILE x 10^9 + ROW with the original in source_id. */
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/import.h"

static const char *const acme_states[] = {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT",
                                          "NODE_FAIL"};

static int read_cluster(lucid_import *imp, const char *path, int64_t file_index, const int *rules,
                        int64_t *mismatched, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    static const char *const names[] = {"job_id", "user", "gpu_num", "state", "submit_time"};
    int c[5];
    int rc = lucid_import_columns(csv, names, c, 5, err);
    int dur = lucid_csv_col(csv, "duration"), start = lucid_csv_col(csv, "start_time");
    int end = lucid_csv_col(csv, "end_time"), nodes = lucid_csv_col(csv, "node_num");
    int cpus = lucid_csv_col(csv, "cpu_num");
    if (rc == 0 && dur < 0 && (start < 0 || end < 0))
        rc = lucid_error_at(err, path, 1, "duration",
                            "required column is missing (or start_time and end_time)");
    char vc[128];
    lucid_import_name_of(path, "trace_", vc, sizeof vc);
    int32_t v = rc == 0 ? lucid_import_vc(imp, vc, -1) : -1;
    if (rc == 0 && v < 0)
        rc = lucid_error_set(err, "out of memory");
    int got = 0;
    int64_t row = 0;
    while (rc == 0 && (got = lucid_csv_next(csv, err)) == 1) {
        long line = lucid_csv_line(csv);
        imp->records++;
        row++;
        int64_t gpus, duration = -1, cpu = 0, node_num = 0, submit;
        const char *id_text = lucid_csv_field(csv, c[0]), *state = lucid_csv_field(csv, c[3]);
        const char *user = lucid_csv_field(csv, c[1]);
        if (lucid_import_check_text(id_text, path, line, "job_id", err) < 0 ||
            lucid_import_check_text(user, path, line, "user", err) < 0 ||
            lucid_import_check_text(state, path, line, "state", err) < 0 ||
            lucid_csv_i64(csv, c[2], &gpus, err) < 0) {
            rc = -1;
            break;
        }
        int known = 0;
        for (size_t k = 0; k < sizeof acme_states / sizeof acme_states[0]; k++)
            known |= strcmp(state, acme_states[k]) == 0;
        if (!known) {
            rc = lucid_error_at(err, path, line, "state",
                                "unknown state '%s' (Acme has COMPLETED, CANCELLED, FAILED, "
                                "TIMEOUT, NODE_FAIL)",
                                state);
            break;
        }
        if (gpus < 0 || gpus > (1 << 20)) {
            rc = lucid_error_at(err, path, line, "gpu_num", "%lld out of range", (long long)gpus);
            break;
        }
        if (lucid_import_time(lucid_csv_field(csv, c[4]), &submit, path, line, "submit_time",
                              err) < 0) {
            rc = -1;
            break;
        }
        if (nodes >= 0 && *lucid_csv_field(csv, nodes) &&
            lucid_csv_i64(csv, nodes, &node_num, err) < 0) {
            rc = -1;
            break;
        }
        if (cpus >= 0 && *lucid_csv_field(csv, cpus) && lucid_csv_i64(csv, cpus, &cpu, err) < 0) {
            rc = -1;
            break;
        }
        if (gpus == 0) {
            lucid_import_count(imp, rules[0]);
            continue;
        }
        if (lucid_import_duration(csv, dur, start, end, &duration, err) < 0) {
            rc = -1;
            break;
        }
        if (duration < 0) {
            lucid_import_count(imp, rules[1]);
            continue;
        }
        if (duration < 1) {
            lucid_import_count(imp, rules[2]);
            continue;
        }
        if (node_num > 0 && gpus > node_num * 8)
            (*mismatched)++;
        lucid_import_job *job = lucid_import_push(imp);
        if (!job) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        if (lucid_parse_i64(id_text, &job->job_id) < 0 || job->job_id < 0) {
            job->job_id = file_index * 1000000000LL + row;
            job->source_id = lucid_import_string(imp, id_text);
        }
        job->submit = submit;
        job->duration = duration;
        job->gpu_num = (int32_t)gpus;
        job->cpu_num = cpu > (1 << 24) ? (1 << 24) : (int32_t)cpu;
        job->vc = v;
        job->record = (file_index << 40) + line;
        job->user = lucid_import_string(imp, user);
        job->state = lucid_import_string(imp, state);
    }
    if (got < 0)
        rc = -1;
    lucid_csv_close(csv);
    return rc;
}

int lucid_import_acme(lucid_import *imp, const char *const *paths, int npaths,
                      const lucid_import_options *opt, lucid_error *err)
{
    if (opt->gpus_per_node > 0)
        imp->gpus_per_node = opt->gpus_per_node;
    int rules[3] = {
        lucid_import_rule_add(imp, "cpu_only", "gpu_num = 0"),
        lucid_import_rule_add(imp, "no_times", "no duration and no start_time/end_time: never ran"),
        lucid_import_rule_add(imp, "zero_duration", "duration < 1 s"),
    };
    int64_t mismatched = 0;
    for (int i = 0; i < npaths; i++)
        if (read_cluster(imp, paths[i], i + 1, rules, &mismatched, err) < 0)
            return -1;
    return lucid_import_note(imp, "Acme: times converted to UTC with their offsets; one VC per "
                                  "cluster file; %lld jobs ask for more GPUs than node_num x 8 "
                                  "(gpu_num is used)",
                             (long long)mismatched) < 0
               ? lucid_error_set(err, "out of memory")
               : 0;
}
