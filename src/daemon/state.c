/* state.c — lucidd's SQLite state store (state.h): schema, WAL setup,
 * integrity check on open, and one small function per kind of record.
 * Statements are prepared per call: the daemon writes a few rows per
 * decision, far below what would make caching them worth its complexity. */
#include "lucid/state.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/util.h"

#define STATE_SCHEMA_VERSION 5

struct lucid_state {
    sqlite3 *db;
    char path[1024];
};

static const char *const phase_names[LUCID_PHASE_COUNT] = {
    [LUCID_PHASE_PROFILE_QUEUE] = "profile-queue",
    [LUCID_PHASE_PROFILING] = "profiling",
    [LUCID_PHASE_MOVING] = "moving",
    [LUCID_PHASE_MAIN_QUEUE] = "main-queue",
    [LUCID_PHASE_RUNNING] = "running",
    [LUCID_PHASE_DONE_IN_PROFILER] = "done-in-profiler",
    [LUCID_PHASE_DONE] = "done",
    [LUCID_PHASE_FAILED] = "failed",
    [LUCID_PHASE_HANDED_BACK] = "handed-back",
    [LUCID_PHASE_ENDED_UNKNOWN] = "ended-unknown",
};

const char *lucid_phase_name(lucid_phase phase)
{
    return (unsigned)phase < LUCID_PHASE_COUNT ? phase_names[phase] : NULL;
}

int lucid_phase_parse(const char *name, lucid_phase *out)
{
    for (int i = 0; i < LUCID_PHASE_COUNT; i++)
        if (strcmp(name, phase_names[i]) == 0) {
            *out = (lucid_phase)i;
            return 0;
        }
    return -1;
}

int lucid_phase_is_final(lucid_phase phase)
{
    return phase == LUCID_PHASE_DONE_IN_PROFILER || phase == LUCID_PHASE_DONE ||
           phase == LUCID_PHASE_FAILED || phase == LUCID_PHASE_ENDED_UNKNOWN;
}

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS jobs("
    " job_id INTEGER PRIMARY KEY, user TEXT NOT NULL, name TEXT NOT NULL,"
    " partition TEXT NOT NULL, gpus INTEGER NOT NULL, nodes INTEGER NOT NULL,"
    " submit_time INTEGER NOT NULL, phase TEXT NOT NULL, phase_since INTEGER NOT NULL,"
    " profile_start INTEGER NOT NULL, main_start INTEGER NOT NULL, end_time INTEGER NOT NULL,"
    " estimate_s REAL NOT NULL, priority REAL NOT NULL, sharing_score INTEGER NOT NULL,"
    " packed_with INTEGER NOT NULL, node_list TEXT NOT NULL, gpu_list TEXT NOT NULL,"
    " reason TEXT NOT NULL, runs INTEGER NOT NULL, cpus INTEGER NOT NULL DEFAULT 0,"
    " outcome TEXT NOT NULL DEFAULT '', ended_in TEXT NOT NULL DEFAULT '',"
    " profiled_s REAL NOT NULL DEFAULT 0, user_hold INTEGER NOT NULL DEFAULT 0,"
    " gpu_request TEXT NOT NULL DEFAULT '', reserved_since INTEGER NOT NULL DEFAULT 0,"
    " main_first_start INTEGER NOT NULL DEFAULT 0, main_earlier_s INTEGER NOT NULL DEFAULT 0,"
    " time_limit_s INTEGER NOT NULL DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS phases(job_id INTEGER NOT NULL, phase TEXT NOT NULL,"
    " at INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS phases_job ON phases(job_id);"
    "CREATE TABLE IF NOT EXISTS profiles(job_id INTEGER PRIMARY KEY, samples INTEGER NOT NULL,"
    " gpu_util REAL NOT NULL, gmem_mib REAL NOT NULL, gmem_util REAL NOT NULL,"
    " measured_s REAL NOT NULL);"
    "CREATE TABLE IF NOT EXISTS estimates(job_id INTEGER NOT NULL, model TEXT NOT NULL,"
    " version INTEGER NOT NULL, value REAL NOT NULL, at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS decisions(id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " at INTEGER NOT NULL, job_id INTEGER NOT NULL, action TEXT NOT NULL,"
    " target TEXT NOT NULL, reason TEXT NOT NULL, acked INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS decisions_job ON decisions(job_id);"
    "CREATE TABLE IF NOT EXISTS models(name TEXT PRIMARY KEY, version INTEGER NOT NULL,"
    " trained_at INTEGER NOT NULL, note TEXT NOT NULL, rows INTEGER NOT NULL DEFAULT 0,"
    " body TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE IF NOT EXISTS settings(key TEXT PRIMARY KEY, value TEXT NOT NULL);";

static int db_fail(lucid_state *state, lucid_error *err, const char *what)
{
    int code = sqlite3_errcode(state->db);
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT)
        return lucid_error_set(err,
                               "state database %s is corrupted (%s while %s): move it aside "
                               "to start empty, or restore a backup",
                               state->path, sqlite3_errmsg(state->db), what);
    return lucid_error_set(err, "state database %s: %s while %s", state->path,
                           sqlite3_errmsg(state->db), what);
}

static int exec(lucid_state *state, const char *sql, const char *what, lucid_error *err)
{
    if (sqlite3_exec(state->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(state, err, what);
    return 0;
}

static sqlite3_stmt *prepare(lucid_state *state, const char *sql, lucid_error *err)
{
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(state->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        db_fail(state, err, "preparing a statement");
        return NULL;
    }
    return stmt;
}

/* Steps a statement that returns no row, then finalizes it. */
static int run_done(lucid_state *state, sqlite3_stmt *stmt, const char *what, lucid_error *err)
{
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE)
        return db_fail(state, err, what);
    return 0;
}

static void copy_text(char *dst, size_t size, const unsigned char *src)
{
    snprintf(dst, size, "%s", src ? (const char *)src : "");
}

/* quick_check reads every page: a damaged file is reported at start, not
 * halfway through serving. */
static int check_integrity(lucid_state *state, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(state, "PRAGMA quick_check", err);
    if (!stmt)
        return -1;
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(stmt);
        return db_fail(state, err, "checking integrity");
    }
    char result[256];
    copy_text(result, sizeof result, sqlite3_column_text(stmt, 0));
    sqlite3_finalize(stmt);
    if (strcmp(result, "ok") != 0)
        return lucid_error_set(err,
                               "state database %s is corrupted (integrity check: %s): move it "
                               "aside to start empty, or restore a backup",
                               state->path, result);
    return 0;
}

/* One text value by key (`sql` selects it with one parameter): 1 found, 0
 * absent, -1 error. */
static int read_value(lucid_state *state, const char *sql, const char *key, char *value,
                      size_t size, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(state, sql, err);
    if (!stmt)
        return -1;
    sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(stmt), result = 0;
    if (rc == SQLITE_ROW) {
        copy_text(value, size, sqlite3_column_text(stmt, 0));
        result = 1;
    } else if (rc != SQLITE_DONE) {
        result = db_fail(state, err, "reading a stored value");
    }
    sqlite3_finalize(stmt);
    return result;
}

static int check_schema_version(lucid_state *state, lucid_error *err)
{
    char value[32];
    int found = read_value(state, "SELECT value FROM meta WHERE key = ?", "schema", value,
                           sizeof value, err);
    if (found < 0)
        return -1;
    sqlite3_stmt *stmt;
    if (!found) {
        stmt = prepare(state, "INSERT INTO meta(key, value) VALUES('schema', ?)", err);
        if (!stmt)
            return -1;
        sqlite3_bind_int(stmt, 1, STATE_SCHEMA_VERSION);
        return run_done(state, stmt, "writing the schema version", err);
    }
    int version = atoi(value);
    if (version == 1) { /* version 1 lacked the jobs' CPUs and the models' rows and files */
        if (exec(state,
                 "ALTER TABLE jobs ADD COLUMN cpus INTEGER NOT NULL DEFAULT 0;"
                 "ALTER TABLE models ADD COLUMN rows INTEGER NOT NULL DEFAULT 0;"
                 "ALTER TABLE models ADD COLUMN body TEXT NOT NULL DEFAULT '';"
                 "UPDATE meta SET value = '2' WHERE key = 'schema';",
                 "upgrading the schema from version 1", err) < 0)
            return -1;
        version = 2;
    }
    if (version == 2) { /* version 2 lacked outcomes, observed profiling time, user holds */
        if (exec(state,
                 "ALTER TABLE jobs ADD COLUMN outcome TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE jobs ADD COLUMN ended_in TEXT NOT NULL DEFAULT '';"
                 "ALTER TABLE jobs ADD COLUMN profiled_s REAL NOT NULL DEFAULT 0;"
                 "ALTER TABLE jobs ADD COLUMN user_hold INTEGER NOT NULL DEFAULT 0;"
                 "ALTER TABLE jobs ADD COLUMN gpu_request TEXT NOT NULL DEFAULT '';"
                 "UPDATE meta SET value = '3' WHERE key = 'schema';",
                 "upgrading the schema from version 2", err) < 0)
            return -1;
        version = 3;
    }
    if (version == 3) { /* version 3 lacked the backfill reservations jobs hold */
        if (exec(state,
                 "ALTER TABLE jobs ADD COLUMN reserved_since INTEGER NOT NULL DEFAULT 0;"
                 "UPDATE meta SET value = '4' WHERE key = 'schema';",
                 "upgrading the schema from version 3", err) < 0)
            return -1;
        version = 4;
    }
    if (version == 4) { /* version 4 kept only the last main run of a job Slurm requeued,
                         * and no time limits */
        if (exec(state,
                 "ALTER TABLE jobs ADD COLUMN main_first_start INTEGER NOT NULL DEFAULT 0;"
                 "ALTER TABLE jobs ADD COLUMN main_earlier_s INTEGER NOT NULL DEFAULT 0;"
                 "ALTER TABLE jobs ADD COLUMN time_limit_s INTEGER NOT NULL DEFAULT 0;"
                 "UPDATE jobs SET main_first_start = main_start;"
                 "UPDATE meta SET value = '5' WHERE key = 'schema';",
                 "upgrading the schema from version 4", err) < 0)
            return -1;
        return 0;
    }
    if (version != STATE_SCHEMA_VERSION)
        return lucid_error_set(err, "state database %s has schema version %s, this lucidd reads %d",
                               state->path, value, STATE_SCHEMA_VERSION);
    return 0;
}

lucid_state *lucid_state_open(const char *path, lucid_error *err)
{
    lucid_state *state = calloc(1, sizeof *state);
    if (!state) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    snprintf(state->path, sizeof state->path, "%s", path);
    if (sqlite3_open_v2(path, &state->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        lucid_error_set(err, "state database %s: cannot open: %s", path,
                        state->db ? sqlite3_errmsg(state->db) : "out of memory");
        lucid_state_close(state);
        return NULL;
    }
    sqlite3_busy_timeout(state->db, 5000);
    /* WAL: a commit is one append + fsync, readers (lucid status) never block
     * the daemon; synchronous=FULL so a commit survives power loss too. */
    if (exec(state, "PRAGMA journal_mode=WAL", "switching to WAL", err) < 0 ||
        exec(state, "PRAGMA synchronous=FULL", "setting synchronous", err) < 0 ||
        check_integrity(state, err) < 0 ||
        exec(state, "BEGIN", "creating the schema", err) < 0 ||
        exec(state, schema, "creating the schema", err) < 0 ||
        check_schema_version(state, err) < 0 ||
        exec(state, "COMMIT", "creating the schema", err) < 0) {
        lucid_state_close(state);
        return NULL;
    }
    return state;
}

lucid_state *lucid_state_open_readonly(const char *path, int busy_ms, lucid_error *err)
{
    lucid_state *state = calloc(1, sizeof *state);
    if (!state) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    snprintf(state->path, sizeof state->path, "%s", path);
    if (sqlite3_open_v2(path, &state->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        lucid_error_set(err, "state database %s: cannot open for reading: %s", path,
                        state->db ? sqlite3_errmsg(state->db) : "out of memory");
        lucid_state_close(state);
        return NULL;
    }
    sqlite3_busy_timeout(state->db, busy_ms);
    return state;
}

void lucid_state_close(lucid_state *state)
{
    if (!state)
        return;
    sqlite3_close(state->db);
    free(state);
}

int lucid_state_begin(lucid_state *state, lucid_error *err)
{
    return exec(state, "BEGIN IMMEDIATE", "beginning a transaction", err);
}

int lucid_state_commit(lucid_state *state, lucid_error *err)
{
    return exec(state, "COMMIT", "committing", err);
}

void lucid_state_rollback(lucid_state *state)
{
    sqlite3_exec(state->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Wraps one write in a transaction unless the caller already opened one. */
static int auto_begin(lucid_state *state, lucid_error *err)
{
    if (!sqlite3_get_autocommit(state->db))
        return 0;
    if (lucid_state_begin(state, err) < 0)
        return -1;
    return 1;
}

static int auto_end(lucid_state *state, int began, int rc, lucid_error *err)
{
    if (began != 1)
        return rc;
    if (rc < 0) {
        lucid_state_rollback(state);
        return rc;
    }
    return lucid_state_commit(state, err);
}

static int append_phase(lucid_state *state, uint32_t job_id, lucid_phase phase, int64_t at,
                        lucid_error *err)
{
    sqlite3_stmt *stmt =
        prepare(state, "INSERT INTO phases(job_id, phase, at) VALUES(?, ?, ?)", err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, job_id);
    sqlite3_bind_text(stmt, 2, lucid_phase_name(phase), -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 3, at);
    return run_done(state, stmt, "recording a phase", err);
}

static int write_job(lucid_state *state, const lucid_job_record *job, lucid_error *err)
{
    lucid_job_record old;
    int found = lucid_state_get_job(state, job->job_id, &old, err);
    if (found < 0)
        return -1;
    sqlite3_stmt *stmt = prepare(
        state,
        "INSERT OR REPLACE INTO jobs(job_id, user, name, partition, gpus, nodes, submit_time,"
        " phase, phase_since, profile_start, main_start, end_time, estimate_s, priority,"
        " sharing_score, packed_with, node_list, gpu_list, reason, runs, cpus, outcome,"
        " ended_in, profiled_s, user_hold, gpu_request, reserved_since, main_first_start,"
        " main_earlier_s, time_limit_s)"
        " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        err);
    if (!stmt)
        return -1;
    int k = 1;
    sqlite3_bind_int64(stmt, k++, job->job_id);
    sqlite3_bind_text(stmt, k++, job->user, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, k++, job->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, k++, job->partition, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, k++, job->gpus);
    sqlite3_bind_int(stmt, k++, job->nodes);
    sqlite3_bind_int64(stmt, k++, job->submit_time);
    sqlite3_bind_text(stmt, k++, lucid_phase_name(job->phase), -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, k++, job->phase_since);
    sqlite3_bind_int64(stmt, k++, job->profile_start);
    sqlite3_bind_int64(stmt, k++, job->main_start);
    sqlite3_bind_int64(stmt, k++, job->end_time);
    sqlite3_bind_double(stmt, k++, job->estimate_s);
    sqlite3_bind_double(stmt, k++, job->priority);
    sqlite3_bind_int(stmt, k++, job->sharing_score);
    sqlite3_bind_int64(stmt, k++, job->packed_with);
    sqlite3_bind_text(stmt, k++, job->node_list, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, k++, job->gpu_list, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, k++, job->reason, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, k++, job->runs);
    sqlite3_bind_int(stmt, k++, job->cpus);
    sqlite3_bind_text(stmt, k++, job->outcome, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, k++, job->ended_in, -1, SQLITE_STATIC);
    sqlite3_bind_double(stmt, k++, job->profiled_s);
    sqlite3_bind_int(stmt, k++, job->user_hold);
    sqlite3_bind_text(stmt, k++, job->gpu_request, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, k++, job->reserved_since);
    sqlite3_bind_int64(stmt, k++, job->main_first_start);
    sqlite3_bind_int64(stmt, k++, job->main_earlier_s);
    sqlite3_bind_int64(stmt, k++, job->time_limit_s);
    if (run_done(state, stmt, "writing a job", err) < 0)
        return -1;
    if (!found || old.phase != job->phase)
        return append_phase(state, job->job_id, job->phase, job->phase_since, err);
    return 0;
}

int lucid_state_put_job(lucid_state *state, const lucid_job_record *job, lucid_error *err)
{
    if (!lucid_phase_name(job->phase))
        return lucid_error_set(err, "job %u: invalid phase %d", job->job_id, (int)job->phase);
    int began = auto_begin(state, err);
    if (began < 0)
        return -1;
    return auto_end(state, began, write_job(state, job, err), err);
}

static const char job_columns[] =
    "SELECT job_id, user, name, partition, gpus, nodes, submit_time, phase, phase_since,"
    " profile_start, main_start, end_time, estimate_s, priority, sharing_score, packed_with,"
    " node_list, gpu_list, reason, runs, cpus, outcome, ended_in, profiled_s, user_hold,"
    " gpu_request, reserved_since, main_first_start, main_earlier_s, time_limit_s FROM jobs";

static int read_job(lucid_state *state, sqlite3_stmt *stmt, lucid_job_record *job,
                    lucid_error *err)
{
    memset(job, 0, sizeof *job);
    int k = 0;
    job->job_id = (uint32_t)sqlite3_column_int64(stmt, k++);
    copy_text(job->user, sizeof job->user, sqlite3_column_text(stmt, k++));
    copy_text(job->name, sizeof job->name, sqlite3_column_text(stmt, k++));
    copy_text(job->partition, sizeof job->partition, sqlite3_column_text(stmt, k++));
    job->gpus = sqlite3_column_int(stmt, k++);
    job->nodes = sqlite3_column_int(stmt, k++);
    job->submit_time = sqlite3_column_int64(stmt, k++);
    const char *phase = (const char *)sqlite3_column_text(stmt, k++);
    if (!phase || lucid_phase_parse(phase, &job->phase) < 0)
        return lucid_error_set(err, "state database %s: job %u has unknown phase '%s'",
                               state->path, job->job_id, phase ? phase : "");
    job->phase_since = sqlite3_column_int64(stmt, k++);
    job->profile_start = sqlite3_column_int64(stmt, k++);
    job->main_start = sqlite3_column_int64(stmt, k++);
    job->end_time = sqlite3_column_int64(stmt, k++);
    job->estimate_s = sqlite3_column_double(stmt, k++);
    job->priority = sqlite3_column_double(stmt, k++);
    job->sharing_score = sqlite3_column_int(stmt, k++);
    job->packed_with = (uint32_t)sqlite3_column_int64(stmt, k++);
    copy_text(job->node_list, sizeof job->node_list, sqlite3_column_text(stmt, k++));
    copy_text(job->gpu_list, sizeof job->gpu_list, sqlite3_column_text(stmt, k++));
    copy_text(job->reason, sizeof job->reason, sqlite3_column_text(stmt, k++));
    job->runs = sqlite3_column_int(stmt, k++);
    job->cpus = sqlite3_column_int(stmt, k++);
    copy_text(job->outcome, sizeof job->outcome, sqlite3_column_text(stmt, k++));
    copy_text(job->ended_in, sizeof job->ended_in, sqlite3_column_text(stmt, k++));
    job->profiled_s = sqlite3_column_double(stmt, k++);
    job->user_hold = sqlite3_column_int(stmt, k++);
    copy_text(job->gpu_request, sizeof job->gpu_request, sqlite3_column_text(stmt, k++));
    job->reserved_since = sqlite3_column_int64(stmt, k++);
    job->main_first_start = sqlite3_column_int64(stmt, k++);
    job->main_earlier_s = sqlite3_column_int64(stmt, k++);
    job->time_limit_s = sqlite3_column_int64(stmt, k++);
    return 0;
}

int lucid_state_get_job(lucid_state *state, uint32_t job_id, lucid_job_record *out,
                        lucid_error *err)
{
    char sql[sizeof job_columns + 32];
    snprintf(sql, sizeof sql, "%s WHERE job_id = ?", job_columns);
    sqlite3_stmt *stmt = prepare(state, sql, err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, job_id);
    int rc = sqlite3_step(stmt);
    int result = 0;
    if (rc == SQLITE_ROW)
        result = read_job(state, stmt, out, err) < 0 ? -1 : 1;
    else if (rc != SQLITE_DONE)
        result = db_fail(state, err, "reading a job");
    sqlite3_finalize(stmt);
    return result;
}

long lucid_state_list_jobs(lucid_state *state, int include_final, lucid_job_record **out,
                           lucid_error *err)
{
    char sql[sizeof job_columns + 128];
    snprintf(sql, sizeof sql, "%s%s ORDER BY job_id", job_columns,
             include_final ? "" : " WHERE phase NOT IN ('done', 'done-in-profiler', 'failed', 'ended-unknown')");
    sqlite3_stmt *stmt = prepare(state, sql, err);
    if (!stmt)
        return -1;
    lucid_job_record *jobs = NULL;
    size_t count = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (LUCID_GROW(jobs, cap, count + 1) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        if (read_job(state, stmt, &jobs[count], err) < 0) {
            sqlite3_finalize(stmt);
            free(jobs);
            return -1;
        }
        count++;
    }
    if (rc != SQLITE_DONE) {
        db_fail(state, err, "listing jobs");
        sqlite3_finalize(stmt);
        free(jobs);
        return -1;
    }
    sqlite3_finalize(stmt);
    *out = jobs;
    return (long)count;
}

long lucid_state_prune(lucid_state *state, int64_t ended_before, long limit, lucid_error *err)
{
    static const char *const deletes[] = {
        "DELETE FROM phases WHERE job_id IN (SELECT job_id FROM temp.pruned)",
        "DELETE FROM profiles WHERE job_id IN (SELECT job_id FROM temp.pruned)",
        "DELETE FROM estimates WHERE job_id IN (SELECT job_id FROM temp.pruned)",
        "DELETE FROM decisions WHERE job_id IN (SELECT job_id FROM temp.pruned)",
        "DELETE FROM jobs WHERE job_id IN (SELECT job_id FROM temp.pruned)",
    };
    if (exec(state, "CREATE TEMP TABLE IF NOT EXISTS pruned(job_id INTEGER PRIMARY KEY)",
             "pruning", err) < 0 ||
        lucid_state_begin(state, err) < 0)
        return -1;
    long pruned = -1;
    sqlite3_stmt *stmt = NULL;
    if (exec(state, "DELETE FROM temp.pruned", "pruning", err) < 0)
        goto done;
    stmt = prepare(state,
                   "INSERT INTO temp.pruned SELECT job_id FROM jobs"
                   " WHERE phase IN ('done', 'done-in-profiler', 'failed', 'ended-unknown')"
                   " AND end_time < ?1 AND job_id NOT IN"
                   " (SELECT job_id FROM decisions WHERE acked = 0)"
                   " ORDER BY end_time LIMIT ?2",
                   err);
    if (!stmt)
        goto done;
    sqlite3_bind_int64(stmt, 1, ended_before);
    sqlite3_bind_int64(stmt, 2, limit);
    if (sqlite3_step(stmt) != SQLITE_DONE) {
        db_fail(state, err, "choosing the jobs to prune");
        goto done;
    }
    long chosen = (long)sqlite3_changes(state->db);
    for (size_t k = 0; k < sizeof deletes / sizeof deletes[0]; k++)
        if (exec(state, deletes[k], "pruning", err) < 0)
            goto done;
    pruned = chosen;
done:
    sqlite3_finalize(stmt);
    if (pruned < 0) {
        lucid_state_rollback(state);
        return -1;
    }
    return lucid_state_commit(state, err) < 0 ? -1 : pruned;
}

long lucid_state_phase_history(lucid_state *state, uint32_t job_id, lucid_phase *phases,
                               int64_t *times, long max, lucid_error *err)
{
    sqlite3_stmt *stmt =
        prepare(state, "SELECT phase, at FROM phases WHERE job_id = ? ORDER BY rowid", err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, job_id);
    long count = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW && count < max) {
        const char *name = (const char *)sqlite3_column_text(stmt, 0);
        if (!name || lucid_phase_parse(name, &phases[count]) < 0) {
            sqlite3_finalize(stmt);
            return lucid_error_set(err, "state database %s: job %u: unknown phase in history",
                                   state->path, job_id);
        }
        times[count++] = sqlite3_column_int64(stmt, 1);
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return db_fail(state, err, "reading phase history");
    return count;
}

int lucid_state_put_profile(lucid_state *state, uint32_t job_id, const lucid_gpu_sample *mean,
                            int64_t samples, double measured_s, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(state,
                                 "INSERT OR REPLACE INTO profiles(job_id, samples, gpu_util,"
                                 " gmem_mib, gmem_util, measured_s) VALUES(?,?,?,?,?,?)",
                                 err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, job_id);
    sqlite3_bind_int64(stmt, 2, samples);
    sqlite3_bind_double(stmt, 3, mean->gpu_util_pct);
    sqlite3_bind_double(stmt, 4, mean->gmem_used_mib);
    sqlite3_bind_double(stmt, 5, mean->gmem_util_pct);
    sqlite3_bind_double(stmt, 6, measured_s);
    return run_done(state, stmt, "writing a profile", err);
}

int lucid_state_get_profile(lucid_state *state, uint32_t job_id, lucid_gpu_sample *mean,
                            int64_t *samples, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(
        state, "SELECT samples, gpu_util, gmem_mib, gmem_util FROM profiles WHERE job_id = ?",
        err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, job_id);
    int rc = sqlite3_step(stmt), result = 0;
    if (rc == SQLITE_ROW) {
        *samples = sqlite3_column_int64(stmt, 0);
        mean->gpu_util_pct = sqlite3_column_double(stmt, 1);
        mean->gmem_used_mib = sqlite3_column_double(stmt, 2);
        mean->gmem_util_pct = sqlite3_column_double(stmt, 3);
        result = 1;
    } else if (rc != SQLITE_DONE) {
        result = db_fail(state, err, "reading a profile");
    }
    sqlite3_finalize(stmt);
    return result;
}

int lucid_state_add_estimate(lucid_state *state, uint32_t job_id, const char *model,
                             int64_t version, double value, int64_t at, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(
        state, "INSERT INTO estimates(job_id, model, version, value, at) VALUES(?,?,?,?,?)",
        err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, job_id);
    sqlite3_bind_text(stmt, 2, model, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 3, version);
    sqlite3_bind_double(stmt, 4, value);
    sqlite3_bind_int64(stmt, 5, at);
    return run_done(state, stmt, "writing an estimate", err);
}

int64_t lucid_state_add_decision(lucid_state *state, const lucid_decision_record *decision,
                                 lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(state,
                                 "INSERT INTO decisions(at, job_id, action, target, reason,"
                                 " acked) VALUES(?,?,?,?,?,?)",
                                 err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, decision->at);
    sqlite3_bind_int64(stmt, 2, decision->job_id);
    sqlite3_bind_text(stmt, 3, decision->action, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 4, decision->target, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 5, decision->reason, -1, SQLITE_STATIC);
    sqlite3_bind_int(stmt, 6, decision->acked);
    if (run_done(state, stmt, "recording a decision", err) < 0)
        return -1;
    return sqlite3_last_insert_rowid(state->db);
}

int lucid_state_ack_decision(lucid_state *state, int64_t id, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(state, "UPDATE decisions SET acked = 1 WHERE id = ?", err);
    if (!stmt)
        return -1;
    sqlite3_bind_int64(stmt, 1, id);
    if (run_done(state, stmt, "acknowledging a decision", err) < 0)
        return -1;
    if (sqlite3_changes(state->db) != 1)
        return lucid_error_set(err, "state database %s: no decision %lld", state->path,
                               (long long)id);
    return 0;
}

long lucid_state_list_decisions(lucid_state *state, uint32_t job_id,
                                lucid_decision_record **out, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(state,
                                 job_id ? "SELECT id, at, job_id, action, target, reason, acked"
                                          " FROM decisions WHERE job_id = ? ORDER BY id"
                                        : "SELECT id, at, job_id, action, target, reason, acked"
                                          " FROM decisions WHERE acked = 0 ORDER BY id",
                                 err);
    if (!stmt)
        return -1;
    if (job_id)
        sqlite3_bind_int64(stmt, 1, job_id);
    lucid_decision_record *list = NULL;
    size_t count = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (LUCID_GROW(list, cap, count + 1) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        lucid_decision_record *d = &list[count++];
        d->id = sqlite3_column_int64(stmt, 0);
        d->at = sqlite3_column_int64(stmt, 1);
        d->job_id = (uint32_t)sqlite3_column_int64(stmt, 2);
        copy_text(d->action, sizeof d->action, sqlite3_column_text(stmt, 3));
        copy_text(d->target, sizeof d->target, sqlite3_column_text(stmt, 4));
        copy_text(d->reason, sizeof d->reason, sqlite3_column_text(stmt, 5));
        d->acked = sqlite3_column_int(stmt, 6);
    }
    if (rc != SQLITE_DONE) {
        db_fail(state, err, "listing decisions");
        sqlite3_finalize(stmt);
        free(list);
        return -1;
    }
    sqlite3_finalize(stmt);
    *out = list;
    return (long)count;
}

int lucid_state_save_model(lucid_state *state, const lucid_model_version *model,
                           const char *body, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(state,
                                 "INSERT OR REPLACE INTO models(name, version, trained_at, note,"
                                 " rows, body) VALUES(?,?,?,?,?,?)",
                                 err);
    if (!stmt)
        return -1;
    sqlite3_bind_text(stmt, 1, model->name, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 2, model->version);
    sqlite3_bind_int64(stmt, 3, model->trained_at);
    sqlite3_bind_text(stmt, 4, model->note, -1, SQLITE_STATIC);
    sqlite3_bind_int64(stmt, 5, model->rows);
    sqlite3_bind_text(stmt, 6, body ? body : "", -1, SQLITE_STATIC);
    return run_done(state, stmt, "writing a model version", err);
}

int lucid_state_set_model_version(lucid_state *state, const lucid_model_version *model,
                                  lucid_error *err)
{
    return lucid_state_save_model(state, model, NULL, err);
}

static void read_model_version(sqlite3_stmt *stmt, lucid_model_version *m)
{
    copy_text(m->name, sizeof m->name, sqlite3_column_text(stmt, 0));
    m->version = sqlite3_column_int64(stmt, 1);
    m->trained_at = sqlite3_column_int64(stmt, 2);
    copy_text(m->note, sizeof m->note, sqlite3_column_text(stmt, 3));
    m->rows = sqlite3_column_int64(stmt, 4);
}

int lucid_state_load_model(lucid_state *state, const char *name, lucid_model_version *model,
                           char **body, lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(
        state, "SELECT name, version, trained_at, note, rows, body FROM models WHERE name = ?",
        err);
    if (!stmt)
        return -1;
    sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
    int rc = sqlite3_step(stmt), result = 0;
    if (rc == SQLITE_ROW) {
        memset(model, 0, sizeof *model);
        read_model_version(stmt, model);
        const unsigned char *text = sqlite3_column_text(stmt, 5);
        result = 1;
        if (body && !(*body = strdup(text ? (const char *)text : "")))
            result = lucid_error_set(err, "out of memory");
    } else if (rc != SQLITE_DONE) {
        result = db_fail(state, err, "reading a model");
    }
    sqlite3_finalize(stmt);
    return result;
}

long lucid_state_list_model_versions(lucid_state *state, lucid_model_version **out,
                                     lucid_error *err)
{
    sqlite3_stmt *stmt = prepare(
        state, "SELECT name, version, trained_at, note, rows FROM models ORDER BY name", err);
    if (!stmt)
        return -1;
    lucid_model_version *list = NULL;
    size_t count = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
        if (LUCID_GROW(list, cap, count + 1) < 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        read_model_version(stmt, &list[count++]);
    }
    if (rc != SQLITE_DONE) {
        db_fail(state, err, "listing model versions");
        sqlite3_finalize(stmt);
        free(list);
        return -1;
    }
    sqlite3_finalize(stmt);
    *out = list;
    return (long)count;
}

int lucid_state_set_setting(lucid_state *state, const char *key, const char *value,
                            lucid_error *err)
{
    sqlite3_stmt *stmt =
        prepare(state, "INSERT OR REPLACE INTO settings(key, value) VALUES(?, ?)", err);
    if (!stmt)
        return -1;
    sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, value, -1, SQLITE_STATIC);
    return run_done(state, stmt, "writing a setting", err);
}

int lucid_state_get_setting(lucid_state *state, const char *key, char *value, size_t size,
                            lucid_error *err)
{
    return read_value(state, "SELECT value FROM settings WHERE key = ?", key, value, size, err);
}
