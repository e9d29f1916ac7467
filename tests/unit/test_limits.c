/* test_limits.c — the front end's limits on inputs too large to keep as files: deep nesting,
 * long chains, functions composed or doubled many times, many declarations, long let chains
 * in kernels. Each input is generated here; each must end in a clear error or a quick result. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "codegen.h"
#include "elab.h"
#include "lower.h"
#include "parse.h"
#include "diag_capture.h"
#include "tap.h"

static Tally tally;
static Arena arena;
static Program prog;
static char diags[16384];

/* A growing text buffer for generated programs. */
typedef struct Text {
    char  *s;
    size_t len, cap;
} Text;

static void put(Text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(Text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = 2 * (t->len + (size_t)n + 1);
        t->s = realloc(t->s, t->cap);
        if (!t->s)
            abort();
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

static void put_repeat(Text *t, const char *s, int n)
{
    for (int i = 0; i < n; i++)
        put(t, "%s", s);
}

static double seconds(void) { return (double)clock() / CLOCKS_PER_SEC; }

/* Parses and elaborates the text; the diagnostics land in `diags`. The model is kept (or NULL). */
static srd_model *build(Text *t)
{
    diag_reset();
    arena_free(&arena);
    arena_init(&arena);
    memset(&prog, 0, sizeof prog);
    srd_model *m = NULL;
    if (parse_program_text(&arena, "limits.srd", t->s, t->len, parse_stdlib_dir(), &prog))
        m = elab_program(&prog, &arena, "limits.srd");
    diag_capture(diags, sizeof diags);
    free(t->s);
    memset(t, 0, sizeof *t);
    return m;
}

static void expect_error(const char *what, Text *t, const char *message)
{
    srd_model *m = build(t);
    check(&tally, !m && strstr(diags, message), "%s: reports `%s`", what, message);
    if (m || !strstr(diags, message))
        printf("# %.400s\n", diags);
    srd_model_free(m);
}

/* 10,000 parentheses or minus signs used to exhaust bison's stack ("memory exhausted"). */
static void test_deep_nesting(void)
{
    Text t = { 0 };
    put(&t, "let a = ");
    put_repeat(&t, "(", 10000);
    put(&t, "1");
    put_repeat(&t, ")", 10000);
    put(&t, ";\n");
    expect_error("10,000 nested parentheses", &t, "expression nested too deeply (limit 256)");
    check(&tally, !strstr(diags, "memory exhausted"), "10,000 nested parentheses: no bison message");
    put(&t, "let a = ");
    put_repeat(&t, "-", 10000);
    put(&t, "1;\n");
    expect_error("10,000 minus signs", &t, "expression nested too deeply (limit 256)");
    put(&t, "let a = 2");
    put_repeat(&t, "^2", 3000);
    put(&t, ";\n");
    expect_error("3,000 powers (right-associative)", &t, "expression nested too deeply (limit 256)");
}

/* A chain of 3,000 operators is 3,000 levels deep: it overflowed the evaluator's stack. */
static void test_long_chains(void)
{
    static const char *ops[] = { "+", "*", "&&", "-" };
    for (int k = 0; k < 4; k++) {
        Text t = { 0 };
        put(&t, "let a = 1");
        for (int i = 0; i < 3000; i++)
            put(&t, "%s1%s", ops[k], i % 50 == 49 ? "\n" : "");
        put(&t, ";\n");
        char what[64];
        snprintf(what, sizeof what, "a chain of 3,000 `%s`", ops[k]);
        expect_error(what, &t, "expression nested too deeply (limit 256)");
    }
    Text t = { 0 };
    put(&t, "let a = 1");
    put_repeat(&t, " + 1", 250);
    put(&t, ";\n");
    srd_model *m = build(&t);
    check(&tally, m != NULL, "a chain of 250 `+` is within the limit");
    srd_model_free(m);
}

/* Functions whose bodies are 200 levels deep, each calling the previous at its deepest point:
 * the parser sees no deep expression, evaluation nests 2,400 levels. */
static void test_composed_functions(void)
{
    Text t = { 0 };
    put(&t, "fn f0(x) = x;\n");
    for (int i = 1; i <= 12; i++) {
        put(&t, "fn f%d(x) = f%d(x)", i, i - 1);
        put_repeat(&t, " + 1", 200);
        put(&t, ";\n");
    }
    put(&t, "let a = f12(1);\n");
    expect_error("12 functions of depth 200 composed", &t, "expression nested too deeply (limit 500)");
    /* Nested built-in calls take the most stack per level (they overflowed it at 960 levels
     * in the sanitizer build when the limit was 1000). */
    put(&t, "fn h0(x) = x;\n");
    for (int i = 1; i <= 8; i++) {
        put(&t, "fn h%d(x) = ", i);
        put_repeat(&t, "min(", 120);
        put(&t, "h%d(x)", i - 1);
        put_repeat(&t, ", 1)", 120);
        put(&t, ";\n");
    }
    put(&t, "let a = h8(1);\n");
    expect_error("8 functions of 120 nested min() composed", &t, "expression nested too deeply (limit 500)");
}

/* fn f1(x) = f0(x) + f0(x) ... doubled 24 times: 2^24 calls unless equal calls are shared. */
static void put_doubling(Text *t, int levels)
{
    put(t, "fn g0(u) = u * 0.5;\n");
    for (int i = 1; i <= levels; i++)
        put(t, "fn g%d(u) = g%d(u) + g%d(u);\n", i, i - 1, i - 1);
}

static void test_doubling_functions(void)
{
    Text t = { 0 };
    put_doubling(&t, 24);
    put(&t, "let a = g24(2);\n");
    double start = seconds();
    srd_model *m = build(&t);
    double took = seconds() - start;
    check(&tally, m != NULL, "24 doubling functions elaborate (%s)", m ? "ok" : diags);
    check(&tally, took < 5, "24 doubling functions elaborate in %.2f s (< 5 s)", took);
    srd_model_free(m);
}

/* Lowers the user energy `pin` of a model built from t; returns whether it lowered. */
static bool lower_pin(Text *t, char *err, size_t err_n, int *nodes)
{
    srd_model *m = build(t);
    if (!m) {
        snprintf(err, err_n, "elaboration failed: %.300s", diags);
        return false;
    }
    int s = 0;
    while (s < m->n_sets && strcmp(m->sets[s].kind, "pin"))
        s++;
    LoweredElement le;
    bool ok = s < m->n_sets &&
              lower_element(&prog, &prog, m, lower_find_definition(&prog, "pin"), &m->sets[s], &le, err, err_n);
    if (ok) {
        *nodes = dag_size(le.dag);
        lowered_free(&le);
    }
    srd_model_free(m);
    return ok;
}

static const char *pin_model = "material steel { E = 200 GPa; nu = 0.3; rho = 7800 kg/m^3; }\n"
                               "rod beam { path = line((0, 0, 0) m, (0.1, 0, 0) m); nodes = 3; radius = 1 mm; "
                               "material = steel; }\n"
                               "clamp beam.start;\n";
static const char *pin_apply = "apply pin(beam.node(2); k = 1 N/m);\n";

static void test_lowering(void)
{
    Text t = { 0 };
    put(&t, "%s", pin_model);
    put_doubling(&t, 24);
    put(&t, "energy pin(node a; k) { let d = a.x - a.x0; return k * g24(dot(d, d)) / 16777216; }\n%s", pin_apply);
    char err[512] = "";
    int nodes = 0;
    double start = seconds();
    bool ok = lower_pin(&t, err, sizeof err, &nodes);
    double took = seconds() - start;
    check(&tally, ok, "an energy calling 24 doubling functions lowers (%s)", ok ? "ok" : err);
    check(&tally, took < 5 && nodes < 1000, "... in %.2f s (< 5 s), to %d DAG nodes", took, nodes);

    put(&t, "%s", pin_model);
    put(&t, "let c0 = 1;\n");
    for (int i = 1; i < 1500; i++)
        put(&t, "let c%d = c%d + 1;\n", i, i - 1);
    put(&t, "energy pin(node a; k) { let d = a.x - a.x0; return k * dot(d, d) * c1499; }\n%s", pin_apply);
    ok = lower_pin(&t, err, sizeof err, &nodes);
    check(&tally, !ok && strstr(err, "nested too deeply (limit 500)"),
          "an energy using a chain of 1,500 lets fails to lower with a clear error (%s)", err);

    /* The same with built-in calls, whose lowering takes more stack per level. */
    put(&t, "%s", pin_model);
    put(&t, "let c0 = 1;\n");
    for (int i = 1; i < 1500; i++)
        put(&t, "let c%d = max(min(c%d, 1e9), -1e9) + 1;\n", i, i - 1);
    put(&t, "energy pin(node a; k) { let d = a.x - a.x0; return k * dot(d, d) * c1499; }\n%s", pin_apply);
    ok = lower_pin(&t, err, sizeof err, &nodes);
    check(&tally, !ok && strstr(err, "nested too deeply (limit 500)"),
          "an energy using a chain of 1,500 lets of min and max fails to lower with a clear error (%s)", err);
}

/* A reduced coordinate (an input computed from the DOFs in the kernel's loop body) that is an
 * affine expression 40,000 nodes deep: body lets build it without any recursion, and code
 * generation followed it by recursion until the sanitizer build's stack overflowed. */
static void test_deep_reduced_input(void)
{
    ExprDag *d = dag_new();
    ExprId u = dag_input(d, 0);
    for (int i = 0; i < 20000; i++)
        u = dag_add(d, dag_mul(d, u, dag_const(d, i % 2 ? 0.5 : 2.0)), dag_const(d, 1.0));
    ExprId z = dag_input(d, 1);
    KernelInput inputs[2] = { { KIN_DOF, 0 }, { KIN_EXPR, u } };
    ExprId res[1] = { dag_mul(d, dag_const(d, 2.0), z) }, jac[1] = { dag_const(d, 2.0) };
    KernelSpec spec = { .kind = "deep", .dag = d, .n_inputs = 2, .inputs = inputs, .nd = 1,
                        .value = dag_mul(d, z, z), .res = res, .jac = jac, .lanes = 1 };
    LLVMModuleRef M = LLVMModuleCreateWithName("deep");
    CodegenStats st = { 0, 0 };
    cg_emit_kernel(M, &spec, 1000, &st);
    check(&tally, st.ops > 0, "a reduced coordinate 40,000 nodes deep is emitted (%d operations)", st.ops);
    LLVMDisposeModule(M);
    dag_free(d);
}

/* 40,000 lets (160,000 took six minutes when each name was looked up by a linear scan). */
static void test_many_lets(void)
{
    Text t = { 0 };
    for (int i = 0; i < 40000; i++)
        put(&t, "let a%d = %d;\n", i, i);
    put(&t, "let total = a0 + a39999;\n");
    double start = seconds();
    srd_model *m = build(&t);
    double took = seconds() - start;
    check(&tally, m != NULL, "40,000 lets elaborate (%.200s)", m ? "ok" : diags);
    check(&tally, took < 5, "40,000 lets elaborate in %.2f s (< 5 s)", took);
    srd_model_free(m);
}

/* A loop body of n lets, 30 times (the body's names were searched in order: at 20,000 lets,
 * 10 s). Its lookups must still find the loop variable, the body's own lets of each dimension,
 * the globals below them and a function's argument (a call switches to another chain), and name
 * an unknown name. */
static Text local_lets(int n, const char *last)
{
    Text t = { 0 };
    put(&t, "let g = 1000;\nlet w = 1 m;\nfn f(x) = x + g;\nfor i in 1..30 {\n  let s0 = 1 s;\n  let a0 = i + f(0);\n");
    for (int k = 1; k < n; k++)
        put(&t, "  let a%d = a%d + f(1) - g;\n", k, k - 1);
    put(&t, "  for j in 1..2 { let inner = j * a%d * s0 + s0; }\n  let chk = %s;\n}\nlet chk2 = w + 1 m;\n", n - 1, last);
    return t;
}

/* Seconds to elaborate local_lets(n, last); *ok when it made a model without errors. */
static double local_lets_seconds(int n, const char *last, bool *ok)
{
    Text t = local_lets(n, last);
    double start = seconds();
    srd_model *m = build(&t);
    double took = seconds() - start;
    *ok = m != NULL && diag_error_count() == 0;
    srd_model_free(m);
    free(t.s);
    return took;
}

/* Linear in the lets (their time scales as n, where a search in order scales as n^2): four
 * times the lets take under eight times as long (4 when linear, 16 when quadratic). */
static void test_many_local_lets(void)
{
    bool ok_small, ok_big, ok_unknown;
    const char *sum = "s0 + a%d * 1 s + (w - g * 1 mm) * (1 s / 1 m)";
    char last[128];
    snprintf(last, sizeof last, sum, 4999);
    double small = local_lets_seconds(5000, last, &ok_small);
    snprintf(last, sizeof last, sum, 19999);
    double big = local_lets_seconds(20000, last, &ok_big);
    check(&tally, ok_small && ok_big, "loops of 30 bodies of 5,000 and 20,000 lets elaborate (%.200s)", diags);
    check(&tally, big < 8 * small, "30 bodies of 20,000 lets take %.2f s, of 5,000 %.2f s: %.1f times (< 8; a search in "
          "order: 16)", big, small, big / small);
    local_lets_seconds(1000, "s0 + nope", &ok_unknown);
    check(&tally, !ok_unknown && strstr(diags, "unknown name `nope`"), "an unknown name among 1,000 lets is named "
          "(%.200s)", diags);
}

/* A -p value that overflows in SI (1e308 GPa) is refused where it is given. */
static void test_infinite_override(void)
{
    const char *text = "param youngs = 1 MPa;\nlet e2 = 2 * youngs;\n";
    const char *overrides[1] = { "youngs=1e308 GPa" };
    diag_reset();
    arena_free(&arena);
    arena_init(&arena);
    memset(&prog, 0, sizeof prog);
    srd_model *m = NULL;
    if (parse_program_text(&arena, "limits.srd", text, strlen(text), parse_stdlib_dir(), &prog))
        m = elab_program_with(&prog, &arena, "limits.srd", overrides, 1);
    check(&tally, !m && diag_error_count() == 1, "-p youngs=1e308 GPa is one error (%d)", diag_error_count());
    srd_model_free(m);
    diag_reset();
}

int main(void)
{
    arena_init(&arena);
    test_deep_nesting();
    test_long_chains();
    test_composed_functions();
    test_doubling_functions();
    test_lowering();
    test_deep_reduced_input();
    test_many_lets();
    test_many_local_lets();
    test_infinite_override();
    arena_free(&arena);
    diag_reset();
    printf("%d checks, %d failed\n", tally.run, tally.failed);
    return tally.failed != 0;
}
