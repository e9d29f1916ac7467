/* rows.h — a sweep directory's rows, as files every mode shares: what each run executes, the
 * summary's leading fields, each run's status, and the summary merged from them.
 *
 * A sweep directory DIR holds
 *   rows.tsv      line k: the command of run k, its arguments separated by tabs (a value such
 *                 as `youngs=1e9 Pa` has spaces, never tabs); the runner appends --out DIR/run_k
 *   rows.csv      the summary's header up to the status column, then line k: `k,value,...`
 *   run_k/        run k's outputs, log.txt (what it printed) and status (one word, written
 *                 atomically: running, ok, bad_input, numerical_failure, io_error,
 *                 out_of_memory, crashed)
 *   summary.csv   rows.csv's fields, the status and the last row of the run's probes
 * The local pool, a Slurm array task (a shell script) and an MPI worker all read rows.tsv and
 * write run_k/status, so `--status` and `--collect` work whatever ran the rows. */
#ifndef SRD_CLUSTER_ROWS_H
#define SRD_CLUSTER_ROWS_H
#include <stdbool.h>
#include <sys/types.h>

typedef struct SweepRows {
    char  *dir;        /* the sweep directory */
    int    n;          /* runs */
    char **command;    /* per run: tab-separated arguments, the executable first */
    char **fields;     /* per run: the summary's leading fields, "k,v1,v2" */
    char  *header;     /* "run,NAME_UNIT,..." */
} SweepRows;

/* Where a run stands, from its status file. */
typedef enum RowState { ROW_NOT_RUN, ROW_RUNNING, ROW_OK, ROW_FAILED } RowState;

/* Empty rows of directory dir; rows_add appends one run. */
void rows_init(SweepRows *r, const char *dir, const char *header);
void rows_add(SweepRows *r, const char *command, const char *fields);
void rows_free(SweepRows *r);

/* rows.tsv and rows.csv of r, each written to a temporary file then renamed. */
bool rows_write(const SweepRows *r);
/* Whether dir already holds these very rows (a rerun of the same sweep). */
bool rows_match_disk(const SweepRows *r);
/* Reads dir's rows; prints `PROGRAM: error: ...` with a hint and returns false when dir is
 * not a sweep directory. */
bool rows_read(SweepRows *r, const char *dir, const char *program);

/* The word for a run's exit status (an SRD_EXIT_* code; -1 for a run killed by a signal). */
const char *rows_status_name(int code);
/* The exit code of a waitpid() status: the process's exit status, -1 when a signal ended it. */
int rows_exit_code(int wait_status);
/* Writes run k's status file (k from 0) atomically; false on I/O errors. */
bool rows_set_status(const SweepRows *r, int k, const char *status);
/* Run k's state; word (n bytes, may be NULL) gets the status word. */
RowState rows_state(const SweepRows *r, int k, char *word, size_t n);
/* Removes every run's status file: a fresh sweep over a directory used before. */
void rows_clear_status(const SweepRows *r);

/* Starts run k (its directory, `running` status, log.txt as stdout and stderr, one BLAS and
 * OpenMP thread unless the environment says otherwise); returns its pid or -1. */
pid_t rows_spawn(const SweepRows *r, int k);
/* Records the status of run k, ended with waitpid() status wait_status; returns its exit code. */
int rows_finish(const SweepRows *r, int k, int wait_status);

/* Merges summary.csv from the runs' status files and probes. Counts go to the pointers (may be
 * NULL). Returns an SRD_EXIT_* code (I/O errors only). */
int rows_collect(const SweepRows *r, int *n_ok, int *n_failed, int *n_unfinished);

#endif
