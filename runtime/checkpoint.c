/* checkpoint.c — saving and restoring a simulation's complete state (see checkpoint.h).
 *
 * The file is binary in the machine's own byte order (it resumes runs on the machine, or one
 * like it, that wrote them): the magic "SRDCKPT5", the fingerprint, the counts (params, DOFs,
 * element sets), the param values, the driver's position, the time, step counters and the last
 * step's method (the damping the forces read after it take is that step's), then
 * q, v, Newmark's acceleration and the last step's start q0, v0 over every DOF, that step's length
 * and whether the element state is still at its start (sim.h: state_behind), each element set's
 * state and, with a
 * `control` block, the controller's next sample and its values (vars, lets, probes). Rigid bodies'
 * turns, momenta and torques, rotated rod edges' frames and slides' lines follow the element state,
 * then, with `contact` between parts, the pairs held and the margin's memory (contact/pairs.h). */
#include "checkpoint.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "body.h"
#include "control.h"
#include "pairs.h"

static const char magic[8] = { 'S', 'R', 'D', 'C', 'K', 'P', 'T', '5' };

/* ---- fingerprint: FNV-1a over the bytes of everything the run depends on ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t fnv_text(uint64_t h, const char *s)
{
    return s ? fnv(h, s, strlen(s) + 1) : fnv(h, "", 1);
}

static uint64_t hash_sets(uint64_t h, const srd_model *m)
{
    for (int k = 0; k < m->n_sets; k++) {
        const srd_elemset *set = &m->sets[k];
        h = fnv_text(h, set->kind);
        h = fnv(h, &set->n, sizeof set->n);
        h = fnv(h, set->nodes, sizeof(int) * (size_t)set->n * (size_t)set->n_node);
        h = fnv(h, set->edges, sizeof(int) * (size_t)set->n * (size_t)set->n_edge);
        h = fnv(h, set->data, sizeof(double) * (size_t)set->n * (size_t)set->n_data);
    }
    return h;
}

static uint64_t hash_environment(uint64_t h, const srd_model *m)
{
    double env[] = { m->gravity[0], m->gravity[1], m->gravity[2], m->medium_density, m->viscous_eta,
                     m->damping_alpha, m->damping_beta, m->ground_stiffness, m->ground_delta,
                     m->ground_friction, m->ground_slip_velocity };
    h = fnv(h, env, sizeof env);
    for (int k = 0; k < m->n_loads; k++)
        h = fnv(h, m->loads[k].f, sizeof m->loads[k].f);
    for (int k = 0; k < m->n_obstacles; k++) {
        const srd_obstacle *o = &m->obstacles[k];
        double v[] = { o->center[0], o->center[1], o->center[2], o->radius, o->stiffness, o->delta, o->friction };
        h = fnv(h, v, sizeof v);
    }
    return h;
}

uint64_t srd_checkpoint_fingerprint(const srd_model *m, const double *params, double dt, double out_every)
{
    uint64_t h = 14695981039346656037ull;
    int counts[] = { m->n_nodes, m->n_dofs, m->n_sets, m->n_params, m->planar };
    h = fnv(h, counts, sizeof counts);
    h = fnv(h, m->x0, sizeof(double) * 3 * (size_t)m->n_nodes);
    h = fnv(h, m->dof_mass, sizeof(double) * (size_t)m->n_dofs);
    h = fnv(h, m->dof_fixed, (size_t)m->n_dofs);
    h = hash_sets(h, m);
    h = hash_environment(h, m);
    h = fnv(h, params, sizeof(double) * (size_t)m->n_params);
    h = fnv_text(h, m->simulate.method);
    h = fnv_text(h, m->simulate.start);
    h = fnv_text(h, m->simulate.solver);
    double settings[] = { dt, out_every, m->simulate.tolerance, m->simulate.max_iterations, m->simulate.line_search };
    return fnv(h, settings, sizeof settings);
}

/* ---- writing ---- */

typedef struct Header {
    char     magic[8];
    uint64_t fingerprint;
    int32_t  n_params, n_dofs, n_sets, reserved;
} Header;

static Header header_of(const srd_sim *s, uint64_t fingerprint)
{
    Header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, magic, sizeof magic);
    h.fingerprint = fingerprint;
    h.n_params = s->m->n_params;
    h.n_dofs = s->m->n_dofs;
    h.n_sets = s->m->n_sets;
    return h;
}

static size_t state_len(const srd_sim *s, int k)
{
    const srd_elem_batch *b = &s->kernels[k].batch.b;
    return (size_t)b->n * (size_t)b->n_state;
}

/* The orientations the DOFs do not carry: rigid bodies' turns, momenta and Newmark torques,
 * the frames of rod edges a prescribed rotation turns, and the slides' lines. */
static bool write_turns(FILE *f, const srd_sim *s)
{
    size_t nb = (size_t)s->bodies.n, nf = 3 * (size_t)s->n_frames, ns = 3 * (size_t)s->m->n_slides;
    return fwrite(s->bodies.axes, sizeof(double), 9 * nb, f) == 9 * nb &&
           fwrite(s->bodies.momentum, sizeof(double), 3 * nb, f) == 3 * nb &&
           fwrite(s->bodies.torque, sizeof(double), 3 * nb, f) == 3 * nb &&
           fwrite(s->frame_d1, sizeof(double), nf, f) == nf && fwrite(s->frame_t, sizeof(double), nf, f) == nf &&
           fwrite(s->frame_m0, sizeof(double), nf, f) == nf && fwrite(s->slide_axis, sizeof(double), ns, f) == ns;
}

/* Every part of the state, in file order; false when a write failed. */
static bool write_state(FILE *f, const srd_sim *s, const Header *h, const srd_checkpoint_pos *pos)
{
    size_t n = (size_t)s->m->n_dofs;
    int64_t counters[4] = { s->steps, s->total_iterations, s->rejected, s->method };
    bool ok = fwrite(h, sizeof *h, 1, f) == 1 && fwrite(s->params, sizeof(double), (size_t)h->n_params, f) ==
                                                      (size_t)h->n_params;
    ok = ok && fwrite(pos, sizeof *pos, 1, f) == 1 && fwrite(&s->t, sizeof s->t, 1, f) == 1;
    ok = ok && fwrite(counters, sizeof counters, 1, f) == 1;
    ok = ok && fwrite(s->q, sizeof(double), n, f) == n && fwrite(s->v, sizeof(double), n, f) == n &&
         fwrite(s->a0, sizeof(double), n, f) == n;
    int64_t behind = s->state_behind;
    ok = ok && fwrite(s->q0, sizeof(double), n, f) == n && fwrite(s->v0, sizeof(double), n, f) == n &&
         fwrite(&s->last_dt, sizeof s->last_dt, 1, f) == 1 && fwrite(&behind, sizeof behind, 1, f) == 1;
    for (int k = 0; k < s->m->n_sets && ok; k++) {
        int64_t len = (int64_t)state_len(s, k);
        ok = fwrite(&len, sizeof len, 1, f) == 1 &&
             fwrite(s->kernels[k].batch.state, sizeof(double), (size_t)len, f) == (size_t)len;
    }
    ok = ok && write_turns(f, s) && (!s->pairs || srd_pairs_save(s->pairs, f));
    const srd_controller *c = s->controller;
    if (c && ok) /* the inputs it set are among the params above */
        ok = fwrite(&c->next, sizeof c->next, 1, f) == 1 &&
             fwrite(c->data, sizeof(double), (size_t)c->c->n_data, f) == (size_t)c->c->n_data;
    return ok;
}

int srd_checkpoint_save(FILE *f, const srd_sim *s, uint64_t fingerprint, const srd_checkpoint_pos *pos)
{
    Header h = header_of(s, fingerprint);
    return write_state(f, s, &h, pos) ? 0 : -1;
}

int srd_checkpoint_write(const char *dir, const srd_sim *s, uint64_t fingerprint, const srd_checkpoint_pos *pos,
                         char *err, size_t err_n)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/%s", dir, SRD_CHECKPOINT_FILE);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    bool ok = f && srd_checkpoint_save(f, s, fingerprint, pos) == 0;
    ok = f && fflush(f) == 0 && !ferror(f) && ok;
    int saved = errno ? errno : EIO;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        saved = errno;
    }
    if (!ok) {
        snprintf(err, err_n, "cannot write %s: %s", f ? path : tmp, strerror(saved));
        remove(tmp);
        return -1;
    }
    return 0;
}

/* ---- reading ---- */

/* The first param whose value differs from the checkpoint's, named in the message. Inputs
 * are part of the state (a controller sets them): they take the checkpoint's values. */
static bool same_params(srd_sim *s, const double *saved, const char *path, char *err, size_t err_n)
{
    for (int p = 0; p < s->m->n_params; p++)
        if (s->m->params[p].input)
            s->params[p] = saved[p];
        else if (memcmp(&saved[p], &s->params[p], sizeof(double)) != 0) {
            snprintf(err, err_n, "%s was written with param `%s` = %.17g %s, but this run has %.17g %s\nhint: resume "
                                 "with the same -p values as the run that wrote it",
                     path, s->m->params[p].name, saved[p], s->m->params[p].unit, s->params[p], s->m->params[p].unit);
            return false;
        }
    return true;
}

static bool header_fits(const Header *h, const srd_sim *s, bool check_fingerprint, uint64_t fingerprint,
                        const char *path, char *err, size_t err_n)
{
    if (memcmp(h->magic, magic, sizeof magic) != 0) {
        snprintf(err, err_n, "%s is not an srd checkpoint", path);
        return false;
    }
    if (h->n_params != s->m->n_params || h->n_dofs != s->m->n_dofs || h->n_sets != s->m->n_sets ||
        (check_fingerprint && h->fingerprint != fingerprint)) {
        snprintf(err, err_n, "%s was written by a different model or different simulate settings (%d DOFs, %d "
                             "element kinds; this model has %d and %d)\nhint: resume with the same model file, -p "
                             "values and --dt as the run that wrote it",
                 path, h->n_dofs, h->n_sets, s->m->n_dofs, s->m->n_sets);
        return false;
    }
    return true;
}

static bool read_doubles(FILE *f, double *out, size_t n)
{
    return fread(out, sizeof(double), n, f) == n;
}

/* The turns write_turns saved; the bodies' frames go to the elements that read them. */
static bool read_turns(FILE *f, srd_sim *s)
{
    size_t nb = (size_t)s->bodies.n, nf = 3 * (size_t)s->n_frames, ns = 3 * (size_t)s->m->n_slides;
    bool ok = read_doubles(f, s->bodies.axes, 9 * nb) && read_doubles(f, s->bodies.momentum, 3 * nb) &&
              read_doubles(f, s->bodies.torque, 3 * nb) && read_doubles(f, s->frame_d1, nf) &&
              read_doubles(f, s->frame_t, nf) && read_doubles(f, s->frame_m0, nf) &&
              read_doubles(f, s->slide_axis, ns);
    if (ok && s->bodies.n)
        srd_bodies_share_frames(s);
    return ok;
}

/* The parts after the header and params, into the sim; false when the file is short or the
 * element state does not have this model's size. */
static bool read_state(FILE *f, srd_sim *s, srd_checkpoint_pos *pos)
{
    size_t n = (size_t)s->m->n_dofs;
    int64_t counters[4];
    bool ok = fread(pos, sizeof *pos, 1, f) == 1 && fread(&s->t, sizeof s->t, 1, f) == 1 &&
              fread(counters, sizeof counters, 1, f) == 1;
    ok = ok && read_doubles(f, s->q, n) && read_doubles(f, s->v, n) && read_doubles(f, s->a0, n);
    int64_t behind = 0;
    ok = ok && read_doubles(f, s->q0, n) && read_doubles(f, s->v0, n) && read_doubles(f, &s->last_dt, 1) &&
         fread(&behind, sizeof behind, 1, f) == 1;
    for (int k = 0; k < s->m->n_sets && ok; k++) {
        int64_t len;
        ok = fread(&len, sizeof len, 1, f) == 1 && len == (int64_t)state_len(s, k) &&
             read_doubles(f, s->kernels[k].batch.state, (size_t)len);
    }
    ok = ok && read_turns(f, s) && (!s->pairs || srd_pairs_load(s, f));
    srd_controller *c = s->controller;
    if (c && ok)
        ok = fread(&c->next, sizeof c->next, 1, f) == 1 && read_doubles(f, c->data, (size_t)c->c->n_data);
    if (!ok || counters[3] < 0 || counters[3] > SRD_RK4)
        return false;
    s->steps = (long)counters[0];
    s->total_iterations = (long)counters[1];
    s->rejected = (long)counters[2];
    s->method = (int)counters[3];
    s->state_behind = behind != 0;
    return fgetc(f) == EOF;
}

int srd_checkpoint_load(FILE *f, const char *path, srd_sim *s, uint64_t fingerprint, srd_checkpoint_pos *pos,
                        char *err, size_t err_n)
{
    Header h;
    double *params = srd_xcalloc((size_t)s->m->n_params + 1, sizeof(double));
    bool ok = fread(&h, sizeof h, 1, f) == 1;
    if (!ok)
        snprintf(err, err_n, "%s is cut short or damaged", path);
    ok = ok && header_fits(&h, s, false, fingerprint, path, err, err_n);
    /* Params first, then the fingerprint: a different -p value is named. */
    if (ok && !read_doubles(f, params, (size_t)s->m->n_params)) {
        snprintf(err, err_n, "%s is cut short or damaged", path);
        ok = false;
    }
    ok = ok && same_params(s, params, path, err, err_n);
    ok = ok && header_fits(&h, s, true, fingerprint, path, err, err_n);
    if (ok && !read_state(f, s, pos)) {
        snprintf(err, err_n, "%s is cut short or damaged", path);
        ok = false;
    }
    free(params);
    return ok ? 0 : -1;
}

int srd_checkpoint_read(const char *dir, srd_sim *s, uint64_t fingerprint, srd_checkpoint_pos *pos, char *err,
                        size_t err_n)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, SRD_CHECKPOINT_FILE);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_n, "cannot read %s: %s\nhint: --resume takes the output directory of a run that "
                             "simulated (it saves a checkpoint at every output frame)", path, strerror(errno));
        return -1;
    }
    int status = srd_checkpoint_load(f, path, s, fingerprint, pos, err, err_n);
    fclose(f);
    return status;
}

