/* test_lucidd_server.c — lucidd's API thread (server.c) and the hub between
 * it and the decision thread (hub.c), driven by a fake engine: no Slurm.
 * What is checked is what an operator relies on: a client that sends one
 * byte every 0.9 s is cut off at its 2 s deadline while others are answered
 * at once; a client that never reads a large reply blocks nobody and is
 * dropped; the connection cap holds; clients see only published snapshots,
 * never a tick half done; a tick blocked for 3 s delays no answer; a
 * command reaches the engine with the client's uid and its answer comes
 * back after the tick. */
#define _GNU_SOURCE /* setresuid, setgroups */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef LUCID_HAVE_STATE
#include "../src/daemon/daemon.h"

/* ---- the fake engine (what lucidd links from engine.c and commands.c) ---- */

static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;
static int fake_tick_ms;      /* how long each tick blocks ("a Slurm call") */
static int fake_slurm_up = 1;
static uint32_t fake_command_uid;
static int fake_commands;

static int fake_get(const int *value)
{
    pthread_mutex_lock(&fake_lock);
    int v = *value;
    pthread_mutex_unlock(&fake_lock);
    return v;
}

static void fake_set(int *value, int v)
{
    pthread_mutex_lock(&fake_lock);
    *value = v;
    pthread_mutex_unlock(&fake_lock);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* Each tick writes a half-done name into job 1, blocks, then finishes it:
 * a client that ever saw "half-done" would have read live structures. */
void engine_tick(lucidd *d)
{
    if (d->njobs > 0)
        snprintf(d->jobs[0].rec.name, sizeof d->jobs[0].rec.name, "half-done");
    sleep_ms(fake_get(&fake_tick_ms));
    d->ticks++;
    d->profiler_bypassed = 2 * d->ticks; /* recognisable: counted from the hub's copy */
    d->profiler_yielded = 3 * d->ticks;
    d->released_ahead = 5 * d->ticks;
    d->started_ahead = 4 * d->ticks;
    d->slurm_up = fake_get(&fake_slurm_up);
    if (d->njobs > 0)
        snprintf(d->jobs[0].rec.name, sizeof d->jobs[0].rec.name, "tick-%llu",
                 (unsigned long long)d->ticks);
}

double engine_latency_quantile(const lucidd *d, double q)
{
    (void)d;
    return q * 1e-3; /* p50 0.5 ms, p99 0.99 ms: recognisable */
}

int engine_command(lucidd *d, const lucidd_command *cmd, char *reply, size_t size)
{
    (void)d;
    pthread_mutex_lock(&fake_lock);
    fake_command_uid = cmd->uid;
    fake_commands++;
    pthread_mutex_unlock(&fake_lock);
    if (cmd->kind == LUCIDD_CMD_WHY) {
        snprintf(reply, size, "why of job %u", cmd->job_id);
        return 0;
    }
    snprintf(reply, size, "release %u by uid %u: not implemented", cmd->job_id, cmd->uid);
    return -1;
}

/* ---- a running server + decision thread on a temporary socket ---- */

typedef struct fixture {
    lucidd d;
    lucidd_hub *hub;
    lucidd_server *server;
    pthread_t engine, serving;
    volatile sig_atomic_t stop; /* never set: the hub stops the server */
    char dir[512], socket_path[600], state_path[600];
} fixture;

static void *engine_main(void *arg)
{
    fixture *f = arg;
    lucidd_engine_loop(&f->d, f->hub);
    return NULL;
}

static void *server_main(void *arg)
{
    fixture *f = arg;
    server_run(f->server, &f->stop);
    return NULL;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    close(fd);
    return ntohs(addr.sin_port);
}

/* `setup` (or NULL) adjusts the configuration and the jobs before the
 * server binds and the first snapshot is published. */
static fixture *start_with(const char *name, size_t njobs, int tick_ms, void (*setup)(fixture *))
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    test_tmpdir(f->dir, sizeof f->dir, name);
    snprintf(f->socket_path, sizeof f->socket_path, "%s/sock", f->dir);
    snprintf(f->state_path, sizeof f->state_path, "%s/state.db", f->dir);
    lucid_error err = {{0}};
    f->d.state = lucid_state_open(f->state_path, &err);
    assert_non_null(f->d.state);
    f->d.cfg = (lucidd_config){.state_path = f->state_path, .socket_path = f->socket_path,
                               .main_partition = "main", .profiling_partition = "profiling",
                               .metrics_port = free_port(), .profile_limit_s = 200,
                               .gpu_limit = 8, .tick_ms = 50, .socket_mode = -1,
                               .packing_mode = -1};
    f->d.started = time(NULL);
    f->d.jobs = calloc(njobs ? njobs : 1, sizeof *f->d.jobs);
    assert_non_null(f->d.jobs);
    for (size_t i = 0; i < njobs; i++) {
        lucid_job_record *r = &f->d.jobs[i].rec;
        r->job_id = (uint32_t)(i + 1);
        snprintf(r->user, sizeof r->user, "alice");
        snprintf(r->name, sizeof r->name, "job-%zu", i + 1);
        if (i == 2) /* cut inside a UTF-8 character, as a 127-byte Slurm name can be */
            snprintf(r->name, sizeof r->name, "caf\xc3");
        snprintf(r->reason, sizeof r->reason, "%0200d", 0); /* ~500 bytes of JSON per job */
        r->phase = i % 2 ? LUCID_PHASE_MAIN_QUEUE : LUCID_PHASE_DONE;
        r->gpus = 1;
    }
    f->d.njobs = f->d.cap = njobs;
    if (njobs > 0)
        assert_int_equal(lucid_state_put_job(f->d.state, &f->d.jobs[0].rec, &err), 0);
    if (setup)
        setup(f);
    fake_set(&fake_tick_ms, tick_ms);
    fake_set(&fake_slurm_up, 1);
    f->hub = lucidd_hub_new(&err);
    assert_non_null(f->hub);
    f->server = server_open(&f->d.cfg, f->hub, &err);
    if (!f->server)
        fail_msg("server_open: %s", err.msg);
    lucidd_hub_publish(f->hub, &f->d, (int64_t)time(NULL)); /* before a tick: publishes nothing */
    assert_null(lucidd_hub_acquire(f->hub, NULL));
    assert_int_equal(pthread_create(&f->engine, NULL, engine_main, f), 0);
    assert_int_equal(pthread_create(&f->serving, NULL, server_main, f), 0);
    /* Nothing is published before the first tick (clients would hear
     * "lucidd is starting"): the tests begin once it has ended. */
    lucidd_snapshot *first = NULL;
    for (int i = 0; i < 2000 && !(first = lucidd_hub_acquire(f->hub, NULL)); i++)
        sleep_ms(5);
    assert_non_null(first);
    lucidd_hub_release(f->hub, first);
    return f;
}

static fixture *start(const char *name, size_t njobs, int tick_ms)
{
    return start_with(name, njobs, tick_ms, NULL);
}

static void stop(fixture *f)
{
    lucidd_hub_stop(f->hub); /* ends both threads' loops */
    pthread_join(f->serving, NULL);
    pthread_join(f->engine, NULL);
    server_close(f->server);
    lucidd_hub_free(f->hub);
    lucid_state_close(f->d.state);
    free(f->d.jobs);
    free(f);
}

/* ---- clients ---- */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int connect_unix(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    struct timeval tv = {.tv_sec = 15};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

/* Reads until EOF (or error), keeping what fits in `out`; returns the
 * number of bytes read in all. */
static size_t read_all(int fd, char *out, size_t size)
{
    size_t total = 0, kept = 0;
    for (;;) {
        char chunk[65536];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n <= 0)
            break;
        total += (size_t)n;
        size_t room = size > kept + 1 ? size - 1 - kept : 0;
        size_t take = (size_t)n < room ? (size_t)n : room;
        if (take)
            memcpy(out + kept, chunk, take);
        kept += take;
    }
    if (size)
        out[kept] = '\0';
    return total;
}

/* One request; the reply in `out`; the seconds it took. */
static double request(const fixture *f, const char *req, char *out, size_t size)
{
    double t0 = now_s();
    int fd = connect_unix(f->socket_path);
    ssize_t sent = write(fd, req, strlen(req)); /* refused at the cap: closed already */
    (void)sent;
    read_all(fd, out, size);
    close(fd);
    return now_s() - t0;
}

static double http_get(const fixture *f, char *out, size_t size)
{
    double t0 = now_s();
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)f->d.cfg.metrics_port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    static const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
    assert_int_equal(write(fd, get, sizeof get - 1), (ssize_t)(sizeof get - 1));
    read_all(fd, out, size);
    close(fd);
    return now_s() - t0;
}

static long long json_number(const char *text, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = strstr(text, pattern);
    return p ? atoll(p + strlen(pattern)) : -1;
}

/* A fresh client is answered within `limit` seconds, several times over. */
static void others_answered_promptly(const fixture *f, int times, double limit)
{
    double slowest = 0;
    for (int i = 0; i < times; i++) {
        char reply[8192];
        double took = request(f, "{\"cmd\":\"status\"}\n", reply, sizeof reply);
        assert_non_null(strstr(reply, "\"ok\":true"));
        if (took > limit)
            fail_msg("status took %.3f s (limit %.3f s)", took, limit);
        slowest = took > slowest ? took : slowest;
        sleep_ms(100);
    }
    printf("  %d status requests meanwhile, the slowest answered in %.1f ms\n", times,
           1e3 * slowest);
}

/* ---- tests ---- */

/* Each tick leaves job 1 named "half-done" for 30 ms: over ~2 s of queries
 * no client sees it, each name is "tick-N" with N the published tick count,
 * and the counters come from the snapshot (fake quantiles). */
/* Prometheus's text format: a family's HELP and TYPE once each and a
 * series (name and labels) once; a scraper refuses the whole page
 * otherwise ("second TYPE line for metric name", "duplicate sample"). */
static void assert_exposition_valid(const char *reply)
{
    const char *body = strstr(reply, "\r\n\r\n");
    assert_non_null(body);
    body += 4;
    char seen[256][160];
    int nseen = 0;
    for (const char *line = body; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        char key[160] = "";
        if (n > 7 && (strncmp(line, "# TYPE ", 7) == 0 || strncmp(line, "# HELP ", 7) == 0)) {
            const char *name_end = memchr(line + 7, ' ', n - 7);
            size_t k = name_end ? (size_t)(name_end - line) : n;
            snprintf(key, sizeof key, "%.*s", (int)k, line);
        } else if (n > 0 && line[0] != '#') {
            const char *value = line + n;
            while (value > line && value[-1] != ' ')
                value--;
            snprintf(key, sizeof key, "%.*s", (int)(value - line), line);
        }
        if (key[0]) {
            for (int i = 0; i < nseen; i++)
                if (strcmp(seen[i], key) == 0)
                    fail_msg("/metrics repeats '%s'", key);
            assert_true(nseen < 256);
            snprintf(seen[nseen++], sizeof seen[0], "%s", key);
        }
        line += n + (end != NULL);
    }
    assert_true(nseen > 20);
}

/* --tick-ms is the decision period: a tick starts every 100 ms from the
 * last one's start, whatever the tick's own time (60 ms here), so 2 s hold
 * about 20 ticks; waiting 100 ms after each tick's end would give 12.5. */
static void set_period_100ms(fixture *f)
{
    f->d.cfg.tick_ms = 100;
}

static void ticks_keep_their_period(void **unused)
{
    (void)unused;
    fixture *f = start_with("lucidd_server_period", 1, 60, set_period_100ms);
    char status[8192];
    request(f, "{\"cmd\":\"status\"}\n", status, sizeof status);
    double t0 = now_s(), k0 = (double)json_number(status, "ticks");
    sleep_ms(2000);
    request(f, "{\"cmd\":\"status\"}\n", status, sizeof status);
    double rate = ((double)json_number(status, "ticks") - k0) / (now_s() - t0);
    stop(f);
    assert_true(rate > 7.5);  /* 10 a second; 6.25 (1 / 160 ms) with the wait after each tick */
    assert_true(rate < 11.0); /* and no catching up */
}

/* A cheap tick is followed sooner: the period is 20 x the tick's wall
 * time, at least --tick-min-ms, at most --tick-ms. */
static void tick_period_follows_the_tick_cost(void **unused)
{
    (void)unused;
    lucidd_config cfg = {.tick_ms = 500, .tick_min_ms = 100};
    assert_int_equal(lucidd_tick_period_ms(&cfg, 0), 100);
    assert_int_equal(lucidd_tick_period_ms(&cfg, 0.004), 100);
    assert_int_equal(lucidd_tick_period_ms(&cfg, 0.010), 200);
    assert_int_equal(lucidd_tick_period_ms(&cfg, 0.030), 500);
    assert_int_equal(lucidd_tick_period_ms(&cfg, 3.0), 500);
    cfg.tick_min_ms = 800; /* a floor above the period: the period */
    assert_int_equal(lucidd_tick_period_ms(&cfg, 0), 500);
    cfg.tick_min_ms = 0; /* fixed */
    assert_int_equal(lucidd_tick_period_ms(&cfg, 0), 500);
}

static void set_adaptive_period(fixture *f)
{
    f->d.cfg.tick_ms = 500;
    f->d.cfg.tick_min_ms = 100;
}

static double tick_rate(fixture *f, int ms)
{
    char status[8192];
    request(f, "{\"cmd\":\"status\"}\n", status, sizeof status);
    double t0 = now_s(), k0 = (double)json_number(status, "ticks");
    sleep_ms(ms);
    request(f, "{\"cmd\":\"status\"}\n", status, sizeof status);
    return ((double)json_number(status, "ticks") - k0) / (now_s() - t0);
}

/* Live: ticks of 2 ms run 10 a second (the 100 ms floor), ticks of 40 ms
 * (a slower Slurm) 2 a second (--tick-ms 500). */
static void cheap_ticks_come_sooner(void **unused)
{
    (void)unused;
    fixture *f = start_with("lucidd_server_adaptive", 1, 2, set_adaptive_period);
    double fast = tick_rate(f, 2000);
    fake_set(&fake_tick_ms, 40);
    sleep_ms(600); /* the tick under way and the next period */
    double slow = tick_rate(f, 2000);
    stop(f);
    assert_true(fast > 7.0 && fast < 11.0);
    assert_true(slow > 1.5 && slow < 2.5);
}

static void clients_see_only_published_snapshots(void **unused)
{
    (void)unused;
    fixture *f = start("lucidd_server_snapshot", 3, 30);
    sleep_ms(200);
    long long last_tick = 0;
    for (int i = 0; i < 40; i++) {
        char queue[16384], status[8192];
        request(f, "{\"cmd\":\"queue\",\"all\":true}\n", queue, sizeof queue);
        assert_null(strstr(queue, "half-done"));
        const char *name = strstr(queue, "\"name\":\"tick-");
        assert_non_null(name);
        long long tick = atoll(name + strlen("\"name\":\"tick-"));
        assert_true(tick >= last_tick); /* snapshots only move forward */
        last_tick = tick;
        assert_non_null(strstr(queue, "\"name\":\"job-2\""));
        assert_non_null(strstr(queue, "\"name\":\"caf?\"")); /* shown, not hidden */
        request(f, "{\"cmd\":\"status\"}\n", status, sizeof status);
        assert_true(json_number(status, "ticks") >= tick);
        assert_non_null(strstr(status, "\"bypassed\":"));
        assert_true(json_number(status, "bypassed") == 2 * json_number(status, "ticks"));
        assert_true(json_number(status, "yielded") == 3 * json_number(status, "ticks"));
        assert_non_null(strstr(status, "\"decision_latency_p50_s\":0.0005"));
        assert_non_null(strstr(status, "\"slurm_unreachable_since\":null"));
        sleep_ms(50);
    }
    assert_true(last_tick >= 10); /* ~2 s of 80 ms ticks */
    char queue[16384];
    request(f, "{\"cmd\":\"queue\"}\n", queue, sizeof queue); /* final jobs left out */
    json_error_t jerr;
    json_t *reply = json_loads(queue, 0, &jerr);
    assert_non_null(reply);
    assert_int_equal(json_array_size(json_object_get(reply, "jobs")), 1);
    json_decref(reply);
    assert_null(strstr(queue, "\"name\":\"caf?\""));
    assert_non_null(strstr(queue, "\"name\":\"job-2\""));
    char metrics[16384];
    http_get(f, metrics, sizeof metrics);
    assert_non_null(strstr(metrics, "HTTP/1.0 200 OK"));
    assert_non_null(strstr(metrics, "lucid_ticks_total "));
    const char *ticks_line = strstr(metrics, "\nlucid_ticks_total ");
    const char *bypassed = strstr(metrics, "\nlucid_profiler_bypassed_total ");
    const char *yielded = strstr(metrics, "\nlucid_profiler_yielded_total ");
    const char *released = strstr(metrics, "\nlucid_released_ahead_total ");
    const char *started = strstr(metrics, "\nlucid_started_ahead_total ");
    assert_non_null(released);
    assert_non_null(started);
    assert_non_null(ticks_line);
    assert_non_null(bypassed);
    assert_non_null(yielded);
    long long nticks = atoll(ticks_line + strlen("\nlucid_ticks_total "));
    assert_true(nticks > 0);
    assert_int_equal(atoll(bypassed + strlen("\nlucid_profiler_bypassed_total ")), 2 * nticks);
    assert_int_equal(atoll(yielded + strlen("\nlucid_profiler_yielded_total ")), 3 * nticks);
    assert_int_equal(atoll(released + strlen("\nlucid_released_ahead_total ")), 5 * nticks);
    assert_int_equal(atoll(started + strlen("\nlucid_started_ahead_total ")), 4 * nticks);
    assert_non_null(strstr(metrics, "lucid_decision_latency_seconds{quantile=\"0.99\"} 0.000990000"));
    assert_non_null(strstr(metrics, "lucid_jobs{phase=\"done\"} 2"));
    assert_exposition_valid(metrics);
    stop(f);
}

typedef struct slow_client {
    const fixture *f;
    int http;
    double cut_after; /* seconds until the server closed it */
    size_t got;       /* reply bytes it received (none expected) */
} slow_client;

/* Sends its request one byte every 0.9 s until the server hangs up. */
static void *dribble(void *arg)
{
    slow_client *s = arg;
    static const char json[] = "{\"cmd\":\"status\"}\n";
    static const char http[] = "GET /metrics HTTP/1.0\r\n\r\n";
    const char *req = s->http ? http : json;
    int fd;
    if (s->http) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in addr = {.sin_family = AF_INET,
                                   .sin_port = htons((uint16_t)s->f->d.cfg.metrics_port)};
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof addr), 0);
    } else {
        fd = connect_unix(s->f->socket_path);
    }
    double t0 = now_s();
    for (size_t i = 0; req[i]; i++) {
        if (send(fd, req + i, 1, MSG_NOSIGNAL) != 1)
            break;
        sleep_ms(900);
        char probe[1];
        if (recv(fd, probe, 1, MSG_DONTWAIT) == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
            break; /* the server hung up */
    }
    s->cut_after = now_s() - t0;
    char rest[4096];
    s->got = read_all(fd, rest, sizeof rest);
    close(fd);
    return NULL;
}

static void slow_clients_are_cut_off_others_answered(void **unused)
{
    (void)unused;
    fixture *f = start("lucidd_server_slow", 2, 0);
    slow_client unix_client = {.f = f}, http_client = {.f = f, .http = 1};
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, dribble, &unix_client), 0);
    assert_int_equal(pthread_create(&b, NULL, dribble, &http_client), 0);
    others_answered_promptly(f, 20, 1.0); /* ~2.5 s: the slow ones are still on */
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    /* Cut at the 2 s request deadline: seen after the next 0.9 s byte. */
    for (int k = 0; k < 2; k++) {
        const slow_client *s = k ? &http_client : &unix_client;
        if (s->cut_after < 1.8 || s->cut_after > 4.0)
            fail_msg("%s slow client cut after %.2f s, not at the 2 s deadline",
                     k ? "http" : "unix", s->cut_after);
        assert_int_equal(s->got, 0);
    }
    stop(f);
}

/* 20,000 jobs: `queue --all` is ~10 MB, far beyond the socket buffers. */
static void client_that_never_reads_is_dropped(void **unused)
{
    (void)unused;
    fixture *f = start("lucidd_server_nonreader", 20000, 0);
    int idle = connect_unix(f->socket_path);
    static const char req[] = "{\"cmd\":\"queue\",\"all\":true}\n";
    assert_int_equal(write(idle, req, sizeof req - 1), (ssize_t)(sizeof req - 1));
    double t0 = now_s();
    sleep_ms(500);
    others_answered_promptly(f, 10, 1.0);
    sleep_ms((int)(1000 * (11.0 - (now_s() - t0)))); /* past the 10 s reply deadline */
    /* What the server had sent, then the end: it gave up. */
    size_t total = read_all(idle, NULL, 0);
    close(idle);
    int fd = connect_unix(f->socket_path); /* a reader gets the whole reply, valid JSON */
    assert_int_equal(write(fd, req, sizeof req - 1), (ssize_t)(sizeof req - 1));
    size_t size = (size_t)32 << 20;
    char *text = malloc(size);
    assert_non_null(text);
    size_t whole = read_all(fd, text, size);
    close(fd);
    assert_true(whole < size - 1);
    assert_int_equal(text[whole - 1], '\n');
    json_error_t jerr;
    json_t *reply = json_loads(text, 0, &jerr);
    if (!reply)
        fail_msg("queue reply is not JSON: %s at %d", jerr.text, jerr.position);
    json_t *jobs = json_object_get(reply, "jobs");
    assert_int_equal(json_array_size(jobs), 20000);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(jobs, 19999), "job")), 20000);
    json_decref(reply);
    free(text);
    if (whole < 5000000 || total >= whole)
        fail_msg("non-reader got %zu of %zu bytes", total, whole);
    stop(f);
}

static void connection_cap_holds(void **unused)
{
    (void)unused;
    fixture *f = start("lucidd_server_cap", 1, 0);
    int held[64];
    for (int i = 0; i < 64; i++)
        held[i] = connect_unix(f->socket_path); /* silent: each waits for its deadline */
    sleep_ms(200);
    char reply[512];
    double took = request(f, "{\"cmd\":\"status\"}\n", reply, sizeof reply);
    assert_string_equal(reply, "{\"ok\":false,\"error\":\"lucidd: too many connections; try again\"}\n");
    assert_true(took < 1.0);
    sleep_ms(2500); /* the 64 silent ones reach their request deadline */
    for (int i = 0; i < 64; i++) {
        char buf[16];
        assert_int_equal(read(held[i], buf, sizeof buf), 0); /* closed, no reply */
        close(held[i]);
    }
    request(f, "{\"cmd\":\"status\"}\n", reply, sizeof reply);
    assert_non_null(strstr(reply, "\"ok\":true"));
    stop(f);
}

/* Ticks of 3 s with Slurm down: answers come at once, say since when Slurm
 * is unreachable, and how long the tick has run; a command waits for the
 * tick and comes back with the client's uid. */
static void blocked_tick_delays_no_answer(void **unused)
{
    (void)unused;
    fixture *f = start("lucidd_server_blocked", 1, 0);
    sleep_ms(200);
    fake_set(&fake_slurm_up, 0);
    int64_t down_from = (int64_t)time(NULL);
    sleep_ms(200); /* the next tick starts with Slurm "down" */
    fake_set(&fake_tick_ms, 3000);
    sleep_ms(500); /* a 3 s tick is now in progress */
    char reply[8192];
    double took = request(f, "{\"cmd\":\"status\"}\n", reply, sizeof reply);
    assert_true(took < 1.0);
    long long since = json_number(reply, "slurm_unreachable_since");
    assert_true(since >= down_from - 1 && since <= down_from + 2);
    assert_non_null(strstr(reply, "\"slurm_reachable\":false"));
    assert_null(strstr(reply, "\"tick_running_s\":0.0,"));
    others_answered_promptly(f, 5, 1.0);
    /* A release posted now is answered when the engine next drains. */
    double t0 = now_s();
    request(f, "{\"cmd\":\"release\",\"job\":1}\n", reply, sizeof reply);
    double waited = now_s() - t0;
    char want[128];
    snprintf(want, sizeof want,
             "{\"ok\":false,\"error\":\"release 1 by uid %u: not implemented\"}\n",
             (unsigned)getuid());
    assert_string_equal(reply, want);
    assert_true(waited > 0.3 && waited < 6.5);
    fake_set(&fake_tick_ms, 0);
    stop(f);
}

/* explain: job and phase history from the snapshot and the server's own
 * read-only connection, the "why" from the engine (the fake's text). */
static void explain_combines_store_and_engine(void **unused)
{
    (void)unused;
    fixture *f = start("lucidd_server_explain", 2, 0);
    sleep_ms(200);
    char reply[8192];
    request(f, "{\"cmd\":\"explain\",\"job\":1}\n", reply, sizeof reply);
    assert_non_null(strstr(reply, "\"why\":\"why of job 1\""));
    assert_non_null(strstr(reply, "\"phases\":[{\"phase\":\"done\""));
    request(f, "{\"cmd\":\"explain\",\"job\":99}\n", reply, sizeof reply);
    assert_string_equal(reply, "{\"ok\":false,\"error\":\"no such job under lucid\"}\n");
    /* Ended long ago: no longer in lucidd's memory, explained from the
     * store (a job not ended is never taken from there). */
    lucid_error err = {{0}};
    lucid_job_record old = f->d.jobs[0].rec;
    old.job_id = 7;
    old.phase = LUCID_PHASE_FAILED;
    snprintf(old.outcome, sizeof old.outcome, "timeout");
    assert_int_equal(lucid_state_put_job(f->d.state, &old, &err), 0);
    old.job_id = 8;
    old.phase = LUCID_PHASE_MAIN_QUEUE;
    assert_int_equal(lucid_state_put_job(f->d.state, &old, &err), 0);
    request(f, "{\"cmd\":\"explain\",\"job\":7}\n", reply, sizeof reply);
    assert_non_null(strstr(reply, "\"outcome\":\"timeout\""));
    assert_non_null(strstr(reply, "\"phases\":[{\"phase\":\"failed\""));
    assert_non_null(strstr(reply, "lucidd keeps it in its state store only"));
    request(f, "{\"cmd\":\"explain\",\"job\":8}\n", reply, sizeof reply);
    assert_string_equal(reply, "{\"ok\":false,\"error\":\"no such job under lucid\"}\n");
    request(f, "{\"cmd\":\"release\"}\n", reply, sizeof reply);
    assert_string_equal(reply, "{\"ok\":false,\"error\":\"bad request: release needs \\\"job\\\":N\"}\n");
    request(f, "not json\n", reply, sizeof reply);
    assert_non_null(strstr(reply, "\"error\":\"bad request"));
    stop(f);
}

/* Job 2 holds a backfill reservation since 1,700,000,000 (lying at
 * 1,700,003,600 on n3,n4); job 4 waits with none. */
static void seed_reservation(fixture *f)
{
    f->d.jobs[1].rec.reserved_since = 1700000000;
    f->d.jobs[1].reserved_at = 1700003600;
    snprintf(f->d.jobs[1].reserved_nodes, sizeof f->d.jobs[1].reserved_nodes, "n3,n4");
}

/* The queue's job objects say since when a job holds its reservation
 * ("reserved_since", UTC s), 0 for a job that holds none; explain's too. */
static void queue_shows_reserved_since(void **unused)
{
    (void)unused;
    fixture *f = start_with("lucidd_server_reserved", 4, 0, seed_reservation);
    sleep_ms(200);
    char text[16384];
    request(f, "{\"cmd\":\"queue\"}\n", text, sizeof text);
    json_error_t jerr;
    json_t *reply = json_loads(text, 0, &jerr);
    assert_non_null(reply);
    json_t *jobs = json_object_get(reply, "jobs");
    assert_int_equal(json_array_size(jobs), 2); /* jobs 2 and 4 wait */
    for (size_t i = 0; i < 2; i++) {
        json_t *job = json_array_get(jobs, i);
        json_int_t id = json_integer_value(json_object_get(job, "job"));
        json_t *since = json_object_get(job, "reserved_since");
        assert_true(json_is_integer(since));
        assert_int_equal(json_integer_value(since), id == 2 ? 1700000000 : 0);
        assert_int_equal(json_integer_value(json_object_get(job, "reserved_at")),
                         id == 2 ? 1700003600 : 0);
    }
    json_decref(reply);
    request(f, "{\"cmd\":\"explain\",\"job\":2}\n", text, sizeof text);
    assert_non_null(strstr(text, "\"reserved_since\":1700000000"));
    char metrics[16384];
    http_get(f, metrics, sizeof metrics);
    assert_non_null(strstr(metrics, "\nlucid_reservations 1\n"));
    stop(f);
}

/* A second server on a socket that answers is refused; a stale socket file
 * is replaced; at close a socket that is no longer ours stays. */
static void socket_ownership(void **unused)
{
    (void)unused;
    fixture *f = start("lucidd_server_owner", 1, 0);
    lucid_error err = {{0}};
    lucidd_config cfg = f->d.cfg;
    cfg.metrics_port = 0;
    assert_null(server_open(&cfg, f->hub, &err));
    char want[700];
    snprintf(want, sizeof want, "another lucidd serves %s", f->socket_path);
    assert_string_equal(err.msg, want);
    char reply[8192];
    request(f, "{\"cmd\":\"status\"}\n", reply, sizeof reply); /* still serving */
    assert_non_null(strstr(reply, "\"ok\":true"));
    /* Replace the path behind the server's back: its close leaves it alone. */
    char moved[700];
    snprintf(moved, sizeof moved, "%s.old", f->socket_path);
    assert_int_equal(rename(f->socket_path, moved), 0);
    FILE *other = fopen(f->socket_path, "w");
    assert_non_null(other);
    fclose(other);
    char path[700];
    snprintf(path, sizeof path, "%s", f->socket_path);
    stop(f);
    assert_int_equal(access(path, F_OK), 0); /* the impostor file stays */
    assert_int_equal(access(moved, F_OK), 0); /* not ours any more either: stays */
}

/* ---- per-user answers: clients of other uids (fork + setresuid, as root) ---- */

/* Two uids without a passwd entry, and `nobody`, whose primary group is
 * the admin group; `daemon` (uid 1) owns a job only by name, as a job
 * loaded from the store before Slurm lists it (uid 0). */
static uid_t user_a, user_b, nobody_uid;
static gid_t nobody_gid;
static char admin_group[64];

static uid_t unnamed_uid(uid_t from)
{
    while (getpwuid(from))
        from++;
    return from;
}

static void seed_owners(fixture *f)
{
    static const struct {
        const uid_t *uid;
        const char *user;
    } owner[] = {{&user_a, "ua"}, {&user_b, "ub"}, {&user_a, "ua"}, {NULL, "daemon"}};
    for (size_t i = 0; i < f->d.njobs; i++) {
        lucidd_job *job = &f->d.jobs[i];
        job->uid = owner[i].uid ? (uint32_t)*owner[i].uid : 0;
        snprintf(job->rec.user, sizeof job->rec.user, "%s", owner[i].user);
        job->rec.phase = LUCID_PHASE_MAIN_QUEUE;
    }
    f->d.cfg.socket_mode = 0666;
    f->d.cfg.admin_group = admin_group;
    f->d.cfg.admin_gid = (uint32_t)nobody_gid;
}

/* The request as uid:gid (no supplementary groups); the reply in `out`. */
static void request_as(const fixture *f, uid_t uid, gid_t gid, const char *req, char *out,
                       size_t size)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* only plain system calls here: the parent has threads */
        close(fds[0]);
        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
            _exit(3);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        size_t len = strlen(f->socket_path);
        if (len >= sizeof addr.sun_path)
            _exit(6);
        memcpy(addr.sun_path, f->socket_path, len + 1);
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0 ||
            write(fd, req, strlen(req)) != (ssize_t)strlen(req))
            _exit(4);
        char chunk[4096];
        ssize_t n;
        while ((n = read(fd, chunk, sizeof chunk)) > 0)
            if (write(fds[1], chunk, (size_t)n) != n)
                _exit(5);
        _exit(0);
    }
    close(fds[1]);
    read_all(fds[0], out, size);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("client as uid %u failed (status %d)", (unsigned)uid, status);
}

/* The job ids of a queue reply, as "1,3" (in reply order). */
static void queue_ids(const char *reply, char *ids, size_t size)
{
    json_error_t jerr;
    json_t *root = json_loads(reply, 0, &jerr);
    if (!root)
        fail_msg("queue reply is not JSON: %s", reply);
    json_t *jobs = json_object_get(root, "jobs");
    assert_true(json_is_array(jobs));
    ids[0] = '\0';
    size_t k;
    json_t *job;
    json_array_foreach(jobs, k, job) {
        size_t len = strlen(ids);
        snprintf(ids + len, size - len, "%s%lld", k ? "," : "",
                 (long long)json_integer_value(json_object_get(job, "job")));
    }
    json_decref(root);
}

static void per_user_answers(void **unused)
{
    (void)unused;
    struct passwd *pw = getpwnam("daemon"); /* a static buffer: copied at once */
    uid_t daemon_uid = pw ? pw->pw_uid : 0;
    gid_t daemon_gid = pw ? pw->pw_gid : 0;
    pw = getpwnam("nobody");
    if (geteuid() != 0 || !pw || daemon_uid == 0) {
        puts("per_user_answers: needs root, users nobody and daemon: skipped");
        skip();
    }
    nobody_uid = pw->pw_uid;
    nobody_gid = pw->pw_gid;
    assert_true(nobody_gid != daemon_gid);
    struct group *gr = getgrgid(nobody_gid);
    assert_non_null(gr);
    snprintf(admin_group, sizeof admin_group, "%s", gr->gr_name);
    user_a = unnamed_uid(40000);
    user_b = unnamed_uid(user_a + 1);
    fixture *f = start_with("lucidd_server_users", 4, 0, seed_owners);
    chmod(f->dir, 0755);
    sleep_ms(200);
    char reply[65536], ids[64];
    /* Jobs 1 and 3 are user_a's, 2 user_b's, 4 daemon's by name only. */
    request_as(f, user_a, 40000, "{\"cmd\":\"queue\"}\n", reply, sizeof reply);
    queue_ids(reply, ids, sizeof ids);
    assert_string_equal(ids, "1,3");
    request_as(f, user_b, 40000, "{\"cmd\":\"queue\"}\n", reply, sizeof reply);
    queue_ids(reply, ids, sizeof ids);
    assert_string_equal(ids, "2");
    request_as(f, daemon_uid, daemon_gid, "{\"cmd\":\"queue\"}\n", reply, sizeof reply);
    queue_ids(reply, ids, sizeof ids);
    assert_string_equal(ids, "4");
    /* nobody: in the admin group (its primary group); root: everything. */
    request_as(f, nobody_uid, nobody_gid, "{\"cmd\":\"queue\"}\n", reply, sizeof reply);
    queue_ids(reply, ids, sizeof ids);
    assert_string_equal(ids, "1,2,3,4");
    request(f, "{\"cmd\":\"queue\"}\n", reply, sizeof reply);
    queue_ids(reply, ids, sizeof ids);
    assert_string_equal(ids, "1,2,3,4");
    /* explain: one's own job yes, another's no; an admin any. */
    request_as(f, user_a, 40000, "{\"cmd\":\"explain\",\"job\":3}\n", reply, sizeof reply);
    assert_non_null(strstr(reply, "\"why\":\"why of job 3\""));
    request_as(f, user_a, 40000, "{\"cmd\":\"explain\",\"job\":2}\n", reply, sizeof reply);
    assert_non_null(strstr(reply, "\"ok\":false,\"error\":\"not your job"));
    request_as(f, user_b, 40000, "{\"cmd\":\"explain\",\"job\":4}\n", reply, sizeof reply);
    assert_non_null(strstr(reply, "not your job"));
    request_as(f, nobody_uid, nobody_gid, "{\"cmd\":\"explain\",\"job\":2}\n", reply,
               sizeof reply);
    assert_non_null(strstr(reply, "\"why\":\"why of job 2\""));
    /* status: the same global counts for everyone (4 jobs in main-queue). */
    request_as(f, user_b, 40000, "{\"cmd\":\"status\"}\n", reply, sizeof reply);
    assert_int_equal(json_number(reply, "main-queue"), 4);
    stop(f);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(clients_see_only_published_snapshots),
        cmocka_unit_test(ticks_keep_their_period),
        cmocka_unit_test(tick_period_follows_the_tick_cost),
        cmocka_unit_test(cheap_ticks_come_sooner),
        cmocka_unit_test(slow_clients_are_cut_off_others_answered),
        cmocka_unit_test(client_that_never_reads_is_dropped),
        cmocka_unit_test(connection_cap_holds),
        cmocka_unit_test(blocked_tick_delays_no_answer),
        cmocka_unit_test(explain_combines_store_and_engine),
        cmocka_unit_test(queue_shows_reserved_since),
        cmocka_unit_test(socket_ownership),
        cmocka_unit_test(per_user_answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
int main(void)
{
    puts("test_lucidd_server: built without SQLite, skipped");
    return 0;
}
#endif
