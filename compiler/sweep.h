/* sweep.h — `srdc sweep`: one build, many runs over param values, one summary CSV. */
#ifndef SRD_SWEEP_H
#define SRD_SWEEP_H
#include <stdbool.h>

typedef struct SweepOptions {
    const char  *file;
    const char **specs;      /* "NAME=a..b:log:n", "NAME=v1,v2", "NAME=v" */
    int          n_specs;
    const char  *sets;       /* CSV of parameter sets, or NULL */
    const char  *out;        /* directory of the runs and summary.csv */
    int          jobs;       /* runs at a time; 0: one per processor */
    const char  *duration, *dt;  /* passed on to every run, or NULL */
    bool         quiet;
    enum { SWEEP_LOCAL, SWEEP_SLURM, SWEEP_MPI } mode;  /* who runs the rows */
    int          chunk;      /* Slurm: rows per array task; 0: as few per task as the array allows */
    const char  *partition, *time;  /* Slurm: #SBATCH --partition and --time, or NULL */
    bool         submit;     /* Slurm: submit the script with sbatch */
    int          ranks;      /* MPI: ranks (one manager, the rest run rows); 0: mpirun decides */
    const char  *mpirun;     /* MPI: the launcher command, "mpirun" by default */
} SweepOptions;

/* Returns an exit status: 0 when every run succeeded, 2 when some failed, 1 for bad input,
 * 3 for I/O errors. */
int sweep_model(const SweepOptions *o);
/* `srdc sweep --status DIR` and `--collect DIR`: progress of a sweep's runs, and its summary
 * merged from the runs that finished (compiler/cluster/progress.c). Same exit statuses. */
int sweep_status(const char *dir);
int sweep_collect(const char *dir);

#endif
