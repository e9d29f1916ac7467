/* mpi_launch.c — `srdc sweep --mpi` (mpi_launch.h): finds srd-mpi-sweep (beside srdc, else on
 * PATH) and the launcher (--mpirun, default `mpirun`), and runs one under the other. */
#include "cluster/mpi_launch.h"
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { MAX_LAUNCHER_WORDS = 32 };

static const char *launcher(const SweepOptions *o)
{
    return o->mpirun && *o->mpirun ? o->mpirun : "mpirun";
}

/* The full path of cmd on PATH (or cmd itself when it has a slash) in full; false if none. */
static bool find_command(const char *cmd, char *full, size_t n)
{
    if (strchr(cmd, '/')) {
        snprintf(full, n, "%s", cmd);
        return access(full, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *s = path ? path : ""; *s;) {
        size_t len = strcspn(s, ":");
        snprintf(full, n, "%.*s/%s", (int)len, s, cmd);
        if (len && access(full, X_OK) == 0)
            return true;
        s += len + (s[len] == ':');
    }
    return false;
}

/* srd-mpi-sweep: beside this srdc (the build directory, or the install's bin), else on PATH. */
static bool find_worker(char *full, size_t n)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = 0;
        snprintf(full, n, "%s/srd-mpi-sweep", dirname(self));
        if (access(full, X_OK) == 0)
            return true;
    }
    return find_command("srd-mpi-sweep", full, n);
}

int mpi_check(const SweepOptions *o)
{
    char full[PATH_MAX], first[256];
    if (!find_worker(full, sizeof full)) {
        fprintf(stderr, "srdc: error: --mpi needs srd-mpi-sweep, which is neither beside srdc nor on PATH\n"
                        "hint: it is built with srd when Open MPI is installed (libopenmpi-dev, openmpi-bin): "
                        "install it and build srd again\n");
        return 1;
    }
    snprintf(first, sizeof first, "%.*s", (int)strcspn(launcher(o), " "), launcher(o));
    if (!find_command(first, full, sizeof full)) {
        fprintf(stderr, "srdc: error: --mpi needs the MPI launcher `%s`, which is not on PATH\n"
                        "hint: install Open MPI (openmpi-bin) or load your site's MPI module; --mpirun CMD "
                        "names another launcher (such as `srun`)\n", first);
        return 1;
    }
    return 0;
}

/* argv: the launcher's words, -np N (srun: -n N) when --ranks is given, then srd-mpi-sweep DIR [--quiet].
 * words holds the launcher's text, cut at its spaces. */
static int launch_argv(const SweepOptions *o, const char *dir, const char *worker, char *words, char **argv,
                       char *ranks)
{
    int n = 0;
    for (char *w = strtok(words, " "); w && n < MAX_LAUNCHER_WORDS; w = strtok(NULL, " "))
        argv[n++] = w;
    if (o->ranks) { /* Slurm's srun counts tasks with -n; mpirun and mpiexec take -np */
        const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        snprintf(ranks, 16, "%d", o->ranks);
        argv[n++] = (char *)(!strcmp(base, "srun") ? "-n" : "-np");
        argv[n++] = ranks;
    }
    argv[n++] = (char *)worker;
    argv[n++] = (char *)dir;
    if (o->quiet)
        argv[n++] = (char *)"--quiet";
    argv[n] = NULL;
    return n;
}

/* Whether every run succeeded (srd-mpi-sweep exits 0 whatever the runs did). */
static bool all_ok(const SweepRows *rows)
{
    for (int k = 0; k < rows->n; k++)
        if (rows_state(rows, k, NULL, 0) != ROW_OK)
            return false;
    return true;
}

int mpi_sweep(const SweepOptions *o, const SweepRows *rows)
{
    char worker[PATH_MAX], ranks[16], *words = strdup(launcher(o));
    char *argv[MAX_LAUNCHER_WORDS + 8];
    find_worker(worker, sizeof worker);
    launch_argv(o, rows->dir, worker, words, argv, ranks);
    if (!o->quiet)
        printf("sweeping %d runs of %s under MPI: %s ... srd-mpi-sweep\n", rows->n, o->file, launcher(o));
    fflush(stdout);
    pid_t pid;
    int status = 0, err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    while (!err && waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    free(words);
    int code = err ? -1 : rows_exit_code(status);
    if (code == 0)
        return all_ok(rows) ? 0 : 2;
    if (code == 1)
        return code; /* srd-mpi-sweep's own message said what was wrong */
    fprintf(stderr, "srdc: error: `%s` ended with %s %d\n", launcher(o), code < 0 ? "error" : "exit status",
            code < 0 ? err : code);
    fprintf(stderr, "hint: see its messages above; as root, Open MPI asks for --allow-run-as-root (or "
                    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1); docs/cluster.md\n");
    return 1;
}
