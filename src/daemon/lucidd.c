/* lucidd.c — the live Lucid scheduler on Slurm: options, startup and its
 * two threads.  Startup order matters for recovery: the lock on the state
 * (one lucidd per state file), the state store (a corrupted file stops the
 * start with one line), then Slurm, then the reconciliation of
 * unacknowledged decisions, and only then ticking.  The decision loop runs
 * on its own thread (hub.c); this thread serves clients (server.c).
 * SIGTERM/SIGINT stop both cleanly; SIGKILL is survived by design. */
#define _DEFAULT_SOURCE /* vsyslog */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "handback.h"
#include "lucid/backfill.h"
#include "lucid/util.h"
#include "models.h"
#include "slurm_io.h"

static volatile sig_atomic_t stop_requested;
static int slurm_started; /* slurm_io_init done: slurm_io_fini at exit */

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* Where log lines go (--log), set once in main before any thread starts. */
static int log_targets = LUCIDD_LOG_STDERR;

static void log_line(int priority, const char *fmt, va_list ap)
{
    if (log_targets & LUCIDD_LOG_SYSLOG) {
        va_list copy;
        va_copy(copy, ap);
        vsyslog(priority, fmt, copy);
        va_end(copy);
    }
    if (log_targets & LUCIDD_LOG_STDERR) {
        char stamp[32];
        lucid_time_format((int64_t)time(NULL), stamp, sizeof stamp);
        fprintf(stderr, "%s lucidd: ", stamp);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
}

void lucidd_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(LOG_INFO, fmt, ap);
    va_end(ap);
}

void lucidd_log_level(int priority, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line(priority, fmt, ap);
    va_end(ap);
}

/* systemd sets $JOURNAL_STREAM to "DEV:INODE" of the stream it connects
 * stdout/stderr to (systemd.exec(5)); when that is our stderr, syslog()
 * reaches the same journal, and `--log both` would log every line twice. */
static int stderr_is_journal(void)
{
    const char *stream = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;
    return stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
           (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* A reason lucidd cannot start: one line on stderr (what the caller, or
 * systemctl status, shows) and, when syslog is on, at LOG_ERR there. */
static void start_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void start_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("lucidd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (log_targets & LUCIDD_LOG_SYSLOG) {
        va_start(ap, fmt);
        vsyslog(LOG_ERR, fmt, ap);
        va_end(ap);
    }
}

static const char usage_text[] =
    "usage: lucidd --state FILE --socket PATH [options]\n"
    "       lucidd --config FILE [options]\n"
    "  --config FILE           `key = value` lines, keys = these long options without --\n"
    "                          (e.g. profile-limit = 300); flags given here override it\n"
    "  --state FILE            SQLite state database (WAL); created if absent\n"
    "  --socket PATH           local UNIX socket for `lucid queue/status/explain`\n"
    "  --socket-mode MODE      chmod the socket to MODE (octal, e.g. 0660; default: umask)\n"
    "  --socket-group GROUP    chgrp the socket to GROUP (with --socket-mode 0660: only\n"
    "                          lucidd's user and GROUP may connect)\n"
    "  --admin-group GROUP     members see every job in queue/explain; other users see\n"
    "                          their own (root and lucidd's own user see all; default none)\n"
    "  --metrics-port N        Prometheus /metrics on --metrics-bind:N (default off)\n"
    "  --metrics-bind ADDR     the address /metrics listens on (default 127.0.0.1; e.g.\n"
    "                          0.0.0.0 or :: open it to the network: no authentication)\n"
    "  --log syslog|stderr|both  where log lines go (default both; syslog: facility daemon)\n"
    "  --main-partition P      default main\n"
    "  --profiling-partition P default profiling\n"
    "  --profile-limit S       profiling time limit in seconds (default 200)\n"
    "  --gpu-limit N           largest job that is profiled (default 8)\n"
    "  --gpu-memory-mib M      one GPU's memory, for packing (default 24576)\n"
    "  --score-sum X           pack two jobs only if their sharing scores sum to <= X (default 2)\n"
    "  --priority-ratio X      ... and the newcomer's priority is <= X times the partner's\n"
    "                          (default 2; `lucid tune` writes tuned values of both)\n"
    "  --packing auto|on|off   packing switch (default auto)\n"
    "  --share-gres NAME|none  count-only GRES a packed job asks on nodes that have it, so\n"
    "                          Slurm accounts its GPUs (default lucidshare; docs/deploy.md)\n"
    "  --backfill none|easy|conservative  reservations for jobs that do not fit (default\n"
    "                          none: strict priority order); see docs/live.md\n"
    "  --backfill-margin X     a job's estimate is stretched by X when it is planned (default 1.2)\n"
    "  --backfill-window S     a job gets a reservation only if its earliest start is at most\n"
    "                          S seconds away; once given it is kept (default 0: no limit)\n"
    "  --backfill-min-gpus N   only jobs of at least N GPUs get reservations (default 0: all)\n"
    "  --tick-ms N             decision period, at most (default 500)\n"
    "  --tick-min-ms N         a cheap tick is followed after 20 x its own time, but not\n"
    "                          sooner than N ms (default 100; N >= --tick-ms: a fixed period)\n"
    "  --profiler-bypass on|off  a job the busy profiler cannot start goes unprofiled to\n"
    "                          idle main GPUs (default on)\n"
    "  --profiler-yield on|off  profiling never delays a main start: a job waiting for or\n"
    "                          in the profiler goes to main once main has GPUs for it\n"
    "                          before any job it outranks (default on)\n"
    "  --release-ahead on|off  the head of main's queue is released, unpinned, before GPUs\n"
    "                          free, so Slurm starts it the moment they do (default on)\n"
    "  --async-writes on|window|off  lucid's starts, releases ahead and moves to main\n"
    "                          are written on a thread of its own, not the tick's: all\n"
    "                          (on, the default), or only those of a job Slurm is giving\n"
    "                          its accounting record (window)\n"
    "  --async-reads on|off    Slurm's jobs and nodes are read on a thread of their own:\n"
    "                          a tick decides on the newest listing, never waiting for\n"
    "                          slurmctld's (default off)\n"
    "  --fairshare-weight W    the site's fair share in lucid's order: priority x\n"
    "                          10^(W x (1/2 - F)), F = sshare's FairShare (default -1:\n"
    "                          2 where Slurm's PriorityWeightFairshare > 0, else 0; 0: off)\n"
    "  --qos-weight W          the job's QOS priority in lucid's order: x 10^(-W x Q), Q =\n"
    "                          QOS priority / the site's largest (default -1: 2 where\n"
    "                          Slurm's PriorityWeightQOS > 0, else 0; 0: off)\n"
    "  --age-weight A          a week's wait halves a job's order value A times (default 0)\n"
    "  --release-timeout S     a job lucid released that Slurm has not started within S\n"
    "                          seconds is taken back and placed elsewhere (default 60)\n"
    "  --default-estimate S    duration estimate without a time limit or model (default 3600)\n"
    "  --retrain-period S      seconds between trainings of the duration model (default 604800)\n"
    "  --min-history N         finished jobs before the first duration model (default 100)\n"
    "  --model-history N       finished jobs the duration model trains on, the newest\n"
    "                          (default 50000)\n"
    "  --forget-ended S        an ended job Slurm no longer lists leaves lucidd's memory S\n"
    "                          seconds after its end; its record stays in the state store\n"
    "                          (default 3600)\n"
    "  --keep-history DAYS     the state store deletes jobs that ended more than DAYS days\n"
    "                          ago, with their phases, profiles, estimates and decisions\n"
    "                          (default 365; 0 keeps everything)\n"
    "  --sharing-model FILE    sharing scores from this tree (`lucid model train --kind sharing`)\n"
    "  --metrics-test-dir DIR  read GPU samples from DIR/<job>.gpu (test backend)\n"
    "  --heartbeat FILE        rewrite FILE every tick (\"pid=P time=T intake=MAXID\"): the\n"
    "                          job_submit plugin and the hand-back watchdog read it\n"
    "  --help, --version\n"
    "lucidd --hand-back-after S --heartbeat FILE [...]: the fail-open watchdog instead\n"
    "Slurm is found through $SLURM_CONF.  Exit status: 0 after a clean stop (SIGTERM),\n"
    "1 when it cannot start (configuration file, state, Slurm, socket), 2 for bad options.\n";

/* Option errors name where the value came from: `where` is "" for the
 * command line, "FILE:LINE: " for a --config file. */
static int parse_number(const char *where, const char *option, const char *value, double min,
                        double *out)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (end == value || *end || errno || v < min) {
        fprintf(stderr, "lucidd: %s%s: '%s' is not a number >= %g\n", where, option, value, min);
        return -1;
    }
    *out = v;
    return 0;
}

/* A whole number from 0 to max (the simulator's ranges for the same keys,
 * backfill.h); 0, or -1 after printing. */
static int parse_whole(const char *where, const char *option, const char *value, long long max,
                       const char *unit, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    if (end == value || *end || errno || v < 0 || v > max) {
        fprintf(stderr, "lucidd: %s%s: '%s' is not a whole number%s from 0 to %lld\n", where,
                option, value, unit, max);
        return -1;
    }
    *out = v;
    return 0;
}

/* One option (`--name`) and its value into cfg; 0, or -1 after printing.
 * value must outlive cfg. */
static int set_option(lucidd_config *cfg, const char *where, const char *opt, const char *value)
{
    double number = 0;
    if (strcmp(opt, "--state") == 0)
        cfg->state_path = value;
    else if (strcmp(opt, "--socket") == 0)
        cfg->socket_path = value;
    else if (strcmp(opt, "--socket-mode") == 0) {
        char *end;
        errno = 0;
        long mode = strtol(value, &end, 8);
        if (end == value || *end || errno || mode < 0 || mode > 0777) {
            fprintf(stderr, "lucidd: %s--socket-mode: '%s' is not an octal mode 0-0777\n", where,
                    value);
            return -1;
        }
        cfg->socket_mode = (int)mode;
    } else if (strcmp(opt, "--socket-group") == 0 || strcmp(opt, "--admin-group") == 0) {
        struct group *gr = getgrnam(value);
        if (!gr) {
            fprintf(stderr, "lucidd: %s%s: no group '%s'\n", where, opt, value);
            return -1;
        }
        if (opt[2] == 's') {
            cfg->socket_group = value;
            cfg->socket_gid = (uint32_t)gr->gr_gid;
        } else {
            cfg->admin_group = value;
            cfg->admin_gid = (uint32_t)gr->gr_gid;
        }
    } else if (strcmp(opt, "--metrics-bind") == 0) {
        unsigned char addr[sizeof(struct in6_addr)];
        if (inet_pton(AF_INET, value, addr) != 1 && inet_pton(AF_INET6, value, addr) != 1) {
            fprintf(stderr, "lucidd: %s--metrics-bind: '%s' is not an IPv4 or IPv6 address\n",
                    where, value);
            return -1;
        }
        cfg->metrics_bind = value;
    } else if (strcmp(opt, "--log") == 0) {
        if (strcmp(value, "syslog") && strcmp(value, "stderr") && strcmp(value, "both")) {
            fprintf(stderr, "lucidd: %s--log: '%s' is not syslog, stderr or both\n", where, value);
            return -1;
        }
        cfg->log_targets = strcmp(value, "syslog") == 0   ? LUCIDD_LOG_SYSLOG
                           : strcmp(value, "stderr") == 0 ? LUCIDD_LOG_STDERR
                                                          : LUCIDD_LOG_STDERR | LUCIDD_LOG_SYSLOG;
    } else if (strcmp(opt, "--main-partition") == 0)
        cfg->main_partition = value;
    else if (strcmp(opt, "--profiling-partition") == 0)
        cfg->profiling_partition = value;
    else if (strcmp(opt, "--share-gres") == 0) {
        if (strcmp(value, "none") != 0 && (!value[0] || strlen(value) > 30 ||
                                            strspn(value, "abcdefghijklmnopqrstuvwxyz"
                                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") !=
                                                strlen(value))) {
            fprintf(stderr, "lucidd: %s--share-gres: '%s' is not a GRES name (letters, digits, _) "
                            "or none\n",
                    where, value);
            return -1;
        }
        cfg->share_gres = strcmp(value, "none") == 0 ? "" : value;
    }
    else if (strcmp(opt, "--metrics-test-dir") == 0)
        cfg->metrics_test_dir = value;
    else if (strcmp(opt, "--sharing-model") == 0)
        cfg->sharing_model = value;
    else if (strcmp(opt, "--heartbeat") == 0)
        cfg->heartbeat_path = value;
    else if (strcmp(opt, "--packing") == 0) {
        if (strcmp(value, "auto") && strcmp(value, "on") && strcmp(value, "off")) {
            fprintf(stderr, "lucidd: %s--packing: '%s' is not auto, on or off\n", where, value);
            return -1;
        }
        cfg->packing_mode = strcmp(value, "auto") == 0 ? -1 : strcmp(value, "on") == 0;
    } else if (strcmp(opt, "--backfill") == 0) {
        int mode = lucid_backfill_mode_parse(value);
        if (mode < 0) {
            fprintf(stderr, "lucidd: %s--backfill: '%s' is not none, easy or conservative\n",
                    where, value);
            return -1;
        }
        cfg->backfill = mode;
    } else if (strcmp(opt, "--backfill-margin") == 0) {
        if (parse_number(where, opt, value, 1, &cfg->backfill_margin) < 0 ||
            cfg->backfill_margin > 100) {
            if (cfg->backfill_margin > 100)
                fprintf(stderr, "lucidd: %s--backfill-margin: '%s' is more than 100\n", where,
                        value);
            return -1;
        }
    } else if (strcmp(opt, "--backfill-window") == 0) {
        long long v;
        if (parse_whole(where, opt, value, LUCID_BACKFILL_WINDOW_MAX, " of seconds", &v) < 0)
            return -1;
        cfg->backfill_window = v;
    } else if (strcmp(opt, "--backfill-min-gpus") == 0) {
        long long v;
        if (parse_whole(where, opt, value, LUCID_BACKFILL_MIN_GPUS_MAX, "", &v) < 0)
            return -1;
        cfg->backfill_min_gpus = (int)v;
    } else if (strcmp(opt, "--metrics-port") == 0) {
        if (parse_number(where, opt, value, 0, &number) < 0 || number > 65535)
            return -1;
        cfg->metrics_port = (int)number;
    } else if (strcmp(opt, "--profiler-bypass") == 0 || strcmp(opt, "--profiler-yield") == 0 ||
               strcmp(opt, "--release-ahead") == 0 || strcmp(opt, "--async-reads") == 0) {
        if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) {
            fprintf(stderr, "lucidd: %s%s: '%s' is not on or off\n", where, opt, value);
            return -1;
        }
        *(strcmp(opt, "--profiler-bypass") == 0  ? &cfg->profiler_bypass
          : strcmp(opt, "--profiler-yield") == 0 ? &cfg->profiler_yield
          : strcmp(opt, "--async-reads") == 0    ? &cfg->async_reads
                                                 : &cfg->release_ahead) = strcmp(value, "on") == 0;
    } else if (strcmp(opt, "--async-writes") == 0) {
        if (strcmp(value, "on") == 0)
            cfg->async_writes = LUCIDD_WRITES_ALL;
        else if (strcmp(value, "window") == 0)
            cfg->async_writes = LUCIDD_WRITES_WINDOW;
        else if (strcmp(value, "off") == 0)
            cfg->async_writes = LUCIDD_WRITES_OFF;
        else {
            fprintf(stderr, "lucidd: %s%s: '%s' is not on, window or off\n", where, opt, value);
            return -1;
        }
    } else if (strcmp(opt, "--fairshare-weight") == 0) {
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        if (end == value || *end || errno || !(v >= 0 || v == -1)) {
            fprintf(stderr, "lucidd: %s%s: '%s' is not -1 (Slurm's weight says) or a number >= 0\n",
                    where, opt, value);
            return -1;
        }
        cfg->fairshare_weight = v;
    } else if (strcmp(opt, "--qos-weight") == 0) {
        char *end;
        errno = 0;
        double v = strtod(value, &end);
        if (end == value || *end || errno || !((v >= 0 && v <= 10) || v == -1)) {
            fprintf(stderr, "lucidd: %s%s: '%s' is not -1 (Slurm's weight says) or a number 0..10\n",
                    where, opt, value);
            return -1;
        }
        cfg->qos_weight = v;
    } else if (strcmp(opt, "--age-weight") == 0) {
        if (parse_number(where, opt, value, 0, &cfg->age_weight) < 0)
            return -1;
    } else if (strcmp(opt, "--release-timeout") == 0) {
        if (parse_number(where, opt, value, 1, &cfg->release_timeout_s) < 0)
            return -1;
    } else if (strcmp(opt, "--profile-limit") == 0) {
        if (parse_number(where, opt, value, 0.1, &cfg->profile_limit_s) < 0)
            return -1;
    } else if (strcmp(opt, "--gpu-limit") == 0) {
        if (parse_number(where, opt, value, 0, &number) < 0)
            return -1;
        cfg->gpu_limit = (int)number;
    } else if (strcmp(opt, "--gpu-memory-mib") == 0) {
        if (parse_number(where, opt, value, 1, &cfg->gpu_memory_mib) < 0)
            return -1;
    } else if (strcmp(opt, "--score-sum") == 0) {
        if (parse_number(where, opt, value, 0, &number) < 0)
            return -1;
        if (number != (int)number || number > 4) {
            fprintf(stderr, "lucidd: %s--score-sum: '%s' is not a whole number from 0 to 4\n",
                    where, value);
            return -1;
        }
        cfg->score_sum = (int)number;
    } else if (strcmp(opt, "--priority-ratio") == 0) {
        if (parse_number(where, opt, value, 1, &cfg->priority_ratio) < 0)
            return -1;
    } else if (strcmp(opt, "--tick-ms") == 0 || strcmp(opt, "--tick-min-ms") == 0) {
        if (parse_number(where, opt, value, 10, &number) < 0)
            return -1;
        if (number > 3600000) {
            fprintf(stderr, "lucidd: %s%s: '%s' is more than an hour (3600000 ms)\n", where, opt,
                    value);
            return -1;
        }
        *(strcmp(opt, "--tick-ms") == 0 ? &cfg->tick_ms : &cfg->tick_min_ms) = (int)number;
    } else if (strcmp(opt, "--default-estimate") == 0) {
        if (parse_number(where, opt, value, 1, &cfg->default_estimate_s) < 0)
            return -1;
    } else if (strcmp(opt, "--retrain-period") == 0) {
        if (parse_number(where, opt, value, 1, &cfg->retrain_period_s) < 0)
            return -1;
    } else if (strcmp(opt, "--min-history") == 0) {
        if (parse_number(where, opt, value, 1, &number) < 0 || number > 1e9)
            return -1;
        cfg->min_history = (int)number;
    } else if (strcmp(opt, "--model-history") == 0) {
        if (parse_number(where, opt, value, 1, &number) < 0 || number > 1e9)
            return -1;
        cfg->model_history = (size_t)number;
    } else if (strcmp(opt, "--keep-history") == 0) {
        if (parse_number(where, opt, value, 0, &number) < 0)
            return -1;
        cfg->keep_history_s = number * 86400.0;
    } else if (strcmp(opt, "--forget-ended") == 0) {
        if (parse_number(where, opt, value, 0, &cfg->forget_ended_s) < 0)
            return -1;
    } else {
        if (*where)
            fprintf(stderr, "lucidd: %sunknown key '%s' (keys are lucidd's long options "
                            "without --)\n", where, opt + 2);
        else
            fprintf(stderr, "lucidd: unknown option %s (see lucidd --help)\n", opt);
        return -1;
    }
    return 0;
}

/* --config FILE: `key = value` lines (key: a long option without "--"),
 * '#' or ';' at the start of a line or after a blank starts a comment.  The
 * values point into the file's text, which stays for the daemon's life.
 * 0, or -1 after printing "lucidd: FILE:LINE: ...". */
static int read_config(const char *path, lucidd_config *cfg)
{
    static char *text; /* the values point into it: kept to exit */
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "lucidd: --config %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    size_t size = 0, cap = 0;
    for (;;) {
        if (size + 4096 + 1 > cap) {
            char *grown = realloc(text, cap += 65536);
            if (!grown) {
                fclose(f);
                fprintf(stderr, "lucidd: --config %s: out of memory\n", path);
                return -1;
            }
            text = grown;
        }
        size_t n = fread(text + size, 1, cap - size - 1, f);
        if (n == 0)
            break;
        size += n;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed || !text) {
        fprintf(stderr, "lucidd: --config %s: cannot read (a directory?)\n", path);
        return -1;
    }
    text[size] = '\0';
    if (strlen(text) != size) {
        fprintf(stderr, "lucidd: --config %s: not a text file (NUL byte)\n", path);
        return -1;
    }
    int lineno = 0;
    for (char *line = text, *next; line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        for (char *c = line; *c; c++)
            if ((*c == '#' || *c == ';') && (c == line || *(c - 1) == ' ' || *(c - 1) == '\t')) {
                *c = '\0';
                break;
            }
        char where[4200];
        snprintf(where, sizeof where, "%s:%d: ", path, lineno);
        char *key = line + strspn(line, " \t\r");
        if (!*key)
            continue;
        char *eq = strchr(key, '=');
        if (!eq) {
            fprintf(stderr, "lucidd: %sexpected key = value\n", where);
            return -1;
        }
        char *value = eq + 1 + strspn(eq + 1, " \t");
        for (char *e = eq; e > key && strchr(" \t", e[-1]); e--)
            e[-1] = '\0';
        *eq = '\0';
        for (char *e = value + strlen(value); e > value && strchr(" \t\r", e[-1]); e--)
            e[-1] = '\0';
        if (!*value) {
            fprintf(stderr, "lucidd: %s%s: no value\n", where, key);
            return -1;
        }
        char opt[128];
        if (strlen(key) > sizeof opt - 3 || strncmp(key, "--", 2) == 0 ||
            strcmp(key, "config") == 0) {
            fprintf(stderr, "lucidd: %sunknown key '%s'\n", where, key);
            return -1;
        }
        snprintf(opt, sizeof opt, "--%s", key);
        if (set_option(cfg, where, opt, value) < 0)
            return -1;
    }
    return 0;
}

/* Defaults, then --config FILE, then the other flags (which override it).
 * 0; 2 for bad usage; 1 for a configuration file that cannot be used. */
static int parse_args(int argc, char **argv, lucidd_config *cfg)
{
    *cfg = (lucidd_config){.main_partition = "main",
                           .share_gres = "lucidshare",
                           .profiling_partition = "profiling",
                           .profile_limit_s = 200,
                           .release_timeout_s = 60,
                           .profiler_bypass = 1,
                           .profiler_yield = 1,
                           .release_ahead = 1,
                           .async_writes = LUCIDD_WRITES_ALL,
                           .async_reads = 0,
                           .fairshare_weight = -1, /* auto: Slurm's own weight says */
                           .qos_weight = -1,       /* the same */
                           .gpu_limit = 8,
                           .gpu_memory_mib = 24576,
                           .score_sum = 2,
                           .priority_ratio = 2,
                           .packing_mode = -1,
                           .backfill_margin = 1.2,
                           .tick_ms = 500,
                           .tick_min_ms = 100,
                           .default_estimate_s = 3600,
                           .retrain_period_s = 604800,
                           .min_history = 100,
                           .forget_ended_s = 3600,
                           .keep_history_s = 365 * 86400.0,
                           .socket_mode = -1,
                           .metrics_bind = "127.0.0.1",
                           .log_targets = LUCIDD_LOG_STDERR | LUCIDD_LOG_SYSLOG};
    const char *config = NULL;
    for (int i = 1; i < argc; i += 2) { /* OPTION VALUE pairs */
        const char *opt = argv[i];
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            fputs(usage_text, stdout);
            exit(0);
        }
        if (strcmp(opt, "--version") == 0 || strcmp(opt, "-V") == 0) {
            printf("lucidd %s\n", LUCID_VERSION);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "lucidd: %s needs a value (or is unknown; see lucidd --help)\n", opt);
            return 2;
        }
        if (strcmp(opt, "--config") == 0) {
            if (config) {
                fprintf(stderr, "lucidd: --config given twice\n");
                return 2;
            }
            config = argv[i + 1];
        }
    }
    if (config && read_config(config, cfg) < 0)
        return 1;
    for (int i = 1; i + 1 < argc; i += 2)
        if (strcmp(argv[i], "--config") != 0 && set_option(cfg, "", argv[i], argv[i + 1]) < 0)
            return 2;
    if (!cfg->state_path || !cfg->socket_path) {
        fprintf(stderr, "lucidd: --state and --socket are required (see lucidd --help)\n");
        return 2;
    }
    return 0;
}

/* One lucidd per state file: an exclusive flock on STATE.lock, which holds
 * the owner's pid for the refusal line.  The lock goes with the process
 * (also on SIGKILL); the file stays, harmless. */
static int lock_state(const char *state_path)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.lock", state_path);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        start_error("state database %s: cannot open its lock file %s: %s", state_path,
                path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        char pid[32] = "";
        ssize_t n = errno == EWOULDBLOCK ? read(fd, pid, sizeof pid - 1) : -1;
        pid[n > 0 ? n : 0] = '\0';
        pid[strcspn(pid, "\n")] = '\0';
        if (n >= 0)
            start_error("state %s is in use by lucidd pid %s (lock %s)", state_path,
                    pid[0] ? pid : "unknown", path);
        else
            start_error("cannot lock %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) != len)
        lucidd_log_level(LOG_WARNING, "cannot write the pid into %s: %s", path, strerror(errno));
    return fd;
}

static void *engine_thread(void *arg)
{
    void **args = arg;
    lucidd_engine_loop(args[0], args[1]);
    return NULL;
}

/* The store, the GPU metrics, the models, the jobs, Slurm: -1 with `err`. */
static int open_engine(lucidd *d, lucid_error *err)
{
    d->state = lucid_state_open(d->cfg.state_path, err);
    if (!d->state)
        return -1;
    d->metrics = lucid_gpumetrics_open_auto(d->cfg.metrics_test_dir);
    if (!d->metrics)
        return lucid_error_set(err, "out of memory");
    lucidd_log("GPU metrics backend: %s", lucid_gpumetrics_describe(d->metrics));
    lucidd_models_config models = {.retrain_period_s = d->cfg.retrain_period_s,
                                   .min_history = (size_t)d->cfg.min_history,
                                   .bags = 8,
                                   .seed = 42,
                                   .sharing_model = d->cfg.sharing_model,
                                   .vc = d->cfg.main_partition,
                                   .history_max = d->cfg.model_history};
    d->models = lucidd_models_open(&models, d->state, (int64_t)time(NULL), err);
    if (!d->models)
        return -1;
    if (lucidd_models_warning(d->models)[0])
        lucidd_log_level(LOG_WARNING, "%s", lucidd_models_warning(d->models));
    lucidd_log("models: duration v%lld, sharing v%lld, forecast v%lld (lucid status says which)",
               (long long)lucidd_models_version(d->models, "duration"),
               (long long)lucidd_models_version(d->models, "sharing"),
               (long long)lucidd_models_version(d->models, "forecast"));
    if (engine_load(d, err) < 0 || slurm_io_init(err) < 0)
        return -1;
    slurm_started = 1;
    if (d->cfg.async_writes != LUCIDD_WRITES_OFF) {
        d->writer = lucidd_writer_new(1, err);
        if (!d->writer)
            return -1;
    }
    if (d->cfg.async_reads) {
        char partitions[256];
        snprintf(partitions, sizeof partitions, "%s,%s", d->cfg.main_partition,
                 d->cfg.profiling_partition);
        d->reader = lucidd_reader_new(partitions, d->cfg.share_gres, 1, err);
        if (!d->reader)
            return -1;
    }
    return 0;
}

/* The decision thread; the signals stay this thread's (it and the model
 * trainer it starts inherit them blocked). */
static int start_engine(lucidd *d, lucidd_hub *hub, pthread_t *thread)
{
    static void *args[2];
    args[0] = d;
    args[1] = hub;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int rc = pthread_create(thread, NULL, engine_thread, args);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        start_error("cannot start the decision thread: %s", strerror(rc));
    return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
    static lucidd d; /* large (latency ring): not on the stack */
    if (handback_wanted(argc, argv))
        return handback_main(argc, argv);
    int usage = parse_args(argc, argv, &d.cfg);
    if (usage != 0)
        return usage;
    log_targets = d.cfg.log_targets;
    if (log_targets == (LUCIDD_LOG_STDERR | LUCIDD_LOG_SYSLOG) && stderr_is_journal())
        log_targets = LUCIDD_LOG_SYSLOG; /* the journal gets each line once, with its priority */
    if (log_targets & LUCIDD_LOG_SYSLOG)
        openlog("lucidd", LOG_PID, LOG_DAEMON);
    signal(SIGPIPE, SIG_IGN);
    struct sigaction sa = {.sa_handler = on_signal}; /* no SA_RESTART: poll returns */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    d.started = time(NULL);
    engine_tune_malloc();
    int lock_fd = lock_state(d.cfg.state_path);
    if (lock_fd < 0)
        return 1;
    /* The socket before the store: a lucidd refused for the socket touches
     * no state. */
    lucid_error err = {{0}};
    lucidd_hub *hub = lucidd_hub_new(&err);
    lucidd_server *server = hub ? server_open(&d.cfg, hub, &err) : NULL;
    int status = 1;
    pthread_t engine;
    if (!server || open_engine(&d, &err) < 0) {
        start_error("%s", err.msg);
    } else {
        char metrics[96] = "off";
        if (d.cfg.metrics_port)
            snprintf(metrics, sizeof metrics, strchr(d.cfg.metrics_bind, ':') ? "[%s]:%d" : "%s:%d",
                     d.cfg.metrics_bind, d.cfg.metrics_port);
        lucidd_log("state %s: %zu jobs known; socket %s%s%s; metrics %s", d.cfg.state_path,
                   d.njobs, d.cfg.socket_path, d.cfg.socket_group ? " group " : "",
                   d.cfg.socket_group ? d.cfg.socket_group : "", metrics);
        /* Nothing is published before the first tick (lucidd_hub_publish):
         * the loaded jobs lack the estimates and reservations a decision
         * gives; clients hear "lucidd is starting" until it ends. */
        if (start_engine(&d, hub, &engine) == 0) {
            server_run(server, &stop_requested);
            lucidd_log("stopping");
            lucidd_hub_stop(hub);
            pthread_join(engine, NULL); /* after its tick in progress */
            status = 0;
        }
    }
    server_close(server);
    lucidd_hub_free(hub);
    engine_stop_io(&d); /* their decisions acknowledged before the store closes */
    if (slurm_started)
        slurm_io_fini();
    lucidd_models_close(d.models);
    lucid_gpumetrics_close(d.metrics);
    lucid_state_close(d.state);
    engine_free(&d);
    close(lock_fd);
    if (log_targets & LUCIDD_LOG_SYSLOG)
        closelog();
    return status;
}
