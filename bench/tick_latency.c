/* tick_latency.c — one whole lucidd tick (engine_tick: intake, tracking,
 * eligibility, decisions, AdminComments, the state store's writes) on a
 * large cluster, with Slurm replaced by the in-memory fake the engine tests
 * use (tests/fakes/fake_slurm_io.c), so what is timed is lucid's own work:
 *
 *   tick_latency NODES PENDING TICKS [ENDED [AGE [HISTORY]]]
 *
 * NODES main nodes of 8 GPUs, all busy with 4-GPU jobs; PENDING held jobs of
 * 1-32 GPUs in the main queue; ENDED (0) jobs that ended before the first
 * tick and that Slurm still lists; each tick a few running jobs end and as
 * many new ones arrive.  With AGE > 0, Slurm forgets a job AGE ticks after
 * its end (MinJobAge), so the listing stays the same size however many
 * ticks run: a soak.  Prints p50 / p99 / max of the tick's thread CPU time
 * and wall time (the state store is a real SQLite file: its fsyncs are in
 * the wall time), and the process's RSS after the first 100 ticks and at
 * the end.  With HISTORY > 0 the duration model is trained (one bag, on
 * the worker thread, before the timed ticks) on HISTORY finished jobs of
 * 50 users, and the first timed tick installs it: every held job is
 * estimated again with it; that tick is printed on its own.  With
 * PROFILER=1 in the environment the profiler is on (8 GPUs, node p1): the
 * pending jobs wait for it, and with --profiler-yield (YIELD=1, the
 * default; YIELD=0 off) every one of them takes part in main's decision as
 * a stand-in at every tick, the costliest case of that rule.  AHEAD=0
 * turns --release-ahead off (on by default, as in lucidd).  Results:
 * docs/live.md, "Decision latency", "Memory" and "A new model". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../src/daemon/daemon.h"
#include "../src/daemon/models.h"
#include "../tests/fakes/fake_slurm_io.h"

void lucidd_log(const char *fmt, ...)
{
    (void)fmt;
}

void lucidd_log_level(int priority, const char *fmt, ...)
{
    (void)priority;
    (void)fmt;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kb = atol(line + 6);
    if (f)
        fclose(f);
    return kb;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double quantile(double *v, int n, double q)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = (int)(q * n + 0.999999);
    return v[k > 0 ? k - 1 : 0];
}

int main(int argc, char **argv)
{
    engine_tune_malloc(); /* as lucidd does */
    int nodes = argc > 1 ? atoi(argv[1]) : 1000;
    int pending = argc > 2 ? atoi(argv[2]) : 10000;
    int ticks = argc > 3 ? atoi(argv[3]) : 100;
    int ended = argc > 4 ? atoi(argv[4]) : 0;
    int age = argc > 5 ? atoi(argv[5]) : 0;
    int history = argc > 6 ? atoi(argv[6]) : 0;
    /* Listed at most: the first jobs, 8 arrivals a tick (4 new, 4 at the
     * start) and, with AGE, only the last AGE ticks' ends. */
    long most = 2L * nodes + pending + ended + 8L * (age > 0 && age < ticks ? age + 2 : ticks);
    if (nodes < 1 || nodes + 1 > FAKE_MAX_NODES || pending < 0 || ended < 0 || age < 0 ||
        most > FAKE_MAX_JOBS || ticks < 1 || history < 0) {
        fprintf(stderr,
                "usage: tick_latency NODES(<%d) PENDING TICKS [ENDED [AGE [HISTORY]]] (jobs < %d)\n",
                FAKE_MAX_NODES, FAKE_MAX_JOBS);
        return 2;
    }
    static lucidd d;
    fake_reset();
    fake.quiet = 1;
    fake_node("p1", "profiling", 8);
    char name[32];
    for (int k = 1; k <= nodes; k++) {
        snprintf(name, sizeof name, "n%d", k);
        fake_node(name, "main", 8);
    }
    char dir[] = "/tmp/lucid-tick-XXXXXX", db[64];
    if (!mkdtemp(dir))
        return 1;
    snprintf(db, sizeof db, "%s/state.db", dir);
    const char *prof_env = getenv("PROFILER"), *yield_env = getenv("YIELD");
    const char *ahead_env = getenv("AHEAD");
    int ahead = !ahead_env || atoi(ahead_env) > 0;
    int profiler = prof_env && atoi(prof_env) > 0;
    int yield = !yield_env || atoi(yield_env) > 0;
    d.cfg = (lucidd_config){.state_path = db, .main_partition = "main",
                            .profiling_partition = "profiling", .profile_limit_s = 200,
                            .gpu_limit = profiler ? 8 : 0, .profiler_yield = yield,
                            .release_ahead = ahead, .gpu_memory_mib = 24576, .score_sum = 2,
                            .priority_ratio = 2, .packing_mode = -1, .tick_ms = 500,
                            .default_estimate_s = 3600, .retrain_period_s = 604800,
                            .min_history = 1000000000,
                            /* a soak: a job leaves the table at the pass after
                             * Slurm forgets it (the default hour would outlast
                             * the run) */
                            .forget_ended_s = age > 0 ? 0 : 3600};
    lucid_error err = {{0}};
    d.state = lucid_state_open(db, &err);
    d.metrics = lucid_gpumetrics_open_auto(dir);
    lucidd_models_config mc = {.retrain_period_s = 604800,
                               .min_history = history > 0 ? (size_t)history : 1000000000,
                               .bags = 1, .seed = 42, .vc = "main"};
    d.models = d.state ? lucidd_models_open(&mc, d.state, 0, &err) : NULL;
    if (!d.state || !d.models) {
        fprintf(stderr, "tick_latency: %s\n", err.msg);
        return 1;
    }
    srand(7);
    for (int i = 0; i < history; i++) { /* finished over the last 30 days */
        static lucidd_job done;
        done.rec = (lucid_job_record){.job_id = (uint32_t)(1000000 + i),
                                      .phase = LUCID_PHASE_DONE,
                                      .gpus = 1 << (rand() % 4)};
        snprintf(done.rec.user, sizeof done.rec.user, "user%d", rand() % 50);
        done.rec.submit_time = time(NULL) - 30 * 86400 + (int64_t)i * (30 * 86400 / history);
        done.rec.main_start = done.rec.submit_time + rand() % 600;
        done.rec.end_time = done.rec.main_start + 60 + rand() % 20000;
        if (lucidd_models_add_finished(d.models, &done) < 0)
            return 1;
    }
    /* Times are the real clock's, as lucidd's own: submitted within the
     * last two hours, the running jobs started within the last half hour
     * (each within its time limit, 1-600 min more than it has run), ends
     * and starts at the tick's time.  Every node busy with two 4-GPU jobs
     * (adopted at the first tick: their nodes, as Slurm lists them, are in
     * the start-time estimates from then on). */
    const time_t base = time(NULL);
    uint32_t id = 1;
    srand(42);
    for (int k = 1; k <= nodes; k++)
        for (int half = 0; half < 2; half++) {
            slurm_job *j = fake_submit(id, "u", 4, 4, 1);
            snprintf(j->req_nodes, sizeof j->req_nodes, "n%d", k);
            int ran = 60 + rand() % 1800;
            /* Within its time limit (Slurm ends a job at its limit): a job
             * 30 min into a 1-min limit made the estimates' first ticks
             * the costliest (its end "in a second" in every scenario). */
            j->time_limit_min = (uint32_t)(ran / 60 + 1 + rand() % 600);
            j->submit_time = base - 7200;
            fake_run(id++, base - ran);
        }
    for (int i = 0; i < pending; i++) {
        static const int sizes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 16, 32};
        int g = sizes[rand() % 11];
        slurm_job *j = fake_submit(id++, "u", g, g > 8 ? 8 : g, g > 8 ? g / 8 : 1);
        j->time_limit_min = (uint32_t)(1 + rand() % 600);
        j->submit_time = base - rand() % 7200;
    }
    /* The tick each job ended at (Slurm forgets it AGE ticks later). */
    size_t max_id = 2 * (size_t)nodes + (size_t)pending + (size_t)ended + 4 * (size_t)ticks + 8;
    int *ended_tick = malloc(max_id * sizeof *ended_tick);
    if (!ended_tick)
        return 1;
    for (int i = 0; i < ended; i++) { /* ran and ended before lucidd looked */
        slurm_job *j = fake_submit(id, "u", 1, 1, 1);
        j->held = 0;
        j->submit_time = base - 3600;
        ended_tick[id] = -age - 1;
        fake_end(id++, SJ_COMPLETED, "COMPLETED", base - 600);
    }
    engine_tick(&d); /* intake of everything (and the training's start): not timed */
    lucidd_models_wait(d.models); /* the first timed tick installs the model */
    double *cpu = calloc((size_t)ticks, sizeof *cpu), *wall = calloc((size_t)ticks, sizeof *wall);
    double *eta = calloc((size_t)ticks, sizeof *eta); /* the start-time estimates' share */
    double *eta_all = calloc((size_t)ticks, sizeof *eta_all); /* with gathering, hashing */
    int neta = 0;
    long rss100 = -1;
    double install_cpu = 0, install_wall = 0;
    for (int t = 0; t < ticks; t++) {
        const time_t now = time(NULL);
        /* The four running jobs that started first end (by start time,
         * then id). */
        for (int e = 0; e < 4; e++) {
            slurm_job *first = NULL;
            for (int i = 0; i < fake.njobs; i++) {
                slurm_job *j = &fake.jobs[i];
                if (j->state == SJ_RUNNING &&
                    (!first || j->start_time < first->start_time ||
                     (j->start_time == first->start_time && j->id < first->id)))
                    first = j;
            }
            if (!first)
                break;
            ended_tick[first->id] = t;
            fake_end(first->id, SJ_COMPLETED, "COMPLETED", now);
        }
        if (age > 0)
            for (int i = fake.njobs - 1; i >= 0; i--)
                if ((fake.jobs[i].state == SJ_COMPLETED || fake.jobs[i].state == SJ_FAILED) &&
                    ended_tick[fake.jobs[i].id] <= t - age)
                    fake_purge(fake.jobs[i].id);
        for (int i = 0; i < 4; i++) {
            slurm_job *j = fake_submit(id++, "u", 1 + rand() % 4, 1 + rand() % 4, 1);
            j->time_limit_min = 60;
            j->submit_time = now;
        }
        /* Jobs lucid released start at once, as Slurm would. */
        for (int i = 0; i < fake.njobs; i++)
            if (fake.jobs[i].state == SJ_PENDING && !fake.jobs[i].held && fake.jobs[i].req_nodes[0])
                fake_run(fake.jobs[i].id, now);
        /* The table's pass over ended jobs runs once a minute of the
         * daemon's clock: every 120 ticks at the nominal 500 ms, however
         * fast the ticks run here. */
        if (t > 0 && t % 120 == 0)
            d.forgot_at = 0;
        double c0 = clock_s(CLOCK_THREAD_CPUTIME_ID), w0 = clock_s(CLOCK_MONOTONIC);
        uint64_t runs = d.eta_runs;
        engine_tick(&d);
        cpu[t] = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
        wall[t] = clock_s(CLOCK_MONOTONIC) - w0;
        if (t == 0) { /* quantile() below sorts the arrays */
            install_cpu = cpu[0];
            install_wall = wall[0];
        }
        if (d.eta_runs != runs)
            eta[neta++] = d.eta_cpu_s;
        eta_all[t] = d.eta_tick_cpu_s;
        if (t == 99 || (t < 99 && t == ticks - 1))
            rss100 = rss_kb();
        if (age > 0 && (t + 1) % 100 == 0) /* a soak: how RSS goes */
            fprintf(stderr, "  tick %d: RSS %ld kB, listed %d, in lucidd's table %zu\n", t + 1,
                    rss_kb(), fake.njobs, d.njobs);
    }
    if (history > 0)
        printf("  the tick that installed the model (HISTORY %d): cpu %.2f ms, wall %.2f ms\n",
               history, 1e3 * install_cpu, 1e3 * install_wall);
    long rss_end = rss_kb();
    long listed = fake.njobs;
    printf("nodes %d pending %d ticks %d: cpu p50 %.2f ms p99 %.2f ms max %.2f ms; "
           "wall p50 %.2f ms p99 %.2f ms max %.2f ms\n",
           nodes, pending, ticks, 1e3 * quantile(cpu, ticks, 0.5), 1e3 * quantile(cpu, ticks, 0.99),
           1e3 * quantile(cpu, ticks, 1.0), 1e3 * quantile(wall, ticks, 0.5),
           1e3 * quantile(wall, ticks, 0.99), 1e3 * quantile(wall, ticks, 1.0));
    if (neta > 0)
        printf("  start-time estimates in %d of the ticks: cpu p50 %.2f ms max %.2f ms\n", neta,
               1e3 * quantile(eta, neta, 0.5), 1e3 * quantile(eta, neta, 1.0));
    printf("  all of the estimates' work per tick: cpu p50 %.2f ms max %.2f ms\n",
           1e3 * quantile(eta_all, ticks, 0.5), 1e3 * quantile(eta_all, ticks, 1.0));
    if (profiler) {
        long waiting = 0, main_queue = 0;
        for (size_t i = 0; i < d.njobs; i++) {
            waiting += d.jobs[i].rec.phase == LUCID_PHASE_PROFILE_QUEUE;
            main_queue += d.jobs[i].rec.phase == LUCID_PHASE_MAIN_QUEUE;
        }
        printf("  profiler on (yield %s): at the end %ld waiting for it, %ld in main's queue; "
               "sent to main unprofiled %llu, profiling runs cut %llu\n",
               yield ? "on" : "off", waiting, main_queue,
               (unsigned long long)d.profiler_bypassed, (unsigned long long)d.profiler_yielded);
    }
    printf("  release ahead %s: %llu jobs released ahead\n", ahead ? "on" : "off",
           (unsigned long long)d.released_ahead);
    printf("  listed by Slurm at the end %ld, in lucidd's table %zu (forgotten %llu); "
           "RSS after 100 ticks %ld kB, at the end %ld kB (growth %ld kB)\n",
           listed, d.njobs, (unsigned long long)d.forgotten_jobs, rss100, rss_end,
           rss_end - rss100);
    free(ended_tick);
    free(eta);
    free(eta_all);
    free(cpu);
    free(wall);
    lucidd_models_close(d.models);
    lucid_gpumetrics_close(d.metrics);
    lucid_state_close(d.state);
    engine_free(&d);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : 1;
}
