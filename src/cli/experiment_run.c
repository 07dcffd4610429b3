/* experiment_run.c — what turns an experiment into a simulation, shared by
 * the verbs that run one (simulate, tune): the policy list, the simulator's
 * configuration, and the trace with its side files (estimates, sharing
 * labels, colocation pairs, forecast, the profiler's nodes). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lucid/csv.h"

void cli_run_free(cli_run *d)
{
    lucid_trace_free(&d->trace);
    lucid_vcs_free(&d->vcs);
    free(d->qssf_est);
    free(d->lucid_est);
    lucid_sharing_free(&d->sharing);
    lucid_pairs_free(&d->pairs);
    lucid_forecast_free(&d->forecast);
    free(d->nodes_from);
    memset(d, 0, sizeof *d);
}

int cli_run_policies(const lucid_experiment *exp, const lucid_policy_ops **policies, int *n)
{
    *n = 0;
    if (exp->npolicies == 0 || (exp->npolicies == 1 && strcmp(exp->policies[0], "all") == 0)) {
        for (const lucid_policy_ops *const *p = lucid_policy_list(); *p; p++)
            policies[(*n)++] = *p;
        return 0;
    }
    for (int i = 0; i < exp->npolicies; i++) {
        policies[*n] = lucid_policy_find(exp->policies[i]);
        if (!policies[*n])
            return cli_fail("unknown policy '%s' (fifo, sjf, srtf, qssf, tiresias, lucid, slurm)",
                            exp->policies[i]);
        (*n)++;
    }
    return 0;
}

void cli_run_lucid_knobs(const lucid_experiment *exp, lucid_sim_lucid_config *lc)
{
    lc->profiler_nodes = exp->profiler_nodes;
    lc->profiler_time_limit = exp->profiler_time_limit;
    int64_t overhead = 0; /* unset: none (its range is checked where it is read) */
    if (exp->profiler_overhead && lucid_parse_i64(exp->profiler_overhead, &overhead) < 0)
        overhead = 0;
    lc->profiler_overhead = overhead;
    lc->profiler_factor = exp->profiler_factor;
    lc->profiler_autoscale = exp->profiler_autoscale;
    lc->gmem_limit = exp->gpu_mem_mib;
    lc->priority_ratio = exp->priority_ratio;
    lc->score_sum = exp->score_sum;
    lc->pack_threshold = exp->pack_threshold;
    lc->scale_down_factor = exp->scale_down_factor;
    lc->share_prior = exp->prior && strcmp(exp->prior, "venus") == 0;
    lc->pack_when_blocked = exp->pack_when_blocked;
}

int cli_run_config(const lucid_experiment *exp, lucid_sim_config *cfg)
{
    lucid_sim_config_defaults(cfg);
    if (exp->prior && strcmp(exp->prior, "venus") != 0 && strcmp(exp->prior, "none") != 0)
        return cli_fail("[lucid] prior = %s: expected 'venus' or 'none'", exp->prior);
    if (exp->placer && !(cfg->placer = lucid_placer_find(exp->placer)))
        return cli_fail("unknown placer '%s' (consolidate, consolidate-first, random)",
                        exp->placer);
    cfg->reference = exp->reference;
    cfg->sem = exp->reference ? lucid_semantics_reference() : lucid_semantics_fixed();
    lucid_error err = {{0}};
    if (exp->fix && lucid_semantics_fix(&cfg->sem, exp->fix, &err) < 0)
        return cli_fail("[simulate] fix: %s", err.msg);
    cfg->gpus_per_node = exp->gpus_per_node;
    cfg->threads = exp->threads;
    cfg->seed = exp->seed;
    cfg->start = exp->start;
    cfg->series = exp->series;
    cfg->skip_oversized = exp->skip_oversized;
    cli_run_lucid_knobs(exp, &cfg->lucid);
    /* Checked in range when read (experiment.c). */
    int64_t half_life;
    if (exp->fairshare_weight)
        lucid_parse_f64(exp->fairshare_weight, &cfg->fairshare_weight);
    if (exp->fairshare_half_life && lucid_parse_i64(exp->fairshare_half_life, &half_life) == 0)
        cfg->fairshare_half_life = (double)half_life;
    cli_run_slurm_priority(exp, &cfg->slurm);
    cfg->slurm_accounts = exp->slurm_accounts;
    if (exp->slurm_accounts &&
        lucid_slurm_accounts_parse(exp->slurm_accounts, NULL, 0, NULL, &err) < 0)
        return cli_fail("%s", err.msg);
    return cli_run_backfill(exp, cfg);
}

void cli_run_slurm_priority(const lucid_experiment *exp, lucid_slurm_priority *p)
{
    /* Checked when read (experiment.c): numbers in range, yes / no. */
    *p = lucid_slurm_priority_default();
    int64_t v;
    if (exp->slurm_weight_age)
        lucid_parse_f64(exp->slurm_weight_age, &p->weight_age);
    if (exp->slurm_weight_fairshare)
        lucid_parse_f64(exp->slurm_weight_fairshare, &p->weight_fairshare);
    if (exp->slurm_weight_jobsize)
        lucid_parse_f64(exp->slurm_weight_jobsize, &p->weight_jobsize);
    if (exp->slurm_max_age && lucid_parse_i64(exp->slurm_max_age, &v) == 0)
        p->max_age = v;
    if (exp->slurm_calc_period && lucid_parse_i64(exp->slurm_calc_period, &v) == 0)
        p->calc_period = v;
    if (exp->slurm_backfill_interval && lucid_parse_i64(exp->slurm_backfill_interval, &v) == 0)
        p->bf_interval = v;
    if (exp->slurm_favor_small) /* stored as yes / no when read */
        p->favor_small = strcmp(exp->slurm_favor_small, "yes") == 0;
    if (exp->slurm_fair_tree)
        p->fair_tree = strcmp(exp->slurm_fair_tree, "yes") == 0;
    if (exp->slurm_billing_cpu)
        lucid_parse_f64(exp->slurm_billing_cpu, &p->bill_cpu);
    if (exp->slurm_billing_gpu)
        lucid_parse_f64(exp->slurm_billing_gpu, &p->bill_gpu);
    if (exp->slurm_cluster_nodes && lucid_parse_i64(exp->slurm_cluster_nodes, &v) == 0)
        p->cluster_nodes = v;
    if (exp->slurm_cluster_cpus && lucid_parse_i64(exp->slurm_cluster_cpus, &v) == 0)
        p->cluster_cpus = v;
    if (exp->slurm_start_latency)
        lucid_parse_f64(exp->slurm_start_latency, &p->start_latency);
}

int cli_run_backfill(const lucid_experiment *exp, lucid_sim_config *cfg)
{
    cfg->nbackfill = 0;
    for (int i = 0; i < 5; i++) {
        const char *name = lucid_exp_backfill_policies[i];
        /* Slurm's backfill plans with the users' time limits. */
        lucid_backfill_config bf = {.mode = LUCID_BACKFILL_NONE,
                                    .estimate = i == LUCID_EXP_BF_SLURM
                                                    ? LUCID_BACKFILL_EST_TIME_LIMIT
                                                    : LUCID_BACKFILL_EST_MODEL,
                                    .margin = i == LUCID_EXP_BF_SLURM ? 1.0 : 1.2};
        if (exp->backfill[i] && (bf.mode = lucid_backfill_mode_parse(exp->backfill[i])) < 0)
            return cli_fail("[%s] backfill = %s: expected none, easy or conservative", name,
                            exp->backfill[i]);
        if (exp->backfill_estimate[i] &&
            (bf.estimate = lucid_backfill_estimate_parse(exp->backfill_estimate[i])) < 0)
            return cli_fail("[%s] backfill_estimate = %s: expected model or time_limit", name,
                            exp->backfill_estimate[i]);
        if (exp->backfill_margin[i] &&
            (lucid_parse_f64(exp->backfill_margin[i], &bf.margin) < 0 || !(bf.margin >= 1) ||
             bf.margin > 100))
            return cli_fail("[%s] backfill_margin = %s: expected a number from 1 to 100", name,
                            exp->backfill_margin[i]);
        /* Checked as integers in range when read (experiment.c). */
        int64_t value;
        if (exp->backfill_window[i] && lucid_parse_i64(exp->backfill_window[i], &value) == 0)
            bf.window = value;
        if (exp->backfill_min_gpus[i] && lucid_parse_i64(exp->backfill_min_gpus[i], &value) == 0)
            bf.min_gpus = (int32_t)value;
        if (bf.mode == LUCID_BACKFILL_NONE)
            continue;
        cfg->backfill[cfg->nbackfill].policy = lucid_policy_find(name);
        cfg->backfill[cfg->nbackfill++].cfg = bf;
    }
    return 0;
}

/* An on/off key: unset gives `unset`. */
static int on_off(const char *key, const char *value, int unset, int *on)
{
    *on = unset;
    if (!value)
        return 0;
    if (strcmp(value, "on") == 0 || strcmp(value, "yes") == 0)
        *on = 1;
    else if (strcmp(value, "off") == 0 || strcmp(value, "no") == 0)
        *on = 0;
    else
        return cli_fail("[simulate] %s = %s: expected on or off", key, value);
    return 0;
}

int cli_run_eta(const lucid_experiment *exp, int *on)
{
    return on_off("eta", exp->eta, 1, on);
}

int cli_run_eta_hourly(const lucid_experiment *exp, int *on)
{
    return on_off("eta_hourly", exp->eta_hourly, 0, on);
}

int cli_run_stream(const lucid_experiment *exp, int *mode)
{
    if (exp->stream && strcmp(exp->stream, "auto") == 0) {
        *mode = -1;
        return 0;
    }
    if (exp->stream && strcmp(exp->stream, "on") != 0 && strcmp(exp->stream, "yes") != 0 &&
        strcmp(exp->stream, "off") != 0 && strcmp(exp->stream, "no") != 0)
        return cli_fail("[simulate] stream = %s: expected auto, on or off", exp->stream);
    return on_off("stream", exp->stream, -1, mode);
}

static int parse_nodes_from(const char *spec, const lucid_vcs *vcs, int32_t **out, lucid_error *err)
{
    int32_t *from = calloc((size_t)vcs->count + 1, sizeof *from);
    if (!from)
        return lucid_error_set(err, "out of memory");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *save = NULL, *item = strtok_r(buf, ", ", &save); item;
         item = strtok_r(NULL, ", ", &save)) {
        char *colon = strchr(item, ':');
        int64_t n = 1;
        if (colon) {
            *colon = '\0';
            if (lucid_parse_i64(colon + 1, &n) < 0 || n < 0) {
                free(from);
                return lucid_error_set(err, "[lucid] profiler_nodes_from: bad node count in '%s'",
                                       spec);
            }
        }
        int32_t vc = lucid_strtab_find(vcs->names, item);
        if (vc < 0) {
            free(from);
            return lucid_error_set(err, "[lucid] profiler_nodes_from: unknown VC '%s'", item);
        }
        from[vc] += (int32_t)n;
        if (from[vc] > vcs->nodes[vc]) {
            free(from);
            return lucid_error_set(err, "[lucid] profiler_nodes_from: VC %s has only %d nodes",
                                   item, vcs->nodes[vc]);
        }
    }
    *out = from;
    return 0;
}

int cli_run_take_estimates(cli_run *d, const lucid_sim_result *lucid)
{
    size_t n = d->trace.njobs;
    free(d->qssf_est);
    if (!(d->qssf_est = malloc((n + 1) * sizeof *d->qssf_est)))
        return -1;
    for (size_t i = 0; i < n; i++)
        d->qssf_est[i] = lucid->estimates ? lucid->estimates[i] : -1;
    d->in.qssf_estimates = d->qssf_est;
    if (!d->in.plan_estimates)
        d->in.plan_estimates = d->qssf_est;
    return 0;
}

int cli_run_estimates_from_lucid(cli_run *d, const lucid_sim_config *cfg)
{
    const lucid_policy_ops *lucid = lucid_policy_find("lucid");
    lucid_sim_config c = *cfg;
    c.on_result = NULL;
    c.observe = (lucid_observer){.job = -1};
    lucid_sim_result result;
    lucid_error err = {{0}};
    if (lucid_simulate(&c, &d->in, &lucid, 1, &result, NULL, NULL, &err) < 0)
        return cli_fail("%s", err.msg);
    int rc = cli_run_take_estimates(d, &result) < 0 ? cli_fail("out of memory") : 0;
    lucid_sim_result_free(&result);
    return rc;
}

static int needs(const lucid_policy_ops *const *policies, int n, unsigned flag)
{
    for (int i = 0; i < n; i++)
        if (policies[i]->flags & flag)
            return 1;
    return 0;
}

static int has_policy(const lucid_policy_ops *const *policies, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(policies[i]->name, name) == 0)
            return 1;
    return 0;
}

int cli_run_calendar(const char *path, const lucid_trace *trace, int64_t *offset)
{
    if (trace->njobs == 0)
        return -1;
    const lucid_job *first = &trace->jobs[0];
    if (first->submit_time >= 946684800) { /* after 2000: already calendar seconds */
        *offset = 0;
        return 0;
    }
    lucid_error err;
    lucid_csv *csv = lucid_csv_open(path, &err);
    if (!csv)
        return -1;
    int col = lucid_csv_col(csv, "submit_datetime"), rc = -1;
    while (col >= 0 && lucid_csv_next(csv, &err) == 1)
        if (lucid_csv_line(csv) == first->line) {
            int64_t when;
            if (lucid_time_parse(lucid_csv_field(csv, col), &when) == 0) {
                *offset = when - first->submit_time;
                rc = 0;
            }
            break;
        }
    lucid_csv_close(csv);
    return rc;
}

/* [lucid] models = online: the models are trained during the run. */
static int load_online(const lucid_experiment *exp, cli_run *d, lucid_error *err)
{
    int prior = exp->prior && strcmp(exp->prior, "venus") == 0;
    if ((!exp->sharing_labels || !exp->colocation) && !prior)
        return lucid_error_set(err, "[lucid] models = online needs sharing_labels and colocation "
                                    "(the sharing model's training data), or prior = venus "
                                    "(docs/traces.md)");
    lucid_online_config *oc = &d->online;
    memset(oc, 0, sizeof *oc);
    oc->trace_path = exp->jobs;
    oc->sharing_labels = exp->sharing_labels;
    oc->colocation = exp->colocation;
    oc->history = exp->history;
    oc->period = exp->retrain_period;
    oc->min_history = (size_t)exp->min_history;
    oc->estimate_period = exp->estimate_period;
    oc->bags = exp->model_bags;
    oc->full_retrain = !exp->warm_start;
    oc->seed = exp->seed;
    int64_t start = exp->start >= 0 ? exp->start : d->trace.jobs[0].submit_time -
                                                   d->trace.jobs[0].submit_time % 86400;
    if (exp->history_start) {
        if (lucid_time_parse(exp->history_start, &oc->window_start) < 0)
            return lucid_error_set(err, "[lucid] history_start: '%s' is not YYYY-MM-DD HH:MM:SS",
                                   exp->history_start);
    } else if (exp->history) {
        int64_t offset;
        if (start >= 946684800) /* after 2000: the trace's times are calendar seconds */
            oc->window_start = start;
        else if (cli_run_calendar(exp->jobs, &d->trace, &offset) == 0)
            oc->window_start = start + offset;
        else
            return lucid_error_set(err, "[lucid] history needs history_start (the calendar time "
                                        "of the simulation start): the trace has no "
                                        "submit_datetime column to derive it from");
    }
    return 0;
}

/* The estimates (and online Lucid's settings): the part of loading that
 * comes before Lucid's side files; -1 on an error. */
static int load_estimates(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                          int npolicies, cli_run *d, lucid_error *err)
{
    /* FIFO and SJF plan backfill and start-time estimates with the
     * experiment's estimates ([qssf], else [lucid]) when it gives any. */
    const char *plan_path = exp->qssf_estimates ? exp->qssf_estimates : exp->lucid_estimates;
    int plan = 0;
    for (int i = 0; i < 5; i++)
        if (i == LUCID_EXP_BF_FIFO || i == LUCID_EXP_BF_SJF || i == LUCID_EXP_BF_SLURM)
            plan |= exp->backfill[i] && strcmp(exp->backfill[i], "none") != 0;
    if (!exp->eta || strcmp(exp->eta, "off") != 0)
        plan = 1; /* (unset: on for small traces; loading is cheap either way) */
    if (plan && plan_path && !has_policy(policies, npolicies, "qssf") &&
        lucid_estimates_load(&d->qssf_est, &d->trace, plan_path, err) < 0)
        return -1;
    int online = exp->models ? strcmp(exp->models, "online") == 0 : !exp->lucid_estimates;
    if (has_policy(policies, npolicies, "qssf")) {
        const char *path = exp->qssf_estimates ? exp->qssf_estimates : exp->lucid_estimates;
        if (!path && online && needs(policies, npolicies, LUCID_POLICY_LUCID))
            d->qssf_from_lucid = 1; /* filled after Lucid's run (cmd_simulate) */
        else if (!path)
            return lucid_error_set(err, "qssf needs [qssf] estimates, or lucid with models = "
                                        "online in the same run (QSSF then uses its estimates)");
        else if (lucid_estimates_load(&d->qssf_est, &d->trace, path, err) < 0)
            return -1;
    }
    if (!needs(policies, npolicies, LUCID_POLICY_LUCID))
        return 0;
    if (exp->models && !online && strcmp(exp->models, "files") != 0)
        return lucid_error_set(err, "[lucid] models = %s: expected 'files' or 'online'",
                               exp->models);
    if (online && load_online(exp, d, err) < 0)
        return -1;
    if (!online && !exp->lucid_estimates)
        return lucid_error_set(err, "lucid needs [lucid] estimates (or models = online)");
    if (!online && d->qssf_est && strcmp(plan_path, exp->lucid_estimates) == 0) {
        /* The file QSSF's estimates came from (the paper's setup): read once. */
        size_t size = (d->trace.njobs + 1) * sizeof *d->lucid_est;
        if (!(d->lucid_est = malloc(size)))
            return lucid_error_set(err, "out of memory");
        memcpy(d->lucid_est, d->qssf_est, size);
    } else if (!online &&
               lucid_estimates_load(&d->lucid_est, &d->trace, exp->lucid_estimates, err) < 0) {
        return -1;
    }
    return 0;
}

/* What is read beside the estimates, on a second thread when there is
 * one: Lucid's sharing labels and colocation pairs (they intern strings
 * into the trace's table, which the estimates' loading does not read), and
 * the inputs' hashes for the MANIFEST (hashed at its writing, they were a
 * millisecond of one thread at the end of a Venus run). */
typedef struct side_load {
    const lucid_experiment *exp;
    cli_run *d;
    int lucid, hash, rc;
    lucid_error err;
} side_load;

static void *load_side(void *arg)
{
    side_load *s = arg;
    const lucid_experiment *exp = s->exp;
    cli_run *d = s->d;
    if (s->lucid && exp->sharing_labels &&
        lucid_sharing_load(&d->sharing, &d->trace, exp->sharing_labels, &s->err) < 0)
        s->rc = -1;
    else if (s->lucid && exp->colocation &&
             lucid_pairs_load(&d->pairs, &d->trace, exp->colocation, &s->err) < 0)
        s->rc = -1;
    lucid_error ignored = {{0}}; /* (an unreadable input fails the MANIFEST's own hashing) */
    if (s->hash && s->rc == 0)
        d->inputs_hashed = lucid_experiment_hash_inputs(exp, d->input_hash, &ignored) == 0;
    return NULL;
}

/* The trace, then the estimates here and the side files beside them; the
 * first error is the one a reading in order meets first (estimates,
 * sharing labels, pairs, forecast, profiler nodes). */
static int load_files(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                      int npolicies, cli_run *d, int hash_inputs, lucid_error *err)
{
    if (!exp->jobs || !exp->vcs)
        return lucid_error_set(err, "no trace: give [trace] jobs and vcs (or --jobs/--vcs)");
    if (lucid_vcs_load(&d->vcs, exp->vcs, err) < 0 ||
        lucid_trace_load_threads(&d->trace, exp->jobs, &d->vcs, exp->threads, err) < 0)
        return -1;
    int lucid = needs(policies, npolicies, LUCID_POLICY_LUCID);
    side_load side = {.exp = exp, .d = d, .lucid = lucid, .hash = hash_inputs};
    pthread_t thread;
    int threaded = exp->threads > 1 && (lucid || hash_inputs) &&
                   pthread_create(&thread, NULL, load_side, &side) == 0;
    int rc = load_estimates(exp, policies, npolicies, d, err);
    if (!threaded && rc == 0)
        load_side(&side);
    lucid_error late = {{0}};
    int late_rc = 0;
    if (rc == 0 && lucid) {
        if (exp->forecast && lucid_forecast_load(&d->forecast, exp->forecast, &late) < 0)
            late_rc = -1;
        else if (exp->profiler_nodes_from &&
                 parse_nodes_from(exp->profiler_nodes_from, &d->vcs, &d->nodes_from, &late) < 0)
            late_rc = -1;
    }
    if (threaded)
        pthread_join(thread, NULL);
    if (rc < 0)
        return -1;
    if (side.rc < 0) {
        *err = side.err;
        return -1;
    }
    if (late_rc < 0) {
        *err = late;
        return -1;
    }
    return 0;
}

int cli_run_load(const lucid_experiment *exp, const lucid_policy_ops *const *policies,
                 int npolicies, cli_run *d, lucid_sim_config *cfg, int hash_inputs)
{
    memset(d, 0, sizeof *d);
    lucid_error err = {{0}};
    if (load_files(exp, policies, npolicies, d, hash_inputs, &err) < 0)
        return cli_fail("%s", err.msg);
    if (exp->borrow_vc) {
        cfg->lucid.borrow_vc = lucid_strtab_find(d->vcs.names, exp->borrow_vc);
        if (cfg->lucid.borrow_vc < 0)
            return cli_fail("[lucid] borrow_vc: unknown VC '%s'", exp->borrow_vc);
    }
    cfg->lucid.nodes_from = d->nodes_from;
    if (d->online.trace_path)
        cfg->online = &d->online;
    d->in = (lucid_sim_inputs){.trace = &d->trace,
                               .vcs = &d->vcs,
                               .qssf_estimates = d->qssf_est,
                               .lucid_estimates = d->lucid_est,
                               .plan_estimates = d->qssf_est ? d->qssf_est : d->lucid_est,
                               .sharing = d->sharing.count ? &d->sharing : NULL,
                               .pairs = d->pairs.count ? &d->pairs : NULL,
                               .forecast = d->forecast.count ? &d->forecast : NULL};
    return 0;
}
