/* solid.c — `solid` objects: a tetrahedral mesh (generated, imported or filled), checked for
 * inverted and degenerate tetrahedra, with a material per tetrahedron (by position or by the
 * mesh file's region), lumped masses rho V / 4 per corner, and per tetrahedron the values the
 * std.solids energies read: Lame constants, rest volume and the inverse reference edge matrix. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab_internal.h"
#include "elab_tangent.h"
#include "mesh/tetmesh.h"

/* A tetrahedron is degenerate when its volume is below this times its longest edge cubed (a
 * regular one has 0.118): its reference edge matrix would not be invertible in practice. */
static const double DEGENERATE_RATIO = 1e-9;

/* ---- the mesh ---- */

static const char *generate(const Value *a, const Geom *g, double spacing, const Value *cavity, SrcLoc *cloc,
                            TetMesh *mesh)
{
    static const double zero[3] = { 0, 0, 0 }, up[3] = { 0, 0, 1 };
    if (!strcmp(g->fn, "box")) {
        Value c[2];
        SrcLoc cl[2];
        const double *co = NULL, *cs = NULL;
        if (cavity && elab_geom_args(cavity->geom, c, cl)) {
            cs = c[0].v;
            co = c[1].kind == V_NUM ? c[1].v : zero;
            *cloc = cavity->geom->loc;
        }
        return tetmesh_box(a[1].kind == V_NUM ? a[1].v : zero, a[0].v, spacing, co, cs, mesh);
    }
    double axis[3];
    memcpy(axis, a[3].kind == V_NUM ? a[3].v : up, sizeof axis);
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    if (!(n > 0))
        return "the cylinder's axis must not be zero";
    for (int c = 0; c < 3; c++)
        axis[c] /= n;
    return tetmesh_cylinder(a[2].kind == V_NUM ? a[2].v : zero, axis, a[0].v[0], a[1].v[0], spacing, mesh);
}

/* Positive sizes of a generated shape, and a spacing for it. */
static bool check_generated(const Value *a, const SrcLoc *locs, const Geom *g, double spacing, SrcLoc at)
{
    int n = !strcmp(g->fn, "box") ? 3 : 2;
    for (int k = 0; k < n; k++) {
        const Value *v = !strcmp(g->fn, "box") ? &a[0] : &a[k];
        double x = !strcmp(g->fn, "box") ? v->v[k] : v->v[0];
        if (!(x > 0)) {
            diag_error(locs[!strcmp(g->fn, "box") ? 0 : k], "the %s of a solid's %s must be positive",
                       !strcmp(g->fn, "box") ? "size" : k ? "length" : "radius", g->fn);
            return false;
        }
    }
    if (!(spacing > 0)) {
        Diag *d = diag_error(at, "a generated %s mesh needs a positive `spacing`", g->fn);
        diag_hint(d, "the longest cell edge, for example `spacing = 2 mm;`");
        return false;
    }
    return true;
}

static bool read_mesh(Elab *e, const Geom *g, double spacing, const Value *cavity, SrcLoc spacing_at, TetMesh *mesh)
{
    Value a[6];
    SrcLoc locs[6], cloc = g->loc;
    if (!elab_geom_args(g, a, locs))
        return false;
    if (cavity && strcmp(g->fn, "box")) {
        Diag *d = diag_error(cavity->geom->loc, "a `cavity` is cut out of a generated box only");
        diag_hint(d, "an imported mesh brings its own cavities: every closed inner surface is one");
        return false;
    }
    if (!strcmp(g->fn, "box") || !strcmp(g->fn, "cylinder")) {
        if (!check_generated(a, locs, g, spacing, spacing_at))
            return false;
        const char *err = generate(a, g, spacing, cavity, &cloc, mesh);
        if (err)
            diag_error(strstr(err, "cavity") ? cloc : g->loc, "%s", err);
        return err == NULL;
    }
    const char *path = elab_relative_path(e, a[0].str, locs[0]); /* as shells' mesh files are */
    double scale = a[1].kind == V_NUM ? a[1].v[0] : 1.0;
    char err[768];
    bool ok = !strcmp(g->fn, "gmsh")     ? tetmesh_read_msh(path, scale, mesh, err, sizeof err)
            : !strcmp(g->fn, "tetgen")   ? tetmesh_read_tetgen(path, scale, mesh, err, sizeof err)
                                         : tetmesh_fill_surface(path, scale, spacing > 0 ? pow(spacing, 3) / (6 * sqrt(2)) : 0,
                                                                mesh, err, sizeof err);
    if (!ok) {
        Diag *d = diag_error(locs[0], "%s", err);
        if (strstr(err, "not a closed surface"))
            diag_hint(d, "`filled` needs a watertight surface: close its holes and share the vertices of touching "
                         "triangles");
        else if (strstr(err, "not a Gmsh mesh"))
            diag_hint(d, "gmsh(...) reads .msh files (ASCII 2.2 or 4.1); tetgen(\"base\") reads base.node and base.ele; "
                         "filled(...) meshes a closed .obj or .stl surface");
    }
    return ok;
}

/* Inverted and degenerate tetrahedra: named by index (from 1) and, when imported, by the line
 * of the file that defines them. */
static bool check_quality(const TetMesh *m, SrcLoc at)
{
    int t = tetmesh_first_bad(m, DEGENERATE_RATIO);
    if (t < 0)
        return true;
    double v = tetmesh_volume(m, t);
    char where[600] = "";
    if (m->file)
        snprintf(where, sizeof where, " (mesh file `%s`, line %ld)", m->file, m->line[t]);
    const int *c = &m->tet[4 * t];
    Diag *d = v < 0 ? diag_error(at, "tetrahedron %d%s is inverted: its corners are ordered against the mesh's other "
                                     "tetrahedra (signed volume %.3g m^3)", t + 1, where, v)
                    : diag_error(at, "tetrahedron %d%s is degenerate: its four corners are nearly in one plane "
                                     "(volume %.3g m^3)", t + 1, where, v);
    diag_hint(d, v < 0 ? "swap two of its corners (the mesh's nodes %d, %d, %d, %d, counted from 1 in file order) or "
                         "mesh the body again"
                       : "its corners are the mesh's nodes %d, %d, %d, %d (counted from 1 in file order): mesh the "
                         "body again, with a quality bound",
              c[0] + 1, c[1] + 1, c[2] + 1, c[3] + 1);
    return false;
}

/* Nodes no tetrahedron uses (a mesh file's geometry points, a cavity's inside) are dropped;
 * the rest keep their order. Returns their count. */
static int compact_nodes(TetMesh *m)
{
    int *map = malloc(sizeof(int) * (size_t)m->n_nodes + 1), n = 0;
    for (int i = 0; i < m->n_nodes; i++)
        map[i] = -1;
    for (int i = 0; i < 4 * m->n_tets; i++)
        map[m->tet[i]] = 0;
    for (int i = 0; i < m->n_nodes; i++)
        if (map[i] == 0) {
            memmove(&m->x[3 * n], &m->x[3 * i], 3 * sizeof(double));
            map[i] = n++;
        }
    for (int i = 0; i < 4 * m->n_tets; i++)
        m->tet[i] = map[m->tet[i]];
    m->n_nodes = n;
    free(map);
    return n;
}

/* ---- materials ---- */

typedef struct Materials {
    Expr *expr;     /* the `material` value */
    int   uniform;  /* its material when it depends neither on the position nor the region, else -1 */
    int  *count;    /* tetrahedra per material */
} Materials;

/* The material of tetrahedron t: the expression at its centroid with its region; -1 after an error. */
static int material_of(Elab *e, const Materials *mt, const TetMesh *m, int t)
{
    if (mt->uniform >= 0)
        return mt->uniform;
    static const char *axes[3] = { "x", "y", "z" };
    Binding *saved = e->scope;
    for (int c = 0; c < 3; c++) {
        double p = 0;
        for (int k = 0; k < 4; k++)
            p += 0.25 * m->x[3 * m->tet[4 * t + k] + c];
        scope_bind(e, axes[c], value_num(p, dims_of(1, 0, 0, 0)), mt->expr->loc, BIND_BUILTIN);
    }
    scope_bind(e, "region", value_num(m->region[t], dims_of(0, 0, 0, 0)), mt->expr->loc, BIND_BUILTIN);
    Value v = eval_expr(e, mt->expr);
    e->scope = saved;
    if (v.kind == V_MATERIAL && v.known)
        return v.index;
    if (v.kind != V_ERR)
        diag_error(mt->expr->loc, "the material here must be chosen by a condition on x, y, z and region");
    return -1;
}

/* A material the expression names but no tetrahedron takes: its region is empty. */
static bool check_regions(Elab *e, const Materials *mt, const Expr *x, const char *solid)
{
    if (!x || mt->uniform >= 0)
        return true;
    bool ok = true;
    if (x->kind == EX_NAME) {
        for (int i = 0; i < e->mats.n; i++)
            if (!strcmp(e->mats.a[i].name, x->str) && mt->count[i] == 0) {
                Diag *d = diag_error(x->loc, "no tetrahedron of solid `%s` takes material `%s`: its region is empty",
                                     solid, x->str);
                diag_hint(d, "each tetrahedron takes the material at its centroid (and its mesh file's `region`)");
                return false;
            }
        return true;
    }
    ok &= check_regions(e, mt, x->a, solid);
    ok &= check_regions(e, mt, x->b, solid);
    ok &= check_regions(e, mt, x->c, solid);
    return ok;
}

/* Lame constants of material k, or false when its Poisson ratio does not allow them. */
static bool lame(Elab *e, int k, SrcLoc at, Dual *mu, Dual *lambda)
{
    const ElabMaterial *mat = &e->mats.a[k];
    if (!mat->has_nu || !(mat->nu.v > -1 && mat->nu.v < 0.5)) {
        Diag *d = diag_error(at, mat->has_nu ? "material `%s` has nu = %g: a solid needs -1 < nu < 0.5"
                                             : "material `%s` gives no `nu`: a solid needs its Poisson ratio",
                             mat->name, mat->nu.v);
        diag_hint(d, "rubber and silicone are nearly incompressible: `nu = 0.45;` to `nu = 0.49;`");
        return false;
    }
    Dual one_nu = dual_add(dual_const(1), mat->nu);
    *mu = dual_div(mat->E, dual_scale(2, one_nu));
    *lambda = dual_div(dual_mul(mat->E, mat->nu), dual_mul(one_nu, dual_sub(dual_const(1), dual_scale(2, mat->nu))));
    return true;
}

/* ---- building ---- */

/* The inverse of the reference edge matrix Dm = [b - a, c - a, d - a], row by row. */
static void inverse_edges(const TetMesh *m, int t, double *b)
{
    const int *v = &m->tet[4 * t];
    double d[3][3]; /* d[i][k]: component i of edge k */
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++)
            d[i][k] = m->x[3 * v[k + 1] + i] - m->x[3 * v[0] + i];
    double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                 d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            /* cofactor of d[j][i] over det */
            int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            b[3 * i + j] = (d[r0][c0] * d[r1][c1] - d[r0][c1] * d[r1][c0]) / det;
        }
}

/* Per tetrahedron: material, Lame constants, volume, Dm^-1; corner masses rho V / 4. */
static bool fill_tets(Elab *e, ElabObj *o, const TetMesh *m, Materials *mt, SrcLoc mat_at)
{
    o->tets = malloc(sizeof(int) * 4 * (size_t)m->n_tets + 1);
    o->tet_data = malloc(sizeof(double) * SOLID_DATA * (size_t)m->n_tets + 1);
    o->tet_lame = malloc(sizeof(Dual) * 2 * (size_t)m->n_tets + 1);
    o->n_tets = m->n_tets;
    o->mass = dual_const(0);
    for (int t = 0; t < m->n_tets; t++) {
        int k = material_of(e, mt, m, t);
        double *d = &o->tet_data[SOLID_DATA * t], vol = tetmesh_volume(m, t);
        Dual *ml = &o->tet_lame[2 * t];
        if (k < 0 || !lame(e, k, mat_at, &ml[0], &ml[1]))
            return false;
        d[0] = ml[0].v, d[1] = ml[1].v;
        mt->count[k]++;
        d[2] = vol;
        inverse_edges(m, t, &d[3]);
        for (int c = 0; c < 4; c++) {
            int node = o->first_node + m->tet[4 * t + c];
            o->tets[4 * t + c] = node;
            e->body_mass.a[node] = dual_add(e->body_mass.a[node], dual_divc(dual_scale(vol, e->mats.a[k].rho), 4));
        }
        o->mass = dual_add(o->mass, dual_scale(vol, e->mats.a[k].rho));
    }
    return true;
}

static void add_cavities(ElabObj *o, const TetMesh *m)
{
    int *tris;
    o->n_cavity = tetmesh_cavities(m, &tris);
    for (int i = 0; i < 3 * o->n_cavity; i++)
        tris[i] += o->first_node;
    o->cavity = tris;
}

static bool build_solid(Elab *e, const Stmt *s, ElabObj *o, TetMesh *m, Materials *mt, SrcLoc mesh_at, SrcLoc mat_at)
{
    if (!check_quality(m, mesh_at))
        return false;
    int n = compact_nodes(m);
    if (!elab_room_for(e, n, s->loc))
        return false;
    int oi = e->objs.n;
    o->first_node = e->node_obj.n;
    o->n_nodes = n;
    for (int i = 0; i < n; i++)
        elab_add_node(e, &m->x[3 * i], oi, i);
    mt->count = calloc((size_t)e->mats.n + 1, sizeof(int));
    bool ok = fill_tets(e, o, m, mt, mat_at) && check_regions(e, mt, mt->expr, o->name);
    free(mt->count);
    if (ok)
        add_cavities(o, m);
    return ok;
}

static int energy_kind(const PropValues *pv)
{
    const Value *v = prop_get(pv, "model");
    if (!v || !strcmp(v->str, "neo_hookean"))
        return SOLID_NEO_HOOKEAN;
    return !strcmp(v->str, "stvk") ? SOLID_STVK : SOLID_LINEAR;
}

/* `solid NAME { mesh; spacing; cavity; model; material; }`: its nodes, tetrahedra, masses and
 * cavities, appended to the model under construction. */
void elab_solid(Elab *e, Stmt *s, const char *name)
{
    PropValues pv;
    char owner[160];
    snprintf(owner, sizeof owner, "solid `%s`", name);
    props_read(e, s, &pv, owner);
    if (!props_complete(s, &pv, owner))
        return;
    const Value *m = prop_get(&pv, "material"), *mesh = prop_get(&pv, "mesh");
    if (!m || !mesh)
        return;
    Materials mt = { NULL, m->known ? m->index : -1, NULL };
    for (int i = 0; i < s->n_body; i++)
        if (s->body[i]->kind != ST_LET && s->body[i]->name && !strcmp(s->body[i]->name, "material"))
            mt.expr = s->body[i]->value;
    ElabObj o;
    memset(&o, 0, sizeof o);
    o.name = name;
    o.kind = SRD_OBJ_SOLID;
    o.loc = s->name_loc;
    o.E = e->mats.a[m->index].E;
    o.nu = e->mats.a[m->index].nu;
    o.rho = e->mats.a[m->index].rho;
    o.G = dual_div(o.E, dual_scale(2, dual_add(dual_const(1), o.nu)));
    o.first_edge = e->edge_obj.n;
    o.first_tri = e->tri_obj.n;
    o.first_hinge = e->hinge_edge.n;
    o.energy = energy_kind(&pv);
    o.spacing = prop_num(&pv, "spacing", 0);
    TetMesh tm;
    memset(&tm, 0, sizeof tm);
    SrcLoc mesh_at = prop_loc(&pv, "mesh", s->loc), mat_at = prop_loc(&pv, "material", s->loc);
    bool ok = read_mesh(e, mesh->geom, o.spacing, prop_get(&pv, "cavity"), prop_loc(&pv, "spacing", s->loc), &tm) &&
              build_solid(e, s, &o, &tm, &mt, mesh_at, mat_at);
    tetmesh_free(&tm);
    if (!ok) {
        free(o.tets);
        free(o.tet_data);
        free(o.tet_lame);
        free(o.cavity);
        return;
    }
    DPUSH(e->objs, o);
}

/* ---- the flat model's elements ---- */

void solid_add_tets(Elab *e, srd_model *m, const int *map)
{
    static const char *kinds[] = { "tet_neo_hookean", "tet_stvk", "tet_linear" };
    static const char *data[SOLID_DATA] = { "mu", "lambda", "volume", "b00", "b01", "b02",
                                            "b10", "b11", "b12", "b20", "b21", "b22" };
    for (int i = 0; i < e->objs.n; i++) {
        const ElabObj *o = &e->objs.a[i];
        if (o->kind != SRD_OBJ_SOLID || !o->n_tets)
            continue;
        int set = srd_model_elemset(m, kinds[o->energy], 4, 0, SOLID_DATA, data);
        for (int t = 0; t < o->n_tets; t++) {
            int v[4];
            for (int c = 0; c < 4; c++)
                v[c] = map[o->tets[4 * t + c]];
            Dual row[SOLID_DATA];
            for (int c = 0; c < SOLID_DATA; c++)
                row[c] = c < 2 ? o->tet_lame[2 * t + c] : dual_const(o->tet_data[SOLID_DATA * t + c]);
            elab_add_row(e, m, set, v, NULL, NULL, row, i);
        }
    }
}
