/* handback.h — the fail-open watchdog mode of lucidd (handback.c):
 * `lucidd --hand-back-after SECONDS --heartbeat FILE`. */
#ifndef LUCIDD_HANDBACK_H
#define LUCIDD_HANDBACK_H

/* Does the command line ask for the watchdog (--hand-back-after)? */
int handback_wanted(int argc, char **argv);
/* Runs the watchdog until SIGTERM/SIGINT; the process's exit status. */
int handback_main(int argc, char **argv);

#endif
