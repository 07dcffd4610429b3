/* models.c — lucidd's models (models.h): the update engine that retrains
 * the duration GA2M on the finished jobs (on a worker thread), the
 * estimates and explanations it gives, the sharing tree from a file, and
 * the version of each model in the state store.
 *
 * Hyper-parameters of the duration model are the library's
 * (lucid_duration_model_params, as the simulator's update engine in
 * src/sim/online.c): learning rate 0.01, uniform binning, 20 pairs, log1p
 * target.  Its features are liblucid's
 * (lucid_features_duration_jobs); what lucidd cannot know is missing: amp
 * (mixed precision is not observable from outside the job) and, for a job
 * never profiled, the GPU metrics. */
#include "models.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lucid/cart.h"
#include "lucid/ebm.h"
#include "lucid/explain.h"
#include "lucid/features.h"
#include "lucid/model_file.h"

/* One training on the worker thread: it owns `data` and writes `model` /
 * `err`, then sets `done`; the caller's thread reads them only after. */
typedef struct training {
    pthread_t thread;
    int running; /* started, result not installed yet */
    int joined;  /* the thread has been joined */
    atomic_int done;
    lucid_dataset *data;
    lucid_ebm_params params;
    lucid_ebm *model;
    lucid_error err;
    int64_t started_at;
    size_t rows;
} training;

struct lucidd_models {
    lucidd_models_config cfg;
    lucid_state *state;
    lucid_ebm *duration;     /* NULL: the heuristic */
    int64_t duration_version;
    size_t duration_rows;
    int64_t last_training;   /* when the newest training started (0: never) */
    size_t finished;         /* finished jobs the models were told of (lucidd_models_add_finished) */
    lucid_cart *tree;        /* NULL: the utilisation heuristic */
    int64_t sharing_version;
    int64_t forecast_version;
    training work;
    /* The finished jobs, oldest first: the training rows and the users'
     * histories a job's estimate is built against
     * (lucid_features_duration_history).  The models' own copy, a row each
     * (~200 bytes), so the engine may forget ended jobs; at most
     * cfg.history_max (the newest), added one at a time as jobs finish:
     * no tick rebuilds it.  `key` and `user` point into hist_text. */
    lucid_duration_job *hist;
    struct hist_text {
        char key[16], user[64];
    } *hist_text;
    size_t nhist, hist_cap;
    /* hist indexed by user and end for the estimates' history features:
     * built at the first estimate (NULL until then and after hist moved),
     * then kept up to date row by row as jobs finish, not sorted afresh
     * for each estimate (at 20,000 rows that was ~4 ms an estimate, 8.9 s
     * to re-estimate 2,000 held jobs; bench/tick_latency's HISTORY). */
    lucid_duration_history *index;
    char warning[LUCID_ERROR_MAX];
};

/* ---- versions in the state store ---- */

/* Records `note` as the model's current version unless it is already
 * there: a model gets the next version, a heuristic keeps version 0 until
 * some model has been used (versions never go back). */
static int record_version(lucidd_models *m, const char *name, const char *note, int is_model,
                          int64_t now, int64_t *version, lucid_error *err)
{
    lucid_model_version stored;
    int found = lucid_state_load_model(m->state, name, &stored, NULL, err);
    if (found < 0)
        return -1;
    if (found && strcmp(stored.note, note) == 0) {
        *version = stored.version;
        return 0;
    }
    lucid_model_version v = {.trained_at = now};
    v.version = found && (is_model || stored.version > 0) ? stored.version + 1 : is_model;
    snprintf(v.name, sizeof v.name, "%s", name);
    snprintf(v.note, sizeof v.note, "%s", note);
    *version = v.version;
    return lucid_state_save_model(m->state, &v, NULL, err);
}

/* The newest duration model kept in the store, if it can be read. */
static int load_duration(lucidd_models *m, int64_t now, lucid_error *err)
{
    lucid_model_version stored;
    char *body = NULL;
    int found = lucid_state_load_model(m->state, "duration", &stored, &body, err);
    if (found < 0)
        return -1;
    if (found && stored.version > 0 && body && body[0]) {
        lucid_error load_err = {{0}};
        m->duration = lucid_ebm_from_json(body, "stored duration model", &load_err);
        if (m->duration) {
            m->duration_version = stored.version;
            m->duration_rows = (size_t)stored.rows;
            m->last_training = stored.trained_at;
        } else {
            snprintf(m->warning, sizeof m->warning,
                     "duration model v%lld in the state store is unreadable (%.300s): the heuristic "
                     "is used until the next training",
                     (long long)stored.version, load_err.msg);
        }
    }
    free(body);
    if (m->duration)
        return 0;
    char note[256];
    snprintf(note, sizeof note,
             "heuristic until %zu jobs have finished: the job's Slurm time limit, else "
             "--default-estimate",
             m->cfg.min_history);
    return record_version(m, "duration", note, 0, now, &m->duration_version, err);
}

/* ---- sharing tree ---- */

/* Features of the sharing model the live profiler measures, and those it
 * cannot (they come from co-location measurements or the job's code): a
 * split on one of the latter follows both branches and keeps the heavier
 * score, so a job is never packed more eagerly than its measured metrics
 * allow. */
static const char *const measured_features[] = {"gpu_util", "gmem_util", "gmem"};
static const char *const unmeasured_features[] = {"amp", "avg_speed", "auto_label"};
enum { N_MEASURED = 3, N_UNMEASURED = 3 };

static int measured_index(const char *name)
{
    for (int k = 0; k < N_MEASURED; k++)
        if (strcmp(name, measured_features[k]) == 0)
            return k;
    for (int k = 0; k < N_UNMEASURED; k++)
        if (strcmp(name, unmeasured_features[k]) == 0)
            return -1;
    return -2;
}

static int check_tree(const lucid_cart *t, const char *path, lucid_error *err)
{
    for (int f = 0; f < t->nfeat; f++)
        if (measured_index(t->names[f]) == -2)
            return lucid_error_set(err,
                                   "--sharing-model %s: the tree uses feature '%s', which lucidd "
                                   "cannot give it (it measures gpu_util, gmem_util, gmem)",
                                   path, t->names[f]);
    for (int c = 0; c < t->nclasses; c++)
        if (t->classes[c] != 0 && t->classes[c] != 1 && t->classes[c] != 2)
            return lucid_error_set(err,
                                   "--sharing-model %s: class %g is not a sharing score (0, 1 "
                                   "or 2): not a sharing model",
                                   path, t->classes[c]);
    return 0;
}

/* FNV-1a of the file, so a changed file is a new version. */
static uint64_t text_hash(const char *text)
{
    uint64_t h = 1469598103934665603ULL;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ULL;
    return h;
}

static int load_sharing(lucidd_models *m, int64_t now, lucid_error *err)
{
    const char *path = m->cfg.sharing_model;
    char note[256];
    if (!path) {
        snprintf(note, sizeof note,
                 "heuristic: profiled GPU utilisation < 30 %% light, < 60 %% medium, else heavy");
        return record_version(m, "sharing", note, 0, now, &m->sharing_version, err);
    }
    lucid_error load_err = {{0}};
    char *text = lucid_model_file_read(path, &load_err);
    m->tree = text ? lucid_cart_from_json(text, path, &load_err) : NULL;
    if (!m->tree) {
        free(text);
        return lucid_error_set(err, "--sharing-model %s", load_err.msg);
    }
    int rc = check_tree(m->tree, path, err);
    if (rc == 0) {
        snprintf(note, sizeof note,
                 "tree %s (%d leaves, %zu training rows, fnv %016llx); splits on amp, avg_speed, "
                 "auto_label take the heavier branch",
                 path, lucid_cart_leaves(m->tree), m->tree->train_rows,
                 (unsigned long long)text_hash(text));
        rc = record_version(m, "sharing", note, 1, now, &m->sharing_version, err);
    }
    free(text);
    return rc;
}

static int tree_score(const lucid_cart *t, const double *x, int id)
{
    const lucid_cart_node *nd = &t->nodes[id];
    if (nd->feature < 0)
        return (int)t->classes[nd->prediction];
    double v = x[nd->feature];
    if (isnan(v)) {
        int left = tree_score(t, x, nd->left), right = tree_score(t, x, nd->right);
        return left > right ? left : right;
    }
    /* Features are compared as float32, as in training (cart.c). */
    return tree_score(t, x, (double)(float)v <= nd->threshold ? nd->left : nd->right);
}

int lucidd_models_sharing(const lucidd_models *m, const lucid_gpu_sample *profile)
{
    if (!m || !m->tree)
        return profile->gpu_util_pct < 30 ? 0 : profile->gpu_util_pct < 60 ? 1 : 2;
    const double measured[N_MEASURED] = {profile->gpu_util_pct, profile->gmem_util_pct,
                                         profile->gmem_used_mib};
    double *x = malloc((size_t)(m->tree->nfeat ? m->tree->nfeat : 1) * sizeof *x);
    if (!x)
        return 2; /* heavy: never packed with another heavy job */
    for (int f = 0; f < m->tree->nfeat; f++) {
        int k = measured_index(m->tree->names[f]);
        x[f] = k >= 0 ? measured[k] : (double)NAN;
    }
    int score = tree_score(m->tree, x, 0);
    free(x);
    return score;
}

/* ---- open / close ---- */

lucidd_models *lucidd_models_open(const lucidd_models_config *cfg, lucid_state *state,
                                  int64_t now, lucid_error *err)
{
    lucidd_models *m = calloc(1, sizeof *m);
    if (!m) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    m->cfg = *cfg;
    m->state = state;
    atomic_init(&m->work.done, 0);
    if (load_sharing(m, now, err) < 0 || load_duration(m, now, err) < 0 ||
        record_version(m, "forecast",
                       "heuristic: packing on while the main queue asks more GPUs than are free "
                       "(no throughput model)",
                       0, now, &m->forecast_version, err) < 0) {
        lucidd_models_close(m);
        return NULL;
    }
    return m;
}

void lucidd_models_wait(lucidd_models *m)
{
    if (m->work.running && !m->work.joined) {
        pthread_join(m->work.thread, NULL);
        m->work.joined = 1;
    }
}

int lucidd_models_training(const lucidd_models *m) { return m->work.running; }

void lucidd_models_close(lucidd_models *m)
{
    if (!m)
        return;
    lucidd_models_wait(m);
    lucid_dataset_free(m->work.data);
    lucid_ebm_free(m->work.model);
    lucid_ebm_free(m->duration);
    lucid_cart_free(m->tree);
    lucid_duration_history_free(m->index);
    free(m->hist);
    free(m->hist_text);
    free(m);
}

const char *lucidd_models_warning(const lucidd_models *m) { return m->warning; }

int64_t lucidd_models_version(const lucidd_models *m, const char *name)
{
    if (strcmp(name, "duration") == 0)
        return m->duration_version;
    if (strcmp(name, "sharing") == 0)
        return m->sharing_version;
    return strcmp(name, "forecast") == 0 ? m->forecast_version : -1;
}

/* ---- the duration model's rows ---- */

/* Measured run of a finished job, seconds; NAN if it has none. */
static double finished_duration(const lucid_job_record *r)
{
    int64_t start = r->phase == LUCID_PHASE_DONE               ? r->main_start
                    : r->phase == LUCID_PHASE_DONE_IN_PROFILER ? r->profile_start
                                                               : 0;
    return start > 0 && r->end_time > start ? (double)(r->end_time - start) : (double)NAN;
}

typedef struct job_row {
    lucid_duration_job row;
    char key[16];
} job_row;

static void job_features(const lucidd_models *m, const lucidd_job *job, job_row *out)
{
    const lucid_job_record *r = &job->rec;
    snprintf(out->key, sizeof out->key, "%u", r->job_id);
    lucid_gpu_sample mean = lucid_gpu_profile_result(&job->profile);
    int profiled = job->profile.samples > 0;
    out->row = (lucid_duration_job){
        .key = out->key,
        .user = r->user,
        .vc = m->cfg.vc,
        .gpu_num = r->gpus,
        .cpu_num = r->cpus > 0 ? r->cpus : (double)NAN,
        .submit_time = r->submit_time,
        .amp = (double)NAN,
        .gpu_util = profiled ? mean.gpu_util_pct : (double)NAN,
        .gmem_util = profiled ? mean.gmem_util_pct : (double)NAN,
        .gmem = profiled ? mean.gmem_used_mib : (double)NAN,
        .duration = finished_duration(r),
    };
    out->row.end_time = isnan(out->row.duration) ? 0 : r->end_time;
}

/* ---- the update engine ---- */

static void *train_worker(void *arg)
{
    training *t = arg;
    t->model = lucid_ebm_train(t->data, &t->params, &t->err);
    atomic_store(&t->done, 1);
    return NULL;
}

static int start_training(lucidd_models *m, lucid_dataset *data, size_t rows, int64_t now,
                          lucid_error *err)
{
    training *t = &m->work;
    lucid_dataset_free(t->data);
    t->data = data;
    t->rows = rows;
    t->started_at = now;
    t->model = NULL;
    t->err = (lucid_error){{0}};
    lucid_duration_model_params(&t->params);
    t->params.outer_bags = m->cfg.bags;
    t->params.seed = m->cfg.seed;
    t->params.threads = 1; /* a second core stays with the decisions */
    atomic_store(&t->done, 0);
    m->last_training = now; /* a failure is retried a period later */
    if (pthread_create(&t->thread, NULL, train_worker, t) != 0)
        return lucid_error_set(err, "cannot start the training thread");
    t->running = 1;
    t->joined = 0;
    return 0;
}

/* The finished training becomes the next version, persisted with its file
 * text; then it replaces the model the estimates come from. */
static int install(lucidd_models *m, lucid_error *err)
{
    training *t = &m->work;
    lucidd_models_wait(m);
    t->running = 0;
    lucid_dataset_free(t->data);
    t->data = NULL;
    lucid_ebm *model = t->model;
    t->model = NULL;
    if (!model)
        return lucid_error_set(err, "training the duration model on %zu finished jobs: %s",
                               t->rows, t->err.msg);
    char *body = lucid_ebm_to_json(model, err);
    lucid_model_version v = {.version = m->duration_version + 1,
                             .trained_at = t->started_at,
                             .rows = (int64_t)t->rows};
    snprintf(v.name, sizeof v.name, "duration");
    snprintf(v.note, sizeof v.note,
             "GA2M (lr 0.01, 20 pairs, uniform bins, log1p target, %d bags) on %zu finished "
             "jobs; retrained "
             "every %.0f s",
             m->cfg.bags, t->rows, m->cfg.retrain_period_s);
    if (!body || lucid_state_save_model(m->state, &v, body, err) < 0) {
        free(body);
        lucid_ebm_free(model);
        return -1;
    }
    free(body);
    lucid_ebm_free(m->duration);
    m->duration = model;
    m->duration_version = v.version;
    m->duration_rows = t->rows;
    return 1;
}

/* Points each history row at its own strings again (after hist_text moved). */
static void repoint(lucidd_models *m)
{
    for (size_t i = 0; i < m->nhist; i++) {
        m->hist[i].key = m->hist_text[i].key;
        m->hist[i].user = m->hist_text[i].user;
        m->hist[i].vc = m->cfg.vc;
    }
}

size_t lucidd_models_history_max(const lucidd_models *m)
{
    return m->cfg.history_max ? m->cfg.history_max : LUCIDD_MODELS_HISTORY_MAX;
}

int lucidd_models_add_finished(lucidd_models *m, const lucidd_job *job)
{
    if (!m || isnan(finished_duration(&job->rec)))
        return 0;
    size_t max = lucidd_models_history_max(m);
    if (m->nhist >= max + max / 4 || m->nhist == m->hist_cap) {
        /* The index points at hist_text's users and counts positions in
         * hist: both move now. */
        lucid_duration_history_free(m->index);
        m->index = NULL;
    }
    if (m->nhist >= max + max / 4) {
        /* Drop the oldest rows down to max: amortised O(1) a row. */
        size_t drop = m->nhist - max + 1;
        memmove(m->hist, m->hist + drop, (m->nhist - drop) * sizeof *m->hist);
        memmove(m->hist_text, m->hist_text + drop, (m->nhist - drop) * sizeof *m->hist_text);
        m->nhist -= drop;
        repoint(m);
    }
    if (m->nhist == m->hist_cap) {
        size_t cap = m->hist_cap ? m->hist_cap * 2 : 256;
        if (cap > max + max / 4)
            cap = max + max / 4;
        lucid_duration_job *hist = realloc(m->hist, cap * sizeof *hist);
        if (!hist)
            return -1;
        m->hist = hist;
        struct hist_text *text = realloc(m->hist_text, cap * sizeof *text);
        if (!text)
            return -1;
        m->hist_text = text;
        m->hist_cap = cap;
        repoint(m);
    }
    job_row row;
    job_features(m, job, &row);
    struct hist_text *text = &m->hist_text[m->nhist];
    snprintf(text->key, sizeof text->key, "%s", row.key);
    snprintf(text->user, sizeof text->user, "%s", job->rec.user);
    m->hist[m->nhist] = row.row;
    m->hist[m->nhist].key = text->key;
    m->hist[m->nhist].user = text->user;
    lucid_error err = {{0}};
    if (m->index && lucid_duration_history_add(m->index, &m->hist[m->nhist], m->nhist, &err) < 0) {
        lucid_duration_history_free(m->index); /* built afresh at the next estimate */
        m->index = NULL;
    }
    m->nhist++;
    m->finished++;
    return 1;
}

int lucidd_models_update(lucidd_models *m, int64_t now, lucid_error *err)
{
    if (m->work.running)
        return atomic_load(&m->work.done) ? install(m, err) : 0;
    int due = m->last_training == 0 || now >= m->last_training + (int64_t)m->cfg.retrain_period_s;
    if (m->finished < m->cfg.min_history || !due)
        return 0;
    lucid_dataset *data = lucid_features_duration_jobs(m->hist, m->nhist, 1, err);
    if (!data) {
        m->last_training = now;
        return -1;
    }
    return start_training(m, data, m->nhist, now, err);
}

/* ---- estimates and why ---- */

/* The finished jobs' index, built if hist changed since the last one. */
static const lucid_duration_history *history_index(lucidd_models *m, lucid_error *err)
{
    if (!m->index)
        m->index = lucid_duration_history_new(m->hist, m->nhist, err);
    return m->index;
}

/* The jobs' features as a dataset (no target), each job's user's recent
 * jobs from the finished jobs the models were told of. */
static lucid_dataset *jobs_table(lucidd_models *m, const lucidd_job *const *jobs, size_t n,
                                 lucid_error *err)
{
    const lucid_duration_history *ix = history_index(m, err);
    job_row *rows = ix ? malloc((n ? n : 1) * sizeof *rows) : NULL;
    lucid_duration_job *plain = rows ? malloc((n ? n : 1) * sizeof *plain) : NULL;
    lucid_dataset *ds = NULL;
    if (ix && !plain)
        lucid_error_set(err, "out of memory");
    if (plain) {
        for (size_t i = 0; i < n; i++) {
            job_features(m, jobs[i], &rows[i]);
            plain[i] = rows[i].row;
            plain[i].key = rows[i].key;
        }
        ds = lucid_features_duration_indexed(plain, n, ix, 0, err);
    }
    free(plain);
    free(rows);
    return ds;
}

static lucid_dataset *one_job(lucidd_models *m, const lucidd_job *job, lucid_error *err)
{
    return jobs_table(m, &job, 1, err);
}

double lucidd_models_estimate(lucidd_models *m, const lucidd_job *job, double heuristic_s,
                              int64_t *version)
{
    double estimate_s = heuristic_s;
    lucidd_models_estimate_many(m, &job, 1, &estimate_s, version);
    return estimate_s;
}

void lucidd_models_estimate_many(lucidd_models *m, const lucidd_job *const *jobs, size_t n,
                                 double *estimate_s, int64_t *version)
{
    for (size_t i = 0; i < n; i++)
        version[i] = 0;
    if (!m || !m->duration || n == 0)
        return;
    lucid_error err = {{0}};
    lucid_dataset *table = jobs_table(m, jobs, n, &err);
    double *prediction = table ? malloc(n * sizeof *prediction) : NULL;
    if (prediction && lucid_ebm_predict(m->duration, table, prediction, &err) == 0)
        for (size_t i = 0; i < n; i++)
            if (isfinite(prediction[i])) {
                estimate_s[i] = prediction[i] < 1 ? 1 : prediction[i];
                version[i] = m->duration_version;
            }
    free(prediction);
    lucid_dataset_free(table);
}

void lucidd_models_explain(lucidd_models *m, const lucidd_job *job, int64_t version,
                           char *buf, size_t size)
{
    if (version < 0) {
        snprintf(buf, size, "estimated before lucidd last started (the estimates table has it)");
        return;
    }
    if (version == 0) {
        snprintf(buf, size,
                 "heuristic (no duration model yet: %zu of %zu finished jobs): the job's Slurm "
                 "time limit, else --default-estimate, never below the profiling limit for a "
                 "profiled job",
                 m ? m->finished : 0, m ? m->cfg.min_history : 0);
        return;
    }
    if (!m || !m->duration || version != m->duration_version) {
        snprintf(buf, size, "duration model v%lld, since replaced by v%lld",
                 (long long)version, m ? (long long)m->duration_version : 0LL);
        return;
    }
    lucid_error err = {{0}};
    lucid_dataset *one = one_job(m, job, &err);
    char terms[768] = "";
    double prediction = 0;
    if (!one || lucid_ebm_predict(m->duration, one, &prediction, &err) < 0 ||
        lucid_explain_terms_line(m->duration, one, 5, terms, sizeof terms, &err) < 0)
        snprintf(terms, sizeof terms, "(%.300s)", err.msg);
    lucid_dataset_free(one);
    snprintf(buf, size, "duration model v%lld (trained on %zu finished jobs): %.0f s = %s",
             (long long)version, m->duration_rows, prediction, terms);
}
