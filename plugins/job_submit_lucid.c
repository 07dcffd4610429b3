/* job_submit_lucid.c — Slurm job_submit plugin: lucid's intake.
 *
 * Every new job in a partition lucid manages is held at submission
 * (priority 0), so nothing starts until lucidd decides where and when; a job
 * that asks for more GPUs than lucid's largest partition holds is refused
 * with a one-line message the user sees from sbatch.  Jobs in other
 * partitions pass untouched.
 *
 * Configuration: `lucid.conf` next to slurm.conf ($SLURM_CONF's folder, or
 * /etc/slurm), lines `partitions=main,profiling` and `max_gpus=32`; absent
 * file: every partition is managed and no GPU limit is checked.  The file is
 * read at every submission (a few hundred bytes) so lucidd or an operator
 * can change it without restarting slurmctld.
 *
 * Built from Slurm's public headers only (no slurmctld internals). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "lucid_tres.h"

const char plugin_name[] = "lucid: hold new jobs for the lucid scheduler";
const char plugin_type[] = "job_submit/lucid";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void);
int fini(void);
int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg);
int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid, char **err_msg);
/* slurmctld frees *err_msg with its own allocator (xfree checks a header that
 * malloc does not write), so the message must come from its xstrdup.  Not in
 * the public headers; exported by libslurmfull, which slurmctld links. */
extern char *slurm_xstrdup(const char *str);

typedef struct lucid_conf {
    char partitions[512]; /* comma list; empty = all */
    long max_gpus;        /* 0 = unchecked */
} lucid_conf;

int init(void) { return SLURM_SUCCESS; }
int fini(void) { return SLURM_SUCCESS; }

static void conf_path(char *buf, size_t size)
{
    const char *slurm_conf = getenv("SLURM_CONF");
    const char *slash = slurm_conf ? strrchr(slurm_conf, '/') : NULL;
    if (slash)
        snprintf(buf, size, "%.*s/lucid.conf", (int)(slash - slurm_conf), slurm_conf);
    else
        snprintf(buf, size, "/etc/slurm/lucid.conf");
}

static void read_conf(lucid_conf *conf)
{
    char path[4096], line[500];
    memset(conf, 0, sizeof *conf);
    conf_path(path, sizeof path);
    FILE *file = fopen(path, "r");
    if (!file)
        return;
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "partitions=", 11) == 0)
            snprintf(conf->partitions, sizeof conf->partitions, "%s", line + 11);
        else if (strncmp(line, "max_gpus=", 9) == 0)
            conf->max_gpus = strtol(line + 9, NULL, 10);
    }
    fclose(file);
}

/* Is `name` one item of the comma list? */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        if (!end)
            break;
        p = end + 1;
    }
    return 0;
}

/* A job may name several partitions ("main,profiling"); it is lucid's when
 * any of them is.  No partition means the default one, which lucid manages
 * whenever it manages any. */
static int managed(const lucid_conf *conf, const char *partitions)
{
    if (conf->partitions[0] == '\0' || !partitions || !*partitions)
        return 1;
    char copy[512];
    snprintf(copy, sizeof copy, "%s", partitions);
    char *save = NULL;
    for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
        if (in_list(conf->partitions, p))
            return 1;
    return 0;
}

static long requested_gpus(const job_desc_msg_t *job)
{
    long per_job = lucid_tres_gpus(job->tres_per_job);
    long per_node = lucid_tres_gpus(job->tres_per_node);
    if (per_job < 0 || per_node < 0)
        return -1;
    long nodes = (job->min_nodes == NO_VAL || job->min_nodes == 0) ? 1 : job->min_nodes;
    long total = per_job > 0 ? per_job : per_node * nodes;
    return total;
}

int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
    (void)submit_uid;
    lucid_conf conf;
    read_conf(&conf);
    if (!managed(&conf, job_desc->partition))
        return SLURM_SUCCESS;
    long gpus = requested_gpus(job_desc);
    if (gpus < 0) {
        *err_msg = slurm_xstrdup("lucid: malformed GPU request (expected e.g. --gres=gpu:4 or --gpus=16)");
        return ESLURM_INVALID_GRES;
    }
    if (conf.max_gpus > 0 && gpus > conf.max_gpus) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "lucid: job asks for %ld GPUs but the largest partition lucid manages has %ld",
                 gpus, conf.max_gpus);
        *err_msg = slurm_xstrdup(msg);
        return ESLURM_INVALID_GRES;
    }
    /* Held: lucidd releases it (priority = its site factor) when it decides. */
    job_desc->priority = 0;
    return SLURM_SUCCESS;
}

int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid, char **err_msg)
{
    (void)job_desc;
    (void)job_ptr;
    (void)submit_uid;
    (void)err_msg;
    return SLURM_SUCCESS;
}
