/* slurm_io.c — libslurm calls behind slurm_io.h: load jobs/nodes/partitions
 * into plain structs, and the few job updates lucid's decisions need. */
#include "slurm_io.h"

#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "../../plugins/lucid_tres.h"

static int slurm_fail(lucid_error *err, const char *what, uint32_t job_id)
{
    int code = slurm_get_errno();
    if (job_id)
        return lucid_error_set(err, "slurm: %s job %u: %s", what, job_id, slurm_strerror(code));
    return lucid_error_set(err, "slurm: %s: %s", what, slurm_strerror(code));
}

int slurm_io_init(lucid_error *err)
{
    (void)err;
    slurm_init(NULL); /* reads $SLURM_CONF */
    return 0;
}

void slurm_io_fini(void)
{
    slurm_fini();
}

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

static slurm_job_run_state run_state(uint32_t state, char *name, size_t size)
{
    static const struct {
        uint32_t base;
        const char *name;
        slurm_job_run_state state;
    } table[] = {
        {JOB_PENDING, "PENDING", SJ_PENDING},     {JOB_RUNNING, "RUNNING", SJ_RUNNING},
        {JOB_SUSPENDED, "SUSPENDED", SJ_RUNNING}, {JOB_COMPLETE, "COMPLETED", SJ_COMPLETED},
        {JOB_CANCELLED, "CANCELLED", SJ_FAILED},  {JOB_FAILED, "FAILED", SJ_FAILED},
        {JOB_TIMEOUT, "TIMEOUT", SJ_FAILED},      {JOB_NODE_FAIL, "NODE_FAIL", SJ_FAILED},
        {JOB_PREEMPTED, "PREEMPTED", SJ_FAILED},  {JOB_BOOT_FAIL, "BOOT_FAIL", SJ_FAILED},
        {JOB_DEADLINE, "DEADLINE", SJ_FAILED},    {JOB_OOM, "OUT_OF_MEMORY", SJ_FAILED},
    };
    uint32_t base = state & JOB_STATE_BASE;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].base == base) {
            copy(name, size, table[i].name);
            return table[i].state;
        }
    copy(name, size, "UNKNOWN");
    return SJ_FAILED;
}

static void read_job(const slurm_job_info_t *info, slurm_job *job)
{
    memset(job, 0, sizeof *job);
    job->id = info->job_id;
    copy(job->user, sizeof job->user, info->user_name);
    if (!job->user[0]) {
        struct passwd *pw = getpwuid(info->user_id);
        if (pw)
            copy(job->user, sizeof job->user, pw->pw_name);
        else
            snprintf(job->user, sizeof job->user, "%u", info->user_id);
    }
    copy(job->name, sizeof job->name, info->name);
    copy(job->partition, sizeof job->partition, info->partition);
    job->state = run_state(info->job_state, job->state_name, sizeof job->state_name);
    job->completing = (info->job_state & JOB_COMPLETING) != 0;
    job->requeueing = (info->job_state & (JOB_REQUEUE | JOB_REQUEUE_HOLD | JOB_REQUEUE_FED)) != 0;
    job->held = info->priority == 0;
    job->nodes = info->num_nodes > 0 ? (int)info->num_nodes : 1;
    long per_job = lucid_tres_gpus(info->tres_per_job);
    long per_node = lucid_tres_gpus(info->tres_per_node);
    job->gres_malformed = per_job < 0 || per_node < 0;
    if (!job->gres_malformed) {
        job->gpus_per_node = per_job > 0 ? 0 : (int)per_node;
        job->gpus = per_job > 0 ? (int)per_job : (int)per_node * job->nodes;
    }
    job->cpus = info->num_cpus == NO_VAL ? 0 : (int)info->num_cpus;
    job->submit_time = info->submit_time;
    job->start_time = info->start_time;
    job->end_time = info->end_time;
    job->time_limit_min =
        (info->time_limit == INFINITE || info->time_limit == NO_VAL) ? 0 : info->time_limit;
    job->restarts = info->restart_cnt;
    copy(job->node_list, sizeof job->node_list, info->nodes);
    copy(job->admin_comment, sizeof job->admin_comment, info->admin_comment);
    /* "gpu:4(IDX:0-3)" or "gpu:a100:4(IDX:0-3)" for the first node. */
    if (info->gres_detail_cnt > 0 && info->gres_detail_str && info->gres_detail_str[0]) {
        const char *idx = strstr(info->gres_detail_str[0], "IDX:");
        if (idx)
            snprintf(job->first_gpus, sizeof job->first_gpus, "%.*s",
                     (int)strcspn(idx + 4, ")"), idx + 4);
    }
}

long slurm_io_jobs(slurm_job **out, lucid_error *err)
{
    job_info_msg_t *msg = NULL;
    if (slurm_load_jobs((time_t)0, &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS)
        return slurm_fail(err, "loading jobs", 0);
    slurm_job *jobs = calloc(msg->record_count ? msg->record_count : 1, sizeof *jobs);
    if (!jobs) {
        slurm_free_job_info_msg(msg);
        return lucid_error_set(err, "out of memory");
    }
    for (uint32_t i = 0; i < msg->record_count; i++)
        read_job(&msg->job_array[i], &jobs[i]);
    long count = (long)msg->record_count;
    slurm_free_job_info_msg(msg);
    *out = jobs;
    return count;
}

/* "gpu:8", "gpu:a100:8", "gpu:4(IDX:0-3)", "gpu:(null):0(IDX:N/A)": the count
 * is the number after the last ':' before "(IDX" (or the end of the item). */
static int gres_gpu_count(const char *gres)
{
    if (!gres)
        return 0;
    const char *gpu = strstr(gres, "gpu");
    if (!gpu)
        return 0;
    const char *idx = strstr(gpu, "(IDX");
    const char *end = idx ? idx : gpu + strcspn(gpu, ",");
    const char *colon = NULL;
    for (const char *p = gpu; p < end; p++)
        if (*p == ':')
            colon = p;
    return colon ? atoi(colon + 1) : 1;
}

/* Node name -> the first of `partitions` that holds it. */
static int node_partitions(const char *partitions, slurm_node *nodes, long count,
                           lucid_error *err)
{
    partition_info_msg_t *msg = NULL;
    if (slurm_load_partitions((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS)
        return slurm_fail(err, "loading partitions", 0);
    char wanted[512];
    copy(wanted, sizeof wanted, partitions);
    char *save = NULL;
    for (char *part = strtok_r(wanted, ",", &save); part; part = strtok_r(NULL, ",", &save)) {
        for (uint32_t i = 0; i < msg->record_count; i++) {
            partition_info_t *info = &msg->partition_array[i];
            if (!info->name || strcmp(info->name, part) != 0 || !info->nodes)
                continue;
            hostlist_t hosts = slurm_hostlist_create(info->nodes);
            char *host;
            while (hosts && (host = slurm_hostlist_shift(hosts))) {
                for (long k = 0; k < count; k++)
                    if (!nodes[k].partition[0] && strcmp(nodes[k].name, host) == 0)
                        copy(nodes[k].partition, sizeof nodes[k].partition, part);
                free(host);
            }
            if (hosts)
                slurm_hostlist_destroy(hosts);
        }
    }
    slurm_free_partition_info_msg(msg);
    return 0;
}

long slurm_io_nodes(const char *partitions, slurm_node **out, lucid_error *err)
{
    node_info_msg_t *msg = NULL;
    if (slurm_load_node((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS)
        return slurm_fail(err, "loading nodes", 0);
    slurm_node *nodes = calloc(msg->record_count ? msg->record_count : 1, sizeof *nodes);
    if (!nodes) {
        slurm_free_node_info_msg(msg);
        return lucid_error_set(err, "out of memory");
    }
    long count = 0;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        node_info_t *info = &msg->node_array[i];
        if (!info->name)
            continue;
        slurm_node *node = &nodes[count++];
        copy(node->name, sizeof node->name, info->name);
        node->gpus = gres_gpu_count(info->gres);
        node->gpus_used = gres_gpu_count(info->gres_used);
        uint32_t base = info->node_state & NODE_STATE_BASE;
        node->usable = (base == NODE_STATE_IDLE || base == NODE_STATE_MIXED ||
                        base == NODE_STATE_ALLOCATED) &&
                       !(info->node_state & (NODE_STATE_DRAIN | NODE_STATE_NO_RESPOND));
    }
    slurm_free_node_info_msg(msg);
    if (node_partitions(partitions, nodes, count, err) < 0) {
        free(nodes);
        return -1;
    }
    *out = nodes;
    return count;
}

static int update(job_desc_msg_t *desc, const char *what, lucid_error *err)
{
    if (slurm_update_job(desc) != SLURM_SUCCESS)
        return slurm_fail(err, what, desc->job_id);
    return 0;
}

int slurm_io_start(uint32_t job_id, const char *partition, const char *nodes,
                   const char *packed_gpus, lucid_error *err)
{
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    desc.job_id = job_id;
    char partition_buf[64], nodes_buf[256], no_gres[] = "", comment[128];
    copy(partition_buf, sizeof partition_buf, partition);
    copy(nodes_buf, sizeof nodes_buf, nodes);
    desc.partition = partition_buf;
    desc.req_nodes = nodes_buf;
    if (packed_gpus) {
        /* Slurm will not give the partner's GPUs twice: the packed job runs
         * without GPU gres and the SPANK plugin exposes the shared ones.  An
         * empty TRES list, not "gres:gpu:0": a zero count took every GPU of
         * the node in Slurm 22.05. */
        snprintf(comment, sizeof comment, "lucid-gpus=%s", packed_gpus);
        desc.admin_comment = comment;
        desc.tres_per_node = no_gres;
    }
    if (update(&desc, "pinning", err) < 0)
        return -1;
    /* A held job refuses other updates of its priority: release on its own. */
    slurm_init_job_desc_msg(&desc);
    desc.job_id = job_id;
    desc.priority = INFINITE;
    return update(&desc, "releasing", err);
}

int slurm_io_requeue_hold(uint32_t job_id, lucid_error *err)
{
    if (slurm_requeue(job_id, JOB_REQUEUE_HOLD) != SLURM_SUCCESS)
        return slurm_fail(err, "requeueing", job_id);
    return 0;
}

int slurm_io_move(uint32_t job_id, const char *partition, lucid_error *err)
{
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    desc.job_id = job_id;
    char partition_buf[64], no_nodes[] = "";
    copy(partition_buf, sizeof partition_buf, partition);
    desc.partition = partition_buf;
    desc.req_nodes = no_nodes;
    /* Requeue otherwise delays eligibility by about two minutes. */
    desc.begin_time = time(NULL);
    return update(&desc, "moving", err);
}

int slurm_io_cancel(uint32_t job_id, lucid_error *err)
{
    if (slurm_kill_job(job_id, SIGKILL, 0) != SLURM_SUCCESS)
        return slurm_fail(err, "cancelling", job_id);
    return 0;
}
