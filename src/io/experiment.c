/* experiment.c — parsing of experiment files with inih; every key is a row
 * in one table that names its section, kind and destination. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "lucid/experiment.h"

#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lucid/backfill.h"
#include "lucid/csv.h"
#include "lucid/fairshare.h"
#include "lucid/manifest.h"
#include "lucid/util.h"

/* KEY_OPT_INT: an integer in min..max, checked where it is written (file,
 * line, key) but kept as text, so an unset key stays unset and is not
 * written back (the backfill keys: existing outputs keep their bytes).
 * KEY_OPT_NUMBER: the same for a decimal number in min..max (the fair-share
 * weight). */
enum key_kind {
    KEY_PATH, KEY_STRING, KEY_INT, KEY_OPT_INT, KEY_OPT_NUMBER, KEY_BOOL, KEY_DOUBLE,
    KEY_POLICIES, KEY_COMPAT
};

typedef struct key_spec {
    const char *section, *key;
    enum key_kind kind;
    size_t offset;
    int64_t min, max; /* KEY_INT, KEY_OPT_INT range */
} key_spec;

#define FIELD(f) offsetof(lucid_experiment, f)
/* A head-of-line policy's backfill keys (docs/backfill.md), five rows. */
#define BACKFILL_KEYS(section, i)                                                        \
    {section, "backfill", KEY_STRING, FIELD(backfill[i]), 0, 0},                         \
    {section, "backfill_estimate", KEY_STRING, FIELD(backfill_estimate[i]), 0, 0},       \
    {section, "backfill_margin", KEY_STRING, FIELD(backfill_margin[i]), 0, 0},           \
    {section, "backfill_window", KEY_OPT_INT, FIELD(backfill_window[i]), 0,              \
     LUCID_BACKFILL_WINDOW_MAX},                                                         \
    {section, "backfill_min_gpus", KEY_OPT_INT, FIELD(backfill_min_gpus[i]), 0,          \
     LUCID_BACKFILL_MIN_GPUS_MAX}

static const key_spec keys[] = {
    {"trace", "jobs", KEY_PATH, FIELD(jobs), 0, 0},
    {"trace", "vcs", KEY_PATH, FIELD(vcs), 0, 0},
    {"trace", "gpus_per_node", KEY_INT, FIELD(gpus_per_node), 1, 64},
    {"trace", "start", KEY_INT, FIELD(start), -1, INT64_MAX / 4},
    {"simulate", "policies", KEY_POLICIES, FIELD(policies), 0, 0},
    {"simulate", "placer", KEY_STRING, FIELD(placer), 0, 0},
    {"simulate", "compat", KEY_COMPAT, FIELD(reference), 0, 0},
    {"simulate", "fix", KEY_STRING, FIELD(fix), 0, 0},
    {"simulate", "out", KEY_PATH, FIELD(out), 0, 0},
    {"simulate", "threads", KEY_INT, FIELD(threads), 1, 64},
    {"simulate", "series", KEY_BOOL, FIELD(series), 0, 0},
    {"simulate", "seed", KEY_INT, FIELD(seed), 0, INT64_MAX},
    {"simulate", "skip_oversized", KEY_BOOL, FIELD(skip_oversized), 0, 0},
    {"simulate", "eta", KEY_STRING, FIELD(eta), 0, 0},
    {"simulate", "eta_hourly", KEY_STRING, FIELD(eta_hourly), 0, 0},
    {"simulate", "stream", KEY_STRING, FIELD(stream), 0, 0},
    {"simulate", "fairshare_weight", KEY_OPT_NUMBER, FIELD(fairshare_weight), 0, LUCID_FAIRSHARE_WEIGHT_MAX},
    {"simulate", "fairshare_half_life", KEY_OPT_INT, FIELD(fairshare_half_life), 1, LUCID_FAIRSHARE_HALF_LIFE_MAX},
    {"qssf", "estimates", KEY_PATH, FIELD(qssf_estimates), 0, 0},
    BACKFILL_KEYS("qssf", LUCID_EXP_BF_QSSF),
    {"lucid", "estimates", KEY_PATH, FIELD(lucid_estimates), 0, 0},
    {"lucid", "forecast", KEY_PATH, FIELD(forecast), 0, 0},
    {"lucid", "sharing_labels", KEY_PATH, FIELD(sharing_labels), 0, 0},
    {"lucid", "colocation", KEY_PATH, FIELD(colocation), 0, 0},
    {"lucid", "profiler_nodes_from", KEY_STRING, FIELD(profiler_nodes_from), 0, 0},
    {"lucid", "profiler_nodes", KEY_INT, FIELD(profiler_nodes), 1, 100000},
    {"lucid", "profiler_time_limit", KEY_INT, FIELD(profiler_time_limit), 1, INT64_MAX / 4},
    {"lucid", "profiler_factor", KEY_INT, FIELD(profiler_factor), 1, 1024},
    {"lucid", "profiler_overhead", KEY_OPT_INT, FIELD(profiler_overhead), 0, 86400},
    {"lucid", "profiler_autoscale", KEY_BOOL, FIELD(profiler_autoscale), 0, 0},
    {"lucid", "borrow_vc", KEY_STRING, FIELD(borrow_vc), 0, 0},
    {"lucid", "gpu_mem_mib", KEY_DOUBLE, FIELD(gpu_mem_mib), 0, 0},
    {"lucid", "priority_ratio", KEY_DOUBLE, FIELD(priority_ratio), 0, 0},
    {"lucid", "score_sum", KEY_INT, FIELD(score_sum), 0, 4},
    {"lucid", "pack_threshold", KEY_DOUBLE, FIELD(pack_threshold), 0, 0},
    {"lucid", "scale_down_factor", KEY_DOUBLE, FIELD(scale_down_factor), 0, 0},
    {"lucid", "models", KEY_STRING, FIELD(models), 0, 0},
    {"lucid", "prior", KEY_STRING, FIELD(prior), 0, 0},
    {"lucid", "pack_when_blocked", KEY_BOOL, FIELD(pack_when_blocked), 0, 0},
    {"lucid", "history", KEY_PATH, FIELD(history), 0, 0},
    {"lucid", "history_start", KEY_STRING, FIELD(history_start), 0, 0},
    {"lucid", "retrain_period", KEY_INT, FIELD(retrain_period), 3600, INT64_MAX / 4},
    {"lucid", "min_history", KEY_INT, FIELD(min_history), 1, 100000000},
    {"lucid", "estimate_period", KEY_INT, FIELD(estimate_period), 60, INT64_MAX / 4},
    {"lucid", "model_bags", KEY_INT, FIELD(model_bags), 1, 64},
    {"lucid", "warm_start", KEY_BOOL, FIELD(warm_start), 0, 0},
    BACKFILL_KEYS("lucid", LUCID_EXP_BF_LUCID),
    /* Sections with only optional keys: written only when one is set. */
    BACKFILL_KEYS("fifo", LUCID_EXP_BF_FIFO),
    BACKFILL_KEYS("sjf", LUCID_EXP_BF_SJF),
    {"slurm", "weight_age", KEY_OPT_NUMBER, FIELD(slurm_weight_age), 0, UINT32_MAX},
    {"slurm", "weight_fairshare", KEY_OPT_NUMBER, FIELD(slurm_weight_fairshare), 0, UINT32_MAX},
    {"slurm", "weight_jobsize", KEY_OPT_NUMBER, FIELD(slurm_weight_jobsize), 0, UINT32_MAX},
    {"slurm", "max_age", KEY_OPT_INT, FIELD(slurm_max_age), 1, (int64_t)3650 * 86400},
    {"slurm", "calc_period", KEY_OPT_INT, FIELD(slurm_calc_period), 1, 86400},
    {"slurm", "favor_small", KEY_STRING, FIELD(slurm_favor_small), 0, 0},
    {"slurm", "backfill_interval", KEY_OPT_INT, FIELD(slurm_backfill_interval), 1, 10800},
    {"slurm", "fair_tree", KEY_STRING, FIELD(slurm_fair_tree), 0, 0},
    {"slurm", "billing_cpu", KEY_OPT_NUMBER, FIELD(slurm_billing_cpu), 0, 1000000},
    {"slurm", "billing_gpu", KEY_OPT_NUMBER, FIELD(slurm_billing_gpu), 0, 1000000},
    {"slurm", "cluster_nodes", KEY_OPT_INT, FIELD(slurm_cluster_nodes), 1, 100000000},
    {"slurm", "cluster_cpus", KEY_OPT_INT, FIELD(slurm_cluster_cpus), 1, INT64_MAX / 4},
    {"slurm", "accounts", KEY_STRING, FIELD(slurm_accounts), 0, 0},
    {"slurm", "start_latency", KEY_OPT_NUMBER, FIELD(slurm_start_latency), 0, 60},
    BACKFILL_KEYS("slurm", LUCID_EXP_BF_SLURM),
};

const char *const lucid_exp_backfill_policies[5] = {"fifo", "sjf", "qssf", "lucid", "slurm"};

static int optional_section(const char *section)
{
    return strcmp(section, "fifo") == 0 || strcmp(section, "sjf") == 0 ||
           strcmp(section, "slurm") == 0;
}

void lucid_experiment_defaults(lucid_experiment *exp)
{
    memset(exp, 0, sizeof *exp);
    exp->gpus_per_node = 8;
    exp->start = -1;
    exp->threads = 2;
    exp->seed = 1;
    exp->profiler_nodes = 2;
    exp->profiler_time_limit = 200;
    exp->profiler_factor = 4;
    exp->profiler_autoscale = 1;
    exp->gpu_mem_mib = 24576;
    exp->priority_ratio = 2;
    exp->score_sum = 2;
    exp->pack_threshold = 2;
    exp->scale_down_factor = 5;
    exp->retrain_period = 604800;
    exp->min_history = 2000;
    exp->estimate_period = 86400;
    exp->model_bags = 8;
    exp->warm_start = 1;
}

void lucid_experiment_free(lucid_experiment *exp)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char *base = (char *)exp + keys[i].offset;
        if (keys[i].kind == KEY_PATH || keys[i].kind == KEY_STRING || keys[i].kind == KEY_OPT_INT ||
            keys[i].kind == KEY_OPT_NUMBER) {
            free(*(char **)(void *)base);
            *(char **)(void *)base = NULL;
        }
    }
    for (int i = 0; i < exp->npolicies; i++)
        free(exp->policies[i]);
    exp->npolicies = 0;
    free(exp->path);
    exp->path = NULL;
}

static char *resolve(const char *dir, const char *value)
{
    if (value[0] == '/' || !dir || !*dir)
        return lucid_strdup(value);
    size_t n = strlen(dir) + strlen(value) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, value);
    return p;
}

static int parse_bool(const char *v, int *out)
{
    static const char *const yes[] = {"yes", "true", "on", "1"};
    static const char *const no[] = {"no", "false", "off", "0"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(v, yes[i]) == 0)
            return *out = 1, 0;
        if (strcmp(v, no[i]) == 0)
            return *out = 0, 0;
    }
    return -1;
}

static int set_policies(lucid_experiment *exp, const char *value, char *duplicate,
                        size_t duplicate_size)
{
    for (int i = 0; i < exp->npolicies; i++)
        free(exp->policies[i]);
    exp->npolicies = 0;
    const char *p = value;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *start = p;
        while (*p && *p != ',' && *p != ' ')
            p++;
        if (p == start)
            break;
        if (exp->npolicies == LUCID_EXP_MAX_POLICIES)
            return -1;
        char *name = malloc((size_t)(p - start) + 1);
        if (!name)
            return -1;
        memcpy(name, start, (size_t)(p - start));
        name[p - start] = '\0';
        for (int i = 0; i < exp->npolicies; i++)
            if (strcmp(exp->policies[i], name) == 0) {
                /* Each policy would run twice and write one jobs-<policy>.csv. */
                snprintf(duplicate, duplicate_size, "%s", name);
                free(name);
                return -2;
            }
        exp->policies[exp->npolicies++] = name;
    }
    return exp->npolicies > 0 ? 0 : -1;
}

/* Decimal notation only: "0x10", "1e3" for an integer, "inf" and "nan" are
 * refused (strtoll/strtod would take them and give a surprising value). */
static int is_decimal(const char *s, int fraction)
{
    if (*s == '+' || *s == '-')
        s++;
    int digits = 0;
    while (*s >= '0' && *s <= '9')
        s++, digits++;
    if (fraction && *s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            digits++;
    if (!digits)
        return 0;
    if (fraction && (*s == 'e' || *s == 'E')) {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

/* An integer key's value, checked against its range (KEY_INT, KEY_OPT_INT). */
static int int_in_range(const key_spec *spec, const char *value, int64_t *v, const char *origin,
                        long line, const char *field, lucid_error *err)
{
    if (!is_decimal(value, 0) || lucid_parse_i64(value, v) < 0)
        return lucid_error_at(err, origin, line, field, "'%s' is not an integer", value);
    if (*v < spec->min || *v > spec->max)
        return lucid_error_at(err, origin, line, field, "%lld out of range %lld..%lld",
                              (long long)*v, (long long)spec->min, (long long)spec->max);
    return 0;
}

/* An optional key's value (KEY_OPT_INT, KEY_OPT_NUMBER), checked against
 * its range. */
static int optional_in_range(const key_spec *spec, const char *value, const char *origin,
                             long line, const char *field, lucid_error *err)
{
    int64_t v;
    double d;
    if (spec->kind == KEY_OPT_INT)
        return int_in_range(spec, value, &v, origin, line, field, err);
    if (!is_decimal(value, 1) || lucid_parse_f64(value, &d) < 0)
        return lucid_error_at(err, origin, line, field, "'%s' is not a number", value);
    if (!(d >= (double)spec->min && d <= (double)spec->max))
        return lucid_error_at(err, origin, line, field, "%s out of range %lld..%lld", value,
                              (long long)spec->min, (long long)spec->max);
    return 0;
}

int lucid_experiment_set(lucid_experiment *exp, const char *section, const char *key,
                         const char *value, const char *dir, const char *origin, long line,
                         lucid_error *err)
{
    char field[160];
    snprintf(field, sizeof field, "[%s] %s", section, key);
    const key_spec *spec = NULL;
    int section_known = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (strcmp(keys[i].section, section) != 0)
            continue;
        section_known = 1;
        if (strcmp(keys[i].key, key) == 0)
            spec = &keys[i];
    }
    if (!section_known)
        return lucid_error_at(err, origin, line, field, "unknown section [%s]", section);
    if (!spec)
        return lucid_error_at(err, origin, line, field, "unknown key");
    char *dest = (char *)exp + spec->offset;
    int64_t v;
    double d;
    int b;
    switch (spec->kind) {
    case KEY_OPT_INT:
    case KEY_OPT_NUMBER:
        if (optional_in_range(spec, value, origin, line, field, err) < 0)
            return -1;
        /* fall through - kept as written */
    case KEY_PATH:
    case KEY_STRING: {
        if (!*value)
            return lucid_error_at(err, origin, line, field, "empty value");
        if (spec->offset == FIELD(slurm_favor_small) || spec->offset == FIELD(slurm_fair_tree)) {
            if (parse_bool(value, &b) < 0)
                return lucid_error_at(err, origin, line, field, "'%s' is not yes or no", value);
            value = b ? "yes" : "no"; /* kept as yes / no: one spelling to read */
        }
        char *copy = spec->kind == KEY_PATH ? resolve(dir, value) : lucid_strdup(value);
        if (!copy)
            return lucid_error_set(err, "out of memory");
        free(*(char **)(void *)dest);
        *(char **)(void *)dest = copy;
        return 0;
    }
    case KEY_INT:
        if (int_in_range(spec, value, &v, origin, line, field, err) < 0)
            return -1;
        if (spec->offset == FIELD(start))
            exp->start = v;
        else if (spec->offset == FIELD(profiler_time_limit))
            exp->profiler_time_limit = v;
        else if (spec->offset == FIELD(retrain_period))
            exp->retrain_period = v;
        else if (spec->offset == FIELD(estimate_period))
            exp->estimate_period = v;
        else if (spec->offset == FIELD(seed))
            exp->seed = (uint64_t)v;
        else
            *(int32_t *)(void *)dest = (int32_t)v;
        return 0;
    case KEY_BOOL:
        if (parse_bool(value, &b) < 0)
            return lucid_error_at(err, origin, line, field, "'%s' is not yes/no", value);
        *(int *)(void *)dest = b;
        return 0;
    case KEY_DOUBLE:
        if (!is_decimal(value, 1) || lucid_parse_f64(value, &d) < 0 || d <= 0)
            return lucid_error_at(err, origin, line, field, "'%s' is not a positive number", value);
        *(double *)(void *)dest = d;
        return 0;
    case KEY_POLICIES: {
        char duplicate[64];
        int rc = set_policies(exp, value, duplicate, sizeof duplicate);
        if (rc == -2)
            return lucid_error_at(err, origin, line, field, "policy '%s' is listed twice",
                                  duplicate);
        if (rc < 0)
            return lucid_error_at(err, origin, line, field,
                                  "expected a comma-separated list of at most %d policies",
                                  LUCID_EXP_MAX_POLICIES);
        return 0;
    }
    case KEY_COMPAT:
        if (strcmp(value, "reference") == 0)
            exp->reference = 1;
        else if (strcmp(value, "fixed") == 0 || strcmp(value, "default") == 0)
            exp->reference = 0;
        else
            return lucid_error_at(err, origin, line, field,
                                  "'%s' is not 'reference' or 'fixed'", value);
        return 0;
    }
    return 0;
}

typedef struct parse_ctx {
    lucid_experiment *exp;
    const char *dir, *name;
    lucid_error *err;
    int failed;
} parse_ctx;

/* The value without an inline comment: "#" or ";" at its start or after
 * whitespace starts one (the examples comment with "#"; inih strips only
 * ";" comments, and only with its inline-comment option built in). */
static void strip_comment(const char *value, char *out, size_t size)
{
    size_t n = 0;
    for (const char *c = value; *c; c++) {
        if ((*c == '#' || *c == ';') && (c == value || c[-1] == ' ' || c[-1] == '\t'))
            break;
        n++;
    }
    while (n && (value[n - 1] == ' ' || value[n - 1] == '\t'))
        n--;
    snprintf(out, size, "%.*s", (int)n, value);
}

static int on_key(void *user, const char *section, const char *key, const char *value)
{
    parse_ctx *ctx = user;
    if (ctx->failed)
        return 0;
    char bare[4096];
    strip_comment(value, bare, sizeof bare);
    /* Line unknown here: inih reports it; we patch it into the message below. */
    if (lucid_experiment_set(ctx->exp, section, key, bare, ctx->dir, ctx->name, 0, ctx->err) < 0) {
        ctx->failed = 1;
        return 0;
    }
    return 1;
}

static int finish_parse(parse_ctx *ctx, int rc)
{
    if (rc == 0)
        return 0;
    if (rc == -1)
        return lucid_error_set(ctx->err, "%s: cannot open", ctx->name);
    if (rc == -2)
        return lucid_error_set(ctx->err, "%s: out of memory", ctx->name);
    if (!ctx->failed)
        return lucid_error_at(ctx->err, ctx->name, rc, NULL,
                              "malformed line (expected [section] or key = value)");
    /* Insert the line inih found into "name: field: reason". */
    char message[LUCID_ERROR_MAX];
    size_t skip = strlen(ctx->name);
    const char *rest = ctx->err->msg;
    if (strncmp(rest, ctx->name, skip) == 0 && strncmp(rest + skip, ": ", 2) == 0)
        rest += skip + 2;
    snprintf(message, sizeof message, "%s", rest);
    return lucid_error_at(ctx->err, ctx->name, rc, NULL, "%s", message);
}

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return lucid_strdup(".");
    size_t n = (size_t)(slash - path);
    char *dir = malloc(n + 2);
    if (!dir)
        return NULL;
    memcpy(dir, path, n ? n : 1);
    dir[n ? n : 1] = '\0';
    return dir;
}

int lucid_experiment_load(lucid_experiment *exp, const char *path, lucid_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return lucid_error_set(err, "%s: cannot open: %s", path, strerror(errno));
    /* inih reads a directory as an empty file: an experiment with no keys. */
    if (S_ISDIR(st.st_mode))
        return lucid_error_set(err, "%s: is a directory, not an experiment file", path);
    char *dir = dir_of(path);
    if (!dir)
        return lucid_error_set(err, "out of memory");
    free(exp->path);
    exp->path = lucid_strdup(path);
    parse_ctx ctx = {exp, dir, path, err, 0};
    int rc = finish_parse(&ctx, ini_parse(path, on_key, &ctx));
    free(dir);
    return rc;
}

int lucid_experiment_load_mem(lucid_experiment *exp, const char *name, const char *dir,
                              const char *text, lucid_error *err)
{
    parse_ctx ctx = {exp, dir, name, err, 0};
    return finish_parse(&ctx, ini_parse_string(text, on_key, &ctx));
}

/* The value of key k as written in a file; 0 when the key is unset. */
static int format_value(const key_spec *k, const lucid_experiment *exp, char *buf, size_t size)
{
    const char *base = (const char *)exp + k->offset;
    switch (k->kind) {
    case KEY_PATH:
    case KEY_STRING:
    case KEY_OPT_INT:
    case KEY_OPT_NUMBER: {
        const char *v = *(char *const *)(const void *)base;
        char real[PATH_MAX];
        /* Paths become absolute so the written file works from anywhere. */
        if (v && k->kind == KEY_PATH && realpath(v, real))
            v = real;
        if (!v)
            return 0;
        snprintf(buf, size, "%s", v);
        return 1;
    }
    case KEY_INT:
        if (k->offset == FIELD(start))
            snprintf(buf, size, "%lld", (long long)exp->start);
        else if (k->offset == FIELD(profiler_time_limit))
            snprintf(buf, size, "%lld", (long long)exp->profiler_time_limit);
        else if (k->offset == FIELD(retrain_period))
            snprintf(buf, size, "%lld", (long long)exp->retrain_period);
        else if (k->offset == FIELD(estimate_period))
            snprintf(buf, size, "%lld", (long long)exp->estimate_period);
        else if (k->offset == FIELD(seed))
            snprintf(buf, size, "%llu", (unsigned long long)exp->seed);
        else
            snprintf(buf, size, "%d", *(const int32_t *)(const void *)base);
        return 1;
    case KEY_BOOL:
        snprintf(buf, size, "%s", *(const int *)(const void *)base ? "yes" : "no");
        return 1;
    case KEY_DOUBLE:
        snprintf(buf, size, "%.17g", *(const double *)(const void *)base);
        return 1;
    case KEY_POLICIES: {
        if (exp->npolicies == 0)
            return 0;
        size_t used = 0;
        buf[0] = '\0';
        for (int p = 0; p < exp->npolicies && used < size; p++)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", p ? "," : "",
                                     exp->policies[p]);
        return 1;
    }
    case KEY_COMPAT:
        snprintf(buf, size, "%s", exp->reference ? "reference" : "fixed");
        return 1;
    }
    return 0;
}

int lucid_experiment_write(FILE *out, const lucid_experiment *exp)
{
    const char *section = "";
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const key_spec *k = &keys[i];
        char value[PATH_MAX + 64];
        int has = format_value(k, exp, value, sizeof value);
        if (strcmp(section, k->section) != 0 && (has || !optional_section(k->section))) {
            fprintf(out, "%s[%s]\n", *section ? "\n" : "", k->section);
            section = k->section;
        }
        if (has)
            fprintf(out, "%s = %s\n", k->key, value);
    }
    return ferror(out) ? -1 : 0;
}

int lucid_experiment_inputs(const lucid_experiment *exp, const char **paths, const char **what,
                            int max)
{
    int n = 0;
    if (exp->path && *exp->path && n < max) {
        paths[n] = exp->path;
        what[n++] = "experiment";
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && n < max; i++) {
        /* [simulate] out is the one path that is written, not read. */
        if (keys[i].kind != KEY_PATH || keys[i].offset == FIELD(out))
            continue;
        const char *v = *(char *const *)(const void *)((const char *)exp + keys[i].offset);
        if (!v)
            continue;
        paths[n] = v;
        what[n++] = keys[i].key;
    }
    return n;
}

int lucid_experiment_hash_inputs(const lucid_experiment *exp, uint64_t *hashes, lucid_error *err)
{
    const char *paths[LUCID_EXP_MAX_INPUTS], *what[LUCID_EXP_MAX_INPUTS];
    int n = lucid_experiment_inputs(exp, paths, what, LUCID_EXP_MAX_INPUTS);
    for (int i = 0; i < n; i++) {
        /* A file named twice (one estimates file for QSSF and Lucid) is
         * hashed once: hashing is a tenth of a million-job command. */
        int same = -1;
        for (int j = 0; j < i && same < 0; j++)
            if (strcmp(paths[j], paths[i]) == 0)
                same = j;
        if (same >= 0)
            hashes[i] = hashes[same];
        else if (lucid_hash_file_as(paths[i], LUCID_HASH_XXH64, &hashes[i], err) < 0)
            return -1;
    }
    return 0;
}

int lucid_experiment_manifest(const lucid_experiment *exp, lucid_manifest *m, lucid_error *err)
{
    return lucid_experiment_manifest_hashed(exp, m, NULL, err);
}

int lucid_experiment_manifest_hashed(const lucid_experiment *exp, lucid_manifest *m,
                                     const uint64_t *hashes, lucid_error *err)
{
    char value[PATH_MAX + 64], knobs[4096] = "";
    size_t used = 0;
    int rc = lucid_manifest_add(m, err, "semantics", "%s%s%s",
                                exp->reference ? "reference" : "fixed",
                                exp->fix ? " + fix " : "", exp->fix ? exp->fix : "");
    for (size_t i = 0; i < sizeof keys / sizeof keys[0] && rc == 0; i++) {
        const key_spec *k = &keys[i];
        if (k->kind == KEY_COMPAT || k->offset == FIELD(fix) || !format_value(k, exp, value, sizeof value))
            continue;
        if (k->kind == KEY_PATH)
            continue; /* listed with their hashes below */
        if (strcmp(k->section, "lucid") == 0) {
            if (used < sizeof knobs)
                used += (size_t)snprintf(knobs + used, sizeof knobs - used, "%s%s=%s",
                                         used ? " " : "", k->key, value);
        } else {
            char key[80];
            snprintf(key, sizeof key, "%s.%s", k->section, k->key);
            rc = lucid_manifest_add(m, err, key, "%s", value);
        }
    }
    if (rc == 0)
        rc = lucid_manifest_add(m, err, "knobs", "%s", knobs);
    const char *paths[LUCID_EXP_MAX_INPUTS], *what[LUCID_EXP_MAX_INPUTS];
    int n = lucid_experiment_inputs(exp, paths, what, LUCID_EXP_MAX_INPUTS);
    uint64_t all = LUCID_FNV_OFFSET, made[LUCID_EXP_MAX_INPUTS];
    if (rc == 0 && !hashes) {
        if (lucid_experiment_hash_inputs(exp, made, err) < 0)
            return -1;
        hashes = made;
    }
    for (int i = 0; i < n && rc == 0; i++) {
        uint64_t h = hashes[i];
        char real[PATH_MAX], label[PATH_MAX + 80];
        all = lucid_hash_bytes(all, &h, sizeof h);
        snprintf(label, sizeof label, "%s %s xxh64:%016" PRIx64, what[i],
                 realpath(paths[i], real) ? real : paths[i], h);
        rc = lucid_manifest_add(m, err, "input", "%s", label);
    }
    if (rc == 0)
        rc = lucid_manifest_add(m, err, "inputs_hash", "fnv1a64:%016" PRIx64, all);
    return rc;
}
