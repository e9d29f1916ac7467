/* units.h — physical dimensions and the unit table; every quantity is stored in SI. */
#ifndef SRD_UNITS_H
#define SRD_UNITS_H
#include <stdbool.h>
#include <stddef.h>

enum { DIM_L, DIM_M, DIM_T, DIM_TEMP, DIM_COUNT };

/* The largest exponent of a base unit (m^64): beyond it a dimension is an error, since the
 * exponents are stored in 8 bits and would otherwise wrap (m^256 would be dimensionless). */
enum { UNITS_MAX_EXPONENT = 64 };

/* Exponents of length, mass, time and temperature. Angles are dimensionless. `overflow` marks
 * a result whose exponents went past UNITS_MAX_EXPONENT (and every result computed from it). */
typedef struct Dims {
    signed char e[DIM_COUNT];
    bool        overflow;
} Dims;

typedef struct Unit {
    double scale; /* SI value of one of this unit */
    Dims   dims;
} Unit;

extern const Dims DIMLESS;

bool dims_eq(Dims a, Dims b);
bool dims_is_dimless(Dims a);
Dims dims_mul(Dims a, Dims b);
Dims dims_div(Dims a, Dims b);
Dims dims_pow(Dims a, int p);
/* Halves every exponent; false when one is odd (sqrt of a length). */
bool dims_sqrt(Dims a, Dims *out);
Dims dims_of(int l, int m, int t, int temp);

/* "kg/m^3", "1/s", "1" */
void dims_format(Dims d, char *buf, size_t n);
/* "a density (kg/m^3)", "a length (m)", "a quantity in m^2*kg" */
void dims_describe(Dims d, char *buf, size_t n);

/* Parses unit text such as "kg/m^3", "N*m", "/m", "Pa*s". On failure returns false and
 * copies the first unknown atom into bad (for the diagnostic). */
bool units_parse(const char *text, Unit *out, char *bad, size_t bad_n);
/* Reads a quantity of dimension `need`: a number with an optional unit after it ("2MPa",
 * "1e6 Pa", "0.5"; a bare 0 fits any dimension). QUANTITY_OK with its SI value in si;
 * QUANTITY_NOT_A_NUMBER; QUANTITY_BAD_UNIT with the unknown atom in bad; or
 * QUANTITY_WRONG_DIMS with the dimension given in have. */
enum { QUANTITY_OK, QUANTITY_NOT_A_NUMBER, QUANTITY_BAD_UNIT, QUANTITY_WRONG_DIMS };
int units_parse_quantity(const char *text, Dims need, double *si, Dims *have, char *bad, size_t bad_n);
/* Length of the unit text worth keeping: the first atom always, then further `*atom` or
 * `/atom` only while the atom is a known unit ("Hz*t" keeps "Hz"; "N*m" keeps all). */
size_t units_token_length(const char *text, size_t len);
/* All unit names, for hints and documentation. */
const char *const *units_names(int *n);
/* Bytes of one letter of a unit name at s (len bytes left): 1 for an ASCII letter, 2 for the
 * micro sign or Greek mu in UTF-8 (both read as the prefix `u`: `µm` is `um`), else 0. */
size_t units_letter(const char *s, size_t len);
/* What to write instead of a unit srd does not have on purpose (`degC`, `V`, ...), or NULL. */
const char *units_hint(const char *bad);

#endif
