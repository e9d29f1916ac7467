/* slurm.c — `srdc sweep --slurm` (slurm.h): an array-job script per submission, over the rows
 * that have not succeeded yet, chunked to fit the site's MaxArraySize; sbatch with --submit.
 * The script is plain sh and needs only the simulator: compute nodes need no srdc. */
#include "cluster/slurm.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

enum { DEFAULT_MAX_ARRAY = 1001 }; /* Slurm's own default MaxArraySize */

/* File systems that several machines mount, by statfs magic number. */
static const struct { long magic; const char *name; } shared_fs[] = {
    { 0x6969, "NFS" },          { 0x0BD00BD0, "Lustre" },    { 0x47504653, "GPFS" },
    { 0x19830326, "BeeGFS" },   { 0x00C36400, "CephFS" },    { 0xFF534D42, "CIFS" },
    { 0xFE534D42, "SMB2" },     { 0x517B, "SMB" },           { 0xAAD7AAEA, "PanFS" },
    { 0x65735546, "FUSE" },     { 0x01021997, "9p" },        { 0x6B414653, "AFS" },
};

bool slurm_path_shared(const char *path, char *why, size_t n)
{
    static const char *const local_dirs[] = { "/tmp/", "/var/tmp/", "/dev/shm/" };
    for (size_t k = 0; k < sizeof local_dirs / sizeof *local_dirs; k++)
        if (!strncmp(path, local_dirs[k], strlen(local_dirs[k]))) {
            snprintf(why, n, "is under %.*s, which is each machine's own", (int)strlen(local_dirs[k]) - 1,
                     local_dirs[k]);
            return false;
        }
    struct statfs fs;
    if (statfs(path, &fs) != 0)
        return true; /* cannot tell: no warning */
    for (size_t k = 0; k < sizeof shared_fs / sizeof *shared_fs; k++)
        if ((long)(unsigned)fs.f_type == shared_fs[k].magic)
            return true;
    snprintf(why, n, "is on a local file system (type 0x%lx), not a network one", (unsigned long)fs.f_type);
    return false;
}

static void warn_unshared(const char *what, const char *path)
{
    char why[160];
    if (slurm_path_shared(path, why, sizeof why))
        return;
    fprintf(stderr, "srdc: warning: %s %s %s: compute nodes may not reach it\n", what, path, why);
    fprintf(stderr, "hint: on a cluster, put the sweep (--out) on a file system every node mounts (home, project "
                    "or scratch space); see docs/cluster.md\n");
}

/* Whether a command is on PATH. */
static bool on_path(const char *cmd)
{
    const char *path = getenv("PATH");
    char full[PATH_MAX];
    for (const char *s = path ? path : ""; *s;) {
        size_t len = strcspn(s, ":");
        snprintf(full, sizeof full, "%.*s/%s", (int)len, s, cmd);
        if (len && access(full, X_OK) == 0)
            return true;
        s += len + (s[len] == ':');
    }
    return false;
}

int slurm_check(const SweepOptions *o, const char *dir, const char *exe)
{
    if (o->submit && !on_path("sbatch")) {
        fprintf(stderr, "srdc: error: --submit needs Slurm's `sbatch`, which is not on PATH\n"
                        "hint: run on the cluster's login node (or `module load slurm`), or drop --submit and "
                        "submit the script that srdc writes there\n");
        return 1;
    }
    warn_unshared("the sweep directory", dir);
    if (strncmp(exe, dir, strlen(dir))) /* srdc itself runs each row: it must be reachable too */
        warn_unshared("srdc, which runs each row,", exe);
    return 0;
}

/* Single-quotes s for sh. */
static void shell_quote(char *buf, size_t n, const char *s)
{
    size_t at = 0;
    buf[at++] = '\'';
    for (; *s && at + 6 < n; s++)
        if (*s == '\'')
            at += (size_t)snprintf(buf + at, n - at, "'\\''");
        else
            buf[at++] = *s;
    buf[at++] = '\'';
    buf[at] = 0;
}

/* MaxArraySize from `scontrol show config`, or Slurm's default (said once) when it cannot be
 * asked. Array task ids go from 0 to MaxArraySize - 1. */
static int max_array_size(void)
{
    /* Without its configuration file scontrol retries for a minute: not asked then, and never
     * waited for more than 15 s. */
    const char *conf = getenv("SLURM_CONF");
    bool ask = on_path("scontrol") && (!conf || access(conf, R_OK) == 0);
    const char *cmd = on_path("timeout") ? "timeout 15 scontrol show config 2>/dev/null"
                                         : "scontrol show config 2>/dev/null";
    FILE *p = ask ? popen(cmd, "r") : NULL;
    char line[512];
    int max = 0;
    while (p && fgets(line, sizeof line, p))
        if (!strncmp(line, "MaxArraySize", 12) && strchr(line, '='))
            max = atoi(strchr(line, '=') + 1);
    if (p)
        pclose(p);
    if (max > 0)
        return max;
    printf("srdc: note: cannot ask Slurm for MaxArraySize (`scontrol show config`); assuming its default, %d\n",
           DEFAULT_MAX_ARRAY);
    return DEFAULT_MAX_ARRAY;
}

/* The rows (numbered from 1) that have not succeeded: new, failed, or left `running` by a task
 * that was killed. */
static int pending_rows(const SweepRows *rows, int *pending)
{
    int n = 0;
    for (int k = 0; k < rows->n; k++)
        if (rows_state(rows, k, NULL, 0) != ROW_OK)
            pending[n++] = k + 1;
    return n;
}

/* Rows per array task: --chunk, or as few as the array allows; raised (and said) when
 * --chunk would make more tasks than MaxArraySize. */
static int chunk_size(const SweepOptions *o, int n_pending)
{
    int max = max_array_size(), fit = (n_pending + max - 1) / max;
    if (!o->chunk)
        return fit > 1 ? fit : 1;
    if (o->chunk >= fit)
        return o->chunk;
    printf("srdc: note: --chunk %d makes more than MaxArraySize = %d array tasks: %d rows per task instead\n",
           o->chunk, max, fit);
    return fit;
}

/* The first free submission number N (DIR/slurm/job_N.sbatch does not exist). */
static int next_submission(const char *dir)
{
    char path[PATH_MAX + 64];
    int n = 1;
    for (;; n++) {
        snprintf(path, sizeof path, "%s/slurm/job_%d.sbatch", dir, n);
        if (access(path, F_OK) != 0)
            return n;
    }
}

static bool write_pending(const char *path, const int *pending, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    for (int k = 0; k < n; k++)
        fprintf(f, "%d\n", pending[k]);
    return fclose(f) == 0;
}

/* The #SBATCH lines: the array, the task's output, one CPU, and the optional partition and
 * time limit. */
static void script_header(FILE *f, const SweepOptions *o, const char *dir, int job, int tasks)
{
    fprintf(f, "#!/bin/sh\n");
    fprintf(f, "#SBATCH --job-name=srd-sweep\n");
    fprintf(f, "#SBATCH --array=0-%d\n", tasks - 1);
    fprintf(f, "#SBATCH --output=%s/slurm/job_%d_task_%%a.out\n", dir, job);
    fprintf(f, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n");
    if (o->partition)
        fprintf(f, "#SBATCH --partition=%s\n", o->partition);
    if (o->time)
        fprintf(f, "#SBATCH --time=%s\n", o->time);
}

/* The script's body: each array task runs its chunk of DIR/slurm/rows_N.txt, one row at a
 * time, as the local pool does (rows.h): the row's command from rows.tsv, its output in run_k,
 * its status written atomically before and after. */
static const char script_body[] =
    "# Written by `srdc sweep --slurm`: see docs/cluster.md. Each array task runs rows\n"
    "# (chunk * task + 1) to (chunk * task + chunk) of the row list, each with the command of\n"
    "# its line of rows.tsv (tab-separated), and writes run_k/log.txt and run_k/status.\n"
    "# One BLAS and one OpenMP thread per run, as the task has one CPU (--cpus-per-task):\n"
    "# change both together.\n"
    "export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1\n"
    "task=\"${SLURM_ARRAY_TASK_ID:?submit this script with sbatch}\"\n"
    "tab=$(printf '\\t')\n"
    "set_status() {\n"
    "    printf '%s\\n' \"$2\" > \"$dir/run_$1/status.tmp\" && mv -f \"$dir/run_$1/status.tmp\" \"$dir/run_$1/status\"\n"
    "}\n"
    "first=$((task * chunk + 1))\n"
    "for row in $(sed -n \"${first},$((first + chunk - 1))p\" \"$list\"); do\n"
    "    mkdir -p \"$dir/run_$row\" && set_status \"$row\" running || exit 3\n"
    "    command=$(sed -n \"${row}p\" \"$dir/rows.tsv\")\n"
    "    (set -f; IFS=$tab; exec $command --out \"$dir/run_$row\") < /dev/null > \"$dir/run_$row/log.txt\" 2>&1\n"
    "    case $? in\n"
    "    0) status=ok ;;\n"
    "    1) status=bad_input ;;\n"
    "    2) status=numerical_failure ;;\n"
    "    3) status=io_error ;;\n"
    "    4) status=out_of_memory ;;\n"
    "    *) status=crashed ;;\n"
    "    esac\n"
    "    set_status \"$row\" \"$status\"\n"
    "done\n";

static bool write_script(const char *path, const SweepOptions *o, const char *dir, int job, int tasks, int chunk)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    char quoted[2 * PATH_MAX];
    script_header(f, o, dir, job, tasks);
    shell_quote(quoted, sizeof quoted, dir);
    fprintf(f, "dir=%s\n", quoted);
    fprintf(f, "list=\"$dir/slurm/rows_%d.txt\"\nchunk=%d\n", job, chunk);
    fputs(script_body, f);
    bool ok = fclose(f) == 0;
    return ok && chmod(path, 0755) == 0;
}

/* Runs `sbatch --parsable SCRIPT`; the job id goes to id (n bytes) and DIR/slurm/jobs.txt. */
static bool submit(const char *script, const char *dir, char *id, size_t n)
{
    char quoted[2 * PATH_MAX], cmd[2 * PATH_MAX + 32], path[PATH_MAX + 32];
    shell_quote(quoted, sizeof quoted, script);
    snprintf(cmd, sizeof cmd, "sbatch --parsable %s", quoted);
    FILE *p = popen(cmd, "r");
    id[0] = 0;
    if (p && fgets(id, (int)n, p))
        id[strcspn(id, ";\r\n")] = 0; /* --parsable prints "id" or "id;cluster" */
    int status = p ? pclose(p) : -1;
    if (status != 0 || !id[0])
        return false;
    snprintf(path, sizeof path, "%s/slurm/jobs.txt", dir);
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s\n", id);
        fclose(f);
    }
    return true;
}

/* Nothing left to run: the summary is merged at once. */
static int all_done(const SweepOptions *o, const SweepRows *rows)
{
    printf("all %d runs of %s have succeeded: nothing to submit\n", rows->n, o->out);
    int status = rows_collect(rows, NULL, NULL, NULL);
    if (status == 0)
        printf("summary in %s/summary.csv\n", o->out);
    return status;
}

/* Writes and (with --submit) submits the script of n pending rows. */
static int write_job(const SweepOptions *o, const SweepRows *rows, const int *pending, int n)
{
    char slurm_dir[PATH_MAX + 8], list[PATH_MAX + 64], script[PATH_MAX + 64], id[64];
    snprintf(slurm_dir, sizeof slurm_dir, "%s/slurm", rows->dir);
    int chunk = chunk_size(o, n), tasks = (n + chunk - 1) / chunk, job = next_submission(rows->dir);
    snprintf(list, sizeof list, "%s/rows_%d.txt", slurm_dir, job);
    snprintf(script, sizeof script, "%s/job_%d.sbatch", slurm_dir, job);
    if ((mkdir(slurm_dir, 0777) != 0 && errno != EEXIST) || !write_pending(list, pending, n) ||
        !write_script(script, o, rows->dir, job, tasks, chunk)) {
        fprintf(stderr, "srdc: error: cannot write %s: %s\n", script, strerror(errno));
        return 3;
    }
    printf("%d of %d runs to do: %d array task%s of up to %d run%s in %s\n", n, rows->n, tasks, tasks > 1 ? "s" : "",
           chunk, chunk > 1 ? "s" : "", script);
    if (!o->submit) {
        printf("submit it with `sbatch %s`; then `srdc sweep --status %s` and `--collect %s`\n", script, o->out,
               o->out);
        return 0;
    }
    if (!submit(script, rows->dir, id, sizeof id)) {
        fprintf(stderr, "srdc: error: sbatch refused %s (its message is above)\n"
                        "hint: check the partition and time limit (--partition, --time), or your account "
                        "(sbatch reads SBATCH_ACCOUNT)\n", script);
        return 1;
    }
    printf("submitted job %s; follow it with `srdc sweep --status %s`, then merge the summary with "
           "`srdc sweep --collect %s`\n", id, o->out, o->out);
    return 0;
}

int slurm_sweep(const SweepOptions *o, const SweepRows *rows)
{
    int *pending = malloc(sizeof(int) * (size_t)(rows->n + 1)), n = pending_rows(rows, pending);
    int status = n ? write_job(o, rows, pending, n) : all_done(o, rows);
    free(pending);
    return status;
}

bool slurm_job_ids(const char *dir, char *ids, size_t n)
{
    char path[PATH_MAX + 32], line[64];
    snprintf(path, sizeof path, "%s/slurm/jobs.txt", dir);
    FILE *f = fopen(path, "r");
    ids[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        size_t at = strlen(ids);
        if (line[0] && at + strlen(line) + 2 < n)
            snprintf(ids + at, n - at, "%s%s", at ? "," : "", line);
    }
    if (f)
        fclose(f);
    return ids[0] != 0;
}
