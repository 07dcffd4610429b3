/* cmd_explain.c — `lucid explain OUTDIR JOB_ID [--policy NAME]`: why a job
 * of a simulation had its priority, waited, started where it did and was
 * (or was not) packed, by re-running the experiment saved in OUTDIR with an
 * observer on that job (lucid_explain_job).  `lucid explain JOB_ID` (no
 * OUTDIR) asks the running lucidd instead, as `lucid queue --job`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lucid/csv.h"

static const char usage_text[] =
    "usage: lucid explain OUTDIR JOB_ID [--policy NAME]\n"
    "       lucid explain JOB_ID [--socket PATH]    (a job under the running lucidd)\n"
    "\n"
    "Explains one job of `lucid simulate`'s results in OUTDIR (re-running the\n"
    "experiment saved there): its priority, profiling, every waiting interval with\n"
    "its reason, and how it started (packed: with whom and why).  The policy\n"
    "defaults to lucid if the run had it, else the run's first policy.  With\n"
    "only a job id it asks lucidd (as `lucid queue --job`): phases, profile,\n"
    "decisions, and the model version and terms behind the job's estimate.\n";

int cmd_explain_job(int argc, char **argv)
{
    const char *outdir = NULL, *job_text = NULL, *policy_name = NULL, *socket_path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int got;
        if (cli_is_help(argv[i])) {
            fputs(usage_text, stdout);
            return 0;
        }
        if ((got = cli_option(argc, argv, &i, "--policy", &v)) != 0) {
            if (got < 0)
                return 2;
            policy_name = v;
        } else if ((got = cli_option(argc, argv, &i, "--socket", &v)) != 0) {
            if (got < 0)
                return 2;
            socket_path = v;
        } else if (argv[i][0] == '-') {
            return cli_usage_error("explain: unknown option '%s'", argv[i]);
        } else if (!outdir) {
            outdir = argv[i];
        } else if (!job_text) {
            job_text = argv[i];
        } else {
            return cli_usage_error("explain: unexpected argument '%s'", argv[i]);
        }
    }
    int64_t job_id;
    if (outdir && !job_text && lucid_parse_i64(outdir, &job_id) == 0) {
        char *live[] = {"queue", "--job", (char *)outdir, "--socket", (char *)socket_path, NULL};
        return cmd_queue(socket_path ? 5 : 3, live);
    }
    if (!outdir || !job_text) {
        fputs(usage_text, stderr);
        return 2;
    }
    if (lucid_parse_i64(job_text, &job_id) < 0)
        return cli_fail("explain: '%s' is not a job id", job_text);
    char path[4096];
    snprintf(path, sizeof path, "%s/experiment.ini", outdir);
    lucid_experiment exp;
    lucid_experiment_defaults(&exp);
    lucid_error err = {{0}};
    if (lucid_experiment_load(&exp, path, &err) < 0) {
        lucid_experiment_free(&exp);
        return cli_fail("%s (is %s an output directory of lucid simulate?)", err.msg, outdir);
    }
    const lucid_policy_ops *policies[LUCID_EXP_MAX_POLICIES];
    int npolicies = 0;
    lucid_sim_config cfg;
    int rc = cli_run_policies(&exp, policies, &npolicies) || cli_run_config(&exp, &cfg);
    const lucid_policy_ops *policy = NULL;
    for (int i = 0; rc == 0 && i < npolicies; i++)
        if (policy_name ? strcmp(policies[i]->name, policy_name) == 0
                        : (policies[i]->flags & LUCID_POLICY_LUCID) != 0)
            policy = policies[i];
    if (rc == 0 && !policy && !policy_name && npolicies > 0)
        policy = policies[0];
    if (rc == 0 && !policy)
        rc = cli_fail("explain: %s did not run policy '%s'", outdir, policy_name);
    cli_run d;
    memset(&d, 0, sizeof d);
    /* QSSF on Lucid's online estimates (an imported trace): Lucid runs
     * first, as in the simulation explained. */
    const lucid_policy_ops *both[2] = {policy, lucid_policy_find("lucid")};
    int with_lucid = rc == 0 && strcmp(policy->name, "qssf") == 0 && !exp.qssf_estimates &&
                     !exp.lucid_estimates;
    if (rc == 0)
        rc = cli_run_load(&exp, both, with_lucid ? 2 : 1, &d, &cfg, 0);
    if (rc == 0 && d.qssf_from_lucid)
        rc = cli_run_estimates_from_lucid(&d, &cfg);
    int64_t index = rc == 0 ? lucid_trace_find(&d.trace, job_id) : -1;
    if (rc == 0 && index < 0)
        rc = cli_fail("explain: no job %lld in %s", (long long)job_id, exp.jobs);
    cfg.threads = 1;
    /* Dates beside the trace's raw seconds when its calendar is known. */
    int64_t calendar;
    int dated = rc == 0 && cli_run_calendar(exp.jobs, &d.trace, &calendar) == 0;
    if (rc == 0 && lucid_explain_job_dated(&cfg, &d.in, policy, index, dated ? &calendar : NULL,
                                           stdout, &err) < 0)
        rc = cli_fail("%s", err.msg);
    cli_run_free(&d);
    lucid_experiment_free(&exp);
    return rc;
}
