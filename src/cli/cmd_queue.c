/* cmd_queue.c — `lucid queue`: lucidd's view of the jobs it manages, like
 * squeue but with lucid's phase, priority, estimate and the reason each job
 * waits; `--job ID` adds the decisions taken for one job and why.  Also home
 * of the small client every live verb uses to ask lucidd over its socket. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli.h"

const char *cli_lucidd_socket(const char *option_value)
{
    if (option_value)
        return option_value;
    const char *env = getenv("LUCID_SOCKET");
    return env && *env ? env : "/run/lucid/lucidd.sock";
}

json_t *cli_lucidd_request(const char *socket_path, const char *request)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof addr.sun_path) {
        cli_fail("socket path %s is too long", socket_path);
        return NULL;
    }
    memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        cli_fail("cannot reach lucidd at %s: %s (is it running? --socket or $LUCID_SOCKET)",
                 socket_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t len = strlen(request);
    if (write(fd, request, len) != (ssize_t)len || write(fd, "\n", 1) != 1) {
        close(fd);
        cli_fail("lucidd at %s: write failed", socket_path);
        return NULL;
    }
    char *buf = NULL;
    size_t used = 0, cap = 0;
    for (;;) {
        if (used + 4096 > cap) {
            char *grown = realloc(buf, cap + 65536);
            if (!grown)
                break;
            buf = grown;
            cap += 65536;
        }
        ssize_t n = read(fd, buf + used, cap - used - 1);
        if (n <= 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    json_error_t jerr;
    json_t *reply = buf ? json_loadb(buf, used, 0, &jerr) : NULL;
    free(buf);
    if (!reply) {
        cli_fail("lucidd at %s: unreadable answer", socket_path);
        return NULL;
    }
    if (!json_is_true(json_object_get(reply, "ok"))) {
        cli_fail("lucidd: %s", json_string_value(json_object_get(reply, "error"))
                                   ? json_string_value(json_object_get(reply, "error"))
                                   : "request failed");
        json_decref(reply);
        return NULL;
    }
    return reply;
}

static const char *str(json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static json_int_t num(json_t *obj, const char *key)
{
    return json_integer_value(json_object_get(obj, key));
}

static double real(json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

static void print_queue(json_t *jobs)
{
    printf("%-8s %-10s %-16s %4s %12s %10s  %s\n", "JOB", "USER", "PHASE", "GPUS", "PRIORITY",
           "EST_S", "REASON");
    size_t i;
    json_t *job;
    json_array_foreach(jobs, i, job)
    {
        printf("%-8lld %-10s %-16s %4lld %12.0f %10.0f  %s\n", (long long)num(job, "job"),
               str(job, "user"), str(job, "phase"), (long long)num(job, "gpus"),
               real(job, "priority"), real(job, "estimate_s"), str(job, "reason"));
    }
}

static void print_explain(json_t *reply)
{
    json_t *job = json_object_get(reply, "job"), *profile = json_object_get(reply, "profile");
    printf("job %lld (%s, %lld GPUs): %s — %s\n", (long long)num(job, "job"), str(job, "user"),
           (long long)num(job, "gpus"), str(job, "phase"), str(job, "reason"));
    printf("priority %.0f = estimate %.0f s x %lld GPUs; sharing score %lld\n",
           real(job, "priority"), real(job, "estimate_s"), (long long)num(job, "gpus"),
           (long long)num(job, "sharing_score"));
    json_t *estimate = json_object_get(reply, "estimate");
    if (estimate)
        printf("estimate: %s v%lld — %s\n", str(estimate, "model"),
               (long long)num(estimate, "version"), str(estimate, "why"));
    if (num(profile, "samples") > 0)
        printf("profile: %lld samples, GPU util %.1f %%, memory %.0f MiB, memory util %.1f %%\n",
               (long long)num(profile, "samples"), real(profile, "gpu_util_pct"),
               real(profile, "gmem_used_mib"), real(profile, "gmem_util_pct"));
    size_t i;
    json_t *d;
    json_array_foreach(json_object_get(reply, "decisions"), i, d)
    {
        printf("  decision %-8s %-20s %s%s\n", str(d, "action"), str(d, "target"),
               str(d, "reason"), json_is_true(json_object_get(d, "acked")) ? "" : " (unacknowledged)");
    }
}

int cmd_queue(int argc, char **argv)
{
    const char *socket_path = NULL, *job = NULL;
    int as_json = 0, all = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0) {
            puts("usage: lucid queue [--socket PATH] [--all] [--json] [--job ID]\n"
                 "  jobs under lucidd: phase, GPUs, lucid priority (lower runs first),\n"
                 "  estimated duration and why each waits; --job explains one job.");
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            as_json = 1;
        } else if (strcmp(argv[i], "--all") == 0) {
            all = 1;
        } else if ((r = cli_option(argc, argv, &i, "--socket", &socket_path)) != 0) {
            if (r < 0)
                return 2;
        } else if ((r = cli_option(argc, argv, &i, "--job", &job)) != 0) {
            if (r < 0)
                return 2;
        } else {
            return cli_fail("queue: unknown argument '%s'", argv[i]);
        }
    }
    char request[128];
    int64_t job_id = 0;
    if (job && cli_int("--job", job, &job_id) < 0)
        return 2;
    if (job)
        snprintf(request, sizeof request, "{\"cmd\":\"explain\",\"job\":%lld}", (long long)job_id);
    else
        snprintf(request, sizeof request, "{\"cmd\":\"queue\",\"all\":%s}", all ? "true" : "false");
    json_t *reply = cli_lucidd_request(cli_lucidd_socket(socket_path), request);
    if (!reply)
        return 1;
    if (as_json)
        json_dumpf(reply, stdout, JSON_INDENT(2)), putchar('\n');
    else if (job)
        print_explain(reply);
    else
        print_queue(json_object_get(reply, "jobs"));
    json_decref(reply);
    return 0;
}
