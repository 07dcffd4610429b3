/* import_philly.c — Microsoft Philly (ATC'19): msr-fiddle/philly-traces
 * `cluster_job_log`, one JSON array of jobs (6.6 GB for the full trace's
 * files, 117,325 jobs), and optionally `cluster_machine_list` (CSV).
 *
 * The log is streamed: a small scanner finds each top-level job object
 * (tracking strings and nesting) and hands only that object to jansson, so
 * memory stays bounded by the largest job, not the file.
 *
 * Rules (docs/traces.md): GPUs = the GPUs of the job's first attempt,
 * summed over its hosts (the trace's own analysis notebook); a job without
 * attempts, without submitted_time, or whose attempts all lack a start or
 * end is removed; a job whose last attempt has a start but no end was still
 * running at the snapshot (the trace's README) and is removed; Pass, Killed
 * and Failed are all kept (they held GPUs), any other status is an error.
 * --attempts sum (default): one job, duration = the sum of its attempts'
 * lengths (the time it held GPUs); span: first start to last end (the
 * notebook's run time, gaps included); each: every attempt its own job, the
 * first submitted at submitted_time, a later one when the previous ended.
 * Job ids are the record number (from 1; x 1000 + attempt with `each`),
 * the Philly jobid kept in source_id.  The log gives no VC sizes. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/csv.h"
#include "lucid/import.h"

typedef struct philly_rules {
    int no_attempt, no_submit, no_times, running, no_gpus, zero;
} philly_rules;

typedef enum { ATTEMPTS_SUM, ATTEMPTS_SPAN, ATTEMPTS_EACH } attempts_mode;

/* A JSON time: "YYYY-MM-DD HH:MM:SS", or null / "" / "None" (absent: 0). */
static int json_time(json_t *v, int64_t *out, int *present)
{
    *present = 0;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return -1;
    const char *s = json_string_value(v);
    if (!*s || strcmp(s, "None") == 0)
        return 0;
    if (lucid_time_parse(s, out) < 0)
        return -1;
    *present = 1;
    return 0;
}

static int text(lucid_import *imp, json_t *obj, const char *key, int32_t *out, const char *file,
                long line, lucid_error *err)
{
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        return lucid_error_at(err, file, line, key, "missing or not a string");
    const char *s = json_string_value(v);
    if (lucid_import_check_text(s, file, line, key, err) < 0)
        return -1;
    *out = lucid_import_string(imp, s);
    if (*s && *out < 0)
        return lucid_error_set(err, "out of memory");
    return 0;
}

static int attempt_gpus(json_t *attempt, int64_t *gpus)
{
    json_t *detail = json_object_get(attempt, "detail");
    *gpus = 0;
    if (!detail || json_is_null(detail))
        return 0;
    if (!json_is_array(detail))
        return -1;
    size_t i;
    json_t *host;
    json_array_foreach(detail, i, host) {
        json_t *list = json_object_get(host, "gpus");
        if (!json_is_array(list))
            return -1;
        *gpus += (int64_t)json_array_size(list);
    }
    return 0;
}

static int add_job(lucid_import *imp, int64_t id, int64_t submit, int64_t duration,
                   int64_t gpus, int32_t vc, const int32_t strings[4], int64_t record,
                   lucid_error *err)
{
    lucid_import_job *job = lucid_import_push(imp);
    if (!job)
        return lucid_error_set(err, "out of memory");
    job->job_id = id;
    job->submit = submit;
    job->duration = duration;
    job->gpu_num = (int32_t)gpus;
    job->vc = vc;
    job->user = strings[0];
    job->state = strings[1];
    job->source_id = strings[2];
    job->record = record;
    return 0;
}

static int read_job(lucid_import *imp, json_t *job, const char *file, long line, int64_t record,
                    attempts_mode mode, const philly_rules *r, lucid_error *err)
{
    if (!json_is_object(job))
        return lucid_error_at(err, file, line, NULL, "job record %lld is not a JSON object",
                              (long long)record);
    int32_t strings[4] = {-1, -1, -1, -1}, vc_id;
    if (text(imp, job, "user", &strings[0], file, line, err) < 0 ||
        text(imp, job, "status", &strings[1], file, line, err) < 0 ||
        text(imp, job, "jobid", &strings[2], file, line, err) < 0 ||
        text(imp, job, "vc", &vc_id, file, line, err) < 0)
        return -1;
    const char *status = json_string_value(json_object_get(job, "status"));
    if (strcmp(status, "Pass") != 0 && strcmp(status, "Killed") != 0 &&
        strcmp(status, "Failed") != 0)
        return lucid_error_at(err, file, line, "status",
                              "unknown status '%s' (Philly has Pass, Killed, Failed)", status);
    const char *vc = json_string_value(json_object_get(job, "vc"));
    if (!*vc)
        return lucid_error_at(err, file, line, "vc", "empty VC name");
    json_t *attempts = json_object_get(job, "attempts");
    if (!json_is_array(attempts))
        return lucid_error_at(err, file, line, "attempts", "missing or not a list");
    int64_t submit;
    int have_submit;
    if (json_time(json_object_get(job, "submitted_time"), &submit, &have_submit) < 0)
        return lucid_error_at(err, file, line, "submitted_time", "not a time");
    size_t n = json_array_size(attempts);
    if (n == 0) {
        lucid_import_count(imp, r->no_attempt);
        return 0;
    }
    if (!have_submit) {
        lucid_import_count(imp, r->no_submit);
        return 0;
    }
    int64_t first_gpus = 0, total = 0, first_start = 0, last_end = 0, previous_end = submit;
    int have_first = 0, have_last = 0, usable = 0, running = 0, added = 0;
    int32_t v = lucid_import_vc(imp, vc, -1);
    if (v < 0)
        return lucid_error_set(err, "out of memory");
    size_t k;
    json_t *attempt;
    json_array_foreach(attempts, k, attempt) {
        int64_t start = 0, end = 0, gpus;
        int has_start, has_end;
        if (!json_is_object(attempt) ||
            json_time(json_object_get(attempt, "start_time"), &start, &has_start) < 0 ||
            json_time(json_object_get(attempt, "end_time"), &end, &has_end) < 0)
            return lucid_error_at(err, file, line, "attempts",
                                  "attempt %zu: start_time/end_time not times", k + 1);
        if (attempt_gpus(attempt, &gpus) < 0)
            return lucid_error_at(err, file, line, "attempts",
                                  "attempt %zu: detail is not a list of {ip, gpus}", k + 1);
        if (k == 0)
            first_gpus = gpus;
        if (k + 1 == n && has_start && !has_end)
            running = 1;
        if (k == 0 && has_start) {
            first_start = start;
            have_first = 1;
        }
        if (k + 1 == n && has_end) {
            last_end = end;
            have_last = 1;
        }
        if (!has_start || !has_end)
            continue;
        usable++;
        total += end - start;
        if (mode == ATTEMPTS_EACH && !running && gpus > 0 && end - start >= 1) {
            int64_t at = k == 0 ? submit : previous_end;
            if (add_job(imp, record * 1000 + (int64_t)k, at, end - start, gpus, v, strings,
                        record * 1000 + (int64_t)k, err) < 0)
                return -1;
            added++;
        }
        previous_end = end;
    }
    /* each: the attempts that ended are jobs; the job counts under a rule
     * only when none of its attempts became one. */
    if (mode == ATTEMPTS_EACH && added > 0)
        return 0;
    if (running) {
        lucid_import_count(imp, r->running);
        return 0;
    }
    if (usable == 0 || (mode == ATTEMPTS_SPAN && (!have_first || !have_last))) {
        lucid_import_count(imp, r->no_times);
        return 0;
    }
    if (first_gpus == 0) {
        lucid_import_count(imp, r->no_gpus);
        return 0;
    }
    if (mode == ATTEMPTS_EACH) { /* every timed attempt was under 1 s */
        lucid_import_count(imp, r->zero);
        return 0;
    }
    int64_t duration = mode == ATTEMPTS_SPAN ? last_end - first_start : total;
    if (duration < 1) {
        lucid_import_count(imp, r->zero);
        return 0;
    }
    return add_job(imp, record, submit, duration, first_gpus, v, strings, record, err);
}

/* Streams the top-level objects of a JSON array (or of concatenated
 * objects); each is parsed alone.  Bounded memory: one job at a time. */
/* `line`: the line number of f's next character (the caller may have
 * skipped leading blank lines to tell the job log from a machine list). */
static int philly_stream(lucid_import *imp, FILE *f, const char *file,
                         const lucid_import_options *opt, long line, lucid_error *err)
{
    attempts_mode mode = !opt->attempts || strcmp(opt->attempts, "sum") == 0 ? ATTEMPTS_SUM
                         : strcmp(opt->attempts, "span") == 0               ? ATTEMPTS_SPAN
                                                                            : ATTEMPTS_EACH;
    philly_rules r = {
        lucid_import_rule_add(imp, "no_attempt", "no scheduling attempt recorded"),
        lucid_import_rule_add(imp, "no_submit_time", "submitted_time missing"),
        lucid_import_rule_add(imp, "no_times", "no attempt with both start_time and end_time "
                                               "(span: first start or last end missing)"),
        lucid_import_rule_add(imp, "still_running", "last attempt started but has no end_time: "
                                                    "running at the snapshot"),
        lucid_import_rule_add(imp, "no_gpus", "first attempt lists no GPU"),
        lucid_import_rule_add(imp, "zero_duration", "duration < 1 s"),
    };
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int depth = 0, in_string = 0, escape = 0, top_array = 0, rc = 0;
    long start_line = 0;
    int64_t record = 0;
    int c;
    while (rc == 0 && (c = getc_unlocked(f)) != EOF) {
        if (c == '\n')
            line++;
        if (depth == 0) {
            if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',')
                continue;
            if (c == '[' && !top_array && record == 0) {
                top_array = 1;
                continue;
            }
            if (c == ']' && top_array) {
                top_array = 2;
                continue;
            }
            if (c != '{' || top_array == 2) {
                rc = lucid_error_at(err, file, line, NULL,
                                    "expected a job object ('{'), found '%c' (0x%02x)",
                                    c >= 0x20 && c < 0x7f ? c : '?', c);
                break;
            }
            start_line = line;
            len = 0;
        }
        if (len + 2 > cap && LUCID_GROW(buf, cap, len + 2) < 0) {
            rc = lucid_error_set(err, "out of memory");
            break;
        }
        buf[len++] = (char)c;
        if (in_string) {
            if (escape)
                escape = 0;
            else if (c == '\\')
                escape = 1;
            else if (c == '"')
                in_string = 0;
            continue;
        }
        if (c == '"')
            in_string = 1;
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0) {
                record++;
                imp->records++;
                json_error_t jerr;
                json_t *job = json_loadb(buf, len, 0, &jerr);
                if (!job)
                    rc = lucid_error_at(err, file, start_line + jerr.line - 1, NULL,
                                        "job record %lld: invalid JSON: %s", (long long)record,
                                        jerr.text);
                else
                    rc = read_job(imp, job, file, start_line, record, mode, &r, err);
                json_decref(job);
            }
        }
    }
    if (rc == 0 && ferror(f))
        rc = lucid_error_set(err, "%s: read error", file);
    if (rc == 0 && (depth != 0 || top_array == 1))
        rc = lucid_error_at(err, file, line, NULL,
                            depth ? "truncated JSON: end of file inside job record %lld"
                                  : "truncated JSON: the job list has no closing ']' (after "
                                    "record %lld)",
                            (long long)(record + (depth ? 1 : 0)));
    free(buf);
    return rc;
}

/* cluster_machine_list: machineId, number of GPUs, single GPU mem. */
int lucid_import_philly_stream(lucid_import *imp, FILE *f, const char *file,
                               const lucid_import_options *opt, lucid_error *err)
{
    return philly_stream(imp, f, file, opt, 1, err);
}

static int read_machines(lucid_import *imp, const char *path, int32_t node_gpus, lucid_error *err)
{
    lucid_csv *csv = lucid_csv_open(path, err);
    if (!csv)
        return -1;
    int64_t count[17] = {0}, machines = 0, gpus_total = 0;
    int got, rc = 0;
    while ((got = lucid_csv_next(csv, err)) == 1) {
        int64_t g;
        if (lucid_csv_i64(csv, 1, &g, err) < 0) {
            rc = -1;
            break;
        }
        if (g < 0 || g > 16) {
            rc = lucid_error_at(err, path, lucid_csv_line(csv), lucid_csv_header(csv, 1),
                                "%lld GPUs out of range 0..16", (long long)g);
            break;
        }
        count[g]++;
        machines++;
        gpus_total += g;
    }
    if (got < 0)
        rc = -1;
    lucid_csv_close(csv);
    if (rc < 0)
        return -1;
    int best = 8;
    for (int g = 1; g <= 16; g++)
        if (count[g] > count[best])
            best = g;
    if (node_gpus <= 0)
        imp->gpus_per_node = best;
    if (lucid_import_note(imp, "%s: %lld machines, %lld GPUs (2-GPU machines: %lld, 8-GPU: %lld); "
                               "nodes of %d GPUs; the log does not say which machines a VC owns, "
                               "so VC sizes are derived or set with --vc-size",
                          path, (long long)machines, (long long)gpus_total, (long long)count[2],
                          (long long)count[8], imp->gpus_per_node) < 0)
        return lucid_error_set(err, "out of memory");
    return 0;
}

int lucid_import_philly(lucid_import *imp, const char *const *paths, int npaths,
                        const lucid_import_options *opt, lucid_error *err)
{
    if (opt->gpus_per_node > 0)
        imp->gpus_per_node = opt->gpus_per_node;
    for (int i = 0; i < npaths; i++) {
        FILE *f = fopen(paths[i], "r");
        if (!f)
            return lucid_error_set(err, "%s: cannot open", paths[i]);
        /* Job log or machine list, told by the first character; the log
         * goes on from there (no rewind: it may come through a pipe, e.g.
         * `<(tar -xzOf trace-data.tar.gz trace-data/cluster_job_log)`). */
        int c;
        long line = 1;
        while ((c = getc(f)) == ' ' || c == '\n' || c == '\r' || c == '\t')
            line += c == '\n';
        int rc;
        if (c == '[' || c == '{') {
            ungetc(c, f);
            rc = philly_stream(imp, f, paths[i], opt, line, err);
            fclose(f);
        } else if (fseek(f, 0, SEEK_SET) != 0) {
            fclose(f);
            rc = lucid_error_set(err, "%s: a machine list cannot be read from a pipe (it is "
                                      "read twice): give the file itself",
                                 paths[i]);
        } else {
            fclose(f);
            rc = read_machines(imp, paths[i], opt->gpus_per_node, err);
        }
        if (rc < 0)
            return -1;
    }
    const char *how = !opt->attempts ? "sum" : opt->attempts;
    return lucid_import_note(imp, "Philly: --attempts %s; job id = record number%s, the Philly "
                                  "jobid in source_id",
                             how, strcmp(how, "each") == 0 ? " x 1000 + attempt" : "") < 0
               ? lucid_error_set(err, "out of memory")
               : 0;
}
