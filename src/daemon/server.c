/* server.c — lucidd's two listeners, served on their own thread:
 *   - a local UNIX socket speaking one JSON request per connection
 *     ({"cmd":"queue"|"status"|"explain"|"release", ...}) answered by one
 *     JSON line (docs/live.md); what `lucid queue` and `lucid status` read;
 *   - Prometheus text format on http://ADDR:PORT/metrics (--metrics-bind,
 *     127.0.0.1 unless the operator opens it).
 *
 * Answers depend on who asks (the socket's peer credentials, SO_PEERCRED):
 * root, lucidd's own user and members of --admin-group see every job;
 * any other user sees only their own jobs in `queue` and `explain`.
 * `status` and /metrics are counts only and the same for everyone.
 *
 * Nothing here can stop a decision (docs/live.md, "Threads and clients"):
 * answers are rendered from the snapshot the engine published after its
 * last tick, never from its live structures; requests that need the engine
 * are queued (hub.c) and answered when it posts the result.  Every socket is
 * non-blocking and served by one poll loop with per-connection deadlines: a
 * request must arrive whole within REQUEST_DEADLINE_S of the connection, a
 * reply must drain within REPLY_DEADLINE_S, else the connection is dropped;
 * at most SERVER_MAX_CONNS connections are open, the next ones get one error
 * line and are closed at once; no reply is larger than REPLY_MAX_BYTES. */
#define _GNU_SOURCE /* struct ucred (SO_PEERCRED) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "lucid/util.h"

#define SERVER_MAX_CONNS 64
#define REQUEST_DEADLINE_S 2.0
#define REPLY_DEADLINE_S 10.0
#define RELEASE_DEADLINE_S 10.0 /* the engine answers at its next tick */
#define WHY_DEADLINE_S 2.0      /* explain answers without the why after this */
#define REPLY_MAX_BYTES ((size_t)64 << 20)
#define REQUEST_MAX 4096

typedef enum conn_phase { CONN_READING, CONN_WAITING, CONN_WRITING } conn_phase;

typedef struct conn {
    int fd;
    int http;
    conn_phase phase;
    double deadline; /* monotonic */
    char in[REQUEST_MAX];
    size_t in_len;
    char *out;
    size_t out_len, out_off, out_cap;
    lucidd_snapshot *streaming; /* `queue` rendered a slice at a time as the client reads */
    size_t cursor, emitted;     /* next job of `streaming`; jobs written so far */
    int all;
    uint32_t uid;
    int32_t pid;
    int have_cred;
    int sees_all;      /* root, lucidd's user or --admin-group: every job */
    char user[64];     /* the peer's user name ("" unknown): matches jobs whose
                        * uid Slurm has not reported yet (loaded from the store) */
    uint64_t cmd_id;   /* while waiting for the engine */
    json_t *pending;   /* explain, waiting for its "why" */
} conn;

struct lucidd_server {
    const lucidd_config *cfg; /* the caller's, outlives the server */
    lucidd_hub *hub;
    lucid_state *reader; /* the server's own read-only connection (explain), opened
                          * at the first use: the daemon opens the store after binding */
    int unix_fd, http_fd;
    char socket_path[108];
    dev_t socket_dev;
    ino_t socket_ino;
    conn conns[SERVER_MAX_CONNS];
    int nconns;
};

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void set_nonblocking(int fd)
{
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

/* ---- listeners ---- */

/* A path that exists is replaced only if it is a socket nobody answers on
 * (left by a killed daemon): never another lucidd's, never a file. */
static int check_socket_path(const char *path, const struct sockaddr_un *addr, lucid_error *err)
{
    struct stat st;
    if (lstat(path, &st) < 0)
        return errno == ENOENT ? 0 : lucid_error_set(err, "%s: %s", path, strerror(errno));
    if (!S_ISSOCK(st.st_mode))
        return lucid_error_set(err, "%s exists and is not a socket: not replacing it", path);
    int probe = socket(AF_UNIX, SOCK_STREAM, 0);
    if (probe < 0)
        return lucid_error_set(err, "socket: %s", strerror(errno));
    int rc = connect(probe, (const struct sockaddr *)addr, sizeof *addr);
    int saved = errno;
    close(probe);
    if (rc == 0)
        return lucid_error_set(err, "another lucidd serves %s", path);
    if (saved != ECONNREFUSED)
        return lucid_error_set(err, "cannot tell whether %s is in use: %s", path, strerror(saved));
    if (unlink(path) < 0 && errno != ENOENT)
        return lucid_error_set(err, "cannot remove the stale socket %s: %s", path, strerror(errno));
    return 0;
}

static int listen_unix(lucidd_server *srv, const lucidd_config *cfg, lucid_error *err)
{
    const char *path = cfg->socket_path;
    int mode = cfg->socket_mode;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path)
        return lucid_error_set(err, "socket path %s is too long", path);
    memcpy(addr.sun_path, path, strlen(path) + 1);
    if (check_socket_path(path, &addr, err) < 0)
        return -1;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return lucid_error_set(err, "socket: %s", strerror(errno));
    struct stat st;
    /* The group before the mode: with 0660, the socket is never open to a
     * group it was not meant for. */
    int bound = bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    if (!bound || listen(fd, SERVER_MAX_CONNS) < 0 ||
        (cfg->socket_group && chown(path, (uid_t)-1, (gid_t)cfg->socket_gid) < 0) ||
        (mode >= 0 && chmod(path, (mode_t)mode) < 0) || stat(path, &st) < 0) {
        int saved = errno;
        if (cfg->socket_group && saved == EPERM)
            lucid_error_set(err, "cannot give %s to group %s: %s (lucidd's user must be a member)",
                            path, cfg->socket_group, strerror(saved));
        else
            lucid_error_set(err, "cannot listen on %s: %s", path, strerror(saved));
        if (bound)
            unlink(path); /* ours, just bound: not left behind */
        close(fd);
        return -1;
    }
    /* What we bound: at exit the path is removed only if it is still this. */
    srv->socket_dev = st.st_dev;
    srv->socket_ino = st.st_ino;
    snprintf(srv->socket_path, sizeof srv->socket_path, "%s", path);
    set_nonblocking(fd);
    return fd;
}

/* /metrics on `bind_addr` (numeric IPv4 or IPv6; NULL: 127.0.0.1). */
static int listen_http(const char *bind_addr, int port, lucid_error *err)
{
    const char *host = bind_addr ? bind_addr : "127.0.0.1";
    struct sockaddr_in v4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 v6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    int family = inet_pton(AF_INET, host, &v4.sin_addr) == 1    ? AF_INET
                 : inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 ? AF_INET6
                                                                 : 0;
    if (!family)
        return lucid_error_set(err, "--metrics-bind %s: not an IPv4 or IPv6 address", host);
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0)
        return lucid_error_set(err, "socket: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const struct sockaddr *addr =
        family == AF_INET ? (const struct sockaddr *)&v4 : (const struct sockaddr *)&v6;
    socklen_t len = family == AF_INET ? (socklen_t)sizeof v4 : (socklen_t)sizeof v6;
    if (bind(fd, addr, len) < 0 || listen(fd, SERVER_MAX_CONNS) < 0) {
        int saved = errno;
        close(fd);
        return lucid_error_set(err, family == AF_INET ? "cannot listen on %s:%d: %s"
                                                      : "cannot listen on [%s]:%d: %s",
                               host, port, strerror(saved));
    }
    set_nonblocking(fd);
    return fd;
}

lucidd_server *server_open(const lucidd_config *cfg, lucidd_hub *hub, lucid_error *err)
{
    lucidd_server *srv = calloc(1, sizeof *srv);
    if (!srv) {
        lucid_error_set(err, "out of memory");
        return NULL;
    }
    srv->cfg = cfg;
    srv->hub = hub;
    srv->unix_fd = srv->http_fd = -1;
    srv->unix_fd = listen_unix(srv, cfg, err);
    if (srv->unix_fd < 0 ||
        (cfg->metrics_port > 0 &&
         (srv->http_fd = listen_http(cfg->metrics_bind, cfg->metrics_port, err)) < 0)) {
        server_close(srv);
        return NULL;
    }
    return srv;
}

static void conn_close(lucidd_server *srv, conn *c)
{
    if (c->cmd_id)
        lucidd_hub_forget(srv->hub, c->cmd_id);
    json_decref(c->pending);
    lucidd_hub_release(srv->hub, c->streaming);
    free(c->out);
    close(c->fd);
    *c = srv->conns[--srv->nconns]; /* order does not matter */
}

void server_close(lucidd_server *srv)
{
    if (!srv)
        return;
    while (srv->nconns > 0)
        conn_close(srv, &srv->conns[0]);
    if (srv->unix_fd >= 0) {
        close(srv->unix_fd);
        struct stat st;
        if (stat(srv->socket_path, &st) == 0 && st.st_dev == srv->socket_dev &&
            st.st_ino == srv->socket_ino)
            unlink(srv->socket_path);
    }
    if (srv->http_fd >= 0)
        close(srv->http_fd);
    lucid_state_close(srv->reader);
    free(srv);
}

/* ---- answers, from a snapshot ---- */

static json_t *error_json(const char *message)
{
    return json_pack("{s:b, s:s}", "ok", 0, "error", message);
}

/* Text as JSON wants it: bytes >= 0x80 become '?' (only used when the
 * text is not valid UTF-8, so one bad name cannot hide a job or break a reply). */
static const char *ascii_copy(const char *text, char *buf, size_t size)
{
    size_t k = 0;
    for (; text[k] && k + 1 < size; k++)
        buf[k] = (unsigned char)text[k] < 0x80 ? text[k] : '?';
    buf[k] = '\0';
    return buf;
}

/* The phase a user sees: "releasing" while lucid released the job and
 * Slurm has not started it (slurm_reason then says why). */
static const char *shown_phase(const lucidd_job *job)
{
    if (job->releasing &&
        (job->rec.phase == LUCID_PHASE_RUNNING || job->rec.phase == LUCID_PHASE_PROFILING))
        return "releasing";
    return lucid_phase_name(job->rec.phase);
}

/* What a job's record adds beyond the fixed fields: how it ended, what it
 * waits for, Slurm's reason while it is releasing. */
static void job_extra(json_t *obj, const lucidd_job *job)
{
    const lucid_job_record *r = &job->rec;
    char safe[sizeof job->slurm_reason];
    json_object_set_new(obj, "outcome", json_string(r->outcome));
    json_object_set_new(obj, "ended_in", json_string(r->ended_in));
    json_object_set_new(obj, "waits_for", json_string(job->waits_for));
    json_t *reason = json_string(job->releasing ? job->slurm_reason : "");
    json_object_set_new(obj, "slurm_reason",
                        reason ? reason : json_string(ascii_copy(job->slurm_reason, safe, sizeof safe)));
    json_object_set_new(obj, "user_hold", json_boolean(r->user_hold));
    json_object_set_new(obj, "profiled_s", json_real(r->profiled_s));
    /* A job Slurm requeued from main: its first start there (UTC s, 0 =
     * never) and the seconds of the runs cut short (main_start is the last). */
    json_object_set_new(obj, "main_first_start", json_integer((json_int_t)r->main_first_start));
    json_object_set_new(obj, "main_earlier_s", json_integer((json_int_t)r->main_earlier_s));
    json_object_set_new(obj, "time_limit_s", json_integer((json_int_t)r->time_limit_s));
    /* The site's factors in the queue's order (like sprio): Slurm's
     * fair-share factor of its association (-1 unknown) and the value the
     * queue is ordered by (lucid's priority x the factors, lower first). */
    json_object_set_new(obj, "fairshare", json_real(job->fairshare));
    json_object_set_new(obj, "qos", json_string(ascii_copy(job->qos, safe, sizeof safe)));
    json_object_set_new(obj, "qos_factor", json_real(job->qos_factor));
    json_object_set_new(obj, "order_priority",
                        json_real(job->order_priority > 0 ? job->order_priority : r->priority));
    /* The start-time estimate while it waits (UTC s, 0 = none; start_none
     * says why there is none), and the reservation backfill holds for it. */
    json_object_set_new(obj, "start_p10", json_integer((json_int_t)job->eta_p10));
    json_object_set_new(obj, "start_p50", json_integer((json_int_t)job->eta_p50));
    json_object_set_new(obj, "start_p90", json_integer((json_int_t)job->eta_p90));
    json_object_set_new(obj, "start_none", json_string(job->eta_none));
    json_object_set_new(obj, "jobs_ahead", json_integer(job->eta_ahead));
    json_object_set_new(obj, "reserved_at", json_integer((json_int_t)job->reserved_at));
    /* Since when it holds the reservation (UTC s, 0 = none): kept across
     * ticks and restarts, unlike reserved_at, which is where it lies now
     * (0 while it holds one that fits nowhere now). */
    json_object_set_new(obj, "reserved_since", json_integer((json_int_t)r->reserved_since));
    char nodes[sizeof job->reserved_nodes];
    json_object_set_new(obj, "reserved_nodes",
                        json_string(ascii_copy(job->reserved_nodes, nodes, sizeof nodes)));
}

static json_t *job_json(const lucidd_job *job)
{
    const lucid_job_record *r = &job->rec;
    static const char format[] = "{s:I, s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:i, s:I, s:s,"
                                 " s:s, s:s, s:I, s:I, s:I, s:I, s:i}";
    const char *user = r->user, *name = r->name, *partition = r->partition,
               *node_list = r->node_list, *gpu_list = r->gpu_list, *reason = r->reason;
    char safe[6][sizeof r->reason];
    for (int attempt = 0; attempt < 2; attempt++) {
        json_t *obj = json_pack(
            format, "job", (json_int_t)r->job_id, "user", user, "name", name, "partition",
            partition, "phase", shown_phase(job), "gpus", r->gpus, "nodes", r->nodes,
            "priority", r->priority, "estimate_s", r->estimate_s, "sharing_score",
            r->sharing_score, "packed_with", (json_int_t)r->packed_with, "node_list", node_list,
            "gpu_list", gpu_list, "reason", reason, "submit_time", (json_int_t)r->submit_time,
            "profile_start", (json_int_t)r->profile_start, "main_start",
            (json_int_t)r->main_start, "end_time", (json_int_t)r->end_time, "runs", r->runs);
        if (obj) {
            job_extra(obj, job);
            return obj;
        }
        user = ascii_copy(r->user, safe[0], sizeof safe[0]);
        name = ascii_copy(r->name, safe[1], sizeof safe[1]);
        partition = ascii_copy(r->partition, safe[2], sizeof safe[2]);
        node_list = ascii_copy(r->node_list, safe[3], sizeof safe[3]);
        gpu_list = ascii_copy(r->gpu_list, safe[4], sizeof safe[4]);
        reason = ascii_copy(r->reason, safe[5], sizeof safe[5]);
    }
    return NULL;
}

typedef struct lucidd_counts {
    long by_phase[LUCID_PHASE_COUNT]; /* released jobs Slurm has not started are not
                                       * in running / profiling but in `releasing` */
    long releasing;
    long profiled, packed_pairs;
} lucidd_counts;

static lucidd_counts count_jobs(const lucidd_snapshot *s)
{
    lucidd_counts c;
    memset(&c, 0, sizeof c);
    /* Ended jobs the engine forgot still count (status, the counters). */
    for (int p = 0; p < LUCID_PHASE_COUNT; p++)
        c.by_phase[p] = s->forgotten_by_phase[p];
    c.profiled = s->forgotten_profiled;
    for (size_t i = 0; i < s->njobs; i++) {
        const lucid_job_record *r = &s->jobs[i].rec;
        if (strcmp(shown_phase(&s->jobs[i]), "releasing") == 0)
            c.releasing++;
        else
            c.by_phase[r->phase]++;
        if (r->profile_start || r->phase == LUCID_PHASE_DONE_IN_PROFILER)
            c.profiled++;
        if (r->packed_with && r->phase == LUCID_PHASE_RUNNING && r->packed_with < r->job_id)
            c.packed_pairs++;
    }
    return c;
}

static json_t *status_json(const lucidd_snapshot *s, const lucidd_config *cfg,
                           double tick_running_s)
{
    lucidd_counts c = count_jobs(s);
    json_t *phases = json_object();
    for (int p = 0; p < LUCID_PHASE_COUNT; p++)
        json_object_set_new(phases, lucid_phase_name((lucid_phase)p), json_integer(c.by_phase[p]));
    json_object_set_new(phases, "releasing", json_integer(c.releasing));
    json_t *models = json_array();
    for (long i = 0; i < s->nmodels; i++)
        json_array_append_new(models, json_pack("{s:s, s:I, s:I, s:I, s:s}", "name",
                                                s->models[i].name, "version",
                                                (json_int_t)s->models[i].version, "trained_at",
                                                (json_int_t)s->models[i].trained_at, "rows",
                                                (json_int_t)s->models[i].rows, "note",
                                                s->models[i].note));
    const char *mode = cfg->packing_mode < 0 ? "auto" : cfg->packing_mode ? "on" : "off";
    json_t *reply = json_pack(
        "{s:b, s:{s:s, s:f, s:i, s:i, s:i}, s:{s:s, s:b}, s:s, s:{s:s, s:s}, s:o, s:o,"
        " s:I, s:I, s:b, s:s, s:f, s:f, s:I, s:I, s:f}",
        "ok", 1, "profiler", "partition", cfg->profiling_partition, "time_limit_s",
        cfg->profile_limit_s, "gpu_limit", cfg->gpu_limit, "queued",
        (int)c.by_phase[LUCID_PHASE_PROFILE_QUEUE], "running",
        (int)c.by_phase[LUCID_PHASE_PROFILING], "packing", "mode", mode, "on", s->packing_on,
        "main_partition", cfg->main_partition, "gpu_metrics", "backend", s->metrics_backend,
        "detail", s->metrics_detail, "models", models, "phases", phases, "profiled",
        (json_int_t)c.profiled, "packed_pairs", (json_int_t)c.packed_pairs, "slurm_reachable",
        s->slurm_up, "last_error", s->last_error, "decision_latency_p50_s", s->latency_p50_s,
        "decision_latency_p99_s", s->latency_p99_s, "uptime_s",
        (json_int_t)(time(NULL) - s->started), "ticks", (json_int_t)s->ticks, "tick_running_s",
        tick_running_s);
    json_object_set_new(reply, "slow_ticks", json_integer((json_int_t)s->slow_ticks));
    json_t *profiler = json_object_get(reply, "profiler");
    if (profiler) {
        json_object_set_new(profiler, "bypassed", json_integer((json_int_t)s->profiler_bypassed));
        json_object_set_new(profiler, "yielded", json_integer((json_int_t)s->profiler_yielded));
    }
    json_object_set_new(reply, "release_ahead",
                        json_pack("{s:b, s:I, s:I}", "enabled", cfg->release_ahead, "released",
                                  (json_int_t)s->released_ahead, "started",
                                  (json_int_t)s->started_ahead));
    json_object_set_new(reply, "async_writes",
                        json_pack("{s:b, s:s, s:I, s:I, s:f}", "enabled",
                                  cfg->async_writes != LUCIDD_WRITES_OFF, "mode",
                                  cfg->async_writes == LUCIDD_WRITES_ALL      ? "on"
                                  : cfg->async_writes == LUCIDD_WRITES_WINDOW ? "window"
                                                                              : "off",
                                  "made",
                                  (json_int_t)s->writes_off_tick, "failed",
                                  (json_int_t)s->writes_failed, "slowest_s",
                                  s->write_slowest_s));
    /* Why packing is refused on this site ("" where it is not), and on how
     * many main nodes Slurm accounts packed jobs (the share GRES). */
    json_t *packing = json_object_get(reply, "packing");
    json_object_set_new(packing, "refused", json_string(s->pack_refused));
    json_object_set_new(packing, "share_gres",
                        json_string(cfg->share_gres ? cfg->share_gres : ""));
    json_object_set_new(packing, "accounted_nodes", json_integer(s->share_nodes));
    json_object_set_new(packing, "main_nodes", json_integer(s->main_nodes));
    json_object_set_new(reply, "slurm_unreachable_since",
                        s->slurm_down_since ? json_integer(s->slurm_down_since) : json_null());
    /* {"profiler/completed": 12, "queue/cancelled": 3, ...} */
    lucidd_ended ended[LUCIDD_ENDED_MAX];
    memcpy(ended, s->forgotten, sizeof ended);
    int nended = lucidd_ended_counts(s->jobs, s->njobs, ended, s->nforgotten, LUCIDD_ENDED_MAX);
    json_t *by_end = json_object();
    for (int i = 0; i < nended; i++) {
        char key[48];
        snprintf(key, sizeof key, "%.15s/%.23s", ended[i].where, ended[i].outcome);
        json_object_set_new(by_end, key, json_integer(ended[i].count));
    }
    json_object_set_new(reply, "ended", by_end);
    json_object_set_new(reply, "slurm_job_reads",
                        json_pack("{s:I, s:I, s:b, s:f, s:f}", "read", (json_int_t)s->slurm_reads,
                                  "unchanged", (json_int_t)s->slurm_unchanged, "threaded",
                                  cfg->async_reads, "age_s", s->listing_age_s, "age_max_s",
                                  s->listing_age_max_s));
    return reply;
}

static const lucidd_job *snapshot_find(const lucidd_snapshot *s, json_int_t job_id)
{
    for (size_t i = 0; i < s->njobs; i++)
        if (s->jobs[i].rec.job_id == job_id)
            return &s->jobs[i];
    return NULL;
}

/* Whether the client may see `job`: all of them for root, lucidd's user
 * and the admin group; else its own.  A job's uid is Slurm's, refreshed
 * every tick; a job loaded from the store that Slurm has not listed yet
 * has uid 0 and is matched by the user name it was recorded with. */
static int conn_may_see(const conn *c, const lucidd_job *job)
{
    if (c->sees_all)
        return 1;
    if (!c->have_cred)
        return 0;
    if (job->uid != 0)
        return job->uid == c->uid;
    return c->user[0] && strcmp(job->rec.user, c->user) == 0;
}

/* Who the peer is: its user name and whether it sees every job.  The
 * admin group counts when it is the user's primary group or one of its
 * supplementary groups in the group database (getgrouplist: the groups
 * the user logs in with, not those of the connecting process). */
static void conn_identify(const lucidd_server *srv, conn *c)
{
    c->sees_all = c->uid == 0 || c->uid == (uint32_t)geteuid();
    if (c->sees_all)
        return; /* no lookups (NSS may be remote) for root and lucidd's user */
    char buf[16384];
    struct passwd pw, *found = NULL;
    if (getpwuid_r((uid_t)c->uid, &pw, buf, sizeof buf, &found) != 0 || !found)
        return; /* no name: only jobs Slurm reports with this uid */
    snprintf(c->user, sizeof c->user, "%s", pw.pw_name);
    if (!srv->cfg->admin_group)
        return;
    gid_t groups[256];
    int ngroups = (int)(sizeof groups / sizeof groups[0]);
    /* -1 when the user has more groups than fit: those that fit are kept */
    getgrouplist(pw.pw_name, pw.pw_gid, groups, &ngroups);
    if (ngroups > (int)(sizeof groups / sizeof groups[0]))
        ngroups = (int)(sizeof groups / sizeof groups[0]);
    for (int i = 0; i < ngroups; i++)
        if (groups[i] == (gid_t)srv->cfg->admin_gid)
            c->sees_all = 1;
}

/* Everything but the estimate's "why", which the engine adds (answer_why). */
static json_t *explain_json(lucid_state *reader, const lucidd_job *job)
{
    json_t *decisions = json_array();
    lucid_decision_record *list = NULL;
    lucid_error err = {{0}};
    long n = lucid_state_list_decisions(reader, job->rec.job_id, &list, &err);
    for (long i = 0; i < n; i++)
        json_array_append_new(decisions,
                              json_pack("{s:I, s:s, s:s, s:s, s:b}", "at", (json_int_t)list[i].at,
                                        "action", list[i].action, "target", list[i].target,
                                        "reason", list[i].reason, "acked", list[i].acked));
    free(list);
    json_t *phases = json_array();
    lucid_phase history[64];
    int64_t times[64];
    long nphases = lucid_state_phase_history(reader, job->rec.job_id, history, times, 64, &err);
    for (long i = 0; i < nphases; i++)
        json_array_append_new(phases, json_pack("{s:s, s:I}", "phase", lucid_phase_name(history[i]),
                                                "at", (json_int_t)times[i]));
    lucid_gpu_sample profile = lucid_gpu_profile_result(&job->profile);
    return json_pack("{s:b, s:o, s:{s:s, s:I, s:s}, s:o, s:{s:I, s:f, s:f, s:f}, s:o}", "ok", 1,
                     "job", job_json(job), "estimate", "model", "duration", "version",
                     (json_int_t)job->estimate_version, "why", "", "phases", phases,
                     "profile", "samples", (json_int_t)job->profile.samples, "gpu_util_pct",
                     profile.gpu_util_pct, "gmem_used_mib", profile.gmem_used_mib,
                     "gmem_util_pct", profile.gmem_util_pct, "decisions", decisions);
}

static void answer_why(json_t *explain, const char *why)
{
    json_object_set_new(json_object_get(explain, "estimate"), "why", json_string(why));
}

/* ---- metrics ---- */

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

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Start-time estimates as aggregates: one series per waiting job and
 * quantile would be 30,000 series on a queue of 10,000 (Prometheus advises
 * against labels of unbounded cardinality); per-job values are in `lucid
 * queue --json`.  So: how many waiting jobs have an estimate, the
 * distribution of their predicted waits (P50 start - now), the main queue
 * head's interval, and the reservations held. */
static void metrics_start_estimates(char **buf, size_t *len, size_t *cap, const lucidd_snapshot *s)
{
    long predicted = 0, none = 0, reserved = 0;
    int64_t *waits = malloc((s->njobs + 1) * sizeof *waits);
    const lucidd_job *head = NULL;
    for (size_t i = 0; i < s->njobs; i++) {
        const lucidd_job *job = &s->jobs[i];
        lucid_phase ph = job->rec.phase;
        if (ph != LUCID_PHASE_PROFILE_QUEUE && ph != LUCID_PHASE_MAIN_QUEUE &&
            ph != LUCID_PHASE_MOVING && ph != LUCID_PHASE_HANDED_BACK)
            continue;
        reserved += job->reserved_at > 0 || job->rec.reserved_since != 0;
        if (job->eta_p50 <= 0) {
            none++;
            continue;
        }
        if (waits)
            waits[predicted] = job->eta_p50 > s->published_at ? job->eta_p50 - s->published_at : 0;
        predicted++;
        if (ph == LUCID_PHASE_MAIN_QUEUE && job->eta_ahead == 0)
            head = job;
    }
    metric(buf, len, cap,
           "# HELP lucid_start_estimates Waiting jobs with a start-time estimate, and without "
           "(held by the owner, a dependency, handed back, ...).\n"
           "# TYPE lucid_start_estimates gauge\n"
           "lucid_start_estimates{state=\"predicted\"} %ld\n"
           "lucid_start_estimates{state=\"none\"} %ld\n"
           "# HELP lucid_reservations Waiting jobs holding a backfill reservation.\n"
           "# TYPE lucid_reservations gauge\nlucid_reservations %ld\n",
           predicted, none, reserved);
    if (waits && predicted > 0) {
        qsort(waits, (size_t)predicted, sizeof *waits, cmp_i64);
        metric(buf, len, cap,
               "# HELP lucid_predicted_wait_seconds Predicted waits (P50 start - now) of the "
               "waiting jobs with an estimate: their median, 90th percentile and largest.\n"
               "# TYPE lucid_predicted_wait_seconds gauge\n"
               "lucid_predicted_wait_seconds{stat=\"median\"} %lld\n"
               "lucid_predicted_wait_seconds{stat=\"p90\"} %lld\n"
               "lucid_predicted_wait_seconds{stat=\"max\"} %lld\n",
               (long long)waits[(size_t)(predicted - 1) / 2],
               (long long)waits[(size_t)((double)(predicted - 1) * 0.9)],
               (long long)waits[predicted - 1]);
    }
    if (head)
        metric(buf, len, cap,
               "# HELP lucid_head_start_seconds The main queue's first job: its predicted start "
               "- now, at P10, P50 and P90.\n"
               "# TYPE lucid_head_start_seconds gauge\n"
               "lucid_head_start_seconds{quantile=\"0.1\"} %lld\n"
               "lucid_head_start_seconds{quantile=\"0.5\"} %lld\n"
               "lucid_head_start_seconds{quantile=\"0.9\"} %lld\n",
               (long long)(head->eta_p10 - s->published_at),
               (long long)(head->eta_p50 - s->published_at),
               (long long)(head->eta_p90 - s->published_at));
    free(waits);
}

static char *metrics_text(const lucidd_snapshot *s, size_t *len)
{
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    lucidd_counts c = count_jobs(s);
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
           c.profiled, c.by_phase[LUCID_PHASE_DONE_IN_PROFILER], c.packed_pairs, s->packing_on);
    metric(&buf, len, &cap,
           "# HELP lucid_decision_latency_seconds Time of one decision step (recent window).\n"
           "# TYPE lucid_decision_latency_seconds summary\n"
           "lucid_decision_latency_seconds{quantile=\"0.5\"} %.9f\n"
           "lucid_decision_latency_seconds{quantile=\"0.99\"} %.9f\n"
           "lucid_decision_latency_seconds_sum %.9f\n"
           "lucid_decision_latency_seconds_count %llu\n",
           s->latency_p50_s, s->latency_p99_s, s->latency_sum_s,
           (unsigned long long)s->latency_count);
    metric(&buf, len, &cap,
           "# HELP lucid_ticks_total Ticks of the decision loop.\n"
           "# TYPE lucid_ticks_total counter\nlucid_ticks_total %llu\n"
           "# HELP lucid_slow_ticks_total Ticks that ran longer than a second (each logged).\n"
           "# TYPE lucid_slow_ticks_total counter\nlucid_slow_ticks_total %llu\n"
           "# HELP lucid_slurm_up Whether the latest call to Slurm worked.\n"
           "# TYPE lucid_slurm_up gauge\nlucid_slurm_up %d\n"
           "# HELP lucid_slurm_errors_total Failed calls to Slurm.\n"
           "# TYPE lucid_slurm_errors_total counter\nlucid_slurm_errors_total %llu\n"
           "# HELP lucid_gpu_metrics_backend The active GPU metrics backend.\n"
           "# TYPE lucid_gpu_metrics_backend gauge\nlucid_gpu_metrics_backend{backend=\"%s\"} 1\n",
           (unsigned long long)s->ticks, (unsigned long long)s->slow_ticks, s->slurm_up,
           (unsigned long long)s->slurm_errors,
           s->metrics_backend);
    metric(&buf, len, &cap,
           "# HELP lucid_slurm_job_reads_total Requests for Slurm's job listing, by result: "
           "read anew, or unchanged since the last (nothing read).\n"
           "# TYPE lucid_slurm_job_reads_total counter\n"
           "lucid_slurm_job_reads_total{result=\"read\"} %llu\n"
           "lucid_slurm_job_reads_total{result=\"unchanged\"} %llu\n",
           (unsigned long long)s->slurm_reads, (unsigned long long)s->slurm_unchanged);
    metric(&buf, len, &cap,
           "# HELP lucid_slurm_listing_age_seconds How old Slurm's job listing was when the "
           "last tick decided on it (read on a thread of its own: --async-reads).\n"
           "# TYPE lucid_slurm_listing_age_seconds gauge\n"
           "lucid_slurm_listing_age_seconds %.3f\n",
           s->listing_age_s);
    metric(&buf, len, &cap,
           "# HELP lucid_profiler_bypassed_total Jobs sent to main unprofiled: the profiler busy "
           "with main GPUs idle (--profiler-bypass), or main had GPUs for them before any job "
           "they outrank (--profiler-yield).\n"
           "# TYPE lucid_profiler_bypassed_total counter\nlucid_profiler_bypassed_total %llu\n"
           "# HELP lucid_profiler_yielded_total Profiling runs ended before their limit because "
           "main had GPUs for the job (--profiler-yield).\n"
           "# TYPE lucid_profiler_yielded_total counter\nlucid_profiler_yielded_total %llu\n",
           (unsigned long long)s->profiler_bypassed, (unsigned long long)s->profiler_yielded);
    metric(&buf, len, &cap,
           "# HELP lucid_writes_off_tick_total Starts, releases ahead and moves to main "
           "written on the writer's thread (--async-writes), by result.\n"
           "# TYPE lucid_writes_off_tick_total counter\n"
           "lucid_writes_off_tick_total{result=\"made\"} %llu\n"
           "lucid_writes_off_tick_total{result=\"failed\"} %llu\n",
           (unsigned long long)s->writes_off_tick,
           (unsigned long long)s->writes_failed);
    metric(&buf, len, &cap,
           "# HELP lucid_released_ahead_total Jobs at the head of the main queue released to "
           "Slurm before GPUs freed for them (--release-ahead).\n"
           "# TYPE lucid_released_ahead_total counter\nlucid_released_ahead_total %llu\n"
           "# HELP lucid_started_ahead_total Jobs released ahead that Slurm started the moment "
           "GPUs freed.\n"
           "# TYPE lucid_started_ahead_total counter\nlucid_started_ahead_total %llu\n",
           (unsigned long long)s->released_ahead, (unsigned long long)s->started_ahead);
    metrics_start_estimates(&buf, len, &cap, s);
    lucidd_ended ended[LUCIDD_ENDED_MAX];
    memcpy(ended, s->forgotten, sizeof ended);
    int nended = lucidd_ended_counts(s->jobs, s->njobs, ended, s->nforgotten, LUCIDD_ENDED_MAX);
    metric(&buf, len, &cap,
           "# HELP lucid_jobs_ended_total Jobs that ended, by where (queue, profiler, main) and "
           "outcome.\n# TYPE lucid_jobs_ended_total counter\n");
    for (int i = 0; i < nended; i++)
        metric(&buf, len, &cap, "lucid_jobs_ended_total{where=\"%s\",outcome=\"%s\"} %ld\n",
               ended[i].where, ended[i].outcome, ended[i].count);
    return buf;
}

/* ---- connections ---- */

/* Hands `text` (malloc'd, or NULL: out of memory) to the connection. */
static void conn_reply(conn *c, char *text, size_t len)
{
    free(c->out);
    c->out = text;
    c->out_len = c->out_cap = text ? len : 0;
    c->out_off = 0;
    c->phase = CONN_WRITING;
    c->deadline = monotonic_s() + REPLY_DEADLINE_S;
}

/* Appends to the unsent output; -1 out of memory. */
static int out_append(conn *c, const char *text, size_t len)
{
    if (c->out_off == c->out_len)
        c->out_off = c->out_len = 0; /* all sent: reuse the buffer from its start */
    if (c->out_len + len > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + len)
            cap *= 2;
        char *grown = realloc(c->out, cap);
        if (!grown)
            return -1;
        c->out = grown;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, text, len);
    c->out_len += len;
    return 0;
}

/* `queue` streams: the reply (10 MB for 20,000 jobs) is rendered a slice
 * at a time, only as fast as the client reads it, from the snapshot the
 * connection holds.  So a large reply neither sits whole in memory nor
 * holds up the other clients while it is rendered. */
#define STREAM_SLICE ((size_t)64 << 10)

static void conn_stream(conn *c, lucidd_snapshot *snap, int all)
{
    conn_reply(c, NULL, 0);
    c->streaming = snap;
    c->cursor = c->emitted = 0;
    c->all = all;
    static const char head[] = "{\"ok\":true,\"jobs\":[";
    out_append(c, head, sizeof head - 1);
}

/* Renders the next slice; -1 out of memory. */
static int stream_more(lucidd_server *srv, conn *c)
{
    const lucidd_snapshot *s = c->streaming;
    size_t start = c->out_len;
    while (c->cursor < s->njobs && c->out_len - start < STREAM_SLICE) {
        const lucidd_job *job = &s->jobs[c->cursor++];
        if ((!c->all && lucid_phase_is_final(job->rec.phase)) || !conn_may_see(c, job))
            continue;
        json_t *one = job_json(job);
        char *text = one ? json_dumps(one, JSON_COMPACT) : NULL;
        json_decref(one);
        if (!text)
            return -1; /* out of memory */
        int rc = c->emitted++ == 0 || out_append(c, ",", 1) == 0 ? out_append(c, text, strlen(text))
                                                                 : -1;
        free(text);
        if (rc < 0)
            return -1;
    }
    if (c->cursor >= s->njobs) {
        lucidd_hub_release(srv->hub, c->streaming);
        c->streaming = NULL;
        return out_append(c, "]}\n", 3);
    }
    return 0;
}

static void conn_reply_json(conn *c, json_t *reply)
{
    char *text = reply ? json_dumps(reply, JSON_COMPACT) : NULL;
    json_decref(reply);
    if (text && strlen(text) > REPLY_MAX_BYTES) {
        free(text);
        json_t *small = error_json("reply too large");
        text = small ? json_dumps(small, JSON_COMPACT) : NULL;
        json_decref(small);
    }
    size_t len = text ? strlen(text) : 0;
    char *line = text ? realloc(text, len + 2) : NULL;
    if (!line) {
        free(text);
        conn_reply(c, NULL, 0);
        return;
    }
    line[len++] = '\n';
    line[len] = '\0';
    conn_reply(c, line, len);
}

static void conn_wait(conn *c, uint64_t id, double seconds)
{
    c->cmd_id = id;
    c->phase = CONN_WAITING;
    c->deadline = monotonic_s() + seconds;
}

static void answer_explain(lucidd_server *srv, conn *c, const lucidd_snapshot *s,
                           json_int_t job_id)
{
    const lucidd_job *job = snapshot_find(s, job_id);
    lucid_error err = {{0}};
    if (!srv->reader &&
        !(srv->reader = lucid_state_open_readonly(srv->cfg->state_path, 1000, &err))) {
        conn_reply_json(c, error_json(err.msg));
        return;
    }
    /* A job that ended long ago left lucidd's memory (--forget-ended): its
     * record, phases and decisions are in the store. */
    lucidd_job stored;
    int from_store = 0;
    if (!job && job_id > 0 && job_id <= UINT32_MAX) {
        memset(&stored, 0, sizeof stored);
        if (lucid_state_get_job(srv->reader, (uint32_t)job_id, &stored.rec, &err) == 1 &&
            lucid_phase_is_final(stored.rec.phase)) {
            job = &stored;
            from_store = 1;
        }
    }
    if (!job) {
        conn_reply_json(c, error_json("no such job under lucid"));
        return;
    }
    if (!conn_may_see(c, job)) {
        conn_reply_json(c, error_json("not your job (lucidd shows other users' jobs to its "
                                      "admin group only)"));
        return;
    }
    json_t *reply = explain_json(srv->reader, job);
    if (from_store) {
        answer_why(reply, "ended long ago: lucidd keeps it in its state store only");
        conn_reply_json(c, reply);
        return;
    }
    lucidd_command cmd = {.kind = LUCIDD_CMD_WHY, .job_id = job->rec.job_id};
    uint64_t id = reply ? lucidd_hub_post(srv->hub, &cmd) : 0;
    if (!id) {
        answer_why(reply, "not available now: too many requests wait for the decision loop");
        conn_reply_json(c, reply);
        return;
    }
    c->pending = reply;
    conn_wait(c, id, WHY_DEADLINE_S);
}

static void answer_release(lucidd_server *srv, conn *c, json_int_t job_id)
{
    if (c->http || !c->have_cred) {
        conn_reply_json(c, error_json("release: the client's credentials are unknown"));
        return;
    }
    if (job_id <= 0 || job_id > UINT32_MAX) {
        conn_reply_json(c, error_json("bad request: release needs \"job\":N"));
        return;
    }
    lucidd_command cmd = {.kind = LUCIDD_CMD_RELEASE, .job_id = (uint32_t)job_id, .uid = c->uid,
                          .pid = c->pid};
    uint64_t id = lucidd_hub_post(srv->hub, &cmd);
    if (!id) {
        conn_reply_json(c, error_json("busy: too many requests wait for the decision loop"));
        return;
    }
    conn_wait(c, id, RELEASE_DEADLINE_S);
}

/* One JSON request; the reply is written at once or after the engine answers. */
static void answer_unix(lucidd_server *srv, conn *c)
{
    const lucidd_config *cfg = srv->cfg;
    json_error_t jerr;
    json_t *req = json_loads(c->in, JSON_DISABLE_EOF_CHECK, &jerr);
    const char *cmd = NULL;
    json_int_t job_id = 0;
    int all = 0;
    if (!req || json_unpack(req, "{s:s, s?I, s?b}", "cmd", &cmd, "job", &job_id, "all", &all) < 0) {
        json_decref(req);
        conn_reply_json(c, error_json("bad request: expected "
                                      "{\"cmd\":\"queue\"|\"status\"|\"explain\"|\"release\"}"));
        return;
    }
    double tick_running_s = 0;
    lucidd_snapshot *s = lucidd_hub_acquire(srv->hub, &tick_running_s);
    if (!s)
        conn_reply_json(c, error_json("lucidd is starting"));
    else if (strcmp(cmd, "queue") == 0)
        conn_stream(c, lucidd_hub_acquire(srv->hub, NULL), all); /* the stream's own hold */
    else if (strcmp(cmd, "status") == 0)
        conn_reply_json(c, status_json(s, cfg, tick_running_s));
    else if (strcmp(cmd, "explain") == 0)
        answer_explain(srv, c, s, job_id);
    else if (strcmp(cmd, "release") == 0)
        answer_release(srv, c, job_id);
    else
        conn_reply_json(c, error_json("unknown cmd"));
    lucidd_hub_release(srv->hub, s);
    json_decref(req);
}

static void answer_http(lucidd_server *srv, conn *c)
{
    static const char not_found[] = "HTTP/1.0 404 Not Found\r\nContent-Length: 10\r\n"
                                    "Connection: close\r\n\r\nnot found\n";
    if (strncmp(c->in, "GET /metrics ", 13) != 0 && strncmp(c->in, "GET /metrics\r", 13) != 0 &&
        strncmp(c->in, "GET /metrics\n", 13) != 0) {
        conn_reply(c, strdup(not_found), sizeof not_found - 1);
        return;
    }
    lucidd_snapshot *s = lucidd_hub_acquire(srv->hub, NULL);
    size_t len = 0;
    char *body = s ? metrics_text(s, &len) : NULL;
    lucidd_hub_release(srv->hub, s);
    char head[256];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.0 %s\r\nContent-Type: text/plain; version=0.0.4\r\n"
                     "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                     body ? "200 OK" : "503 Service Unavailable", len);
    char *text = malloc((size_t)n + len);
    if (text) {
        memcpy(text, head, (size_t)n);
        if (body)
            memcpy(text + n, body, len);
    }
    free(body);
    conn_reply(c, text, (size_t)n + len);
}

/* The request is whole: a line on the socket, the headers over HTTP (or
 * end of input, or a full buffer: answered as it is). */
static int request_complete(const conn *c, int eof)
{
    if (eof || c->in_len + 1 >= sizeof c->in)
        return 1;
    if (!c->http)
        return memchr(c->in, '\n', c->in_len) != NULL;
    return strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n");
}

/* Reads what is there; 0 keep going, -1 close. */
static int conn_read(lucidd_server *srv, conn *c)
{
    int eof = 0;
    while (c->in_len + 1 < sizeof c->in) {
        ssize_t n = read(c->fd, c->in + c->in_len, sizeof c->in - 1 - c->in_len);
        if (n > 0) {
            c->in_len += (size_t)n;
            c->in[c->in_len] = '\0';
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        eof = 1; /* 0: end of input; other errors end it too */
        break;
    }
    if (!request_complete(c, eof))
        return 0;
    if (c->in_len == 0)
        return -1;
    if (c->http)
        answer_http(srv, c);
    else
        answer_unix(srv, c);
    return 0;
}

/* Writes what the socket takes, rendering a streamed reply as it goes (at
 * most a few slices per call, so one fast reader does not hold up the
 * others); 1 done, 0 keep going, -1 close. */
static int conn_write(lucidd_server *srv, conn *c)
{
    int slices = 4;
    for (;;) {
        if (c->out_off == c->out_len && c->streaming) {
            if (slices-- == 0)
                return 0; /* the socket is writable: the next poll comes back at once */
            if (stream_more(srv, c) < 0)
                return -1;
        }
        if (c->out_off == c->out_len)
            return 1;
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0)
            c->out_off += (size_t)n;
        else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        else if (!(n < 0 && errno == EINTR))
            return -1;
    }
}

/* The engine answered (or the deadline passed: timed_out). */
static void conn_answered(lucidd_server *srv, conn *c, int timed_out)
{
    int rc = -1;
    char reply[LUCIDD_REPLY_MAX];
    if (timed_out) {
        lucidd_hub_forget(srv->hub, c->cmd_id);
        snprintf(reply, sizeof reply,
                 "the decision loop did not answer within %.0f s (a tick is still running); "
                 "ask again",
                 c->pending ? WHY_DEADLINE_S : RELEASE_DEADLINE_S);
    } else if (!lucidd_hub_answer(srv->hub, c->cmd_id, &rc, reply, sizeof reply)) {
        return;
    }
    c->cmd_id = 0;
    if (c->pending) {
        json_t *explain = c->pending;
        c->pending = NULL;
        answer_why(explain, reply);
        conn_reply_json(c, explain);
    } else if (rc == 0) {
        conn_reply_json(c, json_pack("{s:b, s:s}", "ok", 1, "message", reply));
    } else {
        conn_reply_json(c, error_json(reply));
    }
}

static void accept_all(lucidd_server *srv, int listen_fd, int http)
{
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0)
            return; /* EAGAIN: none left (or a transient error: next poll) */
        set_nonblocking(fd);
        if (srv->nconns >= SERVER_MAX_CONNS) {
            static const char busy_json[] =
                "{\"ok\":false,\"error\":\"lucidd: too many connections; try again\"}\n";
            static const char busy_http[] = "HTTP/1.0 503 Service Unavailable\r\n"
                                            "Content-Length: 21\r\nConnection: close\r\n\r\n"
                                            "too many connections\n";
            ssize_t ignored = http ? send(fd, busy_http, sizeof busy_http - 1, MSG_NOSIGNAL)
                                   : send(fd, busy_json, sizeof busy_json - 1, MSG_NOSIGNAL);
            (void)ignored;
            close(fd);
            continue;
        }
        conn *c = &srv->conns[srv->nconns++];
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->http = http;
        c->phase = CONN_READING;
        c->deadline = monotonic_s() + REQUEST_DEADLINE_S;
        if (!http) {
            struct ucred cred;
            socklen_t size = sizeof cred;
            if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &size) == 0) {
                c->uid = cred.uid;
                c->pid = cred.pid;
                c->have_cred = 1;
                conn_identify(srv, c);
            }
        }
    }
}

/* One pass over the connections after poll: reads, writes, answers, deadlines. */
static void serve_connections(lucidd_server *srv, const struct pollfd *fds, int first)
{
    double now = monotonic_s();
    /* Backwards: closing moves the last connection into the closed slot. */
    for (int k = srv->nconns - 1; k >= 0; k--) {
        conn *c = &srv->conns[k];
        short revents = fds[first + k].revents;
        int rc = 0;
        if (c->phase == CONN_READING && (revents & (POLLIN | POLLHUP | POLLERR)))
            rc = conn_read(srv, c);
        if (rc == 0 && c->phase == CONN_WAITING)
            conn_answered(srv, c, now > c->deadline);
        if (rc == 0 && c->phase == CONN_WRITING)
            rc = conn_write(srv, c);
        if (rc == 0 && (c->phase != CONN_WAITING && now > c->deadline))
            rc = -1; /* too slow to send its request, or to read its reply */
        if (rc != 0)
            conn_close(srv, c);
    }
}

void server_run(lucidd_server *srv, volatile sig_atomic_t *stop)
{
    struct pollfd fds[3 + SERVER_MAX_CONNS];
    while (!*stop && !lucidd_hub_stopping(srv->hub)) {
        int n = 0;
        fds[n++] = (struct pollfd){.fd = lucidd_hub_wake_fd(srv->hub), .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = srv->unix_fd, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = srv->http_fd, .events = POLLIN}; /* -1: ignored */
        double now = monotonic_s(), next = now + 0.2;
        for (int k = 0; k < srv->nconns; k++) {
            const conn *c = &srv->conns[k];
            short events = c->phase == CONN_READING ? POLLIN
                           : c->phase == CONN_WRITING ? POLLOUT : 0;
            fds[n++] = (struct pollfd){.fd = c->fd, .events = events};
            if (c->deadline < next)
                next = c->deadline;
        }
        int timeout_ms = next > now ? (int)((next - now) * 1000) + 1 : 0;
        if (poll(fds, (nfds_t)n, timeout_ms) < 0 && errno != EINTR)
            continue;
        if (fds[0].revents & POLLIN) {
            char drain[64];
            while (read(fds[0].fd, drain, sizeof drain) > 0)
                ;
        }
        /* Connections first: accepting reorders nothing but appends. */
        serve_connections(srv, fds, 3);
        if (fds[1].revents & POLLIN)
            accept_all(srv, srv->unix_fd, 0);
        if (srv->http_fd >= 0 && (fds[2].revents & POLLIN))
            accept_all(srv, srv->http_fd, 1);
    }
}
