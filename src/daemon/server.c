/* server.c — lucidd's two listeners, served from the main poll loop:
 *   - a local UNIX socket speaking one JSON request per connection
 *     ({"cmd":"queue"|"status"|"explain","job":N}) answered by one JSON line
 *     (docs/live.md); what `lucid queue` and `lucid status` read;
 *   - Prometheus text format on http://127.0.0.1:PORT/metrics.
 * A client gets one second to send its request; a bad request gets
 * {"ok":false,"error":...} and the daemon goes on. */
#define _GNU_SOURCE /* struct ucred, SO_PEERCRED */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "daemon.h"
#include "models.h"

static int listen_unix(const char *path, lucid_error *err)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path)
        return lucid_error_set(err, "socket path %s is too long", path);
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return lucid_error_set(err, "socket: %s", strerror(errno));
    unlink(path); /* a stale socket from a killed daemon */
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 16) < 0) {
        close(fd);
        return lucid_error_set(err, "cannot listen on %s: %s", path, strerror(errno));
    }
    return fd;
}

static int listen_http(int port, lucid_error *err)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return lucid_error_set(err, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(fd, 16) < 0) {
        close(fd);
        return lucid_error_set(err, "cannot listen on 127.0.0.1:%d: %s", port, strerror(errno));
    }
    return fd;
}

int server_open(lucidd *d, int *unix_fd, int *http_fd, lucid_error *err)
{
    *unix_fd = listen_unix(d->cfg.socket_path, err);
    if (*unix_fd < 0)
        return -1;
    *http_fd = -1;
    if (d->cfg.metrics_port > 0 && (*http_fd = listen_http(d->cfg.metrics_port, err)) < 0) {
        close(*unix_fd);
        return -1;
    }
    return 0;
}

/* Reads until a newline or EOF (or 1 s passes); 0 on success. */
static int read_request(int fd, char *buf, size_t size)
{
    size_t used = 0;
    while (used + 1 < size) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            return -1;
        ssize_t n = read(fd, buf + used, size - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        buf[used] = '\0';
        if (memchr(buf, '\n', used))
            break;
    }
    buf[used] = '\0';
    return used > 0 ? 0 : -1;
}

static void write_all(int fd, const char *text, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        text += n;
        len -= (size_t)n;
    }
}

/* The phase a user sees: "releasing" while lucid released the job and
 * Slurm has not started it (Slurm's reason then says why). */
static const char *shown_phase(const lucidd_job *job)
{
    if (job->releasing &&
        (job->rec.phase == LUCID_PHASE_RUNNING || job->rec.phase == LUCID_PHASE_PROFILING))
        return "releasing";
    return lucid_phase_name(job->rec.phase);
}

static json_t *job_json(const lucidd_job *job)
{
    const lucid_job_record *r = &job->rec;
    json_t *obj = json_pack("{s:I, s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:i, s:I, s:s, s:s, s:s,"
                            " s:I, s:I, s:I, s:I, s:i}",
                            "job", (json_int_t)r->job_id, "user", r->user, "name", r->name,
                            "partition", r->partition, "phase", shown_phase(job), "gpus",
                            r->gpus, "nodes", r->nodes, "priority", r->priority, "estimate_s",
                            r->estimate_s, "sharing_score", r->sharing_score, "packed_with",
                            (json_int_t)r->packed_with, "node_list", r->node_list, "gpu_list",
                            r->gpu_list, "reason", r->reason, "submit_time",
                            (json_int_t)r->submit_time, "profile_start",
                            (json_int_t)r->profile_start, "main_start", (json_int_t)r->main_start,
                            "end_time", (json_int_t)r->end_time, "runs", r->runs);
    if (obj) {
        json_object_set_new(obj, "outcome", json_string(r->outcome));
        json_object_set_new(obj, "ended_in", json_string(r->ended_in));
        json_object_set_new(obj, "waits_for", json_string(job->waits_for));
        json_object_set_new(obj, "slurm_reason", json_string(job->releasing ? job->slurm_reason : ""));
        json_object_set_new(obj, "user_hold", json_boolean(r->user_hold));
        json_object_set_new(obj, "profiled_s", json_real(r->profiled_s));
    }
    return obj;
}

static json_t *queue_json(lucidd *d, int all)
{
    json_t *jobs = json_array();
    for (size_t i = 0; i < d->njobs; i++)
        if (all || !lucid_phase_is_final(d->jobs[i].rec.phase))
            json_array_append_new(jobs, job_json(&d->jobs[i]));
    return json_pack("{s:b, s:o}", "ok", 1, "jobs", jobs);
}

typedef struct lucidd_counts {
    long by_phase[LUCID_PHASE_COUNT];
    long profiled, packed_pairs;
} lucidd_counts;

static lucidd_counts count_jobs(const lucidd *d)
{
    lucidd_counts c;
    memset(&c, 0, sizeof c);
    for (size_t i = 0; i < d->njobs; i++) {
        const lucid_job_record *r = &d->jobs[i].rec;
        c.by_phase[r->phase]++;
        if (r->profile_start || r->phase == LUCID_PHASE_DONE_IN_PROFILER)
            c.profiled++;
        if (r->packed_with && r->phase == LUCID_PHASE_RUNNING && r->packed_with < r->job_id)
            c.packed_pairs++;
    }
    return c;
}

static json_t *status_json(lucidd *d)
{
    lucidd_counts c = count_jobs(d);
    json_t *phases = json_object();
    for (int p = 0; p < LUCID_PHASE_COUNT; p++)
        json_object_set_new(phases, lucid_phase_name((lucid_phase)p), json_integer(c.by_phase[p]));
    json_t *models = json_array();
    lucid_model_version *list = NULL;
    lucid_error err = {{0}};
    long n = lucid_state_list_model_versions(d->state, &list, &err);
    for (long i = 0; i < n; i++)
        json_array_append_new(models, json_pack("{s:s, s:I, s:I, s:I, s:s}", "name", list[i].name,
                                                "version", (json_int_t)list[i].version,
                                                "trained_at", (json_int_t)list[i].trained_at,
                                                "rows", (json_int_t)list[i].rows,
                                                "note", list[i].note));
    free(list);
    const char *mode = d->cfg.packing_mode < 0 ? "auto" : d->cfg.packing_mode ? "on" : "off";
    return json_pack(
        "{s:b, s:{s:s, s:f, s:i, s:i, s:i}, s:{s:s, s:b}, s:s, s:{s:s, s:s}, s:o, s:o,"
        " s:I, s:I, s:b, s:s, s:f, s:f, s:I}",
        "ok", 1, "profiler", "partition", d->cfg.profiling_partition, "time_limit_s",
        d->cfg.profile_limit_s, "gpu_limit", d->cfg.gpu_limit, "queued",
        (int)c.by_phase[LUCID_PHASE_PROFILE_QUEUE], "running",
        (int)c.by_phase[LUCID_PHASE_PROFILING], "packing", "mode", mode, "on", d->packing_on,
        "main_partition", d->cfg.main_partition, "gpu_metrics", "backend",
        lucid_gpumetrics_backend_name(d->metrics), "detail", lucid_gpumetrics_describe(d->metrics),
        "models", models, "phases", phases, "profiled", (json_int_t)c.profiled,
        "packed_pairs", (json_int_t)c.packed_pairs, "slurm_reachable", d->slurm_up,
        "last_error", d->last_error, "decision_latency_p50_s", engine_latency_quantile(d, 0.5),
        "decision_latency_p99_s", engine_latency_quantile(d, 0.99), "uptime_s",
        (json_int_t)(time(NULL) - d->started));
}

/* {"profiler/completed": 12, "queue/cancelled": 3, ...} */
static json_t *ended_json(const lucidd *d)
{
    lucidd_ended ended[64];
    int n = engine_ended_counts(d, ended, 64);
    json_t *obj = json_object();
    for (int i = 0; i < n; i++) {
        char key[48];
        snprintf(key, sizeof key, "%.15s/%.23s", ended[i].where, ended[i].outcome);
        json_object_set_new(obj, key, json_integer(ended[i].count));
    }
    return obj;
}

static json_t *status_full_json(lucidd *d)
{
    json_t *obj = status_json(d);
    if (!obj)
        return NULL;
    json_object_set_new(obj, "ended", ended_json(d));
    json_object_set_new(obj, "ticks", json_integer((json_int_t)d->ticks));
    json_object_set_new(obj, "slurm_unreachable_since", json_integer((json_int_t)d->slurm_down_since));
    return obj;
}

static json_t *explain_json(lucidd *d, json_int_t job_id)
{
    lucidd_job *job = job_id > 0 && job_id <= UINT32_MAX ? engine_find(d, (uint32_t)job_id) : NULL;
    if (!job)
        return json_pack("{s:b, s:s}", "ok", 0, "error", "no such job under lucid");
    json_t *decisions = json_array();
    lucid_decision_record *list = NULL;
    lucid_error err = {{0}};
    long n = lucid_state_list_decisions(d->state, job->rec.job_id, &list, &err);
    for (long i = 0; i < n; i++)
        json_array_append_new(decisions,
                              json_pack("{s:I, s:s, s:s, s:s, s:b}", "at", (json_int_t)list[i].at,
                                        "action", list[i].action, "target", list[i].target,
                                        "reason", list[i].reason, "acked", list[i].acked));
    free(list);
    json_t *phases = json_array();
    lucid_phase history[64];
    int64_t times[64];
    long nphases = lucid_state_phase_history(d->state, job->rec.job_id, history, times, 64, &err);
    for (long i = 0; i < nphases; i++)
        json_array_append_new(phases, json_pack("{s:s, s:I}", "phase", lucid_phase_name(history[i]),
                                                "at", (json_int_t)times[i]));
    lucid_gpu_sample profile = lucid_gpu_profile_result(&job->profile);
    char why[1024];
    lucidd_models_explain(d->models, job, job->estimate_version, why, sizeof why);
    return json_pack("{s:b, s:o, s:{s:s, s:I, s:s}, s:o, s:{s:I, s:f, s:f, s:f}, s:o}", "ok", 1,
                     "job", job_json(job), "estimate", "model", "duration", "version",
                     (json_int_t)job->estimate_version, "why", why, "phases", phases,
                     "profile", "samples", (json_int_t)job->profile.samples, "gpu_util_pct",
                     profile.gpu_util_pct, "gmem_used_mib", profile.gmem_used_mib,
                     "gmem_util_pct", profile.gmem_util_pct, "decisions", decisions);
}

/* {"cmd":"release","job":N}: the owner lifts their own sbatch -H hold. */
static json_t *release_json(lucidd *d, json_int_t job_id, uint32_t uid)
{
    char reply[300];
    if (job_id <= 0 || job_id > UINT32_MAX)
        return json_pack("{s:b, s:s}", "ok", 0, "error", "release needs a job id");
    int rc = engine_release(d, (uint32_t)job_id, uid, reply, sizeof reply);
    return json_pack("{s:b, s:s}", "ok", rc == 0, rc == 0 ? "message" : "error", reply);
}

static json_t *answer(lucidd *d, const char *request, uint32_t uid)
{
    json_error_t jerr;
    json_t *req = json_loads(request, JSON_DISABLE_EOF_CHECK, &jerr);
    const char *cmd = NULL;
    json_int_t job_id = 0;
    int all = 0;
    if (!req || json_unpack(req, "{s:s, s?I, s?b}", "cmd", &cmd, "job", &job_id, "all", &all) < 0) {
        json_decref(req);
        return json_pack("{s:b, s:s}", "ok", 0, "error",
                         "bad request: expected {\"cmd\":\"queue\"|\"status\"|\"explain\"}");
    }
    json_t *reply;
    if (strcmp(cmd, "queue") == 0)
        reply = queue_json(d, all);
    else if (strcmp(cmd, "status") == 0)
        reply = status_full_json(d);
    else if (strcmp(cmd, "explain") == 0)
        reply = explain_json(d, job_id);
    else if (strcmp(cmd, "release") == 0)
        reply = release_json(d, job_id, uid);
    else
        reply = json_pack("{s:b, s:s}", "ok", 0, "error", "unknown cmd");
    json_decref(req);
    return reply;
}

void server_handle_unix(lucidd *d, int listen_fd)
{
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0)
        return;
    char request[4096];
    struct ucred cred = {.uid = (uid_t)-1};
    socklen_t cred_len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) < 0)
        cred.uid = (uid_t)-1; /* unknown peer: owns nothing */
    if (read_request(fd, request, sizeof request) == 0) {
        json_t *reply = answer(d, request, (uint32_t)cred.uid);
        char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
        if (text) {
            write_all(fd, text, strlen(text));
            write_all(fd, "\n", 1);
        }
        free(text);
        json_decref(reply);
    }
    close(fd);
}

static void metric(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void metric(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if (*buf && *len + (size_t)n < *cap) {
            *len += (size_t)n;
            return;
        }
        size_t want = (*cap ? *cap * 2 : 4096) + (size_t)n;
        char *grown = realloc(*buf, want);
        if (!grown)
            return;
        *buf = grown;
        *cap = want;
    }
}

static char *metrics_text(lucidd *d, size_t *len)
{
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    lucidd_counts c = count_jobs(d);
    metric(&buf, len, &cap, "# HELP lucid_queue_jobs Jobs waiting, by queue.\n"
                            "# TYPE lucid_queue_jobs gauge\n"
                            "lucid_queue_jobs{queue=\"profiling\"} %ld\n"
                            "lucid_queue_jobs{queue=\"main\"} %ld\n",
           c.by_phase[LUCID_PHASE_PROFILE_QUEUE], c.by_phase[LUCID_PHASE_MAIN_QUEUE]);
    metric(&buf, len, &cap, "# HELP lucid_jobs Jobs under lucid, by phase.\n# TYPE lucid_jobs gauge\n");
    for (int p = 0; p < LUCID_PHASE_COUNT; p++)
        metric(&buf, len, &cap, "lucid_jobs{phase=\"%s\"} %ld\n", lucid_phase_name((lucid_phase)p),
               c.by_phase[p]);
    metric(&buf, len, &cap,
           "# HELP lucid_profiled_jobs_total Jobs that ran on the profiling partition.\n"
           "# TYPE lucid_profiled_jobs_total counter\nlucid_profiled_jobs_total %ld\n"
           "# HELP lucid_finished_in_profiler_total Jobs that ended within the profiling limit.\n"
           "# TYPE lucid_finished_in_profiler_total counter\nlucid_finished_in_profiler_total %ld\n"
           "# HELP lucid_packed_pairs Pairs of jobs sharing GPUs now.\n"
           "# TYPE lucid_packed_pairs gauge\nlucid_packed_pairs %ld\n"
           "# HELP lucid_packing_on Whether packing is switched on.\n"
           "# TYPE lucid_packing_on gauge\nlucid_packing_on %d\n",
           c.profiled, c.by_phase[LUCID_PHASE_DONE_IN_PROFILER], c.packed_pairs, d->packing_on);
    metric(&buf, len, &cap,
           "# HELP lucid_decision_latency_seconds Time of one decision step (recent window).\n"
           "# TYPE lucid_decision_latency_seconds summary\n"
           "lucid_decision_latency_seconds{quantile=\"0.5\"} %.9f\n"
           "lucid_decision_latency_seconds{quantile=\"0.99\"} %.9f\n"
           "lucid_decision_latency_seconds_sum %.9f\n"
           "lucid_decision_latency_seconds_count %llu\n",
           engine_latency_quantile(d, 0.5), engine_latency_quantile(d, 0.99), d->latency_sum_s,
           (unsigned long long)d->latency_count);
    metric(&buf, len, &cap,
           "# HELP lucid_slurm_errors_total Failed calls to Slurm.\n"
           "# TYPE lucid_slurm_errors_total counter\nlucid_slurm_errors_total %llu\n"
           "# HELP lucid_gpu_metrics_backend The active GPU metrics backend.\n"
           "# TYPE lucid_gpu_metrics_backend gauge\nlucid_gpu_metrics_backend{backend=\"%s\"} 1\n",
           (unsigned long long)d->slurm_errors, lucid_gpumetrics_backend_name(d->metrics));
    lucidd_ended ended[64];
    int nended = engine_ended_counts(d, ended, 64);
    metric(&buf, len, &cap,
           "# HELP lucid_jobs_ended_total Jobs that ended, by where (queue, profiler, main) and outcome.\n"
           "# TYPE lucid_jobs_ended_total counter\n");
    for (int i = 0; i < nended; i++)
        metric(&buf, len, &cap, "lucid_jobs_ended_total{where=\"%s\",outcome=\"%s\"} %ld\n",
               ended[i].where, ended[i].outcome, ended[i].count);
    return buf;
}

void server_handle_http(lucidd *d, int listen_fd)
{
    int fd = accept(listen_fd, NULL, NULL);
    if (fd < 0)
        return;
    char request[2048];
    if (read_request(fd, request, sizeof request) == 0) {
        char head[256];
        if (strncmp(request, "GET /metrics ", 13) == 0 || strncmp(request, "GET /metrics\r", 13) == 0) {
            size_t len = 0;
            char *body = metrics_text(d, &len);
            int n = snprintf(head, sizeof head,
                             "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                             "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                             len);
            write_all(fd, head, (size_t)n);
            if (body)
                write_all(fd, body, len);
            free(body);
        } else {
            static const char not_found[] = "HTTP/1.0 404 Not Found\r\nContent-Length: 10\r\n"
                                            "Connection: close\r\n\r\nnot found\n";
            write_all(fd, not_found, sizeof not_found - 1);
        }
    }
    close(fd);
}
