/* kernels.h — compiles every element kind of a model into native kernels: finds each kind's
 * definition (the user's, or the standard library's), lowers it, derives its derivatives,
 * emits one LLVM module, and JIT-compiles it or writes it as an object file. */
#ifndef SRD_KERNELS_H
#define SRD_KERNELS_H
#include <stdbool.h>
#include "ast.h"
#include "codegen.h"
#include "driver.h"
#include "jit.h"
#include "lower.h"
#include "srd_kernel.h"
#include "srd_model.h"

typedef struct KernelSet {
    LoweredElement  lowered;   /* kind NULL when the set has no definition */
    srd_kernel_info info;
    int            *arrays;    /* storage behind info's pointers */
    srd_kernel_fn   fn;        /* after JIT */
    srd_kernel_fn   gradient;  /* the same without the Jacobian */
    int             chunks;
} KernelSet;

/* The kernel of an actuation value or of the loads sharing one time-dependent expression. */
typedef struct ScheduleKernel {
    LoweredElement lowered;
    int            actuation;  /* index into the model's actuations, or -1 */
    int            expr;       /* loads: their run-time expression, or -1 */
    srd_kernel_fn  fn;
} ScheduleKernel;

typedef struct ModelKernels {
    int            n;          /* = model->n_sets */
    KernelSet     *sets;
    int            n_schedules;
    ScheduleKernel *schedules;
    LoweredElement ground_height;    /* uneven ground: z = h(x, y) per node (kind NULL if none) */
    srd_kernel_fn  ground_height_fn; /* for contact statistics */
    Program        stdlib;     /* standard modules loaded for definitions the file lacked */
    Arena          arena;
    SrdJit        *jit;
    double         ms_lower, ms_codegen, ms_jit; /* wall time of each stage */
    bool           cache_hit;  /* the machine code came from the on-disk cache */
    bool           portable;   /* kernels for any x86-64-v3 (srdc build --portable), not this host */
    int            lanes;      /* vector lanes of the next emission; 0: cg_lanes (the fastest code) */
    struct KernelTiers *tiers; /* kernels_start's trampolines and background compilation, or NULL */
} ModelKernels;

/* Marks the data columns of m's element sets that a param can change (srd_elemset.param_column),
 * so that kernels read them instead of folding them, by elaborating `file` again with every
 * param moved. Fails, with a message in err, when a run-time expression captures a loop value
 * that depends on a param. */
bool kernels_mark_param_columns(const char *file, srd_model *m, char *err, size_t err_n);
/* Lowers every element set of the model. Sets whose kind has no definition are reported in
 * err (and the call fails) unless allow_missing. */
bool kernels_lower(ModelKernels *mk, const Program *prog, const srd_model *m, bool allow_missing, char *err,
                   size_t err_n);
/* What codegen (and the interpreter) needs of a lowered element: value is its energy node, or -1. */
KernelSpec kernels_spec(const LoweredElement *le, ExprId value, bool symmetric, int part, int parts, int lanes);
/* Every kernel of the model as one list of entries: set s's kernel at 2s and its gradient at
 * 2s + 1, then the schedules, then the ground's height. */
int kernels_n_entries(const ModelKernels *mk);
/* Entry e's lowered element (kind NULL: none) and whether it is a gradient-only kernel. */
const LoweredElement *kernels_entry(const ModelKernels *mk, int e, bool *gradient_only);
/* Emits the kernels into a new module of context C (backend, kernel/compile.c). */
LLVMModuleRef kernels_emit(ModelKernels *mk, LLVMContextRef C, int chunk_ops);
/* Part `part` of `parts` modules that together hold the kernels (see KernelSpec.parts). */
LLVMModuleRef kernels_emit_part(ModelKernels *mk, LLVMContextRef C, int chunk_ops, int part, int parts);
/* Emits, optimises and JIT-compiles; fills each set's fn. */
bool kernels_jit(ModelKernels *mk, int chunk_ops, char *err, size_t err_n);
/* For `srdc run`: makes every kernel callable at once, without code generation, and compiles
 * them on a helper thread (kernel/tier.h). Each set's fn (and each schedule's) is a trampoline
 * that interprets the kernel's DAG until machine code is ready: first scalar kernels (one lane,
 * which LLVM's fast instruction selector compiles in about a quarter of the time), then the
 * vector kernels; all three give the same bits. $SRD_JIT chooses: "wait" compiles the vector
 * kernels before returning (no interpreted calls), "interp" never compiles; anything else is
 * the default, tiered. Falls back to kernels_jit when the trampolines are all taken. */
bool kernels_start(ModelKernels *mk, int chunk_ops, char *err, size_t err_n);
/* Ends kernels_start's compilation: a tier under way is finished (and cached), the vector tier
 * is not begun when the scalar one is still being compiled (the run is over). Reports warnings
 * (a damaged cache entry, or a failure, after which a slower tier had run the calls) and, with
 * $SRD_TIMING set, when the first kernel call began and when each tier took over. kernels_free
 * calls it too. */
void kernels_finish(ModelKernels *mk);
void kernels_free(ModelKernels *mk);

/* The runtime's view of compiled kernels: per-set and per-schedule arrays, which live until
 * kernels_table_free, and the driver's table over them. */
typedef struct KernelTable {
    srd_kernel_table table;
    srd_kernel_fn   *fns, *gradients, *schedules;
    srd_kernel_info *infos;
    int             *actuation, *expr;
} KernelTable;
void kernels_table_fill(KernelTable *t, const ModelKernels *mk);
void kernels_table_free(KernelTable *t);

#endif
