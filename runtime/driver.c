/* driver.c — runs a model's analyses (static, modes, simulate) with compiled kernels, writing
 * VTK frames, probes and energies as it goes. `srdc run` (JIT kernels) and every simulator
 * built by `srdc build` (kernels linked in) share it. */
#include "driver.h"
#include "clock.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "alloc.h"
#include "contact.h"
#include "files.h"
#include "modeshape.h"
#include "output_vtk.h"
#include "parallel.h"
#include "sim.h"
#include "watch.h"

/* Messages start with the program's name: srdc, or the built simulator's. */
static const char *prog_name = "srdc";

/* What the runtime cannot do yet is refused before anything runs. */
static int check_supported(const srd_model *m)
{
    if (m->has_self_contact) {
        fprintf(stderr, "%s: error: self contact is not available yet in `srdc run`; gravity, buoyancy, fluid "
                        "forces (viscous, rft, drag), Rayleigh damping, actuation, loads, a flat, inclined or uneven "
                        "ground and sphere, box and cylinder obstacles with friction are\n", prog_name);
        return -1;
    }
    return 0;
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

static int open_probes(Probes *pr, const char *dir, const srd_analysis *a)
{
    memset(pr, 0, sizeof *pr);
    if (!a->n_probes)
        return 0;
    if (srd_outfile_open(&pr->out, dir, "probes.csv") != 0)
        return -1;
    srd_outfile_printf(&pr->out, "t");
    for (int i = 0; i < a->n_probes; i++) {
        if (a->probes[i].dof >= 0)
            srd_outfile_printf(&pr->out, ",%s", a->probes[i].name);
        else
            srd_outfile_printf(&pr->out, ",%s.x,%s.y,%s.z", a->probes[i].name, a->probes[i].name, a->probes[i].name);
    }
    srd_outfile_printf(&pr->out, "\n");
    return srd_outfile_flush(&pr->out);
}

/* One row of probes.csv, flushed so that a run that stops keeps every row it took; 0, or -1
 * when the file cannot be written. */
static int write_probes(Probes *pr, const srd_model *m, const srd_analysis *a, const double *q, double t)
{
    if (!pr->out.f)
        return 0;
    srd_outfile_printf(&pr->out, "%.9g", t);
    for (int i = 0; i < a->n_probes; i++) {
        const srd_probe *p = &a->probes[i];
        if (p->dof >= 0)
            srd_outfile_printf(&pr->out, ",%.12g", q[p->dof]);
        else
            for (int c = 0; c < 3; c++)
                srd_outfile_printf(&pr->out, ",%.12g", q[m->node_dof[p->node] + c]);
    }
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

static void report_failure(const srd_sim *s, int code)
{
    fprintf(stderr, "%s: error: %s at t = %.6g s\n", prog_name,
            code == 2 ? "the solution became NaN or infinite" : "Newton's method did not converge", s->t);
    fprintf(stderr, "  Newton residuals (N):");
    for (int i = 0; i < s->last.iterations && i < 64; i++)
        fprintf(stderr, " %.2e", s->last.history[i]);
    fprintf(stderr, "\n  largest residuals:\n");
    srd_sim_report_worst(s, stderr, 3);
    fprintf(stderr, "hint: try a smaller `dt`, more `load_steps`, a looser `tolerance`, or check for a part that is "
                    "not held (a free rigid motion makes the system singular)\n");
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
 * frequency at the start (0 for implicit methods); warns when dt is above it. */
static double check_stable_dt(srd_sim *s, srd_method method)
{
    if (method < SRD_SYMPLECTIC_EULER)
        return 0;
    double w = srd_max_frequency_bound(s), stable = srd_stable_dt(method, w);
    if (stable > 0 && s->dt > stable)
        fprintf(stderr, "%s: warning: dt = %.3g s is above the stable time step of this explicit method, about "
                        "%.3g s (%s / w_max, with w_max <= %.4g rad/s by Gershgorin's bound on M^-1 K at the start)"
                        "\n  hint: use dt below %.3g s, or an implicit method\n", prog_name, s->dt, stable,
                method == SRD_RK4 ? "2.83" : "2", w, stable);
    return stable;
}

static void progress(double done, double total)
{
    if (!isatty(STDERR_FILENO))
        return;
    int width = 40, filled = total > 0 ? (int)(width * done / total) : width;
    fprintf(stderr, "\r  [%.*s%*s] %5.1f%%", filled, "########################################", width - filled, "",
            total > 0 ? 100 * done / total : 100.0);
    if (done >= total)
        fprintf(stderr, "\r%*s\r", width + 12, "");
}

static int run_static(srd_sim *s, const srd_model *m, srd_vtk_series *vtk, Probes *pr)
{
    const srd_analysis *a = &m->statics;
    s->tolerance = a->tolerance;
    s->max_iterations = a->max_iterations;
    s->line_search = a->line_search;
    int code = srd_static(s, a->load_steps);
    if (code) {
        report_failure(s, code);
        return SRD_EXIT_NUMERIC;
    }
    watch_strain(s, 0);
    if (write_probes(pr, m, a, s->q, 0) != 0)
        return report_outfile(&pr->out);
    double *force = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    srd_sim_net_force(s, force);
    int bad = vtk && srd_vtk_write(vtk, m, s->q, NULL, force, 0) != 0;
    free(force);
    if (bad)
        return report_frames(vtk);
    printf("static equilibrium: %d load steps, %ld Newton iterations, residual %.3e N\n", a->load_steps,
           s->total_iterations, s->last.residual);
    return SRD_EXIT_OK;
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

/* The modal analysis works on a dense n x n copy of the stiffness and keeps `count` shapes of
 * every DOF: refused with a message above what the process may use. */
static bool modes_fit(int n_free, int count, int n_dofs)
{
    double need = sizeof(double) * ((double)n_free * n_free + (double)n_free * count + (double)count * n_dofs);
    const char *what;
    double limit = srd_memory_limit(&what);
    if (limit <= 0 || need <= limit)
        return true;
    fprintf(stderr, "%s: error: the modal analysis of %d free DOFs needs about %.3g GB, more than %s (%.3g GB)\n"
                    "  hint: a coarser model, or fewer modes\n", prog_name, n_free, need / 1e9, what, limit / 1e9);
    return false;
}

/* Natural frequencies and mode shapes about the current configuration. */
static int run_modes(srd_sim *s, const srd_model *m, const char *out)
{
    const srd_analysis *a = &m->modes;
    int count = mode_count(s, a);
    if (!modes_fit(s->solver.sys.n_free, count, m->n_dofs))
        return SRD_EXIT_MEMORY;
    double *freq = srd_xcalloc((size_t)count + 1, sizeof(double));
    double *modes = srd_xcalloc((size_t)count * (size_t)m->n_dofs + 1, sizeof(double));
    char err[512];
    int status = SRD_EXIT_OK;
    if (srd_modes(s, count, freq, modes, err, sizeof err) != 0) {
        fprintf(stderr, "%s: error: %s\n", prog_name, err);
        status = SRD_EXIT_NUMERIC;
    }
    srd_outfile csv = { 0 };
    if (status == SRD_EXIT_OK && srd_outfile_open(&csv, out, "modes.csv") != 0)
        status = report_outfile(&csv);
    if (status == SRD_EXIT_OK) {
        srd_outfile_printf(&csv, "mode,frequency_hz,label\n");
        printf("natural frequencies:\n");
        double w_bound = srd_max_frequency_bound(s);
        for (int k = 0; k < count; k++) {
            char label[32];
            double w = 2 * 3.14159265358979323846 * freq[k];
            srd_mode_label(m, s->q, &modes[(size_t)k * m->n_dofs], w, w_bound, label, sizeof label);
            srd_outfile_printf(&csv, "%d,%.12g,%s\n", k + 1, freq[k], label);
            printf("  mode %d: %.6g Hz  %s\n", k + 1, freq[k], label);
        }
        if (srd_outfile_close(&csv) != 0)
            status = report_outfile(&csv);
        /* Mode shapes as frames, every DOF of a mode scaled alike (srd_mode_display_scale). */
        if (a->output_format && !strcmp(a->output_format, "vtk")) {
            srd_vtk_series vtk;
            double *q = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
            if (srd_vtk_open(&vtk, out, a->output_name) == 0) {
                for (int k = 0; k < count && status == SRD_EXIT_OK; k++) {
                    const double *mode = &modes[(size_t)k * m->n_dofs];
                    double scale = srd_mode_display_scale(m, mode, s->length_scale);
                    for (int d = 0; d < m->n_dofs; d++)
                        q[d] = s->q[d] + scale * mode[d];
                    if (srd_vtk_write(&vtk, m, q, NULL, NULL, k + 1) != 0)
                        status = report_frames(&vtk);
                }
                srd_vtk_close(&vtk);
            }
            free(q);
        }
    }
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

static int run_dynamic(srd_sim *s, const srd_model *m, const srd_run_options *o, srd_vtk_series *vtk, Probes *pr,
                       srd_kernel_fn ground_height)
{
    const srd_analysis *a = &m->simulate;
    s->tolerance = a->tolerance;
    s->max_iterations = a->max_iterations;
    s->line_search = a->line_search;
    s->dt = simulate_dt(m, o);
    double duration = o->duration > 0 ? o->duration : a->duration;
    int steps = (int)ceil(duration / s->dt - 1e-9);
    double out_every = a->output_every > 0 ? a->output_every : s->dt, probe_every = probe_period(a, s->dt);
    double next_out = 0, next_energy = 0, t0 = srd_seconds();
    double *force = srd_xcalloc((size_t)m->n_dofs + 1, sizeof(double));
    /* Kinetic, potential and total energy at the output cadence: conservation is how one
     * judges an undamped run. */
    srd_outfile ef;
    if (srd_outfile_open(&ef, o->out, "energy.csv") != 0) {
        free(force);
        return report_outfile(&ef);
    }
    srd_outfile_printf(&ef, "t,kinetic,potential,total\n");
    srd_method method = (srd_method)srd_method_from_name(a->method);
    srd_contact_stats contact;
    srd_contact_stats_init(&contact, m, ground_height);
    int status = SRD_EXIT_OK;
    double stable = check_stable_dt(s, method);
    for (int k = 0; k <= steps; k++) {
        int code = k > 0 ? srd_step(s, method, 6) : 0;
        if (code) {
            report_failure(s, code);
            if (stable > 0)
                fprintf(stderr, "  stable time step estimate: %.3g s (dt = %.3g s)\n", stable, s->dt);
            fprintf(stderr, "  frames written so far are in %s\n", o->out);
            status = SRD_EXIT_NUMERIC;
            break;
        }
        if (vtk && s->t >= next_out - 1e-6 * s->dt) {
            srd_sim_net_force(s, force);
            if (srd_vtk_write(vtk, m, s->q, s->v, force, s->t) != 0) {
                status = report_frames(vtk);
                break;
            }
            next_out += out_every;
        }
        if (s->t >= next_energy - 1e-6 * s->dt) {
            double ke = srd_kinetic_energy(s), pe = srd_potential_energy(s);
            srd_outfile_printf(&ef, "%.9g,%.12g,%.12g,%.12g\n", s->t, ke, pe, ke + pe);
            if (srd_outfile_flush(&ef) != 0) {
                status = report_outfile(&ef);
                break;
            }
            next_energy += out_every;
        }
        if (s->t >= pr->next - 1e-6 * s->dt) {
            if (write_probes(pr, m, a, s->q, s->t) != 0) {
                status = report_outfile(&pr->out);
                break;
            }
            pr->next += probe_every;
        }
        watch_strain(s, s->t);
        srd_contact_stats_sample(&contact, m, s->q, s->params, s->t);
        if (!o->quiet)
            progress(k, steps);
    }
    free(force);
    if (srd_outfile_close(&ef) != 0 && status == SRD_EXIT_OK)
        status = report_outfile(&ef);
    double wall = srd_seconds() - t0;
    if (status == SRD_EXIT_OK && !o->quiet) {
        int threads = srd_assembler_threads(s->assembler);
        printf("simulated %.6g s in %d steps (%ld rejected), %.2f Newton iterations per step, %.3f ms per step, "
               "real-time factor %.3g",
               s->t, steps, s->rejected, steps ? (double)s->total_iterations / steps : 0.0,
               steps ? 1e3 * wall / steps : 0.0, wall > 0 ? s->t / wall : 0.0);
        printf(threads > 1 ? " (assembly on %d threads)\n" : "\n", threads);
        print_contact_summary(&contact);
    }
    srd_contact_stats_free(&contact);
    return status;
}

/* Runs one analysis block with its own outputs. */
static int run_analysis(srd_sim *s, const srd_model *m, const srd_analysis *a, const srd_run_options *o,
                        srd_kernel_fn ground_height)
{
    srd_vtk_series vtk;
    memset(&vtk, 0, sizeof vtk);
    Probes pr = { 0 };
    const char *name = a->output_name ? a->output_name : "frames";
    if (srd_vtk_open(&vtk, o->out, name) != 0) {
        fprintf(stderr, "%s: error: cannot write to %s: %s\n", prog_name, o->out, strerror(errno));
        return SRD_EXIT_IO;
    }
    if (open_probes(&pr, o->out, a) != 0) {
        srd_outfile_close(&pr.out);
        srd_vtk_close(&vtk);
        return report_outfile(&pr.out);
    }
    bool have_vtk = a->output_format && !strcmp(a->output_format, "vtk") && a != &m->modes;
    int status = a == &m->statics  ? run_static(s, m, have_vtk ? &vtk : NULL, &pr)
               : a == &m->modes    ? run_modes(s, m, o->out)
                                   : run_dynamic(s, m, o, have_vtk ? &vtk : NULL, &pr, ground_height);
    if (srd_outfile_close(&pr.out) != 0 && status == SRD_EXIT_OK)
        status = report_outfile(&pr.out);
    srd_vtk_close(&vtk);
    return status;
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

int srd_run_check(const srd_model *m, const srd_run_options *o)
{
    if (o->program)
        prog_name = o->program;
    if (!m->statics.present && !m->modes.present && !m->simulate.present) {
        fprintf(stderr, "%s: error: the model has no `static`, `modes` or `simulate` block to run\n", prog_name);
        return SRD_EXIT_BAD_INPUT;
    }
    return check_supported(m) != 0 || check_time_steps(m, o) != 0 ? SRD_EXIT_BAD_INPUT : SRD_EXIT_OK;
}

int srd_run(const srd_model *m, const srd_kernel_table *kt, const srd_run_options *o)
{
    if (srd_run_check(m, o) != SRD_EXIT_OK)
        return SRD_EXIT_BAD_INPUT;
    /* Friction and viscous drag are written for the implicit step, whose velocity is
     * (q - q0) / dt: an explicit method would silently leave them out. */
    const char *method = m->simulate.present ? m->simulate.method : NULL;
    if (method && srd_method_from_name(method) >= SRD_SYMPLECTIC_EULER)
        for (int k = 0; k < m->n_sets; k++)
            if (kt->infos[k].needs_time_step) {
                fprintf(stderr, "%s: error: `%s` elements (friction, viscous drag) need an implicit method, not "
                                "`%s`\n  hint: use method = implicit_euler, implicit_midpoint or newmark\n", prog_name,
                        m->sets[k].kind, method);
                return SRD_EXIT_BAD_INPUT;
            }
    /* Analyses run in this order; modes `at = equilibrium` start from the static result,
     * a simulation from the reference configuration. */
    const srd_analysis *order[3] = { &m->statics, &m->modes, &m->simulate };
    int status = SRD_EXIT_OK;
    strain_warned = false;
    char err[512];
    srd_sim s;
    memset(&s, 0, sizeof s);
    for (int k = 0; k < 3 && status == SRD_EXIT_OK; k++) {
        const srd_analysis *a = order[k];
        if (!a->present)
            continue;
        bool keep_state = a == &m->modes && s.m && a->method && !strcmp(a->method, "equilibrium");
        if (!keep_state) {
            if (s.m)
                srd_sim_free(&s);
            srd_solver_kind solver = !a->solver || !strcmp(a->solver, "auto") ? SRD_SOLVER_AUTO
                                   : !strcmp(a->solver, "dense")               ? SRD_SOLVER_DENSE
                                                                               : SRD_SOLVER_BANDED;
            int init = srd_sim_init(&s, m, kt->fns, kt->gradients, kt->infos, solver, err, sizeof err);
            if (init != 0) {
                fprintf(stderr, "%s: error: %s\n", prog_name, err);
                status = init == SRD_SIM_NO_MEMORY ? SRD_EXIT_MEMORY : SRD_EXIT_BAD_INPUT;
                break;
            }
            s.step_dt = simulate_dt(m, o);
            if (kt->n_schedules)
                srd_sim_set_schedules(&s, kt->n_schedules, kt->schedules, kt->schedule_actuation, kt->schedule_expr);
        }
        s.log = o->verbose ? stdout : NULL;
        status = run_analysis(&s, m, a, o, kt->ground_height);
    }
    if (s.m)
        srd_sim_free(&s);
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
    else if (!strcmp(a, "-p") && has_value)
        o->overrides[o->n_overrides++] = argv[++*i];
    else if (!strncmp(a, "-p", 2) && strchr(a, '='))
        o->overrides[o->n_overrides++] = a + 2;
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
