/* spank_lucid.c — SPANK plugin: a packed job gets its partner's GPUs.
 *
 * A packed job runs on its partner's node without GPU gres of its own (Slurm
 * would refuse to give the same GPUs twice); lucid chose the GPUs it shares
 * and says so in the job's AdminComment, `lucid-gpus=0-3`, which only an
 * operator (lucidd, as SlurmUser or root) can set.  It is read once per step,
 * in user_init, with slurm_load_job from the step daemon.  Users cannot name
 * GPUs: the option `--lucid-gpus` is refused with one line at sbatch (it once
 * set CUDA_VISIBLE_DEVICES to any list, also for a job with no GPUs).
 *
 * Under device confinement (task/cgroup with ConstrainDevices=yes) Slurm
 * denies the packed job every GPU device of the node.  In
 * task_init_privileged (root, in the task's process before exec) the plugin
 * allows exactly the shared GPUs' device files (their major:minor, from
 * gres.conf's File= lines for this node, else /dev/nvidiaN) in the job's
 * cgroup v1 `devices` hierarchy — job, step and task levels, parents first —
 * and CUDA_VISIBLE_DEVICES becomes the job's own numbering 0..n-1, as CUDA
 * numbers the devices it can open.  Without confinement (no devices cgroup
 * for the job) the node's indices are given as they are.  If a grant fails
 * the task fails: a packed job never starts without its GPUs.  Jobs without
 * a list are left alone: Slurm's own gres/gpu sets their devices.
 * LUCID_PACKED_GPUS holds the node's indices either way. */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

SPANK_PLUGIN(lucid, 1);

int slurm_spank_init(spank_t sp, int ac, char **av);
int slurm_spank_user_init(spank_t sp, int ac, char **av);
int slurm_spank_task_init(spank_t sp, int ac, char **av);
int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av);

#define GPU_LIST_MAX 256
static char gpu_list[GPU_LIST_MAX];
static int confined; /* the job's devices cgroup exists: CUDA numbers 0..n-1 */
static char job_node[128]; /* this step daemon's node (a packed job has one) */

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
    (void)arg;
    (void)remote;
    /* Only lucidd hands out shared GPUs (the AdminComment, an operator's). */
    slurm_error("lucid: --lucid-gpus is not for users: lucidd alone gives a packed job its "
                "partner's GPUs (lucid queue shows packed jobs)");
    return -1;
}

static struct spank_option gpus_option = {
    "lucid-gpus", "LIST",
    "reserved for lucidd (refused): packed jobs get their GPUs from lucid", 1, 0, option_cb};

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
    /* The job's environment has no SLURMD_NODENAME before its tasks start:
     * a packed job's node is its one allocated node. */
    uint32_t node_index = 0;
    if (info->record_count > 0 && info->job_array[0].nodes &&
        spank_get_item(sp, S_JOB_NODEID, &node_index) == ESPANK_SUCCESS) {
        hostlist_t hosts = slurm_hostlist_create(info->job_array[0].nodes);
        char *host;
        for (uint32_t k = 0; hosts && (host = slurm_hostlist_shift(hosts)); k++) {
            if (k == node_index)
                snprintf(job_node, sizeof job_node, "%s", host);
            free(host);
        }
        if (hosts)
            slurm_hostlist_destroy(hosts);
    }
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

/* The device files of the node's GPUs, in index order, from gres.conf
 * (next to $SLURM_CONF, else /etc/slurm): lines for this node (NodeName=,
 * a host list, or none) with Name=gpu and File=PATH[a-b,c].  Returns how
 * many paths were written (at most max), 0 when gres.conf names none. */
static int expand_files(const char *spec, char paths[][256], int n, int max)
{
    const char *open_at = strchr(spec, '['), *close_at = open_at ? strchr(open_at, ']') : NULL;
    if (!open_at || !close_at) {
        if (n < max)
            snprintf(paths[n++], 256, "%s", spec);
        return n;
    }
    char ranges[128];
    snprintf(ranges, sizeof ranges, "%.*s", (int)(close_at - open_at - 1), open_at + 1);
    char *save = NULL;
    for (char *r = strtok_r(ranges, ",", &save); r && n < max; r = strtok_r(NULL, ",", &save)) {
        long a = strtol(r, NULL, 10), b = a;
        char *dash = strchr(r, '-');
        if (dash)
            b = strtol(dash + 1, NULL, 10);
        for (long k = a; k <= b && n < max; k++)
            snprintf(paths[n++], 256, "%.*s%ld%s", (int)(open_at - spec), spec, k, close_at + 1);
    }
    return n;
}

static int gpu_files(const char *node, char paths[][256], int max)
{
    char conf[1024] = "/etc/slurm/gres.conf";
    const char *slurm_conf = getenv("SLURM_CONF");
    if (slurm_conf && strrchr(slurm_conf, '/'))
        snprintf(conf, sizeof conf, "%.*s/gres.conf",
                 (int)(strrchr(slurm_conf, '/') - slurm_conf), slurm_conf);
    FILE *f = fopen(conf, "r");
    if (!f)
        return 0;
    char line[2048];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        char names[512] = "", file[512] = "";
        int gpu = 0;
        char *save = NULL;
        for (char *tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
            if (tok[0] == '#')
                break;
            if (strncasecmp(tok, "NodeName=", 9) == 0)
                snprintf(names, sizeof names, "%s", tok + 9);
            else if (strncasecmp(tok, "Name=", 5) == 0)
                gpu = strcmp(tok + 5, "gpu") == 0;
            else if (strncasecmp(tok, "File=", 5) == 0)
                snprintf(file, sizeof file, "%s", tok + 5);
        }
        if (!gpu || !file[0])
            continue;
        if (names[0]) {
            hostlist_t hosts = slurm_hostlist_create(names);
            int here = hosts && slurm_hostlist_find(hosts, node) >= 0;
            if (hosts)
                slurm_hostlist_destroy(hosts);
            if (!here)
                continue;
        }
        n = expand_files(file, paths, n, max);
    }
    fclose(f);
    return n;
}

/* "c MAJOR:MINOR rwm" into DIR/devices.allow. */
static int allow(const char *dir, unsigned major_no, unsigned minor_no)
{
    char path[PATH_MAX];
    int len = snprintf(path, sizeof path, "%s/devices.allow", dir);
    if (len < 0 || (size_t)len >= sizeof path)
        return -1; /* no such cgroup path can exist */
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fprintf(f, "c %u:%u rwm\n", major_no, minor_no) > 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* The job's cgroup in the v1 devices hierarchy: slurm_<node> when several
 * slurmd share a host (the lab), else slurm.  0 found, -1 none. */
static int job_devices_dir(const char *node, unsigned uid, unsigned job, char *out, size_t size)
{
    struct stat st;
    snprintf(out, size, "/sys/fs/cgroup/devices/slurm_%s/uid_%u/job_%u", node, uid, job);
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    snprintf(out, size, "/sys/fs/cgroup/devices/slurm/uid_%u/job_%u", uid, job);
    return stat(out, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* Allows one device in the job's cgroup, its step's and the step's tasks',
 * parents first (a v1 child never holds more than its parent). */
static int allow_everywhere(const char *job_dir, const char *step, unsigned ma, unsigned mi)
{
    char dir[600];
    if (allow(job_dir, ma, mi) < 0)
        return -1;
    snprintf(dir, sizeof dir, "%s/%s", job_dir, step);
    struct stat st;
    if (stat(dir, &st) != 0)
        return 0; /* made later, from the job's (allowed) list */
    if (allow(dir, ma, mi) < 0)
        return -1;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "task_", 5) != 0)
            continue;
        char task[900];
        snprintf(task, sizeof task, "%s/%s", dir, e->d_name);
        if (allow(task, ma, mi) < 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

#define GPU_FILES_MAX 64

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    confined = 0;
    if (gpu_list[0] == '\0')
        return 0;
    char node[128] = "", job_dir[512], step[32];
    uint32_t job_id = 0, step_id = 0;
    uid_t uid = 0;
    snprintf(node, sizeof node, "%s", job_node);
    if (!node[0] || spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS ||
        spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS) {
        slurm_error("lucid: packed job: cannot read its node, id, step or owner");
        return -1;
    }
    if (job_devices_dir(node, (unsigned)uid, job_id, job_dir, sizeof job_dir) < 0) {
        /* cgroup v2: Slurm confines devices with an eBPF program per job,
         * which a plugin cannot extend; started, the job would have no GPU. */
        char v2[256];
        struct stat st;
        snprintf(v2, sizeof v2, "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_%u", job_id);
        if (stat(v2, &st) == 0) {
            slurm_error("lucid: packed job %u: cgroup v2 device confinement cannot be extended "
                        "to its partner's GPUs; run lucidd with --packing off here", job_id);
            return -1;
        }
        return 0; /* no device confinement: the node's indices as they are */
    }
    confined = 1;
    if (step_id == SLURM_BATCH_SCRIPT)
        snprintf(step, sizeof step, "step_batch");
    else if (step_id == SLURM_EXTERN_CONT)
        snprintf(step, sizeof step, "step_extern");
    else
        snprintf(step, sizeof step, "step_%u", step_id);
    static char paths[GPU_FILES_MAX][256];
    int nfiles = gpu_files(node, paths, GPU_FILES_MAX);
    char list[GPU_LIST_MAX];
    snprintf(list, sizeof list, "%s", gpu_list);
    char *save = NULL;
    for (char *idx = strtok_r(list, ",", &save); idx; idx = strtok_r(NULL, ",", &save)) {
        long k = strtol(idx, NULL, 10);
        char fallback[64];
        snprintf(fallback, sizeof fallback, "/dev/nvidia%ld", k);
        const char *path = k >= 0 && k < nfiles ? paths[k] : fallback;
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISCHR(st.st_mode) ||
            allow_everywhere(job_dir, step, major(st.st_rdev), minor(st.st_rdev)) < 0) {
            slurm_error("lucid: packed job %u: cannot give it GPU %ld (%s) in %s", job_id, k,
                        path, job_dir);
            return -1; /* never a packed job without its GPUs */
        }
    }
    return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (gpu_list[0] == '\0')
        return 0;
    /* Confined, CUDA sees only the shared GPUs and numbers them 0..n-1. */
    char visible[GPU_LIST_MAX] = "";
    if (confined) {
        int count = 1;
        for (const char *p = gpu_list; *p; p++)
            count += *p == ',';
        size_t used = 0;
        for (int k = 0; k < count && used < sizeof visible; k++) {
            int w = snprintf(visible + used, sizeof visible - used, "%s%d", k ? "," : "", k);
            if (w < 0)
                break;
            used += (size_t)w;
        }
    } else {
        snprintf(visible, sizeof visible, "%s", gpu_list);
    }
    if (spank_setenv(sp, "CUDA_VISIBLE_DEVICES", visible, 1) != ESPANK_SUCCESS ||
        spank_setenv(sp, "LUCID_PACKED_GPUS", gpu_list, 1) != ESPANK_SUCCESS) {
        slurm_error("lucid: cannot set CUDA_VISIBLE_DEVICES");
        return -1;
    }
    return 0;
}
