/* import_lucidd.c — what a live cluster actually ran under lucidd: its
 * SQLite state database (src/daemon/state.c), opened read-only.
 *
 * Rules (docs/traces.md): jobs not in a final phase (queued, profiling,
 * moving, running) are removed (not_finished); a failed job that never
 * started (rejected, cancelled while held) is removed (never_started); jobs
 * without GPUs or an end time are removed.  The history is the one Slurm's
 * accounting keeps (sacct --duplicates, joined the same way by
 * import_sacct.c): the submit time is the user's own, first_start the
 * first run's start (the profiling run's, if any), and the duration the
 * run time of the profiling run plus the main runs, with the profiling run
 * and any main run Slurm cut short by a requeue (a node failure under
 * --requeue: lucidd's main_first_start and main_earlier_s, schema 5) also
 * in earlier_runs when the job left the profiler.  The time limit is the
 * one Slurm last showed lucidd (schema 5; none when 0).  The profiling run
 * ends where lucidd moved the job (its first `moving` phase), else after
 * the profiling time lucidd measured.  The profile lucidd measured (GPU
 * utilisation, memory) becomes the trace's gpu_util, gmem_util and gmem
 * columns.  The daemon's cluster is one VC, "lucidd", whose size is
 * derived unless --vc-size lucidd=GPUS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/import.h"
#include "lucid/state.h"

#ifdef LUCID_HAVE_STATE
#include <sqlite3.h>

static const char *text_or_empty(sqlite3_stmt *stmt, int col)
{
    const unsigned char *s = sqlite3_column_text(stmt, col);
    return s ? (const char *)s : "";
}

/* A job's runs from its record: the profiling run (profile_start to its
 * move, or to the end for a job that ended in the profiler), the main runs
 * Slurm cut short by a requeue (main_first_start, main_earlier_s seconds)
 * and the last main run (main_start to the end). */
typedef struct lucidd_runs {
    int64_t first_start, duration, earlier; /* first_start 0: it never ran */
} lucidd_runs;

static lucidd_runs runs_of(int64_t prof, int64_t moved, double profiled_s, int64_t main_start,
                           int64_t main_first, int64_t main_earlier, int64_t end)
{
    if (main_first <= 0 || (main_start > 0 && main_first > main_start))
        main_first = main_start;
    if (main_earlier < 0)
        main_earlier = 0;
    lucidd_runs r = {prof > 0 ? prof : main_first, 0, 0};
    if (prof > 0) {
        int left = moved > 0 || main_first > 0; /* the job left the profiler */
        int64_t until = moved > 0 ? moved : main_first > 0 ? prof + (int64_t)(profiled_s + 0.5)
                                                           : end;
        if (end > 0 && until > end)
            until = end;
        int64_t profile_run = until > prof ? until - prof : 0;
        r.duration += profile_run;
        r.earlier = left ? profile_run : 0;
    }
    if (main_first > 0 && main_earlier > 0) {
        r.duration += main_earlier;
        r.earlier += main_earlier;
    }
    if (main_start > 0 && end > main_start)
        r.duration += end - main_start;
    return r;
}

int lucid_import_lucidd(lucid_import *imp, const char *const *paths, int npaths,
                        const lucid_import_options *opt, lucid_error *err)
{
    if (opt->gpus_per_node > 0)
        imp->gpus_per_node = opt->gpus_per_node;
    int not_finished = lucid_import_rule_add(imp, "not_finished",
                                             "still queued, profiling, moving or running");
    int never = lucid_import_rule_add(imp, "never_started", "failed or rejected before starting");
    int no_gpus = lucid_import_rule_add(imp, "no_gpus", "asked for no GPU");
    int no_end = lucid_import_rule_add(imp, "no_end_time", "final phase without an end time");
    int zero = lucid_import_rule_add(imp, "zero_duration", "ran < 1 s");
    int32_t vc = lucid_import_vc(imp, "lucidd", -1);
    if (vc < 0)
        return lucid_error_set(err, "out of memory");
    for (int i = 0; i < npaths; i++) {
        sqlite3 *db = NULL;
        sqlite3_stmt *stmt = NULL;
        int rc = 0;
        /* Read-only: a trace import never writes the daemon's database.  A
         * database older than schema 5 has no history of main runs Slurm
         * requeued and no time limits: read as none. */
        int opened = sqlite3_open_v2(paths[i], &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK;
        int schema5 = 0;
        if (opened) {
            sqlite3_stmt *probe = NULL;
            schema5 = sqlite3_prepare_v2(db,
                                          "SELECT main_first_start, main_earlier_s, time_limit_s"
                                          " FROM jobs",
                                          -1, &probe, NULL) == SQLITE_OK;
            sqlite3_finalize(probe);
        }
        char sql[640];
        snprintf(sql, sizeof sql,
                 "SELECT j.job_id, j.user, j.gpus, j.cpus, j.submit_time, j.phase,"
                 " j.profile_start, j.main_start, j.end_time,"
                 " p.gpu_util, p.gmem_mib, p.gmem_util, j.profiled_s,"
                 " (SELECT MIN(ph.at) FROM phases ph WHERE ph.job_id = j.job_id"
                 "  AND ph.phase = 'moving' AND ph.at >= j.profile_start), %s"
                 " FROM jobs j LEFT JOIN profiles p ON p.job_id = j.job_id"
                 " ORDER BY j.job_id",
                 schema5 ? "j.main_first_start, j.main_earlier_s, j.time_limit_s" : "0, 0, 0");
        if (!opened || sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
            rc = lucid_error_set(err, "%s: not a lucidd state database (%s)", paths[i],
                                 db ? sqlite3_errmsg(db) : "cannot open");
        int step = SQLITE_DONE; /* read only after a step (gcc -Os cannot tell) */
        while (rc == 0 && (step = sqlite3_step(stmt)) == SQLITE_ROW) {
            int64_t id = sqlite3_column_int64(stmt, 0), gpus = sqlite3_column_int64(stmt, 2);
            int64_t cpus = sqlite3_column_int64(stmt, 3), submit = sqlite3_column_int64(stmt, 4);
            int64_t prof = sqlite3_column_int64(stmt, 6), main_start = sqlite3_column_int64(stmt, 7);
            int64_t end = sqlite3_column_int64(stmt, 8), moved = sqlite3_column_int64(stmt, 13);
            const char *user = text_or_empty(stmt, 1), *phase = text_or_empty(stmt, 5);
            imp->records++;
            lucid_phase ph;
            if (lucid_import_check_text(user, paths[i], 0, "user", err) < 0) {
                rc = -1;
                break;
            }
            if (lucid_phase_parse(phase, &ph) < 0) {
                rc = lucid_error_set(err, "%s: job %lld: unknown phase '%s'", paths[i],
                                     (long long)id, phase);
                break;
            }
            int64_t main_first = sqlite3_column_int64(stmt, 14);
            int64_t main_earlier = sqlite3_column_int64(stmt, 15);
            if (ph == LUCID_PHASE_DONE_IN_PROFILER)
                main_start = moved = main_first = main_earlier = 0; /* its one run was the
                                                                      * profiler's (a move too late) */
            lucidd_runs runs = runs_of(prof, moved, sqlite3_column_double(stmt, 12), main_start,
                                       main_first, main_earlier, end);
            int rule = !lucid_phase_is_final(ph)                ? not_finished
                       : runs.first_start <= 0                   ? never
                       : gpus <= 0                               ? no_gpus
                       : end <= 0                                ? no_end
                       : runs.duration < 1                       ? zero
                                                                 : -1;
            if (rule >= 0) {
                lucid_import_count(imp, rule);
                continue;
            }
            if (gpus > (1 << 20)) {
                rc = lucid_error_set(err, "%s: job %lld asks for %lld GPUs", paths[i],
                                     (long long)id, (long long)gpus);
                break;
            }
            lucid_import_job *job = lucid_import_push(imp);
            if (!job) {
                rc = lucid_error_set(err, "out of memory");
                break;
            }
            job->job_id = id;
            job->submit = submit;
            job->first_start = runs.first_start;
            job->duration = runs.duration;
            job->earlier_runs = runs.earlier;
            int64_t limit = sqlite3_column_int64(stmt, 16);
            job->time_limit = limit > 0 ? limit : -1;
            job->gpu_num = (int32_t)gpus;
            job->cpu_num = cpus > 0 && cpus < (1 << 24) ? (int32_t)cpus : 0;
            job->vc = vc;
            job->record = (int64_t)i << 40 | (id & 0xffffffffff);
            job->user = lucid_import_string(imp, user);
            job->state = lucid_import_string(imp, phase);
            if (sqlite3_column_type(stmt, 9) != SQLITE_NULL) {
                /* gpu_util, gmem_util, gmem: Lucid's workload metric columns. */
                static const int cols[3] = {9, 11, 10}, slots[3] = {5, 6, 7};
                for (int k = 0; k < 3; k++) {
                    char value[32];
                    snprintf(value, sizeof value, "%.3f", sqlite3_column_double(stmt, cols[k]));
                    job->workload[slots[k]] = lucid_import_string(imp, value);
                }
            }
        }
        if (rc == 0 && step != SQLITE_DONE)
            rc = lucid_error_set(err, "%s: %s", paths[i], sqlite3_errmsg(db));
        sqlite3_finalize(stmt);
        sqlite3_close(db);
        if (rc < 0)
            return -1;
    }
    return lucid_import_note(imp, "lucidd: one VC \"lucidd\"; duration = profiling run + main runs "
                                  "(earlier_runs: the profiling run of a job moved to main and the "
                                  "main runs Slurm requeued); time_limit as Slurm last showed it; the "
                                  "measured profile in gpu_util, gmem_util, gmem") < 0
               ? lucid_error_set(err, "out of memory")
               : 0;
}
#else
int lucid_import_lucidd(lucid_import *imp, const char *const *paths, int npaths,
                        const lucid_import_options *opt, lucid_error *err)
{
    (void)imp;
    (void)paths;
    (void)npaths;
    (void)opt;
    return lucid_error_set(err, "lucid was built without SQLite: --format lucidd is unavailable");
}
#endif
