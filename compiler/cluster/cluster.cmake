# cluster.cmake — srd-mpi-sweep, the MPI side of `srdc sweep --mpi` (compiler/cluster/), built
# beside srdc when Open MPI (libopenmpi-dev) is found. srdc itself never links MPI.
find_package(MPI COMPONENTS C QUIET)
if(MPI_C_FOUND)
  add_executable(srd-mpi-sweep compiler/cluster/mpi_sweep.c compiler/cluster/rows.c)
  target_include_directories(srd-mpi-sweep PRIVATE compiler)
  target_link_libraries(srd-mpi-sweep PRIVATE MPI::MPI_C)
  add_dependencies(srdc srd-mpi-sweep)
  # Not under the sanitizers: Open MPI unloads its components at MPI_Finalize with memory still
  # held, which LeakSanitizer reports from unknown modules, past any suppression. rows.c, the
  # code of ours that it runs, is checked in srdc.
  if(SRD_SANITIZE)
    target_compile_options(srd-mpi-sweep PRIVATE -fno-sanitize=all)
    target_link_options(srd-mpi-sweep PRIVATE -fno-sanitize=all)
  endif()
else()
  message(STATUS "No MPI (libopenmpi-dev): srdc sweep --mpi will say so")
endif()
