/* fit.h — "could Slurm start this job on that node now?": lucidd's one
 * place for the site's rules beyond GPU counts.
 *
 * A GPU site's Slurm starts a job on a node only when the node is up and
 * not reserved for the job's whole time limit, carries the GPU type and
 * features the job asks, and has the CPUs and memory the job asks free
 * (all of it, for --exclusive).  lucid used to count GPUs only and pinned
 * jobs where Slurm would never start them.  Every such rule lives here, on
 * plain structs (no libslurm, no clock): slurm_io.c fills them from Slurm's
 * own records, engine.c builds each job's node mask from fit_node_now and
 * fit_node_ever, and decide.c's placement asks fit_room before it takes a
 * node, so the CPUs and memory of jobs placed in one decision add up.  The
 * shared scheduling core (include/lucid/sched.h) never sees any of it.
 * The site's GPU limits (QOS and association MaxTRES / GrpTRES on
 * gres/gpu, read by limits.c) are the job's, not a node's: fit_limits_ever
 * and fit_limits_now say whether they let it start at all, or now, given
 * what its user, account or QOS runs.  What no rule here can foresee
 * (other limits, partition limits, a select plugin's finer choices) is
 * caught after the release: a job Slurm does not start within
 * --release-timeout, or refuses with a reason that names a limit, is taken
 * back with Slurm's reason (engine.c). */
#ifndef LUCIDD_FIT_H
#define LUCIDD_FIT_H

#include <stddef.h>
#include <stdint.h>

/* A reservation on a node, [start, end) in UTC seconds. */
typedef struct fit_window {
    int64_t start, end;
    char name[48];
    int maint; /* flags=maint */
} fit_window;

#define FIT_WINDOWS 4

typedef struct fit_node {
    char name[64];
    char gpu_type[32]; /* "a100"; "" untyped; "*" GPUs of several types */
    int gpus;          /* configured */
    int cpus;          /* configured (effective: less specialised cores) */
    int cpus_alloc;    /* allocated now */
    int64_t mem_mib;   /* configured real memory */
    int64_t mem_alloc_mib; /* allocated now (0 where the site does not track memory) */
    char features[256];    /* available features, comma list */
    int usable;            /* idle, mixed or allocated; not down, drained, failing, powered off */
    char state[32];        /* Slurm's word for why not ("DOWN", "DRAIN"...) when !usable */
    int nwindows;
    fit_window windows[FIT_WINDOWS]; /* reservations, active or to come, soonest first */
    int share;      /* the share GRES that accounts packed jobs: configured count (0 none) */
    int share_used; /* allocated now */
} fit_node;

/* What a job asks of each node it runs on, beyond its GPU count. */
typedef struct fit_request {
    char gpu_type[32];       /* "" any type */
    int cpus_node;           /* CPUs on each node it uses (pn_min_cpus, -c x tasks) */
    int cpus_per_gpu;        /* --cpus-per-gpu */
    int64_t mem_node_mib;    /* --mem (0 none asked) */
    int64_t mem_per_cpu_mib; /* --mem-per-cpu */
    int64_t mem_per_gpu_mib; /* --mem-per-gpu */
    int whole;               /* --exclusive: the node's every CPU and GPU */
    char features[128];      /* -C: names joined by '&' or ',' (all) or '|' (any) */
    int64_t time_limit_s;    /* its time limit (0: none, unlimited) */
} fit_request;

/* Whether Slurm would start a job packed onto its partner's GPUs on that
 * node (it asks no GPU of Slurm, or the share GRES instead):
 * `slurm_free_gpus` GPUs of the node Slurm has not allocated nor lucid
 * promised, `share_free` units of the node's share GRES not allocated nor
 * promised (-1: the node has none, the packed job asks nothing).  Slurm
 * 22.05 keeps a cleared GPU request as an entry of count 0, which still
 * needs one free GPU on the node (measured; docs/live.md), and a share
 * GRES request needs `gpus_here` free units.  1 yes; 0 no, `why` says. */
int fit_pack_ok(int gpus_here, int slurm_free_gpus, int share_free, char *why, size_t size);

/* `gpus` units of a node's share GRES taken by a packed job (never below 0;
 * -1, the node has none, stays). */
void fit_share_take(int *share_free, int gpus);

/* Whether lucid may pack on this site at all, from Slurm's configuration:
 * `task_plugin` (TaskPlugin), `cgroup_conf` (cgroup.conf as the "Key =
 * Value" lines scontrol show config prints; NULL none) and `host_cgroup_v2`
 * (this host runs the unified cgroup v2 hierarchy: what CgroupPlugin=
 * autodetect finds where the nodes boot like it).  Without device
 * confinement a packed job reaches its partner's GPUs; under it on cgroup
 * v1 the SPANK plugin grants them; under it on cgroup v2 nothing can (Slurm
 * 22.05's eBPF device program), and the packed job's step would fail.  1
 * yes (`why` says how, may be NULL); 0 no, `why` says why. */
int fit_packing_safe(const char *task_plugin, const char *cgroup_conf, int host_cgroup_v2,
                     char *why, size_t size);

/* CPUs / memory the job needs on a node where it gets `gpus_here` GPUs. */
int fit_cpus_needed(const fit_request *r, int gpus_here);
int64_t fit_mem_needed(const fit_request *r, int gpus_here);

/* Whether the node could ever hold the job with `gpus_here` GPUs there
 * (its configuration: type, features, CPUs, memory; not its state or what
 * runs there).  1 yes; 0 never, `why` says which rule (may be NULL). */
int fit_node_ever(const fit_request *r, int gpus_here, const fit_node *n, char *why, size_t size);

/* Whether Slurm would start the job on that node now as far as the node
 * itself goes: fit_node_ever, and the node is usable, and no reservation
 * the job is not in covers [now, now + its time limit) (no time limit:
 * any reservation to come).  CPUs and memory in use are fit_room's. */
int fit_node_now(const fit_request *r, int gpus_here, const fit_node *n, int64_t now, char *why,
                 size_t size);

/* What a node has free for this decision; a negative count: not checked. */
typedef struct fit_room {
    int cpus_free, cpus_total;
    int64_t mem_free_mib;
} fit_room;

fit_room fit_room_of(const fit_node *n);
/* 1 if the job fits the room with `gpus_here` GPUs there (for a whole-node
 * job: nothing of the node in use, `gpus_free == gpus_total` too). */
int fit_room_ok(const fit_request *r, int gpus_here, int gpus_free, int gpus_total,
                const fit_room *room);
/* Takes what the job uses from the room (placed in this decision). */
void fit_room_take(const fit_request *r, int gpus_here, fit_room *room);

/* One GPU limit of the site's accounting as it applies to some jobs, and
 * the GPUs that count against it now (Slurm's running jobs, lucid's
 * releases Slurm has not started, jobs placed in this decision). */
typedef struct fit_limit {
    char name[112];  /* "QOS normal MaxTRESPerUser gres/gpu=4" */
    char whose[112]; /* what it counts: "user lucidlab1", "account alpha"; "" per job */
    int gpus;        /* the limit */
    int per_job;     /* 1: a cap on each job (nothing counts against it) */
    int used;        /* GPUs counted against it now */
} fit_limit;

/* The limits that apply to one job (pointers into a table its caller
 * owns for one decision; several jobs share an entry). */
#define FIT_LIMITS 12
typedef struct fit_limits {
    fit_limit *limit[FIT_LIMITS];
    int count;
} fit_limits;

/* 1 if a job of `gpus` GPUs could ever start under the limits (NULL: no
 * limits); 0: its own count is over one of them, `why` says which ("needs
 * 8 GPUs; QOS normal MaxTRESPerUser gres/gpu=4: can never start"). */
int fit_limits_ever(const fit_limits *limits, int gpus, char *why, size_t size);
/* 1 if it could start now: what runs against each limit plus `gpus` stays
 * within it; 0: `why` names the limit and its use ("QOS normal
 * MaxTRESPerUser gres/gpu=4: user lucidlab1 runs 4; it needs 2 more"). */
int fit_limits_now(const fit_limits *limits, int gpus, char *why, size_t size);
/* Counts a job placed in this decision against its limits. */
void fit_limits_take(const fit_limits *limits, int gpus);

/* Whether the comma list `have` satisfies the feature expression `want`
 * ("" always): names joined by '&' or ',' must all be present, by '|' any
 * one.  -1 when `want` has a form lucid does not read (brackets, counts
 * "a*2", parentheses): such jobs go to Slurm as they are. */
int fit_features_match(const char *want, const char *have);

#endif
