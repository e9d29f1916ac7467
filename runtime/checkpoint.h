/* checkpoint.h — the complete state of a simulation at an output frame, saved beside the frames
 * so that `--resume DIR` continues the run exactly where it stood: the same steps, bit for bit,
 * as a run that was never interrupted. */
#ifndef SRD_CHECKPOINT_H
#define SRD_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "sim.h"

#define SRD_CHECKPOINT_FILE "checkpoint.bin"

/* Where the driver's loop and its output files stood when the state was saved. */
typedef struct srd_checkpoint_pos {
    int64_t step;                            /* index of the saved step in the loop */
    double  next_out, next_energy, next_probe;
    int64_t energy_bytes, probes_bytes, csv_bytes, pvd_bytes; /* -1: no such file */
    int64_t vtk_frames, csv_frames;
    double  contact[7];                      /* the run summary's contact statistics */
} srd_checkpoint_pos;

/* A hash of what the run computes: the model (nodes, DOFs, masses, fixed DOFs, elements and
 * their data, loads, environment), the param values in use and the simulate settings (method,
 * time step, output period, start, tolerance, iteration cap, line search, solver). A checkpoint from another model or other params differs. */
uint64_t srd_checkpoint_fingerprint(const srd_model *m, const double *params, double dt, double out_every);

/* Writes DIR/checkpoint.bin atomically (a temporary file renamed over it when complete): a run
 * killed while writing leaves the previous checkpoint whole. 0, or -1 with a message in err. */
int srd_checkpoint_write(const char *dir, const srd_sim *s, uint64_t fingerprint, const srd_checkpoint_pos *pos,
                         char *err, size_t err_n);

/* Reads DIR/checkpoint.bin into the sim (time, step counts, q, v, Newmark's acceleration, the
 * elements' step-start state) and pos. Refuses, with a message naming the difference, a
 * checkpoint written for another model, other params or other simulate settings. 0, or -1. */
int srd_checkpoint_read(const char *dir, srd_sim *s, uint64_t fingerprint, srd_checkpoint_pos *pos, char *err,
                        size_t err_n);

/* The same to and from any stream (the C API's snapshots in memory); `path` names the stream in
 * messages. 0, or -1 (load: with a message in err). */
int srd_checkpoint_save(FILE *f, const srd_sim *s, uint64_t fingerprint, const srd_checkpoint_pos *pos);
int srd_checkpoint_load(FILE *f, const char *path, srd_sim *s, uint64_t fingerprint, srd_checkpoint_pos *pos,
                        char *err, size_t err_n);

#endif
