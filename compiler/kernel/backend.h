/* backend.h — the kernel compiler's LLVM half (code generation, JIT, object files, `srdc
 * build`) behind one table of functions. srdc does not link LLVM: it loads libsrdllvm.so, the
 * only part that does, when it first needs it, because loading LLVM runs its static
 * initialisers (about 20 ms, most of a small model's time to its first step). `srdc run` loads
 * it on the thread that compiles the kernels while the interpreter runs the first steps.
 * Tests and benchmarks link the same code statically (backend_static.c). */
#ifndef SRD_BACKEND_H
#define SRD_BACKEND_H
#include <stdbool.h>
#include <stddef.h>
#include "aot.h"
#include "kernels.h"

enum { BACKEND_WARN_N = 1400 };

typedef struct SrdBackend {
    /* Compiles every kernel of mk into a new JIT (*jit, also on failure when created) and puts
     * entry e's code in fn[e] (kernels_n_entries). Damaged cache entries are described in
     * warn[0] and warn[1] ("" when none) for the caller to report. */
    bool (*compile)(ModelKernels *mk, int chunk_ops, SrdJit **jit, srd_kernel_fn *fn, char warn[2][BACKEND_WARN_N],
                    char *err, size_t err_n);
    void (*jit_free)(SrdJit *j);
    /* `srdc emit-llvm`: the kernels' IR, optimised as the JIT would unless `unoptimized`, to
     * `out` (NULL: stdout). Returns an exit status. */
    int  (*emit_llvm)(ModelKernels *mk, const char *out, bool unoptimized);
    int  (*build_simulator)(const BuildOptions *o);
    /* Compiles n kernel specs (vectorised as the model's kernels are) into a new JIT (*jit, also
     * on failure when created) and puts spec k's code in fn[k]. Their kinds must differ. */
    bool (*compile_specs)(const KernelSpec *specs, int n, SrdJit **jit, srd_kernel_fn *fn, char *err, size_t err_n);
    int  (*build_simulator_of)(const BuildOptions *o, const Program *prog, srd_model *m);
} SrdBackend;

/* The table libsrdllvm.so exports, and backend_static.c returns. */
extern const SrdBackend srd_backend_table;

/* The backend, loaded on first use (safe on several threads); NULL with a message in err when
 * it cannot be loaded. */
const SrdBackend *srd_backend(char *err, size_t err_n);

#endif
