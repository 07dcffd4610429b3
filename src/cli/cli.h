/* cli.h — what the `lucid` verbs share: the command table and option helpers.
 * Each verb lives in its own file as `int cmd_<verb>(int argc, char **argv)`
 * returning the process exit status. */
#ifndef LUCID_CLI_H
#define LUCID_CLI_H

#include <stdint.h>

#include "lucid/experiment.h"
#include "lucid/online.h"
#include "lucid/sim.h"

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

int cmd_simulate(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_explain_job(int argc, char **argv); /* `lucid explain` */
int cmd_queue(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_bounds(int argc, char **argv);

/* Prints "lucid: <message>" to stderr and returns 1 (for `return cli_fail(...)`). */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* For "--name VALUE" and "--name=VALUE": if argv[*i] is option `name`, stores
 * its value, advances *i and returns 1; returns 0 if it is another argument;
 * -1 (after printing) if the value is missing. */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);
/* Parses an integer option value or prints an error naming the option. */
int cli_int(const char *option, const char *value, int64_t *out);

/* The live verbs' client of lucidd's socket: --socket value, else
 * $LUCID_SOCKET, else /run/lucid/lucidd.sock. */
const char *cli_lucidd_socket(const char *option_value);
/* Sends one JSON request; returns the reply (a jansson json_t *, caller
 * decrefs) or NULL after printing why.  Declared opaque to keep jansson out
 * of every verb. */
struct json_t *cli_lucidd_request(const char *socket_path, const char *request);

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
    lucid_sim_inputs in;
} cli_run;

/* The experiment's policies ("all" or none: every policy); 1 after printing. */
int cli_run_policies(const lucid_experiment *exp, const lucid_policy_ops **policies, int *n);
/* The simulator's configuration from the experiment (all but what needs the
 * VCs, which cli_run_load adds); 1 after printing. */
int cli_run_config(const lucid_experiment *exp, lucid_sim_config *cfg);
/* Just Lucid's knobs ([lucid] profiler_*, priority_ratio, score_sum, ...). */
void cli_run_lucid_knobs(const lucid_experiment *exp, lucid_sim_lucid_config *lc);
/* Loads what the policies need, resolves borrow_vc and profiler_nodes_from
 * into cfg and fills d->in; 1 after printing (free d either way). */
int cli_run_load(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                 int npolicies, cli_run *d, lucid_sim_config *cfg);
void cli_run_free(cli_run *d);

#endif
