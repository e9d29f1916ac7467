/* jit.c — host target machines, the optimisation pipeline, and ORC LLJIT. */
#include "jit.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "files.h"
#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

struct SrdJit {
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
    LLVMTargetMachineRef tm = jit_target_machine(false, JIT_CODEGEN_LEVEL, err, err_n);
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
    return j;
}

const char *jit_cache_dir(void)
{
    static char dir[1024];
    const char *env = getenv("SRD_CACHE");
    if (env)
        return *env && strcmp(env, "off") ? env : NULL;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(dir, sizeof dir, "%s/srd", xdg);
    else if (home && *home)
        snprintf(dir, sizeof dir, "%s/.cache/srd", home);
    else
        return NULL;
    return dir;
}

/* 64-bit FNV-1a, twice with different seeds: a 128-bit key for the IR text. */
static void hash_text(const char *text, size_t n, const char *salt, char out[33])
{
    uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
    for (int k = 0; k < 2; k++) {
        for (const char *p = salt; *p; p++)
            h[k] = (h[k] ^ (unsigned char)*p) * 0x100000001b3ull;
        for (size_t i = 0; i < n; i++)
            h[k] = (h[k] ^ (unsigned char)text[i] ^ (unsigned char)k) * 0x100000001b3ull;
    }
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
}

static LLVMMemoryBufferRef read_cached(const char *path)
{
    LLVMMemoryBufferRef buf = NULL;
    char *msg = NULL;
    if (access(path, R_OK) != 0 || LLVMCreateMemoryBufferWithContentsOfFile(path, &buf, &msg)) {
        LLVMDisposeMessage(msg);
        return NULL;
    }
    return buf;
}

/* Writes the object next to its final name and renames it: concurrent runs never read half
 * a file. */
static void write_cached(const char *dir, const char *path, LLVMMemoryBufferRef obj)
{
    if (srd_make_dirs(dir) != 0)
        return;
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return;
    size_t n = LLVMGetBufferSize(obj);
    bool ok = fwrite(LLVMGetBufferStart(obj), 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

bool jit_compile(LLVMModuleRef M, LLVMMemoryBufferRef *out, bool *hit, char *err, size_t err_n)
{
    *out = NULL;
    if (hit)
        *hit = false;
    LLVMTargetMachineRef tm = jit_target_machine(false, JIT_CODEGEN_LEVEL, err, err_n);
    if (!tm) {
        LLVMDisposeModule(M);
        return false;
    }
    /* The key: the generated IR, the pipeline, the host CPU and features, LLVM's version. */
    const char *dir = jit_cache_dir();
    char path[1200] = "", key[33];
    if (dir) {
        char *ir = LLVMPrintModuleToString(M);
        char *cpu = LLVMGetHostCPUName(), *features = LLVMGetHostCPUFeatures();
        unsigned major, minor, patch;
        LLVMGetVersion(&major, &minor, &patch);
        char salt[4096];
        snprintf(salt, sizeof salt, "%s|%d|%s|%s|%u.%u.%u|chunk%d", JIT_PIPELINE, (int)JIT_CODEGEN_LEVEL, cpu, features, major, minor, patch,
                 JIT_CHUNK_OPS);
        hash_text(ir, strlen(ir), salt, key);
        snprintf(path, sizeof path, "%s/%s.o", dir, key);
        LLVMDisposeMessage(ir);
        LLVMDisposeMessage(cpu);
        LLVMDisposeMessage(features);
    }
    LLVMMemoryBufferRef obj = path[0] ? read_cached(path) : NULL;
    if (obj && hit)
        *hit = true;
    bool ok = true;
    if (!obj) {
        ok = jit_optimize(M, tm, JIT_PIPELINE, err, err_n);
        char *msg = NULL;
        if (ok && LLVMTargetMachineEmitToMemoryBuffer(tm, M, LLVMObjectFile, &msg, &obj)) {
            snprintf(err, err_n, "cannot generate machine code: %s", msg ? msg : "");
            ok = false;
        }
        LLVMDisposeMessage(msg);
        if (ok && path[0])
            write_cached(dir, path, obj);
    }
    LLVMDisposeTargetMachine(tm);
    LLVMDisposeModule(M);
    *out = ok ? obj : NULL;
    return ok;
}

bool jit_add_object(SrdJit *j, LLVMMemoryBufferRef obj, char *err, size_t err_n)
{
    LLVMOrcJITDylibRef dylib = LLVMOrcLLJITGetMainJITDylib(j->jit);
    LLVMErrorRef e = LLVMOrcLLJITAddObjectFile(j->jit, dylib, obj); /* takes the buffer */
    if (e) {
        take_error(e, err, err_n);
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
    free(j);
}
