#!/bin/sh
# setup.sh — installs what srd needs on Debian 12, and only what is missing. Silent when
# everything is already there.
set -e
packages="build-essential cmake ninja-build pkg-config flex bison llvm-19-dev libopenblas-dev \
liblapacke-dev libsuitesparse-dev libarpack2-dev zlib1g-dev libzstd-dev clang libclang-rt-14-dev python3 python3-numpy python3-pytest libcairo2-dev ffmpeg python3-matplotlib chromium \
tetgen libnlopt-dev \
slurmctld slurmd slurm-client munge openmpi-bin libopenmpi-dev"
# libnlopt-dev (NLopt): the optimisers of `srdc optimize` (L-BFGS, MMA, SLSQP, BOBYQA).
# Slurm (slurmctld, slurmd, sbatch and squeue from slurm-client, with munge for authentication)
# and Open MPI: the cluster.sweeps test starts a single-node Slurm and runs mpirun (docs/cluster.md).
# The test runs its own daemons (own key, socket, ports and state, stopped at the end); where
# systemd runs, Debian also enables munge and the Slurm services, which the test does not use.
# tetgen (TetGen 1.5) fills closed OBJ/STL surfaces with tetrahedra for `solid { mesh = filled(...); }`.
# It runs as a command, not a linked library: TetGen is AGPL, and Gmsh's library (libgmsh-dev)
# would pull in a large dependency tree (OpenCASCADE, FLTK, ...) for one function; srdc reads
# Gmsh's .msh files itself.
# npm fetches three.js for the browser viewer at build time; chromium tests its pages. A
# machine with Node.js from elsewhere (NodeSource's nodejs ships npm and conflicts with
# Debian's npm package) already has the command: then Debian's package is not asked for.
command -v npm >/dev/null 2>&1 || packages="$packages npm"
missing=""
for p in $packages; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0
echo "srd: installing$missing"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
