/* spank_lucid.c — SPANK plugin: lucid's GPU list becomes CUDA_VISIBLE_DEVICES.
 *
 * A packed job runs on its partner's node without GPU gres of its own (Slurm
 * would refuse to give the same GPUs twice); lucid chose the GPUs it shares.
 * Two ways to carry that list to the job's tasks:
 *   - the option `--lucid-gpus=0-3` (or 0,1,2,3) given at submission;
 *   - the job's AdminComment `lucid-gpus=0-3`, set by lucidd when it packs a
 *     job that was already submitted (read once per step, in user_init, with
 *     slurm_load_job from the step daemon).
 * In each task the list is written to CUDA_VISIBLE_DEVICES (and
 * LUCID_PACKED_GPUS, so a job can tell it is packed).  Jobs without a list
 * are left alone: Slurm's own gres/gpu sets their devices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

SPANK_PLUGIN(lucid, 1);

int slurm_spank_init(spank_t sp, int ac, char **av);
int slurm_spank_user_init(spank_t sp, int ac, char **av);
int slurm_spank_task_init(spank_t sp, int ac, char **av);

#define GPU_LIST_MAX 256
static char gpu_list[GPU_LIST_MAX];

/* Only digits, commas and dashes reach the environment. */
static int valid_list(const char *list)
{
    if (!*list || strlen(list) >= GPU_LIST_MAX)
        return 0;
    for (const char *p = list; *p; p++)
        if (!((*p >= '0' && *p <= '9') || *p == ',' || *p == '-'))
            return 0;
    return 1;
}

/* "0-2,5" -> "0,1,2,5", the form CUDA_VISIBLE_DEVICES wants. */
static int expand_list(const char *list, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    const char *p = list;
    while (*p) {
        char *end;
        long first = strtol(p, &end, 10), last;
        if (end == p)
            return -1;
        last = first;
        if (*end == '-') {
            p = end + 1;
            last = strtol(p, &end, 10);
            if (end == p || last < first)
                return -1;
        }
        for (long k = first; k <= last; k++) {
            int n = snprintf(out + used, size - used, "%s%ld", used ? "," : "", k);
            if (n < 0 || (size_t)n >= size - used)
                return -1;
            used += (size_t)n;
        }
        p = end;
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return 0;
}

static int take_list(const char *value, const char *where)
{
    if (!valid_list(value) || expand_list(value, gpu_list, sizeof gpu_list) < 0) {
        gpu_list[0] = '\0';
        slurm_error("lucid: ignoring malformed GPU list '%s' from %s", value, where);
        return -1;
    }
    return 0;
}

static int option_cb(int val, const char *arg, int remote)
{
    (void)val;
    (void)remote;
    return take_list(arg ? arg : "", "--lucid-gpus") < 0 ? -1 : 0;
}

static struct spank_option gpus_option = {
    "lucid-gpus", "LIST",
    "GPUs (node-local indices, e.g. 0-3) lucid packed this job onto", 1, 0, option_cb};

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    return spank_option_register(sp, &gpus_option) == ESPANK_SUCCESS ? 0 : -1;
}

/* lucidd's AdminComment: "lucid-gpus=LIST" (possibly among other words). */
static void list_from_admin_comment(spank_t sp)
{
    uint32_t job_id = 0;
    if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS)
        return;
    job_info_msg_t *info = NULL;
    if (slurm_load_job(&info, job_id, SHOW_ALL) != SLURM_SUCCESS || !info)
        return;
    if (info->record_count > 0 && info->job_array[0].admin_comment) {
        const char *found = strstr(info->job_array[0].admin_comment, "lucid-gpus=");
        if (found) {
            char value[GPU_LIST_MAX];
            snprintf(value, sizeof value, "%.*s", (int)strcspn(found + 11, " ;"), found + 11);
            take_list(value, "AdminComment");
        }
    }
    slurm_free_job_info_msg(info);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (spank_remote(sp) && gpu_list[0] == '\0')
        list_from_admin_comment(sp);
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (gpu_list[0] == '\0')
        return 0;
    if (spank_setenv(sp, "CUDA_VISIBLE_DEVICES", gpu_list, 1) != ESPANK_SUCCESS ||
        spank_setenv(sp, "LUCID_PACKED_GPUS", gpu_list, 1) != ESPANK_SUCCESS) {
        slurm_error("lucid: cannot set CUDA_VISIBLE_DEVICES");
        return -1;
    }
    return 0;
}
