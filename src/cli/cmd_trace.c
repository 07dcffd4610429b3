/* cmd_trace.c — `lucid trace` (being written). */
#include "cli.h"

int cmd_trace(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("'trace' is not available in this build yet");
}
