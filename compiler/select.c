/* select.c — selections: the parts of objects that statements act on (`finger.end`,
 * `plate.nodes where x <= 1 cm`, `finger.edges over s in 0.25..1`). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "elab.h"

static const char *sel_kind_name(SelKind k, int n)
{
    static const char *one[] = { "node", "edge", "triangle", "hinge" };
    static const char *many[] = { "nodes", "edges", "triangles", "hinges" };
    return n == 1 ? one[k] : many[k];
}

static const char *obj_kind_name(int kind)
{
    return kind == SRD_OBJ_ROD ? "rod" : kind == SRD_OBJ_SHELL ? "shell" : kind == SRD_OBJ_LATTICE ? "lattice" : kind == SRD_OBJ_SOLID ? "solid" : "body";
}

static Sel *sel_new(Elab *e, SelKind kind, int n, int obj)
{
    Sel *s = arena_alloc(e->arena, sizeof *s);
    s->kind = kind;
    s->n = n;
    s->items = arena_alloc(e->arena, sizeof(int) * (size_t)(n + 1));
    s->component = COMP_ALL;
    s->obj = obj;
    return s;
}

static Value sel_value(Sel *s)
{
    Value v = value_error();
    v.kind = V_SEL;
    v.sel = s;
    v.known = true;
    return v;
}

static Sel *sel_range(Elab *e, SelKind kind, int first, int n, int obj)
{
    Sel *s = sel_new(e, kind, n, obj);
    for (int i = 0; i < n; i++)
        s->items[i] = first + i;
    return s;
}

static double edge_s(Elab *e, const ElabObj *o, int edge)
{
    int a = e->edge_nodes.a[2 * edge] - o->first_node;
    int b = e->edge_nodes.a[2 * edge + 1] - o->first_node;
    double sb = (o->closed && b == 0) ? 1.0 : o->s[b];
    return 0.5 * (o->s[a] + sb);
}

/* Attaches arc-length fractions to a rod's node or edge selection. */
static void attach_s(Elab *e, Sel *s, const ElabObj *o)
{
    if (o->kind != SRD_OBJ_ROD || !o->s)
        return;
    s->s = arena_alloc(e->arena, sizeof(double) * (size_t)(s->n + 1));
    for (int i = 0; i < s->n; i++)
        s->s[i] = s->kind == SEL_NODE ? o->s[s->items[i] - o->first_node] : edge_s(e, o, s->items[i]);
}

static const char *rod_members[] = { "start", "end", "node", "nodes", "edge", "edges" };
static const char *shell_members[] = { "node", "nodes", "edge", "edges", "triangles", "hinges", "boundary" };
static const char *body_members[] = { "node" };
static const char *lattice_members[] = { "node", "nodes", "edge", "edges", "springs" };
static const char *solid_members[] = { "node", "nodes", "cavity" };

static void unknown_member(const ElabObj *o, Expr *x)
{
    const char *const *names = o->kind == SRD_OBJ_ROD ? rod_members : o->kind == SRD_OBJ_SHELL ? shell_members
                             : o->kind == SRD_OBJ_LATTICE ? lattice_members
                             : o->kind == SRD_OBJ_SOLID ? solid_members : body_members;
    int n = o->kind == SRD_OBJ_ROD ? 6 : o->kind == SRD_OBJ_SHELL ? 7 : o->kind == SRD_OBJ_LATTICE ? 5
          : o->kind == SRD_OBJ_SOLID ? 3 : 1;
    Diag *d = diag_error(x->loc, "%s `%s` has no member `%s`", obj_kind_name(o->kind), o->name, x->str);
    if (!d) /* reported already, from an earlier turn of a loop */
        return;
    const char *close = diag_closest(x->str, names, n);
    if (close)
        diag_hint(d, "did you mean `%s`?", close);
    else {
        char list[160] = "";
        for (int i = 0; i < n; i++) {
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", names[i]);
        }
        diag_hint(d, "a %s has %s", obj_kind_name(o->kind), list);
    }
}

/* An integer argument known when the model is built, within [0, count). */
static bool int_arg(Elab *e, Expr *x, int count, const char *what, const ElabObj *o, int *out)
{
    if (x->n_args != 1) {
        diag_error(x->loc, "`%s(...)` takes one index", x->str);
        return false;
    }
    Value i = eval_expr(e, x->args[0]);
    if (i.kind == V_ERR)
        return false;
    if (i.kind != V_NUM || i.n != 1 || !i.known || i.v[0] != floor(i.v[0]) || (!i.any_dims && !dims_is_dimless(i.dims))) {
        diag_error(x->args[0]->loc, "a %s index must be an integer known when the model is built", what);
        return false;
    }
    double v = i.v[0];
    if (v < 0 || v >= count) {
        Diag *d = diag_error(x->args[0]->loc, "%s index %g is out of range", what, v);
        diag_hint(d, "%s `%s` has %d %ss (0 to %d)", obj_kind_name(o->kind), o->name, count, what, count - 1);
        return false;
    }
    *out = (int)v;
    return true;
}

static Sel *boundary_nodes(Elab *e, const ElabObj *o)
{
    /* A boundary edge belongs to exactly one triangle: count edge uses over the shell. */
    int *uses = arena_alloc(e->arena, sizeof(int) * (size_t)(o->n_edges + 1));
    for (int h = o->first_hinge; h < o->first_hinge + o->n_hinges; h++)
        uses[e->hinge_edge.a[h] - o->first_edge]++;
    unsigned char *on = arena_alloc(e->arena, (size_t)o->n_nodes + 1);
    int n = 0;
    for (int k = 0; k < o->n_edges; k++) {
        if (uses[k])
            continue;
        for (int j = 0; j < 2; j++) {
            int node = e->edge_nodes.a[2 * (o->first_edge + k) + j] - o->first_node;
            if (!on[node]) {
                on[node] = 1;
                n++;
            }
        }
    }
    Sel *s = sel_new(e, SEL_NODE, n, (int)(o - e->objs.a));
    n = 0;
    for (int i = 0; i < o->n_nodes; i++)
        if (on[i])
            s->items[n++] = o->first_node + i;
    return s;
}

static Value object_member(Elab *e, int oi, Expr *x)
{
    const ElabObj *o = &e->objs.a[oi];
    const char *m = x->str;
    Sel *s = NULL;
    int idx;
    bool is_rod = o->kind == SRD_OBJ_ROD, is_shell = o->kind == SRD_OBJ_SHELL;
    if (o->kind == SRD_OBJ_BODY) {
        if (!strcmp(m, "node") && !x->has_args)
            return sel_value(sel_range(e, SEL_NODE, o->first_node, 1, oi));
        unknown_member(o, x);
        return value_error();
    }
    if (o->kind == SRD_OBJ_SOLID && !strcmp(m, "cavity")) {
        Diag *d = diag_error(x->loc, "a solid's cavity is the target of a pressure only");
        diag_hint(d, "`pressure %s.cavity = 20 kPa;` inflates every cavity of the solid", o->name);
        return value_error();
    }
    if (o->kind == SRD_OBJ_SOLID && strcmp(m, "node") && strcmp(m, "nodes")) {
        unknown_member(o, x);
        return value_error();
    }
    if (is_rod && (!strcmp(m, "start") || !strcmp(m, "end")) && !x->has_args) {
        if (o->closed) {
            diag_error(x->loc, "rod `%s` is a closed loop: it has no %s", o->name, m);
            return value_error();
        }
        s = sel_range(e, SEL_NODE, m[0] == 's' ? o->first_node : o->first_node + o->n_nodes - 1, 1, oi);
        s->rod_end = m[0] == 's' ? 1 : 2;
    } else if (!strcmp(m, "node") && x->has_args) {
        if (!int_arg(e, x, o->n_nodes, "node", o, &idx))
            return value_error();
        s = sel_range(e, SEL_NODE, o->first_node + idx, 1, oi);
    } else if (!strcmp(m, "edge") && x->has_args) {
        if (!int_arg(e, x, o->n_edges, "edge", o, &idx))
            return value_error();
        s = sel_range(e, SEL_EDGE, o->first_edge + idx, 1, oi);
    } else if (!strcmp(m, "nodes") && !x->has_args) {
        s = sel_range(e, SEL_NODE, o->first_node, o->n_nodes, oi);
    } else if ((!strcmp(m, "edges") || (o->kind == SRD_OBJ_LATTICE && !strcmp(m, "springs"))) && !x->has_args) {
        s = sel_range(e, SEL_EDGE, o->first_edge, o->n_edges, oi);
    } else if (is_shell && !strcmp(m, "triangles") && !x->has_args) {
        s = sel_range(e, SEL_TRI, o->first_tri, o->n_tris, oi);
    } else if (is_shell && !strcmp(m, "hinges") && !x->has_args) {
        s = sel_range(e, SEL_HINGE, o->first_hinge, o->n_hinges, oi);
    } else if (is_shell && !strcmp(m, "boundary") && !x->has_args) {
        s = boundary_nodes(e, o);
    } else {
        unknown_member(o, x);
        return value_error();
    }
    attach_s(e, s, o);
    return sel_value(s);
}

Value select_member(Elab *e, Value base, Expr *x)
{
    if (base.kind == V_OBJ)
        return object_member(e, base.index, x);
    if (base.kind == V_SEL && !x->has_args) {
        int c = !strcmp(x->str, "x") ? COMP_X : !strcmp(x->str, "y") ? COMP_Y : !strcmp(x->str, "z") ? COMP_Z
              : !strcmp(x->str, "theta") ? COMP_THETA : -2;
        if (c != -2 && base.sel->component == COMP_ALL &&
            ((c == COMP_THETA) == (base.sel->kind == SEL_EDGE)) &&
            (base.sel->kind == SEL_NODE || base.sel->kind == SEL_EDGE)) {
            Sel *s = arena_alloc(e->arena, sizeof *s);
            *s = *base.sel;
            s->component = c;
            return sel_value(s);
        }
        Diag *d = diag_error(x->loc, "a selection of %s has no member `%s`", sel_kind_name(base.sel->kind, 2), x->str);
        diag_hint(d, base.sel->kind == SEL_EDGE ? "edges have the component `theta`"
                                                : "nodes have the components `x`, `y` and `z`");
        return value_error();
    }
    char desc[128];
    value_describe(&base, desc, sizeof desc);
    diag_error(x->loc, "%s has no member `%s`", desc, x->str);
    return value_error();
}

static Sel *as_sel(Elab *e, Value base, Expr *x)
{
    if (base.kind == V_SEL)
        return base.sel;
    char desc[128];
    value_describe(&base, desc, sizeof desc);
    if (base.kind == V_OBJ) {
        const ElabObj *o = &e->objs.a[base.index];
        Diag *d = diag_error(x->loc, "`%s` is a %s, not a selection", o->name, obj_kind_name(o->kind));
        diag_hint(d, "select its parts first: `%s.nodes`, `%s.edges`", o->name, o->name);
    } else {
        diag_error(x->loc, "expected a selection here, but this is %s", desc);
    }
    return NULL;
}

static Sel *sel_subset(Elab *e, const Sel *from, const unsigned char *keep)
{
    int n = 0;
    for (int i = 0; i < from->n; i++)
        n += keep[i] != 0;
    Sel *s = sel_new(e, from->kind, n, from->obj);
    s->component = from->component;
    if (from->s)
        s->s = arena_alloc(e->arena, sizeof(double) * (size_t)(n + 1));
    n = 0;
    for (int i = 0; i < from->n; i++)
        if (keep[i]) {
            s->items[n] = from->items[i];
            if (from->s)
                s->s[n] = from->s[i];
            n++;
        }
    return s;
}

Value select_index(Elab *e, Value base, Expr *x)
{
    Sel *from = as_sel(e, base, x->a);
    if (!from)
        return value_error();
    Value i = eval_expr(e, x->b);
    if (i.kind == V_ERR)
        return i;
    if (i.kind != V_NUM || i.n != 1 || !i.known || i.v[0] != floor(i.v[0])) {
        diag_error(x->b->loc, "a selection index must be an integer known when the model is built");
        return value_error();
    }
    if (i.v[0] < 0 || i.v[0] >= from->n) {
        Diag *d = diag_error(x->b->loc, "index %g is out of range", i.v[0]);
        diag_hint(d, "the selection has %d %s (0 to %d)", from->n, sel_kind_name(from->kind, from->n), from->n - 1);
        return value_error();
    }
    unsigned char *keep = arena_alloc(e->arena, (size_t)from->n + 1);
    keep[(int)i.v[0]] = 1;
    return sel_value(sel_subset(e, from, keep));
}

/* Integer bounds of a..b (half-open) or a..=b (inclusive), checked against count. */
static bool int_range(Elab *e, Range *r, int count, const char *what, int *lo, int *hi)
{
    Value a = eval_expr(e, r->lo), b = eval_expr(e, r->hi);
    if (a.kind == V_ERR || b.kind == V_ERR)
        return false;
    if (a.kind != V_NUM || b.kind != V_NUM || a.n != 1 || b.n != 1 || !a.known || !b.known ||
        a.v[0] != floor(a.v[0]) || b.v[0] != floor(b.v[0])) {
        diag_error(r->loc, "a range of %s needs integer bounds known when the model is built", what);
        return false;
    }
    double l = a.v[0], h = b.v[0] + (r->inclusive ? 1 : 0);
    if (h <= l) {
        Diag *d = diag_error(r->loc, "the range %g..%s%g is empty", a.v[0], r->inclusive ? "=" : "", b.v[0]);
        diag_hint(d, "`a..b` counts from a up to b-1; `a..=b` includes b");
        return false;
    }
    if (l < 0 || h > count) {
        Diag *d = diag_error(r->loc, "the range %g..%s%g is out of range", a.v[0], r->inclusive ? "=" : "", b.v[0]);
        diag_hint(d, "there are %d %s (indices 0 to %d)", count, what, count - 1);
        return false;
    }
    *lo = (int)l;
    *hi = (int)h;
    return true;
}

Value select_slice(Elab *e, Value base, Expr *x)
{
    Sel *from = as_sel(e, base, x->a);
    if (!from)
        return value_error();
    int lo, hi;
    if (!int_range(e, x->range, from->n, sel_kind_name(from->kind, 2), &lo, &hi))
        return value_error();
    unsigned char *keep = arena_alloc(e->arena, (size_t)from->n + 1);
    for (int i = lo; i < hi; i++)
        keep[i] = 1;
    return sel_value(sel_subset(e, from, keep));
}

void select_item_position(Elab *e, SelKind k, int item, double p[3])
{
    const int *nodes;
    int n;
    switch (k) {
    case SEL_NODE: nodes = &item; n = 1; break;
    case SEL_EDGE: nodes = &e->edge_nodes.a[2 * item]; n = 2; break;
    case SEL_TRI: nodes = &e->tri_nodes.a[3 * item]; n = 3; break;
    default: nodes = &e->hinge_nodes.a[4 * item]; n = 2; break;
    }
    p[0] = p[1] = p[2] = 0;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            p[c] += e->x0.a[3 * nodes[i] + c] / n;
}

static void report_empty(Expr *x, const Sel *from)
{
    Diag *d = diag_error(x->loc, "this selection matches nothing");
    diag_hint(d, "the condition rejects all %d %s it was given", from->n, sel_kind_name(from->kind, from->n));
}

Value select_where(Elab *e, Value base, Expr *x)
{
    Sel *from = as_sel(e, base, x->a);
    if (!from)
        return value_error();
    unsigned char *keep = arena_alloc(e->arena, (size_t)from->n + 1);
    Binding *saved = e->scope;
    Dims L = dims_of(1, 0, 0, 0);
    for (int i = 0; i < from->n; i++) {
        double p[3];
        select_item_position(e, from->kind, from->items[i], p);
        e->scope = saved;
        scope_bind(e, "x", value_num(p[0], L), x->loc, BIND_BUILTIN);
        scope_bind(e, "y", value_num(p[1], L), x->loc, BIND_BUILTIN);
        scope_bind(e, "z", value_num(p[2], L), x->loc, BIND_BUILTIN);
        if (from->s)
            scope_bind(e, "s", value_num(from->s[i], DIMLESS), x->loc, BIND_BUILTIN);
        Value c = eval_expr(e, x->b);
        if (c.kind != V_NUM || c.n != 1 || !c.known || (!c.any_dims && !dims_is_dimless(c.dims))) {
            e->scope = saved;
            if (c.kind != V_ERR)
                diag_error(x->b->loc, "a `where` condition must be a comparison known when the model is built");
            return value_error();
        }
        keep[i] = c.v[0] != 0;
    }
    e->scope = saved;
    Sel *s = sel_subset(e, from, keep);
    if (s->n == 0) {
        report_empty(x, from);
        return value_error();
    }
    return sel_value(s);
}

Value select_over(Elab *e, Value base, Expr *x)
{
    Sel *from = as_sel(e, base, x->a);
    if (!from)
        return value_error();
    if (strcmp(x->str, "s")) {
        Diag *d = diag_error(x->loc, "`over` ranges over the arc-length fraction `s`, not `%s`", x->str);
        diag_hint(d, "write `over s in 0.25..1`");
        return value_error();
    }
    if (!from->s) {
        diag_error(x->loc, "`over s` needs parts of a rod (nodes or edges), which have an arc-length fraction");
        return value_error();
    }
    Value a = eval_expr(e, x->range->lo), b = eval_expr(e, x->range->hi);
    if (a.kind == V_ERR || b.kind == V_ERR)
        return value_error();
    if (a.kind != V_NUM || b.kind != V_NUM || a.n != 1 || b.n != 1 || !a.known || !b.known ||
        (!a.any_dims && !dims_is_dimless(a.dims)) || (!b.any_dims && !dims_is_dimless(b.dims))) {
        diag_error(x->range->loc, "the range of `s` must be two dimensionless numbers between 0 and 1");
        return value_error();
    }
    if (a.v[0] < 0 || b.v[0] > 1 || a.v[0] > b.v[0]) {
        Diag *d = diag_error(x->range->loc, "the range %g..%g of `s` is not within 0..1", a.v[0], b.v[0]);
        diag_hint(d, "s is the arc-length fraction: 0 at the rod's start, 1 at its end");
        return value_error();
    }
    unsigned char *keep = arena_alloc(e->arena, (size_t)from->n + 1);
    for (int i = 0; i < from->n; i++)
        keep[i] = from->s[i] >= a.v[0] - 1e-12 && from->s[i] <= b.v[0] + 1e-12;
    Sel *s = sel_subset(e, from, keep);
    if (s->n == 0) {
        report_empty(x, from);
        return value_error();
    }
    return sel_value(s);
}

Sel *select_nodes(Elab *e, Sel *from)
{
    if (from->kind == SEL_NODE)
        return from;
    int per = from->kind == SEL_EDGE ? 2 : from->kind == SEL_TRI ? 3 : 4;
    const int *src = from->kind == SEL_EDGE ? e->edge_nodes.a : from->kind == SEL_TRI ? e->tri_nodes.a : e->hinge_nodes.a;
    int total = e->x0.n / 3;
    unsigned char *mark = arena_alloc(e->arena, (size_t)total + 1);
    int n = 0;
    for (int i = 0; i < from->n; i++)
        for (int k = 0; k < per; k++) {
            int node = src[per * from->items[i] + k];
            if (!mark[node]) {
                mark[node] = 1;
                n++;
            }
        }
    Sel *s = sel_new(e, SEL_NODE, n, from->obj);
    n = 0;
    for (int i = 0; i < total; i++)
        if (mark[i])
            s->items[n++] = i;
    return s;
}
