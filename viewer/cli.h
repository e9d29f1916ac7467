/* cli.h — what the viewer's commands (srdc render, srdc view) share of reading their command
 * lines: the error report and the one run directory. */
#ifndef SRD_VIEWER_CLI_H
#define SRD_VIEWER_CLI_H
#include <stddef.h>

/* The program that names itself in messages: srdc, or a built simulator. */
void        srd_cli_set_program(const char *name);
const char *srd_cli_program(void);
/* Prints "PROGRAM: error: " with fmt (one %s, what) and a hint to `srdc help cmd`; returns 1, the
 * exit status of bad input. */
int srd_cli_error(const char *cmd, const char *fmt, const char *what);
/* An argument that is neither an option nor an option's value: the run directory, given once.
 * 0, or 1 after reporting an unknown option or a second directory. */
int srd_cli_operand(const char *cmd, const char *arg, const char **dir);
/* Runs argv (found on PATH), its output into the file log (NULL: this process's). 0 when it
 * exits 0; 127 when it cannot be found or started; -1 when it fails, with the reason in err. */
int srd_cli_run(char *const argv[], const char *log, char *err, size_t err_n);

#endif
