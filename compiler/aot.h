/* aot.h — `srdc build`: a model compiled ahead of time and linked into a standalone simulator. */
#ifndef SRD_AOT_H
#define SRD_AOT_H
#include <stdbool.h>
#include <stddef.h>
#include <llvm-c/Core.h>
#include "ast.h"
#include "srd_model.h"

typedef struct BuildOptions {
    const char *file;      /* the .srd model */
    const char *output;    /* the executable to write */
    bool        portable;  /* any x86-64 with AVX2 and FMA instead of this host's CPU */
    bool        static_libs; /* OpenBLAS, LAPACK(E) and the Fortran runtime linked in statically */
    bool        quiet;
    bool        shared;    /* a shared library of the kernels and the model for libsrd (srd_open), no runtime */
} BuildOptions;

/* Optimises M and writes it as a relocatable (PIC) object file for this host, or for any
 * x86-64 with AVX2 and FMA when portable. */
bool aot_write_object(LLVMModuleRef M, const char *path, bool portable, char *err, size_t err_n);

/* Builds o->output from o->file. Returns an exit status: 0, 1 bad input, 3 when writing or linking failed. */
int build_simulator(const BuildOptions *o);
/* The same for a model (NULL: bad input) already elaborated from o->file into prog and m while
 * sources_record(true) kept the files it read, which the simulator embeds. The caller keeps
 * ownership of prog and m (whose param columns get marked). */
int build_simulator_of(const BuildOptions *o, const Program *prog, srd_model *m);

#endif
