/* job_submit_lucid.c — Slurm job_submit plugin: lucid's intake.
 *
 * Every new job in a partition lucid manages is held at submission
 * (priority 0) with the admin comment `lucid: waiting for lucidd`, so nothing
 * starts until lucidd decides where and when; a job submitted with `sbatch -H`
 * is marked `lucid-user-hold` instead (lucidd keeps it waiting, taking no
 * capacity, until its owner runs `lucid release JOB`).  Refused at sbatch with
 * one line: more GPUs than lucid's largest partition holds (`max_gpus`), more
 * GPUs per node than its largest node has (`max_gpus_per_node`), a GPU request
 * that cannot be read.  Jobs in other partitions pass untouched, and so do
 * jobs that ask no GPUs (or `--gres=gpu:0`), heterogeneous jobs, jobs of a
 * reservation and `--gpus-per-socket` requests: Slurm schedules them as they
 * are (lucidd records them as handed back).
 *
 * Fail-open: with `heartbeat=PATH`, lucidd rewrites PATH every tick
 * (`pid=P time=UNIX intake=MAXJOBID`); when it is missing or older than
 * `fail_open_after` seconds (180), new jobs are not held (one slurm_info line
 * per job, and the user sees it from sbatch).
 *
 * job_modify: a user (not root, not SlurmUser) may not release a job lucid
 * has not yet taken in (id above the heartbeat's `intake`): until lucidd turns
 * the intake hold into an administrator's hold, Slurm would let the owner lift
 * it and skip lucid.  Jobs at or below `intake` are admin-held, so Slurm
 * refuses by itself.  Resizes are checked against the GPU limits too.
 *
 * Configuration: `lucid.conf` next to slurm.conf ($SLURM_CONF's folder, or
 * /etc/slurm), lines `partitions=main,profiling`, `max_gpus=32`,
 * `max_gpus_per_node=8`, `heartbeat=/run/lucid/heartbeat`,
 * `fail_open_after=180`; absent file: every partition is managed, no limit
 * is checked and there is no fail-open (said once at init).  The file is read
 * at every submission (a few hundred bytes) so an operator can change it
 * without restarting slurmctld.  docs/live.md, "Intake rules", has the rules.
 *
 * Built from Slurm's public headers only (no slurmctld internals), so the
 * plugin cannot see a job's record in job_modify nor the partitions' nodes:
 * `-w`/`--exclude` that leave no node are left to lucidd. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "lucid_tres.h"

const char plugin_name[] = "lucid: hold new jobs for the lucid scheduler";
const char plugin_type[] = "job_submit/lucid";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

int init(void);
int fini(void);
int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg);
/* 22.05 calls job_modify with three arguments (job_submit.c:
 * ops.modify(job_desc, job_ptr, submit_uid)): no message reaches the user,
 * so a refusal is said in slurmctld's log and by its error code. */
int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid);
/* slurmctld frees *err_msg with its own allocator (xfree checks a header that
 * malloc does not write), so the message must come from its xstrdup.  Not in
 * the public headers; exported by libslurmfull, which slurmctld links. */
extern char *slurm_xstrdup(const char *str);
extern void slurm_xfree(void **item);
/* slurmctld's log (declared by spank.h, exported by libslurmfull). */
extern void slurm_info(const char *format, ...) __attribute__((format(printf, 1, 2)));

typedef struct lucid_conf {
    int found;               /* lucid.conf was read */
    char path[4096];         /* where it was looked for */
    char partitions[512];    /* comma list; empty = all */
    long max_gpus;           /* 0 = unchecked */
    long max_gpus_per_node;  /* 0 = unchecked */
    char heartbeat[1024];    /* lucidd's heartbeat file; empty = no fail-open */
    long fail_open_after;    /* seconds */
    char share_gres[32];     /* the count-only GRES lucidd gives packed jobs; "" none */
} lucid_conf;

static void read_conf(lucid_conf *conf);

int init(void)
{
    lucid_conf conf;
    read_conf(&conf);
    if (!conf.found)
        slurm_info("lucid: no %s: holding new jobs of every partition for lucidd, "
                   "no GPU limits, no fail-open",
                   conf.path);
    return SLURM_SUCCESS;
}
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

/* A value longer than its field would name another partition or file: such a
 * line is ignored rather than cut (and said in slurmctld's log). */
static void set_field(char *dst, size_t size, const char *key, const char *value)
{
    size_t n = strlen(value);
    if (n >= size) {
        slurm_info("lucid: lucid.conf: %s longer than %zu bytes, ignored", key, size - 1);
        return;
    }
    memcpy(dst, value, n + 1);
}

static void read_conf(lucid_conf *conf)
{
    char line[1200];
    memset(conf, 0, sizeof *conf);
    conf->fail_open_after = 180;
    snprintf(conf->share_gres, sizeof conf->share_gres, "lucidshare");
    conf_path(conf->path, sizeof conf->path);
    FILE *file = fopen(conf->path, "r");
    if (!file)
        return;
    conf->found = 1;
    while (fgets(line, sizeof line, file)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "partitions=", 11) == 0)
            set_field(conf->partitions, sizeof conf->partitions, "partitions", line + 11);
        else if (strncmp(line, "max_gpus=", 9) == 0)
            conf->max_gpus = strtol(line + 9, NULL, 10);
        else if (strncmp(line, "max_gpus_per_node=", 18) == 0)
            conf->max_gpus_per_node = strtol(line + 18, NULL, 10);
        else if (strncmp(line, "heartbeat=", 10) == 0)
            set_field(conf->heartbeat, sizeof conf->heartbeat, "heartbeat", line + 10);
        else if (strncmp(line, "fail_open_after=", 16) == 0)
            conf->fail_open_after = strtol(line + 16, NULL, 10);
        else if (strncmp(line, "share_gres=", 11) == 0)
            set_field(conf->share_gres, sizeof conf->share_gres, "share_gres",
                      strcmp(line + 11, "none") == 0 ? "" : line + 11);
    }
    fclose(file);
}

/* lucidd's heartbeat: `pid=P time=UNIX intake=MAXJOBID`, rewritten whole
 * (rename) every tick.  Returns its age in seconds (the `time` field, else
 * the file's mtime), or -1 when the file cannot be read; *intake gets the
 * watermark (0 when absent). */
static long heartbeat_age(const char *path, unsigned long *intake)
{
    *intake = 0;
    struct stat st;
    FILE *file = fopen(path, "r");
    if (!file)
        return -1;
    if (fstat(fileno(file), &st) != 0) {
        fclose(file);
        return -1;
    }
    char line[256] = "";
    if (!fgets(line, sizeof line, file))
        line[0] = '\0';
    fclose(file);
    long when = (long)st.st_mtime;
    const char *t = strstr(line, "time=");
    if (t && strtol(t + 5, NULL, 10) > 0)
        when = strtol(t + 5, NULL, 10);
    const char *in = strstr(line, "intake=");
    if (in)
        *intake = strtoul(in + 7, NULL, 10);
    long age = (long)time(NULL) - when;
    return age < 0 ? 0 : age;
}

/* Is lucidd silent past the bound?  Writes why into `why` when it is;
 * *intake gets the heartbeat's watermark. */
static int lucidd_silent(const lucid_conf *conf, unsigned long *intake, char *why, size_t size)
{
    *intake = 0;
    if (!conf->heartbeat[0])
        return 0;
    long age = heartbeat_age(conf->heartbeat, intake);
    if (age < 0) {
        snprintf(why, size, "lucid: lucidd silent (no heartbeat %s)", conf->heartbeat);
        return 1;
    }
    if (age > conf->fail_open_after) {
        snprintf(why, size, "lucid: lucidd silent for %ld s (%s)", age, conf->heartbeat);
        return 1;
    }
    return 0;
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

/* GPUs asked per node (--gres=gpu:N, --gpus-per-node=N), 0 when per job. */
static long requested_gpus_per_node(const job_desc_msg_t *job)
{
    return lucid_tres_gpus(job->tres_per_node);
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

static long gpus_in(const char *tres)
{
    return tres && strstr(tres, "gpu") ? lucid_tres_gpus(tres) : 0;
}

static int passes_untouched(const job_desc_msg_t *job)
{
    long gpus = gpus_in(job->tres_per_job) + gpus_in(job->tres_per_node) +
                gpus_in(job->tres_per_task) + gpus_in(job->tres_per_socket);
    return gpus <= 0 || gpus_in(job->tres_per_socket) > 0 ||
           job->het_job_offset != NO_VAL || (job->reservation && job->reservation[0]);
}

/* The GPU limits of lucid.conf; SLURM_SUCCESS or an error with *err_msg. */
static int check_gpus(const lucid_conf *conf, const job_desc_msg_t *job_desc, char **err_msg)
{
    long gpus = requested_gpus(job_desc);
    long per_node = requested_gpus_per_node(job_desc);
    if (gpus < 0 || per_node < 0) {
        *err_msg = slurm_xstrdup("lucid: malformed GPU request (expected e.g. --gres=gpu:4 or --gpus=16)");
        return ESLURM_INVALID_GRES;
    }
    char msg[200];
    if (conf->max_gpus_per_node > 0 && per_node > conf->max_gpus_per_node) {
        snprintf(msg, sizeof msg,
                 "lucid: job asks for %ld GPUs per node but the largest node lucid manages has %ld",
                 per_node, conf->max_gpus_per_node);
        *err_msg = slurm_xstrdup(msg);
        return ESLURM_INVALID_GRES;
    }
    if (conf->max_gpus > 0 && gpus > conf->max_gpus) {
        snprintf(msg, sizeof msg,
                 "lucid: job asks for %ld GPUs but the largest partition lucid manages has %ld",
                 gpus, conf->max_gpus);
        *err_msg = slurm_xstrdup(msg);
        return ESLURM_INVALID_GRES;
    }
    return SLURM_SUCCESS;
}

/* Only lucidd asks the share GRES (for a packed job, as SlurmUser): from a
 * user it would take a packed job's accounting slot and give no GPU. */
static int asks_share(const lucid_conf *conf, const job_desc_msg_t *job_desc)
{
    return lucid_tres_names(job_desc->tres_per_job, conf->share_gres) ||
           lucid_tres_names(job_desc->tres_per_node, conf->share_gres) ||
           lucid_tres_names(job_desc->tres_per_socket, conf->share_gres) ||
           lucid_tres_names(job_desc->tres_per_task, conf->share_gres);
}

static int is_operator(uint32_t uid) { return uid == 0 || uid == (uint32_t)getuid(); }

int job_submit(job_desc_msg_t *job_desc, uint32_t submit_uid, char **err_msg)
{
    lucid_conf conf;
    read_conf(&conf);
    if (!is_operator(submit_uid) && asks_share(&conf, job_desc)) {
        char msg[200];
        snprintf(msg, sizeof msg,
                 "lucid: gres/%s is lucid's own (it accounts packed jobs and gives no GPU): "
                 "ask for GPUs, e.g. --gres=gpu:1",
                 conf.share_gres);
        *err_msg = slurm_xstrdup(msg);
        return ESLURM_INVALID_GRES;
    }
    if (!managed(&conf, job_desc->partition))
        return SLURM_SUCCESS;
    int rc = check_gpus(&conf, job_desc, err_msg);
    if (rc != SLURM_SUCCESS)
        return rc;
    /* Requests lucid leaves to Slurm as they are (docs/live.md, "Every
     * request form"): no GPUs (nothing to profile or pack), heterogeneous
     * jobs (Slurm starts their components together), --gpus-per-socket and
     * jobs of a reservation.  Not held: Slurm schedules them at once. */
    if (passes_untouched(job_desc))
        return SLURM_SUCCESS;
    /* Fail-open: with lucidd silent a held job would wait for nobody. */
    unsigned long intake;
    char why[1200];
    if (lucidd_silent(&conf, &intake, why, sizeof why)) {
        slurm_info("%s; job passes to Slurm unheld", why);
        char msg[1300];
        snprintf(msg, sizeof msg, "%s; job passes to Slurm unheld", why);
        *err_msg = slurm_xstrdup(msg); /* sbatch prints it; the job is accepted */
        return SLURM_SUCCESS;
    }
    /* `sbatch -H` arrives with priority 0: the user's hold, which lucidd keeps
     * (no capacity taken) until the owner runs `lucid release`.  slurmctld
     * checked the admin comment's permission before calling this plugin. */
    const char *comment = job_desc->priority == 0 ? "lucid-user-hold" : "lucid: waiting for lucidd";
    slurm_xfree((void **)&job_desc->admin_comment); /* an operator's, xmalloc'ed */
    job_desc->admin_comment = slurm_xstrdup(comment);
    /* Held: lucidd releases it (priority = its site factor) when it decides. */
    job_desc->priority = 0;
    /* A profiled job is requeued and runs again on main: Slurm would truncate
     * its --output file then (io_get_file_flags: truncate unless append), so
     * the profiling run's output is kept unless the user chose a mode. */
    if (job_desc->open_mode == 0)
        job_desc->open_mode = OPEN_MODE_APPEND;
    return SLURM_SUCCESS;
}

/* The job an update names: job_id, or the leading number of job_id_str
 * ("123", "123_4" for an array task: the array's id). */
static unsigned long update_job_id(const job_desc_msg_t *job_desc)
{
    if (job_desc->job_id_str && job_desc->job_id_str[0])
        return strtoul(job_desc->job_id_str, NULL, 10);
    return job_desc->job_id == NO_VAL ? 0 : job_desc->job_id;
}

int job_modify(job_desc_msg_t *job_desc, void *job_ptr, uint32_t submit_uid)
{
    (void)job_ptr; /* slurmctld's internal record: not readable from public headers */
    lucid_conf conf;
    read_conf(&conf);
    int operator = is_operator(submit_uid);
    if (!operator && asks_share(&conf, job_desc)) {
        slurm_info("lucid: gres/%s is lucid's own (update of job %lu by uid %u refused)",
                   conf.share_gres, update_job_id(job_desc), submit_uid);
        return ESLURM_INVALID_GRES;
    }
    if (job_desc->tres_per_node || job_desc->tres_per_job) {
        char *why = NULL;
        int rc = check_gpus(&conf, job_desc, &why);
        if (rc != SLURM_SUCCESS) {
            slurm_info("%s (update of job %lu by uid %u refused)", why, update_job_id(job_desc),
                       submit_uid);
            slurm_xfree((void **)&why);
            return rc;
        }
    }
    if (job_desc->priority != INFINITE || operator || !conf.heartbeat[0])
        return SLURM_SUCCESS;
    unsigned long intake;
    char why[1200];
    /* A silent lucidd takes nothing in: the user's own hold is theirs again. */
    if (lucidd_silent(&conf, &intake, why, sizeof why))
        return SLURM_SUCCESS;
    unsigned long id = update_job_id(job_desc);
    if (id == 0 || id <= intake)
        return SLURM_SUCCESS; /* admin-held by lucidd: Slurm itself refuses */
    char msg[200];
    snprintf(msg, sizeof msg,
             "lucid: job %lu waits for the lucid scheduler and cannot be released by hand "
             "(lucid queue -j %lu)",
             id, id);
    slurm_info("%s (uid %u)", msg, submit_uid);
    return ESLURM_ACCESS_DENIED;
}
