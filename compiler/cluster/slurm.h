/* slurm.h — `srdc sweep --slurm`: the sweep's rows as a Slurm job array, each array task a
 * chunk of rows run by a shell script with the built simulator; `--submit` hands it to sbatch. */
#ifndef SRD_CLUSTER_SLURM_H
#define SRD_CLUSTER_SLURM_H
#include "cluster/rows.h"
#include "sweep.h"

/* Before anything is built: warns when the sweep directory or the runs' executable may be out
 * of the compute nodes' reach, and refuses --submit without sbatch. Returns an SRD_EXIT_* code. */
int slurm_check(const SweepOptions *o, const char *dir, const char *exe);
/* Writes DIR/slurm/job_N.sbatch for the rows that have not succeeded yet and, with --submit,
 * submits it. Returns an SRD_EXIT_* code. */
int slurm_sweep(const SweepOptions *o, const SweepRows *rows);
/* Whether path lies on a file system that other machines mount (NFS, Lustre, GPFS, ...); when
 * not, why (n bytes) says what it is. */
bool slurm_path_shared(const char *path, char *why, size_t n);
/* The job ids that DIR/slurm/jobs.txt records, comma-separated in ids (n bytes); false if none. */
bool slurm_job_ids(const char *dir, char *ids, size_t n);

#endif
