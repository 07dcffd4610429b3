/* cli.h — what the `lucid` verbs share: the command table and option helpers.
 * Each verb lives in its own file as `int cmd_<verb>(int argc, char **argv)`
 * returning the process exit status. */
#ifndef LUCID_CLI_H
#define LUCID_CLI_H

#include <stdint.h>

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

int cmd_simulate(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_status(int argc, char **argv);

/* Prints "lucid: <message>" to stderr and returns 1 (for `return cli_fail(...)`). */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* For "--name VALUE" and "--name=VALUE": if argv[*i] is option `name`, stores
 * its value, advances *i and returns 1; returns 0 if it is another argument;
 * -1 (after printing) if the value is missing. */
int cli_option(int argc, char **argv, int *i, const char *name, const char **value);
/* Parses an integer option value or prints an error naming the option. */
int cli_int(const char *option, const char *value, int64_t *out);

/* The live verbs' client of lucidd's socket: --socket value, else
 * $LUCID_SOCKET, else /run/lucid/lucidd.sock. */
const char *cli_lucidd_socket(const char *option_value);
/* Sends one JSON request; returns the reply (a jansson json_t *, caller
 * decrefs) or NULL after printing why.  Declared opaque to keep jansson out
 * of every verb. */
struct json_t *cli_lucidd_request(const char *socket_path, const char *request);

#endif
