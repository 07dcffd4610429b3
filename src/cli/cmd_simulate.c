/* cmd_simulate.c — `lucid simulate` (being written). */
#include "cli.h"

int cmd_simulate(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("'simulate' is not available in this build yet");
}
