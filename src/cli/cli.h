/* cli.h — what the `lucid` verbs share: the command table and option helpers.
 * Each verb lives in its own file as `int cmd_<verb>(int argc, char **argv)`
 * returning the process exit status. */
#ifndef LUCID_CLI_H
#define LUCID_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <time.h>

#include "lucid/experiment.h"
#include "lucid/online.h"
#include "lucid/sim.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

/* A run's MANIFEST says which definition its queue columns follow
 * (queue_definition, docs/semantics.md): waiting only (the reference's
 * accounting), or all time from submission to the start of the run that
 * completes with discarded work included (comparable across policies). */
#define CLI_QUEUE_WAITS_ONLY "waits_only"
#define CLI_QUEUE_COMPARABLE "comparable"

int cmd_simulate(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_explain_job(int argc, char **argv); /* `lucid explain` */
int cmd_queue(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_whatif(int argc, char **argv); /* `lucid whatif` */
int cmd_bounds(int argc, char **argv);

/* Prints "lucid: <message>" to stderr and returns 1 (for `return cli_fail(...)`). */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Like cli_fail for a usage error: prints "lucid: <message>", returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 when arg asks for help: "--help" or "-h" (every verb and sub-verb). */
int cli_is_help(const char *arg);

/* For "--name VALUE" and "--name=VALUE": if argv[*i] is option `name`, stores
 * its value, advances *i and returns 1; returns 0 if it is another argument;
 * -1 (after printing) if the value is missing. */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);
/* Parses an integer option value or prints an error naming the option. */
int cli_int(const char *option, const char *value, int64_t *out);

/* The bundled file NAME (e.g. "data/venus-sept/trace.csv") into path: from
 * $LUCID_DATA_DIR, else the installed data directory beside the program
 * (../share/lucid from its bindir), else the configured LUCID_DATADIR; the
 * build tree's program reads the source tree (same layout: data/, examples/).  -1 when absent, with
 * path holding "NAME not found in DIR, DIR" for the message. */
int cli_data_file(const char *name, char *path, size_t size);

/* The live verbs' client of lucidd's socket: --socket value, else
 * $LUCID_SOCKET, else /run/lucid/lucidd.sock. */
const char *cli_lucidd_socket(const char *option_value);
/* Sends one JSON request; returns the reply (a jansson json_t *, caller
 * decrefs) or NULL after printing why.  Declared opaque to keep jansson out
 * of every verb. */
struct json_t *cli_lucidd_request(const char *socket_path, const char *request);

/* `lucid queue`'s table (cmd_queue.c).  Filters are comma-separated lists,
 * NULL for all. */
typedef struct cli_queue_filter {
    const char *users, *jobs, *phases;
} cli_queue_filter;
/* Prints lucidd's "jobs" array in a squeue-style format (%i %P %j %u %T %b
 * %M %D %N %Q %e %r %R, '.' right-justifies, a width pads and truncates);
 * now (epoch seconds) for ELAPSED.  0, or 2 after printing for a bad format. */
int cli_queue_print(FILE *out, struct json_t *jobs, const cli_queue_filter *filter,
                    const char *format, int header, long long now);
/* lucid's priority (lower first) as shown, higher first: 10^9 - 10^8 log10(1 + p). */
long long cli_queue_display_priority(double priority);

/* Progress of long work on stderr once it has taken 2 s: redrawn in place
 * at most ten times a second on a terminal, otherwise one line every 5 s
 * (so a pipe or a log sees it too).  One per run; safe to use one per
 * thread. */
typedef struct cli_progress {
    struct timespec start, last;
    int tty, shown;
    const char *what; /* "simulating", "tune: online run" */
} cli_progress;
void cli_progress_start(cli_progress *p, const char *what);
/* A lucid_progress_fn: `user` is the cli_progress. */
void cli_progress_show(void *user, int64_t done, int64_t total);
/* Ends a redrawn line. */
void cli_progress_end(cli_progress *p);

/* ---- experiment_run.c: an experiment turned into a simulation ---- */

/* The trace, its side files and the simulator's inputs pointing into them
 * (so a cli_run is filled in place and never copied). */
typedef struct cli_run {
    lucid_vcs vcs;
    lucid_trace trace;
    double *qssf_est, *lucid_est;
    lucid_sharing sharing;
    lucid_pairs pairs;
    lucid_forecast forecast;
    int32_t *nodes_from;
    lucid_online_config online; /* [lucid] models = online */
    /* QSSF has no [qssf] estimates and Lucid's models run online: QSSF
     * orders by the estimates of Lucid's online run (the same learned
     * duration model), so Lucid runs first (cli_run_qssf_from_lucid). */
    int qssf_from_lucid;
    lucid_sim_inputs in;
    /* cli_run_load(hash_inputs = 1): the inputs' XXH64 for the MANIFEST
     * (lucid_experiment_hash_inputs), when all could be read. */
    uint64_t input_hash[LUCID_EXP_MAX_INPUTS];
    int inputs_hashed;
} cli_run;

/* QSSF without estimates of its own in a run where Lucid's models are
 * online (d->qssf_from_lucid): it orders by the estimates Lucid's run
 * used, each made with the duration model of its time from jobs ended
 * before it; a job Lucid never estimated (finished in the profiler) gets
 * QSSF's default for a missing estimate (spec: < 0 counts as 1000 s).
 * 0, or -1 out of memory. */
int cli_run_take_estimates(cli_run *d, const lucid_sim_result *lucid);
/* The same from a Lucid run made here (lucid explain of QSSF); 1 after
 * printing. */
int cli_run_estimates_from_lucid(cli_run *d, const lucid_sim_config *cfg);

/* The experiment's policies ("all" or none: every policy); 1 after printing. */
int cli_run_policies(const lucid_experiment *exp, const lucid_policy_ops **policies, int *n);
/* The simulator's configuration from the experiment (all but what needs the
 * VCs, which cli_run_load adds); 1 after printing. */
int cli_run_config(const lucid_experiment *exp, lucid_sim_config *cfg);
/* The [fifo]/[sjf]/[qssf]/[lucid] backfill keys into cfg; 1 after printing. */
int cli_run_backfill(const lucid_experiment *exp, lucid_sim_config *cfg);
/* The [slurm] priority keys into the slurm policy's weights (defaults where unset). */
void cli_run_slurm_priority(const lucid_experiment *exp, lucid_slurm_priority *p);
/* [simulate] eta: *on = 0 for off, else 1 (unset: 1; simulate turns it off
 * for traces of more than 50,000 jobs); 1 after printing. */
int cli_run_eta(const lucid_experiment *exp, int *on);
/* [simulate] eta_hourly: *on = 1 for on (unset: off). */
int cli_run_eta_hourly(const lucid_experiment *exp, int *on);
/* [simulate] stream: -1 auto, 0 off, 1 on (policies one after another). */
int cli_run_stream(const lucid_experiment *exp, int *mode);
/* Just Lucid's knobs ([lucid] profiler_*, priority_ratio, score_sum, ...). */
void cli_run_lucid_knobs(const lucid_experiment *exp, lucid_sim_lucid_config *lc);
/* Loads what the policies need, resolves borrow_vc and profiler_nodes_from
 * into cfg and fills d->in; with hash_inputs, also d->input_hash (for a
 * MANIFEST).  The side files and hashes are read on a second thread when
 * [simulate] threads > 1.  1 after printing (free d either way). */
int cli_run_load(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                 int npolicies, cli_run *d, lucid_sim_config *cfg, int hash_inputs);
void cli_run_free(cli_run *d);
/* The offset from the trace's seconds to Unix time: 0 when they are
 * calendar seconds already, else from the first job's submit_datetime in
 * the trace file at `path`; -1 when it cannot be known. */
int cli_run_calendar(const char *path, const lucid_trace *trace, int64_t *offset);

#endif
