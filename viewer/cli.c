/* cli.c — the shared command-line pieces of cli.h. */
#include "cli.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *program = "srdc";

void srd_cli_set_program(const char *name) { program = name; }

const char *srd_cli_program(void) { return program; }

int srd_cli_error(const char *cmd, const char *fmt, const char *what)
{
    fprintf(stderr, "%s: error: ", program);
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

/* In the child: output to log when given, then the program. */
static void exec_logged(char *const argv[], const char *log)
{
    int fd = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
    }
    execvp(argv[0], argv);
    _exit(127);
}

int srd_cli_run(char *const argv[], const char *log, char *err, size_t err_n)
{
    fflush(NULL); /* what this process printed comes first */
    pid_t pid = fork();
    if (pid == 0)
        exec_logged(argv, log);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
        snprintf(err, err_n, "cannot start %s: %s", argv[0], strerror(errno));
        return 127;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        snprintf(err, err_n, "`%s` is not installed", argv[0]);
        return 127;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(err, err_n, "%s failed", argv[0]);
        return -1;
    }
    return 0;
}
