/* analysis.c — environment blocks (medium, viscous, damping, rft, drag, ground, obstacles,
 * self contact) and analysis blocks (simulate, static, modes) with their outputs and probes. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab_internal.h"

/* The friction law (std.contact, MAT-DiSMech eq. 23) is smooth: at rest it acts as a viscous
 * drag of coefficient mu Fn 7.5 / slip_velocity, so a body held on a slope of angle a creeps at
 * (2 slip_velocity / 15) atanh(tan(a) / mu). 10 um/s keeps that below 1 um/s for tan(a) up to
 * 0.6 mu (0.49 um/s on 10 degrees with mu = 0.5): a robot standing still stays still. (At
 * 1 mm/s, the old default, it crept 0.1 mm/s.) */
#define SRD_DEFAULT_SLIP_VELOCITY 10e-6

/* Environment blocks may appear once each; the flag says whether this one came before. */
static bool first_time(Elab *e, Stmt *s, int *seen)
{
    (void)e;
    if (*seen) {
        Diag *d = diag_error(s->loc, "`%s` is given twice", block_kind_name(s->block));
        diag_hint(d, "merge the two blocks into one");
        return false;
    }
    *seen = 1;
    return true;
}

/* The ground's unit normal with its derivative: given, made a unit vector, or from the
 * incline (the plane rises along +x by the angle). False when the given normal is zero. */
static bool ground_normal(const PropValues *pv, Dual *n)
{
    const Value *nv = prop_get(pv, "normal");
    n[0] = n[1] = dual_const(0), n[2] = dual_const(1);
    if (nv) {
        Dual len2 = dual_const(0);
        for (int c = 0; c < 3; c++)
            len2 = dual_add(len2, dual_mul(value_dual(nv, c), value_dual(nv, c)));
        if (!(len2.v > 0))
            return false;
        Dual len = dual_sqrt(len2);
        for (int c = 0; c < 3; c++)
            n[c] = dual_div(value_dual(nv, c), len);
    } else if (prop_given(pv, "incline")) {
        Dual th = prop_dual(pv, "incline", dual_const(0));
        n[0] = (Dual){ -sin(th.v), -cos(th.v) * th.d, th.dep };
        n[2] = (Dual){ cos(th.v), -sin(th.v) * th.d, th.dep };
    }
    return true;
}

static void ground_block(Elab *e, Stmt *s, const PropValues *pv)
{
    srd_model *m = e->model;
    bool has_normal = prop_given(pv, "normal"), has_incline = prop_given(pv, "incline");
    if (has_normal && has_incline) {
        diag_error(s->loc, "give the ground either a `normal` or an `incline`, not both");
        return;
    }
    if ((has_normal || has_incline) && prop_given(pv, "height")) {
        diag_error(s->loc, "an uneven ground (`height`) cannot also have a `normal` or an `incline`");
        return;
    }
    ElabEnv *env = &e->env;
    if (!ground_normal(pv, env->ground_normal)) {
        diag_error(s->loc, "the ground normal must not be zero");
        return;
    }
    for (int c = 0; c < 3; c++)
        m->ground_normal[c] = env->ground_normal[c].v;
    m->ground_point[2] = prop_kept(pv, "level", dual_const(0), &env->ground_level);
    m->ground_stiffness = prop_kept(pv, "stiffness", dual_const(0), &e->env.ground_stiffness);
    m->ground_delta = prop_kept(pv, "delta", dual_const(0), &e->env.ground_delta);
    m->ground_friction = prop_kept(pv, "friction", dual_const(0), &e->env.ground_friction);
    m->ground_slip_velocity =
        prop_kept(pv, "slip_velocity", dual_const(SRD_DEFAULT_SLIP_VELOCITY), &e->env.ground_slip_velocity);
    for (int k = 0; k < pv->n_specs; k++)
        if (!strcmp(pv->specs[k]->name, "height") && pv->set[k] && !pv->bad[k]) {
            m->ground_height_expr = elab_remember_expr(e, pv->where[k]->value);
        }
    if (!(m->ground_delta > 0) || !(m->ground_stiffness > 0)) {
        diag_error(s->loc, "the ground's `stiffness` and `delta` must be positive");
        return;
    }
    if (m->ground_friction < 0) {
        diag_error(s->loc, "a friction coefficient cannot be negative");
        return;
    }
    m->has_ground = 1;
}

/* The properties each obstacle shape takes besides stiffness, delta, friction, slip_velocity. */
static const char *const obstacle_shapes[] = { "sphere", "box", "cylinder", "plane" };
static const char *const obstacle_props[] = { " center radius ", " center size axis angle ",
                                              " center radius axis length spin ", " point normal " };
static const char *const obstacle_takes[] = { "center and radius", "center, size, axis and angle",
                                               "center, radius, axis, length and spin", "point and normal" };

/* A pose property (centre, axis, angle, spin; a plane's point and normal): its value at t = 0
 * into v, and its run-time expression into *expr when it changes with time. A value at t = 0
 * that elaboration cannot know (NaN: it reads a `let` of t) keeps the default in v; the
 * schedules write the true one before the run's first step. */
static void obstacle_pose(const PropValues *pv, const char *name, double *v, int n, int *expr, Dual *keep)
{
    for (int k = 0; k < pv->n_specs; k++)
        if (!strcmp(pv->specs[k]->name, name) && pv->set[k] && !pv->bad[k]) {
            /* A pose changing with time is rewritten by its schedule (whose derivative is the
             * schedules'); a constant one carries none. */
            for (int c = 0; c < n; c++)
                if (!isnan(pv->val[k].v[c]) || pv->val[k].known) {
                    if (keep && pv->val[k].known)
                        keep[c] = value_dual(&pv->val[k], c);
                    v[c] = pv->val[k].known && !keep ? elab_value_only(pv->e, &pv->val[k], c) : pv->val[k].v[c];
                }
            if (!pv->val[k].known)
                *expr = pv->run_expr[k];
        }
}

/* Every property given belongs to the shape, and the ones it needs are there. */
static bool obstacle_props_fit(const Stmt *s, const PropValues *pv, int k)
{
    static const char *const common = " stiffness delta friction slip_velocity ";
    for (int p = 0; p < pv->n_specs; p++) {
        char key[64];
        snprintf(key, sizeof key, " %s ", pv->specs[p]->name);
        if (pv->set[p] && !strstr(obstacle_props[k], key) && !strstr(common, key)) {
            Diag *d = diag_error(pv->where[p]->name_loc, "a %s obstacle has no `%s`", obstacle_shapes[k],
                                 pv->specs[p]->name);
            diag_hint(d, "a %s takes %s, besides stiffness, delta, friction and slip_velocity", obstacle_shapes[k],
                      obstacle_takes[k]);
            return false;
        }
    }
    static const char *const needs[][2] = { { "center", "radius" }, { "center", "size" }, { "center", "radius" },
                                            { "point", "normal" } };
    for (int n = 0; n < 2; n++)
        if (!prop_given(pv, needs[k][n])) {
            Diag *d = diag_error(s->loc, "a %s obstacle needs `%s`", obstacle_shapes[k], needs[k][n]);
            diag_hint(d, "add `%s = ...;`", needs[k][n]);
            return false;
        }
    return true;
}

/* A direction at t = 0 made unit length; false (after an error) when it is zero. (The kernels
 * normalise a direction that changes with time at every step: it must not pass through zero.) */
static bool unit_direction(double *u, SrcLoc loc, const char *what, bool timed)
{
    double len = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    if (!(len > 0)) {
        diag_error(loc, "%s must not be the zero vector%s", what, timed ? ", but it is at t = 0" : "");
        return false;
    }
    for (int c = 0; c < 3; c++)
        u[c] /= len;
    return true;
}

/* The unit vector along u (its derivative with it); u's length is positive. */
static void unit_dual(Dual *u)
{
    Dual len = dual_sqrt(dual_add(dual_add(dual_mul(u[0], u[0]), dual_mul(u[1], u[1])), dual_mul(u[2], u[2])));
    for (int c = 0; c < 3; c++)
        u[c] = dual_div(u[c], len);
}

/* The pose (centre or a plane's point, axis or a plane's normal, angle, spin) with the
 * expressions of those that change with time, and the derivatives of those that do not in d
 * (the axis made a unit vector; one that changes with time takes the schedules'). */
static bool obstacle_read_pose(const Stmt *s, const PropValues *pv, int k, srd_obstacle *o, ElabObstacle *d)
{
    bool plane = k == 3;
    for (int j = 0; j < SRD_OBSTACLE_N_EXPR; j++)
        o->expr[j] = -1;
    obstacle_pose(pv, plane ? "point" : "center", o->center, 3, &o->expr[SRD_OBSTACLE_CENTER], d->center);
    o->axis[2] = 1;
    d->axis[0] = d->axis[1] = dual_const(0), d->axis[2] = dual_const(1);
    obstacle_pose(pv, plane ? "normal" : "axis", o->axis, 3, &o->expr[SRD_OBSTACLE_AXIS], d->axis);
    obstacle_pose(pv, "angle", &o->angle, 1, &o->expr[SRD_OBSTACLE_ANGLE], &d->angle);
    obstacle_pose(pv, "spin", &o->spin, 1, &o->expr[SRD_OBSTACLE_SPIN], &d->spin);
    if (k == 1 && o->expr[SRD_OBSTACLE_AXIS] >= 0) {
        Diag *d = diag_error(prop_loc(pv, "axis", s->loc), "a box's `axis` cannot change with time");
        diag_hint(d, "a box turns about a constant axis: give the turn as `angle`, an expression of t");
        return false;
    }
    const char *what = plane ? "a plane's normal" : k == 1 ? "a box's axis" : "a cylinder's axis";
    if (!unit_direction(o->axis, prop_loc(pv, plane ? "normal" : "axis", s->loc), what,
                        o->expr[SRD_OBSTACLE_AXIS] >= 0))
        return false;
    unit_dual(d->axis);
    bool timed = false;
    for (int j = 0; j < SRD_OBSTACLE_N_EXPR; j++)
        timed |= o->expr[j] >= 0;
    o->moving = !plane && (timed || o->angle != 0 || o->spin != 0);
    return true;
}

static void obstacle_block(Elab *e, Stmt *s, const PropValues *pv)
{
    int k = 0;
    while (k < 4 && strcmp(obstacle_shapes[k], s->subkind))
        k++;
    if (k == 4) {
        Diag *d = diag_error(s->subkind_loc, "unknown obstacle shape `%s`", s->subkind);
        const char *close = diag_closest(s->subkind, obstacle_shapes, 4);
        diag_hint(d, close ? "did you mean `%s`?" : "obstacles are sphere, box, cylinder and plane", close);
        return;
    }
    if (!obstacle_props_fit(s, pv, k))
        return;
    srd_obstacle o;
    memset(&o, 0, sizeof o);
    ElabObstacle d;
    memset(&d, 0, sizeof d);
    if (!obstacle_read_pose(s, pv, k, &o, &d))
        return;
    o.radius = prop_kept(pv, "radius", dual_const(0), &d.radius);
    const Value *size = prop_get(pv, "size");
    for (int c = 0; size && c < 3; c++) {
        d.size[c] = value_dual(size, c);
        o.size[c] = d.size[c].v;
    }
    o.length = prop_kept(pv, "length", dual_const(0), &d.length);
    if (k == 1 && !(o.size[0] > 0 && o.size[1] > 0 && o.size[2] > 0)) {
        diag_error(prop_loc(pv, "size", s->loc), "a box's edge lengths must be positive");
        return;
    }
    o.stiffness = prop_kept(pv, "stiffness", dual_const(0), &d.stiffness);
    o.delta = prop_kept(pv, "delta", dual_const(0), &d.delta);
    o.friction = prop_kept(pv, "friction", dual_const(0), &d.friction);
    o.slip_velocity = prop_kept(pv, "slip_velocity", dual_const(SRD_DEFAULT_SLIP_VELOCITY), &d.slip_velocity);
    DPUSH(e->obstacles, d);
    o.shape = strdup(obstacle_shapes[k]);
    o.name = s->name ? strdup(s->name) : NULL;
    srd_model *m = e->model;
    m->obstacles = elab_grow(m->obstacles, sizeof *m->obstacles * (size_t)(m->n_obstacles + 1));
    m->obstacles[m->n_obstacles++] = o;
}

/* The objects a `contact` block names: every rod and shell for `contact self` (taken when the
 * model is complete: contact_add_pairs), else the rods and shells listed. */
static bool is_self(const Stmt *s)
{
    return s->n_items == 1 && s->items[0]->kind == EX_NAME && !strcmp(s->items[0]->str, "self");
}

static void contact_object(Elab *e, Expr *x, srd_self_contact *c)
{
    Value v = eval_expr(e, x);
    if (v.kind == V_ERR)
        return;
    if (v.kind == V_WORD) {
        Diag *d = diag_error(x->loc, "unknown name `%s`", v.str);
        diag_hint(d, "`contact` names rods, shells and bodies declared above it, or takes `self` for all of them");
        return;
    }
    if (v.kind != V_OBJ) {
        Diag *d = diag_error(x->loc, "`contact` takes `self` or the names of rods, shells and bodies, and this is not an object");
        diag_hint(d, "name objects declared above the block, or write `contact self` for every rod and shell");
        return;
    }
    int kind = e->objs.a[v.index].kind;
    if (kind != SRD_OBJ_ROD && kind != SRD_OBJ_SHELL && kind != SRD_OBJ_BODY) {
        Diag *d = diag_error(x->loc, "`%s` is not a rod, a shell or a body; contact between parts is for those",
                             e->objs.a[v.index].name);
        diag_hint(d, "solids and lattices touch the ground and obstacles");
        return;
    }
    for (int k = 0; k < c->n_objects; k++)
        if (c->objects[k] == v.index) {
            diag_error(x->loc, "`%s` is named twice", e->objs.a[v.index].name);
            return;
        }
    c->objects = elab_grow(c->objects, sizeof *c->objects * (size_t)(c->n_objects + 1));
    c->objects[c->n_objects++] = v.index;
}

static void contact_block(Elab *e, Stmt *s, const PropValues *pv)
{
    srd_self_contact *c = &e->model->self_contact;
    if (c->present) {
        Diag *d = diag_error(s->loc, "`contact` is given twice");
        diag_hint(d, "one block lists every object in contact: `contact a, b, c { ... }`");
        return;
    }
    c->present = 1;
    e->contact = s;
    for (int k = 0; !is_self(s) && k < s->n_items; k++)
        contact_object(e, s->items[k], c);
    /* The pairs' data are made at run time, as pairs are found: a param here moves no column. */
    ElabEnv *env = &e->env;
    c->delta = prop_kept(pv, "delta", dual_const(0), &env->contact[0]);
    c->stiffness = prop_kept(pv, "stiffness", dual_const(0), &env->contact[1]);
    c->friction = prop_kept(pv, "friction", dual_const(0), &env->contact[2]);
    c->slip_velocity = prop_kept(pv, "slip_velocity", dual_const(SRD_DEFAULT_SLIP_VELOCITY), &env->contact[3]);
    c->radius = prop_kept(pv, "radius", dual_const(0), &env->contact[4]);
    if (prop_given(pv, "radius") && !(c->radius > 0)) {
        Diag *d = diag_error(prop_loc(pv, "radius", s->loc), "a contact radius must be positive");
        diag_hint(d, "leave `radius` out to take each rod's own radius");
    }
}

/* ---- the camera of pictures: `view { ... }` ---- */

static bool copy_vector(const PropValues *pv, const char *name, double *out)
{
    const Value *v = prop_get(pv, name);
    if (v)
        memcpy(out, v->v, 3 * sizeof(double));
    return v != NULL;
}

/* The direction the camera looks along is known when the eye and the target are both given;
 * then it must not be the up direction (no upright picture) nor zero. */
static void check_view_direction(Stmt *s, const PropValues *pv, const srd_model *m)
{
    double d[3], dd = 0, uu = 0, du = 0;
    for (int c = 0; c < 3; c++) {
        d[c] = m->view_target[c] - m->view_eye[c];
        dd += d[c] * d[c];
        uu += m->view_up[c] * m->view_up[c];
        du += d[c] * m->view_up[c];
    }
    if (!(uu > 0)) {
        Diag *dg = diag_error(prop_loc(pv, "up", s->loc), "the view's `up` direction is zero");
        diag_hint(dg, "up is the direction that points up in the picture, for example (0, 0, 1)");
    } else if ((m->view_given & (SRD_VIEW_EYE | SRD_VIEW_TARGET)) == (SRD_VIEW_EYE | SRD_VIEW_TARGET) && !(dd > 0)) {
        Diag *dg = diag_error(prop_loc(pv, "target", s->loc), "the view's `eye` and `target` are the same point");
        diag_hint(dg, "the camera at `eye` looks at `target`: move one of them");
    } else if ((m->view_given & (SRD_VIEW_EYE | SRD_VIEW_TARGET)) == (SRD_VIEW_EYE | SRD_VIEW_TARGET) &&
               du * du >= (1 - 1e-9) * dd * uu) {
        Diag *dg = diag_error(prop_loc(pv, "up", s->loc), "the camera looks along its `up` direction");
        diag_hint(dg, "from `eye` to `target` is the way it looks; give `up` another direction, for example (0, 1, 0) "
                      "for a view from above");
    }
}

static void view_block(Elab *e, Stmt *s, const PropValues *pv)
{
    static const char *from[] = { "front", "side", "top", "iso" };
    srd_model *m = e->model;
    m->view_up[2] = 1;
    m->view_fov = 30 * 3.14159265358979323846 / 180;
    m->view_given |= copy_vector(pv, "eye", m->view_eye) ? SRD_VIEW_EYE : 0;
    m->view_given |= copy_vector(pv, "target", m->view_target) ? SRD_VIEW_TARGET : 0;
    m->view_given |= copy_vector(pv, "up", m->view_up) ? SRD_VIEW_UP : 0;
    if (prop_given(pv, "fov")) {
        m->view_given |= SRD_VIEW_FOV;
        m->view_fov = prop_num(pv, "fov", 0);
        if (!(m->view_fov >= 0 && m->view_fov < 170 * 3.14159265358979323846 / 180)) {
            Diag *d = diag_error(prop_loc(pv, "fov", s->loc), "a field of view from 0 to under 170 degrees, please");
            diag_hint(d, "0 draws an orthographic view; 30 deg is the default");
        }
    }
    const Value *w = prop_get(pv, "from");
    for (int k = 0; w && k < 4; k++)
        if (!strcmp(w->str, from[k])) {
            m->view_from = k + 1;
            m->view_given |= SRD_VIEW_FROM;
        }
    if (w && (m->view_given & (SRD_VIEW_EYE | SRD_VIEW_TARGET)) == (SRD_VIEW_EYE | SRD_VIEW_TARGET)) {
        Diag *d = diag_error(prop_loc(pv, "from", s->loc), "`from` places the camera, but `eye` and `target` already do");
        diag_hint(d, "keep either `from` or the pair `eye`, `target`");
    }
    check_view_direction(s, pv, m);
}

void elab_environment(Elab *e, Stmt *s)
{
    PropValues pv;
    char owner[96];
    snprintf(owner, sizeof owner, "the %s block", block_kind_name(s->block));
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return;
    srd_model *m = e->model;
    switch (s->block) {
    case BK_MEDIUM:
        if (first_time(e, s, &e->seen[BK_MEDIUM]))
            m->medium_density = prop_kept(&pv, "density", dual_const(0), &e->env.medium_density);
        break;
    case BK_VISCOUS:
        if (first_time(e, s, &e->seen[BK_VISCOUS]))
            m->viscous_eta = prop_kept(&pv, "eta", dual_const(0), &e->env.viscous_eta);
        break;
    case BK_DAMPING:
        if (!first_time(e, s, &e->seen[BK_DAMPING]))
            break;
        if (!prop_given(&pv, "alpha") && !prop_given(&pv, "beta")) {
            Diag *d = diag_error(s->loc, "a damping block needs `alpha`, `beta` or both");
            diag_hint(d, "Rayleigh damping is -(alpha M + beta K) v");
            break;
        }
        m->damping_alpha = prop_kept(&pv, "alpha", dual_const(0), &e->env.damping_alpha);
        m->damping_beta = prop_kept(&pv, "beta", dual_const(0), &e->env.damping_beta);
        break;
    case BK_RFT:
        if (first_time(e, s, &e->seen[BK_RFT])) {
            m->has_rft = 1;
            m->rft_ct = prop_kept(&pv, "ct", dual_const(0), &e->env.rft_ct);
            m->rft_cn = prop_kept(&pv, "cn", dual_const(0), &e->env.rft_cn);
        }
        break;
    case BK_DRAG:
        if (first_time(e, s, &e->seen[BK_DRAG])) {
            m->has_drag = 1;
            m->drag_cd = prop_kept(&pv, "cd", dual_const(0), &e->env.drag_cd);
            m->drag_density = prop_kept(&pv, "density", dual_const(0), &e->env.drag_density);
        }
        break;
    case BK_GROUND:
        if (first_time(e, s, &e->seen[BK_GROUND]))
            ground_block(e, s, &pv);
        break;
    case BK_VIEW:
        if (first_time(e, s, &e->seen[BK_VIEW]))
            view_block(e, s, &pv);
        break;
    case BK_OBSTACLE: obstacle_block(e, s, &pv); break;
    case BK_CONTACT: contact_block(e, s, &pv); break;
    default: break;
    }
}

/* ---- analyses ---- */

static bool time_value(Elab *e, Expr *x, const char *what, double *out)
{
    Value v = eval_expr(e, x);
    if (v.kind == V_ERR)
        return false;
    if (v.kind != V_NUM || v.n != 1 || !v.known || !dims_eq(v.dims, dims_of(0, 0, 1, 0)) || !(v.v[0] > 0)) {
        char have[128];
        value_describe(&v, have, sizeof have);
        Diag *d = diag_error(x->loc, "%s must be a positive time, but this is %s", what, have);
        diag_hint(d, "for example `every 10 ms`");
        return false;
    }
    *out = v.v[0];
    return true;
}

/* Frames are written as --out/NAME...: a separator, `..`, an absolute path or a control
 * character would put them somewhere else (or make names no one can type). */
static bool plain_file_name(const char *name)
{
    if (!strcmp(name, ".") || !strcmp(name, ".."))
        return false;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c == '/' || *c == '\\' || *c < 32 || *c == 127)
            return false;
    return true;
}

static void read_output(Elab *e, Stmt *s, srd_analysis *a)
{
    if (strcmp(s->name, "vtk") && strcmp(s->name, "csv")) {
        Diag *d = diag_error(s->name_loc, "unknown output format `%s`", s->name);
        diag_hint(d, "formats are `vtk` (ParaView frames) and `csv` (node positions)");
        return;
    }
    if (a->output_format) {
        diag_error(s->loc, "only one `output` per analysis");
        return;
    }
    if (!s->str[0] || strchr(s->str, '\n')) {
        diag_error(s->loc, "an output needs a file name");
        return;
    }
    if (!plain_file_name(s->str)) {
        Diag *d = diag_error(s->str_loc, "an output name is a file name in the output directory, not a path");
        diag_hint(d, "write a name such as \"arm\"; `srdc run --out DIR` chooses the directory");
        return;
    }
    if (s->subkind && (strcmp(s->subkind, "binary") || strcmp(s->name, "vtk"))) {
        Diag *d = diag_error(s->subkind_loc, "unknown output option `%s`", s->subkind);
        diag_hint(d, "the one option is `binary`, for vtk: `output vtk \"frames\" binary every 10 ms;`");
        return;
    }
    double every = 0;
    if (s->every && !time_value(e, s->every, "an output period", &every))
        return;
    a->output_binary = s->subkind != NULL;
    a->output_format = strdup(s->name);
    a->output_name = strdup(s->str);
    a->output_every = every;
}

/* `reaction(sel)` and `contact_force(ground | obstacle)`: probes of forces. Returns false when
 * the target is neither (an ordinary probe). */
static bool force_probe(Elab *e, const Stmt *s, srd_probe *p)
{
    const Expr *x = s->target;
    bool reaction = x->kind == EX_CALL && !strcmp(x->str, "reaction");
    bool contact = x->kind == EX_CALL && !strcmp(x->str, "contact_force");
    if (!reaction && !contact)
        return false;
    p->kind = reaction ? SRD_PROBE_REACTION : SRD_PROBE_CONTACT;
    if (x->n_args != 1 || x->arg_names[0]) {
        Diag *d = diag_error(x->loc, "`%s` takes one argument", x->str);
        diag_hint(d, reaction ? "for example `probe R = reaction(finger.start);`" : "for example `probe F = contact_force(ground);`");
        p->kind = -1;
        return true;
    }
    if (contact) {
        if (x->args[0]->kind != EX_NAME) {
            Diag *d = diag_error(x->args[0]->loc, "`contact_force` takes `ground` or the name of an obstacle");
            diag_hint(d, "name the obstacle where it is declared: `obstacle sphere ball { ... }`");
            p->kind = -1;
        } else {
            p->target_name = strdup(x->args[0]->str);
        }
        return true;
    }
    Value v = eval_expr(e, x->args[0]);
    if (v.kind == V_ERR) {
        p->kind = -1;
        return true;
    }
    if (v.kind != V_SEL || v.sel->component != COMP_ALL || (v.sel->kind != SEL_NODE && v.sel->kind != SEL_EDGE)) {
        char have[128];
        value_describe(&v, have, sizeof have);
        Diag *d = diag_error(x->args[0]->loc, "`reaction` needs nodes held by a constraint, but this is %s", have);
        diag_hint(d, "for example `reaction(finger.start)` or `reaction(plate.nodes where x <= 0 m)`");
        p->kind = -1;
        return true;
    }
    Sel *nodes = select_nodes(e, v.sel);
    p->n_nodes = nodes->n;
    p->nodes = malloc(sizeof(int) * (size_t)(nodes->n + 1));
    memcpy(p->nodes, nodes->items, sizeof(int) * (size_t)nodes->n);
    return true;
}

/* A rigid body's index, or -1 after an error at x. */
static int probe_body(Elab *e, const Expr *x)
{
    Value v = eval_expr(e, (Expr *)x);
    if (v.kind == V_OBJ && elab_rigid_of(e, v.index) >= 0)
        return elab_rigid_of(e, v.index);
    if (v.kind != V_ERR) {
        Diag *d = diag_error(x->loc, "this probe watches a rigid body");
        diag_hint(d, "give the name of a body with a shape or an inertia");
    }
    return -1;
}

static int probe_joint(Elab *e, const Expr *x)
{
    if (x->kind == EX_NAME)
        for (int k = 0; k < e->joints.n; k++)
            if (!strcmp(e->joints.a[k].name, x->str))
                return k;
    Diag *d = diag_error(x->loc, "this probe watches a joint, named where it is declared");
    diag_hint(d, "for example `probe F = joint_force(hinge);` after `joint hinge { ... }`");
    return -1;
}

/* angular_momentum(b), angular_velocity(b), axis(b, k); joint_force(j), joint_torque(j),
 * motor_effort(j). Returns false when the target is none of them. */
static bool body_probe(Elab *e, const Stmt *s, srd_probe *p)
{
    static const char *body_fns[] = { "angular_momentum", "angular_velocity", "axis" };
    static const char *joint_fns[] = { "joint_force", "joint_torque", "motor_effort" };
    const Expr *x = s->target;
    if (x->kind != EX_CALL)
        return false;
    for (int k = 0; k < 3; k++) {
        bool body = !strcmp(x->str, body_fns[k]), joint = !strcmp(x->str, joint_fns[k]);
        if (!body && !joint)
            continue;
        int want = body && k == 2 ? 2 : 1;
        if (x->n_args != want) {
            Diag *d = diag_error(x->loc, "`%s` takes %s", x->str, want == 2 ? "a body and an axis number" : "one argument");
            diag_hint(d, body ? "for example `probe L = angular_momentum(brick);` or `probe e3 = axis(brick, 3);`"
                              : "for example `probe F = joint_force(hinge);`");
            p->kind = -1;
            return true;
        }
        p->kind = body ? SRD_PROBE_BODY : SRD_PROBE_JOINT;
        p->component = body ? SRD_BODY_MOMENTUM + k : SRD_JOINT_FORCE + k;
        p->target = body ? probe_body(e, x->args[0]) : probe_joint(e, x->args[0]);
        if (body && k == 2) {
            Value n = eval_expr(e, x->args[1]);
            if (n.kind != V_NUM || n.n != 1 || !n.known || (n.v[0] != 1 && n.v[0] != 2 && n.v[0] != 3)) {
                diag_error(x->args[1]->loc, "the axis of `axis` is 1, 2 or 3");
                p->kind = -1;
            } else {
                p->component = SRD_BODY_AXIS + (int)n.v[0] - 1;
            }
        }
        if (p->target < 0)
            p->kind = -1;
        return true;
    }
    return false;
}

static void read_probe(Elab *e, Stmt *s, srd_analysis *a)
{
    SrcLoc *locs = e->probe_locs[a == &e->model->simulate ? 0 : a == &e->model->statics ? 1 : 2];
    for (int i = 0; i < a->n_probes; i++)
        if (!strcmp(a->probes[i].name, s->name)) {
            Diag *d = diag_error(s->name_loc, "probe `%s` is declared twice", s->name);
            diag_note(d, locs[i], "the first `%s` is here", s->name);
            return;
        }
    if (a->n_probes < 256)
        locs[a->n_probes] = s->name_loc;
    srd_probe fp;
    memset(&fp, 0, sizeof fp);
    bool special = body_probe(e, s, &fp);
    int component = fp.component, target = fp.target;
    if (special || force_probe(e, s, &fp)) {
        double every = 0;
        if (fp.kind < 0 || (s->every && !time_value(e, s->every, "a probe period", &every))) {
            free(fp.nodes);
            free(fp.target_name);
            return;
        }
        fp.name = strdup(s->name);
        fp.dof = fp.node = fp.component = -1;
        if (special) {
            fp.component = component;
            fp.target = target;
        }
        fp.every = every;
        a->probes = elab_grow(a->probes, sizeof *a->probes * (size_t)(a->n_probes + 1));
        a->probes[a->n_probes++] = fp;
        return;
    }
    Value v = eval_expr(e, s->target);
    if (v.kind == V_ERR)
        return;
    if (v.kind != V_SEL || v.sel->n != 1 || (v.sel->kind != SEL_NODE && v.sel->kind != SEL_EDGE)) {
        char have[128];
        value_describe(&v, have, sizeof have);
        Diag *d = diag_error(s->target->loc, "a probe watches one node or one edge, but this is %s", have);
        diag_hint(d, "for example `probe tip = finger.end.z every 1 ms;`");
        return;
    }
    double every = 0;
    if (s->every && !time_value(e, s->every, "a probe period", &every))
        return;
    a->probes = elab_grow(a->probes, sizeof *a->probes * (size_t)(a->n_probes + 1));
    srd_probe *p = &a->probes[a->n_probes++];
    memset(p, 0, sizeof *p);
    p->name = strdup(s->name);
    p->dof = -1;
    p->node = v.sel->kind == SEL_NODE ? v.sel->items[0] : -1 - v.sel->items[0]; /* edges as -1-index until finalize */
    p->component = v.sel->component;
    p->every = every;
}

static char *word_prop(const PropValues *pv, const char *name, const char *dflt)
{
    const Value *v = prop_get(pv, name);
    return strdup(v ? v->str : dflt);
}

/* An integer property no larger than `max` (its default when absent); an error at the value
 * otherwise: a count of 1e10 would wrap when converted to an int. */
static int int_prop(const PropValues *pv, const char *name, int dflt, int max, SrcLoc where)
{
    double v = prop_num(pv, name, dflt);
    if (v <= max)
        return (int)v;
    Diag *d = diag_error(prop_loc(pv, name, where), "`%s` must be at most %d, but it is %g", name, max, v);
    diag_hint(d, "a larger value cannot be useful; the limits are listed in docs/cli.md");
    return max;
}

static void too_many_steps(SrcLoc where, double dt, double duration)
{
    Diag *d = diag_error(where, "a time step of %g s over %g s makes %.3g steps, more than the limit of %d", dt,
                         duration, duration / dt, SRD_MAX_TIME_STEPS);
    diag_hint(d, "use a larger `dt` or a shorter `duration`");
}


/* Where a block sets property `name` (the setting, starting at its name), or fallback. */
static SrcLoc setting_loc(const PropValues *pv, const char *name, SrcLoc fallback)
{
    for (int k = 0; k < pv->n_specs; k++)
        if (!strcmp(pv->specs[k]->name, name) && pv->set[k])
            return pv->where[k]->loc;
    return fallback;
}
/* `start = equilibrium` begins the simulation at the static block's result, so that a body
 * hanging under its weight does not first drop; as for modes, the static block comes first. */
static void simulate_start(const srd_model *m, srd_analysis *a, const PropValues *pv, SrcLoc where)
{
    const Value *v = prop_get(pv, "start");
    if (!v || strcmp(v->str, "equilibrium"))
        return;
    a->start = strdup("equilibrium");
    if (!m->statics.present) {
        Diag *d = diag_error(prop_loc(pv, "start", where), "simulate `start = equilibrium` needs a `static` block");
        diag_hint(d, "add `static { }` before the simulate block, or use `start = reference`");
    }
}

void elab_analysis(Elab *e, Stmt *s)
{
    srd_model *m = e->model;
    srd_analysis *a = s->block == BK_SIMULATE ? &m->simulate : s->block == BK_STATIC ? &m->statics : &m->modes;
    if (a->present) {
        diag_error(s->loc, "there is already a `%s` block", block_kind_name(s->block));
        return;
    }
    if (e->loop_depth) {
        diag_error(s->loc, "a `%s` block belongs at the top level", block_kind_name(s->block));
        return;
    }
    PropValues pv;
    char owner[64];
    snprintf(owner, sizeof owner, "the %s block", block_kind_name(s->block));
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return;
    a->present = 1;
    if (s->block == BK_SIMULATE) {
        a->method = word_prop(&pv, "method", "implicit_euler");
        a->dt = prop_num(&pv, "dt", 0);
        SrcLoc dt_loc = setting_loc(&pv, "dt", s->loc);
        a->dt_line = dt_loc.line;
        a->dt_col = dt_loc.col;
        a->duration = prop_num(&pv, "duration", 0);
        a->tolerance = prop_num(&pv, "tolerance", 1e-6);
        a->max_iterations = int_prop(&pv, "max_iterations", 25, SRD_MAX_NEWTON_ITERATIONS, s->loc);
        simulate_start(m, a, &pv, s->loc);
        if (!(a->dt > 0))
            diag_error(prop_loc(&pv, "dt", s->loc), "`dt` must be positive");
        else if (!(a->duration > 0))
            diag_error(prop_loc(&pv, "duration", s->loc), "`duration` must be positive");
        else if (a->dt > a->duration)
            diag_error(prop_loc(&pv, "dt", s->loc), "the time step (%g s) is longer than the duration (%g s)", a->dt,
                       a->duration);
        else if (a->duration / a->dt > SRD_MAX_TIME_STEPS)
            too_many_steps(prop_loc(&pv, "dt", s->loc), a->dt, a->duration);
    } else if (s->block == BK_STATIC) {
        a->method = strdup("static");
        a->tolerance = prop_num(&pv, "tolerance", 1e-8);
        a->max_iterations = int_prop(&pv, "max_iterations", 50, SRD_MAX_NEWTON_ITERATIONS, s->loc);
        a->load_steps = int_prop(&pv, "load_steps", 1, SRD_MAX_LOAD_STEPS, s->loc);
    } else {
        a->method = word_prop(&pv, "at", "reference");
        if (!strcmp(a->method, "equilibrium") && !m->statics.present) {
            Diag *d = diag_error(prop_loc(&pv, "at", s->loc), "modes `at = equilibrium` needs a `static` block");
            diag_hint(d, "add `static { }` before the modes block, or use `at = reference`");
        }
        a->mode_count = int_prop(&pv, "count", 1, INT_MAX, s->loc); /* and at most the free DOFs: srd_run */
    }
    if (s->block != BK_MODES) {
        a->solver = word_prop(&pv, "solver", "auto");
        const Value *ls = prop_get(&pv, "line_search");
        a->line_search = !ls || !strcmp(ls->str, "on");
    }
    if (s->block != BK_MODES && (a->tolerance <= 0 || a->tolerance >= 1))
        diag_error(prop_loc(&pv, "tolerance", s->loc), "`tolerance` must be between 0 and 1 (it is relative)");
    for (int i = 0; i < pv.n_extra; i++) {
        if (pv.extra[i]->kind == ST_OUTPUT)
            read_output(e, pv.extra[i], a);
        else
            read_probe(e, pv.extra[i], a);
    }
}
