/* test_units.c — unit tests of the unit table, unit-text parsing, dimension arithmetic and
 * formatting, and the scanner's unit-token splitting (units.c). */
#include "units.h"
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

#include "tap.h"

static bool close_rel(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)); }

static bool dims_are(Dims d, int l, int m, int s, int k) { return dims_eq(d, dims_of(l, m, s, k)); }

/* ---- every unit of the table ---- */

typedef struct Expect {
    const char *text;
    double      scale;
    int         l, m, t, k;
} Expect;

static const double PSI = 0.45359237 * 9.80665 / (0.0254 * 0.0254); /* lbf/in^2, exact definition */

/* Each unit's SI factor, written independently of the table in units.c. */
static const Expect atoms[] = {
    { "m", 1, 1, 0, 0, 0 },           { "km", 1e3, 1, 0, 0, 0 },      { "cm", 1e-2, 1, 0, 0, 0 },
    { "mm", 1e-3, 1, 0, 0, 0 },       { "um", 1e-6, 1, 0, 0, 0 },     { "nm", 1e-9, 1, 0, 0, 0 },
    { "kg", 1, 0, 1, 0, 0 },
    { "g", 1e-3, 0, 1, 0, 0 },        { "mg", 1e-6, 0, 1, 0, 0 },     { "s", 1, 0, 0, 1, 0 },
    { "ms", 1e-3, 0, 0, 1, 0 },       { "us", 1e-6, 0, 0, 1, 0 },     { "min", 60, 0, 0, 1, 0 },
    { "h", 3600, 0, 0, 1, 0 },
    { "Hz", 1, 0, 0, -1, 0 },         { "kHz", 1e3, 0, 0, -1, 0 },    { "rpm", 2 * PI / 60, 0, 0, -1, 0 },
    { "N", 1, 1, 1, -2, 0 },          { "uN", 1e-6, 1, 1, -2, 0 },
    { "mN", 1e-3, 1, 1, -2, 0 },      { "kN", 1e3, 1, 1, -2, 0 },     { "Pa", 1, -1, 1, -2, 0 },
    { "mPa", 1e-3, -1, 1, -2, 0 },
    { "kPa", 1e3, -1, 1, -2, 0 },     { "MPa", 1e6, -1, 1, -2, 0 },   { "GPa", 1e9, -1, 1, -2, 0 },
    { "bar", 1e5, -1, 1, -2, 0 },     { "mbar", 100, -1, 1, -2, 0 },  { "psi", PSI, -1, 1, -2, 0 },
    { "L", 1e-3, 3, 0, 0, 0 },        { "mL", 1e-6, 3, 0, 0, 0 },     { "uL", 1e-9, 3, 0, 0, 0 },
    { "cP", 1e-3, -1, 1, -1, 0 },     { "cSt", 1e-6, 2, 0, -1, 0 },
    { "J", 1, 2, 1, -2, 0 },          { "mJ", 1e-3, 2, 1, -2, 0 },
    { "W", 1, 2, 1, -3, 0 },          { "mW", 1e-3, 2, 1, -3, 0 },    { "rad", 1, 0, 0, 0, 0 },
    { "deg", PI / 180, 0, 0, 0, 0 },  { "K", 1, 0, 0, 0, 1 },
};

/* The compound units of the soft-robotics literature (docs/language.md), with the micro sign
 * (U+00B5) and Greek mu (U+03BC) spelling the prefix `u`. */
static const Expect compounds[] = {
    { "\xC2\xB5m", 1e-6, 1, 0, 0, 0 },      /* µm, micro sign */
    { "\xCE\xBCm", 1e-6, 1, 0, 0, 0 },      /* μm, Greek mu */
    { "\xC2\xB5N", 1e-6, 1, 1, -2, 0 },
    { "\xC2\xB5s", 1e-6, 0, 0, 1, 0 },
    { "N*mm", 1e-3, 2, 1, -2, 0 },
    { "mN*m", 1e-3, 2, 1, -2, 0 },
    { "rad/s", 1, 0, 0, -1, 0 },
    { "mPa*s", 1e-3, -1, 1, -1, 0 },         /* viscosity, = cP */
    { "kg/m^3", 1, -3, 1, 0, 0 },
    { "g/cm^3", 1e3, -3, 1, 0, 0 },       /* 1 g/cm^3 = 1000 kg/m^3 */
    { "m/s^2", 1, 1, 0, -2, 0 },          /* acceleration */
    { "m/s", 1, 1, 0, -1, 0 },
    { "mm/s", 1e-3, 1, 0, -1, 0 },
    { "km/min", 1e3 / 60, 1, 0, -1, 0 },
    { "N*m", 1, 2, 1, -2, 0 },            /* moment */
    { "kN*m", 1e3, 2, 1, -2, 0 },
    { "N*m^2", 1, 3, 1, -2, 0 },          /* bending stiffness */
    { "N/m", 1, 0, 1, -2, 0 },            /* stiffness */
    { "N/mm", 1e3, 0, 1, -2, 0 },
    { "N*s/m", 1, 0, 1, -1, 0 },          /* damping coefficient */
    { "Pa*s", 1, -1, 1, -1, 0 },          /* viscosity */
    { "/m", 1, -1, 0, 0, 0 },             /* curvature: ` /m` after a space */
    { "/mm", 1e3, -1, 0, 0, 0 },
    { "/s", 1, 0, 0, -1, 0 },
    { "m^-1", 1, -1, 0, 0, 0 },
    { "mm^2", 1e-6, 2, 0, 0, 0 },
    { "cm^3", 1e-6, 3, 0, 0, 0 },
    { "m^4", 1, 4, 0, 0, 0 },
    { "kg*m^2", 1, 2, 1, 0, 0 },          /* moment of inertia */
    { "J/K", 1, 2, 1, -2, -1 },
    { "deg/s", PI / 180, 0, 0, -1, 0 },
    { "W/m^2", 1, 0, 1, -3, 0 },
    { "N/m/s", 1, 0, 1, -3, 0 },          /* left to right: (N/m)/s */
    { "kg/m/s", 1, -1, 1, -1, 0 },
    { "Hz*s", 1, 0, 0, 0, 0 },            /* dimensionless */
    { "1/m", 1, -1, 0, 0, 0 },            /* units as dims_format prints them read back */
    { "1/s", 1, 0, 0, -1, 0 },
    { "1", 1, 0, 0, 0, 0 },
    { "1/(m^2*s)", 1, -2, 0, -1, 0 },
    { "kg/(m*s^2)", 1, -1, 1, -2, 0 },
};

static void test_parse(Tally *t)
{
    int n;
    const char *const *names = units_names(&n);
    check(t, n == (int)(sizeof atoms / sizeof atoms[0]), "units_names lists %d units (the table has %zu)", n,
          sizeof atoms / sizeof atoms[0]);
    for (int i = 0; i < n; i++) {
        bool listed = false;
        for (size_t k = 0; k < sizeof atoms / sizeof atoms[0]; k++)
            listed |= !strcmp(atoms[k].text, names[i]);
        check(t, listed, "unit `%s` from units_names is tested here", names[i]);
    }
    const Expect *lists[] = { atoms, compounds };
    size_t counts[] = { sizeof atoms / sizeof atoms[0], sizeof compounds / sizeof compounds[0] };
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            const Expect *x = &lists[l][i];
            Unit u;
            char bad[32] = "untouched";
            bool ok = units_parse(x->text, &u, bad, sizeof bad);
            check(t, ok, "units_parse(\"%s\") succeeds", x->text);
            if (!ok)
                continue;
            check(t, close_rel(u.scale, x->scale), "`%s` is %.17g SI (got %.17g)", x->text, x->scale, u.scale);
            check(t, dims_are(u.dims, x->l, x->m, x->t, x->k), "`%s` has dimension m^%d kg^%d s^%d K^%d", x->text,
                  x->l, x->m, x->t, x->k);
        }
}

static void test_parse_errors(Tally *t)
{
    static const struct {
        const char *text, *bad;
    } cases[] = {
        { "furlong", "furlong" }, { "pm", "pm" },      { "kg/mx", "mx" },     { "N*foo^2", "foo" },
        { "Mpa", "Mpa" },         { "hz", "hz" },      { "degC", "degC" },    { "V", "V" },      { "/parsec", "parsec" }, { "M", "M" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Unit u;
        char bad[32] = "";
        bool ok = units_parse(cases[i].text, &u, bad, sizeof bad);
        check(t, !ok, "units_parse(\"%s\") fails", cases[i].text);
        check(t, !strcmp(bad, cases[i].bad), "the unknown atom of `%s` is `%s` (got `%s`)", cases[i].text,
              cases[i].bad, bad);
    }
    /* A long unknown atom is cut to the buffer, never overflowing it. */
    Unit u;
    char small[6];
    memset(small, 'x', sizeof small);
    bool ok = units_parse("abcdefghijklmnop", &u, small, sizeof small);
    check(t, !ok && strlen(small) == sizeof small - 1 && !strncmp(small, "abcde", 5),
          "a long unknown atom is truncated to the buffer (`%.*s`)", (int)sizeof small, small);
}

/* ---- dimension arithmetic ---- */

static void test_arithmetic(Tally *t)
{
    Dims L = dims_of(1, 0, 0, 0), T = dims_of(0, 0, 1, 0), M = dims_of(0, 1, 0, 0);
    check(t, dims_is_dimless(DIMLESS) && !dims_is_dimless(L), "DIMLESS is dimensionless, a length is not");
    check(t, dims_are(dims_mul(L, T), 1, 0, 1, 0), "length * time");
    check(t, dims_are(dims_div(L, dims_mul(T, T)), 1, 0, -2, 0), "length / time^2 is an acceleration");
    check(t, dims_are(dims_pow(dims_div(M, L), 3), -3, 3, 0, 0), "(kg/m)^3");
    check(t, dims_are(dims_pow(L, -2), -2, 0, 0, 0), "length^-2");
    check(t, dims_is_dimless(dims_pow(L, 0)), "length^0 is dimensionless");
    Dims r;
    check(t, dims_sqrt(dims_of(2, 0, -2, 0), &r) && dims_are(r, 1, 0, -1, 0), "sqrt(m^2/s^2) is a velocity");
    check(t, !dims_sqrt(L, &r), "sqrt(m) has no dimension");
    check(t, !dims_sqrt(dims_of(2, 1, 0, 0), &r), "sqrt(m^2*kg) has no dimension");
    check(t, dims_eq(dims_div(L, L), DIMLESS), "m/m is dimensionless");
}

/* Exponents are stored in 8 bits: past UNITS_MAX_EXPONENT a result is flagged, never wrapped. */
static void test_exponent_range(Tally *t)
{
    Dims L = dims_of(1, 0, 0, 0);
    Unit u;
    char bad[48];
    check(t, units_parse("m^256", &u, bad, sizeof bad) && u.dims.overflow, "m^256 is flagged, not dimensionless");
    check(t, units_parse("m^64", &u, bad, sizeof bad) && !u.dims.overflow && dims_are(u.dims, 64, 0, 0, 0),
          "m^64 is within range");
    check(t, units_parse("m^-65", &u, bad, sizeof bad) && u.dims.overflow, "m^-65 is flagged");
    check(t, units_parse("m^99999999999", &u, bad, sizeof bad) && u.dims.overflow, "a huge exponent is flagged");
    Dims big = dims_pow(L, 60);
    check(t, !big.overflow && dims_mul(big, dims_pow(L, 10)).overflow, "m^60 * m^10 is flagged");
    check(t, dims_div(dims_pow(L, -60), dims_pow(L, 10)).overflow, "m^-60 / m^10 is flagged");
    check(t, dims_mul(dims_mul(big, dims_pow(L, 10)), dims_pow(L, -10)).overflow, "the flag stays on results");
    check(t, dims_pow(L, 128).overflow && dims_pow(dims_of(0, 0, 2, 0), 40).overflow, "powers past 64 are flagged");
    Dims have;
    double si;
    check(t, units_parse_quantity("1 m^256", L, &si, &have, bad, sizeof bad) == QUANTITY_BAD_UNIT,
          "a -p value in m^256 is refused");
}

/* ---- formatting ---- */

static void test_format(Tally *t)
{
    static const struct {
        int         l, m, s, k;
        const char *unit, *described;
    } cases[] = {
        { 0, 0, 0, 0, "1", "a dimensionless number" },
        { 1, 0, 0, 0, "m", "a length (m)" },
        { 2, 0, 0, 0, "m^2", "an area (m^2)" },
        { 3, 0, 0, 0, "m^3", "a volume (m^3)" },
        { 0, 1, 0, 0, "kg", "a mass (kg)" },
        { 0, 0, 1, 0, "s", "a time (s)" },
        { 0, 0, -1, 0, "1/s", "a rate or frequency (1/s)" },
        { 1, 0, -1, 0, "m/s", "a velocity (m/s)" },
        { 1, 0, -2, 0, "m/s^2", "an acceleration (m/s^2)" },
        { 1, 1, -2, 0, "N", "a force (N)" },
        { -1, 1, -2, 0, "Pa", "a pressure (Pa)" },
        { -3, 1, 0, 0, "kg/m^3", "a density (kg/m^3)" },
        { 2, 1, -2, 0, "N*m", "an energy or moment (N*m)" },
        { -1, 0, 0, 0, "1/m", "a curvature (1/m)" },
        { -1, 1, -1, 0, "Pa*s", "a viscosity (Pa*s)" },
        { 0, 1, -2, 0, "N/m", "a stiffness (N/m)" },
        { -1, 1, 0, 0, "kg/m", "a mass per length (kg/m)" },
        { 0, 0, 0, 1, "K", "a temperature (K)" },
        { 2, 1, -3, 0, "W", "a power (W)" },
        { 3, 1, -2, 0, "N*m^2", "a bending stiffness (N*m^2)" },
        { 4, 0, 0, 0, "m^4", "an area moment (m^4)" },
        /* Without a name: SI base units, kg before m before s, a denominator in parentheses
         * when it has several factors. */
        { 1, 1, -1, 0, "kg*m/s", "a quantity in kg*m/s" },
        { 2, 0, -2, 0, "m^2/s^2", "a quantity in m^2/s^2" },
        { -2, 0, -1, 0, "1/(m^2*s)", "a quantity in 1/(m^2*s)" },
        { 0, 0, -2, 0, "1/s^2", "a quantity in 1/s^2" },
        { 0, 1, 0, -1, "kg/K", "a quantity in kg/K" },
        { 5, 0, 0, 0, "m^5", "a quantity in m^5" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Dims d = dims_of(cases[i].l, cases[i].m, cases[i].s, cases[i].k);
        char buf[96];
        dims_format(d, buf, sizeof buf);
        check(t, !strcmp(buf, cases[i].unit), "dims_format gives `%s` (got `%s`)", cases[i].unit, buf);
        dims_describe(d, buf, sizeof buf);
        check(t, !strcmp(buf, cases[i].described), "dims_describe gives \"%s\" (got \"%s\")", cases[i].described, buf);
    }
    /* Formatting round-trips through the parser for the named dimensions. */
    static const char *round_trip[] = { "m/s^2", "kg/m^3", "N*m", "Pa*s", "N/m", "kg/m", "N*m^2", "m^4" };
    for (size_t i = 0; i < sizeof round_trip / sizeof round_trip[0]; i++) {
        Unit u;
        char bad[16], buf[64];
        units_parse(round_trip[i], &u, bad, sizeof bad);
        dims_format(u.dims, buf, sizeof buf);
        check(t, !strcmp(buf, round_trip[i]), "`%s` parses and formats back to itself (got `%s`)", round_trip[i], buf);
    }
    /* A short buffer is never overrun. */
    char tiny[4];
    memset(tiny, 'x', sizeof tiny);
    dims_describe(dims_of(1, 0, -2, 0), tiny, sizeof tiny);
    check(t, memchr(tiny, 0, sizeof tiny) != NULL, "dims_describe keeps within a 4-byte buffer");
    memset(tiny, 'x', sizeof tiny);
    dims_format(dims_of(-2, 0, -1, 0), tiny, sizeof tiny);
    check(t, memchr(tiny, 0, sizeof tiny) != NULL, "dims_format keeps within a 4-byte buffer");
}

/* ---- how much of a scanned unit token is a unit ---- */

static void test_token_length(Tally *t)
{
    static const struct {
        const char *text;
        size_t      keep;
    } cases[] = {
        { "m", 1 },          { "mm", 2 },         { "kg/m^3", 6 },     { "m/s^2", 5 },
        { "N*m", 3 },        { "N*m^2", 5 },      { "Pa*s", 4 },       { "/m", 2 },
        { "/mm", 3 },        { "m^-1", 4 },       { "N*s/m", 5 },
        /* `3 Hz*t` is 3 Hz times t; `2 N*k` is 2 N times k. */
        { "Hz*t", 2 },       { "N*k", 1 },        { "s*x", 1 },        { "m/s*t", 3 },
        { "/m*sin", 2 },     { "kg*m^2*omega", 6 },
        /* An unknown first atom is kept whole: the parser reports it as an unknown unit. */
        { "furlong", 7 },    { "Mpa*s", 5 },      { "Mpa*x", 3 },
        /* `^` without digits is not part of the atom. */
        { "m^", 1 },         { "m^-", 1 },
        /* A micro sign is two bytes of the atom: `2 µm*t` is 2 µm times t. */
        { "\xC2\xB5m", 3 },    { "N*\xC2\xB5m", 5 }, { "\xCE\xBCm*t", 3 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t got = units_token_length(cases[i].text, strlen(cases[i].text));
        check(t, got == cases[i].keep, "units_token_length(\"%s\") keeps %zu (got %zu)", cases[i].text, cases[i].keep,
              got);
    }
    /* Only the first `len` bytes are looked at. */
    check(t, units_token_length("N*mxyz", 3) == 3, "units_token_length honours len");
    check(t, units_letter("\xC2", 1) == 0, "half a micro sign is not a letter");
}

/* Units left out on purpose are explained, not just unknown. */
static void test_hints(Tally *t)
{
    check(t, units_hint("degC") && strstr(units_hint("degC"), "K"), "degC: temperatures are in kelvin");
    check(t, units_hint("V") && strstr(units_hint("V"), "electric"), "V: no electric units");
    check(t, !units_hint("furlong"), "no hint for an unknown unit without one");
}

int main(void)
{
    Tally t = { 0, 0 };
    test_parse(&t);
    test_parse_errors(&t);
    test_arithmetic(&t);
    test_exponent_range(&t);
    test_format(&t);
    test_token_length(&t);
    test_hints(&t);
    printf("# %d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
