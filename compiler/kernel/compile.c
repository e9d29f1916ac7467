/* compile.c — the LLVM half of the kernel compiler's driver (kernels.h): emits a model's
 * kernels as LLVM modules, compiles them (on two threads when big) into a JIT, looks the entry
 * points up, and writes `srdc emit-llvm`'s IR. It lives in libsrdllvm.so (backend.h) with
 * codegen.c, jit.c and aot.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "backend.h"
#include "clock.h"
#include "codegen.h"
#include "jit.h"

LLVMModuleRef kernels_emit_part(ModelKernels *mk, LLVMContextRef C, int chunk_ops, int part, int parts)
{
    double t0 = srd_milliseconds();
    LLVMModuleRef M = LLVMModuleCreateWithNameInContext(part ? "srd_kernels_part" : "srd_kernels", C);
    int lanes = mk->lanes > 0 ? mk->lanes : cg_lanes(mk->portable); /* cg_lanes asks LLVM: once per module */
    for (int s = 0; s < mk->n; s++) {
        LoweredElement *le = &mk->sets[s].lowered;
        if (!le->kind)
            continue;
        KernelSpec spec = kernels_spec(le, le->value, le->symmetric, part, parts, lanes);
        CodegenStats st;
        cg_emit_kernel(M, &spec, chunk_ops, &st);
        mk->sets[s].chunks = st.chunks;
        spec.gradient_only = true;
        cg_emit_kernel(M, &spec, chunk_ops, &st);
    }
    for (int k = 0; k <= mk->n_schedules; k++) {
        LoweredElement *le = k < mk->n_schedules ? &mk->schedules[k].lowered : &mk->ground_height;
        if (!le->kind)
            continue;
        KernelSpec spec = kernels_spec(le, -1, false, part, parts, lanes);
        spec.gradient_only = true;
        CodegenStats st;
        cg_emit_kernel(M, &spec, chunk_ops, &st);
    }
    mk->ms_codegen += srd_milliseconds() - t0;
    return M;
}

LLVMModuleRef kernels_emit(ModelKernels *mk, LLVMContextRef C, int chunk_ops)
{
    return kernels_emit_part(mk, C, chunk_ops, 0, 1);
}

/* Operations of every kernel's value, gradient and Jacobian: about 3,000 compile in under
 * 100 ms on one thread. */
enum { SPLIT_OPS = 3000 };

static int total_ops(const ModelKernels *mk)
{
    int n = 0;
    for (int s = 0; s < mk->n; s++)
        n += mk->sets[s].info.cost;
    for (int k = 0; k < mk->n_schedules; k++)
        n += mk->schedules[k].lowered.ops_value + mk->schedules[k].lowered.ops_grad;
    return n;
}

/* One part of a split compilation, for a second thread. */
typedef struct PartJob {
    LLVMModuleRef       M;
    LLVMMemoryBufferRef obj;
    bool                ok, hit;
    char                err[512], warn[1400];
} PartJob;

static void *compile_part(void *arg)
{
    PartJob *p = arg;
    p->ok = jit_compile(p->M, &p->obj, &p->hit, p->warn, sizeof p->warn, p->err, sizeof p->err);
    return NULL;
}

/* Emits the kernels, compiles them (big ones as two modules on two threads: machine code
 * generation is most of the time from source to kernels; small ones in one module, where a
 * second thread would cost more than it saves) and adds the object code to jit. Cache
 * warnings are left in job[].warn for the main thread. */
static bool compile_kernels(ModelKernels *mk, SrdJit *jit, int chunk_ops, PartJob job[2], char *err, size_t err_n)
{
    int parts = total_ops(mk) > SPLIT_OPS ? 2 : 1;
    LLVMContextRef C[2] = { LLVMContextCreate(), parts > 1 ? LLVMContextCreate() : NULL };
    memset(job, 0, 2 * sizeof *job);
    for (int p = 0; p < parts; p++)
        job[p].M = kernels_emit_part(mk, C[p], chunk_ops, p, parts);
    pthread_t helper;
    bool threaded = parts > 1 && pthread_create(&helper, NULL, compile_part, &job[1]) == 0;
    compile_part(&job[0]);
    if (threaded)
        pthread_join(helper, NULL);
    else if (parts > 1)
        compile_part(&job[1]);
    for (int p = 0; p < parts; p++)
        LLVMContextDispose(C[p]);
    mk->cache_hit = job[0].hit && (parts < 2 || job[1].hit);
    bool ok = true;
    for (int p = 0; p < parts; p++) {
        if (ok && !job[p].ok) {
            snprintf(err, err_n, "%s", job[p].err);
            ok = false;
        }
        if (job[p].obj && (!ok || !jit_add_object(jit, job[p].obj, err, err_n))) {
            if (!ok)
                LLVMDisposeMemoryBuffer(job[p].obj);
            ok = false;
        }
    }
    return ok;
}

/* The compiled code of every entry (NULL where there is no kernel). */
static bool lookup_entries(const ModelKernels *mk, SrdJit *jit, srd_kernel_fn *out, char *err, size_t err_n)
{
    for (int e = 0; e < kernels_n_entries(mk); e++) {
        bool gradient_only;
        const LoweredElement *le = kernels_entry(mk, e, &gradient_only);
        out[e] = NULL;
        if (!le->kind)
            continue;
        char name[256];
        snprintf(name, sizeof name, "%s%s", gradient_only ? SRD_GRADIENT_PREFIX : SRD_KERNEL_PREFIX, le->kind);
        out[e] = (srd_kernel_fn)jit_lookup(jit, name, err, err_n);
        if (!out[e])
            return false;
    }
    return true;
}

static bool compile(ModelKernels *mk, int chunk_ops, SrdJit **jit, srd_kernel_fn *fn, char warn[2][BACKEND_WARN_N],
                    char *err, size_t err_n)
{
    *jit = jit_create(err, err_n);
    if (!*jit)
        return false;
    PartJob job[2];
    bool ok = compile_kernels(mk, *jit, chunk_ops, job, err, err_n);
    for (int p = 0; p < 2; p++)
        snprintf(warn[p], BACKEND_WARN_N, "%s", job[p].warn);
    return ok && lookup_entries(mk, *jit, fn, err, err_n);
}

/* Writes M's IR to out (NULL: stdout); returns an exit status. */
static int print_module(LLVMModuleRef M, const char *out)
{
    char *msg = NULL;
    int status = SRD_EXIT_OK;
    if (out && LLVMPrintModuleToFile(M, out, &msg)) {
        fprintf(stderr, "srdc: error: cannot write %s: %s\n", out, msg ? msg : "");
        status = SRD_EXIT_IO;
    } else if (!out) {
        char *ir = LLVMPrintModuleToString(M);
        fputs(ir, stdout);
        LLVMDisposeMessage(ir);
    }
    LLVMDisposeMessage(msg);
    return status;
}

static int emit_llvm(ModelKernels *mk, const char *out, bool unoptimized)
{
    char err[512];
    int status = SRD_EXIT_OK;
    LLVMContextRef C = LLVMContextCreate();
    LLVMModuleRef M = kernels_emit(mk, C, JIT_CHUNK_OPS);
    if (!unoptimized) {
        LLVMTargetMachineRef tmc = jit_target_machine(false, JIT_CODEGEN_LEVEL, err, sizeof err);
        if (!tmc || !jit_optimize(M, tmc, JIT_PIPELINE, err, sizeof err)) {
            fprintf(stderr, "srdc: error: %s\n", err);
            status = SRD_EXIT_BAD_INPUT;
        }
        if (tmc)
            LLVMDisposeTargetMachine(tmc);
    }
    if (status == SRD_EXIT_OK)
        status = print_module(M, out);
    LLVMDisposeModule(M);
    LLVMContextDispose(C);
    return status;
}

static bool lookup_specs(const KernelSpec *specs, int n, SrdJit *jit, srd_kernel_fn *fn, char *err, size_t err_n)
{
    for (int k = 0; k < n; k++) {
        char name[300];
        snprintf(name, sizeof name, "%s%s", specs[k].gradient_only ? SRD_GRADIENT_PREFIX : SRD_KERNEL_PREFIX,
                 specs[k].kind);
        fn[k] = (srd_kernel_fn)jit_lookup(jit, name, err, err_n);
        if (!fn[k])
            return false;
    }
    return true;
}

static bool compile_specs(const KernelSpec *specs, int n, SrdJit **jit, srd_kernel_fn *fn, char *err, size_t err_n)
{
    *jit = jit_create(err, err_n);
    if (!*jit)
        return false;
    LLVMContextRef C = LLVMContextCreate();
    LLVMModuleRef M = LLVMModuleCreateWithNameInContext("srd_specs", C);
    int lanes = cg_lanes(false);
    for (int k = 0; k < n; k++) {
        KernelSpec spec = specs[k];
        spec.lanes = lanes;
        CodegenStats st;
        cg_emit_kernel(M, &spec, JIT_CHUNK_OPS, &st);
    }
    LLVMMemoryBufferRef obj = NULL;
    char warn[BACKEND_WARN_N];
    bool ok = jit_compile(M, &obj, NULL, warn, sizeof warn, err, err_n);
    LLVMContextDispose(C);
    if (ok && !jit_add_object(*jit, obj, err, err_n))
        return false;
    if (!ok && obj)
        LLVMDisposeMemoryBuffer(obj);
    return ok && lookup_specs(specs, n, *jit, fn, err, err_n);
}

const SrdBackend srd_backend_table = { .compile = compile, .jit_free = jit_free, .emit_llvm = emit_llvm,
                                       .build_simulator = build_simulator, .build_simulator_of = build_simulator_of,
                                       .compile_specs = compile_specs };
