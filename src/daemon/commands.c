/* commands.c — the engine's side of the client requests that need it,
 * run on the decision thread between ticks (lucidd_hub_drain): the server
 * thread queues them with the client's credentials, this file answers.
 *   release  an owner lifting their own `sbatch -H` hold (engine_release:
 *            the owner or root only)
 *   why      the explanation of a job's duration estimate, which reads the
 *            duration model only this thread may touch */
#include <stdio.h>

#include "daemon.h"
#include "models.h"

static int release(lucidd *d, const lucidd_command *cmd, char *reply, size_t size)
{
    return engine_release(d, cmd->job_id, cmd->uid, reply, size);
}

static int why(lucidd *d, const lucidd_command *cmd, char *reply, size_t size)
{
    lucidd_job *job = engine_find(d, cmd->job_id);
    if (!job) {
        snprintf(reply, size, "no such job under lucid");
        return -1;
    }
    lucidd_models_explain(d->models, job, job->estimate_version, reply, size);
    return 0;
}

int engine_command(lucidd *d, const lucidd_command *cmd, char *reply, size_t size)
{
    static const struct {
        lucidd_command_kind kind;
        int (*run)(lucidd *, const lucidd_command *, char *, size_t);
    } table[] = {{LUCIDD_CMD_RELEASE, release}, {LUCIDD_CMD_WHY, why}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].kind == cmd->kind)
            return table[i].run(d, cmd, reply, size);
    snprintf(reply, size, "unknown command %d", (int)cmd->kind);
    return -1;
}
