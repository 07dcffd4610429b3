/* cmd_status.c — `lucid status`: what lucidd is doing — the profiling
 * partition and its limits, the packing switch, the GPU metrics backend,
 * model versions, jobs per phase and decision latency. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "lucid/util.h"

static const char *text(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static long long integer(json_t *obj, const char *key)
{
    return (long long)json_integer_value(json_object_get(obj, key));
}

static void print_status(json_t *s)
{
    json_t *prof = json_object_get(s, "profiler"), *pack = json_object_get(s, "packing");
    json_t *metrics = json_object_get(s, "gpu_metrics");
    printf("profiler:    partition %s, limit %.0f s, up to %lld GPUs; %lld queued, %lld running\n",
           text(prof, "partition"), json_number_value(json_object_get(prof, "time_limit_s")),
           integer(prof, "gpu_limit"), integer(prof, "queued"), integer(prof, "running"));
    printf("packing:     %s (mode %s); %lld packed pairs",
           json_is_true(json_object_get(pack, "on")) ? "on" : "off", text(pack, "mode"),
           integer(s, "packed_pairs"));
    if (text(pack, "refused")[0])
        printf("; refused on this site: %s", text(pack, "refused"));
    else if (json_object_get(pack, "main_nodes"))
        printf("; accounted by Slurm on %lld of %lld main nodes (gres/%s)",
               integer(pack, "accounted_nodes"), integer(pack, "main_nodes"),
               text(pack, "share_gres")[0] ? text(pack, "share_gres") : "none");
    putchar('\n');
    printf("main:        partition %s\n", text(s, "main_partition"));
    printf("gpu metrics: %s — %s\n", text(metrics, "backend"), text(metrics, "detail"));
    size_t i;
    json_t *m;
    if (json_array_size(json_object_get(s, "models")) == 0)
        printf("models:      none recorded\n");
    json_array_foreach(json_object_get(s, "models"), i, m)
    {
        printf("model:       %s v%lld — %s", text(m, "name"), integer(m, "version"), text(m, "note"));
        if (integer(m, "rows") > 0) {
            char trained[32];
            lucid_time_format(integer(m, "trained_at"), trained, sizeof trained);
            printf(" [%lld rows, trained %s UTC]", integer(m, "rows"), trained);
        }
        putchar('\n');
    }
    printf("phases:     ");
    const char *key;
    json_t *count;
    json_object_foreach(json_object_get(s, "phases"), key, count)
        printf(" %s=%lld", key, (long long)json_integer_value(count));
    printf("\nprofiled:    %lld jobs; %lld sent to main unprofiled, %lld profiling runs cut for "
           "main\n",
           integer(s, "profiled"), integer(prof, "bypassed"), integer(prof, "yielded"));
    json_t *ahead = json_object_get(s, "release_ahead");
    if (json_is_object(ahead))
        printf("ahead:       %lld jobs released before their GPUs freed, %lld started by Slurm "
               "so (%s)\n",
               integer(ahead, "released"), integer(ahead, "started"),
               json_is_true(json_object_get(ahead, "enabled")) ? "--release-ahead on"
                                                                : "--release-ahead off");
    json_t *writes = json_object_get(s, "async_writes");
    if (json_is_object(writes)) {
        const char *mode = json_string_value(json_object_get(writes, "mode"));
        if (!mode) /* a lucidd from before the window mode */
            mode = json_is_true(json_object_get(writes, "enabled")) ? "on" : "off";
        printf("writes:      %lld made off the tick, %lld refused, slowest %.2f s "
               "(--async-writes %s)\n",
               integer(writes, "made"), integer(writes, "failed"),
               json_number_value(json_object_get(writes, "slowest_s")), mode);
    }
    json_t *reads = json_object_get(s, "slurm_job_reads");
    if (json_is_object(reads) && json_object_get(reads, "age_s"))
        printf("listing:     %.2f s old at the last decision, the oldest %.2f s (--async-reads %s)\n",
               json_number_value(json_object_get(reads, "age_s")),
               json_number_value(json_object_get(reads, "age_max_s")),
               json_is_true(json_object_get(reads, "threaded")) ? "on" : "off");
    printf("decisions:   p50 %.3f ms, p99 %.3f ms\n",
           1e3 * json_number_value(json_object_get(s, "decision_latency_p50_s")),
           1e3 * json_number_value(json_object_get(s, "decision_latency_p99_s")));
    json_t *since = json_object_get(s, "slurm_unreachable_since");
    if (json_is_integer(since)) {
        char when[32];
        lucid_time_format((int64_t)json_integer_value(since), when, sizeof when);
        printf("slurm:       Slurm unreachable since %s UTC\n", when);
    } else {
        printf("slurm:       %s\n", json_is_true(json_object_get(s, "slurm_reachable"))
                                        ? "reachable"
                                        : since ? "not contacted yet" : "NOT reachable");
    }
    printf("ticks:       %lld (tick in progress for %.1f s)\n", integer(s, "ticks"),
           json_number_value(json_object_get(s, "tick_running_s")));
    if (*text(s, "last_error"))
        printf("last error:  %s\n", text(s, "last_error"));
}

int cmd_status(int argc, char **argv)
{
    const char *socket_path = NULL;
    int as_json = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) {
            puts("usage: lucid status [--socket PATH] [--json]\n"
                 "  lucidd's profiler, packing switch, GPU metrics backend, models, phases.");
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if ((r = cli_option(argc, argv, &i, "--socket", &socket_path)) != 0) {
            if (r < 0)
                return 2;
        } else {
            return cli_usage_error("status: unknown argument '%s' (see lucid status --help)",
                                   argv[i]);
        }
    }
    json_t *reply = cli_lucidd_request(cli_lucidd_socket(socket_path), "{\"cmd\":\"status\"}");
    if (!reply)
        return 1;
    if (as_json) {
        json_dumpf(reply, stdout, JSON_INDENT(2));
        putchar('\n');
    } else {
        print_status(reply);
    }
    json_decref(reply);
    return 0;
}
