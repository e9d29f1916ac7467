/* units.c — the unit table, unit-expression parsing and dimension arithmetic. */
#include "units.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const Dims DIMLESS = { { 0, 0, 0, 0 }, false };

Dims dims_of(int l, int m, int t, int temp)
{
    Dims d = { { (signed char)l, (signed char)m, (signed char)t, (signed char)temp }, false };
    return d;
}

typedef struct UnitDef {
    const char *name;
    double      scale;
    int         l, m, t, temp;
} UnitDef;

#define PI_VALUE 3.14159265358979323846

/* The units of the soft-robotics literature (docs/language.md lists them with the papers'
 * usage). `rpm` is an angular velocity (2 pi rad per minute, as `deg` is pi/180 rad); there
 * is no electric dimension (V, A) and no offset temperature (degC): see units_hint. */
static const UnitDef unit_table[] = {
    { "m", 1, 1, 0, 0, 0 },        { "km", 1e3, 1, 0, 0, 0 },     { "cm", 1e-2, 1, 0, 0, 0 },
    { "mm", 1e-3, 1, 0, 0, 0 },    { "um", 1e-6, 1, 0, 0, 0 },    { "nm", 1e-9, 1, 0, 0, 0 },
    { "kg", 1, 0, 1, 0, 0 },       { "g", 1e-3, 0, 1, 0, 0 },     { "mg", 1e-6, 0, 1, 0, 0 },
    { "s", 1, 0, 0, 1, 0 },        { "ms", 1e-3, 0, 0, 1, 0 },    { "us", 1e-6, 0, 0, 1, 0 },
    { "min", 60, 0, 0, 1, 0 },     { "h", 3600, 0, 0, 1, 0 },
    { "Hz", 1, 0, 0, -1, 0 },      { "kHz", 1e3, 0, 0, -1, 0 },
    { "rpm", 2 * PI_VALUE / 60, 0, 0, -1, 0 },
    { "N", 1, 1, 1, -2, 0 },       { "uN", 1e-6, 1, 1, -2, 0 },   { "mN", 1e-3, 1, 1, -2, 0 },
    { "kN", 1e3, 1, 1, -2, 0 },
    { "Pa", 1, -1, 1, -2, 0 },     { "mPa", 1e-3, -1, 1, -2, 0 }, { "kPa", 1e3, -1, 1, -2, 0 },
    { "MPa", 1e6, -1, 1, -2, 0 },  { "GPa", 1e9, -1, 1, -2, 0 },  { "bar", 1e5, -1, 1, -2, 0 },
    { "mbar", 1e2, -1, 1, -2, 0 },
    /* the pound-force per square inch: 0.45359237 kg * 9.80665 m/s^2 / (0.0254 m)^2 */
    { "psi", 0.45359237 * 9.80665 / (0.0254 * 0.0254), -1, 1, -2, 0 },
    { "L", 1e-3, 3, 0, 0, 0 },     { "mL", 1e-6, 3, 0, 0, 0 },    { "uL", 1e-9, 3, 0, 0, 0 },
    { "cP", 1e-3, -1, 1, -1, 0 },  { "cSt", 1e-6, 2, 0, -1, 0 },
    { "J", 1, 2, 1, -2, 0 },       { "mJ", 1e-3, 2, 1, -2, 0 },
    { "W", 1, 2, 1, -3, 0 },       { "mW", 1e-3, 2, 1, -3, 0 },
    { "rad", 1, 0, 0, 0, 0 },      { "deg", PI_VALUE / 180, 0, 0, 0, 0 }, { "K", 1, 0, 0, 0, 1 },
};
enum { N_UNITS = sizeof unit_table / sizeof unit_table[0] };

bool dims_eq(Dims a, Dims b) { return memcmp(a.e, b.e, sizeof a.e) == 0; }
bool dims_is_dimless(Dims a) { return dims_eq(a, DIMLESS); }

/* Stores an exponent, flagging one out of range instead of letting it wrap. */
static void set_exponent(Dims *d, int i, long long e)
{
    if (e > UNITS_MAX_EXPONENT || e < -UNITS_MAX_EXPONENT) {
        d->overflow = true;
        e = 0;
    }
    d->e[i] = (signed char)e;
}

Dims dims_mul(Dims a, Dims b)
{
    a.overflow |= b.overflow;
    for (int i = 0; i < DIM_COUNT; i++)
        set_exponent(&a, i, (long long)a.e[i] + b.e[i]);
    return a;
}

Dims dims_div(Dims a, Dims b)
{
    a.overflow |= b.overflow;
    for (int i = 0; i < DIM_COUNT; i++)
        set_exponent(&a, i, (long long)a.e[i] - b.e[i]);
    return a;
}

Dims dims_pow(Dims a, int p)
{
    for (int i = 0; i < DIM_COUNT; i++)
        set_exponent(&a, i, (long long)a.e[i] * p);
    return a;
}

bool dims_sqrt(Dims a, Dims *out)
{
    for (int i = 0; i < DIM_COUNT; i++) {
        if (a.e[i] % 2)
            return false;
        out->e[i] = (signed char)(a.e[i] / 2);
    }
    return true;
}

static void append(char *buf, size_t n, const char *s)
{
    size_t len = strlen(buf);
    if (len + 1 < n)
        snprintf(buf + len, n - len, "%s", s);
}

/* Writes the positive (sign=1) or negative (sign=-1) part of a dimension, SI base units. */
static int format_part(Dims d, int sign, char *buf, size_t n)
{
    static const char *base[DIM_COUNT] = { "m", "kg", "s", "K" };
    static const int order[DIM_COUNT] = { DIM_M, DIM_L, DIM_T, DIM_TEMP };
    int count = 0;
    for (int k = 0; k < DIM_COUNT; k++) {
        int i = order[k];
        int e = d.e[i] * sign;
        if (e <= 0)
            continue;
        char tmp[16];
        if (e == 1)
            snprintf(tmp, sizeof tmp, "%s%s", count ? "*" : "", base[i]);
        else
            snprintf(tmp, sizeof tmp, "%s%s^%d", count ? "*" : "", base[i], e);
        append(buf, n, tmp);
        count++;
    }
    return count;
}

typedef struct NamedDims {
    const char *noun;
    const char *unit;
    int         l, m, t, temp;
} NamedDims;

static const NamedDims named_dims[] = {
    { "dimensionless number", "1", 0, 0, 0, 0 },
    { "length", "m", 1, 0, 0, 0 },
    { "area", "m^2", 2, 0, 0, 0 },
    { "volume", "m^3", 3, 0, 0, 0 },
    { "mass", "kg", 0, 1, 0, 0 },
    { "time", "s", 0, 0, 1, 0 },
    { "rate or frequency", "1/s", 0, 0, -1, 0 }, /* damping and recovery rates are not frequencies */
    { "velocity", "m/s", 1, 0, -1, 0 },
    { "acceleration", "m/s^2", 1, 0, -2, 0 },
    { "force", "N", 1, 1, -2, 0 },
    { "pressure", "Pa", -1, 1, -2, 0 },
    { "density", "kg/m^3", -3, 1, 0, 0 },
    { "energy or moment", "N*m", 2, 1, -2, 0 },
    { "curvature", "1/m", -1, 0, 0, 0 },
    { "viscosity", "Pa*s", -1, 1, -1, 0 },
    { "stiffness", "N/m", 0, 1, -2, 0 },
    { "mass per length", "kg/m", -1, 1, 0, 0 },
    { "temperature", "K", 0, 0, 0, 1 },
    { "power", "W", 2, 1, -3, 0 },
    { "bending stiffness", "N*m^2", 3, 1, -2, 0 },
    { "area moment", "m^4", 4, 0, 0, 0 },
};

void dims_format(Dims d, char *buf, size_t n)
{
    buf[0] = 0;
    for (size_t i = 1; i < sizeof named_dims / sizeof named_dims[0]; i++)
        if (dims_eq(d, dims_of(named_dims[i].l, named_dims[i].m, named_dims[i].t, named_dims[i].temp))) {
            append(buf, n, named_dims[i].unit);
            return;
        }
    if (format_part(d, 1, buf, n) == 0)
        append(buf, n, "1");
    char den[64] = "";
    int nden = format_part(d, -1, den, sizeof den);
    if (nden) {
        append(buf, n, "/");
        if (nden > 1)
            append(buf, n, "(");
        append(buf, n, den);
        if (nden > 1)
            append(buf, n, ")");
    }
}

void dims_describe(Dims d, char *buf, size_t n)
{
    for (size_t i = 0; i < sizeof named_dims / sizeof named_dims[0]; i++) {
        const NamedDims *nd = &named_dims[i];
        if (dims_eq(d, dims_of(nd->l, nd->m, nd->t, nd->temp))) {
            if (i == 0)
                snprintf(buf, n, "a dimensionless number");
            else
                snprintf(buf, n, "a%s %s (%s)", strchr("aeiou", nd->noun[0]) ? "n" : "", nd->noun, nd->unit);
            return;
        }
    }
    char u[64];
    dims_format(d, u, sizeof u);
    snprintf(buf, n, "a quantity in %s", u);
}

/* Bytes of one letter of a unit name at s: an ASCII letter, or the micro sign (U+00B5) or
 * Greek mu (U+03BC) in UTF-8, which both spell the prefix `u`; 0 for anything else. */
size_t units_letter(const char *s, size_t len)
{
    unsigned char c = (unsigned char)s[0];
    if (len >= 1 && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
        return 1;
    if (len >= 2 && ((c == 0xC2 && (unsigned char)s[1] == 0xB5) || (c == 0xCE && (unsigned char)s[1] == 0xBC)))
        return 2;
    return 0;
}

static size_t word_bytes(const char *s, size_t len)
{
    size_t n = 0, k;
    while (n < len && (k = units_letter(s + n, len - n)))
        n += k;
    return n;
}

static const UnitDef *find_unit(const char *name, size_t len)
{
    char ascii[16];
    size_t n = 0;
    for (size_t i = 0; i < len && n < sizeof ascii; n++) { /* a micro sign reads as `u` */
        size_t k = units_letter(name + i, len - i);
        ascii[n] = k == 2 ? 'u' : name[i];
        i += k ? k : 1;
    }
    for (int i = 0; i < N_UNITS; i++)
        if (strlen(unit_table[i].name) == n && !strncmp(unit_table[i].name, ascii, n))
            return &unit_table[i];
    return NULL;
}

/* One atom: name or name^exp. Advances *p. */
static bool parse_atom(const char **p, double *scale, Dims *dims, char *bad, size_t bad_n)
{
    const char *s = *p;
    size_t len = word_bytes(s, strlen(s));
    const UnitDef *u = find_unit(s, len);
    if (!u) {
        snprintf(bad, bad_n, "%.*s", (int)(len < 40 ? len : 40), s);
        return false;
    }
    int exp = 1;
    s += len;
    if (*s == '^') {
        long e = strtol(s + 1, (char **)&s, 10);
        /* Anything past the limit is flagged by dims_pow; clamping keeps the int arithmetic defined. */
        exp = e > 1000 ? 1000 : e < -1000 ? -1000 : (int)e;
    }
    *scale = pow(u->scale, exp);
    *dims = dims_pow(dims_of(u->l, u->m, u->t, u->temp), exp);
    *p = s;
    return true;
}

bool units_parse(const char *text, Unit *out, char *bad, size_t bad_n)
{
    const char *p = text;
    out->scale = 1;
    out->dims = DIMLESS;
    int sign = 1;
    bool grouped = false; /* inside "/(...)": every atom divides */
    /* "1/m", "1/(m^2*s)" and "1" are how units print (dims_format): they must read back. */
    if (p[0] == '1' && (p[1] == '/' || p[1] == 0))
        p++;
    if (!*p && p != text)
        return true;
    if (*p == '/') {
        sign = -1;
        p++;
    }
    for (;;) {
        if (sign < 0 && *p == '(' && !grouped) {
            grouped = true;
            p++;
        }
        double scale;
        Dims dims;
        if (!parse_atom(&p, &scale, &dims, bad, bad_n))
            return false;
        if (sign > 0) {
            out->scale *= scale;
            out->dims = dims_mul(out->dims, dims);
        } else {
            out->scale /= scale;
            out->dims = dims_div(out->dims, dims);
        }
        if (grouped && *p == ')') {
            grouped = false;
            p++;
            sign = 1;
        }
        if (*p == '*')
            sign = grouped ? -1 : 1;
        else if (*p == '/' && !grouped)
            sign = -1;
        else
            break;
        p++;
    }
    if (grouped || *p) {
        snprintf(bad, bad_n, "%s", grouped ? "(" : p);
        return false;
    }
    return true;
}

const char *const *units_names(int *n)
{
    static const char *names[N_UNITS];
    for (int i = 0; i < N_UNITS; i++)
        names[i] = unit_table[i].name;
    *n = N_UNITS;
    return names;
}

static size_t atom_length(const char *s, size_t len)
{
    size_t n = word_bytes(s, len);
    size_t word = n;
    if (n < len && s[n] == '^') {
        size_t k = n + 1;
        if (k < len && s[k] == '-')
            k++;
        size_t digits = k;
        while (k < len && s[k] >= '0' && s[k] <= '9')
            k++;
        if (k > digits)
            n = k;
    }
    return word ? n : 0;
}

size_t units_token_length(const char *text, size_t len)
{
    size_t pos = text[0] == '/' ? 1 : 0;
    pos += atom_length(text + pos, len - pos);
    while (pos + 1 < len && (text[pos] == '*' || text[pos] == '/')) {
        size_t a = atom_length(text + pos + 1, len - pos - 1);
        size_t word = 0;
        while (word < a && text[pos + 1 + word] != '^')
            word++;
        if (!a || !find_unit(text + pos + 1, word))
            break;
        pos += 1 + a;
    }
    return pos;
}

int units_parse_quantity(const char *text, Dims need, double *si, Dims *have, char *bad, size_t bad_n)
{
    char *end;
    double number = strtod(text, &end);
    if (end == text || !isfinite(number))
        return QUANTITY_NOT_A_NUMBER;
    while (*end == ' ')
        end++;
    Unit unit = { 1, DIMLESS };
    bool has_unit = *end != 0;
    if (has_unit && !units_parse(end, &unit, bad, bad_n))
        return QUANTITY_BAD_UNIT;
    if (unit.dims.overflow) {
        snprintf(bad, bad_n, "%s", end);
        return QUANTITY_BAD_UNIT;
    }
    *have = unit.dims;
    if (!dims_eq(unit.dims, need) && !(number == 0 && !has_unit))
        return QUANTITY_WRONG_DIMS;
    *si = number * unit.scale;
    return QUANTITY_OK;
}

/* Units left out on purpose. Temperatures with an offset (degC, degF) do not multiply: 20 degC
 * is 293.15 K but a change of 1 degC is 1 K, and `2 * 20 degC` has no meaning; electric units
 * need a dimension (current) that no srd element uses. */
const char *units_hint(const char *bad)
{
    static const struct {
        const char *name, *hint;
    } cases[] = {
        { "degC", "temperatures are in kelvin: write `293.15 K` for 20 degC (a difference of 1 degC is `1 K`)" },
        { "C", "temperatures are in kelvin: write `293.15 K` for 20 degC (a difference of 1 degC is `1 K`)" },
        { "degF", "temperatures are in kelvin: (F - 32) * 5/9 + 273.15 K" },
        { "V", "srd has no electric units: give the mechanical effect (a curvature, a pressure, a force)" },
        { "A", "srd has no electric units: give the mechanical effect (a curvature, a pressure, a force)" },
        { "mV", "srd has no electric units: give the mechanical effect (a curvature, a pressure, a force)" },
        { "mA", "srd has no electric units: give the mechanical effect (a curvature, a pressure, a force)" },
        { "l", "litres are `L` (and `mL`, `uL`)" },
        { "ml", "litres are `L` (and `mL`, `uL`)" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(bad, cases[i].name))
            return cases[i].hint;
    return NULL;
}
