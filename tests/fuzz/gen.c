/* gen.c — builds .srd programs from the grammar (grammar/srd.y, docs/language.md) steered by
 * fuzzer bytes: every statement kind, plausible objects for the elaborator to chew on, and the
 * shapes that byte-level mutation rarely reaches: long operator chains, deep nesting, big and
 * nested loops, thousands of declarations, nested fn calls and extreme numbers and units. */
#include "gen.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this size every choice is the simplest one, so that generation ends quickly. */
enum { MAX_OUT = 1 << 20, MAX_DEPTH = 6, MAX_NAMES = 64 };

typedef struct Gen {
    const uint8_t *data;
    size_t         size, pos;
    char          *buf;
    size_t         len, cap;
    int            tame;                   /* well-formed mode: programs that elaborate (below) */
    int            stencil;                /* nodes n0.. of the energy being written, or 0 */
    int            depth;                  /* expression nesting of the current production */
    int            loop_depth;             /* for loops around the current statement */
    int            n_vals, n_params, n_fns, n_mats, n_rods, n_bodies, n_shells, n_elems, n_indexed;
    int            has_simulate, n_inputs, has_control, has_optimize;
    int            fn_arity[MAX_NAMES];
    int            elem_nodes[MAX_NAMES];  /* stencil size of energy/force e<k> */
    int            elem_params[MAX_NAMES]; /* value parameters k0.. of e<k> */
} Gen;

/* The next choice in [0, n): 0 once the bytes (or the room) run out. */
static unsigned pick(Gen *g, unsigned n)
{
    if (g->pos >= g->size || g->len > MAX_OUT || n <= 1)
        return 0;
    return g->data[g->pos++] % n;
}

static void emit(Gen *g, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (g->len + (size_t)n + 1 > g->cap) {
        g->cap = (g->len + (size_t)n + 1) * 2;
        g->buf = realloc(g->buf, g->cap);
        if (!g->buf)
            abort();
    }
    vsnprintf(g->buf + g->len, (size_t)n + 1, fmt, ap);
    g->len += (size_t)n;
    va_end(ap);
}

static const char *one_of(Gen *g, const char *const *words, unsigned n) { return words[pick(g, n)]; }
#define ONE_OF(g, ...) one_of((g), (const char *const[]){ __VA_ARGS__ }, \
                              sizeof((const char *const[]){ __VA_ARGS__ }) / sizeof(const char *))

/* A count for repetition: small mostly, sometimes far beyond what hand-written tests use. */
static int big_count(Gen *g)
{
    static const int counts[] = { 2, 3, 4, 5, 7, 10, 16, 30, 64, 100, 1000, 1200, 3000, 5000, 20000, 30000 };
    return counts[pick(g, sizeof counts / sizeof *counts)];
}

/* ---- expressions ---- */

static void expr(Gen *g);

static void number(Gen *g)
{
    emit(g, "%s", ONE_OF(g, "1", "0", "2.5", ".5", "1e-3", "3", "1e308", "1e400", "1e-320", "0.0",
                          "99999999999999999999", "2.5E9", "1e-400", "7", "1e9", "2147483648", "4294967296",
                          "0.1", "1e+0", "123456789012345678901234567890e-10"));
}

static const char *unit(Gen *g)
{
    return ONE_OF(g, "m", "mm", "cm", "kg", "g", "s", "ms", "us", "Hz", "N", "Pa", "kPa", "MPa", "GPa", "J", "W",
                  "rad", "deg", "K", "min", "kg/m^3", "N/m", "N*m", "m^2", "1/m", "/m", "Pa*s", "m/s", "m/s^2",
                  "N*m^2", "m^127", "m^128", "m^256", "m^-128", "m^-129", "kg^200/kg^200", "m^99999999999");
}

static void name(Gen *g)
{
    unsigned c = pick(g, 6);
    if (c == 1 && g->n_params)
        emit(g, "p%u", pick(g, (unsigned)g->n_params));
    else if (c == 2)
        emit(g, "%s", ONE_OF(g, "pi", "t", "dt", "x", "y", "z", "s", "i", "nope"));
    else if (c == 3 && g->loop_depth)
        emit(g, "i%u", pick(g, (unsigned)g->loop_depth));
    else if (g->n_vals)
        emit(g, "v%u", pick(g, (unsigned)g->n_vals));
    else
        emit(g, "pi");
}

/* `a op a op ... op a` with n terms: the left-associative chains of issue 14. */
static void chain(Gen *g)
{
    int n = big_count(g);
    const char *op = g->tame ? ONE_OF(g, "+", "*", "-", "/")
                             : ONE_OF(g, "+", "*", "-", "/", "^", "&&", "||", "<", "==");
    unsigned mix = pick(g, 3);
    for (int k = 0; k < n; k++) {
        if (k)
            emit(g, "%s", mix == 1 ? ONE_OF(g, "+", "-", "*", "/") : op);
        if (mix == 2 && k % 97 == 0)
            expr(g);
        else
            emit(g, "1");
    }
}

/* One expression wrapped d times: parentheses, negations, calls or conditionals. */
static void nesting(Gen *g)
{
    int d = big_count(g);
    static const char *const open[] = { "(", "-", "sqrt(", "!", "abs(", "(1 ? ", "min(1, ", "f0(" };
    static const char *const close[] = { ")", "", ")", "", ")", " : 0)", ")", ")" };
    unsigned k = pick(g, g->n_fns && !g->tame ? 8 : 7);
    for (int i = 0; i < d; i++)
        emit(g, "%s", open[k]);
    emit(g, "1");
    for (int i = 0; i < d; i++)
        emit(g, "%s", close[k]);
}

static void args(Gen *g, int n)
{
    for (int k = 0; k < n; k++) {
        emit(g, k ? ", " : "");
        expr(g);
    }
}

static void call(Gen *g)
{
    unsigned c = pick(g, 4);
    if (c == 1) {
        const char *f = ONE_OF(g, "atan2", "pow", "dot", "cross", "min", "max");
        emit(g, "%s(", f);
        args(g, 2);
    } else if (c == 2) {
        emit(g, "%s(", ONE_OF(g, "clamp", "min", "max", "ramp", "table"));
        args(g, (int)pick(g, 5));
    } else if (c == 3 && g->n_fns) {
        unsigned f = pick(g, (unsigned)g->n_fns);
        emit(g, "f%u(", f);
        args(g, g->fn_arity[f] + (pick(g, 8) == 7)); /* now and then one argument too many */
    } else {
        emit(g, "%s(", ONE_OF(g, "sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "tanh", "sqrt", "abs",
                               "sign", "floor", "ceil", "round", "norm", "normalize", "prev", "nosuch"));
        args(g, 1);
    }
    emit(g, ")");
}

static void selection(Gen *g)
{
    if (!g->n_rods && !g->n_bodies) {
        emit(g, "nothing.start");
        return;
    }
    if (!g->n_rods || pick(g, 4) == 1) {
        emit(g, "b%u.node", pick(g, (unsigned)(g->n_bodies ? g->n_bodies : 1)));
        return;
    }
    emit(g, "r%u", pick(g, (unsigned)g->n_rods));
    unsigned c = pick(g, 8);
    if (c == 0)
        emit(g, ".end");
    else if (c == 1)
        emit(g, ".start");
    else if (c == 2 || c == 3) {
        emit(g, ".%s(", c == 2 ? "node" : "edge");
        expr(g);
        emit(g, ")");
    } else if (c == 4) {
        emit(g, ".nodes where ");
        expr(g);
    } else if (c == 5) {
        emit(g, ".edges over s in ");
        expr(g);
        emit(g, "..");
        expr(g);
    } else if (c == 6) {
        emit(g, ".nodes[");
        expr(g);
        emit(g, "%s", ONE_OF(g, "..", "..="));
        expr(g);
        emit(g, "]");
    } else
        emit(g, ".%s", ONE_OF(g, "nodes", "edges", "x", "theta", "curvature", "E", "triangles", "z"));
}

static void vector(Gen *g)
{
    emit(g, "(");
    args(g, 2 + (int)pick(g, 3));
    emit(g, ")");
    if (pick(g, 2))
        emit(g, " %s", unit(g));
}

static void binary(Gen *g)
{
    emit(g, "(");
    expr(g);
    emit(g, " %s ", ONE_OF(g, "+", "-", "*", "/", "^", "<", "<=", ">", ">=", "==", "!=", "&&", "||"));
    expr(g);
    emit(g, ")");
}

static void expr_compound(Gen *g, unsigned c)
{
    switch (c) {
    case 0: binary(g); break;
    case 1: emit(g, "%s", ONE_OF(g, "-", "!")); expr(g); break;
    case 2: expr(g); emit(g, " ? "); expr(g); emit(g, " : "); expr(g); break;
    case 3: call(g); break;
    case 4: vector(g); break;
    case 5: selection(g); break;
    case 6: expr(g); emit(g, ".%s", ONE_OF(g, "x", "y", "z", "nope")); break;
    case 7: emit(g, "("); expr(g); emit(g, ")["); expr(g); emit(g, "]"); break;
    case 8: chain(g); break;
    case 9: nesting(g); break;
    default: emit(g, "\"%s\"", ONE_OF(g, "a.csv", "x\\ty", "\\\"", "")); break;
    }
}

/* ---- tame mode: dimensionless scalars, valid objects and statements ----
 * Random programs almost never elaborate, so lowering and differentiation would go untested.
 * Tame programs keep every value plausible and put the variety (chains, nesting, calls,
 * loops, stencil members) into dimensionless scalar expressions that scale valid constants. */

static void tame_expr(Gen *g);

/* A dimensionless view of a stencil node inside an energy or force. */
static void stencil_leaf(Gen *g)
{
    unsigned n = pick(g, (unsigned)g->stencil);
    switch (pick(g, 4)) {
    case 0: emit(g, "n%u.x.%c / 1 m", n, "zxy"[pick(g, 3)]); break;
    case 1: emit(g, "norm(n%u.x - n%u.x0) / 1 m", n, n); break;
    case 2: emit(g, "prev(n%u.x).z / 1 m", n); break;
    default: emit(g, "n%u.v.x / (1 m/s)", n); break;
    }
}

static void tame_leaf(Gen *g)
{
    unsigned c = pick(g, 7);
    if (c == 1 && g->n_vals)
        emit(g, "v%u", pick(g, (unsigned)g->n_vals));
    else if (c == 2 && g->loop_depth)
        emit(g, "i%u", pick(g, (unsigned)g->loop_depth));
    else if (c == 3 && g->stencil)
        stencil_leaf(g);
    else if (c == 4 && g->n_params)
        emit(g, "p%u", pick(g, (unsigned)g->n_params));
    else if (c == 5)
        emit(g, "%s", ONE_OF(g, "t / 1 s", "pi", "dt / 1 ms", "1e308", "1e-300"));
    else
        emit(g, "%s", ONE_OF(g, "1", "0.5", "2", "3", "0.25", "1e-3", "10"));
}

static void tame_call(Gen *g)
{
    unsigned c = pick(g, 4);
    if (c == 1 || c == 2) {
        emit(g, "%s(", c == 1 ? ONE_OF(g, "min", "max", "atan2", "pow") : "clamp");
        tame_expr(g);
        emit(g, ", ");
        tame_expr(g);
        emit(g, c == 2 ? ", 2)" : ")");
        return;
    }
    if (c == 3 && g->n_fns) {
        unsigned f = pick(g, (unsigned)g->n_fns);
        emit(g, "f%u(", f);
        for (int k = 0; k < g->fn_arity[f]; k++) {
            emit(g, k ? ", " : "");
            tame_expr(g);
        }
        emit(g, ")");
        return;
    }
    emit(g, "%s(", ONE_OF(g, "sin", "cos", "tanh", "atan", "exp", "abs", "floor", "sign"));
    tame_expr(g);
    emit(g, ")");
}

static void tame_expr(Gen *g)
{
    unsigned c = g->depth >= MAX_DEPTH ? 0 : pick(g, 10);
    g->depth++;
    switch (c) {
    case 0: case 1: tame_leaf(g); break;
    case 2:
        emit(g, "(");
        tame_expr(g);
        emit(g, " %s ", ONE_OF(g, "+", "*", "-", "/"));
        tame_expr(g);
        emit(g, ")");
        break;
    case 3: emit(g, "-"); tame_expr(g); break;
    case 4: tame_call(g); break;
    case 5: emit(g, "("); tame_expr(g); emit(g, " < "); tame_expr(g); emit(g, " ? "); tame_expr(g);
            emit(g, " : "); tame_expr(g); emit(g, ")"); break;
    case 6: emit(g, "sqrt(1 + "); tame_expr(g); emit(g, "^2)"); break;
    case 7: emit(g, "("); chain(g); emit(g, ")"); break;
    case 8: nesting(g); break;
    default: tame_leaf(g); emit(g, "^%s", ONE_OF(g, "2", "3", "0.5", "-1")); break;
    }
    g->depth--;
}

/* (1 + |e|) times a valid quantity: positive, so a property keeps its sign rules. */
static void scaled(Gen *g, const char *quantity)
{
    if (pick(g, 2)) {
        emit(g, "%s", quantity);
        return;
    }
    emit(g, "(1 + abs(");
    tame_expr(g);
    emit(g, ")) * %s", quantity);
}

static void expr(Gen *g)
{
    if (g->tame) {
        tame_expr(g);
        return;
    }
    unsigned c = g->depth >= MAX_DEPTH ? pick(g, 3) : pick(g, 14);
    g->depth++;
    if (c == 0)
        number(g);
    else if (c == 1)
        name(g);
    else if (c == 2) {
        number(g);
        emit(g, " %s", unit(g));
    } else
        expr_compound(g, c - 3);
    g->depth--;
}

/* ---- declarations and statements ---- */

static void stmt(Gen *g, int top);

/* A value that fits its property when the bytes run out, something else otherwise. */
static void prop(Gen *g, const char *key, const char *plausible)
{
    emit(g, "  %s = ", key);
    if (!g->tame && pick(g, 4) == 3)
        expr(g);
    else
        emit(g, "%s", plausible);
    emit(g, ";\n");
}

static void material(Gen *g)
{
    emit(g, "material mat%d {\n", g->n_mats++);
    if (g->tame) {
        emit(g, "  E = ");
        scaled(g, "1 MPa");
        emit(g, ";\n  rho = 1000 kg/m^3;\n}\n");
        return;
    }
    prop(g, "E", "1 MPa");
    prop(g, "rho", "1000 kg/m^3");
    if (pick(g, 2))
        prop(g, "nu", "0.3");
    emit(g, "}\n");
}

static void rod_props(Gen *g)
{
    if (g->tame) {
        emit(g, "  path = %s;\n  nodes = 5;\n  radius = ", ONE_OF(g, "line((0, 0, 0) m, (10, 0, 0) cm)",
             "arc((0, 0, 0) m, 5 cm, 0, 90 deg, axis = (0, -1, 0))", "helix((0, 0, 0) m, 1 cm, 1 cm, 2)"));
        scaled(g, "1 mm");
        emit(g, ";\n  material = mat0;\n");
        return;
    }
    prop(g, "path", ONE_OF(g, "line((0, 0, 0) m, (10, 0, 0) cm)", "arc((0, 0, 0) m, 5 cm, 0, pi)",
                           "helix((0, 0, 0) m, 1 cm, 1 cm, 3)", "circle((0, 0, 0) m, 2 cm)"));
    prop(g, pick(g, 4) == 1 ? "spacing" : "nodes", ONE_OF(g, "5", "2", "1000", "1", "0", "1e9", "-3", "2.5"));
    prop(g, pick(g, 4) == 1 ? "section" : "radius", ONE_OF(g, "1 mm", "circular(1 mm)", "0 m", "-1 mm"));
    prop(g, "material", g->n_mats ? "mat0" : "nomat");
    if (pick(g, 3) == 1)
        prop(g, ONE_OF(g, "curvature", "twist", "EA", "EI", "GJ", "bogus"), "(1/m, 0/m)");
}

/* rod/body/shell, with an index inside loops. */
static void object(Gen *g)
{
    unsigned c = pick(g, 3);
    const char *kind = c == 0 ? "rod" : c == 1 ? "body" : "shell";
    int id = c == 0 ? g->n_rods : c == 1 ? g->n_bodies : g->n_shells;
    emit(g, "%s %c%d%s {\n", kind, "rbs"[c], id, g->loop_depth ? "[i0]" : "");
    if (c == 0)
        rod_props(g);
    else if (c == 1) {
        prop(g, "position", "(0, 0, 0) m");
        prop(g, "mass", "0.1 kg");
    } else {
        prop(g, "mesh", ONE_OF(g, "rectangle(2 cm, 1 cm, 5 mm)", "hexagon(1 cm, 5 mm)", "disc(1 cm, 5 mm)",
                               "rectangle(1 m, 1 m, 1 um)", "obj(\"missing.obj\")"));
        prop(g, "thickness", "1 mm");
        prop(g, "material", g->n_mats ? "mat0" : "nomat");
    }
    emit(g, "}\n");
    /* Indexed objects are named r0[i]: later references by plain name then fail cleanly. */
    if (!g->loop_depth)
        *(c == 0 ? &g->n_rods : c == 1 ? &g->n_bodies : &g->n_shells) += 1;
}

static void block(Gen *g, const char *head, const char *const *keys, int n_keys)
{
    emit(g, "%s {\n", head);
    int n = 1 + (int)pick(g, 5);
    for (int k = 0; k < n; k++)
        prop(g, keys[pick(g, (unsigned)n_keys)], "1");
    emit(g, "}\n");
}

static void environment(Gen *g)
{
    static const char *const keys[] = { "density", "eta", "alpha", "beta", "ct", "cn", "cd", "stiffness",
                                        "delta", "friction", "slip_velocity", "level", "normal", "incline",
                                        "height", "center", "radius", "size", "axis", "length", "angle", "spin",
                                        "point", "nope" };
    const char *head = ONE_OF(g, "medium", "viscous", "damping", "rft", "drag", "ground", "obstacle sphere",
                              "obstacle box b", "obstacle cylinder", "contact self", "obstacle blob", "obstacle plane p");
    block(g, head, keys, sizeof keys / sizeof *keys);
}

static void analysis_item(Gen *g)
{
    unsigned c = pick(g, 4);
    if (c == 1) {
        emit(g, "  output %s \"%s\"", ONE_OF(g, "vtk", "csv", "vtu"), ONE_OF(g, "f", "../up", "/abs", "a\\\\b", ""));
        if (pick(g, 2)) {
            emit(g, " every ");
            expr(g);
        }
        emit(g, ";\n");
    } else if (c == 2 && pick(g, 3) == 2) {
        emit(g, "  probe R = reaction(");
        selection(g);
        emit(g, ");\n");
    } else if (c == 2) {
        emit(g, "  probe q%u = ", pick(g, 4));
        selection(g);
        emit(g, ";\n");
    } else {
        prop(g, ONE_OF(g, "dt", "duration", "method", "tolerance", "max_iterations", "load_steps", "line_search",
                       "solver", "count", "at", "nope"),
             ONE_OF(g, "1 ms", "10 ms", "implicit_euler", "rk4", "1e-6", "25", "1e10", "off", "banded", "1e9",
                    "equilibrium"));
    }
}

static void analysis(Gen *g)
{
    emit(g, "%s {\n", ONE_OF(g, "simulate", "static", "modes"));
    int n = (int)pick(g, 8);
    for (int k = 0; k < n; k++)
        analysis_item(g);
    emit(g, "}\n");
}

static void fn_decl(Gen *g)
{
    if (g->n_fns == MAX_NAMES)
        return;
    int arity = (int)pick(g, 4), id = g->n_fns;
    emit(g, "fn f%d(", id);
    for (int k = 0; k < arity; k++)
        emit(g, "%sa%d", k ? ", " : "", k);
    if (pick(g, 2)) {
        emit(g, ") {\n  let w = ");
        expr(g);
        emit(g, ";\n  return w * ");
        expr(g);
        emit(g, ";\n}\n");
    } else {
        emit(g, ") = ");
        expr(g);
        emit(g, ";\n");
    }
    g->fn_arity[id] = arity;
    g->n_fns++;
}

/* f<k+1>(x) = f<k>(x) + f<k>(x), d levels deep: inlining doubles per level. */
static void fn_tower(Gen *g)
{
    int d = 2 + (int)pick(g, 40);
    for (int k = 0; k < d && g->n_fns < MAX_NAMES; k++) {
        int id = g->n_fns++;
        g->fn_arity[id] = 1;
        if (k == 0)
            emit(g, "fn f%d(a0) = a0 * 2;\n", id);
        else
            emit(g, "fn f%d(a0) = f%d(a0) + f%d(a0 + 1);\n", id, id - 1, id - 1);
    }
    emit(g, "let v%d = f%d(1);\n", g->n_vals++, g->n_fns - 1);
}

static void energy_body(Gen *g, int nodes)
{
    if (pick(g, 2)) {
        emit(g, " = ");
        expr(g);
        emit(g, ";\n");
        return;
    }
    emit(g, " {\n  let u = n0.x - n%d.x;\n  return ", nodes - 1);
    expr(g);
    emit(g, " * %s;\n}\n", ONE_OF(g, "dot(u, u) * 1 N/m", "norm(u)", "1 N*m", "n0.x.z * 1 N", "prev(n0.x).x * 1 N"));
}

/* energy/force e<k>(node n0, ...; k0, ...): the bodies mix the stencil with any expression. */
static void element_decl(Gen *g)
{
    if (g->n_elems == MAX_NAMES)
        return;
    int id = g->n_elems, nodes = 1 + (int)pick(g, 3), params = (int)pick(g, 3);
    emit(g, "%s e%d(", pick(g, 3) == 1 ? "force" : "energy", id);
    for (int k = 0; k < nodes; k++)
        emit(g, "%snode n%d", k ? ", " : "", k);
    if (pick(g, 3) == 2)
        emit(g, ", edge ed");
    for (int k = 0; k < params; k++)
        emit(g, "%sk%d", k ? ", " : "; ", k);
    emit(g, ")");
    energy_body(g, nodes);
    g->elem_nodes[id] = nodes;
    g->elem_params[id] = params;
    g->n_elems++;
}

static void apply_stmt(Gen *g)
{
    if (!g->n_elems) {
        emit(g, "use std.springs;\napply spring(r0.start, r0.end; k = 1 N/m, l0 = 1 cm);\n");
        return;
    }
    int id = (int)pick(g, (unsigned)g->n_elems);
    emit(g, "apply e%d(", id);
    for (int k = 0; k < g->elem_nodes[id]; k++) {
        emit(g, k ? ", " : "");
        selection(g);
    }
    for (int k = 0; k < g->elem_params[id]; k++) {
        emit(g, "%sk%d = ", k ? ", " : "; ", k);
        expr(g);
    }
    emit(g, ");\n");
}

static void for_loop(Gen *g)
{
    int i = g->loop_depth;
    emit(g, "for i%d in ", i);
    expr(g);
    emit(g, "%s", ONE_OF(g, "..", "..="));
    if (pick(g, 3) == 1)
        emit(g, "%d", big_count(g) * (pick(g, 2) ? 1 : 10));
    else
        expr(g);
    emit(g, " {\n");
    g->loop_depth++;
    int n = 1 + (int)pick(g, 3);
    for (int k = 0; k < n; k++)
        stmt(g, 0);
    g->loop_depth--;
    emit(g, "}\n");
}

/* Thousands of lets, each using the one before: name lookup and memory at scale. */
static void many_lets(Gen *g)
{
    int n = big_count(g);
    for (int k = 0; k < n; k++) {
        if (g->n_vals)
            emit(g, "let v%d = v%d + 1;\n", g->n_vals, g->n_vals - 1);
        else
            emit(g, "let v0 = 1;\n");
        g->n_vals++;
    }
}

static void let_or_param(Gen *g, int top)
{
    if (top && pick(g, 3) == 1) {
        emit(g, "param p%d = ", g->n_params);
        expr(g);
        if (pick(g, 2)) {
            emit(g, " in ");
            expr(g);
            emit(g, "..");
            expr(g);
        }
        emit(g, ";\n");
        g->n_params++;
        return;
    }
    emit(g, "let v%d = ", g->n_vals);
    expr(g);
    emit(g, ";\n");
    g->n_vals++;
}

static void input_decl(Gen *g)
{
    emit(g, "input u%d = ", g->n_inputs++);
    expr(g);
    if (pick(g, 3)) {
        emit(g, " in ");
        expr(g);
        emit(g, "..");
        expr(g);
    }
    emit(g, ";\n");
}

/* One statement of a control block: a var, a let or an assignment to anything. */
static void control_item(Gen *g)
{
    unsigned c = pick(g, 4);
    if (c == 0 || c == 1)
        emit(g, "  %s %s%u = ", c ? "let" : "var", c ? "e" : "c", pick(g, 3));
    else
        emit(g, "  %s = ", ONE_OF(g, "c0", "e0", "u0", "p0", "v0", "tip", "t", "period", "nope"));
    expr(g);
    emit(g, ";\n");
}

static void control_block(Gen *g)
{
    emit(g, "control ");
    if (pick(g, 4)) {
        emit(g, "every ");
        expr(g);
        emit(g, " ");
    }
    emit(g, "{\n");
    int n = (int)pick(g, 8);
    for (int k = 0; k < n; k++)
        control_item(g);
    emit(g, "}\n");
}

/* minimize with the objective's terms (integral, track) and reaction members in reach. */
static void objective_expr(Gen *g)
{
    switch (pick(g, 5)) {
    case 1: emit(g, "integral("); expr(g); emit(g, ")"); break;
    case 2: emit(g, "track("); expr(g); emit(g, ", \"%s\")", ONE_OF(g, "m.csv", "", "/nope.csv")); break;
    case 3: emit(g, "%s.%s", ONE_OF(g, "R", "tip", "q0", "r0"), ONE_OF(g, "mx", "fz", "my", "x", "z", "mq")); break;
    default: expr(g); break;
    }
    if (pick(g, 2)) {
        emit(g, " %s ", ONE_OF(g, "+", "*", "-", "/"));
        objective_expr(g);
    }
}

static void optimize_block(Gen *g)
{
    emit(g, "optimize {\n");
    int n = (int)pick(g, 6);
    for (int k = 0; k < n; k++)
        switch (pick(g, 4)) {
        case 0: emit(g, "  minimize = "); objective_expr(g); emit(g, ";\n"); break;
        case 1: emit(g, "  vary %s;\n", ONE_OF(g, "p0", "p0, p1", "u0", "E", "nope", "p0, p0")); break;
        case 2: prop(g, ONE_OF(g, "method", "tolerance", "max_evaluations", "nope"),
                     ONE_OF(g, "lbfgs", "mma", "slsqp", "bobyqa", "1e-10", "200", "0", "-1")); break;
        default: emit(g, "  %s", pick(g, 2) ? "probe q = r0.end;\n" : "minimize = 1;\n"); break;
        }
    emit(g, "}\n");
}

/* An input the curvature follows and a controller that sets it from its own state. */
static void tame_control(Gen *g)
{
    if (g->has_control++)
        return;
    int u = g->n_inputs++;
    emit(g, "input u%d = 0.1 in -1..1;\nactuate r0.curvature = (u%d * 1 /m, 0);\n", u, u);
    emit(g, "control every %s {\n  var acc = 0;\n  let err = ", ONE_OF(g, "5 ms", "1 ms", "2.5 ms"));
    tame_expr(g);
    emit(g, ";\n  acc = 0.5 * acc + err;\n  u%d = %s;\n}\n", u, ONE_OF(g, "acc", "sin(acc)", "acc * period / 1 ms"));
}

/* An objective of the final static block's probes (gen_program writes them) over a param of its
 * own. */
static void tame_optimize(Gen *g)
{
    if (g->has_optimize++)
        return;
    emit(g, "param w0 = 1 in 0.5..2;\noptimize {\n  minimize = ((tip.z - 1 cm) / 1 mm)^2 + (R.my / (1 mN*m))^2 + "
            "R.fz / 1 N + w0 * ");
    tame_expr(g);
    emit(g, ";\n  vary w0;\n  method = %s;\n}\n", ONE_OF(g, "lbfgs", "bobyqa", "mma", "slsqp"));
}

static void boundary(Gen *g)
{
    unsigned c = pick(g, 6);
    if (c == 0 || c == 1) {
        emit(g, "%s ", c == 0 ? "clamp" : "fix");
        selection(g);
    } else if (c == 2) {
        emit(g, "load ");
        selection(g);
        emit(g, " = ");
        expr(g);
    } else if (c == 3) {
        emit(g, "join ");
        selection(g);
        emit(g, ", ");
        selection(g);
    } else if (c == 4) {
        emit(g, "gravity = ");
        expr(g);
    } else {
        emit(g, "actuate ");
        selection(g);
        unsigned f = pick(g, 3);
        emit(g, "%s", f == 1 ? " over s in 0..1" : f == 2 ? " where s > 0.5" : "");
        emit(g, " = ");
        expr(g);
    }
    emit(g, ";\n");
}

static const char *tame_node(Gen *g, int k, char *buf, size_t n)
{
    snprintf(buf, n, "r0.node(%d)", k < 0 ? (int)pick(g, 5) : k);
    return buf;
}

/* energy/force e<k>(node n0, ...; k0): a scaled spring or push, applied to distinct nodes. */
static void tame_element(Gen *g)
{
    if (g->n_elems == MAX_NAMES)
        return;
    int id = g->n_elems++, nodes = 1 + (int)pick(g, 3), form = (int)pick(g, 3);
    emit(g, "%s e%d(", form == 2 ? "force" : "energy", id);
    for (int k = 0; k < nodes; k++)
        emit(g, "%snode n%d", k ? ", " : "", k);
    g->stencil = nodes;
    if (form == 0) {
        emit(g, "; k0) = 0.5 * k0 * dot(n0.x - n%d.x0, n0.x - n%d.x0) * ", nodes - 1, nodes - 1);
        tame_expr(g);
    } else if (form == 1) {
        emit(g, "; k0) {\n  let w = ");
        tame_expr(g);
        emit(g, ";\n  return 0.5 * k0 * norm(n0.x - n%d.x0)^2 * (1 + w^2)", nodes - 1);
    } else {
        emit(g, "; k0) = (0, 0, 1) * k0 * ");
        tame_expr(g);
    }
    g->stencil = 0;
    emit(g, "%s", form == 1 ? ";\n}\n" : ";\n");
    emit(g, "apply e%d(", id);
    char buf[32];
    for (int k = 0; k < nodes; k++)
        emit(g, "%s%s", k ? ", " : "", tame_node(g, k + 1, buf, sizeof buf));
    emit(g, "; k0 = ");
    scaled(g, form == 2 ? "1 mN" : "1 N/m");
    emit(g, ");\n");
}

static void tame_boundary(Gen *g)
{
    char buf[32];
    switch (pick(g, 6)) {
    case 0: emit(g, "fix %s.%c;\n", tame_node(g, -1, buf, sizeof buf), "yxz"[pick(g, 3)]); break;
    case 1:
        emit(g, "load %s = (0, 0, -1) mN * ", tame_node(g, -1, buf, sizeof buf));
        tame_expr(g);
        emit(g, ";\n");
        break;
    case 2: emit(g, "gravity = (0, 0, -9.81) m/s^2 * "); scaled(g, "1"); emit(g, ";\n"); break;
    case 3: emit(g, "actuate r0.curvature%s = (", pick(g, 2) ? " over s in 0.25..1" : "");
            tame_expr(g); emit(g, ", 0) * 1 m^-1;\n"); break;
    case 4:
        emit(g, "actuate r0.edges.rest_length = 2.5 cm * (1 + 0.1 * tanh(");
        tame_expr(g);
        emit(g, "));\n");
        break;
    default: emit(g, "clamp r0.end;\n"); break;
    }
}

static void tame_environment(Gen *g)
{
    emit(g, "%s\n", ONE_OF(g, "damping { alpha = 0.1 /s; beta = 1e-3 s; }", "viscous { eta = 0.1 Pa*s; }",
                             "medium { density = 1000 kg/m^3; }", "rft { ct = 0.01 Pa*s; cn = 0.1 Pa*s; }",
                             "ground { stiffness = 100 N/m; delta = 0.5 mm; friction = 0.25; level = -5 cm; }",
                             "obstacle sphere ball { center = (0.05, 0, -0.02) m; radius = 1 cm; stiffness = 10 N/m; "
                             "delta = 1 mm; }",
                             "obstacle plane belt { point = (0.1 m/s * t, 0 m, -1 cm); normal = (0, 0, 1); "
                             "stiffness = 10 N/m; delta = 1 mm; friction = 0.2; }",
                             "obstacle box jaw { center = (5 cm, 0 cm, 2 cm - 1 cm/s * t); size = (1, 1, 1) cm; "
                             "axis = (0, 1, 0); angle = 0.5 * t / 1 s; stiffness = 10 N/m; delta = 1 mm; friction = 0.3; }",
                             "contact self { stiffness = 10 N/m; delta = 0.2 mm; friction = 0.3; }"));
}

static void tame_loop(Gen *g)
{
    int i = g->loop_depth;
    emit(g, "for i%d in 0..%d {\n", i, pick(g, 4) == 3 ? big_count(g) : 3);
    g->loop_depth++;
    if (i == 0 && pick(g, 2)) /* nested loops would declare q[i] again */
        emit(g, "body q%d[i%d] { position = (0 m, i%d * 1 cm, 2 cm); mass = 1 g; }\n", g->n_indexed++, i, i);
    int n = 1 + (int)pick(g, 3);
    for (int k = 0; k < n; k++) {
        if (pick(g, 3) == 2)
            tame_loop(g);
        else {
            emit(g, "let w%d_%d = ", i, k); /* local to the loop body */
            tame_expr(g);
            emit(g, ";\n");
        }
    }
    g->loop_depth--;
    emit(g, "}\n");
}

static void tame_stmt(Gen *g)
{
    switch (pick(g, 14)) {
    case 0: emit(g, "let v%d = ", g->n_vals); tame_expr(g); emit(g, ";\n"); g->n_vals++; break;
    case 1: emit(g, "param p%d = 0.5 in 0 .. 1;\n", g->n_params++); break;
    case 2: fn_decl(g); break;
    case 3: tame_element(g); break;
    case 4: tame_boundary(g); break;
    case 5: tame_loop(g); break;
    case 6: tame_environment(g); break;
    case 7:
        if (g->has_simulate++)
            break;
        emit(g, "simulate { dt = 1 ms; duration = 3 ms; method = %s; }\n",
                 ONE_OF(g, "implicit_euler", "newmark", "rk4", "verlet", "euler", "implicit_midpoint"));
            break;
    case 8: many_lets(g); break;
    case 9: fn_tower(g); break;
    case 10: emit(g, "use std.springs;\napply spring(r0.start, r0.end; k = "); scaled(g, "1 N/m");
             emit(g, ", l0 = 1 cm);\n"); break;
    case 12: tame_control(g); break;
    case 13: tame_optimize(g); break;
    default:
        emit(g, "let v%d = ", g->n_vals++);
        if (pick(g, 2))
            chain(g);
        else
            nesting(g);
        emit(g, ";\n");
        break;
    }
}

static void stmt(Gen *g, int top)
{
    if (g->tame) {
        tame_stmt(g);
        return;
    }
    switch (pick(g, 19)) {
    case 0: let_or_param(g, top); break;
    case 1: object(g); break;
    case 2: boundary(g); break;
    case 3: fn_decl(g); break;
    case 4: element_decl(g); break;
    case 5: apply_stmt(g); break;
    case 6: for_loop(g); break;
    case 7: material(g); break;
    case 8: environment(g); break;
    case 9: analysis(g); break;
    case 10: many_lets(g); break;
    case 11: fn_tower(g); break;
    case 12: emit(g, "use std.%s;\n", ONE_OF(g, "rods", "springs", "shells", "loads", "contact", "nope")); break;
    case 13: emit(g, "planar;\n"); break;
    case 14: emit(g, "let v%d = ", g->n_vals++); chain(g); emit(g, ";\n"); break;
    case 15: input_decl(g); break;
    case 16: control_block(g); break;
    case 17: optimize_block(g); break;
    default: emit(g, "let v%d = ", g->n_vals++); nesting(g); emit(g, ";\n"); break;
    }
}

/* A material, a clamped rod and a body: with no more bytes, a model that elaborates. */
static void prelude(Gen *g)
{
    material(g);
    emit(g, "rod r0 {\n");
    rod_props(g);
    emit(g, "}\n");
    g->n_rods++;
    emit(g, "body b0 { position = (0, 0, -1) cm; mass = 1 g; }\nclamp r0.start;\n");
    g->n_bodies++;
}

char *gen_program(const uint8_t *data, size_t size, size_t *len)
{
    Gen g = { .data = data, .size = size };
    emit(&g, "// generated by tests/fuzz/gen.c\n");
    g.tame = pick(&g, 2) == 0;
    if (g.tame || pick(&g, 4) != 3)
        prelude(&g);
    int n = (int)pick(&g, 24);
    for (int k = 0; k < n; k++)
        stmt(&g, 1);
    if (g.tame || pick(&g, 3) != 2)
        emit(&g, "static { load_steps = 2; probe tip = r0.end; probe R = reaction(r0.start); }\n");
    *len = g.len;
    return g.buf;
}
