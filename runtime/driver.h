/* driver.h — runs the analyses of a model with its compiled kernels: what `srdc run` and
 * every simulator built by `srdc build` do once the kernels exist. */
#ifndef SRD_DRIVER_H
#define SRD_DRIVER_H
#include <stdbool.h>
#include "srd_kernel.h"
#include "srd_model.h"

/* Exit statuses of srdc and of built simulators. */
enum { SRD_EXIT_OK = 0, SRD_EXIT_BAD_INPUT = 1, SRD_EXIT_NUMERIC = 2, SRD_EXIT_IO = 3, SRD_EXIT_MEMORY = 4 };

typedef struct srd_run_options {
    const char  *program;     /* name in messages: "srdc" or the simulator's */
    const char  *out;         /* output directory */
    const char  *resume;      /* --resume DIR: continue the simulation from DIR's checkpoint */
    double       duration;    /* > 0 overrides the file's */
    double       dt;
    const char **overrides;   /* "name=value"; room for one per argument */
    int          n_overrides;
    bool         quiet;
    bool         verbose;     /* print every Newton iteration */
    const char  *solver;      /* --solver: overrides every analysis's `solver` ("auto", "dense", ...) */
} srd_run_options;

/* The compiled kernels of a model, by element set, and its schedule functions. */
typedef struct srd_kernel_table {
    const srd_kernel_fn   *fns;        /* n_sets: value, gradient and Jacobian */
    const srd_kernel_fn   *gradients;  /* n_sets: value and gradient */
    const srd_kernel_info *infos;      /* n_sets */
    int                    n_schedules;
    const srd_kernel_fn   *schedules;
    const int             *schedule_actuation, *schedule_expr;
    srd_kernel_fn          ground_height;  /* uneven ground, or NULL */
} srd_kernel_table;

struct srd_sim;

/* A sim for analysis a of m with the table's kernels and its schedules installed (at step_dt, the
 * `dt` they read): the analysis's solver, or `solver_override` when not NULL (`auto` takes the
 * sparse solver for the modes of a large solid). Returns 0, or srd_sim_init's status with its
 * message in err. Newton's settings are the caller's. */
int srd_sim_for_analysis(struct srd_sim *s, const srd_model *m, const srd_kernel_table *kt, const srd_analysis *a,
                         const char *solver_override, double step_dt, char *err, size_t err_n);

/* Makes running out of memory end the program with a message and SRD_EXIT_MEMORY instead of
 * SIGABRT: for the programs (srdc, built simulators), not for library users. */
void srd_exit_when_out_of_memory(const char *program);

/* Refuses, with a message, a model that has nothing to run or needs what the runtime lacks. */
int srd_run_check(const srd_model *m, const srd_run_options *o);

/* Runs the static, modes and simulate analyses the model has, in that order. Returns an
 * exit status (SRD_EXIT_*); messages go to stderr, the summary to stdout. */
int srd_run(const srd_model *m, const srd_kernel_table *kt, const srd_run_options *o);

/* Consumes the run option at argv[*i] (and its value): --out, --resume, --duration, --dt, -p,
 * --solver, --quiet, --verbose. Returns 1 when taken, 0 when it is not a run option, -1 after reporting a bad
 * value. */
int srd_run_options_parse(srd_run_options *o, int argc, char **argv, int *i);

/* The index of the -p spec in specs[0..n) that sets the same param as `spec` ("name=..."),
 * or -1. */
int srd_override_find(const char *const *specs, int n, const char *spec);
/* Reports a param given twice on the command line (srdc run, sweep, built simulators). */
void srd_override_report_twice(const char *program, const char *first, const char *again);

#endif
