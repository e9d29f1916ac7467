/* mpi_launch.h — `srdc sweep --mpi`: srdc prepares the rows, then starts `mpirun srd-mpi-sweep
 * DIR`, a separate program (compiler/cluster/mpi_sweep.c) so that srdc itself never links MPI. */
#ifndef SRD_CLUSTER_MPI_LAUNCH_H
#define SRD_CLUSTER_MPI_LAUNCH_H
#include "cluster/rows.h"
#include "sweep.h"

/* Before anything is built: finds srd-mpi-sweep and the launcher. Returns an SRD_EXIT_* code. */
int mpi_check(const SweepOptions *o);
/* Runs the rows under MPI and returns srd-mpi-sweep's exit status (as `srdc sweep`'s). */
int mpi_sweep(const SweepOptions *o, const SweepRows *rows);

#endif
