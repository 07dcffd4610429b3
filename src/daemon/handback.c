/* handback.c — `lucidd --hand-back-after S --heartbeat FILE`: the fail-open
 * watchdog for jobs lucid already holds.
 *
 * It runs beside lucidd (its own process, so a hung or dead lucidd cannot
 * stop it) and watches the heartbeat lucidd rewrites every tick (`pid=P
 * time=UNIX intake=MAXJOBID`).  While the heartbeat is fresh it does nothing.
 * Once it is older than S seconds (or missing for S seconds since the
 * watchdog started), every job lucid holds in the managed partitions —
 * pending, priority 0, admin comment starting with `lucid` — goes back to
 * Slurm's own scheduler:
 *   - a job on the profiling partition is moved to the main one, the node
 *     pin lucid may have set is cleared, and it is released (priority
 *     INFINITE: Slurm computes its own);
 *   - a job its owner held (`sbatch -H`, comment `lucid-user-hold`) becomes a
 *     plain user hold the owner can lift with `scontrol release`;
 *   - the admin comment says `lucid: handed back to Slurm at <UTC> (lucidd
 *     silent since <UTC>)`, and each job is one line of this log.
 * lucidd rewrites the comment as the job's phase changes (`lucid: main-queue:
 * held by its owner ...`), so both words mark the owner's hold.
 * A job lucidd released ahead (`--release-ahead`: pending, not held, comment
 * with `lucid-ahead`) keeps a priority of lucid's above every job Slurm
 * ranks itself: it is given Slurm's own (priority INFINITE) and its
 * exclusion of packed nodes is lifted.
 * A job whose comment has `lucid-gpus=...` is a packed start lucidd had begun
 * to apply (its GPU request already dropped): released as it is it would run
 * without GPUs, so it stays held and is logged.  The watchdog keeps watching:
 * jobs held while lucidd is back (a fresh heartbeat) are lucidd's again, and
 * lucidd adopts the handed-back ones when it returns.
 *
 * Its own libslurm calls: slurm_io.c belongs to the decision loop. */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "daemon.h"
#include "handback.h"
#include "lucid/util.h"
#include "slurm_io.h"

typedef struct handback_config {
    const char *heartbeat;
    double after_s;
    const char *main_partition;
    const char *profiling_partition;
    int poll_ms;
} handback_config;

static volatile sig_atomic_t handback_stop;

static void on_stop(int sig)
{
    (void)sig;
    handback_stop = 1;
}

static const char handback_usage[] =
    "usage: lucidd --hand-back-after SECONDS --heartbeat FILE [options]\n"
    "  the fail-open watchdog: when lucidd's heartbeat FILE is older than SECONDS,\n"
    "  every job lucid holds goes back to Slurm's own scheduler (docs/live.md)\n"
    "  --main-partition P      default main\n"
    "  --profiling-partition P default profiling\n"
    "  --poll-ms N             how often the heartbeat is read (default 1000)\n";

int handback_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--hand-back-after") == 0)
            return 1;
    return 0;
}

static int handback_parse(int argc, char **argv, handback_config *cfg)
{
    *cfg = (handback_config){.after_s = -1,
                             .main_partition = "main",
                             .profiling_partition = "profiling",
                             .poll_ms = 1000};
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (i + 1 >= argc) {
            fprintf(stderr, "lucidd: %s needs a value (or is unknown)\n%s", opt, handback_usage);
            return -1;
        }
        const char *value = argv[++i];
        char *end;
        errno = 0;
        double number = strtod(value, &end);
        int numeric = end != value && *end == '\0' && errno == 0;
        if (strcmp(opt, "--heartbeat") == 0)
            cfg->heartbeat = value;
        else if (strcmp(opt, "--main-partition") == 0)
            cfg->main_partition = value;
        else if (strcmp(opt, "--profiling-partition") == 0)
            cfg->profiling_partition = value;
        else if (strcmp(opt, "--hand-back-after") == 0) {
            if (!numeric || number < 1) {
                fprintf(stderr, "lucidd: --hand-back-after: '%s' is not a number >= 1\n", value);
                return -1;
            }
            cfg->after_s = number;
        } else if (strcmp(opt, "--poll-ms") == 0) {
            if (!numeric || number < 10 || number > 600000) {
                fprintf(stderr, "lucidd: --poll-ms: '%s' is not a number from 10 to 600000\n",
                        value);
                return -1;
            }
            cfg->poll_ms = (int)number;
        } else {
            fprintf(stderr, "lucidd: %s is not an option of the hand-back watchdog\n%s", opt,
                    handback_usage);
            return -1;
        }
    }
    if (!cfg->heartbeat) {
        fprintf(stderr, "lucidd: --hand-back-after needs --heartbeat FILE\n%s", handback_usage);
        return -1;
    }
    return 0;
}

/* When lucidd last beat: the heartbeat's `time=`, else the file's mtime;
 * 0 when the file cannot be read. */
static time_t heartbeat_time(const char *path)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    struct stat st;
    time_t when = fstat(fileno(file), &st) == 0 ? st.st_mtime : 0;
    char line[256];
    if (fgets(line, sizeof line, file)) {
        const char *t = strstr(line, "time=");
        long long v = t ? strtoll(t + 5, NULL, 10) : 0;
        if (v > 0)
            when = (time_t)v;
    }
    fclose(file);
    return when;
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p = comma ? comma + 1 : NULL;
    }
    return 0;
}

static const char handed_back[] = "lucid: handed back";

/* One job back to Slurm.  0 done, 1 left held on purpose, -1 Slurm said no. */
static int hand_back_one(const handback_config *cfg, const slurm_job_info_t *job,
                         const char *comment)
{
    job_desc_msg_t update;
    slurm_init_job_desc_msg(&update);
    update.job_id = job->job_id;
    update.admin_comment = (char *)comment;
    const char *what;
    char partition[256] = "";
    if (strstr(job->admin_comment, "lucid-gpus=")) {
        lucidd_log("hand-back: job %u left held: a packed start was half applied (%s)",
                   job->job_id, job->admin_comment);
        return 1;
    }
    if (job->priority != 0) {
        /* Released ahead (lucidd --release-ahead): not held, but at a
         * priority of lucid's; given Slurm's own, and the exclusion lucid
         * set (packed nodes) lifted as for any job handed back. */
        update.exc_nodes = (char *)"";
        update.priority = INFINITE;
        what = "released ahead by lucidd: given Slurm's own priority";
    } else if (strstr(job->admin_comment, "lucid-user-hold") ||
               strstr(job->admin_comment, "held by its owner")) {
        /* Held again, as the user's hold (an operator may turn one into the
         * other): the owner lifts it with scontrol release. */
        update.priority = 0;
        update.alloc_sid = ALLOC_SID_USER_HOLD;
        what = "user hold kept, owner may scontrol release";
    } else {
        if (in_list(job->partition, cfg->profiling_partition)) {
            snprintf(partition, sizeof partition, "%s", cfg->main_partition);
            update.partition = partition;
        }
        update.req_nodes = (char *)""; /* lucid's pin, if any */
        update.priority = INFINITE;
        what = "released";
    }
    if (slurm_update_job(&update) != SLURM_SUCCESS) {
        lucidd_log("hand-back: job %u: %s", job->job_id, slurm_strerror(slurm_get_errno()));
        return -1;
    }
    const struct passwd *pw = getpwuid(job->user_id);
    lucidd_log("hand-back: job %u (user %s, %s) %s%s%s", job->job_id, pw ? pw->pw_name : "?",
               job->partition ? job->partition : "?", what, partition[0] ? ", moved to " : "",
               partition);
    return 0;
}

/* Every job lucid holds in the managed partitions; returns how many were
 * handed back, or -1 when Slurm cannot be reached. */
static long hand_back_all(const handback_config *cfg, time_t silent_since)
{
    job_info_msg_t *msg = NULL;
    if (slurm_load_jobs((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        lucidd_log("hand-back: loading jobs: %s", slurm_strerror(slurm_get_errno()));
        return -1;
    }
    char now_s[32], since_s[32], comment[160];
    lucid_time_format((int64_t)time(NULL), now_s, sizeof now_s);
    lucid_time_format((int64_t)silent_since, since_s, sizeof since_s);
    snprintf(comment, sizeof comment, "%s to Slurm at %s UTC (lucidd silent since %s UTC)",
             handed_back, now_s, since_s);
    char managed[512];
    snprintf(managed, sizeof managed, "%s,%s", cfg->main_partition, cfg->profiling_partition);
    long done = 0;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const slurm_job_info_t *job = &msg->job_array[i];
        if ((job->job_state & JOB_STATE_BASE) != JOB_PENDING || !job->admin_comment ||
            strncmp(job->admin_comment, "lucid", 5) != 0 ||
            strncmp(job->admin_comment, handed_back, sizeof handed_back - 1) == 0 ||
            (job->priority != 0 && !strstr(job->admin_comment, AHEAD_MARK)))
            continue;
        /* A job naming several partitions is lucid's when any is managed. */
        int ours = 0;
        char parts[256];
        snprintf(parts, sizeof parts, "%s", job->partition ? job->partition : "");
        char *save = NULL;
        for (char *p = strtok_r(parts, ",", &save); p; p = strtok_r(NULL, ",", &save))
            ours |= in_list(managed, p);
        if (ours && hand_back_one(cfg, job, comment) == 0)
            done++;
    }
    slurm_free_job_info_msg(msg);
    return done;
}

/* The plugin lets an owner lift their own hold only once it, too, finds
 * lucidd silent (`fail_open_after` in lucid.conf next to slurm.conf): a
 * shorter bound here would hand back user holds their owners cannot lift yet. */
static void check_plugin_bound(const handback_config *cfg)
{
    const char *slurm_conf = getenv("SLURM_CONF");
    const char *slash = slurm_conf ? strrchr(slurm_conf, '/') : NULL;
    char path[4096], line[256];
    if (slash)
        snprintf(path, sizeof path, "%.*s/lucid.conf", (int)(slash - slurm_conf), slurm_conf);
    else
        snprintf(path, sizeof path, "/etc/slurm/lucid.conf");
    FILE *file = fopen(path, "r");
    if (!file)
        return;
    double bound = 180;
    while (fgets(line, sizeof line, file))
        if (strncmp(line, "fail_open_after=", 16) == 0)
            bound = strtod(line + 16, NULL);
    fclose(file);
    if (cfg->after_s < bound)
        lucidd_log("hand-back: warning: --hand-back-after %.0f s is shorter than fail_open_after=%.0f "
                   "in %s: owners of handed-back user holds cannot release them until then",
                   cfg->after_s, bound, path);
}

int handback_main(int argc, char **argv)
{
    handback_config cfg;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0) {
            fputs(handback_usage, stdout);
            return 0;
        }
    if (handback_parse(argc, argv, &cfg) < 0)
        return 2;
    struct sigaction sa = {.sa_handler = on_stop};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    lucid_error err = {{0}};
    if (slurm_io_init(&err) < 0) {
        fprintf(stderr, "lucidd: %s\n", err.msg);
        return 1;
    }
    time_t started = time(NULL);
    check_plugin_bound(&cfg);
    lucidd_log("hand-back watchdog: heartbeat %s, bound %.0f s, partitions %s and %s",
               cfg.heartbeat, cfg.after_s, cfg.main_partition, cfg.profiling_partition);
    int silent = 0;
    while (!handback_stop) {
        time_t now = time(NULL), beat = heartbeat_time(cfg.heartbeat);
        /* No heartbeat yet: lucidd silent since the watchdog itself started. */
        time_t since = beat ? beat : started;
        if ((double)(now - since) > cfg.after_s) {
            if (!silent)
                lucidd_log("hand-back: lucidd silent for %lld s (%s): handing its jobs to Slurm",
                           (long long)(now - since), cfg.heartbeat);
            long n = hand_back_all(&cfg, since);
            if (n > 0)
                lucidd_log("hand-back: %ld jobs handed back", n);
            silent = n >= 0 || silent; /* retried each poll until Slurm answers */
        } else if (silent) {
            lucidd_log("hand-back: lucidd's heartbeat is fresh again; watching");
            silent = 0;
        }
        struct timespec pause = {.tv_sec = cfg.poll_ms / 1000,
                                 .tv_nsec = (long)(cfg.poll_ms % 1000) * 1000000L};
        nanosleep(&pause, NULL);
    }
    lucidd_log("hand-back watchdog stopping");
    slurm_io_fini();
    return 0;
}
