/* main.c — `lucid <verb>`: dispatches to one file per verb through a table. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lucid/csv.h"

static const cli_command commands[] = {
    {"simulate", cmd_simulate, "run policies over a trace (trace-driven, event-driven)"},
    {"trace", cmd_trace, "trace tools: `lucid trace synth`, `lucid trace import` (public traces, sacct)"},
    {"bounds", cmd_bounds, "floors on the average JCT no schedule can beat on a trace"},
    {"model", cmd_model, "train, apply, explain and evaluate the interpretable models"},
    {"queue", cmd_queue, "jobs under the live scheduler (lucidd) and why they wait"},
    {"status", cmd_status, "lucidd's profiler, packing switch, metrics backend, models"},
    {"report", cmd_report, "the paper's tables and figures from simulate's outputs, as HTML + SVG"},
    {"explain", cmd_explain_job, "why a job of a simulation waited, started, was packed"},
    {"tune", cmd_tune, "search Lucid's knobs by simulation; write the tuned experiment"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: lucid <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n`lucid <command> --help` describes each command.\n");
}

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("lucid: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
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

int cli_int(const char *option, const char *value, int64_t *out)
{
    if (lucid_parse_i64(value, out) < 0) {
        cli_fail("option %s: '%s' is not an integer", option, value);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "lucid: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
