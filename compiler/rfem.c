/* rfem.c — `rfem` chains (the rigid finite element method): a straight rod of given section and
 * material cut into rigid elements joined at the centres of its n segments by spring-damping
 * elements of stiffness E I / l (bending) and G J / l (torsion), l = L / n. The end elements
 * are half segments, so the springs sit where a segment's bending concentrates and the tip
 * deflection and frequencies converge to Euler-Bernoulli's as 1 / n^2. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "elab.h"
#include "elab_internal.h"
#include "vec3.h"

#define PI 3.14159265358979323846

typedef struct RfemSpec {
    const char *name;
    SrcLoc      loc;
    double      from[3], axis[3], length, radius;
    Dual        E, G, rho, damping;
    int         n;
} RfemSpec;

static bool rfem_line(const PropValues *pv, RfemSpec *r, SrcLoc loc)
{
    const Value *path = prop_get(pv, "path");
    Value a[6];
    SrcLoc locs[6];
    if (!path || strcmp(path->geom->fn, "line") || !elab_geom_args(path->geom, a, locs)) {
        Diag *d = diag_error(prop_loc(pv, "path", loc), "an rfem chain is straight: its path must be a line");
        diag_hint(d, "for example `path = line((0, 0, 0) m, (0.5, 0, 0) m);`");
        return false;
    }
    memcpy(r->from, a[0].v, sizeof r->from);
    srd_sub3(a[1].v, a[0].v, r->axis);
    r->length = sqrt(srd_dot3(r->axis, r->axis));
    if (!(r->length > 0)) {
        diag_error(prop_loc(pv, "path", loc), "the path of rfem `%s` has zero length", r->name);
        return false;
    }
    for (int c = 0; c < 3; c++)
        r->axis[c] /= r->length;
    return true;
}

static bool rfem_spec(Elab *e, Stmt *s, const char *name, RfemSpec *r)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "rfem `%s`", name);
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return false;
    memset(r, 0, sizeof *r);
    r->name = name;
    r->loc = s->name_loc;
    const Value *mat = prop_get(&pv, "material");
    if (!mat || !rfem_line(&pv, r, s->loc))
        return false;
    const ElabMaterial *m = &e->mats.a[mat->index];
    r->E = m->E;
    r->rho = m->rho;
    r->G = dual_div(m->E, dual_scale(2, dual_add(dual_const(1), m->has_nu ? m->nu : dual_const(0.5))));
    r->radius = prop_num(&pv, "radius", 0);
    r->n = (int)prop_num(&pv, "elements", 0);
    r->damping = prop_dual(&pv, "damping", dual_const(0));
    if (!(r->radius > 0) || r->n < 1) {
        diag_error(s->loc, "rfem `%s` needs a positive radius and at least one element", name);
        return false;
    }
    return true;
}

/* Element k: a cylinder along the rod between the springs around it (half segments at the ends). */
static bool add_element(Elab *e, const RfemSpec *r, int k)
{
    double l = r->length / r->n, lo = k == 0 ? 0 : (k - 0.5) * l, hi = k == r->n ? r->length : (k + 0.5) * l;
    double c[3];
    for (int i = 0; i < 3; i++)
        c[i] = r->from[i] + 0.5 * (lo + hi) * r->axis[i];
    char *name = arena_printf(e->arena, "%s[%d]", r->name, k);
    return elab_add_rigid(e, name, r->loc, c, SRD_SHAPE_CYLINDER, r->radius, hi - lo, r->rho, r->axis);
}

/* Spring-damping element k (between elements k - 1 and k) at the centre of segment k. */
static void add_spring(Elab *e, const RfemSpec *r, int k, int first_rigid)
{
    double l = r->length / r->n, I = PI * pow(r->radius, 4) / 4, J = 2 * I;
    PendingJoint j;
    memset(&j, 0, sizeof j);
    j.name = arena_printf(e->arena, "%s.sde[%d]", r->name, k);
    j.loc = r->loc;
    j.type = JOINT_SPHERICAL;
    j.end_kind[0] = j.end_kind[1] = END_BODY;
    j.end[0] = first_rigid + k - 1;
    j.end[1] = first_rigid + k;
    j.rod_obj[0] = j.rod_obj[1] = -1;
    for (int c = 0; c < 3; c++) {
        j.at[c] = r->from[c] + (k - 0.5) * l * r->axis[c];
        j.axis[c] = r->axis[c];
    }
    double x[3] = { 1, 0, 0 }, along;
    if (fabs(r->axis[0]) > 0.9)
        x[0] = 0, x[1] = 1;
    along = srd_dot3(x, r->axis);
    for (int c = 0; c < 3; c++)
        j.axis2[c] = x[c] - along * r->axis[c];
    double n2 = sqrt(srd_dot3(j.axis2, j.axis2));
    for (int c = 0; c < 3; c++)
        j.axis2[c] /= n2;
    j.k_rot[0] = dual_scale(J / l, r->G);
    j.k_rot[1] = j.k_rot[2] = dual_scale(I / l, r->E);
    for (int c = 0; c < 3; c++)
        j.c_rot[c] = dual_mul(r->damping, j.k_rot[c]);
    j.target_expr = -1;
    DPUSH(e->joints, j);
}

void elab_rfem(Elab *e, Stmt *s, const char *name)
{
    RfemSpec r;
    if (!rfem_spec(e, s, name, &r) || !elab_room_for(e, r.n + 1, s->loc))
        return;
    int first = e->rigids.n;
    for (int k = 0; k <= r.n; k++)
        if (!add_element(e, &r, k))
            return;
    for (int k = 1; k <= r.n; k++)
        add_spring(e, &r, k, first);
}
