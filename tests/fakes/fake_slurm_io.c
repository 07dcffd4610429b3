/* fake_slurm_io.c — slurm_io.h over fake_slurm (see fake_slurm_io.h). */
#include "fake_slurm_io.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

fake_slurm fake;

static void logf_call(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_call(const char *fmt, ...)
{
    if (fake.quiet)
        return;
    size_t used = strlen(fake.log);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fake.log + used, sizeof fake.log - used, fmt, ap);
    va_end(ap);
    used = strlen(fake.log);
    if (used + 1 < sizeof fake.log)
        strcat(fake.log, ";");
}

int fake_called(const char *entry)
{
    /* The whole entry, or its first words ("start 3" matches "start 3
     * main n1", not "start 31 main n1"). */
    char needle[256];
    int len = snprintf(needle, sizeof needle, ";%s", entry);
    char haystack[sizeof fake.log + 2];
    snprintf(haystack, sizeof haystack, ";%s", fake.log);
    for (const char *at = strstr(haystack, needle); at; at = strstr(at + 1, needle))
        if (at[len] == ';' || at[len] == ' ')
            return 1;
    return 0;
}

void fake_reset(void)
{
    memset(&fake, 0, sizeof fake);
    fake.up = 1;
    fake.ctld_started = 1; /* long ago */
    fake.next_id = 1000;
}

slurm_job *fake_job(uint32_t id)
{
    if (id >= 1 && id <= (uint32_t)fake.njobs && fake.jobs[id - 1].id == id)
        return &fake.jobs[id - 1]; /* the benchmark's ids are dense */
    for (int i = 0; i < fake.njobs; i++)
        if (fake.jobs[i].id == id)
            return &fake.jobs[i];
    return NULL;
}

slurm_job *fake_submit(uint32_t id, const char *user, int gpus, int per_node, int nodes)
{
    slurm_job *j = &fake.jobs[fake.njobs++];
    memset(j, 0, sizeof *j);
    j->id = id;
    j->uid = strcmp(user, "root") == 0 ? 0 : 1000;
    snprintf(j->user, sizeof j->user, "%s", user);
    snprintf(j->name, sizeof j->name, "job%u", id);
    snprintf(j->partition, sizeof j->partition, "main");
    j->state = SJ_PENDING;
    snprintf(j->state_name, sizeof j->state_name, "PENDING");
    j->held = 1;
    j->reason_code = 16;
    snprintf(j->reason, sizeof j->reason, "JobHeldUser");
    j->gpus = gpus;
    j->gpus_per_node = per_node;
    j->nodes = nodes;
    j->nodes_fixed = per_node > 0;
    j->asks_gpus = gpus > 0;
    j->submit_time = 1000;
    snprintf(j->gpu_request, sizeof j->gpu_request, "tpn=gres:gpu:%d", per_node);
    return j;
}

void fake_node(const char *name, const char *partition, int gpus)
{
    slurm_node *n = &fake.nodes[fake.nnodes++];
    memset(n, 0, sizeof *n);
    snprintf(n->name, sizeof n->name, "%s", name);
    snprintf(n->partition, sizeof n->partition, "%s", partition);
    n->gpus = gpus;
    n->usable = 1;
}

static slurm_node *node_named(const char *name)
{
    for (int i = 0; i < fake.nnodes; i++)
        if (strcmp(fake.nodes[i].name, name) == 0)
            return &fake.nodes[i];
    return NULL;
}

void fake_run(uint32_t id, time_t start)
{
    slurm_job *j = fake_job(id);
    j->state = SJ_RUNNING;
    snprintf(j->state_name, sizeof j->state_name, "RUNNING");
    j->held = j->admin_held = 0;
    j->start_time = start;
    memcpy(j->node_list, j->req_nodes, sizeof j->node_list); /* same size */
    snprintf(j->first_gpus, sizeof j->first_gpus, "0-%d", j->gpus > 0 ? j->gpus - 1 : 0);
    slurm_node *n = node_named(j->node_list);
    if (n)
        n->gpus_used += j->gpus;
}

void fake_end(uint32_t id, slurm_job_run_state state, const char *word, time_t end)
{
    slurm_job *j = fake_job(id);
    slurm_node *n = j->state == SJ_RUNNING ? node_named(j->node_list) : NULL;
    if (n)
        n->gpus_used -= j->gpus;
    if (!j->start_time)
        j->start_time = end; /* Slurm's start of a job cancelled while pending */
    j->state = state;
    snprintf(j->state_name, sizeof j->state_name, "%s", word);
    j->end_time = end;
    j->held = 0;
}

void fake_purge(uint32_t id)
{
    for (int i = 0; i < fake.njobs; i++)
        if (fake.jobs[i].id == id) {
            fake.jobs[i] = fake.jobs[--fake.njobs];
            return;
        }
}

static int down(lucid_error *err)
{
    return lucid_error_set(err, "slurm: Unable to contact slurm controller (fake)");
}

int slurm_io_init(lucid_error *err)
{
    (void)err;
    return 0;
}

void slurm_io_fini(void) {}

long slurm_io_jobs(slurm_job **out, lucid_error *err)
{
    if (!fake.up)
        return down(err);
    *out = malloc(sizeof(slurm_job) * (size_t)(fake.njobs + 1));
    memcpy(*out, fake.jobs, sizeof(slurm_job) * (size_t)fake.njobs);
    return fake.njobs;
}

int slurm_io_jobs_refresh(slurm_job_list *list, lucid_error *err)
{
    if (!fake.up)
        return down(err);
    if (fake.unchanged && list->last_update) {
        list->unchanged++;
        return 0;
    }
    /* As the real reader: the array kept, each entry written whole. */
    if (slurm_job_list_reserve(list, fake.njobs) < 0)
        return lucid_error_set(err, "out of memory");
    memcpy(list->jobs, fake.jobs, sizeof(slurm_job) * (size_t)fake.njobs);
    list->count = fake.njobs;
    list->last_update = 1;
    list->reads++;
    return 1;
}

void slurm_io_job_list_free(slurm_job_list *list)
{
    free(list->jobs);
    memset(list, 0, sizeof *list);
}

long slurm_io_nodes(const char *partitions, const char *share_gres, slurm_node **out,
                    lucid_error *err)
{
    (void)partitions;
    (void)share_gres; /* the fake's nodes carry fit.share as the test set it */
    if (!fake.up)
        return down(err);
    *out = malloc(sizeof(slurm_node) * (size_t)(fake.nnodes + 1));
    memcpy(*out, fake.nodes, sizeof(slurm_node) * (size_t)fake.nnodes);
    return fake.nnodes;
}

int slurm_io_packing_safety(char *why, size_t size, lucid_error *err)
{
    if (!fake.up)
        return down(err);
    snprintf(why, size, "%s", fake.pack_unsafe[0] ? fake.pack_unsafe : "fake: no confinement");
    return fake.pack_unsafe[0] ? 0 : 1;
}

static slurm_job *must(uint32_t id, lucid_error *err)
{
    if (++fake.job_calls == fake.down_at_call)
        fake.up = 0; /* slurmctld stopped as this call was made */
    slurm_job *j = fake.up ? fake_job(id) : NULL;
    if (!j)
        lucid_error_set(err, "slurm: job %u: Invalid job id specified (fake)", id);
    return j;
}

int slurm_io_start(uint32_t job_id, const char *partition, const char *nodes,
                   const char *packed_gpus, const char *share_tres, const char *comment,
                   uint32_t priority, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    snprintf(j->partition, sizeof j->partition, "%s", partition);
    if (nodes)
        snprintf(j->req_nodes, sizeof j->req_nodes, "%s", nodes);
    if (comment)
        snprintf(j->admin_comment, sizeof j->admin_comment, "%s", comment);
    if (packed_gpus)
        snprintf(j->gpu_request, sizeof j->gpu_request, "%s%s",
                 share_tres && share_tres[0] ? "tpn=" : "", share_tres ? share_tres : "");
    j->held = j->admin_held = 0;
    snprintf(j->reason, sizeof j->reason, "Resources");
    logf_call("start %u %s %s%s%s%s%s", job_id, partition, nodes ? nodes : "-",
              packed_gpus ? " gpus=" : "", packed_gpus ? packed_gpus : "",
              share_tres && share_tres[0] ? " share=" : "", share_tres ? share_tres : "");
    (void)priority;
    return 0;
}

int slurm_io_release_ahead(uint32_t job_id, const char *partition, const char *exclude,
                           const char *comment, uint32_t priority, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    snprintf(j->partition, sizeof j->partition, "%s", partition);
    j->req_nodes[0] = '\0';
    snprintf(j->exc_nodes, sizeof j->exc_nodes, "%s", exclude ? exclude : "");
    if (comment)
        snprintf(j->admin_comment, sizeof j->admin_comment, "%s", comment);
    j->held = j->admin_held = 0;
    snprintf(j->reason, sizeof j->reason, "Priority");
    logf_call("ahead %u %s excl=%s", job_id, partition, exclude ? exclude : "");
    (void)priority;
    return 0;
}

int slurm_io_promote(uint32_t job_id, const char *comment, uint32_t priority, const char *exclude,
                     lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    if (comment)
        snprintf(j->admin_comment, sizeof j->admin_comment, "%s", comment);
    if (exclude && j->state == SJ_PENDING)
        snprintf(j->exc_nodes, sizeof j->exc_nodes, "%s", exclude);
    if (exclude)
        logf_call("promote %u excl=%s", job_id, exclude);
    else
        logf_call("promote %u", job_id);
    (void)priority;
    return 0;
}

int slurm_io_exclude(uint32_t job_id, const char *exclude, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    snprintf(j->exc_nodes, sizeof j->exc_nodes, "%s", exclude ? exclude : "");
    logf_call("exclude %u %s", job_id, exclude ? exclude : "");
    return 0;
}

int slurm_io_hand_back(uint32_t job_id, const char *comment, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    j->held = j->admin_held = 0;
    if (comment)
        snprintf(j->admin_comment, sizeof j->admin_comment, "%s", comment);
    logf_call("handback %u", job_id);
    return 0;
}

int slurm_io_admin_hold(uint32_t job_id, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    if (fake.hold_us > 0) {
        struct timespec pause = {.tv_sec = fake.hold_us / 1000000,
                                 .tv_nsec = (long)(fake.hold_us % 1000000) * 1000};
        nanosleep(&pause, NULL);
    }
    j->held = j->admin_held = 1;
    snprintf(j->reason, sizeof j->reason, "JobHeldAdmin");
    logf_call("hold %u", job_id);
    return 0;
}

int slurm_io_comment(uint32_t job_id, const char *comment, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    snprintf(j->admin_comment, sizeof j->admin_comment, "%s", comment);
    return 0;
}

int slurm_io_requeue_hold_if_running(uint32_t job_id, const char *partition, lucid_error *err)
{
    if (!fake.up)
        return down(err);
    slurm_job *j = fake_job(job_id);
    if (j && job_id == fake.ends_at_requeue)
        fake_end(job_id, SJ_COMPLETED, "COMPLETED", j->start_time + 1);
    if (!j || j->state != SJ_RUNNING || strcmp(j->partition, partition) != 0) {
        logf_call("norequeue %u", job_id);
        return 0;
    }
    slurm_node *n = node_named(j->node_list);
    if (n)
        n->gpus_used -= j->gpus;
    j->state = SJ_PENDING;
    j->held = j->admin_held = 1;
    j->restarts++;
    logf_call("requeue %u", job_id);
    return 1;
}

int slurm_io_move(uint32_t job_id, const char *partition, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    snprintf(j->partition, sizeof j->partition, "%s", partition);
    j->req_nodes[0] = '\0';
    logf_call("move %u %s", job_id, partition);
    return 0;
}

int slurm_io_cancel(uint32_t job_id, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    fake_end(job_id, SJ_FAILED, "CANCELLED", 2000);
    logf_call("cancel %u", job_id);
    return 0;
}

int slurm_io_take_back(uint32_t job_id, const char *gpu_request, const char *nodes,
                       const char *comment, lucid_error *err)
{
    slurm_job *j = must(job_id, err);
    if (!j)
        return -1;
    j->held = j->admin_held = 1;
    if (gpu_request)
        snprintf(j->gpu_request, sizeof j->gpu_request, "%s", gpu_request);
    snprintf(j->req_nodes, sizeof j->req_nodes, "%s", nodes ? nodes : "");
    snprintf(j->admin_comment, sizeof j->admin_comment, "%s", comment);
    logf_call("take-back %u", job_id);
    return 0;
}

int slurm_io_split_task(uint32_t array_job_id, uint32_t task_id, lucid_error *err)
{
    slurm_job *master = must(array_job_id, err);
    if (!master)
        return -1;
    slurm_job *task = &fake.jobs[fake.njobs++];
    *task = *master;
    task->id = fake.next_id++;
    task->array_task_id = task_id;
    task->array_tasks[0] = '\0';
    logf_call("split %u_%u", array_job_id, task_id);
    return 0;
}

int slurm_io_accounting(uint32_t job_id, char *state, size_t size, time_t *start, time_t *end,
                        char *source, size_t source_size, lucid_error *err)
{
    if (!fake.up)
        return down(err);
    for (int i = 0; i < fake.naccounting; i++)
        if (fake.accounting[i].id == job_id) {
            snprintf(state, size, "%s", fake.accounting[i].state);
            *start = fake.accounting[i].start;
            *end = fake.accounting[i].end;
            snprintf(source, source_size, "slurmdbd");
            return 1;
        }
    return 0;
}

int slurm_io_ctld_started(time_t *started, lucid_error *err)
{
    if (!fake.up)
        return down(err);
    *started = fake.ctld_started;
    return 0;
}

/* Host lists in the tests are plain comma lists. */
int slurm_io_in_hostlist(const char *list, const char *node)
{
    size_t n = strlen(node);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, node, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* The fake's host lists are plain names ("n1,n2"): as they are; a range
 * ("n[1-2]") expanded for the tests that write one. */
int slurm_io_hostlist_expand(const char *list, char *out, size_t size)
{
    if (!list || !*list || size == 0)
        return -1;
    const char *open = strchr(list, '[');
    if (!open) {
        if (strlen(list) >= size)
            return -1;
        snprintf(out, size, "%s", list);
        return 0;
    }
    int lo = 0, hi = -1;
    if (sscanf(open, "[%d-%d]", &lo, &hi) != 2 || hi < lo)
        return -1;
    int prefix = (int)(open - list);
    size_t used = 0;
    out[0] = '\0';
    for (int k = lo; k <= hi; k++) {
        int w = snprintf(out + used, size - used, "%s%.*s%d", used ? "," : "", prefix, list, k);
        if (w < 0 || (size_t)w >= size - used)
            return -1;
        used += (size_t)w;
    }
    return 0;
}

int slurm_io_reachable(int timeout_ms)
{
    (void)timeout_ms;
    fake.probes++;
    return fake.up;
}

int slurm_io_fairshare_start(share_read *r, double now, lucid_error *err)
{
    (void)err;
    *r = (share_read){.running = 1, .fd = -1, .deadline = now + 20};
    fake.share_starts++;
    return 0;
}

int slurm_io_fairshare_poll(share_read *r, double now, slurm_share **out, long *count,
                            lucid_error *err)
{
    (void)now;
    *out = NULL;
    *count = 0;
    fake.share_polls++;
    if (fake.share_slow)
        return 0;
    *r = (share_read){.fd = -1};
    if (fake.nshares == 0)
        return 1;
    *out = malloc((size_t)fake.nshares * sizeof **out);
    if (!*out)
        return lucid_error_set(err, "out of memory");
    memcpy(*out, fake.shares, (size_t)fake.nshares * sizeof **out);
    *count = fake.nshares;
    return 1;
}

void slurm_io_fairshare_cancel(share_read *r)
{
    *r = (share_read){.fd = -1};
}

uint32_t slurm_io_fairshare_weight(void)
{
    return fake.fairshare_weight;
}

uint32_t slurm_io_qos_weight(void)
{
    return fake.qos_weight;
}

int slurm_io_limits_enforced(void)
{
    return fake.limits_enforced;
}

/* The fake's sacctmgr answers at the first poll; `pid` says which. */
int slurm_io_limits_start(share_read *r, int assoc, double now, lucid_error *err)
{
    (void)err;
    *r = (share_read){.running = 1, .fd = -1, .pid = assoc ? 2 : 1, .deadline = now + 20};
    fake.limits_starts++;
    return 0;
}

int slurm_io_limits_poll(share_read *r, double now, char **text, lucid_error *err)
{
    (void)now;
    const char *says = r->pid == 2 ? fake.assoc_text : fake.qos_text;
    *r = (share_read){.fd = -1};
    *text = NULL;
    if (says && !(*text = strdup(says)))
        return lucid_error_set(err, "out of memory");
    return 1;
}

void slurm_io_limits_cancel(share_read *r)
{
    *r = (share_read){.fd = -1};
}
