/* driver.c — runs a model's analyses (static, modes, simulate) with compiled kernels, writing
 * VTK frames, probes and energies as it goes. `srdc run` (JIT kernels) and every simulator
 * built by `srdc build` (kernels linked in) share it. */
#include "driver.h"
#include "joint.h"
#include "sparse.h"
#include "clock.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "alloc.h"
#include "contact.h"
#include "pairs.h"
#include "probe.h"
#include "report.h"
#include "explicit.h"
#include "checkpoint.h"
#include "files.h"
#include "output_csv.h"
#include "modeshape.h"
#include "output_vtk.h"
#include "output_units.h"
#include "parallel.h"
#include "probe.h"
#include "sim.h"
#include "watch.h"

/* Messages start with the program's name: srdc, or the built simulator's. */
static const char *prog_name = "srdc";

/* What the runtime cannot do yet is refused before anything runs (report.h). */
static int check_supported(const srd_model *m)
{
    return srd_report_unsupported_method(stderr, prog_name, m, NULL) ? -1 : 0;
}

/* The files a run wrote, for the summary: names under the output directory. */
enum { MAX_WRITTEN = 24 };
static struct {
    char names[MAX_WRITTEN][96];
    int  n;
} written;

static void note_written(const char *name)
{
    for (int k = 0; k < written.n; k++)
        if (!strcmp(written.names[k], name))
            return;
    if (written.n < MAX_WRITTEN)
        snprintf(written.names[written.n++], sizeof written.names[0], "%s", name);
}

/* One line: "wrote out/: static_probes.csv, sag.pvd, ..." */
static void print_written(const srd_run_options *o)
{
    if (o->quiet || !written.n)
        return;
    printf("wrote %s/:", o->out);
    for (int k = 0; k < written.n; k++)
        printf("%s %s", k ? "," : "", written.names[k]);
    printf("\n");
}

static void note_series(const char *name, const char *ext)
{
    char file[128];
    snprintf(file, sizeof file, "%.80s%s", name, ext);
    note_written(file);
}

typedef struct Probes {
    srd_outfile out;
    double next;
} Probes;

/* Says which file could not be written and why; returns the I/O exit status. */
static int report_outfile(const srd_outfile *f)
{
    char msg[4300];
    srd_outfile_error(f, msg, sizeof msg);
    fprintf(stderr, "%s: error: %s\n", prog_name, msg);
    return SRD_EXIT_IO;
}

static int report_frames(const srd_vtk_series *vtk)
{
    char msg[4300];
    srd_vtk_error(vtk, msg, sizeof msg);
    fprintf(stderr, "%s: error: %s\n", prog_name, msg);
    return SRD_EXIT_IO;
}

/* Each analysis writes its probes to its own file: the time series of `simulate` to probes.csv,
 * the equilibrium of `static` to static_probes.csv, the mode shapes of `modes` to
 * modes_probes.csv (a run with several blocks used to overwrite one with the other). */
static const char *probe_file(const srd_model *m, const srd_analysis *a)
{
    return a == &m->statics ? "static_probes.csv" : a == &m->modes ? "modes_probes.csv" : "probes.csv";
}

static int open_probes(Probes *pr, const char *dir, const srd_model *m, const srd_analysis *a)
{
    memset(pr, 0, sizeof *pr);
    if (!a->n_probes)
        return 0;
    if (srd_outfile_open(&pr->out, dir, probe_file(m, a)) != 0)
        return -1;
    note_written(probe_file(m, a));
    srd_outfile_printf(&pr->out, a == &m->modes ? "mode" : "t");
    for (int i = 0; i < a->n_probes; i++) {
        const char *n = a->probes[i].name;
        if (a->probes[i].kind == SRD_PROBE_REACTION)
            srd_outfile_printf(&pr->out, ",%s.fx,%s.fy,%s.fz,%s.mx,%s.my,%s.mz", n, n, n, n, n, n);
        else if (a->probes[i].kind == SRD_PROBE_CONTACT)
            srd_outfile_printf(&pr->out, ",%s.fx,%s.fy,%s.fz", n, n, n);
        else if (a->probes[i].kind == SRD_PROBE_JOINT && a->probes[i].component == SRD_JOINT_MOTOR)
            srd_outfile_printf(&pr->out, ",%s", n);
        else if (a->probes[i].kind == SRD_PROBE_BODY || a->probes[i].kind == SRD_PROBE_JOINT)
            srd_outfile_printf(&pr->out, ",%s.x,%s.y,%s.z", n, n, n);
        else if (a->probes[i].dof >= 0)
            srd_outfile_printf(&pr->out, ",%s", a->probes[i].name);
        else
            srd_outfile_printf(&pr->out, ",%s.x,%s.y,%s.z", a->probes[i].name, a->probes[i].name, a->probes[i].name);
    }
    srd_outfile_printf(&pr->out, "\n");
    return srd_outfile_flush(&pr->out);
}

/* The force values of the probes that ask for them: reactions (n_dofs) when any does. */
static double *probe_reactions(srd_sim *s, const srd_analysis *a)
{
    for (int i = 0; i < a->n_probes; i++)
        if (a->probes[i].kind == SRD_PROBE_REACTION) {
            double *r = srd_xcalloc((size_t)s->m->n_dofs + 1, sizeof(double));
            srd_sim_reactions(s, r);
            return r;
        }
    return NULL;
}

/* One row of probes: positions from q at time (or mode number) t, forces from the sim's
 * state; flushed so that a run that stops keeps every row it took; 0, or -1 when the file
 * cannot be written. */
static int write_probes(Probes *pr, srd_sim *s, const srd_analysis *a, const double *q, double t)
{
    if (!pr->out.f)
        return 0;
    double *reactions = probe_reactions(s, a);
    srd_outfile_printf(&pr->out, "%.9g", t);
    for (int i = 0; i < a->n_probes; i++) {
        double v[6];
        int n = srd_probe_value_at(s, &a->probes[i], q, reactions, v);
        for (int c = 0; c < n; c++)
            srd_outfile_printf(&pr->out, ",%.12g", v[c]);
    }
    free(reactions);
    srd_outfile_printf(&pr->out, "\n");
    return srd_outfile_flush(&pr->out);
}

/* probes.csv has one row per sampling time: the finest period any probe asks for (every step
 * when one gives none). */
static double probe_period(const srd_analysis *a, double dt)
{
    double period = a->n_probes ? INFINITY : dt;
    for (int i = 0; i < a->n_probes; i++)
        period = fmin(period, a->probes[i].every > 0 ? a->probes[i].every : dt);
    return period;
}

/* A spring stretched beyond the range of linear elasticity is reported once per run. */
static bool strain_warned;

static void watch_strain(const srd_sim *s, double t)
{
    if (strain_warned)
        return;
    srd_strain w = srd_max_strain(s, s->q);
    if (w.strain <= SRD_STRAIN_LIMIT)
        return;
    strain_warned = true;
    fprintf(stderr, "%s: warning: `%s` is strained by %.1f %% at t = %.6g s, but its stretching is linear-elastic "
                    "(Hooke's law), a model for strains below about %.0f %%\n  hint: the results are not those of "
                    "a real material; check the loads and units, or use a stiffer material\n", prog_name,
            w.object >= 0 ? s->m->objects[w.object].name : "a junction", 100 * w.strain, t, 100 * SRD_STRAIN_LIMIT);
}

/* The stable time step of an explicit method from Gershgorin's bound on the highest natural
 * frequency at the start (0 for implicit methods); warns when dt is above it, unless the run
 * is to be refused for it. */
static double check_stable_dt(srd_sim *s, srd_method method, bool refused)
{
    if (method < SRD_SYMPLECTIC_EULER)
        return 0;
    double w = srd_max_frequency_bound(s), stable = srd_stable_dt(method, w);
    if (stable > 0 && s->dt > stable && !refused)
        fprintf(stderr, "%s: warning: dt = %.3g s is above the stable time step of this explicit method, about "
                        "%.3g s (%s / w_max, with w_max <= %.4g rad/s by Gershgorin's bound on M^-1 K at the start)"
                        "\n  hint: use dt below %.3g s, or an implicit method\n", prog_name, s->dt, stable,
                method == SRD_RK4 ? "2.83" : "2", w, stable);
    return stable;
}

/* "ETA 3m05s": the time left, from the pace of the steps taken so far in this run. */
static void format_eta(double seconds, char *buf, size_t n)
{
    long s = (long)(seconds + 0.5);
    if (s >= 3600)
        snprintf(buf, n, "ETA %ldh%02ldm", s / 3600, s / 60 % 60);
    else if (s >= 60)
        snprintf(buf, n, "ETA %ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, n, "ETA %lds", s);
}

/* The progress bar, on a terminal only: steps done of the total, and the time left. `first` is
 * the step this run started from (a resumed run starts part way) and t0 when it started. */
static void progress(long done, long total, long first, double t0)
{
    if (!isatty(STDERR_FILENO))
        return;
    int width = 40, filled = total > 0 ? (int)(width * (double)done / (double)total) : width;
    char eta[32] = "";
    if (done > first && done < total)
        format_eta((srd_seconds() - t0) * (double)(total - done) / (double)(done - first), eta, sizeof eta);
    fprintf(stderr, "\r  [%.*s%*s] %5.1f%%  %-12s", filled, "########################################", width - filled,
            "", total > 0 ? 100.0 * (double)done / (double)total : 100.0, eta);
    if (done >= total)
        fprintf(stderr, "\r%*s\r", width + 26, "");
}

/* The outputs of one analysis block: frames (a VTK series, or node positions as CSV) and its
 * probes. */
typedef struct Outputs {
    srd_vtk_series vtk;
    bool           has_vtk;
    srd_outfile    csv;     /* open when the block has `output csv` */
    Probes         pr;
} Outputs;

/* The obstacles' pose now, into `posed` (a copy of the model's obstacles): moving ones and
 * planes from the columns their schedules rewrite. */
static void current_obstacles(const srd_sim *s, srd_obstacle *posed)
{
    for (int o = 0; o < s->m->n_obstacles; o++)
        if (posed[o].moving || !strcmp(posed[o].shape, "plane"))
            srd_sim_obstacle_pose(s, o, posed[o].center, posed[o].axis, &posed[o].angle);
}

/* A VTK frame with every point field: velocities v (or NULL) and, when `forces`, the net
 * force, and the reactions and contact forces of models that have constraints or contact. */
static int write_vtk_frame(Outputs *out, srd_sim *s, const double *q, const double *v, double t, bool forces)
{
    const srd_model *m = s->m;
    size_t n = (size_t)m->n_dofs + 1;
    double *force = forces ? srd_xcalloc(n, sizeof(double)) : NULL;
    double *reaction = forces && m->n_fixed ? srd_xcalloc(n, sizeof(double)) : NULL;
    double *contact = forces && (m->has_ground || m->n_obstacles) ? srd_xcalloc(n, sizeof(double)) : NULL;
    if (force)
        srd_sim_net_force(s, force);
    if (reaction)
        srd_sim_reactions(s, reaction);
    if (contact)
        srd_sim_contact_forces(s, -2, contact);
    srd_obstacle *posed = srd_xcalloc((size_t)m->n_obstacles + 1, sizeof *posed);
    if (m->n_obstacles)
        memcpy(posed, m->obstacles, sizeof *posed * (size_t)m->n_obstacles);
    current_obstacles(s, posed);
    srd_vtk_fields f = { v, force, reaction, contact, posed };
    int bad = srd_vtk_write_fields(&out->vtk, m, q, &f, t) != 0;
    free(posed);
    free(force);
    free(reaction);
    free(contact);
    return bad ? report_frames(&out->vtk) : SRD_EXIT_OK;
}

/* One frame of the block's VTK series or CSV table, with velocities v (or NULL) and, when
 * `forces`, the force fields; 0, or the I/O exit status after a message. */
static int write_frame(Outputs *out, srd_sim *s, const double *q, const double *v, double t, bool forces)
{
    const srd_model *m = s->m;
    if (out->has_vtk) {
        int status = write_vtk_frame(out, s, q, v, t, forces);
        if (status != SRD_EXIT_OK)
            return status;
    }
    if (out->csv.f && srd_csv_frames_write(&out->csv, m, q, t) != 0)
        return report_outfile(&out->csv);
    return SRD_EXIT_OK;
}

/* The summary's solver line: which layout, why (the predicted cost of one factorisation per
 * layout when the choice was automatic), and the time factorising per Newton iteration. */
static void print_solver_summary(const srd_sim *s)
{
    const srd_solver *sv = &s->solver;
    if (s->total_iterations == 0)
        return; /* explicit methods solve nothing */
    printf("linear solver: %s", srd_solver_kind_name(sv->kind));
    if (sv->sparse) {
        const char *method = srd_sparse_method(sv->sparse);
        printf(" (%s)", !strcmp(method, "UMFPACK")   ? "UMFPACK LU"
                        : !strcmp(method, "CHOLMOD") ? "CHOLMOD Cholesky"
                                                     : "CHOLMOD Cholesky of the symmetric part, refined");
    }
    printf(", %d free DOFs", sv->sys.n_free);
    const char *sep = "; predicted factorisation:";
    for (int k = SRD_SOLVER_DENSE; k <= SRD_SOLVER_SPARSE; k++)
        if (sv->predicted[k] > 0) {
            printf("%s %s %.3g ms", sep, srd_solver_kind_name((srd_solver_kind)k), 1e3 * sv->predicted[k]);
            sep = ",";
        }
    printf("; measured %.3g ms per Newton iteration", 1e3 * sv->time_factor / (double)s->total_iterations);
    printf("\n");
}

/* Parts that sank into each other by more than half their contact thickness, once per run. */
static void warn_overlap(const srd_sim *s)
{
    char msg[1024];
    srd_pairs_overlap_warning(s->pairs, msg, sizeof msg);
    if (msg[0])
        fprintf(stderr, "%s: warning: %s\n", prog_name, msg);
}

static int run_static(srd_sim *s, const srd_model *m, Outputs *out, const srd_run_options *o)
{
    const srd_analysis *a = &m->statics;
    s->tolerance = a->tolerance;
    s->max_iterations = a->max_iterations;
    s->line_search = a->line_search;
    int code = srd_static(s, a->load_steps);
    if (code) {
        srd_report_step_failure(stderr, prog_name, s, -1, code);
        return SRD_EXIT_NUMERIC;
    }
    watch_strain(s, 0);
    srd_pairs_sample(s->pairs, s->q, 0);
    warn_overlap(s);
    if (write_probes(&out->pr, s, a, s->q, 0) != 0)
        return report_outfile(&out->pr.out);
    int status = write_frame(out, s, s->q, NULL, 0, true);
    if (status == SRD_EXIT_OK && !o->quiet)
    {
        printf("static equilibrium: %d load steps, %ld Newton iterations, residual %.3e N\n", a->load_steps,
               s->total_iterations, s->last.residual);
        print_solver_summary(s);
        srd_pairs_print_summary(s->pairs, stdout);
    }
    return status;
}

/* The modes to compute: a model has as many as its free DOFs. Asking for more is clamped with a
 * warning rather than refused, so that a sweep whose params change the DOF count still runs,
 * and the modes written are only real ones (the extra ones used to print as "0 Hz"). */
static int mode_count(const srd_sim *s, const srd_analysis *a)
{
    int free_dofs = s->solver.sys.n_free;
    if (a->mode_count <= free_dofs)
        return a->mode_count;
    fprintf(stderr, "%s: warning: modes `count = %d`, but the model has %d free DOFs: computing %d modes\n",
            prog_name, a->mode_count, free_dofs, free_dofs);
    return free_dofs;
}

/* The modal analysis works on a dense n x n copy of the stiffness (or, on the sparse solver,
 * Lanczos vectors) and keeps `count` shapes of every DOF: refused with a message above what
 * the process may use. */
static bool modes_fit(const srd_sim *s, int count, int n_dofs)
{
    int n_free = s->solver.sys.n_free;
    double lanczos = (2.0 * count + 20 + 3) * n_free; /* the Lanczos vectors; the factor is the solver's */
    double need = sizeof(double) * ((srd_modes_use_lanczos(s, count) ? lanczos : (double)n_free * n_free) +
                                    (double)n_free * count + (double)count * n_dofs);
    const char *what;
    double limit = srd_memory_limit(&what);
    if (limit <= 0 || need <= limit)
        return true;
    fprintf(stderr, "%s: error: the modal analysis of %d free DOFs needs about %.3g GB, more than %s (%.3g GB)\n"
                    "  hint: a coarser model, or fewer modes\n", prog_name, n_free, need / 1e9, what, limit / 1e9);
    return false;
}


/* modes.csv (and the terminal, unless --quiet): the frequencies in Hz. */
/* modes.csv and the printed list: each mode's frequency and what kind of motion it is. */
static int write_frequencies(srd_sim *s, const double *freq, const double *modes, int count, const srd_run_options *o)
{
    const srd_model *m = s->m;
    srd_outfile csv = { 0 };
    if (srd_outfile_open(&csv, o->out, "modes.csv") != 0)
        return report_outfile(&csv);
    note_written("modes.csv");
    srd_outfile_printf(&csv, "mode,frequency_hz,label\n");
    if (!o->quiet)
        printf("natural frequencies:\n");
    double w_bound = srd_max_frequency_bound(s);
    for (int k = 0; k < count; k++) {
        char label[32];
        double w = 2 * 3.14159265358979323846 * freq[k];
        srd_mode_label(m, s->q, &modes[(size_t)k * m->n_dofs], w, w_bound, label, sizeof label);
        srd_outfile_printf(&csv, "%d,%.12g,%s\n", k + 1, freq[k], label);
        if (!o->quiet)
            printf("  mode %d: %.6g Hz  %s\n", k + 1, freq[k], label);
    }
    return srd_outfile_close(&csv) != 0 ? report_outfile(&csv) : SRD_EXIT_OK;
}

/* Mode shapes as frames, every DOF of a mode scaled alike (srd_mode_display_scale) and numbered
 * from 1, and as probes: one row per mode with the probed components of the mass-normalised
 * shape. */
static int write_mode_shapes(srd_sim *s, Outputs *out, const double *modes, int count)
{
    const srd_model *m = s->m;
    double *q = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    int status = SRD_EXIT_OK;
    for (int k = 0; k < count && status == SRD_EXIT_OK; k++) {
        const double *shape = &modes[(size_t)k * m->n_dofs];
        double scale = srd_mode_display_scale(m, shape, s->length_scale);
        for (int d = 0; d < m->n_dofs; d++)
            q[d] = s->q[d] + scale * shape[d];
        status = write_frame(out, s, q, NULL, k + 1, false);
        if (status == SRD_EXIT_OK && write_probes(&out->pr, s, &m->modes, shape, k + 1) != 0)
            status = report_outfile(&out->pr.out);
    }
    free(q);
    return status;
}

/* Natural frequencies and mode shapes about the current configuration. */
static int run_modes(srd_sim *s, const srd_model *m, Outputs *out, const srd_run_options *o)
{
    int count = mode_count(s, &m->modes);
    if (!modes_fit(s, count, m->n_dofs))
        return SRD_EXIT_MEMORY;
    double *freq = srd_xcalloc((size_t)count + 1, sizeof(double));
    double *modes = srd_xcalloc((size_t)count * (size_t)m->n_dofs + 1, sizeof(double));
    char err[512];
    int status = SRD_EXIT_OK;
    if (srd_modes(s, count, freq, modes, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", prog_name, err);
        status = SRD_EXIT_NUMERIC;
    }
    if (status == SRD_EXIT_OK)
        status = write_frequencies(s, freq, modes, count, o);
    if (status == SRD_EXIT_OK)
        status = write_mode_shapes(s, out, modes, count);
    free(freq);
    free(modes);
    return status;
}

/* The contact line of the run summary. */
static void print_contact_summary(const srd_contact_stats *c)
{
    if (!c->has_contact || !c->samples)
        return;
    printf("contact: %.1f nodes within the contact distance on average, at most %d (t = %.4g s); deepest "
           "penetration %.3g mm (t = %.4g s)\n",
           c->active_sum / c->samples, c->active_max, c->active_max_t, 1e3 * c->deepest, c->deepest_t);
}

/* The time step of the simulate block with --dt applied (0 without one): what `dt` means in
 * actuations and loads, in every analysis. */
static double simulate_dt(const srd_model *m, const srd_run_options *o)
{
    return !m->simulate.present ? 0 : o->dt > 0 ? o->dt : m->simulate.dt;
}

/* A simulation in progress: its outputs, where their series stand, and the fingerprint its
 * checkpoints carry. */
typedef struct Dynamic {
    srd_sim               *s;
    const srd_model       *m;
    const srd_run_options *o;
    Outputs               *out;
    srd_outfile            energy;
    srd_contact_stats      contact;
    srd_method             method;
    double                 out_every, probe_every, next_out;
    long                   first, steps;    /* the loop runs steps first..steps */
    double                 t_first;         /* the time this run started from */
    bool                   every_frame;     /* checkpoint at every frame (the block has an `output`) */
    double                 last_save;       /* wall clock of the last checkpoint */
    uint64_t               fingerprint;
    double                 stable;          /* stable time step of an explicit method, else 0 */
    /* The explicit fast path (explicit/explicit.h) and the arrays it reads, or NULL. */
    srd_explicit          *fast;
    srd_kernel_fn         *fast_fns;
    srd_kernel_info       *fast_infos;
    double               **fast_data;
} Dynamic;

/* The contact statistics as the checkpoint stores them, and back. */
static void contact_save(const srd_contact_stats *c, double v[7])
{
    double w[7] = { c->active_now, c->active_max, c->active_max_t, c->deepest, c->deepest_t, c->samples,
                    c->active_sum };
    memcpy(v, w, sizeof w);
}

static void contact_restore(srd_contact_stats *c, const double v[7])
{
    c->active_now = (int)v[0];
    c->active_max = (int)v[1];
    c->active_max_t = v[2];
    c->deepest = v[3];
    c->deepest_t = v[4];
    c->samples = v[5];
    c->active_sum = v[6];
}

/* The checkpoint after output step k: the sim's state and how far every output file is
 * written, so that --resume continues each exactly after this step's rows. */
static int save_checkpoint(Dynamic *d, long k)
{
    srd_checkpoint_pos pos;
    memset(&pos, 0, sizeof pos);
    pos.step = k;
    pos.next_out = pos.next_energy = d->next_out;
    pos.next_probe = d->out->pr.next;
    pos.energy_bytes = srd_outfile_size(&d->energy);
    pos.probes_bytes = d->out->pr.out.f ? srd_outfile_size(&d->out->pr.out) : -1;
    pos.csv_bytes = d->out->csv.f ? srd_outfile_size(&d->out->csv) : -1;
    pos.vtk_frames = d->out->vtk.frames;
    pos.pvd_bytes = d->out->vtk.pvd_entries_end;
    contact_save(&d->contact, pos.contact);
    char err[4400];
    if (srd_checkpoint_write(d->o->out, d->s, d->fingerprint, &pos, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", prog_name, err);
        return SRD_EXIT_IO;
    }
    note_written(SRD_CHECKPOINT_FILE);
    return SRD_EXIT_OK;
}

/* Reopens an output of the earlier run, cut back to where the checkpoint left it. */
static int resume_file(srd_outfile *f, const char *dir, const char *name, int64_t bytes)
{
    if (bytes < 0)
        return SRD_EXIT_OK;
    if (srd_outfile_resume(f, dir, name, bytes) != 0)
        return report_outfile(f);
    note_written(name);
    return SRD_EXIT_OK;
}

/* --resume DIR: the state and the output files as they were at the checkpoint. */
static int resume_dynamic(Dynamic *d)
{
    const srd_analysis *a = &d->m->simulate;
    const char *dir = d->o->out;
    srd_checkpoint_pos pos;
    char err[4400];
    if (srd_checkpoint_read(d->o->resume, d->s, d->fingerprint, &pos, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", prog_name, err);
        return SRD_EXIT_BAD_INPUT;
    }
    char csv_name[4200];
    snprintf(csv_name, sizeof csv_name, "%s.csv", a->output_name ? a->output_name : "frames");
    int status = resume_file(&d->energy, dir, "energy.csv", pos.energy_bytes);
    if (status == SRD_EXIT_OK)
        status = resume_file(&d->out->pr.out, dir, "probes.csv", a->n_probes ? pos.probes_bytes : -1);
    if (status == SRD_EXIT_OK)
        status = resume_file(&d->out->csv, dir, csv_name, pos.csv_bytes);
    if (status == SRD_EXIT_OK && d->out->has_vtk) {
        srd_vtk_close(&d->out->vtk);
        if (srd_vtk_resume(&d->out->vtk, dir, a->output_name ? a->output_name : "frames", (int)pos.vtk_frames,
                           (long)pos.pvd_bytes) != 0)
            status = report_frames(&d->out->vtk);
    }
    d->first = (long)pos.step + 1;
    d->next_out = pos.next_out;
    d->out->pr.next = pos.next_probe;
    contact_restore(&d->contact, pos.contact);
    if (status == SRD_EXIT_OK && !d->o->quiet)
        printf("resuming at t = %.9g s (step %ld) from %s/%s\n", d->s->t, (long)pos.step, dir, SRD_CHECKPOINT_FILE);
    return status;
}

/* A checkpoint at every output frame of the block's `output`. Without one, every step is a
 * frame of energy.csv, and a checkpoint per step would cost more than the step: then one per
 * second of computing, and one at the last step. Any of them resumes bit for bit. */
static bool checkpoint_due(Dynamic *d, long k)
{
    if (!d->every_frame && k < d->steps && srd_seconds() - d->last_save < 1.0)
        return false;
    d->last_save = srd_seconds();
    return true;
}

/* The outputs of step k at the output period (frame, energy, checkpoint) and the probes at
 * theirs; 0, or the exit status of a failed write. */
static int step_outputs(Dynamic *d, long k)
{
    srd_sim *s = d->s;
    const srd_analysis *a = &d->m->simulate;
    bool frame = s->t >= d->next_out - 1e-6 * s->dt;
    int status = frame ? write_frame(d->out, s, s->q, s->v, s->t, true) : SRD_EXIT_OK;
    if (status == SRD_EXIT_OK && frame) {
        /* Kinetic, potential and total energy at the output cadence: conservation is how one
         * judges an undamped run. */
        double ke = srd_kinetic_energy(s), pe = srd_potential_energy(s);
        srd_outfile_printf(&d->energy, "%.9g,%.12g,%.12g,%.12g\n", s->t, ke, pe, ke + pe);
        if (srd_outfile_flush(&d->energy) != 0)
            status = report_outfile(&d->energy);
        d->next_out += d->out_every;
    }
    if (status == SRD_EXIT_OK && s->t >= d->out->pr.next - 1e-6 * s->dt) {
        if (write_probes(&d->out->pr, s, a, s->q, s->t) != 0)
            status = report_outfile(&d->out->pr.out);
        d->out->pr.next += d->probe_every;
    }
    current_obstacles(s, d->contact.posed);
    srd_contact_stats_sample(&d->contact, d->m, s->q, s->params, s->t);
    srd_pairs_sample(s->pairs, s->q, s->t);
    return status == SRD_EXIT_OK && frame && checkpoint_due(d, k) ? save_checkpoint(d, k) : status;
}

/* Threads of the fast path: $SRD_THREADS when set, else one for small models, whose steps
 * take less time than waking a helper at each of the step's two barriers (bench/README.md). */
enum { FAST_PATH_MIN_PER_THREAD = 20000 };

static int fast_path_threads(const srd_model *m)
{
    const char *env = getenv("SRD_THREADS");
    if (env && *env)
        return srd_assembly_threads();
    long n = 0;
    for (int k = 0; k < m->n_sets; k++)
        n += m->sets[k].n;
    return n >= 2 * FAST_PATH_MIN_PER_THREAD ? srd_assembly_threads() : 1;
}

static void fast_schedules(void *sim, double t) { srd_sim_apply_schedules(sim, t); }

/* The explicit fast path for this simulation, when the method is explicit, the model has only
 * node DOFs and $SRD_EXPLICIT is not "general" (which keeps the general path, for comparison). */
static void fast_path_start(Dynamic *d)
{
    srd_sim *s = d->s;
    const srd_model *m = d->m;
    const char *env = getenv("SRD_EXPLICIT");
    if (d->method < SRD_SYMPLECTIC_EULER || (env && !strcmp(env, "general")))
        return;
    if (m->control.present)
        return; /* the controller samples inside srd_step, which the fast path bypasses */
    int n = m->n_sets;
    d->fast_fns = srd_xcalloc((size_t)n + 1, sizeof *d->fast_fns);
    d->fast_infos = srd_xcalloc((size_t)n + 1, sizeof *d->fast_infos);
    d->fast_data = srd_xcalloc((size_t)n + 1, sizeof *d->fast_data);
    for (int k = 0; k < n; k++) {
        d->fast_fns[k] = s->kernels[k].gradient;
        d->fast_infos[k] = s->kernels[k].info;
        d->fast_data[k] = s->set_data ? s->set_data[k] : s->kernels[k].batch.data;
    }
    if (srd_explicit_unsupported(m, d->fast_infos))
        return;
    srd_explicit_input in = { m, d->fast_fns, d->fast_infos, d->fast_data, s->params, s->fext,
                              s->schedules.n ? fast_schedules : NULL, s, s->schedules.has_loads,
                              fast_path_threads(m) };
    d->fast = srd_explicit_new(&in, d->method, s->dt);
}

static void fast_path_free(Dynamic *d)
{
    srd_explicit_free(d->fast);
    free(d->fast_fns);
    free(d->fast_infos);
    free(d->fast_data);
}

static bool has_lattice(const srd_model *m)
{
    for (int k = 0; k < m->n_objects; k++)
        if (m->objects[k].kind == SRD_OBJ_LATTICE)
            return true;
    return false;
}

/* Line `line` of the file at path with a caret under column col, as the compiler shows the
 * source of a diagnostic; nothing when the file cannot be read. */
static void show_source_line(const char *path, int line, int col)
{
    FILE *f = fopen(path, "r");
    char text[4096];
    for (int k = 1; f && fgets(text, sizeof text, f); k++)
        if (k == line) {
            text[strcspn(text, "\r\n")] = 0;
            fprintf(stderr, "%5d | %s\n      | %*s^\n", line, text, col - 1, "");
            break;
        }
    if (f)
        fclose(f);
}

/* A lattice runs on the fast path only below the stable time step: above it an explicit
 * method blows up within a few steps, so the run is refused with the estimate, at the file's
 * `dt`. (Other models keep the warning: a point-mass chain's estimate is 0.98 of its exact
 * limit, and tests drive them past it on purpose.) */
static int refuse_unstable_dt(const Dynamic *d)
{
    const srd_analysis *a = &d->m->simulate;
    if (d->o->dt > 0 || !a->dt_line)
        fprintf(stderr, "%s: error: ", prog_name);
    else
        fprintf(stderr, "%s:%d:%d: error: ", d->m->source, a->dt_line, a->dt_col);
    fprintf(stderr, "dt = %.3g s%s is above the stable time step of `%s` on this model, %.3g s\n",
            d->s->dt, d->o->dt > 0 ? " (--dt)" : "", a->method, d->stable);
    if (d->o->dt <= 0 && a->dt_line)
        show_source_line(d->m->source, a->dt_line, a->dt_col);
    fprintf(stderr, "  hint: use dt <= %.3g s; the estimate is %s / w_max, with w_max bounded by Gershgorin's theorem "
                    "on M^-1 K at the start; or use an implicit method\n",
            d->stable, d->method == SRD_RK4 ? "2 sqrt(2)" : "2");
    return SRD_EXIT_BAD_INPUT;
}

static void print_fast_path(const Dynamic *d)
{
    if (d->o->quiet)
        return;
    printf("explicit fast path: %s over %ld element instances on %d thread%s; stable time step %.3g s (dt = %.3g s)\n",
           d->m->simulate.method, srd_explicit_instances(d->fast), srd_explicit_threads(d->fast),
           srd_explicit_threads(d->fast) > 1 ? "s" : "", d->stable, d->s->dt);
}

/* Settings of the simulation with --dt and --duration applied, and its energy file (new, or
 * continued with --resume). */
static int start_dynamic(Dynamic *d, srd_kernel_fn ground_height)
{
    srd_sim *s = d->s;
    const srd_analysis *a = &d->m->simulate;
    s->tolerance = a->tolerance;
    s->max_iterations = a->max_iterations;
    s->line_search = a->line_search;
    s->dt = simulate_dt(d->m, d->o);
    double duration = d->o->duration > 0 ? d->o->duration : a->duration;
    d->steps = (long)ceil(duration / s->dt - 1e-9);
    d->out_every = a->output_every > 0 ? a->output_every : s->dt;
    d->probe_every = probe_period(a, s->dt);
    d->method = (srd_method)srd_method_from_name(a->method);
    d->fingerprint = srd_checkpoint_fingerprint(d->m, s->params, s->dt, d->out_every);
    d->every_frame = a->output_format != NULL;
    d->last_save = srd_seconds();
    srd_contact_stats_init(&d->contact, d->m, ground_height);
    s->dynamic = 1; /* the first frame's reactions include the prescribed accelerations too */
    fast_path_start(d);
    d->stable = check_stable_dt(s, d->method, d->fast && has_lattice(d->m));
    if (d->fast && has_lattice(d->m) && d->stable > 0 && s->dt > d->stable)
        return refuse_unstable_dt(d);
    if (d->fast)
        print_fast_path(d);
    if (d->o->resume)
        return resume_dynamic(d);
    if (srd_outfile_open(&d->energy, d->o->out, "energy.csv") != 0)
        return report_outfile(&d->energy);
    note_written("energy.csv");
    srd_outfile_printf(&d->energy, "t,kinetic,potential,total\n");
    return SRD_EXIT_OK;
}

static void print_dynamic_summary(const Dynamic *d, double wall)
{
    const srd_sim *s = d->s;
    long taken = d->steps - (d->first > 0 ? d->first - 1 : 0); /* the steps of this run */
    int threads = srd_assembler_threads(s->assembler);
    printf("simulated %.6g s in %ld steps (%ld rejected), %.2f Newton iterations per step, %.3f ms per step, "
           "real-time factor %.3g",
           s->t, d->steps, s->rejected, d->steps ? (double)s->total_iterations / (double)d->steps : 0.0,
           taken > 0 ? 1e3 * wall / (double)taken : 0.0, wall > 0 ? (s->t - d->t_first) / wall : 0.0);
    printf(threads > 1 ? " (assembly on %d threads)\n" : "\n", threads);
    print_solver_summary(s);
    print_contact_summary(&d->contact);
    srd_pairs_print_summary(s->pairs, stdout);
}

/* Whether step_outputs will read the state after this step: a frame, probes or contact. */
static bool outputs_due(const Dynamic *d)
{
    const srd_sim *s = d->s;
    return s->t >= d->next_out - 1e-6 * s->dt || s->t >= d->out->pr.next - 1e-6 * s->dt || d->contact.has_contact ||
           s->pairs;
}

/* One step of the fast path; the sim's state is brought up to date when it is read, with the
 * step-start positions q0 = q - dt v by which the fast path gives friction its velocity (so
 * that contact_force probes and frames report the friction it applies). */
static int fast_step(Dynamic *d)
{
    srd_sim *s = d->s;
    int code = srd_explicit_steps(d->fast, 1);
    s->t = srd_explicit_time(d->fast);
    s->steps++;
    if (code || outputs_due(d)) {
        srd_explicit_get_state(d->fast, s->q, s->v);
        for (int k = 0; k < d->m->n_dofs; k++)
            s->q0[k] = s->q[k] - s->dt * s->v[k];
    }
    return code;
}

static int run_dynamic(srd_sim *s, const srd_model *m, const srd_run_options *o, Outputs *out,
                       srd_kernel_fn ground_height)
{
    Dynamic d = { .s = s, .m = m, .o = o, .out = out };
    double t0 = srd_seconds();
    int status = start_dynamic(&d, ground_height);
    d.t_first = s->t;
    if (d.fast && status == SRD_EXIT_OK)
        srd_explicit_set_state(d.fast, s->q, s->v, s->t); /* after a resume or a static start */
    for (long k = d.first; k <= d.steps && status == SRD_EXIT_OK; k++) {
        int code = k > 0 ? (d.fast ? fast_step(&d) : srd_step(s, d.method, 6)) : 0;
        if (code) {
            srd_report_step_failure(stderr, prog_name, s, d.method, code);
            if (d.stable > 0)
                fprintf(stderr, "  stable time step estimate: %.3g s (dt = %.3g s)\n", d.stable, s->dt);
            fprintf(stderr, "  frames written so far are in %s\n", o->out);
            status = SRD_EXIT_NUMERIC;
            break;
        }
        status = step_outputs(&d, k);
        watch_strain(s, s->t);
        if (!o->quiet)
            progress(k, d.steps, d.first, t0);
    }
    warn_overlap(s);
    if (srd_outfile_close(&d.energy) != 0 && status == SRD_EXIT_OK)
        status = report_outfile(&d.energy);
    if (status == SRD_EXIT_OK && !o->quiet)
        print_dynamic_summary(&d, srd_seconds() - t0);
    srd_contact_stats_free(&d.contact);
    fast_path_free(&d);
    return status;
}

/* Opens the block's outputs: its VTK series or CSV table of positions, and its probes. A
 * resumed simulation reopens its files from the checkpoint instead (resume_dynamic). */
static int open_outputs(Outputs *out, const srd_model *m, const srd_analysis *a, const srd_run_options *o)
{
    const char *name = a->output_name ? a->output_name : "frames";
    bool resume = o->resume && a == &m->simulate;
    if (srd_vtk_open(&out->vtk, o->out, name) != 0) {
        fprintf(stderr, "%s: error: cannot write to %s: %s\n", prog_name, o->out, strerror(errno));
        return SRD_EXIT_IO;
    }
    out->has_vtk = a->output_format && !strcmp(a->output_format, "vtk");
    out->vtk.binary = a->output_binary;
    if (resume)
        return SRD_EXIT_OK;
    if (a->output_format && !strcmp(a->output_format, "csv")) {
        if (srd_csv_frames_open(&out->csv, o->out, name, m, a == &m->modes ? "mode" : "t") != 0)
            return report_outfile(&out->csv);
        note_series(name, ".csv");
    }
    return open_probes(&out->pr, o->out, m, a) != 0 ? report_outfile(&out->pr.out) : SRD_EXIT_OK;
}

static int close_outputs(Outputs *out, int status)
{
    if (out->vtk.frames > 0)
        note_series(out->vtk.name, ".pvd");
    if (srd_outfile_close(&out->pr.out) != 0 && status == SRD_EXIT_OK)
        status = report_outfile(&out->pr.out);
    if (srd_outfile_close(&out->csv) != 0 && status == SRD_EXIT_OK)
        status = report_outfile(&out->csv);
    srd_vtk_close(&out->vtk);
    return status;
}

/* Runs one analysis block with its own outputs. */
static int run_analysis(srd_sim *s, const srd_model *m, const srd_analysis *a, const srd_run_options *o,
                        srd_kernel_fn ground_height)
{
    Outputs out;
    memset(&out, 0, sizeof out);
    int status = open_outputs(&out, m, a, o);
    if (status == SRD_EXIT_OK)
        status = a == &m->statics ? run_static(s, m, &out, o)
               : a == &m->modes   ? run_modes(s, m, &out, o)
                                  : run_dynamic(s, m, o, &out, ground_height);
    return close_outputs(&out, status);
}

/* The step count of the simulation with --dt and --duration applied: the model's own values
 * were checked when it was built, but the command line may change either. */
static int check_time_steps(const srd_model *m, const srd_run_options *o)
{
    if (!m->simulate.present)
        return 0;
    double dt = o->dt > 0 ? o->dt : m->simulate.dt, duration = o->duration > 0 ? o->duration : m->simulate.duration;
    if (dt > duration) {
        fprintf(stderr, "%s: error: the time step (%g s) is longer than the duration (%g s)\n"
                        "  hint: check --dt and --duration\n", prog_name, dt, duration);
        return -1;
    }
    if (duration / dt > SRD_MAX_TIME_STEPS) {
        fprintf(stderr, "%s: error: a time step of %g s over %g s makes %.3g steps, more than the limit of %d\n"
                        "  hint: use a larger --dt or a shorter --duration\n", prog_name, dt, duration,
                duration / dt, SRD_MAX_TIME_STEPS);
        return -1;
    }
    return 0;
}

/* --resume DIR continues a simulation in DIR, from DIR's checkpoint. */
static int check_resume(const srd_model *m, const srd_run_options *o)
{
    if (!o->resume)
        return 0;
    if (!m->simulate.present) {
        fprintf(stderr, "%s: error: --resume continues a simulation, but the model has no `simulate` block\n",
                prog_name);
        return -1;
    }
    if (strcmp(o->out, o->resume)) {
        fprintf(stderr, "%s: error: --resume %s continues the run in %s, but --out names %s\n  hint: leave out "
                        "--out\n", prog_name, o->resume, o->resume, o->out);
        return -1;
    }
    return 0;
}

int srd_run_check(const srd_model *m, const srd_run_options *o)
{
    if (o->program)
        prog_name = o->program;
    if (!m->statics.present && !m->modes.present && !m->simulate.present) {
        fprintf(stderr, "%s: error: the model has no `static`, `modes` or `simulate` block to run\n", prog_name);
        return SRD_EXIT_BAD_INPUT;
    }
    if (check_resume(m, o) != 0)
        return SRD_EXIT_BAD_INPUT;
    return check_supported(m) != 0 || check_time_steps(m, o) != 0 ? SRD_EXIT_BAD_INPUT : SRD_EXIT_OK;
}


static bool has_solid(const srd_model *m)
{
    for (int o = 0; o < m->n_objects; o++)
        if (m->objects[o].kind == SRD_OBJ_SOLID)
            return true;
    return false;
}

/* A sim for analysis a, with its solver and the schedules; 0, or the exit status. */
int srd_sim_for_analysis(srd_sim *s, const srd_model *m, const srd_kernel_table *kt, const srd_analysis *a,
                         const char *solver_override, double step_dt, char *err, size_t err_n)
{
    const char *name = solver_override ? solver_override : a->solver ? a->solver : "auto";
    int solver = srd_solver_kind_parse(name);
    /* The whole eigenproblem costs n^3 on any layout; for a solid above a few thousand free
     * DOFs shift-invert Lanczos on one sparse factorisation is far cheaper (a 6,000-DOF solid:
     * 35 s against 0.2 s), so `auto` takes the sparse solver for its modes. (Rods and shells
     * keep the rule of their layout: a free rod's rigid modes stall ARPACK.) */
    if (solver == SRD_SOLVER_AUTO && a == &m->modes && m->n_dofs - m->n_fixed > 2000 && has_solid(m))
        solver = SRD_SOLVER_SPARSE;
    int init = srd_sim_init(s, m, kt->fns, kt->gradients, kt->infos,
                            solver < 0 ? SRD_SOLVER_AUTO : (srd_solver_kind)solver, err, err_n);
    if (init != 0)
        return init;
    s->step_dt = step_dt;
    if (kt->n_schedules)
        srd_sim_set_schedules(s, kt->n_schedules, kt->schedules, kt->schedule_actuation, kt->schedule_expr);
    return 0;
}

/* A sim for analysis a; 0, or the exit status. */
static int init_sim(srd_sim *s, const srd_model *m, const srd_kernel_table *kt, const srd_analysis *a,
                    const srd_run_options *o)
{
    char err[512];
    int init = srd_sim_for_analysis(s, m, kt, a, o->solver, simulate_dt(m, o), err, sizeof err);
    if (init != 0) {
        fprintf(stderr, "%s: error: %s\n", prog_name, err);
        return init == SRD_SIM_NO_MEMORY ? SRD_EXIT_MEMORY : SRD_EXIT_BAD_INPUT;
    }
    return SRD_EXIT_OK;
}

static int check_method(const srd_model *m, const srd_kernel_table *kt)
{
    return srd_report_unsupported_method(stderr, prog_name, m, kt->infos) ? SRD_EXIT_BAD_INPUT : SRD_EXIT_OK;
}

/* Whether analysis a runs: --resume continues the simulation only (the static and modes
 * results of the earlier run stay as they were written, and its checkpoint holds the state). */
static bool runs(const srd_model *m, const srd_analysis *a, const srd_run_options *o)
{
    return a->present && (!o->resume || a == &m->simulate);
}

/* units.csv, for the analyses that run. */
static int write_units(const srd_model *m, const srd_run_options *o, const srd_analysis *const order[3])
{
    bool which[3];
    for (int k = 0; k < 3; k++)
        which[k] = runs(m, order[k], o);
    srd_outfile units;
    memset(&units, 0, sizeof units);
    if (srd_units_write(&units, o->out, m, which) != 0)
        return report_outfile(&units);
    note_written("units.csv");
    return SRD_EXIT_OK;
}

int srd_run(const srd_model *m, const srd_kernel_table *kt, const srd_run_options *o)
{
    if (srd_run_check(m, o) != SRD_EXIT_OK || check_method(m, kt) != SRD_EXIT_OK)
        return SRD_EXIT_BAD_INPUT;
    written.n = 0;
    /* Analyses run in this order; modes `at = equilibrium` start from the static result, a
     * simulation from the reference configuration or, with `start = equilibrium`, from the
     * static result too. */
    const srd_analysis *order[3] = { &m->statics, &m->modes, &m->simulate };
    int status = write_units(m, o, order);
    srd_start_state equilibrium = { NULL, NULL };
    strain_warned = false;
    srd_sim s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < 3 && status == SRD_EXIT_OK; k++) {
        const srd_analysis *a = order[k];
        if (!runs(m, a, o))
            continue;
        bool keep_state = a == &m->modes && s.m && a->method && !strcmp(a->method, "equilibrium");
        if (!keep_state) {
            if (s.m)
                srd_sim_free(&s);
            if ((status = init_sim(&s, m, kt, a, o)) != SRD_EXIT_OK)
                break;
        }
        if (a == &m->simulate && equilibrium.q)
            srd_sim_start_at(&s, &equilibrium);
        s.log = o->verbose ? stdout : NULL;
        status = run_analysis(&s, m, a, o, kt->ground_height);
        if (a == &m->statics && m->simulate.start && status == SRD_EXIT_OK)
            srd_start_state_save(&s, &equilibrium);
    }
    srd_start_state_free(&equilibrium);
    if (s.m)
        srd_sim_free(&s);
    print_written(o);
    return status;
}

/* Reads a time from the command line: seconds, or a number with a time unit (10ms, 2s, 1min). */
static bool parse_time(const char *text, double *out)
{
    static const struct { const char *unit; double scale; } units[] = {
        { "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "min", 60 }, { "h", 3600 },
    };
    char *end;
    double v = strtod(text, &end);
    if (end == text)
        return false;
    while (*end == ' ')
        end++;
    for (size_t k = 0; k < sizeof units / sizeof *units; k++)
        if (!strcmp(end, units[k].unit)) {
            *out = v * units[k].scale;
            return isfinite(*out) && *out > 0;
        }
    return false;
}

static const char *oom_program = "srd";

static void exit_out_of_memory(size_t bytes)
{
    fprintf(stderr, "%s: error: out of memory (allocating %.3g MB)\n", oom_program, (double)bytes / 1e6);
    fflush(stdout);
    _exit(SRD_EXIT_MEMORY); /* exit() could run handlers that allocate */
}

void srd_exit_when_out_of_memory(const char *program)
{
    oom_program = program;
    srd_alloc_on_failure(exit_out_of_memory);
}

int srd_override_find(const char *const *specs, int n, const char *spec)
{
    size_t len = strcspn(spec, "=");
    for (int k = 0; k < n; k++)
        if (strcspn(specs[k], "=") == len && !strncmp(specs[k], spec, len))
            return k;
    return -1;
}

void srd_override_report_twice(const char *program, const char *first, const char *again)
{
    int len = (int)strcspn(again, "=");
    fprintf(stderr, "%s: error: param `%.*s` is given twice (`-p %s` and `-p %s`)\n", program, len, again, first,
            again);
    fprintf(stderr, "hint: give each param once\n");
}

/* A second -p of the same param would be silently ignored by the front end (the first one
 * wins), so it is refused here, for srdc run and built simulators alike. */
static int add_override(srd_run_options *o, const char *spec)
{
    int k = srd_override_find((const char *const *)o->overrides, o->n_overrides, spec);
    if (k >= 0) {
        srd_override_report_twice(o->program ? o->program : prog_name, o->overrides[k], spec);
        return -1;
    }
    o->overrides[o->n_overrides++] = spec;
    return 1;
}

int srd_run_options_parse(srd_run_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    bool has_value = *i + 1 < argc;
    if (!strcmp(a, "--quiet"))
        o->quiet = true;
    else if (!strcmp(a, "--verbose"))
        o->verbose = true;
    else if (!strcmp(a, "--out") && has_value)
        o->out = argv[++*i];
    else if (!strcmp(a, "--resume") && has_value)
        o->resume = o->out = argv[++*i];
    else if (!strcmp(a, "-p") && has_value)
        return add_override(o, argv[++*i]);
    else if (!strcmp(a, "--solver") && has_value) {
        o->solver = argv[++*i];
        if (srd_solver_kind_parse(o->solver) < 0) {
            fprintf(stderr, "%s: error: `--solver %s`: the solvers are auto, dense, banded and sparse\n",
                    o->program ? o->program : prog_name, o->solver);
            return -1;
        }
    }
    else if (!strncmp(a, "-p", 2) && strchr(a, '='))
        return add_override(o, a + 2);
    else if ((!strcmp(a, "--duration") || !strcmp(a, "--dt")) && has_value) {
        const char *v = argv[++*i];
        if (!parse_time(v, !strcmp(a, "--duration") ? &o->duration : &o->dt)) {
            fprintf(stderr, "%s: error: `%s %s` needs a positive time such as 0.5, 0.5s or 10ms\n",
                    o->program ? o->program : prog_name, a, v);
            return -1;
        }
    } else
        return 0;
    return 1;
}
