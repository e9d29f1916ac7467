/* test_lexer_parser.c — unit tests of the scanner and parser (grammar/srd.l, grammar/srd.y via
 * parse.c): statement kinds and fields, operator precedence, how units bind, ranges, named
 * arguments, locations, syntax error counts and recovery. */
#include "parse.h"
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static Arena arena;

/* Parses `text`; returns the statements and stores the syntax error count. Diagnostics are
 * discarded. */
static PtrVec parse(const char *text, int *errors)
{
    diag_reset();
    PtrVec out = { 0 };
    int n = parse_source(&arena, "test.srd", text, strlen(text), &out);
    if (errors)
        *errors = n;
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        diag_flush(null);
        fclose(null);
    }
    return out;
}

/* The only statement of a snippet that must parse cleanly. */
static Stmt *one_stmt(Tally *t, const char *text)
{
    int errors;
    PtrVec v = parse(text, &errors);
    check(t, errors == 0 && v.len == 1, "`%s` parses into one statement (%d errors, %d statements)", text, errors, v.len);
    return errors == 0 && v.len == 1 ? v.items[0] : NULL;
}

/* The value of `let a = EXPR;`. */
static Expr *expr_of(Tally *t, const char *expr_text)
{
    char buf[512];
    snprintf(buf, sizeof buf, "let a = %s;", expr_text);
    Stmt *s = one_stmt(t, buf);
    return s && s->kind == ST_LET ? s->value : NULL;
}

static bool is_num(const Expr *e, double v) { return e && e->kind == EX_NUM && fabs(e->num - v) <= 1e-12 * fabs(v); }
static bool is_name(const Expr *e, const char *n) { return e && e->kind == EX_NAME && !strcmp(e->str, n); }
static bool is_bin(const Expr *e, BinOp op) { return e && e->kind == EX_BIN && e->op == op; }
static bool is_unit(const Expr *e, const char *u) { return e && e->kind == EX_UNIT && !strcmp(e->str, u); }

/* ---- statements ---- */

static void test_statements(Tally *t)
{
    Stmt *s;
    s = one_stmt(t, "use std.springs;");
    check(t, s && s->kind == ST_USE && !strcmp(s->name, "std.springs"), "use keeps the dotted module name");
    s = one_stmt(t, "use parts.contact;");
    check(t, s && s->kind == ST_USE && !strcmp(s->name, "parts.contact"), "a module path may end in the keyword `contact`");

    s = one_stmt(t, "param kappa0 = 15.7 /m;");
    check(t, s && s->kind == ST_PARAM && !strcmp(s->name, "kappa0") && !s->range, "param without a range");
    check(t, s && is_unit(s->value, "/m") && is_num(s->value->a, 15.7), "`15.7 /m` is 15.7 with the unit /m");
    check(t, s && s->name_loc.line == 1 && s->name_loc.col == 7 && s->name_loc.end_col == 12, "param name location 1:7-12");

    s = one_stmt(t, "param E0 = 20 GPa in 1 MPa..100 GPa;");
    check(t, s && s->kind == ST_PARAM && s->range && !s->range->inclusive, "param with a range");
    check(t, s && s->range && is_unit(s->range->lo, "MPa") && is_unit(s->range->hi, "GPa"), "range bounds keep their units");

    s = one_stmt(t, "let w = 2mm;");
    check(t, s && s->kind == ST_LET && is_unit(s->value, "mm") && is_num(s->value->a, 2), "`2mm` is 2 with the unit mm");

    s = one_stmt(t, "fn wave(t, f) = sin(2*pi*f*t);");
    check(t, s && s->kind == ST_FN && s->n_params == 2 && !strcmp(s->params[0].name, "t") && !strcmp(s->params[1].name, "f"),
          "fn with two parameters");
    check(t, s && s->value && s->value->kind == EX_CALL && !strcmp(s->value->str, "sin") && s->n_body == 0,
          "expression-bodied fn");
    s = one_stmt(t, "fn soft(u) { let v = clamp(u, 0, 1); return v * v; }");
    check(t, s && s->kind == ST_FN && !s->value && s->n_body == 2 && s->body[0]->kind == ST_LET &&
                 s->body[1]->kind == ST_RETURN,
          "block-bodied fn: let then return");
    check(t, s && s->body[0]->value->kind == EX_CALL && !strcmp(s->body[0]->value->str, "clamp") &&
                 s->body[0]->value->n_args == 3,
          "`clamp(...)` is a call although `clamp` is a keyword");
    s = one_stmt(t, "fn zero() = 0;");
    check(t, s && s->kind == ST_FN && s->n_params == 0, "fn without parameters");

    s = one_stmt(t, "material rubber { E = 1 MPa; rho = 1100 kg/m^3; nu = 0.5; }");
    check(t, s && s->kind == ST_BLOCK && s->block == BK_MATERIAL && !strcmp(s->name, "rubber") && s->n_body == 3,
          "material block with three properties");
    check(t, s && s->n_body == 3 && s->body[1]->kind == ST_PROP && !strcmp(s->body[1]->name, "rho") &&
                 is_unit(s->body[1]->value, "kg/m^3"),
          "property `rho` with unit kg/m^3");

    s = one_stmt(t, "rod limb[i] { material = m; drag = 1; damping = 2; contact = 3; gravity = 4; let r = 1 mm; }");
    check(t, s && s->block == BK_ROD && s->index && is_name(s->index, "i"), "indexed rod declaration");
    check(t, s && s->n_body == 6 && !strcmp(s->body[0]->name, "material") && !strcmp(s->body[1]->name, "drag") &&
                 !strcmp(s->body[2]->name, "damping") && !strcmp(s->body[3]->name, "contact") &&
                 !strcmp(s->body[4]->name, "gravity") && s->body[5]->kind == ST_LET,
          "keywords usable as property names, and `let` inside a block");
    s = one_stmt(t, "shell sheet { }");
    check(t, s && s->block == BK_SHELL && s->n_body == 0, "an empty shell block");
    s = one_stmt(t, "body hub { position = (0, 0, 0) m; mass = 10 g; }");
    check(t, s && s->block == BK_BODY && s->n_body == 2, "body block");

    static const struct {
        const char *text;
        BlockKind   kind;
    } env[] = {
        { "medium { density = 1000 kg/m^3; }", BK_MEDIUM }, { "viscous { eta = 1 Pa*s; }", BK_VISCOUS },
        { "damping { alpha = 1 /s; }", BK_DAMPING },         { "rft { ct = 1 Pa*s; cn = 2 Pa*s; }", BK_RFT },
        { "drag { cd = 1; density = 1 kg/m^3; }", BK_DRAG }, { "ground { stiffness = 1 N/m; }", BK_GROUND },
        { "simulate { dt = 1 ms; }", BK_SIMULATE },          { "static { }", BK_STATIC },
        { "modes { count = 3; }", BK_MODES },
    };
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
        s = one_stmt(t, env[i].text);
        check(t, s && s->kind == ST_BLOCK && s->block == env[i].kind && !s->name, "`%s` is a %s block", env[i].text,
              block_kind_name(env[i].kind));
    }
    s = one_stmt(t, "obstacle sphere ball { radius = 1 cm; }");
    check(t, s && s->block == BK_OBSTACLE && !strcmp(s->subkind, "sphere") && !strcmp(s->name, "ball"), "named obstacle");
    s = one_stmt(t, "obstacle box { size = (1, 1, 1) cm; }");
    check(t, s && s->block == BK_OBSTACLE && !strcmp(s->subkind, "box") && !s->name, "unnamed obstacle");
    s = one_stmt(t, "contact self { delta = 1 mm; }");
    check(t, s && s->block == BK_CONTACT && s->n_items == 1 && s->items[0]->kind == EX_NAME &&
                 !strcmp(s->items[0]->str, "self"), "contact block");
    s = one_stmt(t, "contact rope, limb[2] { delta = 1 mm; }");
    check(t, s && s->block == BK_CONTACT && s->n_items == 2 && s->items[1]->kind == EX_INDEX,
          "contact block between named objects");

    s = one_stmt(t, "simulate { output vtk \"frames\" every 10 ms; output csv \"x\"; probe tip = f.end.z every 1 ms; probe a = b; }");
    check(t, s && s->n_body == 4, "simulate with outputs and probes");
    if (s && s->n_body == 4) {
        check(t, s->body[0]->kind == ST_OUTPUT && !strcmp(s->body[0]->name, "vtk") && !strcmp(s->body[0]->str, "frames") &&
                     is_unit(s->body[0]->every, "ms"),
              "output format, file name and period");
        check(t, s->body[1]->kind == ST_OUTPUT && !s->body[1]->every, "output without a period");
        check(t, s->body[2]->kind == ST_PROBE && !strcmp(s->body[2]->name, "tip") && s->body[2]->target->kind == EX_MEMBER &&
                     !strcmp(s->body[2]->target->str, "z") && s->body[2]->every,
              "probe with a target and a period");
        check(t, s->body[3]->kind == ST_PROBE && !s->body[3]->every, "probe without a period");
    }

    s = one_stmt(t, "gravity = (0, 0, -9.81) m/s^2;");
    check(t, s && s->kind == ST_GRAVITY && is_unit(s->value, "m/s^2") && s->value->a->kind == EX_VEC &&
                 s->value->a->n_args == 3,
          "gravity is a vector with a unit");
    s = one_stmt(t, "join a.end, b.start, c.node(0);");
    check(t, s && s->kind == ST_JOIN && s->n_items == 3, "join with three operands");
    s = one_stmt(t, "clamp f.start;");
    check(t, s && s->kind == ST_CLAMP && s->target->kind == EX_MEMBER && !strcmp(s->target->str, "start"), "clamp");
    s = one_stmt(t, "fix f.node(3).z;");
    check(t, s && s->kind == ST_FIX && s->target->kind == EX_MEMBER && s->target->a->kind == EX_MEMBER &&
                 s->target->a->has_args && s->target->a->n_args == 1,
          "fix of a member of a member call");
    s = one_stmt(t, "load f.end = (175, 0, 7) N;");
    check(t, s && s->kind == ST_LOAD && is_unit(s->value, "N"), "load");

    s = one_stmt(t, "actuate f.curvature = (k, 0);");
    check(t, s && s->kind == ST_ACTUATE && !s->over_var && !s->where && !strcmp(s->target->str, "curvature"), "plain actuate");
    s = one_stmt(t, "actuate finger.curvature over s in 0.25..1 = (kappa0 * sin(2*pi*3 Hz*t - 2*pi*s), 0);");
    check(t, s && s->kind == ST_ACTUATE && s->over_var && !strcmp(s->over_var, "s") && s->range &&
                 is_num(s->range->lo, 0.25) && is_num(s->range->hi, 1) && s->value->kind == EX_VEC,
          "actuate over s in a range");
    s = one_stmt(t, "actuate plate.hinges.angle where x >= 5 cm = 0.5;");
    check(t, s && s->kind == ST_ACTUATE && s->where && is_bin(s->where, OP_GE) && is_num(s->value, 0.5),
          "actuate where a condition");

    s = one_stmt(t, "energy pin(node a, edge e; k, l0) { let d = a.x - a.x0; return k * dot(d, d); }");
    check(t, s && s->kind == ST_ENERGY && s->n_stencil == 2 && !strcmp(s->stencil[0].kind, "node") &&
                 !strcmp(s->stencil[0].name, "a") && !strcmp(s->stencil[1].kind, "edge") && s->n_params == 2 &&
                 s->n_body == 2,
          "energy with a node and an edge stencil and two parameters");
    s = one_stmt(t, "energy free(node a) { return 0; }");
    check(t, s && s->kind == ST_ENERGY && s->n_stencil == 1 && s->n_params == 0, "energy without parameters");
    s = one_stmt(t, "force wind(node a; c) = c * (0, 1, 0);");
    check(t, s && s->kind == ST_FORCE && s->value && s->n_params == 1, "expression-bodied force");
    s = one_stmt(t, "force push(node a) = (1, 0, 0) N;");
    check(t, s && s->kind == ST_FORCE && s->value && s->n_params == 0, "force without parameters");
    s = one_stmt(t, "force brake(node a; eta) { return -eta * a.v; }");
    check(t, s && s->kind == ST_FORCE && !s->value && s->n_body == 1, "block-bodied force");

    s = one_stmt(t, "apply spring(a.end, b.start; k = 10 N/m, l0 = 1 m);");
    check(t, s && s->kind == ST_APPLY && !strcmp(s->name, "spring") && s->n_items == 2 && s->n_named == 2 &&
                 !strcmp(s->arg_names[0].name, "k") && !strcmp(s->arg_names[1].name, "l0") &&
                 is_unit(s->arg_values[0], "N/m"),
          "apply with stencil arguments, `;`, named parameters");
    s = one_stmt(t, "apply spring(a.end, b.start, k = 10 N/m, l0 = 1 m);");
    check(t, s && s->kind == ST_APPLY && s->n_items == 2 && s->n_named == 2 && !strcmp(s->arg_names[1].name, "l0"),
          "apply with named parameters mixed into one list");
    s = one_stmt(t, "apply nothing();");
    check(t, s && s->kind == ST_APPLY && s->n_items == 0 && s->n_named == 0, "apply without arguments");

    s = one_stmt(t, "for i in 0..7 { let a = i; rod limb[i] { } join limb[i].start, hub; }");
    check(t, s && s->kind == ST_FOR && !strcmp(s->name, "i") && !s->range->inclusive && is_num(s->range->lo, 0) &&
                 is_num(s->range->hi, 7) && s->n_body == 3,
          "for loop with a body of three statements");
    s = one_stmt(t, "for j in 1..=n { }");
    check(t, s && s->kind == ST_FOR && s->range->inclusive && is_name(s->range->hi, "n") && s->n_body == 0,
          "inclusive for range, empty body");
    s = one_stmt(t, "planar;");
    check(t, s && s->kind == ST_PLANAR, "planar");

    int errors;
    PtrVec v = parse("// only a comment\n/* and a block\n comment */\n", &errors);
    check(t, errors == 0 && v.len == 0, "comments only: no statements, no errors");
    v = parse("", &errors);
    check(t, errors == 0 && v.len == 0, "an empty file");
    v = parse("param a = 1;\nparam b = 2;\r\nlet c = a + b;", &errors);
    check(t, errors == 0 && v.len == 3, "three statements, CRLF and no final newline");
}

/* ---- expressions ---- */

static void test_expressions(Tally *t)
{
    Expr *e;
    e = expr_of(t, "-x^2");
    check(t, e && e->kind == EX_NEG && is_bin(e->a, OP_POW) && is_name(e->a->a, "x"), "-x^2 is -(x^2)");
    e = expr_of(t, "2^3^2");
    check(t, is_bin(e, OP_POW) && is_num(e->a, 2) && is_bin(e->b, OP_POW), "`^` is right-associative");
    e = expr_of(t, "1 + 2 * 3");
    check(t, is_bin(e, OP_ADD) && is_bin(e->b, OP_MUL), "* binds tighter than +");
    e = expr_of(t, "1 - 2 - 3");
    check(t, is_bin(e, OP_SUB) && is_bin(e->a, OP_SUB) && is_num(e->b, 3), "- is left-associative");
    e = expr_of(t, "8 / 4 / 2");
    check(t, is_bin(e, OP_DIV) && is_bin(e->a, OP_DIV), "/ is left-associative");
    e = expr_of(t, "(1 + 2) * 3");
    check(t, is_bin(e, OP_MUL) && is_bin(e->a, OP_ADD), "parentheses group");
    e = expr_of(t, "a ? b : c");
    check(t, e && e->kind == EX_COND && is_name(e->a, "a") && is_name(e->b, "b") && is_name(e->c, "c"), "a ? b : c");
    e = expr_of(t, "a ? b : c ? d : e");
    check(t, e && e->kind == EX_COND && e->c && e->c->kind == EX_COND, "?: nests to the right");
    e = expr_of(t, "t < 1 s ? 1 : 0");
    check(t, e && e->kind == EX_COND && is_bin(e->a, OP_LT), "the condition of ?: is a comparison");
    e = expr_of(t, "a < b && c >= d || !e");
    check(t, is_bin(e, OP_OR) && is_bin(e->a, OP_AND) && is_bin(e->a->a, OP_LT) && is_bin(e->a->b, OP_GE) &&
                 e->b->kind == EX_NOT,
          "comparison, then &&, then ||");
    e = expr_of(t, "a == b");
    check(t, is_bin(e, OP_EQ), "==");
    e = expr_of(t, "a != b + 1");
    check(t, is_bin(e, OP_NE) && is_bin(e->b, OP_ADD), "!= binds looser than +");

    /* Units bind to the number (or closing parenthesis) before them. */
    e = expr_of(t, "1/2 m");
    check(t, is_bin(e, OP_DIV) && is_num(e->a, 1) && is_unit(e->b, "m") && is_num(e->b->a, 2), "1/2 m is 1/(2 m)");
    e = expr_of(t, "3 Hz*t");
    check(t, is_bin(e, OP_MUL) && is_unit(e->a, "Hz") && is_num(e->a->a, 3) && is_name(e->b, "t"), "3 Hz*t is (3 Hz)*t");
    e = expr_of(t, "2*pi*3 Hz*t");
    check(t, is_bin(e, OP_MUL) && is_name(e->b, "t") && is_bin(e->a, OP_MUL) && is_unit(e->a->b, "Hz"),
          "2*pi*3 Hz*t is ((2*pi)*(3 Hz))*t");
    e = expr_of(t, "2 N*m");
    check(t, is_unit(e, "N*m") && is_num(e->a, 2), "2 N*m is one unit N*m");
    e = expr_of(t, "2 N * k");
    check(t, is_bin(e, OP_MUL) && is_unit(e->a, "N") && is_name(e->b, "k"), "2 N * k multiplies");
    e = expr_of(t, "15.7 /m");
    check(t, is_unit(e, "/m") && is_num(e->a, 15.7), "`15.7 /m` with a space is a unit");
    e = expr_of(t, "1/m");
    check(t, is_bin(e, OP_DIV) && is_num(e->a, 1) && is_name(e->b, "m"), "`1/m` without a space divides by the name m");
    e = expr_of(t, "10 /s * t");
    check(t, is_bin(e, OP_MUL) && is_unit(e->a, "/s"), "`10 /s * t` is (10 /s) * t");
    e = expr_of(t, "1200 kg/m^3");
    check(t, is_unit(e, "kg/m^3") && is_num(e->a, 1200), "kg/m^3 is one unit");
    e = expr_of(t, "(0, 0, -9.8) m/s^2");
    check(t, is_unit(e, "m/s^2") && e->a->kind == EX_VEC && e->a->n_args == 3 && e->a->args[2]->kind == EX_NEG,
          "a unit after a vector");
    e = expr_of(t, "(a + b) mm");
    check(t, is_unit(e, "mm") && is_bin(e->a, OP_ADD), "a unit after a parenthesised expression");
    e = expr_of(t, "2.5e9 Pa");
    check(t, is_unit(e, "Pa") && is_num(e->a, 2.5e9), "exponent notation");
    e = expr_of(t, ".5 s");
    check(t, is_unit(e, "s") && is_num(e->a, 0.5), "a number may start with a point");
    e = expr_of(t, "90 deg");
    check(t, is_unit(e, "deg") && is_num(e->a, 90), "degrees");
    int errors;
    PtrVec v = parse("let a = 2 m\n* 3;", &errors);
    check(t, errors == 0 && v.len == 1 && is_bin(((Stmt *)v.items[0])->value, OP_MUL),
          "an expression continues onto the next line");
    v = parse("let a = 5\nmm;", &errors);
    check(t, errors > 0, "a unit stays on its number's line (`mm` on the next line is a name)");

    /* Members, calls, indexing, slicing, where, named arguments. */
    e = expr_of(t, "finger.end.x");
    check(t, e && e->kind == EX_MEMBER && !strcmp(e->str, "x") && e->a->kind == EX_MEMBER && !strcmp(e->a->str, "end") &&
                 is_name(e->a->a, "finger"),
          "member chains");
    e = expr_of(t, "limb[3].node(2)");
    check(t, e && e->kind == EX_MEMBER && e->has_args && e->n_args == 1 && e->a->kind == EX_INDEX && is_num(e->a->b, 3),
          "an indexed object, then a member call");
    e = expr_of(t, "arm.nodes[2..5]");
    check(t, e && e->kind == EX_SLICE && !e->range->inclusive && is_num(e->range->lo, 2) && is_num(e->range->hi, 5),
          "a half-open slice");
    e = expr_of(t, "arm.nodes[0..=n - 1]");
    check(t, e && e->kind == EX_SLICE && e->range->inclusive && is_bin(e->range->hi, OP_SUB), "an inclusive slice");
    e = expr_of(t, "plate.nodes where x <= 1 cm");
    check(t, e && e->kind == EX_WHERE && e->a->kind == EX_MEMBER && is_bin(e->b, OP_LE), "where filters a selection");
    e = expr_of(t, "(plate.nodes where y == 0 m).z");
    check(t, e && e->kind == EX_MEMBER && !strcmp(e->str, "z") && e->a->kind == EX_WHERE, "a member of a parenthesised where");
    e = expr_of(t, "arm.edges over s in 0.25..1");
    check(t, e && e->kind == EX_OVER && !strcmp(e->str, "s") && is_num(e->range->lo, 0.25), "over as an expression");
    e = expr_of(t, "arc((0, 0, 0) m, 5 cm, 0, 90 deg, axis = (0, -1, 0))");
    check(t, e && e->kind == EX_CALL && e->n_args == 5 && !e->arg_names[0] && !e->arg_names[3] && e->arg_names[4] &&
                 !strcmp(e->arg_names[4], "axis") && e->args[4]->kind == EX_VEC,
          "positional then named call arguments");
    e = expr_of(t, "rectangle(length = 1 m, width = 2 m, spacing = 1 cm)");
    check(t, e && e->n_args == 3 && !strcmp(e->arg_names[0], "length") && !strcmp(e->arg_names[2], "spacing"),
          "only named arguments");
    e = expr_of(t, "f()");
    check(t, e && e->kind == EX_CALL && e->has_args && e->n_args == 0, "a call without arguments");
    e = expr_of(t, "\"a \\\"quoted\\\" word\\n\"");
    check(t, e && e->kind == EX_STR && !strcmp(e->str, "a \"quoted\" word\n"), "string escapes");
    e = expr_of(t, "(1, 2)");
    check(t, e && e->kind == EX_VEC && e->n_args == 2, "a 2-vector");

    /* Locations of expressions span their text. */
    e = expr_of(t, "kappa0 * sin(t)");
    check(t, e && e->loc.col == 9 && e->loc.end_col == 23, "a binary expression spans both operands (9-23, got %d-%d)",
          e ? e->loc.col : -1, e ? e->loc.end_col : -1);
    check(t, e && e->b->loc.col == 18 && e->b->loc.end_col == 23, "a call spans its name and parentheses");
    e = expr_of(t, "(1 + t)");
    check(t, e && e->loc.col == 9 && e->loc.end_col == 15, "a parenthesised expression includes its parentheses");
    e = expr_of(t, "20 mm");
    check(t, e && e->loc.col == 9 && e->loc.end_col == 13, "a number with a unit spans both");
}

/* ---- errors and recovery ---- */

static void test_errors(Tally *t)
{
    int errors;
    PtrVec v;
    v = parse("param k = 2 N/m\nparam l0 = 1 cm;", &errors);
    check(t, errors == 1, "a missing `;` at a line end is one error (got %d)", errors);

    v = parse("material rubber {\n  E = 1 MPa\n  rho = 1100 kg/m^3;\n}\nrod arm { path = line((0, 0, 0) m, (1, 0, 0) m; nodes = 3; }\n"
              "clamp arm.start\nload arm.end = (0, 0, -1) N;\nplanar;\n",
              &errors);
    check(t, errors == 3, "three mistakes in three statements are three errors (got %d)", errors);
    int blocks = 0, planar = 0;
    for (int i = 0; i < v.len; i++) {
        Stmt *s = v.items[i];
        blocks += s->kind == ST_BLOCK;
        planar += s->kind == ST_PLANAR;
    }
    check(t, blocks == 2 && planar == 1, "recovery keeps both blocks and the statement after the errors");

    v = parse("rod arm { nodes = ; radius = 1 mm; material = m; }", &errors);
    check(t, errors == 1 && v.len == 1 && ((Stmt *)v.items[0])->n_body == 2,
          "a bad property is skipped up to its `;`, the others are kept (errors %d)", errors);

    v = parse("fn f(x) {\n  let y = x * x\n  return y;\n}\nparam p = 1;", &errors);
    check(t, errors == 1 && v.len == 2, "recovery inside a function body (errors %d, statements %d)", errors, v.len);

    v = parse("simulate {\n  dt = 1 ms;\n", &errors);
    check(t, errors == 1, "an unclosed block at the end of the file is one error (got %d)", errors);
    v = parse("gravity (0, 0, -9.8) m/s^2;\nplanar;", &errors);
    check(t, errors == 1 && v.len == 1, "an unexpected token: one error, the next statement is kept");
    v = parse("param a = (1, 2;", &errors);
    check(t, errors == 1, "a missing `)` is one error");

    /* Lexical errors. */
    v = parse("clamp arm.start $;", &errors);
    check(t, errors == 1, "a stray character is one error (got %d)", errors);
    v = parse("let a = 1;\n/* open\nlet b = 2;\n", &errors);
    check(t, errors == 1 && v.len == 1, "an unterminated comment is one error; what precedes it is kept");
    v = parse("param a = 1.2.5 MPa;", &errors);
    check(t, errors == 1, "a malformed number is one error (got %d)", errors);
    v = parse("let a = \"abc", &errors);
    check(t, errors >= 1, "an unterminated string is an error");
    v = parse("let a = 1;\nlet b = 2\x01;", &errors);
    check(t, errors == 1, "a control byte is one error (got %d)", errors);

    /* Errors never stop the parser from returning: arbitrary junk is survived. */
    static const char *junk[] = { "}}}}", "{{{{", ";;;", "rod rod rod", "((((((((", "let = = = ;", "for in .. {",
                                  "apply (;)", "energy e(node) { }", "\"", "/*", "..=..", "1 2 3 4" };
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        v = parse(junk[i], &errors);
        check(t, errors >= 1, "junk `%s` gives at least one error (got %d)", junk[i], errors);
    }

    /* parse_program_text follows `use` and puts modules first. */
    diag_reset();
    Program prog = { 0 };
    const char *text = "use std.springs;\nparam k = 1 N/m;\n";
    bool ok = parse_program_text(&arena, "main.srd", text, strlen(text), parse_stdlib_dir(), &prog);
    check(t, ok && prog.n_stmts >= 3, "parse_program_text loads std.springs (%d statements)", prog.n_stmts);
    if (ok && prog.n_stmts >= 3) {
        Stmt *first = prog.stmts[0], *last = prog.stmts[prog.n_stmts - 1];
        check(t, first->kind == ST_ENERGY && last->kind == ST_PARAM, "module statements come before the main file's");
    }
    diag_reset();
    text = "use std.springs;\nuse std.springs;\n";
    ok = parse_program_text(&arena, "main.srd", text, strlen(text), parse_stdlib_dir(), &prog);
    int energies = 0;
    for (int i = 0; i < prog.n_stmts; i++)
        energies += prog.stmts[i]->kind == ST_ENERGY;
    check(t, ok && energies == 3, "a module used twice is loaded once (%d energies)", energies);
    diag_reset();
    text = "use std.nothing;\n";
    ok = parse_program_text(&arena, "main.srd", text, strlen(text), parse_stdlib_dir(), &prog);
    check(t, !ok && diag_error_count() == 1, "an unknown module fails with one error");
    diag_reset();
    text = "param a = ;\n";
    ok = parse_program_text(&arena, "main.srd", text, strlen(text), parse_stdlib_dir(), &prog);
    check(t, !ok, "parse_program_text fails on a syntax error");
    diag_reset();
}

int main(void)
{
    arena_init(&arena);
    Tally t = { 0, 0 };
    test_statements(&t);
    test_expressions(&t);
    test_errors(&t);
    arena_free(&arena);
    diag_reset();
    printf("# %d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
