/* jit.c — host target machines, the optimisation pipeline, and ORC LLJIT. */
#include "jit.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

struct SrdJit {
    LLVMOrcThreadSafeContextRef tsc;
    LLVMOrcLLJITRef             jit;
    int                         modules;
};

static void init_llvm(void)
{
    static int done;
    if (done)
        return;
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    done = 1;
}

static void take_error(LLVMErrorRef e, char *err, size_t err_n)
{
    char *msg = LLVMGetErrorMessage(e);
    snprintf(err, err_n, "%s", msg);
    LLVMDisposeErrorMessage(msg);
}

LLVMTargetMachineRef jit_target_machine(bool portable, LLVMCodeGenOptLevel level, char *err, size_t err_n)
{
    init_llvm();
    char *triple = LLVMGetDefaultTargetTriple();
    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(triple, &target, &msg)) {
        snprintf(err, err_n, "no LLVM target for %s: %s", triple, msg ? msg : "");
        LLVMDisposeMessage(msg);
        LLVMDisposeMessage(triple);
        return NULL;
    }
    char *cpu = portable ? NULL : LLVMGetHostCPUName();
    char *features = portable ? NULL : LLVMGetHostCPUFeatures();
    LLVMTargetMachineRef tm = LLVMCreateTargetMachine(target, triple, portable ? "x86-64-v3" : cpu,
                                                      portable ? "" : features, level,
                                                      LLVMRelocPIC, LLVMCodeModelDefault);
    if (cpu)
        LLVMDisposeMessage(cpu);
    if (features)
        LLVMDisposeMessage(features);
    LLVMDisposeMessage(triple);
    if (!tm)
        snprintf(err, err_n, "cannot create an LLVM target machine");
    return tm;
}

bool jit_optimize(LLVMModuleRef M, LLVMTargetMachineRef tm, const char *pipeline, char *err, size_t err_n)
{
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(M, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef layout = LLVMCreateTargetDataLayout(tm);
    char *layout_text = LLVMCopyStringRepOfTargetData(layout);
    LLVMSetDataLayout(M, layout_text);
    LLVMDisposeMessage(layout_text);
    LLVMDisposeTargetData(layout);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(M, pipeline ? pipeline : "default<O2>", tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (e) {
        take_error(e, err, err_n);
        return false;
    }
    return true;
}

SrdJit *jit_create(char *err, size_t err_n)
{
    init_llvm();
    LLVMTargetMachineRef tm = jit_target_machine(false, LLVMCodeGenLevelLess, err, err_n);
    if (!tm)
        return NULL;
    LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm));
    SrdJit *j = calloc(1, sizeof *j);
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, builder);
    if (e) {
        take_error(e, err, err_n);
        free(j);
        return NULL;
    }
    j->tsc = LLVMOrcCreateNewThreadSafeContext();
    return j;
}

LLVMContextRef jit_context(SrdJit *j) { return LLVMOrcThreadSafeContextGetContext(j->tsc); }

bool jit_add(SrdJit *j, LLVMModuleRef M, char *err, size_t err_n)
{
    LLVMTargetMachineRef tm = jit_target_machine(false, LLVMCodeGenLevelLess, err, err_n);
    if (!tm)
        return false;
    bool ok = jit_optimize(M, tm, JIT_PIPELINE, err, err_n);
    LLVMDisposeTargetMachine(tm);
    if (!ok) {
        LLVMDisposeModule(M);
        return false;
    }
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(M, j->tsc);
    LLVMOrcJITDylibRef dylib = LLVMOrcLLJITGetMainJITDylib(j->jit);
    LLVMErrorRef e = LLVMOrcLLJITAddLLVMIRModule(j->jit, dylib, tsm);
    if (e) {
        take_error(e, err, err_n);
        LLVMOrcDisposeThreadSafeModule(tsm);
        return false;
    }
    j->modules++;
    return true;
}

void *jit_lookup(SrdJit *j, const char *symbol, char *err, size_t err_n)
{
    LLVMOrcExecutorAddress addr = 0;
    LLVMErrorRef e = LLVMOrcLLJITLookup(j->jit, &addr, symbol);
    if (e) {
        take_error(e, err, err_n);
        return NULL;
    }
    return (void *)(uintptr_t)addr;
}

void jit_free(SrdJit *j)
{
    if (!j)
        return;
    LLVMOrcDisposeLLJIT(j->jit);
    LLVMOrcDisposeThreadSafeContext(j->tsc);
    free(j);
}

bool aot_write_object(LLVMModuleRef M, const char *path, char *err, size_t err_n)
{
    LLVMTargetMachineRef tm = jit_target_machine(true, LLVMCodeGenLevelDefault, err, err_n);
    if (!tm)
        return false;
    bool ok = jit_optimize(M, tm, AOT_PIPELINE, err, err_n);
    char *msg = NULL;
    if (ok && LLVMTargetMachineEmitToFile(tm, M, path, LLVMObjectFile, &msg)) {
        snprintf(err, err_n, "cannot write %s: %s", path, msg ? msg : "");
        ok = false;
    }
    LLVMDisposeMessage(msg);
    LLVMDisposeTargetMachine(tm);
    return ok;
}
