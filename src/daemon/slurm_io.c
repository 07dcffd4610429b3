/* slurm_io.c — libslurm calls behind slurm_io.h: load jobs/nodes/partitions
 * into plain structs, and the few job updates lucid's decisions need. */
#include "slurm_io.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/slurmdb.h>

#include "../../plugins/lucid_tres.h"
#include "lucid/util.h"

/* Exported by libslurm but not declared in 22.05's public headers. */
extern char *slurm_job_reason_string(enum job_state_reason inx);
extern void slurm_free_stats_response_msg(stats_info_response_msg_t *msg);
extern slurm_conf_t slurm_conf; /* the configuration slurm_init read */
extern void slurm_xfree(void **item); /* xfree: frees what libslurm's xmalloc gave */
extern void slurm_xfree_ptr(void *ptr);
extern char *slurm_xstrdup(const char *str);
extern char *slurm_job_state_string(uint32_t inx);
extern void slurm_destroy_selected_step(void *object);
extern int slurm_addto_step_list(List step_list, char *names);

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

/* Every text from Slurm is copied as valid UTF-8 cut on a character
 * boundary: a job name cut mid-character must not make its JSON invalid. */
static void copy(char *dst, size_t size, const char *src)
{
    lucid_utf8_copy(dst, size, src);
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

/* "gres:gpu:4" in cpus_per_tres / mem_per_tres: the number per GPU. */
static long per_gpu(const char *tres)
{
    if (!tres || !strstr(tres, "gpu"))
        return 0;
    long n = lucid_tres_gpus(tres);
    return n > 0 ? n : 0;
}

/* What the job asks beyond GPUs (fit.h), and the requests lucid leaves to
 * Slurm as they are (docs/live.md, "Every request form"). */
static void read_fit(const slurm_job_info_t *info, slurm_job *job)
{
    fit_request *f = &job->fit;
    int nodes = job->nodes > 0 ? job->nodes : 1;
    long cpus = info->num_cpus == NO_VAL ? 0 : (long)info->num_cpus;
    long per_node = (cpus + nodes - 1) / nodes;
    if (info->pn_min_cpus != NO_VAL16 && info->pn_min_cpus > per_node)
        per_node = info->pn_min_cpus;
    f->cpus_node = (int)per_node;
    f->cpus_per_gpu = (int)per_gpu(info->cpus_per_tres);
    f->mem_per_gpu_mib = per_gpu(info->mem_per_tres);
    if (info->pn_min_memory != NO_VAL64 && info->pn_min_memory != INFINITE64) {
        if (info->pn_min_memory & MEM_PER_CPU)
            f->mem_per_cpu_mib = (int64_t)(info->pn_min_memory & ~MEM_PER_CPU);
        else
            f->mem_node_mib = (int64_t)info->pn_min_memory;
    }
    f->whole = info->shared == JOB_SHARED_NONE;
    copy(job->account, sizeof job->account, info->account);
    copy(job->qos, sizeof job->qos, info->qos);
    copy(f->features, sizeof f->features, info->features);
    f->time_limit_s = (info->time_limit == INFINITE || info->time_limit == NO_VAL)
                          ? 0 : (int64_t)info->time_limit * 60;
    if (info->het_job_id && info->het_job_id != NO_VAL)
        snprintf(job->pass_why, sizeof job->pass_why,
                 "a heterogeneous job (component %u of %u): Slurm starts its components together",
                 info->het_job_offset, info->het_job_id);
    else if (lucid_tres_gpus(info->tres_per_socket) > 0)
        snprintf(job->pass_why, sizeof job->pass_why,
                 "--gpus-per-socket: its GPU count follows Slurm's socket binding");
    else if (info->resv_name && info->resv_name[0])
        snprintf(job->pass_why, sizeof job->pass_why, "runs in reservation %.64s",
                 info->resv_name);
    else if (fit_features_match(f->features, "") < 0)
        snprintf(job->pass_why, sizeof job->pass_why, "feature expression %.64s", f->features);
}

static void read_job(const slurm_job_info_t *info, slurm_job *job)
{
    memset(job, 0, sizeof *job);
    job->id = info->job_id;
    job->uid = info->user_id;
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
    job->reason_code = info->state_reason;
    job->admin_held = job->held && info->state_reason == WAIT_HELD;
    copy(job->reason, sizeof job->reason, slurm_job_reason_string(info->state_reason));
    job->nodes = info->num_nodes > 0 ? (int)info->num_nodes : 1;
    copy(job->req_nodes, sizeof job->req_nodes, info->req_nodes);
    copy(job->exc_nodes, sizeof job->exc_nodes, info->exc_nodes);
    copy(job->dependency, sizeof job->dependency, info->dependency);
    if (info->tres_per_job && info->tres_per_job[0])
        snprintf(job->gpu_request, sizeof job->gpu_request, "tpj=%s", info->tres_per_job);
    else if (info->tres_per_node && info->tres_per_node[0])
        snprintf(job->gpu_request, sizeof job->gpu_request, "tpn=%s", info->tres_per_node);
    if (info->array_job_id && info->array_job_id != NO_VAL) {
        job->array_job_id = info->array_job_id;
        job->array_task_id = info->array_task_id;
        copy(job->array_tasks, sizeof job->array_tasks, info->array_task_str);
    }
    long per_job = lucid_tres_gpus(info->tres_per_job);
    long per_node = lucid_tres_gpus(info->tres_per_node);
    long per_task = lucid_tres_gpus(info->tres_per_task);
    long per_socket = lucid_tres_gpus(info->tres_per_socket);
    job->gres_malformed = per_job < 0 || per_node < 0 || per_task < 0 || per_socket < 0;
    if (!job->gres_malformed) {
        /* --gpus-per-task with -n: Slurm gives per task x tasks, on nodes of
         * its choosing unless -N fixed them (read as a per-job count). */
        long tasks = info->num_tasks > 0 && info->num_tasks != NO_VAL ? info->num_tasks : 1;
        if (per_job == 0 && per_task > 0)
            per_job = per_task * tasks;
        job->gpus_per_node = per_job > 0 ? 0 : (int)per_node;
        job->gpus = per_job > 0 ? (int)per_job : (int)per_node * job->nodes;
    }
    /* --gres=gpu:0 asks none: a CPU job as far as lucid goes. */
    job->asks_gpus = job->gpus > 0 || job->gres_malformed;
    if (!lucid_tres_gpu_type(info->tres_per_job, job->fit.gpu_type, sizeof job->fit.gpu_type) &&
        !lucid_tres_gpu_type(info->tres_per_node, job->fit.gpu_type, sizeof job->fit.gpu_type))
        lucid_tres_gpu_type(info->tres_per_task, job->fit.gpu_type, sizeof job->fit.gpu_type);
    /* max_nodes is 0 unless -N (or --nodes=a-b) was given. */
    job->nodes_fixed = job->gpus_per_node > 0 || info->max_nodes > 0;
    job->cpus = info->num_cpus == NO_VAL ? 0 : (int)info->num_cpus;
    read_fit(info, job);
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

/* libslurm 22.05's slurm_free_job_info_members does not free five strings
 * its unpacker allocates (slurm_protocol_pack.c, _unpack_job_info_members:
 * admin_comment, system_comment, prefer, cluster_features, cronspec; Slurm
 * bug 17246, fixed in 23.02.5).  Every job lucid manages has an
 * AdminComment, so every listing leaked ~100 bytes per job: 2,000 jobs at
 * two ticks a second, 2.4 GB an hour.  They are freed here first;
 * slurm_xfree sets each pointer to NULL, so a libslurm that frees them
 * itself frees nothing twice.  Its nodes and partitions have the same
 * defect (bcast_address, comment, extra; nodesets).  Not reachable from
 * here: a job submitted with --container has its container path unpacked
 * twice, and the first copy is lost inside libslurm (22.05 to 25.05). */
static void free_job_msg(job_info_msg_t *msg)
{
    for (uint32_t i = 0; msg && msg->job_array && i < msg->record_count; i++) {
        slurm_job_info_t *info = &msg->job_array[i];
        slurm_xfree((void **)&info->admin_comment);
        slurm_xfree((void **)&info->system_comment);
        slurm_xfree((void **)&info->prefer);
        slurm_xfree((void **)&info->cluster_features);
        slurm_xfree((void **)&info->cronspec);
    }
    slurm_free_job_info_msg(msg);
}

static void free_node_msg(node_info_msg_t *msg)
{
    for (uint32_t i = 0; msg && msg->node_array && i < msg->record_count; i++) {
        node_info_t *info = &msg->node_array[i];
        slurm_xfree((void **)&info->bcast_address);
        slurm_xfree((void **)&info->comment);
        slurm_xfree((void **)&info->extra);
    }
    slurm_free_node_info_msg(msg);
}

static void free_partition_msg(partition_info_msg_t *msg)
{
    for (uint32_t i = 0; msg && msg->partition_array && i < msg->record_count; i++)
        slurm_xfree((void **)&msg->partition_array[i].nodesets);
    slurm_free_partition_info_msg(msg);
}

long slurm_io_jobs(slurm_job **out, lucid_error *err)
{
    slurm_job_list list = {0}; /* never read: read whole */
    if (slurm_io_jobs_refresh(&list, err) < 0)
        return -1;
    *out = list.jobs;
    return list.count;
}

/* slurmctld 22.05 does not bump last_job_update for every change it
 * reports: clearing a job's COMPLETING flag (cleanup_completing, which also
 * applies a pending requeue-hold) leaves it as it was, so "no change" would
 * keep a job completing for lucid until something else changed.  The
 * listing is read whole while any job in it is completing, and at least
 * every FULL_READ_S for whatever else might not bump it. */
#define FULL_READ_S 10

int slurm_io_jobs_refresh(slurm_job_list *list, lucid_error *err)
{
    job_info_msg_t *msg = NULL;
    time_t now = time(NULL);
    /* Kept from the read, not scanned from `jobs`: the reader thread's
     * array goes to the engine between reads (reader.h). */
    int completing = list->completing;
    /* slurmctld's update times are whole seconds: a change made in the
     * second of the last read, after it, carries the same time, and asked
     * "since" that time Slurm says "no change" (seen: a cancel unseen by
     * lucid for seconds in the operator lab test).  So "no change" is asked
     * only of a listing read two seconds or more after its last change;
     * else one second earlier, which reads the listing again. */
    time_t since = 0;
    if (!completing && now - list->read_at < FULL_READ_S && list->last_update > 1)
        since = list->read_at >= list->last_update + 2 ? list->last_update : list->last_update - 1;
    if (slurm_load_jobs(since, &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
        if (since && slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA) {
            list->unchanged++;
            return 0;
        }
        return slurm_fail(err, "loading jobs", 0);
    }
    if (slurm_job_list_reserve(list, (long)msg->record_count) < 0) {
        free_job_msg(msg);
        return lucid_error_set(err, "out of memory");
    }
    list->completing = 0;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        read_job(&msg->job_array[i], &list->jobs[i]);
        list->completing |= list->jobs[i].completing;
    }
    list->count = (long)msg->record_count;
    list->last_update = msg->last_update;
    list->read_at = now;
    list->reads++;
    free_job_msg(msg);
    return 1;
}

void slurm_io_job_list_free(slurm_job_list *list)
{
    free(list->jobs);
    memset(list, 0, sizeof *list);
}

/* "gpu:8", "gpu:a100:8", "gpu:4(IDX:0-3)", "gpu:(null):0(IDX:N/A)",
 * "gpu:a100:2(S:0),gpu:v100:2(S:1),lucidshare:4": the count of every item
 * of GRES `name` (each count is the number after the last ':' before '('
 * or the item's end); its type into `type` ("" untyped, "*" several) when
 * it is not NULL.  -1 when no item names it. */
static int gres_named_count(const char *gres, const char *name, char *type, size_t size)
{
    if (type && size)
        type[0] = '\0';
    size_t name_len = strlen(name);
    int total = -1;
    for (const char *p = gres; p && *p;) {
        size_t len = strcspn(p, ",");
        /* A comma inside "(IDX:0,2)" does not end the item. */
        const char *paren = memchr(p, '(', len);
        if (paren) {
            const char *close = strchr(paren, ')');
            if (close)
                len = (size_t)(close - p) + strcspn(close, ",");
        }
        if (name_len > 0 && strncmp(p, name, name_len) == 0 &&
            (len == name_len || p[name_len] == ':')) {
            if (total < 0)
                total = 0;
            size_t body = paren && (size_t)(paren - p) < len ? (size_t)(paren - p) : len;
            const char *first = NULL, *last = NULL;
            for (const char *c = p; c < p + body; c++)
                if (*c == ':') {
                    if (!first)
                        first = c;
                    last = c;
                }
            total += last ? atoi(last + 1) : 1;
            if (type && size && first && last && first != last) {
                char this_type[32];
                snprintf(this_type, sizeof this_type, "%.*s", (int)(last - first - 1), first + 1);
                if (strcmp(this_type, "(null)") != 0) {
                    if (!type[0])
                        snprintf(type, size, "%s", this_type);
                    else if (strcmp(type, this_type) != 0)
                        snprintf(type, size, "*");
                }
            }
        }
        p += len;
        if (*p == ',')
            p++;
    }
    return total;
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
    free_partition_msg(msg);
    return 0;
}

/* A node's state as fit.h sees it: usable or the word for why not; its
 * CPUs, memory and features.  Returns usable. */
static int read_node_fit(node_info_t *info, fit_node *f)
{
    static const struct {
        uint32_t flag;
        const char *word;
    } flags[] = {
        {NODE_STATE_DRAIN, "DRAINED"},           {NODE_STATE_NO_RESPOND, "NOT_RESPONDING"},
        {NODE_STATE_FAIL, "FAILING"},            {NODE_STATE_MAINT, "MAINT"},
        {NODE_STATE_POWERED_DOWN, "POWERED_DOWN"}, {NODE_STATE_POWERING_DOWN, "POWERING_DOWN"},
        {NODE_STATE_POWERING_UP, "POWERING_UP"}, {NODE_STATE_REBOOT_REQUESTED, "REBOOTING"},
        {NODE_STATE_REBOOT_ISSUED, "REBOOTING"},
    };
    uint32_t base = info->node_state & NODE_STATE_BASE;
    int usable = base == NODE_STATE_IDLE || base == NODE_STATE_MIXED || base == NODE_STATE_ALLOCATED;
    f->state[0] = '\0';
    if (!usable)
        copy(f->state, sizeof f->state, base == NODE_STATE_DOWN ? "DOWN"
                                        : base == NODE_STATE_FUTURE ? "FUTURE" : "UNKNOWN");
    for (size_t k = 0; usable && k < sizeof flags / sizeof flags[0]; k++)
        if (info->node_state & flags[k].flag) {
            usable = 0;
            copy(f->state, sizeof f->state, flags[k].word);
        }
    f->cpus = info->cpus_efctv > 0 ? info->cpus_efctv : info->cpus;
    uint16_t alloc_cpus = 0;
    uint64_t alloc_mem = 0;
    if (info->select_nodeinfo) {
        slurm_get_select_nodeinfo(info->select_nodeinfo, SELECT_NODEDATA_SUBCNT,
                                  NODE_STATE_ALLOCATED, &alloc_cpus);
        slurm_get_select_nodeinfo(info->select_nodeinfo, SELECT_NODEDATA_MEM_ALLOC,
                                  NODE_STATE_ALLOCATED, &alloc_mem);
    }
    f->cpus_alloc = alloc_cpus;
    f->mem_mib = (int64_t)info->real_memory;
    f->mem_alloc_mib = (int64_t)alloc_mem;
    copy(f->features, sizeof f->features, info->features_act ? info->features_act : info->features);
    f->nwindows = 0;
    return usable;
}

/* Reservations active now or to come, onto the nodes they hold (soonest
 * first, at most FIT_WINDOWS a node). */
static void node_reservations(slurm_node *nodes, long count)
{
    reserve_info_msg_t *msg = NULL;
    if (slurm_load_reservations((time_t)0, &msg) != SLURM_SUCCESS || !msg)
        return; /* none readable: Slurm's own reason catches the rest */
    time_t now = time(NULL);
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const reserve_info_t *r = &msg->reservation_array[i];
        if (!r->node_list || !r->node_list[0] || r->end_time <= now)
            continue;
        hostlist_t hosts = slurm_hostlist_create(r->node_list);
        char *host;
        while (hosts && (host = slurm_hostlist_shift(hosts))) {
            for (long k = 0; k < count; k++) {
                fit_node *f = &nodes[k].fit;
                if (strcmp(nodes[k].name, host) != 0)
                    continue;
                fit_window w = {.start = r->start_time, .end = r->end_time,
                                .maint = (r->flags & RESERVE_FLAG_MAINT) != 0};
                copy(w.name, sizeof w.name, r->name);
                if (f->nwindows < FIT_WINDOWS)
                    f->windows[f->nwindows++] = w;
                else if (w.start < f->windows[FIT_WINDOWS - 1].start)
                    f->windows[FIT_WINDOWS - 1] = w; /* full: keep the soonest */
                else
                    continue;
                for (int m = f->nwindows - 1; m > 0 && f->windows[m].start < f->windows[m - 1].start; m--) {
                    fit_window t = f->windows[m];
                    f->windows[m] = f->windows[m - 1];
                    f->windows[m - 1] = t;
                }
            }
            free(host);
        }
        if (hosts)
            slurm_hostlist_destroy(hosts);
    }
    slurm_free_reservation_info_msg(msg);
}

long slurm_io_nodes(const char *partitions, const char *share_gres, slurm_node **out,
                    lucid_error *err)
{
    node_info_msg_t *msg = NULL;
    /* SHOW_DETAIL: without it gres_used is NULL and every GPU looks free. */
    if (slurm_load_node((time_t)0, &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS)
        return slurm_fail(err, "loading nodes", 0);
    slurm_node *nodes = calloc(msg->record_count ? msg->record_count : 1, sizeof *nodes);
    if (!nodes) {
        free_node_msg(msg);
        return lucid_error_set(err, "out of memory");
    }
    long count = 0;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        node_info_t *info = &msg->node_array[i];
        if (!info->name)
            continue;
        slurm_node *node = &nodes[count++];
        copy(node->name, sizeof node->name, info->name);
        node->gpus = gres_named_count(info->gres, "gpu", node->fit.gpu_type,
                                      sizeof node->fit.gpu_type);
        node->gpus_used = gres_named_count(info->gres_used, "gpu", NULL, 0);
        if (node->gpus < 0)
            node->gpus = 0;
        if (node->gpus_used < 0)
            node->gpus_used = 0;
        node->usable = read_node_fit(info, &node->fit);
        if (share_gres && share_gres[0]) {
            node->fit.share = gres_named_count(info->gres, share_gres, NULL, 0);
            node->fit.share_used = gres_named_count(info->gres_used, share_gres, NULL, 0);
        }
        if (node->fit.share < 0)
            node->fit.share = 0;
        if (node->fit.share_used < 0)
            node->fit.share_used = 0;
    }
    free_node_msg(msg);
    node_reservations(nodes, count);
    if (node_partitions(partitions, nodes, count, err) < 0) {
        free(nodes);
        return -1;
    }
    *out = nodes;
    return count;
}

int slurm_io_packing_safety(char *why, size_t size, lucid_error *err)
{
    slurm_conf_t *conf = NULL;
    if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
        return slurm_fail(err, "loading Slurm's configuration", 0);
    /* cgroup.conf comes as an opaque key-pair list: printed as scontrol
     * prints it ("Key = Value" lines) and read back. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem) {
        if (conf->cgroup_conf)
            slurm_print_key_pairs(mem, conf->cgroup_conf, "cgroup.conf");
        fclose(mem);
    }
    struct statfs fs;
    int host_v2 = statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == 0x63677270; /* CGROUP2 */
    int safe = fit_packing_safe(conf->task_plugin, text, host_v2, why, size);
    free(text);
    slurm_free_ctl_conf(conf);
    return safe;
}

static int update(job_desc_msg_t *desc, const char *what, lucid_error *err)
{
    if (slurm_update_job(desc) != SLURM_SUCCESS)
        return slurm_fail(err, what, desc->job_id);
    return 0;
}

static void update_init(job_desc_msg_t *desc, uint32_t job_id)
{
    slurm_init_job_desc_msg(desc);
    desc->job_id = job_id;
}

int slurm_io_comment(uint32_t job_id, const char *comment, lucid_error *err)
{
    job_desc_msg_t desc;
    update_init(&desc, job_id);
    char buf[256];
    copy(buf, sizeof buf, comment);
    desc.admin_comment = buf;
    return update(&desc, "commenting", err);
}

static int release(uint32_t job_id, lucid_error *err)
{
    /* A held job refuses other updates of its priority: release on its own. */
    job_desc_msg_t desc;
    update_init(&desc, job_id);
    desc.priority = INFINITE;
    return update(&desc, "releasing", err);
}

int slurm_io_start(uint32_t job_id, const char *partition, const char *nodes,
                   const char *packed_gpus, const char *share_tres, const char *comment,
                   uint32_t priority, lucid_error *err)
{
    job_desc_msg_t desc;
    update_init(&desc, job_id);
    char partition_buf[64], nodes_buf[256], no_gres[] = "", comment_buf[256];
    copy(partition_buf, sizeof partition_buf, partition);
    desc.partition = partition_buf;
    if (nodes) {
        copy(nodes_buf, sizeof nodes_buf, nodes);
        desc.req_nodes = nodes_buf;
    }
    if (comment) {
        copy(comment_buf, sizeof comment_buf, comment);
        desc.admin_comment = comment_buf;
    }
    if (packed_gpus) {
        /* Slurm will not give the partner's GPUs twice: the packed job runs
         * without GPU gres and the SPANK plugin exposes the shared ones
         * (AdminComment "lucid-gpus=LIST", part of `comment`).  An empty
         * TRES list, not "gres:gpu:0": a zero count took every GPU of the
         * node in Slurm 22.05.  22.05 keeps the job's GPU entry, its counts
         * cleared, so the packed job still needs one free GPU on the node
         * (fit_pack_ok) and is allocated none. */
        desc.tres_per_node = no_gres;
        desc.tres_per_job = no_gres;
    }
    if (update(&desc, "pinning", err) < 0)
        return -1;
    if (packed_gpus && share_tres && share_tres[0]) {
        /* Then the share GRES, in a second update: one naming it at once
         * would keep the GPU counts (22.05 only changes the entries an
         * update names), so the job would ask its GPUs again. */
        char tres[64];
        copy(tres, sizeof tres, share_tres);
        update_init(&desc, job_id);
        desc.tres_per_node = tres;
        if (update(&desc, "asking the share GRES for", err) < 0)
            return -1;
    }
    if (release(job_id, err) < 0)
        return -1;
    if (priority == 0)
        return 0;
    update_init(&desc, job_id);
    desc.priority = priority;
    lucid_error ignored = {{0}};
    /* Only the order squeue shows depends on it: a failure is not worth
     * undoing the release for. */
    (void)update(&desc, "setting the priority of", &ignored);
    return 0;
}

int slurm_io_release_ahead(uint32_t job_id, const char *partition, const char *exclude,
                           const char *comment, uint32_t priority, lucid_error *err)
{
    job_desc_msg_t desc;
    update_init(&desc, job_id);
    char partition_buf[64], exclude_buf[256], no_nodes[] = "", comment_buf[256];
    copy(partition_buf, sizeof partition_buf, partition);
    copy(exclude_buf, sizeof exclude_buf, exclude ? exclude : "");
    copy(comment_buf, sizeof comment_buf, comment ? comment : "");
    desc.partition = partition_buf;
    desc.req_nodes = no_nodes;
    desc.exc_nodes = exclude_buf;
    desc.admin_comment = comment_buf;
    if (update(&desc, "preparing the release ahead of", err) < 0)
        return -1;
    if (release(job_id, err) < 0)
        return -1;
    update_init(&desc, job_id);
    desc.priority = priority > 0 ? priority : 1;
    /* With Slurm's own priority it would go before the pinned releases,
     * and, not starting, stop Slurm's pass over the partition before them:
     * a failure is the caller's to undo (lucid holds the job again). */
    return update(&desc, "setting the priority of", err);
}

int slurm_io_promote(uint32_t job_id, const char *comment, uint32_t priority, const char *exclude,
                     lucid_error *err)
{
    job_desc_msg_t desc;
    update_init(&desc, job_id);
    char buf[256];
    copy(buf, sizeof buf, comment ? comment : "");
    desc.admin_comment = buf;
    desc.priority = priority > 0 ? priority : 1;
    if (update(&desc, "raising the priority of", err) < 0)
        return -1;
    if (!exclude)
        return 0;
    /* Apart: Slurm refuses an exclusion for a job that is no longer
     * pending, and stops at the first field it refuses. */
    update_init(&desc, job_id);
    copy(buf, sizeof buf, exclude);
    desc.exc_nodes = buf;
    if (slurm_update_job(&desc) != SLURM_SUCCESS) {
        if (slurm_get_errno() == ESLURM_JOB_NOT_PENDING)
            return 0; /* Slurm started it meanwhile */
        return slurm_fail(err, "setting the excluded nodes of", job_id);
    }
    return 0;
}

int slurm_io_exclude(uint32_t job_id, const char *exclude, lucid_error *err)
{
    job_desc_msg_t desc;
    update_init(&desc, job_id);
    char buf[256];
    copy(buf, sizeof buf, exclude ? exclude : "");
    desc.exc_nodes = buf;
    return update(&desc, "setting the excluded nodes of", err);
}

int slurm_io_hand_back(uint32_t job_id, const char *comment, lucid_error *err)
{
    if (comment && slurm_io_comment(job_id, comment, err) < 0)
        return -1;
    return release(job_id, err);
}

int slurm_io_admin_hold(uint32_t job_id, lucid_error *err)
{
    job_desc_msg_t desc;
    update_init(&desc, job_id);
    desc.priority = 0; /* from an operator, without ALLOC_SID_USER_HOLD: JobHeldAdmin */
    return update(&desc, "holding", err);
}

int slurm_io_requeue_hold_if_running(uint32_t job_id, const char *partition, lucid_error *err)
{
    job_info_msg_t *msg = NULL;
    if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
        if (slurm_get_errno() == ESLURM_INVALID_JOB_ID)
            return 0; /* gone: certainly not running */
        return slurm_fail(err, "checking before requeueing", job_id);
    }
    int running = 0;
    if (msg->record_count == 1) {
        const slurm_job_info_t *info = &msg->job_array[0];
        running = (info->job_state & JOB_STATE_BASE) == JOB_RUNNING &&
                  !(info->job_state & JOB_COMPLETING) && info->partition &&
                  strcmp(info->partition, partition) == 0;
    }
    free_job_msg(msg);
    if (!running)
        return 0;
    if (slurm_requeue(job_id, JOB_REQUEUE_HOLD) != SLURM_SUCCESS) {
        int code = slurm_get_errno();
        /* It ended between the check and the requeue. */
        if (code == ESLURM_JOB_FINISHED || code == ESLURM_JOB_PENDING ||
            code == ESLURM_INVALID_JOB_ID || code == ESLURM_TRANSITION_STATE_NO_UPDATE)
            return 0;
        return slurm_fail(err, "requeueing", job_id);
    }
    return 1;
}

int slurm_io_take_back(uint32_t job_id, const char *gpu_request, const char *nodes,
                       const char *comment, lucid_error *err)
{
    if (slurm_io_admin_hold(job_id, err) < 0)
        return -1;
    job_desc_msg_t desc;
    char nodes_buf[256] = "", tres[64] = "", comment_buf[256], no_gres[] = "";
    if (gpu_request && strlen(gpu_request) > 4) {
        /* A packed job may ask the share GRES: every count cleared first,
         * as an update changes only the entries it names (Slurm 22.05). */
        update_init(&desc, job_id);
        desc.tres_per_node = no_gres;
        desc.tres_per_job = no_gres;
        if (update(&desc, "clearing the GPU request of", err) < 0)
            return -1;
    }
    update_init(&desc, job_id);
    if (gpu_request && strlen(gpu_request) > 4) {
        copy(tres, sizeof tres, gpu_request + 4);
        if (strncmp(gpu_request, "tpj=", 4) == 0)
            desc.tres_per_job = tres;
        else
            desc.tres_per_node = tres;
    }
    copy(nodes_buf, sizeof nodes_buf, nodes ? nodes : "");
    desc.req_nodes = nodes_buf;
    copy(comment_buf, sizeof comment_buf, comment);
    desc.admin_comment = comment_buf;
    /* A job Slurm requeued is not eligible for ~2 minutes (BeginTime);
     * lucid waited for any --begin of its own before it released it. */
    desc.begin_time = time(NULL);
    if (slurm_update_job(&desc) != SLURM_SUCCESS)
        return lucid_error_set(err, "slurm: taking back job %u (required nodes '%s'): %s", job_id,
                               nodes_buf, slurm_strerror(slurm_get_errno()));
    return 0;
}

int slurm_io_split_task(uint32_t array_job_id, uint32_t task_id, lucid_error *err)
{
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    char id[32], comment[] = "lucid: waiting for lucidd";
    snprintf(id, sizeof id, "%u_%u", array_job_id, task_id);
    desc.job_id_str = id;
    /* Any update of one pending task splits it off as a job of its own. */
    desc.admin_comment = comment;
    job_array_resp_msg_t *resp = NULL;
    int rc = slurm_update_job2(&desc, &resp);
    if (resp)
        slurm_free_job_array_resp(resp);
    if (rc != SLURM_SUCCESS)
        return lucid_error_set(err, "slurm: splitting array task %s: %s", id,
                               slurm_strerror(slurm_get_errno()));
    return 0;
}

/* "JobId=12 UserId=... JobState=COMPLETED ... StartTime=2026-12-03T07:30:01 ..." */
static int comp_field(const char *line, const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);
    for (const char *at = line; (at = strstr(at, key)) != NULL; at += klen) {
        if ((at == line || at[-1] == ' ') && at[klen] == '=') {
            at += klen + 1;
            snprintf(out, size, "%.*s", (int)strcspn(at, " \n"), at);
            return 1;
        }
    }
    return 0;
}

static time_t comp_time(const char *text)
{
    struct tm tm = {0};
    if (sscanf(text, "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
               &tm.tm_min, &tm.tm_sec) != 6)
        return 0;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    return mktime(&tm); /* jobcomp/filetxt writes local time */
}

/* The job's record in the job-completion log (jobcomp/filetxt at `path`).
 * The last record of the job wins (a requeued job has one per run). */
static int jobcomp_record(const char *path, uint32_t job_id, char *state, size_t size,
                          time_t *start, time_t *end)
{
    FILE *file = fopen(path, "r");
    if (!file)
        return 0;
    char line[4096], want[32], id[32], value[64];
    snprintf(want, sizeof want, "%u", job_id);
    int found = 0;
    while (fgets(line, sizeof line, file)) {
        if (!comp_field(line, "JobId", id, sizeof id) || strcmp(id, want) != 0)
            continue;
        if (comp_field(line, "JobState", value, sizeof value)) {
            copy(state, size, value);
            found = 1;
        }
        *start = comp_field(line, "StartTime", value, sizeof value) ? comp_time(value) : 0;
        *end = comp_field(line, "EndTime", value, sizeof value) ? comp_time(value) : 0;
    }
    fclose(file);
    return found;
}

/* The job's record in slurmdbd, as `sacct -X -j ID` reads it: the job's
 * last record (a requeued job's earlier runs are duplicates, not asked
 * for), from the cluster `cluster`.  1 found (its state must be final),
 * 0 none, -1 slurmdbd did not answer. */
static int slurmdbd_record(const char *cluster, uint32_t job_id, char *state, size_t size,
                           time_t *start, time_t *end, lucid_error *err)
{
    slurmdb_job_cond_t cond;
    memset(&cond, 0, sizeof cond);
    char id[16];
    snprintf(id, sizeof id, "%u", job_id);
    cond.step_list = slurm_list_create(slurm_destroy_selected_step);
    slurm_addto_step_list(cond.step_list, id);
    cond.cluster_list = slurm_list_create(slurm_xfree_ptr);
    slurm_list_append(cond.cluster_list, slurm_xstrdup(cluster));
    cond.flags = JOBCOND_FLAG_NO_STEP | JOBCOND_FLAG_NO_TRUNC;
    cond.db_flags = SLURMDB_JOB_FLAG_NOTSET; /* any scheduling flags (0 would ask for none) */
    cond.usage_start = 0;            /* any time (sacct -j's default) */
    cond.usage_end = time(NULL) + 1; /* [start, end): up to this second */
    void *db = slurmdb_connection_get(NULL);
    List jobs = db ? slurmdb_jobs_get(db, &cond) : NULL;
    int found = jobs ? 0 : -1;
    if (!db)
        lucid_error_set(err, "slurm: connecting to slurmdbd: %s", slurm_strerror(slurm_get_errno()));
    else if (!jobs)
        lucid_error_set(err, "slurm: asking slurmdbd for job %u: %s", job_id,
                        slurm_strerror(slurm_get_errno()));
    if (jobs) {
        ListIterator it = slurm_list_iterator_create(jobs);
        slurmdb_job_rec_t *rec;
        while ((rec = slurm_list_next(it))) {
            uint32_t base = rec->state & JOB_STATE_BASE;
            if (rec->jobid != job_id || base == JOB_PENDING || base == JOB_RUNNING ||
                base == JOB_SUSPENDED)
                continue; /* not ended as far as the database knows */
            copy(state, size, slurm_job_state_string(base));
            *start = rec->start;
            *end = rec->end;
            found = 1;
        }
        slurm_list_iterator_destroy(it);
        slurm_list_destroy(jobs);
    }
    if (db)
        slurmdb_connection_close(&db);
    slurm_list_destroy(cond.step_list);
    slurm_list_destroy(cond.cluster_list);
    return found;
}

int slurm_io_accounting(uint32_t job_id, char *state, size_t size, time_t *start, time_t *end,
                        char *source, size_t source_size, lucid_error *err)
{
    slurm_conf_t *conf = NULL;
    if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
        return slurm_fail(err, "loading the configuration", 0);
    char path[1024] = "", cluster[256] = "";
    if (conf->job_comp_type && strcmp(conf->job_comp_type, "jobcomp/filetxt") == 0 &&
        conf->job_comp_loc)
        copy(path, sizeof path, conf->job_comp_loc);
    if (conf->accounting_storage_type &&
        strcmp(conf->accounting_storage_type, "accounting_storage/slurmdbd") == 0 &&
        conf->cluster_name)
        copy(cluster, sizeof cluster, conf->cluster_name);
    slurm_free_ctl_conf(conf);
    int found = 0;
    if (cluster[0]) {
        found = slurmdbd_record(cluster, job_id, state, size, start, end, err);
        if (found == 1)
            copy(source, source_size, "slurmdbd");
        if (found != 0)
            return found; /* a record, or slurmdbd down: asked again later */
    }
    if (path[0] && (found = jobcomp_record(path, job_id, state, size, start, end)) == 1)
        copy(source, source_size, "jobcomp");
    return found;
}

int slurm_io_ctld_started(time_t *started, lucid_error *err)
{
    stats_info_request_msg_t req = {.command_id = STAT_COMMAND_GET};
    stats_info_response_msg_t *stats = NULL;
    if (slurm_get_statistics(&stats, &req) != SLURM_SUCCESS || !stats)
        return slurm_fail(err, "reading slurmctld's statistics", 0);
    *started = stats->req_time_start;
    slurm_free_stats_response_msg(stats);
    return 0;
}

/* One TCP connect to host:port within timeout_ms: 1 it answered, 0 not. */
static int tcp_answers(const char *host, uint32_t port, int timeout_ms)
{
    char service[16];
    snprintf(service, sizeof service, "%u", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *addrs = NULL;
    if (getaddrinfo(host, service, &hints, &addrs) != 0)
        return 0;
    int ok = 0;
    for (struct addrinfo *a = addrs; a && !ok; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0)
            continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
            ok = 1;
        } else if (errno == EINPROGRESS) {
            struct pollfd p = {.fd = fd, .events = POLLOUT};
            int soerr = 0;
            socklen_t len = sizeof soerr;
            ok = poll(&p, 1, timeout_ms) == 1 &&
                 getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0;
        }
        close(fd);
    }
    freeaddrinfo(addrs);
    return ok;
}

int slurm_io_reachable(int timeout_ms)
{
    if (!slurm_conf.control_addr || slurm_conf.control_cnt == 0 || !slurm_conf.slurmctld_port)
        return 1; /* nothing to probe: let libslurm try */
    for (uint32_t i = 0; i < slurm_conf.control_cnt; i++)
        if (slurm_conf.control_addr[i] &&
            tcp_answers(slurm_conf.control_addr[i], slurm_conf.slurmctld_port, timeout_ms))
            return 1;
    return 0;
}

uint32_t slurm_io_fairshare_weight(void)
{
    return slurm_conf.priority_weight_fs;
}

uint32_t slurm_io_qos_weight(void)
{
    return slurm_conf.priority_weight_qos;
}

/* libslurm 22.05 has no public call for the association shares that
 * `sshare` prints, so lucidd asks sshare itself (every 10 s, engine.c), in
 * the background (shares.h). */
#define SSHARE_TIMEOUT_S 20.0

int slurm_io_fairshare_start(share_read *r, double now, lucid_error *err)
{
    char *argv[] = {"sshare", "-h", "-P", "-a", "-o", "Account,User,FairShare", NULL};
    return share_read_start(r, argv, now, SSHARE_TIMEOUT_S, err);
}

int slurm_io_fairshare_poll(share_read *r, double now, slurm_share **out, long *count,
                            lucid_error *err)
{
    return share_read_poll(r, now, out, count, err);
}

void slurm_io_fairshare_cancel(share_read *r)
{
    share_read_cancel(r);
}

/* AccountingStorageEnforce's "limits" bit (src/common/read_config.h,
 * ACCOUNTING_ENFORCE_LIMITS; not in the public headers). */
#define ENFORCE_LIMITS 0x0002

int slurm_io_limits_enforced(void)
{
    return slurm_conf.accounting_storage_type &&
           strcmp(slurm_conf.accounting_storage_type, "accounting_storage/slurmdbd") == 0 &&
           (slurm_conf.accounting_storage_enforce & ENFORCE_LIMITS) != 0;
}

/* sacctmgr rather than libslurm's slurmdb_qos_get / slurmdb_associations_get:
 * those wait on slurmdbd inside the call (no timeout of lucid's), so they
 * would need a thread of their own, and their records carry TRES as ids;
 * sacctmgr's parsable output names them (gres/gpu=4) and runs as a child
 * lucid can kill, the way sshare does. */
int slurm_io_limits_start(share_read *r, int assoc, double now, lucid_error *err)
{
    char cluster[160];
    snprintf(cluster, sizeof cluster, "cluster=%s",
             slurm_conf.cluster_name ? slurm_conf.cluster_name : "");
    char *qos[] = {"sacctmgr", "-n", "-P", "show", "qos",
                   "format=Name,MaxTRES,MaxTRESPerUser,MaxTRESPerAccount,GrpTRES,Priority", NULL};
    char *assocs[] = {"sacctmgr", "-n", "-P", "show", "assoc", "where", cluster,
                      "format=Account,User,Partition,ParentName,MaxTRES,GrpTRES", NULL};
    return share_read_start(r, assoc ? assocs : qos, now, SSHARE_TIMEOUT_S, err);
}

int slurm_io_limits_poll(share_read *r, double now, char **text, lucid_error *err)
{
    return share_read_poll_text(r, now, text, err);
}

void slurm_io_limits_cancel(share_read *r)
{
    share_read_cancel(r);
}

int slurm_io_in_hostlist(const char *list, const char *node)
{
    if (!list || !*list)
        return 0;
    hostlist_t hosts = slurm_hostlist_create(list);
    if (!hosts)
        return 0;
    int found = slurm_hostlist_find(hosts, node) >= 0;
    slurm_hostlist_destroy(hosts);
    return found;
}

int slurm_io_hostlist_expand(const char *list, char *out, size_t size)
{
    if (size == 0)
        return -1;
    out[0] = '\0';
    hostlist_t hosts = list && *list ? slurm_hostlist_create(list) : NULL;
    if (!hosts)
        return -1;
    size_t used = 0;
    int rc = 0;
    char *host;
    while ((host = slurm_hostlist_shift(hosts))) {
        size_t len = strlen(host), need = len + (used > 0);
        if (rc == 0 && used + need < size) {
            if (used > 0)
                out[used++] = ',';
            memcpy(out + used, host, len + 1);
            used += len;
        } else {
            rc = -1;
        }
        free(host);
    }
    slurm_hostlist_destroy(hosts);
    return rc;
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
