/* main.c — `lucid <verb>`: dispatches to one file per verb through a table. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "lucid/csv.h"

static const cli_command commands[] = {
    {"simulate", cmd_simulate, "run policies over a trace (trace-driven, event-driven)"},
    {"trace", cmd_trace, "trace tools: `lucid trace synth`, `lucid trace import` (public traces, sacct)"},
    {"bounds", cmd_bounds, "floors on the average JCT no schedule can beat on a trace"},
    {"model", cmd_model, "train, apply, explain and evaluate the interpretable models"},
    {"queue", cmd_queue, "jobs under the live scheduler (lucidd) and why they wait"},
    {"release", cmd_release, "lift your own hold (sbatch -H) of a job lucidd manages"},
    {"status", cmd_status, "lucidd's profiler, packing switch, metrics backend, models"},
    {"report", cmd_report, "the paper's tables and figures from simulate's outputs, as HTML + SVG"},
    {"explain", cmd_explain_job, "why a job of a simulation waited, started, was packed"},
    {"tune", cmd_tune, "search Lucid's knobs by simulation; write the tuned experiment"},
    {"whatif", cmd_whatif, "a site's history replayed (Slurm's twin), then under Lucid and the others"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: lucid <command> [options]\n"
                 "       lucid help [COMMAND]   lucid --version\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`lucid help COMMAND` or `lucid COMMAND --help` describes each command;\n"
                 "`man lucid-COMMAND` once installed.  Exit status: 0 success, 1 failure,\n"
                 "2 usage error.\n");
}

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

static void complain(const char *fmt, va_list ap)
{
    fputs("lucid: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

int cli_usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    complain(fmt, ap);
    va_end(ap);
    return 2;
}

/* `lucid help [COMMAND [SUBCOMMAND]]`: the command's own --help, so the two
 * never drift apart (model's and trace's usage covers their sub-commands). */
static int help(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return 0;
    }
    const cli_command *c = find_command(argv[1]);
    if (!c)
        return cli_usage_error("help: unknown command '%s' (see lucid --help)", argv[1]);
    char *args[] = {argv[1], "--help", NULL};
    return c->run(2, args);
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    complain(fmt, ap);
    va_end(ap);
    return 1;
}

/* Where the bundled data is looked for, in order (see cli.h).  The build
 * tree's own `lucid` also reads the source tree's data/, an installed one
 * never does: an install is complete without the sources. */
static int data_dirs(const char *dirs[3], char exe_dir[PATH_MAX])
{
    int n = 0;
    const char *env = getenv("LUCID_DATA_DIR");
    if (env && *env)
        dirs[n++] = env;
    ssize_t len = readlink("/proc/self/exe", exe_dir, PATH_MAX - 1);
    if (len > 0) {
        exe_dir[len] = '\0';
        char *slash = strrchr(exe_dir, '/');
        if (slash)
            *slash = '\0';
        char build_dir[PATH_MAX];
        if (realpath(LUCID_BUILD_BINDIR, build_dir) && strcmp(exe_dir, build_dir) == 0) {
            dirs[n++] = LUCID_SOURCE_DIR;
            return n;
        }
        /* Relative to the program, so a relocated install (DESTDIR,
         * `dpkg -x`, another --prefix) finds its own copy. */
        size_t used = strlen(exe_dir);
        snprintf(exe_dir + used, PATH_MAX - used, "/%s", LUCID_DATADIR_FROM_BINDIR);
        dirs[n++] = exe_dir;
    }
    dirs[n++] = LUCID_DATADIR;
    return n;
}

int cli_data_file(const char *name, char *path, size_t size)
{
    const char *dirs[3];
    char exe_dir[PATH_MAX];
    int n = data_dirs(dirs, exe_dir);
    for (int i = 0; i < n; i++) {
        snprintf(path, size, "%s/%s", dirs[i], name);
        if (access(path, R_OK) == 0)
            return 0;
    }
    int used = snprintf(path, size, "%s not found in", name);
    for (int i = 0; i < n && used > 0 && (size_t)used < size; i++)
        used += snprintf(path + used, size - (size_t)used, "%s %s", i ? "," : "", dirs[i]);
    return -1;
}

int cli_option(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        cli_fail("option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* Decimal digits with an optional sign, nothing else: lucid_parse_i64
 * (for trace files) also takes "1e3" and, through strtod, "0x10"; an
 * option such as --budget 0x10 or --seed 1e3 must not mean something the
 * user did not write. */
int cli_int(const char *option, const char *value, int64_t *out)
{
    const char *digits = value + (*value == '-' || *value == '+');
    char *end = NULL;
    errno = 0;
    long long v = *digits >= '0' && *digits <= '9' ? strtoll(value, &end, 10) : 0;
    if (!end || *end || errno) {
        cli_fail("option %s: '%s' is not an integer (decimal digits only)", option, value);
        return -1;
    }
    *out = (int64_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || cli_is_help(argv[1])) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("lucid %s\n", LUCID_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "help") == 0)
        return help(argc - 1, argv + 1);
    const cli_command *c = find_command(argv[1]);
    if (c)
        return c->run(argc - 1, argv + 1);
    return cli_usage_error("unknown command '%s' (see lucid --help)", argv[1]);
}

static double seconds_since(const struct timespec *t)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t->tv_sec) + 1e-9 * (double)(now.tv_nsec - t->tv_nsec);
}

void cli_progress_start(cli_progress *p, const char *what)
{
    memset(p, 0, sizeof *p);
    clock_gettime(CLOCK_MONOTONIC, &p->start);
    p->last = p->start;
    p->last.tv_sec -= 10; /* the first line may come at 2 s */
    p->tty = isatty(2);
    p->what = what;
}

void cli_progress_show(void *user, int64_t done, int64_t total)
{
    cli_progress *p = user;
    if (seconds_since(&p->start) < 2 || seconds_since(&p->last) < (p->tty ? 0.1 : 5))
        return;
    clock_gettime(CLOCK_MONOTONIC, &p->last);
    fprintf(stderr, "%s%s: %lld of %lld jobs (%.0f%%)%s", p->tty ? "\r" : "", p->what,
            (long long)done, (long long)total,
            total > 0 ? 100.0 * (double)done / (double)total : 100.0, p->tty ? "" : "\n");
    fflush(stderr);
    p->shown = 1;
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown && p->tty)
        fputc('\n', stderr);
}
