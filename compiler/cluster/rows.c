/* rows.c — a sweep directory's rows (rows.h): the files every sweep mode shares, starting one
 * run, its status file and the summary merged from the runs. No model here: srd-mpi-sweep links
 * this file alone. */
#include "rows.h"
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

enum { PATH_MAX_SRD = 4200, LINE_MAX_SRD = 8192 };

static char *copy(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(malloc(n), s, n);
}

void rows_init(SweepRows *r, const char *dir, const char *header)
{
    *r = (SweepRows){ .dir = copy(dir), .header = copy(header ? header : "") };
}

void rows_add(SweepRows *r, const char *command, const char *fields)
{
    if ((r->n & (r->n - 1)) == 0) { /* grows at powers of two */
        size_t cap = r->n ? 2 * (size_t)r->n : 1;
        r->command = realloc(r->command, cap * sizeof(char *));
        r->fields = realloc(r->fields, cap * sizeof(char *));
    }
    r->command[r->n] = copy(command);
    r->fields[r->n++] = copy(fields);
}

void rows_free(SweepRows *r)
{
    for (int k = 0; k < r->n; k++) {
        free(r->command[k]);
        free(r->fields[k]);
    }
    free(r->command);
    free(r->fields);
    free(r->dir);
    free(r->header);
    *r = (SweepRows){ 0 };
}

static void path_of(char *buf, const SweepRows *r, const char *name)
{
    snprintf(buf, PATH_MAX_SRD, "%s/%s", r->dir, name);
}

/* Writes text to path through path.tmp and a rename: a reader never sees half a file. */
static bool write_atomically(const char *path, const char *text)
{
    char tmp[PATH_MAX_SRD + 8];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return false;
    bool ok = fputs(text, f) >= 0;
    ok = (fclose(f) == 0) && ok;
    return ok && rename(tmp, path) == 0;
}

/* A growing string. */
typedef struct Text {
    char  *s;
    size_t len, cap;
} Text;

static void text_add(Text *t, const char *a, const char *b)
{
    size_t need = t->len + strlen(a) + strlen(b) + 2;
    if (need > t->cap) {
        t->cap = 2 * need;
        t->s = realloc(t->s, t->cap);
    }
    t->len += (size_t)sprintf(t->s + t->len, "%s%s\n", a, b);
}

/* The text of rows.tsv (which = 0) or rows.csv (which = 1). */
static char *rows_text(const SweepRows *r, int which)
{
    Text t = { 0 };
    if (which)
        text_add(&t, r->header, "");
    for (int k = 0; k < r->n; k++)
        text_add(&t, which ? r->fields[k] : r->command[k], "");
    if (!t.s)
        text_add(&t, "", "");
    return t.s;
}

static const char *const row_files[2] = { "rows.tsv", "rows.csv" };

bool rows_write(const SweepRows *r)
{
    bool ok = true;
    for (int which = 0; which < 2; which++) {
        char path[PATH_MAX_SRD], *text = rows_text(r, which);
        path_of(path, r, row_files[which]);
        ok = write_atomically(path, text) && ok;
        free(text);
    }
    return ok;
}

/* The whole of a small file, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char  *s = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len + LINE_MAX_SRD + 1 > cap) {
            cap = 2 * cap + LINE_MAX_SRD + 1;
            s = realloc(s, cap);
        }
        got = fread(s + len, 1, LINE_MAX_SRD, f);
        len += got;
    } while (got > 0);
    fclose(f);
    s[len] = 0;
    return s;
}

bool rows_match_disk(const SweepRows *r)
{
    bool same = true;
    for (int which = 0; which < 2 && same; which++) {
        char path[PATH_MAX_SRD], *want = rows_text(r, which), *have;
        path_of(path, r, row_files[which]);
        have = slurp(path);
        same = have && !strcmp(have, want);
        free(want);
        free(have);
    }
    return same;
}

/* The next line of text at *at (cut at its newline), or NULL at the end. */
static char *next_line(char **at)
{
    char *s = *at;
    if (!s || !*s)
        return NULL;
    char *nl = strchr(s, '\n');
    *at = nl ? nl + 1 : s + strlen(s);
    if (nl)
        *nl = 0;
    return s;
}

bool rows_read(SweepRows *r, const char *dir, const char *program)
{
    rows_init(r, dir, "");
    char path[PATH_MAX_SRD], *text[2];
    for (int which = 0; which < 2; which++) {
        path_of(path, r, row_files[which]);
        text[which] = slurp(path);
    }
    char *at[2] = { text[0], text[1] }, *line, *fields;
    if (text[1] && (line = next_line(&at[1]))) {
        free(r->header);
        r->header = copy(line);
    }
    while ((line = next_line(&at[0])) && (fields = next_line(&at[1])))
        rows_add(r, line, fields);
    bool ok = text[0] && text[1] && r->n > 0;
    if (!ok) {
        fprintf(stderr, "%s: error: `%s` is not a sweep directory (no rows in %s/rows.tsv and rows.csv)\n", program,
                dir, dir);
        fprintf(stderr, "hint: give the --out directory of an `srdc sweep` (default: sweep)\n");
    }
    free(text[0]);
    free(text[1]);
    return ok;
}

/* ---- a run's status ---- */

const char *rows_status_name(int code)
{
    switch (code) { /* the SRD_EXIT_* codes of runtime/driver.h */
    case 0: return "ok";
    case 1: return "bad_input";
    case 2: return "numerical_failure";
    case 3: return "io_error";
    case 4: return "out_of_memory";
    default: return "crashed";
    }
}

int rows_exit_code(int wait_status)
{
    return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

static void run_path(char *buf, const SweepRows *r, int k, const char *name)
{
    snprintf(buf, PATH_MAX_SRD, "%s/run_%d%s%s", r->dir, k + 1, name ? "/" : "", name ? name : "");
}

bool rows_set_status(const SweepRows *r, int k, const char *status)
{
    char path[PATH_MAX_SRD], line[128];
    run_path(path, r, k, "status");
    snprintf(line, sizeof line, "%s\n", status);
    return write_atomically(path, line);
}

RowState rows_state(const SweepRows *r, int k, char *word, size_t n)
{
    char path[PATH_MAX_SRD], got[64] = "";
    run_path(path, r, k, "status");
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%63s", got) != 1)
            got[0] = 0;
        fclose(f);
    }
    if (word)
        snprintf(word, n, "%s", !got[0] ? "not_run" : got);
    if (!got[0])
        return ROW_NOT_RUN;
    if (!strcmp(got, "running"))
        return ROW_RUNNING;
    return strcmp(got, "ok") ? ROW_FAILED : ROW_OK;
}

void rows_clear_status(const SweepRows *r)
{
    char path[PATH_MAX_SRD];
    for (int k = 0; k < r->n; k++) {
        run_path(path, r, k, "status");
        unlink(path);
    }
}

/* ---- starting a run ---- */

/* The argument vector of run k: its command split at tabs, then --out DIR/run_k. */
static char **run_argv(char *words, const char *out)
{
    int n = 4;
    for (const char *s = words; *s; s++)
        n += *s == '\t';
    char **argv = calloc((size_t)n, sizeof(char *));
    int a = 0;
    for (char *s = words; s; a++) {
        argv[a] = s;
        s = strchr(s, '\t');
        if (s)
            *s++ = 0;
    }
    argv[a++] = (char *)"--out";
    argv[a++] = (char *)out;
    return argv;
}

/* Runs are the parallelism: one BLAS (OpenBLAS) and one OpenMP thread each, unless the user
 * asked for more. Set in this process, which the runs inherit, before the first spawn. */
static void one_thread_per_run(void)
{
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    setenv("OMP_NUM_THREADS", "1", 0);
}

pid_t rows_spawn(const SweepRows *r, int k)
{
    char dir[PATH_MAX_SRD], log[PATH_MAX_SRD];
    run_path(dir, r, k, NULL);
    run_path(log, r, k, "log.txt");
    if ((mkdir(dir, 0777) != 0 && errno != EEXIST) || !rows_set_status(r, k, "running"))
        return -1;
    one_thread_per_run();
    char *words = copy(r->command[k]), **argv = run_argv(words, dir);
    /* posix_spawn, not fork: an MPI worker must not fork a copy of the MPI library's state. */
    posix_spawn_file_actions_t io;
    posix_spawn_file_actions_init(&io);
    posix_spawn_file_actions_addopen(&io, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&io, STDOUT_FILENO, log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    posix_spawn_file_actions_adddup2(&io, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid;
    int err = posix_spawn(&pid, argv[0], &io, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&io);
    free(argv);
    free(words);
    return err ? -1 : pid;
}

int rows_finish(const SweepRows *r, int k, int wait_status)
{
    int code = rows_exit_code(wait_status);
    rows_set_status(r, k, rows_status_name(code));
    return code;
}

/* ---- the summary ---- */

/* The header and the last row of run k's probes: the simulation's (probes.csv), else the static
 * equilibrium's (static_probes.csv); empty when there are none. */
static void last_probes(const SweepRows *r, int k, char *header, char *last, size_t n)
{
    char path[PATH_MAX_SRD];
    run_path(path, r, k, "probes.csv");
    header[0] = last[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        run_path(path, r, k, "static_probes.csv");
        f = fopen(path, "r");
    }
    if (!f)
        return;
    char line[LINE_MAX_SRD];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        snprintf(header[0] ? last : header, n, "%s", line);
    }
    fclose(f);
}

static int count_fields(const char *csv)
{
    int n = *csv ? 1 : 0;
    for (; *csv; csv++)
        n += *csv == ',';
    return n;
}

/* One summary line: the row's fields, its status, its last probes (or empty fields that keep
 * the columns aligned when the run left none). Returns the row's state. */
static RowState summary_line(FILE *f, const SweepRows *r, int k, const char *header)
{
    char word[64], probe_header[LINE_MAX_SRD], last[LINE_MAX_SRD];
    RowState state = rows_state(r, k, word, sizeof word);
    fprintf(f, "%s,%s", r->fields[k], word);
    last_probes(r, k, probe_header, last, sizeof last);
    if (last[0] && !strcmp(probe_header, header))
        fprintf(f, ",%s", last);
    else
        for (int c = count_fields(header); c > 0; c--)
            fputc(',', f);
    fputc('\n', f);
    return state;
}

int rows_collect(const SweepRows *r, int *n_ok, int *n_failed, int *n_unfinished)
{
    char path[PATH_MAX_SRD], header[LINE_MAX_SRD] = "", last[LINE_MAX_SRD];
    for (int k = 0; k < r->n && !header[0]; k++)
        last_probes(r, k, header, last, sizeof header);
    path_of(path, r, "summary.csv");
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "srdc: error: cannot write %s: %s\n", path, strerror(errno));
        return 3;
    }
    fprintf(f, "%s,status%s%s\n", r->header, header[0] ? "," : "", header);
    int count[4] = { 0 };
    for (int k = 0; k < r->n; k++)
        count[summary_line(f, r, k, header)]++;
    if (n_ok)
        *n_ok = count[ROW_OK];
    if (n_failed)
        *n_failed = count[ROW_FAILED];
    if (n_unfinished)
        *n_unfinished = count[ROW_NOT_RUN] + count[ROW_RUNNING];
    return fclose(f) == 0 ? 0 : 3;
}
