/* slurm_conf.c — a site's slurm.conf into the simulator's slurm policy
 * (experiment.h, lucid_slurm_conf_apply; docs/slurm-policy.md).
 *
 * slurm.conf is "Key=Value" lines, keys case-insensitive, '#' starting a
 * comment.  Read: PriorityType, PriorityWeightAge / Fairshare / JobSize,
 * PriorityMaxAge, PriorityCalcPeriod, PriorityFavorSmall,
 * PriorityDecayHalfLife, SchedulerType and SchedulerParameters' bf_interval
 * and bf_window; every other key is a site's business and is passed over.
 * Each value goes through lucid_experiment_set, so a value out of the
 * simulator's range is refused with slurm.conf's file and line. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lucid/csv.h"
#include "lucid/experiment.h"
#include "lucid/fairshare.h"
#include "lucid/util.h"

/* Slurm's time strings (slurm.conf(5)): "M", "M:S", "H:M:S", "D-H",
 * "D-H:M", "D-H:M:S"; "INFINITE" / "UNLIMITED".  Seconds, or -1. */
int64_t lucid_slurm_time_parse(const char *text, int64_t infinite)
{
    if (strcasecmp(text, "INFINITE") == 0 || strcasecmp(text, "UNLIMITED") == 0)
        return infinite;
    int64_t v[4];
    int n = 0, days = 0;
    const char *p = text;
    while (*p) {
        if (!isdigit((unsigned char)*p) || n == 4)
            return -1;
        int64_t x = 0;
        while (isdigit((unsigned char)*p)) {
            if (x > 100000000)
                return -1;
            x = x * 10 + (*p++ - '0');
        }
        v[n++] = x;
        if (*p == '-') {
            if (days || n != 1)
                return -1;
            days = 1;
            p++;
            if (!*p)
                return -1;
        } else if (*p == ':') {
            p++;
            if (!*p)
                return -1;
        } else if (*p) {
            return -1;
        }
    }
    if (n == 0)
        return -1;
    if (days) { /* D-H, D-H:M, D-H:M:S */
        int64_t s = v[0] * 86400 + v[1] * 3600;
        if (n >= 3)
            s += v[2] * 60;
        if (n == 4)
            s += v[3];
        return n >= 2 ? s : -1;
    }
    switch (n) {
    case 1: return v[0] * 60;                       /* M */
    case 2: return v[0] * 60 + v[1];                /* M:S */
    case 3: return v[0] * 3600 + v[1] * 60 + v[2];  /* H:M:S */
    default: return -1;
    }
}

typedef struct conf_ctx {
    lucid_experiment *exp;
    const char *path;
    long line;
    lucid_error *err;
    int basic; /* PriorityType=priority/basic: no weights */
    char weights[3][32];
    long weight_line[3];
    int global_billing;       /* a TRESBillingWeights line of its own was read */
    char part_billing[256];   /* a partition's TRESBillingWeights (the default one's, else
                               * the first) */
    long part_billing_line;
    int part_billing_default;
} conf_ctx;

static int set(conf_ctx *c, const char *section, const char *key, const char *value)
{
    return lucid_experiment_set(c->exp, section, key, value, NULL, c->path, c->line, c->err);
}

static int set_seconds(conf_ctx *c, const char *field, const char *section, const char *key,
                       const char *value, int64_t infinite)
{
    int64_t s = lucid_slurm_time_parse(value, infinite);
    if (s < 0)
        return lucid_error_at(c->err, c->path, c->line, field, "'%s' is not a Slurm time", value);
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)s);
    return set(c, section, key, text);
}

/* SchedulerParameters: comma-separated, bf_interval=SECONDS and
 * bf_window=MINUTES read. */
static int scheduler_parameters(conf_ctx *c, const char *value)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", value);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq++ = '\0';
        int64_t n;
        if (strcmp(tok, "bf_interval") == 0 || strcmp(tok, "bf_window") == 0) {
            if (lucid_parse_i64(eq, &n) < 0 || n < 0)
                return lucid_error_at(c->err, c->path, c->line, "SchedulerParameters",
                                      "%s: '%s' is not a whole number", tok, eq);
            char text[32];
            if (strcmp(tok, "bf_interval") == 0) {
                if (n == 0) /* Slurm: a pass only when jobs end; nearest here: a day */
                    n = 86400;
                snprintf(text, sizeof text, "%lld", (long long)(n > 10800 ? 10800 : n));
                if (set(c, "slurm", "backfill_interval", text) < 0)
                    return -1;
            } else {
                snprintf(text, sizeof text, "%lld", (long long)(n * 60));
                if (set(c, "slurm", "backfill_window", text) < 0)
                    return -1;
            }
        }
    }
    return 0;
}

/* PriorityFlags: a comma list; NO_FAIR_TREE turns Fair Tree (the
 * default) off.  The other flags are not modelled. */
static int priority_flags(conf_ctx *c, const char *value)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", value);
    int fair_tree = 1;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        if (strcasecmp(tok, "NO_FAIR_TREE") == 0)
            fair_tree = 0;
    return set(c, "slurm", "fair_tree", fair_tree ? "yes" : "no");
}

/* TRESBillingWeights (the global one; a partition's is on its PartitionName
 * line, not read): CPU=W and GRES/gpu=W (or GRES/gpu:TYPE=W, summed over
 * nothing: the first seen); the others (Mem, licences) are not in a trace.
 * Slurm's billing is then sum of weight x count: without this key, a job's
 * CPUs. */
static int billing_weights(conf_ctx *c, const char *value)
{
    char buf[1024], cpu[32] = "0", gpu[32] = "0";
    snprintf(buf, sizeof buf, "%s", value);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return lucid_error_at(c->err, c->path, c->line, "TRESBillingWeights",
                                  "'%s' is not TRES=WEIGHT", tok);
        *eq++ = '\0';
        double w;
        /* A unit suffix (Mem=0.25G) is for memory only, which is not read. */
        int is_cpu = strcasecmp(tok, "CPU") == 0;
        int is_gpu = strcasecmp(tok, "GRES/gpu") == 0 || strncasecmp(tok, "GRES/gpu:", 9) == 0;
        if (!is_cpu && !is_gpu)
            continue;
        if (lucid_parse_f64(eq, &w) < 0 || !(w >= 0) || w > 1000000)
            return lucid_error_at(c->err, c->path, c->line, "TRESBillingWeights",
                                  "%s: '%s' is not a weight (0..1000000)", tok, eq);
        snprintf(is_cpu ? cpu : gpu, sizeof cpu, "%s", eq);
    }
    if (set(c, "slurm", "billing_cpu", cpu) < 0)
        return -1;
    return set(c, "slurm", "billing_gpu", gpu);
}

static int one_key(conf_ctx *c, const char *key, const char *value)
{
    static const char *const weight_keys[3] = {"PriorityWeightAge", "PriorityWeightFairshare",
                                               "PriorityWeightJobSize"};
    for (int k = 0; k < 3; k++)
        if (strcasecmp(key, weight_keys[k]) == 0) {
            snprintf(c->weights[k], sizeof c->weights[k], "%s", value);
            c->weight_line[k] = c->line;
            return 0; /* applied at the end: PriorityType may come later */
        }
    if (strcasecmp(key, "PriorityType") == 0) {
        c->basic = strcasecmp(value, "priority/basic") == 0;
        return 0;
    }
    if (strcasecmp(key, "PriorityMaxAge") == 0)
        return set_seconds(c, key, "slurm", "max_age", value, (int64_t)3650 * 86400);
    if (strcasecmp(key, "PriorityCalcPeriod") == 0) {
        /* A time string whose bare number is minutes, like the others. */
        return set_seconds(c, key, "slurm", "calc_period", value, 86400);
    }
    if (strcasecmp(key, "PriorityDecayHalfLife") == 0) {
        /* 0: no decay (usage kept until a reset): the longest half-life. */
        int64_t s = lucid_slurm_time_parse(value, 0);
        if (s < 0)
            return lucid_error_at(c->err, c->path, c->line, key, "'%s' is not a Slurm time",
                                  value);
        if (s == 0)
            s = LUCID_FAIRSHARE_HALF_LIFE_MAX;
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)s);
        return set(c, "simulate", "fairshare_half_life", text);
    }
    if (strcasecmp(key, "PriorityFavorSmall") == 0)
        return set(c, "slurm", "favor_small", strcasecmp(value, "YES") == 0 ? "yes" : "no");
    if (strcasecmp(key, "SchedulerType") == 0) {
        /* sched/backfill plans a start for every job it tests and no
         * backfilled job may delay one: conservative backfill. */
        if (strcasecmp(value, "sched/backfill") == 0)
            return set(c, "slurm", "backfill", "conservative");
        if (strcasecmp(value, "sched/builtin") == 0)
            return set(c, "slurm", "backfill", "none");
        return lucid_error_at(c->err, c->path, c->line, key,
                              "'%s': the slurm policy models sched/backfill and sched/builtin",
                              value);
    }
    if (strcasecmp(key, "SchedulerParameters") == 0)
        return scheduler_parameters(c, value);
    if (strcasecmp(key, "PriorityFlags") == 0)
        return priority_flags(c, value);
    if (strcasecmp(key, "TRESBillingWeights") == 0) {
        c->global_billing = 1;
        return billing_weights(c, value);
    }
    if (strcasecmp(key, "PartitionName") == 0) {
        /* Its pairs are on its line: the billing weights are kept (the
         * simulator has one set; a site usually gives every partition the
         * same), the default partition's before the others. */
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", value);
        const char *weights = NULL;
        int is_default = 0;
        for (char *save = NULL, *tok = strtok_r(buf, " \t", &save); tok;
             tok = strtok_r(NULL, " \t", &save)) {
            if (strncasecmp(tok, "TRESBillingWeights=", 19) == 0)
                weights = tok + 19;
            else if (strcasecmp(tok, "Default=YES") == 0)
                is_default = 1;
        }
        if (weights && (!c->part_billing[0] || (is_default && !c->part_billing_default))) {
            snprintf(c->part_billing, sizeof c->part_billing, "%s", weights);
            c->part_billing_line = c->line;
            c->part_billing_default = is_default;
        }
        return 0;
    }
    return 0;
}

int lucid_slurm_conf_apply(lucid_experiment *exp, const char *path, lucid_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return lucid_error_set(err, "%s: cannot open", path);
    conf_ctx c = {.exp = exp, .path = path, .err = err};
    char line[4096];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        c.line++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        size_t n = strlen(s);
        while (n > 0 && isspace((unsigned char)s[n - 1]))
            s[--n] = '\0';
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq)
            continue; /* e.g. a bare word; not ours */
        *eq = '\0';
        char *key = s, *value = eq + 1;
        n = strlen(key);
        while (n > 0 && isspace((unsigned char)key[n - 1]))
            key[--n] = '\0';
        while (isspace((unsigned char)*value))
            value++;
        /* NodeName=... lines carry several pairs; their first key is not ours. */
        rc = one_key(&c, key, value);
    }
    if (rc == 0 && ferror(f))
        rc = lucid_error_set(err, "%s: read error", path);
    fclose(f);
    if (rc == 0 && !c.global_billing && c.part_billing[0]) {
        c.line = c.part_billing_line;
        rc = billing_weights(&c, c.part_billing);
    }
    static const char *const keys[3] = {"weight_age", "weight_fairshare", "weight_jobsize"};
    for (int k = 0; rc == 0 && k < 3; k++)
        if (c.weights[k][0])
            rc = lucid_experiment_set(exp, "slurm", keys[k], c.basic ? "0" : c.weights[k], NULL,
                                      path, c.weight_line[k], err);
    return rc;
}
