/* report.c — the runtime's reports of failed steps and of methods that cannot run a model. */
#include "report.h"
#include "explicit.h"

/* A singular Jacobian: which DOFs nothing holds, not a LAPACK code. */
static void report_singular(FILE *out, const char *program, const srd_sim *s)
{
    fprintf(out, "%s: error: the Jacobian is singular at t = %.6g s: the model can move without resistance\n",
            program, s->t);
    if (srd_sim_report_singular(s, out, 8) == -1)
        fprintf(out, "hint: in a closed loop of joints some constraints repeat the others (a planar four-bar of "
                        "hinges holds its out-of-plane motion twice): make one joint of the loop spherical or "
                        "universal, or drop one of its constraints\n");
    else
        fprintf(out, "hint: hold the part these DOFs belong to (`clamp`, `fix`, a joint or contact), or give it "
                        "stiffness; a static analysis needs every rigid motion held\n");
}

static void report_crossing(FILE *out, const char *program, const srd_sim *s)
{
    fprintf(out, "%s: error: at t = %.6g s two edges in contact would pass through each other, even in %s\n"
                    "hint: raise the contact `stiffness` or `delta`, or shorten `dt`%s\n",
            program, s->t, s->dynamic ? "the smallest substeps" : "this load step",
            s->dynamic ? "" : "; or use more `load_steps`");
}

static void report_failure(FILE *out, const char *program, const srd_sim *s, int code)
{
    if (code == 1 && s->last.singular) {
        report_singular(out, program, s);
        return;
    }
    if (code == SRD_STEP_CROSSED) {
        report_crossing(out, program, s);
        return;
    }
    fprintf(out, "%s: error: %s at t = %.6g s\n", program,
            code == 2 ? "the solution became NaN or infinite" : "Newton's method did not converge", s->t);
    fprintf(out, "  Newton residuals (N):");
    int n = s->last.n_history, cap = (int)(sizeof s->last.history / sizeof s->last.history[0]);
    for (int i = 0; i < n && i < cap - 1; i++)
        fprintf(out, " %.2e", s->last.history[i]);
    if (n > cap)
        fprintf(out, " ... (%d more)", n - cap);
    if (n >= cap)
        fprintf(out, " %.2e", s->last.history[cap - 1]);
    fprintf(out, "\n  largest residuals (of the last iterate):\n");
    srd_sim_report_worst(s, out, 3);
    /* load_steps divide a static solve, dt a time step: advise the one that applies. */
    fprintf(out, "hint: try %s, a looser `tolerance`, or check for a part that is not held (a free rigid motion "
                    "makes the system singular)\n", s->dynamic ? "a smaller `dt`" : "more `load_steps`");
}

/* An explicit step has no Newton iterations: what helps is where the state blew up and the
 * stable time step, which explicit methods must stay below. */
static void report_explicit_failure(FILE *out, const char *program, const srd_sim *s)
{
    fprintf(out, "%s: error: the solution became NaN or infinite in step %ld (t = %.6g s to %.6g s, "
                    "dt = %.3g s)\n", program, s->steps, s->t - s->dt, s->t, s->dt);
    fprintf(out, "  DOFs that went non-finite, else the fastest:\n");
    srd_sim_report_state(s, out, 3);
    fprintf(out, "hint: explicit methods (euler, verlet, rk4) are stable only while dt is below the stable time "
                    "step, about the period of the model's fastest vibration divided by pi; try a much smaller "
                    "`dt`, or `method = implicit_euler;`\n");
}

void srd_report_step_failure(FILE *out, const char *program, const srd_sim *s, int method, int code)
{
    if (method >= SRD_SYMPLECTIC_EULER)
        report_explicit_failure(out, program, s);
    else
        report_failure(out, program, s, code);
}

/* Contact between parts finds its pairs at the start of each implicit step and checks them
 * after the solve, a loop the explicit methods do not have. */
static bool refuse_contact(FILE *out, const char *program, const srd_model *m, const char *method)
{
    if (!m->self_contact.present)
        return false;
    fprintf(out, "%s: error: contact between the model's parts (`contact`) runs under implicit methods, not `%s`\n"
                 "  hint: use method = implicit_euler, implicit_midpoint or newmark\n", program, method);
    return true;
}

/* Friction and viscous drag are written for the implicit step, whose velocity is (q - q0) / dt:
 * under explicit methods both paths give them q0 = q - dt v, so that they see the current
 * velocity (sim.c's add_velocity_forces). A set that kept step-start state as well would read
 * the wrong start, so such sets are refused. */
bool srd_report_unsupported_method(FILE *out, const char *program, const srd_model *m, const srd_kernel_info *infos)
{
    const char *method = m->simulate.present ? m->simulate.method : NULL;
    if (!method || srd_method_from_name(method) < SRD_SYMPLECTIC_EULER)
        return false;
    if (refuse_contact(out, program, m, method))
        return true;
    if (!infos)
        return false;
    for (int k = 0; k < m->n_sets; k++)
        if (infos[k].needs_time_step && infos[k].n_state) {
            fprintf(out, "%s: error: `%s` elements (friction, viscous drag) keep step-start state and need an implicit method, not `%s`\n"
                         "  hint: use method = implicit_euler, implicit_midpoint or newmark\n", program,
                    m->sets[k].kind, method);
            return true;
        }
    return false;
}
