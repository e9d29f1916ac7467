/* elab.c — runs the program's statements (declarations, loops, boundary conditions,
 * environment, analyses) and hands the collected geometry to finalize.c, which builds the
 * flat srd_model. Every mistake is reported with its location; elaboration goes on after
 * an error so that one run shows as many as possible. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "elab_internal.h"
#include "elab_tangent.h"
#include "geom.h"
#include "parse.h"
#include "props.h"
#include "srd_kernel.h"

#define PI 3.14159265358979323846

void *elab_grow(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p) {
        fputs("srdc: out of memory\n", stderr);
        abort();
    }
    return p;
}

/* ---- declarations ---- */

static const char *reserved_names[] = { "pi", "t", "dt", "x", "y", "z", "s" };

static bool is_reserved(const char *name)
{
    for (size_t i = 0; i < sizeof reserved_names / sizeof reserved_names[0]; i++)
        if (!strcmp(reserved_names[i], name))
            return true;
    return false;
}

/* Reports a second declaration of `name`; returns true when the name may be bound (a
 * reserved name is reported but still bound, so that its uses add no errors). */
static bool check_new_name(Elab *e, const char *name, SrcLoc loc, bool indexable)
{
    SrcLoc prev = NO_LOC;
    Binding *b = scope_lookup(e, name);
    bool clash = false;
    if (b && b->kind != BIND_BUILTIN && b->kind != BIND_LOOP) {
        prev = b->loc;
        clash = true;
    }
    int o = clash ? -1 : elab_find_object(e, name);
    if (o >= 0) {
        prev = e->objs.a[o].loc;
        clash = true;
    }
    int m = clash ? -1 : elab_find_material(e, name);
    if (m >= 0) {
        prev = e->mats.a[m].loc;
        clash = true;
    }
    const Decl *d = elab_find_decl(e, name);
    if (d && !clash) {
        prev = d->stmt->name_loc;
        clash = true;
    }
    if (clash) {
        bool same = prev.file == loc.file && prev.line == loc.line && prev.col == loc.col;
        Diag *dg = same ? diag_error(loc, "`%s` is declared again by the next iteration of this loop", name)
                        : diag_error(loc, "`%s` is already declared", name);
        if (!same)
            diag_note(dg, prev, "the first declaration of `%s` is here", name);
        if (e->loop_depth && indexable)
            diag_hint(dg, "a declaration inside `for` needs an index: `%s[i]`", name);
        else if (e->loop_depth)
            diag_hint(dg, "a `let` inside `for` is declared once per iteration; declare `%s` before the loop "
                          "or use another name", name);
        else if (e->control_depth)
            diag_hint(dg, "to give `%s` a new value at each sample, assign it: `%s = ...;`", name, name);
        return false;
    }
    if (is_reserved(name))
        diag_error(loc, "`%s` is a built-in name (pi, t, dt, x, y, z, s) and cannot be declared", name);
    return true;
}

bool elab_check_new_name(Elab *e, const char *name, SrcLoc loc) { return check_new_name(e, name, loc, false); }

static void collect_decls(Elab *e, Stmt **stmts, int n)
{
    for (int i = 0; i < n; i++) {
        Stmt *s = stmts[i];
        if (s->kind == ST_FOR)
            collect_decls(e, s->body, s->n_body);
        if (s->kind != ST_FN && s->kind != ST_ENERGY && s->kind != ST_FORCE && s->kind != ST_CONSTRAINT)
            continue;
        const Decl *prev = elab_find_decl(e, s->name);
        if (prev) {
            Diag *d = diag_error(s->name_loc, "`%s` is already defined", s->name);
            diag_note(d, prev->stmt->name_loc, "the first definition is here");
            continue;
        }
        Decl d = { s, false };
        DPUSH(e->decls, d);
    }
}

/* ---- recursion among functions, found without calling them ---- */

static void calls_in_expr(const Expr *x, const char **out, int *n, int max)
{
    if (!x)
        return;
    if (x->kind == EX_CALL && *n < max)
        out[(*n)++] = x->str;
    calls_in_expr(x->a, out, n, max);
    calls_in_expr(x->b, out, n, max);
    calls_in_expr(x->c, out, n, max);
    for (int i = 0; i < x->n_args; i++)
        calls_in_expr(x->args[i], out, n, max);
}

static int fn_calls(const Stmt *fn, const char **out, int max)
{
    int n = 0;
    calls_in_expr(fn->value, out, &n, max);
    for (int i = 0; i < fn->n_body; i++)
        calls_in_expr(fn->body[i]->value, out, &n, max);
    return n;
}

/* A search for cycles: `stamp[i] == gen` marks decl i as explored by the current search, so
 * each function is entered once per search (a function that calls another twice, nested, would
 * otherwise make the search exponential). */
typedef struct CycleSearch {
    int         *stamp;
    int          gen;
    const Stmt **path;   /* the functions on the way */
} CycleSearch;

/* Depth-first search for a cycle from `from` back to `target`. */
static bool reaches(Elab *e, CycleSearch *cs, const Stmt *from, const Stmt *target, int depth)
{
    if (depth >= 32)
        return false;
    const char *callees[64];
    int n = fn_calls(from, callees, 64);
    for (int i = 0; i < n; i++) {
        const Decl *d = elab_find_decl(e, callees[i]);
        if (!d || d->stmt->kind != ST_FN)
            continue;
        cs->path[depth] = d->stmt;
        if (d->stmt == target)
            return true;
        int k = (int)(d - e->decls.a);
        if (cs->stamp[k] == cs->gen)
            continue;
        cs->stamp[k] = cs->gen;
        if (reaches(e, cs, d->stmt, target, depth + 1))
            return true;
    }
    return false;
}

static void check_recursion(Elab *e)
{
    const Stmt *path[32];
    CycleSearch cs = { calloc((size_t)e->decls.n + 1, sizeof(int)), 0, path };
    if (!cs.stamp)
        abort();
    for (int i = 0; i < e->decls.n; i++) {
        const Stmt *fn = e->decls.a[i].stmt;
        if (fn->kind != ST_FN)
            continue;
        cs.gen++;
        if (!reaches(e, &cs, fn, fn, 0))
            continue;
        int len = 0;
        while (path[len] != fn)
            len++;
        if (len == 0) {
            Diag *d = diag_error(fn->name_loc, "function `%s` calls itself", fn->name);
            diag_hint(d, "functions are expanded inline into kernels; recursion is not allowed");
        } else {
            /* Report a cycle once, at the function declared first. */
            bool first = true;
            for (int k = 0; k < len; k++)
                for (int j = 0; j < i; j++)
                    first &= e->decls.a[j].stmt != path[k];
            if (!first)
                continue;
            char names[256] = "";
            for (int k = 0; k < len; k++) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s`%s`", k == len - 1 ? " and " : ", ", path[k]->name);
            }
            Diag *d = diag_error(fn->name_loc, "functions `%s`%s call each other", fn->name, names);
            diag_note(d, path[0]->name_loc, "`%s` is defined here", path[0]->name);
            diag_hint(d, "functions are expanded inline into kernels; recursion is not allowed");
        }
        e->decls.a[i].recursive = true;
    }
    free(cs.stamp);
}

/* ---- properties of a block ---- */

static void hint_properties(Diag *d, BlockKind b, const char *name)
{
    const PropSpec *list[64];
    int n = props_list(b, list, 64);
    const char *names[64];
    for (int i = 0; i < n; i++)
        names[i] = list[i]->name;
    const char *close = diag_closest(name, names, n);
    if (close) {
        diag_hint(d, "did you mean `%s`?", close);
        return;
    }
    char buf[512] = "";
    for (int i = 0; i < n; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : "", names[i]);
    }
    diag_hint(d, "a %s block accepts %s", block_kind_name(b), buf);
}

static bool check_word(Elab *e, const PropSpec *p, Value v, Expr *x)
{
    (void)e;
    if (v.kind == V_WORD) {
        char words[256];
        snprintf(words, sizeof words, " %s ", p->words);
        char key[128];
        snprintf(key, sizeof key, " %s ", v.str);
        if (strstr(words, key))
            return true;
    }
    char desc[128];
    value_describe(&v, desc, sizeof desc);
    Diag *d = diag_error(x->loc, "`%s` must be one of: %s", p->name, p->words);
    if (v.kind == V_WORD) {
        const char *cands[16];
        int n = 0;
        char copy[256];
        snprintf(copy, sizeof copy, "%s", p->words);
        for (char *tok = strtok(copy, " "); tok && n < 16; tok = strtok(NULL, " "))
            cands[n++] = tok;
        const char *close = diag_closest(v.str, cands, n);
        if (close)
            diag_hint(d, "did you mean `%s`?", close);
    }
    return false;
}

/* An example value of a timed property (an obstacle's pose), for hints. */
static const char *timed_example(const char *name)
{
    if (!strcmp(name, "axis") || !strcmp(name, "normal"))
        return "(sin(1 /s * t), 0, cos(1 /s * t))";
    if (!strcmp(name, "angle"))
        return "30 deg * sin(2 * pi * 1 Hz * t)";
    if (!strcmp(name, "spin"))
        return "20 /s * ramp(t, 0 s, 1 s)";
    return "(0 m, 0 m, 1 cm - 2 mm/s * t)";
}

static bool check_dims(const PropSpec *p, Value v, Expr *x, const char *owner)
{
    Dims want = props_dims(p);
    if (v.n == p->n && (v.any_dims || dims_eq(v.dims, want)))
        return true;
    char have[128], need[128];
    value_describe(&v, have, sizeof have);
    Value w = value_num(0, want);
    w.n = p->n;
    value_describe(&w, need, sizeof need);
    Diag *d = owner ? diag_error(x->loc, "`%s` of %s must be %s, but this is %s", p->name, owner, need, have)
                    : diag_error(x->loc, "%s must be %s, but this is %s", p->name, need, have);
    if (v.n == p->n && dims_is_dimless(v.dims) && !dims_is_dimless(want)) {
        char u[64];
        dims_format(want, u, sizeof u);
        diag_hint(d, "add a unit, for example `%s`", u);
    } else if (p->timed) {
        diag_hint(d, "`%s` may change with time t, for example `%s = %s;`", p->name, p->name, timed_example(p->name));
    } else if (!owner && p->doc[0]) {
        diag_hint(d, "%s", p->doc); /* statements (load, move) give their hint as the doc */
    }
    return false;
}

/* A param that sets the discretisation: run and sweep elaborate the model again for each of its
 * values, and a built simulator refuses new values (its DOF count is compiled in). */
static void mark_shaping_param(Elab *e, const char *name)
{
    for (int k = 0; k < e->model->n_params; k++)
        if (!strcmp(e->model->params[k].name, name))
            e->model->params[k].shapes = 1;
}

/* A joint's end: a rigid body, one node, or the word `world`. */
static bool check_joint_end(Elab *e, Value v, Expr *x)
{
    if (v.kind == V_WORD && !strcmp(v.str, "world"))
        return true;
    if (v.kind == V_OBJ && e->objs.a[v.index].kind == SRD_OBJ_BODY)
        return !e->objs.a[v.index].broken;
    if (v.kind == V_SEL && v.sel->component == COMP_ALL && v.sel->n >= 1)
        return true; /* one node, or several (an edge glued to a body: each pinned) */
    char desc[128];
    value_describe(&v, desc, sizeof desc);
    Diag *d = diag_error(x->loc, "a joint's end must be a body, one node or `world`, but this is %s", desc);
    diag_hint(d, "for example `a = palm;`, `b = finger.start;` or `b = world;`");
    return false;
}

/* Checks one property value against its spec. */
static bool check_prop(Elab *e, const PropSpec *p, Value v, Expr *x, const char *owner)
{
    if (v.kind == V_ERR)
        return false;
    bool ok = true;
    switch (p->shape) {
    case P_NUM:
        if (v.kind != V_NUM) {
            if (v.kind == V_WORD && x->kind == EX_NAME) {
                eval_require_num(e, v, x);
            } else {
                char desc[128];
                value_describe(&v, desc, sizeof desc);
                diag_error(x->loc, "`%s` of %s must be a number, but this is %s", p->name, owner, desc);
            }
            return false;
        }
        ok = check_dims(p, v, x, owner);
        break;
    case P_INT:
        if (v.kind == V_NUM && v.n == 1 && v.known && v.v[0] > INT_MAX && dims_is_dimless(v.dims)) {
            Diag *d = diag_error(x->loc, "`%s` must be at most %d, but it is %g", p->name, INT_MAX, v.v[0]);
            diag_hint(d, "a count this large cannot be meant; the limits are listed in docs/cli.md");
            return false;
        }
        if (v.kind != V_NUM || v.n != 1 || !v.known || v.v[0] != floor(v.v[0]) || v.v[0] < 1 ||
            (!v.any_dims && !dims_is_dimless(v.dims))) {
            if (v.kind == V_NUM && v.known && v.n == 1 && dims_is_dimless(v.dims) && v.param)
                diag_error(x->loc, "`%s` must be a positive integer, but param `%s` makes it %g", p->name, v.param,
                           v.v[0]);
            else if (v.kind == V_NUM && v.known && v.n == 1 && v.v[0] == floor(v.v[0]) && dims_is_dimless(v.dims))
                diag_error(x->loc, "`%s` must be a positive integer, but it is %g", p->name, v.v[0]);
            else if (v.kind == V_NUM && !v.known)
                ; /* reported below */
            else
                diag_error(x->loc, "`%s` must be a positive integer", p->name);
            if (v.known || v.kind != V_NUM)
                return false;
        }
        break;
    case P_WORD:
        if (v.kind == V_WORD && v.param && p->discrete)
            mark_shaping_param(e, v.param);
        return check_word(e, p, v, x);
    case P_MATERIAL:
        if (v.kind != V_MATERIAL) {
            if (v.kind == V_WORD) {
                Diag *d = diag_error(x->loc, "unknown material `%s`", v.str);
                const char *names[256];
                int n = 0;
                for (int i = 0; i < e->mats.n && n < 256; i++)
                    names[n++] = e->mats.a[i].name;
                const char *close = diag_closest(v.str, names, n);
                if (close)
                    diag_hint(d, "did you mean `%s`?", close);
                else if (n == 0)
                    diag_hint(d, "declare it first: `material %s { E = ...; rho = ...; }`", v.str);
            } else {
                diag_error(x->loc, "`material` must name a material");
            }
            return false;
        }
        break;
    case P_PATH:
    case P_MESH:
    case P_SOLID:
    case P_TETMESH:
    case P_SECTION: {
        static const char *paths = " line polyline arc circle helix ";
        static const char *meshes = " rectangle hexagon disc sphere obj dismech ";
        const char *solids = p->block == BK_LATTICE ? " box cylinder sphere filled " : " box cylinder sphere ";
        static const char *tetmeshes = " box cylinder gmsh tetgen filled ";
        char key[64];
        bool good = false;
        if (v.kind == V_GEOM || v.kind == V_SECTION) {
            snprintf(key, sizeof key, " %s ", v.geom->fn);
            good = p->shape == P_PATH ? strstr(paths, key) != NULL
                 : p->shape == P_MESH ? strstr(meshes, key) != NULL
                 : p->shape == P_SOLID ? strstr(solids, key) != NULL
                 : p->shape == P_TETMESH ? strstr(tetmeshes, key) != NULL : v.kind == V_SECTION;
        }
        if (!good && p->shape == P_TETMESH) {
            Diag *d = diag_error(x->loc, "`%s` of %s must be a tetrahedral mesh", p->name, owner);
            diag_hint(d, "meshes: box(size, origin), cylinder(radius, length, base, axis), gmsh(\"f.msh\"), "
                         "tetgen(\"f\"), filled(\"f.stl\")");
            return false;
        }
        if (!good && p->shape == P_SOLID) {
            Diag *d = diag_error(x->loc, "`%s` of %s must be a solid shape", p->name, owner);
            diag_hint(d, "shapes: box(size, origin), cylinder(radius, length, base, axis), sphere(radius, center)");
            return false;
        }
        if (!good) {
            Diag *d = diag_error(x->loc, "`%s` of %s must be %s", p->name, owner,
                                 p->shape == P_PATH ? "a path" : p->shape == P_MESH ? "a mesh" : "a cross-section");
            diag_hint(d, "%s", p->shape == P_PATH ? "paths: line(a, b), polyline(p1, p2, ...), arc(...), circle(...), helix(...)"
                              : p->shape == P_MESH ? "meshes: rectangle(...), hexagon(...), disc(...), sphere(...), "
                                                     "obj(\"f.obj\"), dismech(\"f.txt\")"
                                                   : "sections: circular(r), elliptic(a, b), rectangular(w, h)");
            return false;
        }
        return true;
    }
    case P_REF:
        return check_joint_end(e, v, x);
    case P_TIMED:
        if (v.kind != V_NUM || v.n != 1) {
            diag_error(x->loc, "`%s` must be a number (an expression of t may change it over time)", p->name);
            return false;
        }
        return true;
    case P_HEIGHT:
        if (v.kind != V_NUM || v.n != 1 || !(v.any_dims || dims_eq(v.dims, dims_of(1, 0, 0, 0)))) {
            char desc[128];
            value_describe(&v, desc, sizeof desc);
            diag_error(x->loc, "`height` must be a length as an expression of x and y, but this is %s", desc);
            return false;
        }
        return true;
    }
    if (!ok)
        return false;
    bool by_region = p->shape == P_MATERIAL && (p->block == BK_LATTICE || p->block == BK_SOLID) && v.param && !strcmp(v.param, "position");
    if (!v.known && p->shape != P_HEIGHT && p->shape != P_TIMED && p->shape != P_REF && !by_region &&
        !p->timed) {
        Diag *d = diag_error(x->loc, "`%s` must be known when the model is built, but this depends on `%s`", p->name,
                             v.param ? v.param : "a run-time value");
        if (v.param && (!strcmp(v.param, "t") || !strcmp(v.param, "dt")))
            diag_hint(d, "to change it over time, use `actuate`");
        elab_hint_input(e, d, v.param);
        return false;
    }
    if (by_region)
        return true;
    if (v.param && p->discrete) {
        mark_shaping_param(e, v.param);
        return true;
    }
    if (v.param && !p->runtime_ok && strcmp(v.param, "t")) {
        Diag *d = diag_error(x->loc, "`%s` shapes the discrete model and cannot depend on the run-time param `%s`",
                             p->name, v.param);
        diag_hint(d, "declare `%s` with `let` instead of `param`", v.param);
        return false;
    }
    return true;
}

static void bind_node_position(Elab *e, SrcLoc loc);

/* `region`, a solid's region number from its mesh file, as a value known per tetrahedron. */
static void bind_region(Elab *e, SrcLoc loc)
{
    Value r = value_num(NAN, dims_of(0, 0, 0, 0));
    r.known = false;
    r.param = "position";
    scope_bind(e, "region", r, loc, BIND_BUILTIN);
}

/* A timed property that depends on t (a moving obstacle's pose): remembered as a run-time
 * expression, here where the block's `let`s are in scope, with its value at t = 0 in v.v (v
 * stays unknown: that says it changes), or NaN when that is not known here (it reads a `let`
 * that itself depends on t: the schedules give the value when the run starts). */
static Value timed_value(Elab *e, Expr *x, Value v, int *run_expr)
{
    *run_expr = elab_remember_expr(e, x);
    Binding *outer = e->scope;
    scope_bind(e, "t", value_num(0, dims_of(0, 0, 1, 0)), x->loc, BIND_BUILTIN);
    Value z = eval_expr(e, x);
    e->scope = outer;
    for (int c = 0; c < v.n && c < 3; c++)
        v.v[c] = z.kind == V_NUM && z.known && z.n == v.n ? z.v[c] : NAN;
    return v;
}

void props_read(Elab *e, const Stmt *blk, PropValues *pv, const char *owner)
{
    memset(pv, 0, sizeof *pv);
    pv->e = e;
    pv->n_specs = props_list(blk->block, pv->specs, MAX_PROPS);
    Binding *saved = e->scope;
    for (int i = 0; i < blk->n_body; i++) {
        Stmt *s = blk->body[i];
        if (s->kind == ST_LET) {
            if (check_new_name(e, s->name, s->name_loc, false))
                scope_bind(e, s->name, eval_expr(e, s->value), s->name_loc, BIND_LET);
            continue;
        }
        if (s->kind == ST_VARY) {
            Diag *d = diag_error(s->loc, "`vary` belongs in an `optimize` block");
            diag_hint(d, "write `optimize { minimize = ...; vary %s; }`", s->n_params ? s->params[0].name : "E");
            continue;
        }
        if (s->kind == ST_OUTPUT || s->kind == ST_PROBE) {
            if (blk->block != BK_SIMULATE && blk->block != BK_STATIC && blk->block != BK_MODES) {
                diag_error(s->loc, "`%s` belongs in a simulate, static or modes block",
                           s->kind == ST_OUTPUT ? "output" : "probe");
            } else if (pv->n_extra < MAX_PROPS) {
                pv->extra[pv->n_extra++] = s;
            }
            continue;
        }
        int k = 0;
        while (k < pv->n_specs && strcmp(pv->specs[k]->name, s->name))
            k++;
        if (k == pv->n_specs) {
            Diag *d = diag_error(s->name_loc, "unknown property `%s` in %s", s->name, owner);
            hint_properties(d, blk->block, s->name);
            pv->n_unknown++;
            continue;
        }
        if (pv->set[k]) {
            Diag *d = diag_error(s->name_loc, "`%s` is set twice", s->name);
            diag_note(d, pv->where[k]->name_loc, "it was first set here");
            continue;
        }
        Value v;
        if (pv->specs[k]->shape == P_HEIGHT) {
            Binding *outer = e->scope;
            Dims L = dims_of(1, 0, 0, 0);
            Value xv = value_num(NAN, L), yv = value_num(NAN, L);
            xv.known = yv.known = false;
            xv.param = yv.param = "position";
            scope_bind(e, "x", xv, s->loc, BIND_BUILTIN);
            scope_bind(e, "y", yv, s->loc, BIND_BUILTIN);
            v = eval_expr(e, s->value);
            e->scope = outer;
        } else if (pv->specs[k]->shape == P_MATERIAL && (blk->block == BK_LATTICE || blk->block == BK_SOLID)) {
            /* a lattice's or solid's material may depend on the position (and a solid's on the
             * mesh file's region): checked here, chosen per part */
            Binding *outer = e->scope;
            bind_node_position(e, s->loc);
            if (blk->block == BK_SOLID)
                bind_region(e, s->loc);
            v = eval_expr(e, s->value);
            e->scope = outer;
        } else if ((pv->specs[k]->shape == P_WORD || pv->specs[k]->shape == P_REF) && s->value->kind == EX_NAME &&
                   (pv->specs[k]->shape == P_WORD || !strcmp(s->value->str, "world"))) {
            /* An option word (`bending = midedge`) is not looked up as a name: a module may
             * define an energy called `midedge`. */
            v = value_error();
            v.kind = V_WORD;
            v.str = s->value->str;
            v.known = true;
        } else {
            v = eval_expr(e, s->value);
        }
        if (pv->specs[k]->timed && v.kind == V_NUM && !v.known)
            v = timed_value(e, s->value, v, &pv->run_expr[k]);
        pv->set[k] = true;
        pv->where[k] = s;
        if (check_prop(e, pv->specs[k], v, s->value, owner))
            pv->val[k] = v;
        else
            pv->bad[k] = true;
    }
    e->scope = saved;
}

/* The value of a property that was set and valid, or NULL. */
const Value *prop_get(const PropValues *pv, const char *name)
{
    for (int k = 0; k < pv->n_specs; k++)
        if (!strcmp(pv->specs[k]->name, name))
            return pv->set[k] && !pv->bad[k] ? &pv->val[k] : NULL;
    return NULL;
}

bool prop_given(const PropValues *pv, const char *name)
{
    for (int k = 0; k < pv->n_specs; k++)
        if (!strcmp(pv->specs[k]->name, name))
            return pv->set[k];
    return false;
}

SrcLoc prop_loc(const PropValues *pv, const char *name, SrcLoc fallback)
{
    for (int k = 0; k < pv->n_specs; k++)
        if (!strcmp(pv->specs[k]->name, name) && pv->set[k])
            return pv->where[k]->value->loc;
    return fallback;
}

double prop_num(const PropValues *pv, const char *name, double dflt)
{
    const Value *v = prop_get(pv, name);
    return v ? elab_value_only(pv->e, v, 0) : dflt;
}

Dual prop_dual(const PropValues *pv, const char *name, Dual dflt)
{
    const Value *v = prop_get(pv, name);
    return v ? value_dual(v, 0) : dflt;
}

double prop_kept(const PropValues *pv, const char *name, Dual dflt, Dual *keep)
{
    *keep = prop_dual(pv, name, dflt);
    return keep->v;
}

double elab_dual_only(Elab *e, Dual x)
{
    e->dep_lost |= x.dep;
    e->tan_lost |= x.d != 0;
    return x.v;
}

/* A param that sets the discretisation: a value depending on it needs no derivative or mark
 * (a new value makes another model). */
static bool shaping_param(const Elab *e, const char *name)
{
    for (int k = 0; k < e->model->n_params; k++)
        if (!strcmp(e->model->params[k].name, name))
            return e->model->params[k].shapes;
    return false;
}

double elab_value_only(Elab *e, const Value *v, int c)
{
    if (v->kind == V_NUM && v->known && v->param && !shaping_param(e, v->param)) {
        e->dep_lost = true;
        e->tan_lost |= v->dv[c] != 0;
    }
    return v->v[c];
}

/* Reports missing required properties; returns false if any is missing or invalid. */
bool props_complete(const Stmt *blk, const PropValues *pv, const char *owner)
{
    bool ok = true;
    for (int k = 0; k < pv->n_specs; k++) {
        if (pv->bad[k])
            ok = false;
        if (pv->specs[k]->required && !pv->set[k] && pv->n_unknown) {
            ok = false; /* likely the misspelled property reported already */
            continue;
        }
        if (pv->specs[k]->required && !pv->set[k]) {
            bool plain = !strcmp(pv->specs[k]->doc, pv->specs[k]->name) || !strcmp(pv->specs[k]->doc, "mass") ||
                         !strcmp(pv->specs[k]->doc, "density") || !strcmp(pv->specs[k]->doc, "centre");
            Diag *d = plain ? diag_error(blk->loc, "%s is missing the property `%s`", owner, pv->specs[k]->name)
                            : diag_error(blk->loc, "%s is missing the property `%s` (%s)", owner, pv->specs[k]->name,
                                         pv->specs[k]->doc);
            diag_hint(d, "add `%s = ...;` to the block", pv->specs[k]->name);
            ok = false;
        }
    }
    return ok;
}

/* ---- statements ---- */

static void exec_stmts(Elab *e, Stmt **stmts, int n);

const char *elab_closest_param(const srd_model *m, const char *name)
{
    const char *names[256];
    int n = m->n_params < 256 ? m->n_params : 256;
    for (int k = 0; k < n; k++)
        names[k] = m->params[k].name;
    return diag_closest(name, names, n);
}

/* The override of `name`, if one was given: its value replaces the default. Returns 1 when
 * applied, 0 when there is none, -1 after reporting a malformed value or one of the wrong
 * dimension (the default stays, so that uses of the param add no errors). */
/* The example of a hint for `-p name=...`: the default in the unit the param was declared
 * with (`param freq = 2 Hz;` gives `2Hz`), else in SI with frequencies in Hz. A unit like 1/m
 * is written `/m`: glued to a number, `1/m` would read as the number 21. */
static void example_value(char *buf, size_t n, const Expr *decl, const Value *v)
{
    if (decl->kind == EX_UNIT && decl->a->kind == EX_NUM && decl->unit.scale != 0) {
        snprintf(buf, n, "%g%s", v->v[0] / decl->unit.scale, decl->str);
        return;
    }
    char unit[64];
    dims_format(v->dims, unit, sizeof unit);
    if (!strcmp(unit, "1/s"))
        snprintf(unit, sizeof unit, "Hz");
    const char *u = !strcmp(unit, "1") ? "" : !strncmp(unit, "1/", 2) ? unit + 1 : unit;
    snprintf(buf, n, "%g%s", v->v[0], u);
}

static int override_param(Elab *e, const char *name, const Expr *decl, Value *v)
{
    for (int i = 0; i < e->n_overrides; i++) {
        const char *spec = e->overrides[i], *eq = strchr(spec, '=');
        if (!eq || strlen(name) != (size_t)(eq - spec) || strncmp(spec, name, (size_t)(eq - spec)))
            continue;
        e->override_used[i] = true;
        double x;
        Dims given;
        char bad[48];
        int read = units_parse_quantity(eq + 1, v->dims, &x, &given, bad, sizeof bad);
        if (read == QUANTITY_NOT_A_NUMBER)
            diag_error(NO_LOC, "`-p %s`: `%s` is not a number", spec, eq + 1);
        else if (read == QUANTITY_BAD_UNIT)
            diag_error(NO_LOC, "`-p %s`: unknown unit `%s`", spec, bad);
        else if (read == QUANTITY_WRONG_DIMS) {
            char have[96], need[96];
            dims_describe(given, have, sizeof have);
            dims_describe(v->dims, need, sizeof need);
            Diag *d = diag_error(NO_LOC, "`-p %s`: param `%s` is %s, but this is %s", spec, name, need, have);
            char example[96];
            example_value(example, sizeof example, decl, v);
            diag_hint(d, "give the value with a unit, for example `-p %s=%s`", name, example);
        }
        if (read == QUANTITY_OK && !isfinite(x)) {
            diag_error(NO_LOC, "`-p %s`: the value is beyond the range of double precision (about 1.8e308 in SI "
                               "units)", spec);
            read = QUANTITY_NOT_A_NUMBER;
        }
        if (read != QUANTITY_OK)
            return -1;
        v->v[0] = x;
        return 1;
    }
    return 0;
}

/* `param` and `input` declare the same thing, a run-time value of the param table; an input
 * is also unknown while the model is built (srd_param.input). */
static void exec_param(Elab *e, Stmt *s)
{
    const char *word = s->kind == ST_INPUT ? "input" : "param";
    if (e->loop_depth) {
        diag_error(s->loc, "`%s` must be declared at the top level, not inside `for`", word);
        return;
    }
    Value v = eval_expr(e, s->value);
    if (v.kind == V_ERR)
        return;
    if (v.kind != V_NUM || v.n != 1) {
        char desc[128];
        value_describe(&v, desc, sizeof desc);
        diag_error(s->value->loc, "a%s %s must be a scalar number, but this is %s", s->kind == ST_INPUT ? "n" : "",
                   word, desc);
        return;
    }
    if (!v.known) {
        Diag *d = diag_error(s->value->loc, "a%s %s's default must be known when the model is built, but it depends "
                             "on `%s`", s->kind == ST_INPUT ? "n" : "", word, v.param);
        elab_hint_input(e, d, v.param);
        return;
    }
    int overridden = override_param(e, s->name, s->value, &v);
    double lo = -INFINITY, hi = INFINITY;
    if (s->range) {
        Value a = eval_expr(e, s->range->lo), b = eval_expr(e, s->range->hi);
        if (a.kind != V_NUM || b.kind != V_NUM || a.n != 1 || b.n != 1 || !a.known || !b.known) {
            if (a.kind != V_ERR && b.kind != V_ERR)
                diag_error(s->range->loc, "the range of a param needs two numbers known when the model is built");
            return;
        }
        Dims d;
        if (!(a.any_dims || dims_eq(a.dims, v.dims)) || !(b.any_dims || dims_eq(b.dims, v.dims))) {
            char dv[128], da[128];
            value_describe(&v, dv, sizeof dv);
            value_describe(dims_eq(a.dims, v.dims) ? &b : &a, da, sizeof da);
            diag_error(s->range->loc, "the range of `%s` must have its dimension (%s), but a bound is %s", s->name,
                       dv, da);
            return;
        }
        (void)d;
        lo = a.v[0];
        hi = b.v[0];
        if (!(lo < hi)) {
            diag_error(s->range->loc, "the range of `%s` is empty", s->name);
            return;
        }
        if (v.v[0] < lo || v.v[0] > hi) {
            char unit[64];
            dims_format(v.dims, unit, sizeof unit);
            bool unitless = !strcmp(unit, "1");
            const char *sp = unitless ? "" : " ", *u = unitless ? "" : unit;
            Diag *dg = diag_error(s->value->loc, "the %s of `%s` (%g%s%s) is outside its range",
                                  overridden == 1 ? "value given with -p" : "default", s->name, v.v[0], sp, u);
            diag_hint(dg, "the range is %g%s%s to %g%s%s", lo, sp, u, hi, sp, u);
            /* still declared below, so that its uses add no errors */
        }
    }
    if (!check_new_name(e, s->name, s->name_loc, false))
        return;
    v.param = s->name;
    v.known = s->kind != ST_INPUT; /* like `t`: what uses it becomes a run-time expression */
    memset(v.dv, 0, sizeof v.dv); /* a param is independent of the others, whatever its default reads */
    v.dv[0] = e->seed && !strcmp(e->seed, s->name);
    scope_bind(e, s->name, v, s->name_loc, BIND_PARAM);
    e->globals = e->scope; /* functions and elements see top-level names declared so far */
    srd_model *m = e->model;
    m->params = elab_grow(m->params, sizeof *m->params * (size_t)(m->n_params + 1));
    srd_param *p = &m->params[m->n_params++];
    char unit[64];
    dims_format(v.dims, unit, sizeof unit);
    p->name = strdup(s->name);
    p->unit = strdup(unit);
    p->value = v.v[0];
    memcpy(p->dims, v.dims.e, sizeof p->dims);
    p->lo = lo;
    p->hi = hi;
    p->shapes = 0;
    p->input = s->kind == ST_INPUT;
}

bool elab_is_input(const Elab *e, const char *name)
{
    for (int k = 0; name && k < e->model->n_params; k++)
        if (e->model->params[k].input && !strcmp(e->model->params[k].name, name))
            return true;
    return false;
}

void elab_hint_input(const Elab *e, Diag *d, const char *name)
{
    if (elab_is_input(e, name))
        diag_hint(d, "`%s` is an input, set while the model runs: use it in actuate, load or a motor target", name);
}

static void exec_let(Elab *e, Stmt *s)
{
    Value v = eval_expr(e, s->value);
    if (!check_new_name(e, s->name, s->name_loc, false))
        return;
    scope_bind(e, s->name, v, s->name_loc, BIND_LET);
    if (e->loop_depth == 0)
        e->globals = e->scope; /* functions and elements see top-level names declared so far */
}

/* The declared name of an object, with its index for `rod limb[i]`. */
static const char *decl_name(Elab *e, Stmt *s)
{
    if (!s->index)
        return s->name;
    Value i = eval_expr(e, s->index);
    if (i.kind == V_ERR)
        return NULL;
    if (i.kind != V_NUM || i.n != 1 || !i.known || i.v[0] != floor(i.v[0]) || i.v[0] < 0) {
        diag_error(s->index->loc, "an object index must be a non-negative integer known when the model is built");
        return NULL;
    }
    return arena_printf(e->arena, "%s[%d]", s->name, (int)i.v[0]);
}

static void exec_gravity(Elab *e, Stmt *s)
{
    static const PropSpec spec = { BK_COUNT, "`gravity`", P_NUM, 3, 1, 0, -2, 0, true, true, NULL, "", false, false };
    Value v = eval_expr(e, s->value);
    if (e->model->has_gravity) {
        Diag *d = diag_error(s->loc, "`gravity` is set twice");
        diag_note(d, e->gravity_loc, "it was first set here");
        return;
    }
    if (!check_prop(e, &spec, v, s->value, NULL))
        return;
    e->gravity_loc = s->loc;
    e->model->has_gravity = 1;
    for (int c = 0; c < 3; c++) {
        e->env.gravity[c] = value_dual(&v, c);
        e->model->gravity[c] = v.v[c];
    }
}

/* A selection operand of join/clamp/fix/load: objects stand for all their nodes. */
static Sel *operand_sel(Elab *e, Expr *x, const char *stmt)
{
    Value v = eval_expr(e, x);
    if (v.kind == V_ERR)
        return NULL;
    if (v.kind == V_OBJ) {
        ElabObj *o = &e->objs.a[v.index];
        Sel *s = arena_alloc(e->arena, sizeof *s);
        s->kind = SEL_NODE;
        s->n = o->n_nodes;
        s->items = arena_alloc(e->arena, sizeof(int) * (size_t)o->n_nodes);
        for (int i = 0; i < o->n_nodes; i++)
            s->items[i] = o->first_node + i;
        s->component = COMP_ALL;
        s->obj = v.index;
        return s;
    }
    if (v.kind == V_SEL)
        return v.sel;
    char desc[128];
    if (v.kind == V_WORD && x->kind == EX_NAME) {
        Diag *d = diag_error(x->loc, "unknown name `%s`", v.str);
        const char *names[512];
        int n = 0;
        for (int i = 0; i < e->objs.n && n < 512; i++)
            names[n++] = e->objs.a[i].name;
        const char *close = diag_closest(v.str, names, n);
        if (close)
            diag_hint(d, "did you mean `%s`?", close);
        return NULL;
    }
    value_describe(&v, desc, sizeof desc);
    diag_error(x->loc, "`%s` needs a selection (such as `finger.end`), but this is %s", stmt, desc);
    return NULL;
}

static void exec_join(Elab *e, Stmt *s)
{
    if (s->n_items < 2) {
        diag_error(s->loc, "`join` needs at least two operands");
        return;
    }
    Sel *first = NULL;
    for (int i = 0; i < s->n_items; i++) {
        Sel *sel = operand_sel(e, s->items[i], "join");
        if (!sel)
            return;
        if (sel->kind != SEL_NODE || sel->component != COMP_ALL) {
            Diag *d = diag_error(s->items[i]->loc, "`join` connects nodes, not %s", sel->kind == SEL_EDGE ? "edges" : "components");
            diag_hint(d, "select nodes: `.start`, `.end`, `.node(i)`, `.nodes where ...`");
            return;
        }
        if (!first) {
            first = sel;
            continue;
        }
        if (sel->n != first->n) {
            Diag *d = diag_error(s->items[i]->loc, "`join` operands must have as many nodes each: %d here, %d in the first",
                                 sel->n, first->n);
            (void)d;
            return;
        }
        for (int k = 0; k < sel->n; k++) {
            DPUSH(e->joins, first->items[k]);
            DPUSH(e->joins, sel->items[k]);
            DPUSH(e->join_locs, s->loc);
        }
    }
}

static void fix_node(Elab *e, int node, int mask) { e->node_fix.a[node] |= (unsigned char)mask; }

static void exec_clamp(Elab *e, Stmt *s)
{
    Sel *sel = operand_sel(e, s->target, "clamp");
    if (!sel)
        return;
    if (sel->component != COMP_ALL) {
        Diag *d = diag_error(s->target->loc, "`clamp` fixes whole nodes; to fix one component use `fix`");
        diag_hint(d, "write `fix ...` with the same selection");
        return;
    }
    Sel *nodes = select_nodes(e, sel);
    for (int i = 0; i < nodes->n; i++)
        fix_node(e, nodes->items[i], 7);
    if (sel->rod_end) {
        /* A clamped rod end also holds its end edge: its direction (the next node slides along
         * it, finalize.c) and its twist. */
        const ElabObj *o = &e->objs.a[sel->obj];
        int edge = sel->rod_end == 1 ? o->first_edge : o->first_edge + o->n_edges - 1;
        e->edge_fix.a[edge] |= 1 | (sel->rod_end == 1 ? EDGE_WALL_AT_FIRST : EDGE_WALL_AT_SECOND);
    }
    ClampRecord c = { nodes, s->loc };
    DPUSH(e->clamps, c);
}

static void exec_fix(Elab *e, Stmt *s)
{
    Sel *sel = operand_sel(e, s->target, "fix");
    if (!sel)
        return;
    if (sel->kind == SEL_EDGE) {
        for (int i = 0; i < sel->n; i++)
            e->edge_fix.a[sel->items[i]] |= 3;
        return;
    }
    if (sel->kind != SEL_NODE) {
        diag_error(s->target->loc, "`fix` takes nodes, node components (`.z`) or edges (`.theta`)");
        return;
    }
    int mask = sel->component == COMP_ALL ? 7 : 1 << sel->component;
    for (int i = 0; i < sel->n; i++)
        fix_node(e, sel->items[i], mask);
}

int elab_remember_expr(Elab *e, Expr *x)
{
    int n = 0;
    for (Binding *b = e->scope; b && b != e->globals; b = b->next)
        n += b->val.kind == V_NUM && b->val.known;
    RunExpr r = { x, n, arena_alloc(e->arena, sizeof(CapturedValue) * (size_t)(n + 1)) };
    /* The scope lists the innermost first; the table keeps the outermost first, so that
     * binding in order lets inner names shadow outer ones. */
    for (Binding *b = e->scope; b && b != e->globals; b = b->next)
        if (b->val.kind == V_NUM && b->val.known) {
            CapturedValue *c = &r.captured[--n];
            c->name = b->name;
            c->n = b->val.n;
            memcpy(c->v, b->val.v, sizeof c->v);
            c->param = b->val.param;
        }
    DPUSH(e->exprs, r);
    return e->exprs.n - 1;
}

static void exec_load(Elab *e, Stmt *s)
{
    static const PropSpec spec = { BK_COUNT, "a load", P_NUM, 3, 1, 1, -2, 0, true, true, NULL, "", false, false };
    Sel *sel = operand_sel(e, s->target, "load");
    Value v = eval_expr(e, s->value);
    if (!sel || v.kind == V_ERR)
        return;
    if (sel->component != COMP_ALL) {
        Diag *d = diag_error(s->target->loc, "a `load` is a force on whole nodes, not on one component");
        diag_hint(d, "give the force as a vector: `load sel = (0, 0, -1) N;`");
        return;
    }
    sel = select_nodes(e, sel); /* edges and triangles load their nodes */
    if (v.kind == V_NUM && v.n == 3 && (v.any_dims || dims_eq(v.dims, props_dims(&spec))) && !v.known) {
        /* depends on time: fine, the kernel evaluates it each step */
    } else if (!check_prop(e, &spec, v, s->value, NULL)) {
        return;
    }
    /* Params are settled when the model is built (overrides included): only a load that
     * changes with time needs its expression at run time. */
    int expr = !v.known ? elab_remember_expr(e, s->value) : -1;
    for (int i = 0; i < sel->n; i++) {
        PendingLoad l = { sel->items[i], { { 0, 0, false }, { 0, 0, false }, { 0, 0, false } }, expr };
        for (int c = 0; c < 3 && v.known; c++)
            l.f[c] = value_dual(&v, c);
        DPUSH(e->loads, l);
    }
}

/* The triangles a `pressure` statement pushes: a shell's, or a selection of triangles. */
static Sel *pressure_triangles(Elab *e, Expr *x)
{
    Value v = eval_expr(e, x);
    if (v.kind == V_ERR)
        return NULL;
    if (v.kind == V_OBJ && e->objs.a[v.index].broken)
        return NULL;
    if (v.kind == V_OBJ && e->objs.a[v.index].kind == SRD_OBJ_SHELL) {
        const ElabObj *o = &e->objs.a[v.index];
        Sel *sel = arena_alloc(e->arena, sizeof *sel);
        sel->kind = SEL_TRI;
        sel->n = o->n_tris;
        sel->items = arena_alloc(e->arena, sizeof(int) * (size_t)(o->n_tris + 1));
        for (int i = 0; i < o->n_tris; i++)
            sel->items[i] = o->first_tri + i;
        sel->component = COMP_ALL;
        sel->obj = v.index;
        return sel;
    }
    if (v.kind == V_SEL && v.sel->kind == SEL_TRI && v.sel->component == COMP_ALL)
        return v.sel;
    char what[128], desc[192];
    value_describe(&v, what, sizeof what);
    static const char *kinds[] = { "rod", "shell", "body", "lattice", "solid" };
    if (v.kind == V_OBJ)
        snprintf(desc, sizeof desc, "`%s` is a %s", e->objs.a[v.index].name, kinds[e->objs.a[v.index].kind]);
    else
        snprintf(desc, sizeof desc, "this is %s", what);
    Diag *d = diag_error(x->loc, "`pressure` acts on a shell or on triangles of one, but %s", desc);
    if (v.kind == V_OBJ && e->objs.a[v.index].kind == SRD_OBJ_SOLID)
        diag_hint(d, "a solid is inflated through its cavities: `pressure %s.cavity = 20 kPa;`", e->objs.a[v.index].name);
    else
        diag_hint(d, "for example `pressure balloon = 2 kPa;` or `pressure sheet.triangles where z > 0 = 2 kPa;`");
    return NULL;
}

/* `pressure S.cavity`: the solid S, or -1 (and an error when it has no cavity); -2 when the
 * target is something else. */
static int pressure_cavity(Elab *e, Expr *x)
{
    if (x->kind != EX_MEMBER || x->has_args || strcmp(x->str, "cavity"))
        return -2;
    Value v = eval_expr(e, x->a);
    if (v.kind != V_OBJ || e->objs.a[v.index].kind != SRD_OBJ_SOLID)
        return -2;
    const ElabObj *o = &e->objs.a[v.index];
    if (o->broken)
        return -1;
    if (o->n_cavity == 0) {
        Diag *d = diag_error(x->loc, "solid `%s` has no cavity", o->name);
        diag_hint(d, "a generated box takes `cavity = box(size, origin);`; an imported mesh's cavities are its closed "
                     "inner surfaces");
        return -1;
    }
    return v.index;
}

static void exec_pressure(Elab *e, Stmt *s)
{
    static const PropSpec spec = { BK_COUNT, "the value of `pressure`", P_NUM, 1, -1, 1, -2, 0, true, true, NULL, "", false, false };
    int solid = pressure_cavity(e, s->target);
    if (solid == -1)
        return;
    Sel *tris = solid >= 0 ? NULL : pressure_triangles(e, s->target);
    Value v = eval_expr(e, s->value);
    if ((!tris && solid < 0) || v.kind == V_ERR)
        return;
    if (v.kind == V_NUM && v.n == 1 && (v.any_dims || dims_eq(v.dims, props_dims(&spec))) && !v.known) {
        /* changes with time: a schedule kernel evaluates it each step */
    } else if (!check_prop(e, &spec, v, s->value, NULL)) {
        return;
    }
    PendingPressure pp = { tris, solid, v.known ? value_dual(&v, 0) : dual_const(0),
                           v.known ? -1 : elab_remember_expr(e, s->value), s->loc };
    DPUSH(e->pressures, pp);
}

/* Binds x, y, z to each node's reference position, a value known only per node: expressions
 * that vary over a selection (motions, actuations) are kept as run-time expressions. The caller
 * restores e->scope. */
static void bind_node_position(Elab *e, SrcLoc loc)
{
    static const char *axes[3] = { "x", "y", "z" };
    for (int c = 0; c < 3; c++) {
        Value pv = value_num(NAN, dims_of(1, 0, 0, 0));
        pv.known = false;
        pv.param = "position";
        scope_bind(e, axes[c], pv, loc, BIND_BUILTIN);
    }
}

/* The nodes a prescribed motion drives: whole nodes only. */
static Sel *motion_nodes(Elab *e, Stmt *s, const char *what)
{
    Sel *sel = operand_sel(e, s->target, what);
    if (!sel)
        return NULL;
    if (sel->component != COMP_ALL) {
        Diag *d = diag_error(s->target->loc, "`%s` drives whole nodes, not one component", what);
        diag_hint(d, "give the motion as a vector: `move sel = (0, 0, 1 cm * sin(2*pi*1 Hz*t));`");
        return NULL;
    }
    return select_nodes(e, sel);
}

/* The axis of a `rotate`: `about` and a dimensionless 3-vector that is not zero. */
static bool rotation_axis(Elab *e, Stmt *s, double *axis)
{
    if (strcmp(s->name, "about")) {
        Diag *d = diag_error(s->name_loc, "expected `about` after the selection of `rotate`, found `%s`", s->name);
        diag_hint(d, "write `rotate arm.start about (0, 0, 1) = 30 deg * ramp(t, 0 s, 1 s);`");
        return false;
    }
    Value a = eval_expr(e, s->every);
    if (a.kind == V_ERR)
        return false;
    bool vector = a.kind == V_NUM && a.n == 3 && a.known && dims_eq(a.dims, dims_of(0, 0, 0, 0));
    double len = vector ? sqrt(a.v[0] * a.v[0] + a.v[1] * a.v[1] + a.v[2] * a.v[2]) : 0;
    if (vector && !(len > 0)) {
        diag_error(s->every->loc, "the axis of a rotation must not be the zero vector");
        return false;
    }
    if (!vector) {
        char have[128];
        value_describe(&a, have, sizeof have);
        Diag *d = diag_error(s->every->loc, "the axis of a rotation must be a nonzero dimensionless 3-vector known "
                                            "when the model is built, but this is %s", have);
        diag_hint(d, "for example `about (0, 0, 1)`");
        return false;
    }
    for (int c = 0; c < 3; c++)
        axis[c] = a.v[c] / len;
    return true;
}

/* `move sel = u;` (a displacement from the reference, a length 3-vector) and `rotate sel about
 * axis = angle;`: the nodes become constraints whose values follow the expression of time. */
static void exec_motion(Elab *e, Stmt *s)
{
    bool rotate = s->kind == ST_ROTATE;
    const char *what = rotate ? "rotate" : "move";
    static const PropSpec move_spec = { BK_COUNT, "a prescribed displacement", P_NUM, 3, 1, 0, 0, 0, true, true, NULL,
                                        "`move` gives the displacement from the reference position, for example "
                                        "`(0 m, 0 m, 1 cm * sin(2*pi*1 Hz*t))`", false, false };
    static const PropSpec turn_spec = { BK_COUNT, "a prescribed angle", P_NUM, 1, 0, 0, 0, 0, true, true, NULL,
                                        "`rotate` gives the angle, for example `30 deg * ramp(t, 0 s, 1 s)`", false, false };
    const PropSpec *spec = rotate ? &turn_spec : &move_spec;
    PendingMotion pm = { rotate ? SRD_MOTION_ROTATE : SRD_MOTION_MOVE, NULL, -1, { 0, 0, 0 }, s->loc };
    pm.nodes = motion_nodes(e, s, what);
    if (!pm.nodes || (rotate && !rotation_axis(e, s, pm.axis)))
        return;
    /* A move may vary over the nodes: x, y, z are each node's reference position. */
    Binding *saved = e->scope;
    if (!rotate)
        bind_node_position(e, s->loc);
    Value v = eval_expr(e, s->value);
    e->scope = saved;
    if (v.kind == V_ERR)
        return;
    bool shaped = v.kind == V_NUM && v.n == spec->n && (v.any_dims || dims_eq(v.dims, props_dims(spec)));
    if (!(shaped && !v.known) && !check_prop(e, spec, v, s->value, NULL))
        return;
    pm.expr = elab_remember_expr(e, s->value);
    for (int i = 0; i < pm.nodes->n; i++)
        fix_node(e, pm.nodes->items[i], 7);
    DPUSH(e->motions, pm);
}

/* `release sel at T;`: the constraints on the region of sel stop at time T (a known time). */
static void exec_release(Elab *e, Stmt *s)
{
    if (strcmp(s->name, "at")) {
        Diag *d = diag_error(s->name_loc, "expected `at` after the selection of `release`, found `%s`", s->name);
        diag_hint(d, "write `release arm.start at 0.5 s;`");
        return;
    }
    Sel *sel = operand_sel(e, s->target, "release");
    Value v = eval_expr(e, s->value);
    if (!sel || v.kind == V_ERR)
        return;
    if (v.kind != V_NUM || v.n != 1 || !v.known || !dims_eq(v.dims, dims_of(0, 0, 1, 0)) || !(v.v[0] >= 0)) {
        char have[128];
        value_describe(&v, have, sizeof have);
        Diag *d = diag_error(s->value->loc, "a release needs a time known when the model is built, but this is %s", have);
        diag_hint(d, "for example `release arm.start at 0.5 s;`");
        return;
    }
    PendingRelease r = { select_nodes(e, sel), v.v[0], value_dual(&v, 0).d, s->loc };
    DPUSH(e->releases, r);
}

typedef struct ActTarget {
    const char *name;
    int         n;
    signed char l;
    const char *what;
} ActTarget;

static const ActTarget act_targets[] = {
    { "curvature", 2, -1, "natural curvature (1/m, two components)" },
    { "twist", 1, -1, "natural twist (1/m)" },
    { "rest_length", 1, 1, "rest length of edges (m)" },
    { "E", 1, 0, "Young's modulus (Pa)" },
    { "angle", 1, 0, "natural hinge angle (rad)" },
    { "springs", 1, 0, "rest length of springs as a multiple of their reference length" },
};

static void exec_actuate(Elab *e, Stmt *s)
{
    Expr *t = s->target;
    if (t->kind != EX_MEMBER || t->has_args) {
        Diag *d = diag_error(t->loc, "`actuate` needs a target property: `finger.curvature`, `finger.twist`, "
                                     "`finger.edges.rest_length`, `finger.E` or `ray.hinges.angle`");
        (void)d;
        return;
    }
    const ActTarget *at = NULL;
    for (size_t i = 0; i < sizeof act_targets / sizeof act_targets[0]; i++)
        if (!strcmp(act_targets[i].name, t->str))
            at = &act_targets[i];
    if (!at) {
        Diag *d = diag_error(t->loc, "cannot actuate `%s`", t->str);
        const char *names[] = { "curvature", "twist", "rest_length", "E", "angle", "springs" };
        const char *close = diag_closest(t->str, names, 6);
        if (close)
            diag_hint(d, "did you mean `%s`?", close);
        else
            diag_hint(d, "actuation targets are curvature, twist, rest_length, E, angle and a lattice's springs");
        return;
    }
    Value base = eval_expr(e, t->a);
    if (base.kind == V_ERR)
        return;
    Sel *sel = NULL;
    int obj = -1;
    if (base.kind == V_OBJ) {
        obj = base.index;
    } else if (base.kind == V_SEL) {
        sel = base.sel;
        obj = sel->obj;
    } else {
        diag_error(t->a->loc, "`actuate` acts on a rod, a shell or a selection of their parts");
        return;
    }
    if (obj < 0) {
        diag_error(t->a->loc, "an actuated selection must come from one object");
        return;
    }
    const ElabObj *o = &e->objs.a[obj];
    bool rod_target = at->name[0] == 'c' || at->name[0] == 't';
    bool spring_target = !strcmp(at->name, "springs");
    if ((rod_target && o->kind != SRD_OBJ_ROD) || (!strcmp(at->name, "angle") && o->kind != SRD_OBJ_SHELL) ||
        spring_target != (o->kind == SRD_OBJ_LATTICE) || o->kind == SRD_OBJ_BODY || o->kind == SRD_OBJ_SOLID) {
        static const char *kinds[] = { "rod", "shell", "body", "lattice", "solid" };
        Diag *d = diag_error(t->loc, "%s `%s` has no %s", kinds[o->kind], o->name, spring_target ? "springs" : at->what);
        if (spring_target && o->kind == SRD_OBJ_ROD)
            diag_hint(d, "only a lattice has springs; a rod's edges take `actuate %s.edges.rest_length = ...`", o->name);
        if (o->kind == SRD_OBJ_LATTICE)
            diag_hint(d, "a lattice is actuated through its springs' rest lengths: `actuate %s.springs where x < 0 = 1 + 0.1 * "
                         "sin(2*pi*1 Hz*t);`", o->name);
        if (o->kind == SRD_OBJ_SOLID)
            diag_hint(d, "a solid is driven by the pressure in its cavities: `pressure %s.cavity = 20 kPa * ramp(t, 0 s, 1 s);`",
                      o->name);
        return;
    }
    if (!strcmp(at->name, "E") && sel) {
        diag_error(t->loc, "Young's modulus is actuated for a whole object: write `actuate %s.E = ...`", o->name);
        return;
    }
    /* Narrow by `over s in a..b` / `where`. */
    if (s->over_var || s->where) {
        Value full = base;
        if (base.kind == V_OBJ) {
            Expr m = *t;
            m.str = o->kind == SRD_OBJ_ROD ? (at->name[0] == 'r' ? "edges" : "nodes")
                  : o->kind == SRD_OBJ_LATTICE ? "springs" : "hinges";
            m.has_args = false;
            m.kind = EX_MEMBER;
            full = select_member(e, base, &m);
        }
        Expr narrow = *t;
        narrow.a = NULL;
        Value r;
        if (s->over_var) {
            narrow.kind = EX_OVER;
            narrow.str = s->over_var;
            narrow.range = s->range;
            narrow.loc = s->range->loc;
            r = select_over(e, full, &narrow);
        } else {
            narrow.kind = EX_WHERE;
            narrow.b = s->where;
            narrow.loc = s->where->loc;
            r = select_where(e, full, &narrow);
        }
        if (r.kind != V_SEL)
            return;
        sel = r.sel;
    }
    /* The value: s is the arc-length fraction of each instance. */
    /* Per instance: s is its arc-length fraction, (x, y, z) its reference position. */
    Binding *saved = e->scope;
    Value sv = value_num(NAN, DIMLESS);
    sv.known = false;
    sv.param = "s";
    scope_bind(e, "s", sv, s->loc, BIND_BUILTIN);
    bind_node_position(e, s->loc);
    Value v = eval_expr(e, s->value);
    e->scope = saved;
    if (v.kind == V_ERR)
        return;
    Dims want = !strcmp(at->name, "E") ? dims_of(-1, 1, -2, 0) : dims_of(at->l, 0, 0, 0);
    if (v.kind != V_NUM || v.n != at->n || !(v.any_dims || dims_eq(v.dims, want))) {
        char have[128];
        value_describe(&v, have, sizeof have);
        diag_error(s->value->loc, "`%s` is the %s, but this is %s", at->name, at->what, have);
        return;
    }
    PendingAct a = { at->name, obj, sel, elab_remember_expr(e, s->value), s->loc };
    DPUSH(e->acts, a);
}

static bool stencil_is_node(const Stmt *def, int k)
{
    return k < def->n_stencil && (!strcmp(def->stencil[k].kind, "node") || !strcmp(def->stencil[k].kind, "body"));
}

/* One stencil argument of `apply` for parameter k of def: one node or edge, or a selection of
 * triangles for three node parameters (k, k+1, k+2). Returns the parameters it fills, 0 after
 * an error. */
static int apply_argument(Elab *e, Expr *x, const Stmt *def, int k, PendingApply *pa, int *nn, int *ne)
{
    Sel *sel = operand_sel(e, x, "apply");
    if (!sel)
        return 0;
    bool want_node = stencil_is_node(def, k);
    if (sel->kind == SEL_TRI && sel->component == COMP_ALL && want_node && stencil_is_node(def, k + 1) &&
        stencil_is_node(def, k + 2) && !pa->tris) {
        pa->tris = sel;
        pa->tri_node = *nn;
        *nn += 3;
        return 3;
    }
    if (sel->n != 1 || sel->component != COMP_ALL || (want_node ? sel->kind != SEL_NODE : sel->kind != SEL_EDGE)) {
        const char *or_tris = sel->kind == SEL_TRI && want_node ? ", or triangles for three node arguments" : "";
        Diag *dg = diag_error(x->loc, "stencil argument `%s` must be one %s%s", def->stencil[k].name,
                              def->stencil[k].kind, or_tris);
        if (sel->kind == SEL_TRI && pa->tris)
            diag_hint(dg, "one argument of `apply` may be a selection of triangles");
        else if (sel->kind == SEL_TRI)
            diag_hint(dg, "triangles fill three `node` arguments in a row: `energy f(node a, node b, node c; ...)`");
        else
            diag_hint(dg, want_node ? "for example `arm.node(3)`, or `sheet.triangles` for three node arguments"
                                    : "for example `arm.edge(3)`");
        return 0;
    }
    if (want_node)
        pa->nodes[(*nn)++] = sel->items[0];
    else
        pa->edges[(*ne)++] = sel->items[0];
    return 1;
}

/* The stencil arguments of an `apply`: their count must fit the definition's stencil. */
static bool apply_stencil(Elab *e, Stmt *s, const Stmt *def, PendingApply *pa)
{
    int k = 0, nn = 0, ne = 0;
    bool ok = true;
    for (int i = 0; i < s->n_items; i++) {
        if (k >= def->n_stencil) {
            k++;
            continue;
        }
        int used = apply_argument(e, s->items[i], def, k, pa, &nn, &ne);
        ok &= used > 0;
        k += used > 0 ? used : 1;
    }
    if (ok && k != def->n_stencil) {
        Diag *dg = diag_error(s->loc, "`%s` acts on %d stencil argument%s, but %d %s given", def->name, def->n_stencil,
                              def->n_stencil == 1 ? "" : "s", k, k == 1 ? "was" : "were");
        diag_note(dg, def->name_loc, "`%s` is defined here", def->name);
        if (pa->tris)
            diag_hint(dg, "a selection of triangles counts as three node arguments");
        return false;
    }
    return ok;
}

static void exec_apply(Elab *e, Stmt *s)
{
    const Decl *d = elab_find_decl(e, s->name);
    if (!d || d->stmt->kind == ST_FN) {
        Diag *dg = diag_error(s->name_loc, d ? "`%s` is a function; `apply` takes an energy or a force"
                                             : "unknown energy or force `%s`", s->name);
        const char *names[256];
        int n = 0;
        for (int i = 0; i < e->decls.n && n < 256; i++)
            if (e->decls.a[i].stmt->kind != ST_FN)
                names[n++] = e->decls.a[i].stmt->name;
        const char *close = d ? NULL : diag_closest(s->name, names, n);
        if (close)
            diag_hint(dg, "did you mean `%s`?", close);
        return;
    }
    const Stmt *def = d->stmt;
    PendingApply pa = { def, s->loc, NULL, NULL, NULL, NULL, -1, 0 };
    pa.nodes = arena_alloc(e->arena, sizeof(int) * (size_t)(def->n_stencil + 1));
    pa.edges = arena_alloc(e->arena, sizeof(int) * (size_t)(def->n_stencil + 1));
    pa.data = arena_alloc(e->arena, sizeof(Dual) * (size_t)(def->n_params + 1));
    if (!apply_stencil(e, s, def, &pa))
        return;
    bool ok = true;
    Value params[32];
    int np = def->n_params < 32 ? def->n_params : 32;
    for (int k = 0; k < np; k++)
        params[k] = value_error();
    for (int i = 0; i < s->n_named; i++) {
        int k = 0;
        while (k < np && strcmp(def->params[k].name, s->arg_names[i].name))
            k++;
        if (k == np) {
            Diag *dg = diag_error(s->arg_names[i].loc, "`%s` has no parameter `%s`", def->name, s->arg_names[i].name);
            const char *names[32];
            for (int j = 0; j < np; j++)
                names[j] = def->params[j].name;
            const char *close = diag_closest(s->arg_names[i].name, names, np);
            if (close)
                diag_hint(dg, "did you mean `%s`?", close);
            ok = false;
            continue;
        }
        params[k] = eval_expr(e, s->arg_values[i]);
        if (params[k].kind != V_NUM || params[k].n != 1 || !params[k].known) {
            if (params[k].kind != V_ERR) {
                Diag *d = diag_error(s->arg_values[i]->loc,
                                     "an element parameter must be a scalar known when the model is built");
                elab_hint_input(e, d, params[k].kind == V_NUM ? params[k].param : NULL);
            }
            ok = false;
            params[k] = value_error();
        } else {
            pa.data[k] = value_dual(&params[k], 0);
        }
    }
    for (int k = 0; k < np; k++)
        if (params[k].kind == V_ERR && ok) {
            Diag *dg = diag_error(s->loc, "missing parameter `%s` of `%s`", def->params[k].name, def->name);
            diag_hint(dg, "pass it after the stencil: `apply %s(...; %s = ...)`", def->name, def->params[k].name);
            ok = false;
        }
    if (!ok)
        return;
    Value r = eval_user_element(e, def, params, np);
    if (r.kind == V_ERR)
        return;
    if (def->kind == ST_CONSTRAINT) {
        if (r.kind != V_NUM || r.n < 1 || r.n > SRD_MAX_MULTIPLIERS) {
            Diag *dg = diag_error(s->loc, "constraint `%s` must give 1 to %d numbers", def->name, SRD_MAX_MULTIPLIERS);
            diag_note(dg, def->name_loc, "`%s` is defined here", def->name);
            return;
        }
        pa.n_lambda = r.n;
        DPUSH(e->applies, pa);
        return;
    }
    bool energy = def->kind == ST_ENERGY;
    Dims want = energy ? dims_of(2, 1, -2, 0) : dims_of(1, 1, -2, 0);
    int want_n = energy ? 1 : 3;
    if (r.kind != V_NUM || r.n != want_n || !(r.any_dims || dims_eq(r.dims, want))) {
        char have[128];
        value_describe(&r, have, sizeof have);
        Diag *dg = diag_error(s->loc, "%s `%s` must give %s, but with these arguments it gives %s",
                              energy ? "energy" : "force", def->name, energy ? "an energy (N*m)" : "a 3-vector force (N)", have);
        diag_note(dg, def->name_loc, "`%s` is defined here", def->name);
        return;
    }
    DPUSH(e->applies, pa);
}

static void exec_for(Elab *e, Stmt *s)
{
    Value a = eval_expr(e, s->range->lo), b = eval_expr(e, s->range->hi);
    if (a.kind == V_ERR || b.kind == V_ERR)
        return;
    if (a.kind != V_NUM || b.kind != V_NUM || a.n != 1 || b.n != 1 || !a.known || !b.known ||
        a.v[0] != floor(a.v[0]) || b.v[0] != floor(b.v[0]) || (!a.any_dims && !dims_is_dimless(a.dims)) ||
        (!b.any_dims && !dims_is_dimless(b.dims))) {
        diag_error(s->range->loc, "a `for` range needs integer bounds known when the model is built");
        return;
    }
    double lo = a.v[0], hi = b.v[0] + (s->range->inclusive ? 1 : 0);
    if (hi <= lo) {
        Diag *d = diag_error(s->range->loc, "the range %g..%s%g is empty", a.v[0], s->range->inclusive ? "=" : "", b.v[0]);
        diag_hint(d, "`a..b` counts from a up to b-1; `a..=b` includes b");
        return;
    }
    if (hi - lo > 1e6) {
        diag_error(s->range->loc, "a `for` loop of %g iterations is too long (at most 1000000)", hi - lo);
        return;
    }
    Binding *outer = scope_lookup(e, s->name);
    if (outer && outer->kind == BIND_LOOP) {
        Diag *d = diag_error(s->name_loc, "`%s` is already the variable of an enclosing loop", s->name);
        diag_note(d, outer->loc, "the enclosing loop is here");
        diag_hint(d, "give the inner loop its own variable, for example `j`");
        return;
    }
    if (outer && !check_new_name(e, s->name, s->name_loc, false))
        return;
    e->loop_depth++;
    Binding *saved = e->scope;
    scope_bind(e, s->name, value_num(lo, DIMLESS), s->name_loc, BIND_LOOP);
    Binding *var = e->scope; /* one binding for all iterations: a loop costs no memory per turn */
    for (double i = lo; i < hi && !e->over_budget; i++) {
        var->val = value_num(i, DIMLESS);
        e->scope = var;
        int before = diag_error_count();
        exec_stmts(e, s->body, s->n_body);
        e->scope = saved;
        if (++e->work > elab_work_limit())
            elab_over_budget(e, s->range->loc);
        if (diag_error_count() > before + 20)
            break; /* one broken iteration is enough to show */
    }
    e->scope = saved;
    e->loop_depth--;
}

static void exec_block(Elab *e, Stmt *s)
{
    const char *name = NULL;
    if (s->block <= BK_SOLID || s->block == BK_JOINT || s->block == BK_RFEM) {
        name = decl_name(e, s);
        if (!name || !check_new_name(e, name, s->name_loc, true))
            return;
    }
    int objects_before = e->objs.n;
    switch (s->block) {
    case BK_MATERIAL: elab_material(e, s, name); break;
    case BK_ROD: elab_rod(e, s, name); break;
    case BK_SHELL: elab_shell(e, s, name); break;
    case BK_BODY: elab_body(e, s, name); break;
    case BK_LATTICE: elab_lattice(e, s, name); break;
    case BK_SOLID: elab_solid(e, s, name); break;
    case BK_JOINT: elab_joint(e, s, name); break;
    case BK_RFEM: elab_rfem(e, s, name); break;
    case BK_SIMULATE:
    case BK_STATIC:
    case BK_MODES: elab_analysis(e, s); break;
    case BK_OPTIMIZE: elab_optimize_declared(e, s); break;
    default: elab_environment(e, s); break;
    }
    if (s->block >= BK_ROD && s->block <= BK_SOLID && e->objs.n == objects_before) {
        /* Keep the name declared so that its later uses add no errors of their own. */
        ElabObj broken;
        memset(&broken, 0, sizeof broken);
        broken.name = name;
        static const int kinds[] = { [BK_ROD] = SRD_OBJ_ROD, [BK_SHELL] = SRD_OBJ_SHELL, [BK_BODY] = SRD_OBJ_BODY,
                                     [BK_LATTICE] = SRD_OBJ_LATTICE, [BK_SOLID] = SRD_OBJ_SOLID };
        broken.kind = kinds[s->block];
        broken.loc = s->name_loc;
        broken.broken = true;
        broken.first_node = e->node_obj.n;
        broken.first_edge = e->edge_obj.n;
        broken.first_tri = e->tri_obj.n;
        broken.first_hinge = e->hinge_edge.n;
        DPUSH(e->objs, broken);
    }
}

static void exec_stmt(Elab *e, Stmt *s)
{
    switch (s->kind) {
    case ST_USE:
    case ST_FN:
    case ST_ENERGY:
    case ST_CONSTRAINT:
    case ST_FORCE: break;
    case ST_PARAM:
    case ST_INPUT: exec_param(e, s); break;
    case ST_CONTROL: elab_control_declared(e, s); break;
    case ST_VAR:
    case ST_ASSIGN:
    case ST_VARY: break;
    case ST_LET: exec_let(e, s); break;
    case ST_BLOCK: exec_block(e, s); break;
    case ST_GRAVITY: exec_gravity(e, s); break;
    case ST_JOIN: exec_join(e, s); break;
    case ST_CLAMP: exec_clamp(e, s); break;
    case ST_FIX: exec_fix(e, s); break;
    case ST_LOAD: exec_load(e, s); break;
    case ST_PRESSURE: exec_pressure(e, s); break;
    case ST_MOVE: exec_motion(e, s); break;
    case ST_ROTATE: exec_motion(e, s); break;
    case ST_RELEASE: exec_release(e, s); break;
    case ST_ACTUATE: exec_actuate(e, s); break;
    case ST_APPLY: exec_apply(e, s); break;
    case ST_FOR: exec_for(e, s); break;
    case ST_PLANAR: e->model->planar = 1; break;
    case ST_PROP:
    case ST_OUTPUT:
    case ST_PROBE:
    case ST_RETURN: break;
    }
}

static void exec_stmts(Elab *e, Stmt **stmts, int n)
{
    for (int i = 0; i < n; i++)
        exec_stmt(e, stmts[i]);
}

/* Checks every energy and force body once with its parameters free of dimension, so
 * mistakes show even in elements that are never applied. */
static void check_element_definitions(Elab *e)
{
    for (int i = 0; i < e->decls.n; i++) {
        const Stmt *def = e->decls.a[i].stmt;
        if (def->kind == ST_FN)
            continue;
        for (int k = 0; k < def->n_stencil; k++)
            if (strcmp(def->stencil[k].kind, "node") && strcmp(def->stencil[k].kind, "edge") &&
                strcmp(def->stencil[k].kind, "body")) {
                Diag *d = diag_error(def->stencil[k].kind_loc, "unknown stencil kind `%s`", def->stencil[k].kind);
                diag_hint(d, "a stencil is made of `node`, `edge` and `body` arguments");
            }
        for (int k = 0; k < def->n_stencil + def->n_params; k++)
            for (int j = 0; j < k; j++) {
                const Ident *a = k < def->n_stencil ? &def->stencil[k] : &def->params[k - def->n_stencil];
                const Ident *b = j < def->n_stencil ? &def->stencil[j] : &def->params[j - def->n_stencil];
                if (!strcmp(a->name, b->name))
                    diag_error(a->loc, "`%s` is declared twice in the signature of `%s`", a->name, def->name);
            }
        Value params[32];
        int np = def->n_params < 32 ? def->n_params : 32;
        for (int k = 0; k < np; k++) {
            params[k] = value_num(NAN, DIMLESS);
            params[k].any_dims = true;
            params[k].known = false;
            params[k].param = def->params[k].name;
        }
        Value r = eval_user_element(e, def, params, np);
        if (def->kind == ST_CONSTRAINT) {
            if (r.kind != V_ERR && (r.kind != V_NUM || r.n < 1 || r.n > SRD_MAX_MULTIPLIERS))
                diag_error(def->name_loc, "constraint `%s` must give 1 to %d numbers (the quantities held at zero)",
                           def->name, SRD_MAX_MULTIPLIERS);
            continue;
        }
        if (r.kind != V_ERR && (r.kind != V_NUM || r.n != (def->kind == ST_ENERGY ? 1 : 3))) {
            char have[128];
            value_describe(&r, have, sizeof have);
            diag_error(def->name_loc, "%s `%s` must give %s, but it gives %s", def->kind == ST_ENERGY ? "energy" : "force",
                       def->name, def->kind == ST_ENERGY ? "a scalar energy" : "a 3-vector force", have);
        }
    }
}

static void bind_builtins(Elab *e)
{
    Value pi = value_num(PI, DIMLESS);
    scope_bind(e, "pi", pi, NO_LOC, BIND_BUILTIN);
    Value t = value_num(NAN, dims_of(0, 0, 1, 0));
    t.known = false;
    t.param = "t";
    scope_bind(e, "t", t, NO_LOC, BIND_BUILTIN);
    t.param = "dt";
    scope_bind(e, "dt", t, NO_LOC, BIND_BUILTIN);
    e->globals = e->scope;
}

static void elab_free(Elab *e)
{
    for (int i = 0; i < e->objs.n; i++) {
        free(e->objs.a[i].s);
        free(e->objs.a[i].spring_k);
        free(e->objs.a[i].tets);
        free(e->objs.a[i].tet_data);
        free(e->objs.a[i].tet_lame);
        free(e->objs.a[i].cavity);
    }
    free(e->objs.a);
    free(e->mats.a);
    free(e->decls.a);
    free(e->x0.a);
    free(e->node_obj.a);
    free(e->node_local.a);
    free(e->node_mass.a);
    free(e->edge_nodes.a);
    free(e->edge_obj.a);
    free(e->tri_nodes.a);
    free(e->tri_obj.a);
    free(e->hinge_edge.a);
    free(e->hinge_nodes.a);
    free(e->joins.a);
    free(e->join_locs.a);
    free(e->node_fix.a);
    free(e->edge_fix.a);
    free(e->exprs.a);
    free(e->loads.a);
    free(e->acts.a);
    free(e->applies.a);
    free(e->pressures.a);
    free(e->clamps.a);
    free(e->motions.a);
    free(e->releases.a);
    free(e->body_mass.a);
    free(e->obstacles.a);
    for (int k = 0; k < e->rigids.n; k++)
        free(e->rigids.a[k].points);
    free(e->rigids.a);
    free(e->joints.a);
    free(e->tri_edge.a);
    elab_free_names(e);
}

srd_model *elab_program(Program *prog, Arena *arena, const char *source)
{
    return elab_program_with(prog, arena, source, NULL, 0);
}

/* Elaboration itself; with a seed, the derivatives along it go to *tan. */
static srd_model *elaborate(Program *prog, Arena *arena, const char *source, const char *const *overrides,
                            int n_overrides, const ElabSeed *seed, ElabTangent *tan)
{
    Elab e;
    memset(&e, 0, sizeof e);
    if (seed) {
        e.seed = seed->param;
        e.seed_reach = seed->reach;
    }
    e.overrides = overrides;
    e.n_overrides = n_overrides;
    e.override_used = arena_alloc(arena, sizeof(bool) * (size_t)(n_overrides + 1));
    e.arena = arena;
    e.prog = prog;
    e.model = srd_model_new();
    e.model->source = strdup(source);
    e.model->ground_height_expr = -1;
    int errors_before = diag_error_count();
    bind_builtins(&e);
    collect_decls(&e, prog->stmts, prog->n_stmts);
    check_recursion(&e);
    exec_stmts(&e, prog->stmts, prog->n_stmts);
    for (int i = 0; i < n_overrides; i++)
        if (!e.override_used[i]) {
            const char *eq = strchr(overrides[i], '=');
            if (!eq) {
                diag_error(NO_LOC, "`-p %s` must have the form name=value", overrides[i]);
                continue;
            }
            char name[128];
            snprintf(name, sizeof name, "%.*s", (int)(eq - overrides[i]), overrides[i]);
            Diag *d = diag_error(NO_LOC, "the model has no param `%s` (in `-p %s`)", name, overrides[i]);
            const char *close = elab_closest_param(e.model, name);
            if (close)
                diag_hint(d, "did you mean `%s`?", close);
        }
    elab_control(&e);
    elab_optimize(&e);
    check_element_definitions(&e);
    if (diag_error_count() == errors_before) {
        elab_finalize(&e);
        elab_tangent_finish(&e, e.model, tan);
    }
    elab_tangent_free(&e);
    RunExpr *table = arena_alloc(arena, sizeof(RunExpr) * (size_t)(e.exprs.n + 1));
    if (e.exprs.n)
        memcpy(table, e.exprs.a, sizeof(RunExpr) * (size_t)e.exprs.n);
    e.model->run_exprs = table;
    e.model->n_run_exprs = e.exprs.n;
    elab_free(&e);
    if (diag_error_count() > errors_before) {
        srd_model_free(e.model);
        return NULL;
    }
    return e.model;
}

srd_model *elab_program_with(Program *prog, Arena *arena, const char *source, const char *const *overrides,
                             int n_overrides)
{
    return elaborate(prog, arena, source, overrides, n_overrides, NULL, NULL);
}

srd_model *elab_program_seeded(Program *prog, Arena *arena, const char *source, const char *const *overrides,
                               int n_overrides, const ElabSeed *seed, ElabTangent *tan)
{
    memset(tan, 0, sizeof *tan);
    return elaborate(prog, arena, source, overrides, n_overrides, seed, tan);
}

srd_model *elab_file(Arena *arena, Program *prog, const char *path, const char *stdlib_dir,
                     const char *const *overrides, int n_overrides)
{
    if (!parse_program(arena, path, stdlib_dir, prog))
        return NULL;
    return elab_program_with(prog, arena, path, overrides, n_overrides);
}

void elab_format_override(char *buf, size_t n, const srd_param *p, double value)
{
    bool unit = strcmp(p->unit, "1") != 0;
    snprintf(buf, n, "%s=%.17g%s%s", p->name, value, unit ? " " : "", unit ? p->unit : "");
}
