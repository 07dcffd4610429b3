/* cmd_model.c — `lucid model` (being written). */
#include "cli.h"

int cmd_model(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_fail("'model' is not available in this build yet");
}
