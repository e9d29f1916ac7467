/* mpi_sweep.c — srd-mpi-sweep, the MPI side of `srdc sweep --mpi`: `mpirun srd-mpi-sweep DIR`
 * runs the rows of sweep directory DIR (cluster/rows.h) that have not succeeded. Rank 0 hands
 * out rows one at a time as workers finish (a slow run stalls nobody), then merges summary.csv;
 * the other ranks run them exactly as the local pool does. A program of its own so that srdc
 * never links MPI. */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include "cluster/rows.h"

enum { TAG_WORK = 1, TAG_DONE = 2, NO_MORE = -1 };

/* ---- a worker ---- */

/* Runs one row and returns its exit code; its status file says the same. */
static int run_row(const SweepRows *r, int k)
{
    pid_t pid = rows_spawn(r, k);
    if (pid < 0) {
        rows_set_status(r, k, rows_status_name(3));
        return 3;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return rows_finish(r, k, 0xff00); /* lost the child: an I/O-like error */
    return rows_finish(r, k, status);
}

/* Asks for rows until the manager says there are no more. */
static void work(const SweepRows *r)
{
    for (;;) {
        int k, done[2];
        MPI_Recv(&k, 1, MPI_INT, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (k == NO_MORE)
            return;
        done[0] = k;
        done[1] = run_row(r, k);
        MPI_Send(done, 2, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD);
    }
}

/* ---- the manager ---- */

/* Waits for any worker's report without spinning a core: the runs need them all. */
static int wait_done(int done[2])
{
    MPI_Request req;
    MPI_Status st;
    int flag = 0;
    MPI_Irecv(done, 2, MPI_INT, MPI_ANY_SOURCE, TAG_DONE, MPI_COMM_WORLD, &req);
    for (MPI_Test(&req, &flag, &st); !flag; MPI_Test(&req, &flag, &st))
        nanosleep(&(struct timespec){ 0, 500000 }, NULL);
    return st.MPI_SOURCE;
}

/* "run 3/12: fall = 0 -> ok (DIR/run_3/log.txt)", names from the header, values in SI. */
static void report(const SweepRows *r, int k, int code, bool quiet)
{
    if (quiet && code == 0)
        return;
    printf("run %d/%d", k + 1, r->n);
    const char *name = strchr(r->header, ','), *value = strchr(r->fields[k], ',');
    for (int a = 0; name && value; a++) {
        int nl = (int)strcspn(name + 1, ","), vl = (int)strcspn(value + 1, ",");
        printf("%s %.*s = %.*s", a ? "," : ":", nl, name + 1, vl, value + 1);
        name = strchr(name + 1, ','), value = strchr(value + 1, ',');
    }
    printf(" -> %s (%s%s/run_%d/log.txt)\n", rows_status_name(code), code ? "see " : "", r->dir, k + 1);
    fflush(stdout);
}

/* Hands out the rows that have not succeeded, the next one to whichever worker reports. */
static void manage(const SweepRows *r, int workers, bool quiet)
{
    int *todo = malloc(sizeof(int) * (size_t)(r->n + 1)), n = 0, next = 0, busy = 0;
    for (int k = 0; k < r->n; k++)
        if (rows_state(r, k, NULL, 0) != ROW_OK)
            todo[n++] = k;
    for (int w = 1; w <= workers; w++) {
        int k = next < n ? todo[next++] : NO_MORE;
        busy += k != NO_MORE;
        MPI_Send(&k, 1, MPI_INT, w, TAG_WORK, MPI_COMM_WORLD);
    }
    while (busy > 0) {
        int done[2], from = wait_done(done);
        report(r, done[0], done[1], quiet);
        int k = next < n ? todo[next++] : NO_MORE;
        busy += (k != NO_MORE) - 1;
        MPI_Send(&k, 1, MPI_INT, from, TAG_WORK, MPI_COMM_WORLD);
    }
    free(todo);
}

/* The summary, as `srdc sweep` prints it. Failed runs are no failure of this program: a
 * nonzero exit status would make mpirun print a page about aborting the job, so the count of
 * failed runs is left to the summary (and to srdc, which reads it). */
static int finish(const SweepRows *r)
{
    int ok = 0, status = rows_collect(r, &ok, NULL, NULL);
    if (status == 0)
        printf("%d of %d runs succeeded; summary in %s/summary.csv\n", ok, r->n, r->dir);
    return status;
}

/* Rank 0's checks: the arguments, at least one worker, a sweep directory. */
static int check_start(int argc, char **argv, int size, SweepRows *r)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "srd-mpi-sweep: error: no sweep directory\n"
                        "hint: mpirun -np 4 srd-mpi-sweep DIR [--quiet], DIR made by `srdc sweep ... --mpi`\n");
        return 1;
    }
    if (size < 2) {
        fprintf(stderr, "srd-mpi-sweep: error: an MPI sweep needs at least 2 ranks (one hands out the rows, the "
                        "others run them), and this one has 1\n"
                        "hint: mpirun -np 3 srd-mpi-sweep DIR (or srdc sweep ... --mpi --ranks 3); for one "
                        "machine, the local pool (srdc sweep without --mpi) does the same\n");
        return 1;
    }
    return rows_read(r, argv[1], "srd-mpi-sweep") ? 0 : 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, status = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    SweepRows r = { 0 };
    if (rank == 0)
        status = check_start(argc, argv, size, &r);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (status == 0 && rank != 0 && !rows_read(&r, argv[1], "srd-mpi-sweep"))
        MPI_Abort(MPI_COMM_WORLD, 1); /* rank 0 read it: this node does not see the directory */
    bool quiet = argc > 2 && !strcmp(argv[2], "--quiet");
    if (status == 0 && rank == 0)
        manage(&r, size - 1, quiet);
    else if (status == 0)
        work(&r);
    if (status == 0 && rank == 0)
        status = finish(&r);
    rows_free(&r);
    MPI_Finalize();
    return status;
}
