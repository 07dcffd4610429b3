/* cmd_release.c — `lucid release JOB`: a job's owner lifts their own hold.
 *
 * lucid holds every job it manages with an operator's hold, so `scontrol
 * release` by a user is refused by Slurm.  A job submitted with `sbatch -H`
 * is also held by its owner; lucidd keeps it out of its queues until the
 * owner (or root) says so here.  lucidd checks who asks from the socket's
 * peer credentials. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] = "usage: lucid release JOB [--socket PATH]\n"
                                 "  lift your own hold (sbatch -H) of a job that lucid manages;\n"
                                 "  it then waits for lucid's decision like any other job.\n";

int cmd_release(int argc, char **argv)
{
    const char *socket_path = NULL, *job_text = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if ((r = cli_option(argc, argv, &i, "--socket", &socket_path)) != 0) {
            if (r < 0)
                return 2;
        } else if (!job_text && argv[i][0] != '-') {
            job_text = argv[i];
        } else {
            cli_fail("release: unknown argument '%s'", argv[i]);
            fputs(usage_text, stderr);
            return 2;
        }
    }
    int64_t job = 0;
    if (!job_text) {
        fputs(usage_text, stderr);
        return 2;
    }
    if (cli_int("JOB", job_text, &job) < 0)
        return 2; /* its one line said why */
    if (job <= 0 || job > 4294967295LL) {
        cli_fail("release: '%s' is not a job id", job_text);
        return 2;
    }
    char request[64];
    snprintf(request, sizeof request, "{\"cmd\":\"release\",\"job\":%lld}", (long long)job);
    json_t *reply = cli_lucidd_request(cli_lucidd_socket(socket_path), request);
    if (!reply)
        return 1;
    int ok = json_is_true(json_object_get(reply, "ok"));
    const char *text = json_string_value(json_object_get(reply, ok ? "message" : "error"));
    if (ok)
        printf("%s\n", text ? text : "released");
    else
        cli_fail("release: %s", text ? text : "refused");
    json_decref(reply);
    return ok ? 0 : 1;
}
