/* progress.c — `srdc sweep --status DIR` and `--collect DIR` (sweep.h): how far a sweep's runs
 * are, whoever runs them (the local pool, Slurm array tasks, MPI ranks), and its summary merged
 * from the runs that finished. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "cluster/rows.h"
#include "cluster/slurm.h"
#include "sweep.h"

enum { MAX_LISTED = 20 };

/* Whether the sweep was submitted to Slurm and none of its jobs is queued or running any more
 * (squeue lists none of them). */
static bool jobs_gone(const char *dir)
{
    char ids[1024], cmd[1100], line[64];
    if (!slurm_job_ids(dir, ids, sizeof ids))
        return false;
    snprintf(cmd, sizeof cmd, "squeue -h -o %%i -j %s 2>/dev/null", ids);
    FILE *p = popen(cmd, "r");
    bool any = p && fgets(line, sizeof line, p);
    int status = p ? pclose(p) : -1;
    return !any && status != -1 && WEXITSTATUS(status) != 127; /* 127: no squeue here, so unknown */
}

/* The failed runs' status and log, at most MAX_LISTED of them. */
static void list_failed(const SweepRows *r)
{
    char word[64];
    int listed = 0;
    for (int k = 0; k < r->n; k++)
        if (rows_state(r, k, word, sizeof word) == ROW_FAILED && listed++ < MAX_LISTED)
            printf("  run %d: %s (see %s/run_%d/log.txt)\n", k + 1, word, r->dir, k + 1);
    if (listed > MAX_LISTED)
        printf("  ... and %d more\n", listed - MAX_LISTED);
}

int sweep_status(const char *dir)
{
    SweepRows r;
    if (!rows_read(&r, dir, "srdc")) {
        rows_free(&r);
        return 1;
    }
    int count[4] = { 0 };
    for (int k = 0; k < r.n; k++)
        count[rows_state(&r, k, NULL, 0)]++;
    printf("%s: %d runs: %d ok, %d failed, %d running, %d not run\n", dir, r.n, count[ROW_OK], count[ROW_FAILED],
           count[ROW_RUNNING], count[ROW_NOT_RUN]);
    list_failed(&r);
    if (count[ROW_RUNNING] && jobs_gone(dir))
        printf("no job of this sweep is in Slurm's queue: the %d runs marked running were stopped (killed or "
               "out of time); submitting the sweep again reruns them\n", count[ROW_RUNNING]);
    int status = count[ROW_OK] == r.n ? 0 : 2;
    rows_free(&r);
    return status;
}

int sweep_collect(const char *dir)
{
    SweepRows r;
    if (!rows_read(&r, dir, "srdc")) {
        rows_free(&r);
        return 1;
    }
    int ok = 0, failed = 0, unfinished = 0, status = rows_collect(&r, &ok, &failed, &unfinished);
    if (status == 0) {
        printf("%d of %d runs succeeded", ok, r.n);
        if (failed || unfinished)
            printf(" (%d failed, %d not finished)", failed, unfinished);
        printf("; summary in %s/summary.csv\n", dir);
        status = ok == r.n ? 0 : 2;
    }
    rows_free(&r);
    return status;
}
