/* cli.c — the shared command-line pieces of cli.h. */
#include "cli.h"
#include <stdio.h>

int srd_cli_error(const char *cmd, const char *fmt, const char *what)
{
    fprintf(stderr, "srdc: error: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\nhint: see `srdc help %s`\n", cmd);
    return 1;
}

int srd_cli_operand(const char *cmd, const char *arg, const char **dir)
{
    if (arg[0] == '-')
        return srd_cli_error(cmd, "unknown option `%s`", arg);
    if (*dir)
        return srd_cli_error(cmd, "one run directory, but `%s` is a second", arg);
    *dir = arg;
    return 0;
}
