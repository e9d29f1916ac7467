/* sweep.c — `srdc sweep`: builds a model's simulator once and runs it over a grid (or a CSV
 * list) of param values, several processes at a time, collecting one summary CSV. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "sweep.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "aot.h"
#include "kernel/backend.h"
#include "diag.h"
#include "driver.h"
#include "elab.h"
#include "parse.h"
#include "sources.h"
#include "units.h"
#include "cluster/mpi_launch.h"
#include "cluster/rows.h"
#include "cluster/slurm.h"

enum { MAX_SWEPT = 16, EXE_MAX = PATH_MAX + 16 };

/* The values one param takes. */
typedef struct Axis {
    int     param;     /* index into the model's params */
    int     n;
    double *values;    /* SI */
} Axis;

typedef struct Sweep {
    const srd_model *m;
    int      n_axes;
    Axis     axes[MAX_SWEPT];
    int      n_runs;
    double  *runs;     /* n_runs * n_axes, SI */
    bool     rerun;    /* runs are `srdc run` (a swept param sets the discretisation) */
} Sweep;

static int find_param(const srd_model *m, const char *name, size_t len)
{
    for (int k = 0; k < m->n_params; k++)
        if (strlen(m->params[k].name) == len && !strncmp(m->params[k].name, name, len))
            return k;
    return -1;
}

static Dims param_dims(const srd_param *p) { return dims_of(p->dims[0], p->dims[1], p->dims[2], p->dims[3]); }

static void report_unknown_param(const srd_model *m, const char *name, size_t len, const char *where)
{
    char word[128];
    snprintf(word, sizeof word, "%.*s", (int)len, name);
    fprintf(stderr, "srdc: error: the model has no param `%s` (in %s)\n", word, where);
    const char *close = elab_closest_param(m, word);
    if (close)
        fprintf(stderr, "hint: did you mean `%s`?\n", close);
}

/* One value with an optional unit ("2MPa", "0.5", "1e6 Pa") of param p, in SI; checks the
 * dimension and the declared range. */
static bool parse_value(const srd_param *p, const char *text, size_t len, const char *where, double *out)
{
    char buf[128];
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    memcpy(buf, text, len);
    buf[len] = 0;
    Dims need = param_dims(p), given;
    char bad[48];
    int read = units_parse_quantity(buf, need, out, &given, bad, sizeof bad);
    if (read == QUANTITY_NOT_A_NUMBER)
        fprintf(stderr, "srdc: error: %s: `%s` is not a number\n", where, buf);
    else if (read == QUANTITY_BAD_UNIT)
        fprintf(stderr, "srdc: error: %s: unknown unit `%s`\n", where, bad);
    else if (read == QUANTITY_WRONG_DIMS) {
        char have[96], want[96];
        dims_describe(given, have, sizeof have);
        dims_describe(need, want, sizeof want);
        fprintf(stderr, "srdc: error: %s: param `%s` is %s, but `%s` is %s\n", where, p->name, want, buf, have);
    }
    if (read != QUANTITY_OK)
        return false;
    if (*out < p->lo || *out > p->hi) {
        fprintf(stderr, "srdc: error: %s: %g %s lies outside the range of `%s`, %g to %g %s\n", where, *out, p->unit,
                p->name, p->lo, p->hi, p->unit);
        return false;
    }
    return true;
}

/* NAME=a..b:lin:n, NAME=a..b:log:n, NAME=v1,v2,... or NAME=v. */
static bool parse_axis(const srd_model *m, const char *spec, Axis *ax)
{
    char where[300];
    snprintf(where, sizeof where, "`-p %s`", spec);
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec) {
        fprintf(stderr, "srdc: error: %s: expected NAME=RANGE\nhint: -p E=1MPa..1GPa:log:8, -p E=1MPa,2MPa or "
                        "-p E=1MPa\n", where);
        return false;
    }
    ax->param = find_param(m, spec, (size_t)(eq - spec));
    if (ax->param < 0) {
        report_unknown_param(m, spec, (size_t)(eq - spec), where);
        return false;
    }
    const srd_param *p = &m->params[ax->param];
    const char *v = eq + 1, *dots = strstr(v, "..");
    if (dots) {
        const char *c1 = strchr(dots + 2, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        char *end = NULL;
        long n = c2 ? strtol(c2 + 1, &end, 10) : 0;
        bool log_scale = c1 && !strncmp(c1 + 1, "log:", 4), lin = c1 && !strncmp(c1 + 1, "lin:", 4);
        if (!c2 || (!log_scale && !lin) || *end || n < 1 || n > 100000) {
            fprintf(stderr, "srdc: error: %s: a range is a..b:lin:n or a..b:log:n with n from 1 to 100000\n", where);
            return false;
        }
        double a, b;
        if (!parse_value(p, v, (size_t)(dots - v), where, &a) ||
            !parse_value(p, dots + 2, (size_t)(c1 - dots - 2), where, &b))
            return false;
        if (log_scale && !(a > 0 && b > 0)) {
            fprintf(stderr, "srdc: error: %s: a log range needs positive ends\n", where);
            return false;
        }
        ax->n = (int)n;
        ax->values = calloc((size_t)n, sizeof(double));
        for (int k = 0; k < n; k++) {
            double f = n > 1 ? (double)k / (double)(n - 1) : 0;
            ax->values[k] = log_scale ? exp(log(a) + f * (log(b) - log(a))) : a + f * (b - a);
        }
        ax->values[0] = a; /* the ends exactly as given */
        ax->values[n - 1] = n > 1 ? b : a;
        return true;
    }
    ax->n = 0;
    ax->values = calloc(strlen(v) / 2 + 2, sizeof(double));
    for (const char *s = v;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (!parse_value(p, s, len, where, &ax->values[ax->n++]))
            return false;
        if (!comma)
            break;
        s = comma + 1;
    }
    return true;
}

static void make_grid(Sweep *sw)
{
    sw->n_runs = 1;
    for (int a = 0; a < sw->n_axes; a++)
        sw->n_runs *= sw->axes[a].n;
    sw->runs = calloc((size_t)sw->n_runs * (size_t)sw->n_axes + 1, sizeof(double));
    for (int r = 0; r < sw->n_runs; r++) {
        int rest = r;
        for (int a = sw->n_axes - 1; a >= 0; a--) { /* the last param varies fastest */
            sw->runs[r * sw->n_axes + a] = sw->axes[a].values[rest % sw->axes[a].n];
            rest /= sw->axes[a].n;
        }
    }
}

/* A CSV of parameter sets: a header of param names, then one row of values per run. */
static bool read_sets(Sweep *sw, const char *path)
{
    FILE *f = sources_fopen(path);
    if (!f) {
        fprintf(stderr, "srdc: error: cannot read `%s`: %s\n", path, sources_error());
        return false;
    }
    char line[4096];
    bool ok = true;
    int row = 0, cap = 0;
    while (ok && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0])
            continue;
        row++;
        int col = 0;
        for (char *s = line;; col++) {
            char *comma = strchr(s, ',');
            size_t len = comma ? (size_t)(comma - s) : strlen(s);
            while (len && *s == ' ')
                s++, len--;
            while (len && s[len - 1] == ' ')
                len--;
            char where[4200];
            snprintf(where, sizeof where, "%s:%d", path, row);
            if (row == 1) {
                if (col == MAX_SWEPT || (sw->axes[col].param = find_param(sw->m, s, len)) < 0) {
                    if (col == MAX_SWEPT)
                        fprintf(stderr, "srdc: error: %s: at most %d params per sweep\n", where, MAX_SWEPT);
                    else
                        report_unknown_param(sw->m, s, len, where);
                    ok = false;
                    break;
                }
                sw->n_axes = col + 1;
            } else {
                if (col >= sw->n_axes) {
                    fprintf(stderr, "srdc: error: %s: more values than params in the header\n", where);
                    ok = false;
                    break;
                }
                if (sw->n_runs * sw->n_axes + col >= cap) {
                    cap = 2 * cap + 64 * sw->n_axes;
                    sw->runs = realloc(sw->runs, sizeof(double) * (size_t)cap);
                }
                if (!parse_value(&sw->m->params[sw->axes[col].param], s, len, where,
                                 &sw->runs[sw->n_runs * sw->n_axes + col])) {
                    ok = false;
                    break;
                }
            }
            if (!comma)
                break;
            s = comma + 1;
        }
        if (ok && row > 1) {
            if (col + 1 != sw->n_axes) {
                fprintf(stderr, "srdc: error: %s:%d: %d values for %d params\n", path, row, col + 1, sw->n_axes);
                ok = false;
            } else
                sw->n_runs++;
        }
    }
    fclose(f);
    if (ok && !sw->n_runs) {
        fprintf(stderr, "srdc: error: `%s` has no parameter sets (a header of param names, then rows)\n", path);
        ok = false;
    }
    return ok;
}

/* ---- running ---- */

typedef struct Job {
    pid_t pid;
    int   run;
} Job;

/* The first swept param that sets the discretisation (nodes, spacing, mesh, bending), or NULL:
 * its values make models with other DOF counts, which one built simulator cannot run. */
static const srd_param *shaping_axis(const Sweep *sw)
{
    for (int a = 0; a < sw->n_axes; a++)
        if (sw->m->params[sw->axes[a].param].shapes)
            return &sw->m->params[sw->axes[a].param];
    return NULL;
}

/* The summary's leading header: "run", then NAME_UNIT per swept param (NAME when unitless). */
static void summary_header(const Sweep *sw, char *header, size_t n)
{
    snprintf(header, n, "run");
    for (int a = 0; a < sw->n_axes; a++) {
        const srd_param *p = &sw->m->params[sw->axes[a].param];
        size_t at = strlen(header);
        bool unit = strcmp(p->unit, "1") != 0;
        snprintf(header + at, n - at, ",%s%s%s", p->name, unit ? "_" : "", unit ? p->unit : "");
    }
}

/* The rows of the sweep (cluster/rows.h): each run's command, exe (the simulator, or srdc
 * itself running `run FILE`) with its -p values and the sweep's --duration and --dt, and its
 * summary fields, the values in SI. The command has room for MAX_SWEPT values next to two
 * paths of PATH_MAX. */
static void plan_rows(const Sweep *sw, const SweepOptions *o, const char *dir, const char *exe,
                      const char *file, SweepRows *rows)
{
    char header[4096], command[16384], fields[4096], value[256];
    summary_header(sw, header, sizeof header);
    rows_init(rows, dir, header);
    for (int r = 0; r < sw->n_runs; r++) {
        int c = snprintf(command, sizeof command, "%s%s%s", exe, sw->rerun ? "\trun\t" : "", sw->rerun ? file : "");
        int f = snprintf(fields, sizeof fields, "%d", r + 1);
        for (int a = 0; a < sw->n_axes; a++) {
            elab_format_override(value, sizeof value, &sw->m->params[sw->axes[a].param], sw->runs[r * sw->n_axes + a]);
            c += snprintf(command + c, sizeof command - (size_t)c, "\t-p\t%s", value);
            f += snprintf(fields + f, sizeof fields - (size_t)f, ",%.12g", sw->runs[r * sw->n_axes + a]);
        }
        if (o->duration)
            c += snprintf(command + c, sizeof command - (size_t)c, "\t--duration\t%s", o->duration);
        if (o->dt)
            snprintf(command + c, sizeof command - (size_t)c, "\t--dt\t%s", o->dt);
        rows_add(rows, command, fields);
    }
}

/* Prints how run r ended (always when it failed, else unless --quiet). */
static void report_run(const Sweep *sw, const SweepOptions *o, int r, int code)
{
    if (o->quiet && code == 0)
        return;
    printf("run %d/%d", r + 1, sw->n_runs);
    for (int a = 0; a < sw->n_axes; a++) {
        const srd_param *p = &sw->m->params[sw->axes[a].param];
        printf("%s %s = %g%s%s", a ? "," : ":", p->name, sw->runs[r * sw->n_axes + a],
               strcmp(p->unit, "1") ? " " : "", strcmp(p->unit, "1") ? p->unit : "");
    }
    printf(" -> %s%s%s/run_%d/log.txt)\n", rows_status_name(code), code ? " (see " : " (", o->out, r + 1);
    fflush(stdout);
}

/* Starts run `next`, recording it in a free slot of running; false when it could not start. */
static bool start_job(const SweepRows *rows, Job *running, int jobs, int next)
{
    pid_t pid = rows_spawn(rows, next);
    if (pid < 0) {
        rows_set_status(rows, next, rows_status_name(SRD_EXIT_IO));
        fprintf(stderr, "srdc: error: cannot start run %d\n", next + 1);
        return false;
    }
    for (int j = 0; j < jobs; j++)
        if (!running[j].pid) {
            running[j] = (Job){ pid, next };
            break;
        }
    return true;
}

/* The local pool: -j runs at a time, the next one started as soon as one ends. */
static void run_all(const Sweep *sw, const SweepOptions *o, const SweepRows *rows)
{
    int jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (jobs < 1)
        jobs = 1;
    Job *running = calloc((size_t)jobs, sizeof *running);
    int next = 0, active = 0, done = 0;
    while (done < sw->n_runs) {
        for (; active < jobs && next < sw->n_runs; next++)
            if (start_job(rows, running, jobs, next))
                active++;
            else
                done++;
        if (!active)
            continue;
        int status;
        pid_t pid = wait(&status);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        for (int j = 0; j < jobs; j++)
            if (running[j].pid == pid) {
                report_run(sw, o, running[j].run, rows_finish(rows, running[j].run, status));
                running[j].pid = 0;
                active--;
                done++;
            }
    }
    free(running);
}

/* The path of this srdc executable, to run `srdc run` per row. */
static bool self_path(char *buf, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", buf, n - 1);
    if (len <= 0) {
        fprintf(stderr, "srdc: error: cannot find the srdc executable to run each model: %s\n", strerror(errno));
        return false;
    }
    buf[len] = 0;
    return true;
}

/* Reads the values to sweep (-p ranges or --csv rows) into sw; false (with messages) on bad
 * input. */
static bool read_runs(Sweep *sw, const SweepOptions *o)
{
    bool ok = true;
    if (o->n_specs > MAX_SWEPT) {
        fprintf(stderr, "srdc: error: at most %d params per sweep\n", MAX_SWEPT);
        ok = false;
    }
    if (ok && !o->n_specs && !o->sets) {
        fprintf(stderr, "srdc: error: nothing to sweep\nhint: give -p NAME=a..b:log:n (or values) or --csv SETS.csv\n");
        ok = false;
    }
    for (int k = 0; ok && k < o->n_specs; k++) {
        ok = parse_axis(sw->m, o->specs[k], &sw->axes[k]);
        sw->n_axes = k + 1;
    }
    if (ok && o->sets && o->n_specs) {
        fprintf(stderr, "srdc: error: give either -p ranges or --csv, not both\n");
        ok = false;
    }
    return ok && (o->sets ? read_sets(sw, o->sets) : (make_grid(sw), true));
}

/* The sweep directory, created, and its absolute path (what a Slurm task or an MPI rank on
 * another node is given). */
static int make_out_dir(const SweepOptions *o, char *abs)
{
    if (mkdir(o->out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "srdc: error: cannot create %s: %s\n", o->out, strerror(errno));
        return SRD_EXIT_IO;
    }
    if (!realpath(o->out, abs)) {
        fprintf(stderr, "srdc: error: cannot find %s: %s\n", o->out, strerror(errno));
        return SRD_EXIT_IO;
    }
    return SRD_EXIT_OK;
}

/* The executable of every run: DIR/simulator, or srdc itself (`srdc run FILE`) with the
 * model's absolute path in file. */
static int runner_paths(const Sweep *sw, const SweepOptions *o, const char *dir, char *exe, char *file)
{
    snprintf(exe, EXE_MAX, "%s/simulator", dir);
    snprintf(file, EXE_MAX, "%s", o->file);
    if (!sw->rerun)
        return SRD_EXIT_OK;
    if (!realpath(o->file, file)) {
        fprintf(stderr, "srdc: error: cannot find %s: %s\n", o->file, strerror(errno));
        return SRD_EXIT_IO;
    }
    return self_path(exe, EXE_MAX) ? SRD_EXIT_OK : SRD_EXIT_IO;
}

static int build_sweep_simulator(const SweepOptions *o, Program *prog, srd_model *m, const char *exe)
{
    BuildOptions b = { .file = o->file, .output = exe, .quiet = o->quiet };
    char err[512];
    const SrdBackend *backend = srd_backend(err, sizeof err);
    if (!backend)
        fprintf(stderr, "srdc: error: %s\n", err);
    return backend ? backend->build_simulator_of(&b, prog, m) : SRD_EXIT_BAD_INPUT;
}

/* The rows on disk before anything is built: a Slurm sweep run again over the same rows keeps
 * what finished (only the rest is submitted); any other sweep starts afresh. */
static int prepare_rows(const SweepOptions *o, const SweepRows *rows)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/rows.tsv", rows->dir);
    bool used = access(path, F_OK) == 0;
    if (o->mode == SWEEP_SLURM && used && !rows_match_disk(rows)) {
        fprintf(stderr, "srdc: error: %s holds the runs of another sweep (other params, values or options)\n"
                        "hint: give another --out, or remove %s to start this sweep there\n", o->out, o->out);
        return SRD_EXIT_BAD_INPUT;
    }
    if (o->mode != SWEEP_SLURM)
        rows_clear_status(rows);
    return SRD_EXIT_OK;
}

/* The local pool, then the summary. */
static int sweep_locally(const Sweep *sw, const SweepOptions *o, const SweepRows *rows)
{
    const srd_param *shaping = shaping_axis(sw);
    if (!o->quiet && shaping)
        printf("sweeping %d runs of %s with `srdc run` (`%s` sets the discretisation, so each run elaborates "
               "its own model)\n", sw->n_runs, o->file, shaping->name);
    else if (!o->quiet)
        printf("sweeping %d runs of %s\n", sw->n_runs, o->file);
    run_all(sw, o, rows);
    int ok = 0, status = rows_collect(rows, &ok, NULL, NULL);
    if (status != SRD_EXIT_OK)
        return status;
    printf("%d of %d runs succeeded; summary in %s/summary.csv\n", ok, sw->n_runs, o->out);
    return ok < sw->n_runs ? SRD_EXIT_NUMERIC : SRD_EXIT_OK;
}

/* Directory, checks of the chosen mode, rows, simulator, then the runs. */
static int sweep_runs(Sweep *sw, const SweepOptions *o, Program *prog, srd_model *m)
{
    char dir[PATH_MAX], exe[EXE_MAX], file[EXE_MAX];
    int status = make_out_dir(o, dir);
    sw->rerun = shaping_axis(sw) != NULL;
    if (status == SRD_EXIT_OK)
        status = runner_paths(sw, o, dir, exe, file);
    if (status == SRD_EXIT_OK && o->mode == SWEEP_SLURM)
        status = slurm_check(o, dir, exe);
    if (status == SRD_EXIT_OK && o->mode == SWEEP_MPI)
        status = mpi_check(o);
    SweepRows rows = { 0 };
    if (status == SRD_EXIT_OK) {
        plan_rows(sw, o, dir, exe, file, &rows);
        status = prepare_rows(o, &rows);
    }
    if (status == SRD_EXIT_OK && !sw->rerun)
        status = build_sweep_simulator(o, prog, m, exe);
    if (status == SRD_EXIT_OK && !rows_write(&rows)) {
        fprintf(stderr, "srdc: error: cannot write %s/rows.tsv and rows.csv: %s\n", o->out, strerror(errno));
        status = SRD_EXIT_IO;
    }
    if (status == SRD_EXIT_OK)
        status = o->mode == SWEEP_SLURM ? slurm_sweep(o, &rows)
               : o->mode == SWEEP_MPI   ? mpi_sweep(o, &rows)
                                        : sweep_locally(sw, o, &rows);
    rows_free(&rows);
    return status;
}

int sweep_model(const SweepOptions *o)
{
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    sources_record(true); /* the simulator built below embeds the files the model reads */
    srd_model *m = elab_file(&arena, &prog, o->file, parse_stdlib_dir(), NULL, 0);
    diag_flush(stderr);
    sources_record(false);
    Sweep sw = { .m = m };
    int status = m && read_runs(&sw, o) ? sweep_runs(&sw, o, &prog, m) : SRD_EXIT_BAD_INPUT;
    for (int a = 0; a < MAX_SWEPT; a++)
        free(sw.axes[a].values);
    free(sw.runs);
    srd_model_free(m);
    arena_free(&arena);
    sources_reset();
    diag_reset();
    return status;
}
