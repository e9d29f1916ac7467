/* vec3.h — the few 3-vector operations the runtime's geometry needs (frames, natural shapes). */
#ifndef SRD_VEC3_H
#define SRD_VEC3_H

static inline void srd_sub3(const double *a, const double *b, double *r)
{
    for (int c = 0; c < 3; c++)
        r[c] = a[c] - b[c];
}

static inline double srd_dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* r = a x b; r may alias a or b. */
static inline void srd_cross3(const double *a, const double *b, double *r)
{
    double x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    r[0] = x;
    r[1] = y;
    r[2] = z;
}

#endif
