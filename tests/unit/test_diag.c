/* test_diag.c — unit tests of diagnostics (diag.c): "did you mean" candidates, ordering by
 * position, de-duplication, the rendering of source lines, carets, notes and hints. */
#include "diag.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* Flushes the pending diagnostics into a string (caller frees). */
static char *flush_to_string(void)
{
    FILE *f = tmpfile();
    if (!f)
        return strdup("");
    diag_flush(f);
    long n = ftell(f);
    rewind(f);
    char *s = calloc((size_t)n + 1, 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n)
        s[0] = 0;
    fclose(f);
    return s;
}

/* Compares and shows both texts when they differ. */
static void check_text(Tally *t, const char *got, const char *want, const char *what)
{
    bool ok = !strcmp(got, want);
    check(t, ok, "%s", what);
    if (!ok)
        printf("# expected:\n%s# got:\n%s", want, got);
}

static SrcLoc at(int file, int line, int col, int end_line, int end_col)
{
    SrcLoc l = { file, line, col, end_line, end_col };
    return l;
}

static int add_text(const char *path, const char *text) { return src_add(path, text, strlen(text)); }

/* ---- did you mean ---- */

static void test_closest(Tally *t)
{
    static const char *props[] = { "path", "nodes", "spacing", "material", "radius", "section", "curvature", "twist" };
    int n = (int)(sizeof props / sizeof props[0]);
    const char *r;
    r = diag_closest("raduis", props, n);
    check(t, r && !strcmp(r, "radius"), "`raduis` suggests `radius` (got %s)", r ? r : "NULL");
    r = diag_closest("curvture", props, n);
    check(t, r && !strcmp(r, "curvature"), "`curvture` suggests `curvature` (got %s)", r ? r : "NULL");
    r = diag_closest("matrial", props, n);
    check(t, r && !strcmp(r, "material"), "`matrial` suggests `material` (got %s)", r ? r : "NULL");
    r = diag_closest("node", props, n);
    check(t, r && !strcmp(r, "nodes"), "`node` suggests `nodes` (got %s)", r ? r : "NULL");
    r = diag_closest("colour", props, n);
    check(t, r == NULL, "`colour` suggests nothing (got %s)", r ? r : "NULL");
    r = diag_closest("radius", props, n);
    check(t, r == NULL, "an exact match is not a suggestion (got %s)", r ? r : "NULL");

    /* The allowed distance grows with the word: 1 up to 3 letters, 2 up to 6, 3 beyond. */
    static const char *units[] = { "m", "mm", "Hz", "MPa", "kg" };
    r = diag_closest("hz", units, 5);
    check(t, r && !strcmp(r, "Hz"), "`hz` suggests `Hz` (got %s)", r ? r : "NULL");
    r = diag_closest("Mpa", units, 5);
    check(t, r && !strcmp(r, "MPa"), "`Mpa` suggests `MPa` (got %s)", r ? r : "NULL");
    r = diag_closest("xyz", units, 5);
    check(t, r == NULL, "`xyz` is too far from every unit (got %s)", r ? r : "NULL");
    static const char *words[] = { "implicit_euler", "implicit_midpoint", "newmark" };
    r = diag_closest("implicit_eular", words, 3);
    check(t, r && !strcmp(r, "implicit_euler"), "`implicit_eular` suggests `implicit_euler`");
    r = diag_closest("implict_midpont", words, 3);
    check(t, r && !strcmp(r, "implicit_midpoint"), "two deletions within a long word still match");
    r = diag_closest("newmrk", words, 3);
    check(t, r && !strcmp(r, "newmark"), "`newmrk` suggests `newmark`");
    r = diag_closest("verlet", words, 3);
    check(t, r == NULL, "`verlet` suggests nothing among implicit methods");

    /* The nearest wins; among equals the first listed. */
    static const char *near[] = { "start", "stars", "end" };
    r = diag_closest("starx", near, 3);
    check(t, r && !strcmp(r, "start"), "ties go to the first candidate (got %s)", r ? r : "NULL");
    static const char *objs[] = { "finger", "fingers", "thumb" };
    r = diag_closest("fingerz", objs, 3);
    check(t, r && !strcmp(r, "finger"), "`fingerz` is one edit from both; the first wins (got %s)", r ? r : "NULL");
    r = diag_closest("fnger", objs, 3);
    check(t, r && !strcmp(r, "finger"), "the nearest candidate wins (got %s)", r ? r : "NULL");

    /* NULL entries and empty lists are harmless; very long words never match. */
    const char *with_null[] = { NULL, "radius" };
    r = diag_closest("radus", with_null, 2);
    check(t, r && !strcmp(r, "radius"), "NULL candidates are skipped");
    check(t, diag_closest("radius", NULL, 0) == NULL, "no candidates, no suggestion");
    char longword[100];
    memset(longword, 'a', sizeof longword - 1);
    longword[sizeof longword - 1] = 0;
    const char *longs[] = { longword };
    check(t, diag_closest(longword + 1, longs, 1) == NULL, "words longer than 63 letters are never suggested");
}

/* ---- ordering, de-duplication, counting ---- */

static void test_order_and_dedup(Tally *t)
{
    diag_reset();
    int f = add_text("a.srd", "line one\nline two\nline three\n");
    diag_error(at(f, 3, 1, 3, 4), "third");
    diag_error(at(f, 1, 6, 1, 8), "first, later column");
    diag_error(at(f, 1, 1, 1, 4), "first");
    diag_error(at(f, 2, 6, 2, 8), "second, same place A");
    diag_error(at(f, 2, 6, 2, 8), "second, same place B");
    check(t, diag_error_count() == 5, "five errors counted (got %d)", diag_error_count());
    char *out = flush_to_string();
    const char *p1 = strstr(out, "error: first\n"), *p2 = strstr(out, "error: first, later column"),
               *p3 = strstr(out, "same place A"), *p4 = strstr(out, "same place B"), *p5 = strstr(out, "third");
    check(t, p1 && p2 && p3 && p4 && p5, "all five are printed");
    check(t, p1 && p2 && p1 < p2, "column orders diagnostics on one line");
    check(t, p2 && p3 && p2 < p3, "line orders diagnostics");
    check(t, p3 && p4 && p3 < p4, "at one position, diagnostics keep the order they were reported in");
    check(t, p4 && p5 && p4 < p5, "the last line comes last");
    free(out);

    /* Files order before positions: a module's diagnostics come before the main file's. */
    diag_reset();
    int m = add_text("module.srd", "x\n");
    int main_file = add_text("main.srd", "y\n");
    diag_error(at(main_file, 1, 1, 1, 1), "in main");
    diag_error(at(m, 1, 1, 1, 1), "in module");
    out = flush_to_string();
    char *pm = strstr(out, "in module"), *pn = strstr(out, "in main");
    check(t, pm && pn && pm < pn, "diagnostics are grouped by file in registration order");
    free(out);

    /* The same message at the same place is reported once (loops, functions). */
    diag_reset();
    f = add_text("loop.srd", "for i in 0..3 { rod leg { } }\n");
    Diag *a = diag_error(at(f, 1, 21, 1, 23), "`leg` is already declared");
    Diag *b = diag_error(at(f, 1, 21, 1, 23), "`leg` is already declared");
    Diag *c = diag_error(at(f, 1, 21, 1, 23), "another message");
    Diag *d = diag_error(at(f, 1, 21, 1, 24), "`leg` is already declared");
    check(t, a != NULL && b == NULL, "an identical diagnostic is dropped");
    check(t, c != NULL, "another message at the same place is kept");
    check(t, d != NULL, "the same message at another range is kept");
    check(t, diag_error_count() == 3, "dropped duplicates are not counted (count %d)", diag_error_count());
    /* Notes and hints on a dropped diagnostic are ignored without crashing. */
    diag_note(b, at(f, 1, 1, 1, 3), "ignored");
    diag_hint(b, "ignored");
    out = flush_to_string();
    int count = 0;
    for (const char *p = out; (p = strstr(p, "`leg` is already declared")); p++)
        count++;
    check(t, count == 2, "the duplicate is printed once per range (%d times)", count);
    check(t, !strstr(out, "ignored"), "notes and hints of a dropped duplicate are not printed");
    free(out);

    /* Flushing forgets the diagnostics but not the count; a reset clears both. */
    out = flush_to_string();
    check(t, out[0] == 0, "a second flush prints nothing");
    free(out);
    diag_reset();
    check(t, diag_error_count() == 0, "diag_reset clears the error count");

    /* Warnings are printed but not counted as errors. */
    f = add_text("w.srd", "planar;\n");
    diag_warning(at(f, 1, 1, 1, 6), "something odd");
    check(t, diag_error_count() == 0, "a warning is not an error");
    out = flush_to_string();
    check(t, strstr(out, "w.srd:1:1: warning: something odd\n") != NULL, "warnings say `warning:`");
    free(out);
}

/* ---- rendering ---- */

static void test_render(Tally *t)
{
    diag_reset();
    int f = add_text("r.srd", "material rubber { E = 20 mm; rho = 1100 kg/m^3; }\nclamp arm.start;\n");
    Diag *d = diag_error(at(f, 1, 23, 1, 27), "`E` must be a pressure");
    diag_hint(d, "add a unit, for example `%s`", "Pa");
    char *out = flush_to_string();
    check_text(t, out,
               "r.srd:1:23: error: `E` must be a pressure\n"
               "    1 | material rubber { E = 20 mm; rho = 1100 kg/m^3; }\n"
               "      |                       ^~~~~\n"
               "hint: add a unit, for example `Pa`\n",
               "error, source line, caret with underline, hint");
    free(out);

    /* A note comes with its own excerpt, right after its error and before the hint. */
    d = diag_error(at(f, 2, 7, 2, 9), "unknown name `arm`");
    diag_note(d, at(f, 1, 10, 1, 15), "`%s` is declared here", "rubber");
    diag_hint(d, "first hint");
    diag_hint(d, "did you mean `rubber`?");
    out = flush_to_string();
    check_text(t, out,
               "r.srd:2:7: error: unknown name `arm`\n"
               "    2 | clamp arm.start;\n"
               "      |       ^~~\n"
               "r.srd:1:10: note: `rubber` is declared here\n"
               "    1 | material rubber { E = 20 mm; rho = 1100 kg/m^3; }\n"
               "      |          ^~~~~~\n"
               "hint: did you mean `rubber`?\n",
               "a note with its excerpt, then the latest hint only");
    free(out);

    /* Tabs before the caret are reproduced so that it lines up in any terminal. */
    diag_reset();
    f = add_text("tab.srd", "rod a {\n\tnodes =\t$;\n}\n");
    diag_error(at(f, 2, 10, 2, 10), "unexpected character `$`");
    out = flush_to_string();
    check_text(t, out,
               "tab.srd:2:10: error: unexpected character `$`\n"
               "    2 | \tnodes =\t$;\n"
               "      | \t       \t^\n",
               "tabs in the source line are copied under it");
    free(out);

    /* A range running onto later lines is underlined to the end of its first line. */
    f = add_text("multi.srd", "simulate {\n  dt = 1 ms;\n}\n");
    diag_error(at(f, 1, 1, 3, 1), "block spans lines");
    out = flush_to_string();
    check_text(t, out,
               "multi.srd:1:1: error: block spans lines\n"
               "    1 | simulate {\n"
               "      | ^~~~~~~~~~\n",
               "a multi-line range is underlined to the end of its first line");
    free(out);

    /* A position just past the end of the line (a missing `;`) puts the caret there. */
    f = add_text("semi.srd", "param k = 2 N/m\nparam l = 1 cm;\n");
    diag_error(at(f, 1, 16, 1, 16), "expected `;`");
    out = flush_to_string();
    check_text(t, out,
               "semi.srd:1:16: error: expected `;`\n"
               "    1 | param k = 2 N/m\n"
               "      |                ^\n",
               "a caret just past the end of the line");
    free(out);

    /* CRLF line ends are not printed as part of the line. */
    f = add_text("crlf.srd", "let a = 1;\r\nlet b = c;\r\n");
    diag_error(at(f, 2, 9, 2, 9), "unknown name `c`");
    out = flush_to_string();
    check_text(t, out,
               "crlf.srd:2:9: error: unknown name `c`\n"
               "    2 | let b = c;\n"
               "      |         ^\n",
               "a carriage return is not part of the shown line");
    free(out);

    /* Line numbers are right-aligned in five columns. */
    char big[4096] = "";
    for (int i = 0; i < 120; i++)
        strcat(big, "let x = 1;\n");
    f = add_text("long.srd", big);
    diag_error(at(f, 120, 5, 120, 5), "at line 120");
    out = flush_to_string();
    check(t, strstr(out, "  120 | let x = 1;\n      |     ^\n") != NULL, "line 120 is right-aligned");
    free(out);

    /* Diagnostics without a place: the command line or the whole run. */
    d = diag_error(NO_LOC, "cannot read `%s`", "missing.srd");
    diag_hint(d, "check the path");
    out = flush_to_string();
    check_text(t, out, "srdc: error: cannot read `missing.srd`\nhint: check the path\n", "a diagnostic without a place");
    free(out);
    check(t, !strcmp(src_path(-1), "<command line>") && !strcmp(src_text(99), ""), "unknown files have a name and no text");

    /* After many errors the listing stops. */
    diag_reset();
    f = add_text("many.srd", "x\n");
    for (int i = 0; i < 60; i++)
        diag_error(at(f, 1, 1, 1, 1), "error number %d", i);
    out = flush_to_string();
    int shown = 0;
    for (const char *p = out; (p = strstr(p, ": error: ")); p++)
        shown++;
    check(t, shown == 50, "at most 50 errors are printed (got %d)", shown);
    check(t, strstr(out, "srdc: too many errors, stopping after 50\n") != NULL, "the listing says it stopped");
    free(out);
}

static void test_loc_span(Tally *t)
{
    diag_reset();
    int f = add_text("s.srd", "x\n");
    int g = add_text("u.srd", "y\n");
    SrcLoc a = at(f, 1, 3, 1, 5), b = at(f, 2, 1, 2, 9);
    SrcLoc s = loc_span(a, b);
    check(t, s.file == f && s.line == 1 && s.col == 3 && s.end_line == 2 && s.end_col == 9, "loc_span joins two ranges");
    SrcLoc other = loc_span(a, at(g, 1, 1, 1, 1));
    check(t, other.file == f && other.end_col == 5, "loc_span across files keeps the first");
    check(t, !strcmp(src_path(f), "s.srd") && !strcmp(src_text(g), "y\n"), "src_path and src_text give back the file");
    diag_reset();
}

int main(void)
{
    Tally t = { 0, 0 };
    test_closest(&t);
    test_order_and_dedup(&t);
    test_render(&t);
    test_loc_span(&t);
    diag_reset();
    printf("# %d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
