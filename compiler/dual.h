/* dual.h — numbers of elaboration that carry their derivative along one param (forward-mode
 * dual numbers), and whether they depend on any run-time param at all.
 *
 * Elaboration turns params into element data through formulas written in C (a bending stiffness
 * E pi r^4 / 4, a lumped mass rho A l, a shell's 2 E h l / (1 - nu^2)). Computing them on Duals
 * gives d(column)/d(param) exactly, by the chain rule of each operation, in the same pass that
 * computes the value. Formulas keep the plain formula's order of operations, so that values
 * round exactly as they did before they carried derivatives. `dep` is structural: a value that depends on a param keeps it even where
 * its derivative happens to vanish, so a built simulator knows which columns a new value moves. */
#ifndef SRD_DUAL_H
#define SRD_DUAL_H
#include <math.h>
#include <stdbool.h>

typedef struct Dual {
    double v;   /* the value */
    double d;   /* its derivative along the seeded param (0 when none is seeded) */
    bool   dep; /* it depends on some run-time param */
} Dual;

static inline Dual dual_const(double v) { return (Dual){ v, 0, false }; }
static inline Dual dual_add(Dual a, Dual b) { return (Dual){ a.v + b.v, a.d + b.d, a.dep || b.dep }; }
static inline Dual dual_sub(Dual a, Dual b) { return (Dual){ a.v - b.v, a.d - b.d, a.dep || b.dep }; }
static inline Dual dual_scale(double s, Dual a) { return (Dual){ s * a.v, s * a.d, a.dep }; }
static inline Dual dual_mul(Dual a, Dual b) { return (Dual){ a.v * b.v, a.d * b.v + a.v * b.d, a.dep || b.dep }; }
static inline Dual dual_div(Dual a, Dual b)
{
    return (Dual){ a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v), a.dep || b.dep };
}
static inline Dual dual_sqrt(Dual a)
{
    double r = sqrt(a.v);
    return (Dual){ r, a.d != 0 ? a.d / (2 * r) : 0, a.dep };
}
/* a^n for a constant n */
static inline Dual dual_powi(Dual a, double n)
{
    return (Dual){ pow(a.v, n), a.d != 0 ? n * pow(a.v, n - 1) * a.d : 0, a.dep };
}
static inline Dual dual_mul3(Dual a, Dual b, Dual c) { return dual_mul(dual_mul(a, b), c); }
/* a / c for a constant c (not a * (1 / c): the value rounds as the plain formula's does) */
static inline Dual dual_divc(Dual a, double c) { return (Dual){ a.v / c, a.d / c, a.dep }; }

#endif
