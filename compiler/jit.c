/* jit.c — host target machines, the optimisation pipeline, and ORC LLJIT. */
#include "jit.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* A cache entry is a header followed by the object file. The header names the format and the
 * compiler that wrote it and carries the payload's length and a 128-bit hash of every payload
 * byte: a damaged entry (a flipped bit in code or constants, a truncated, empty or foreign
 * file) is detected before LLVM or the CPU ever sees it. */
#define CACHE_MAGIC "srdkobj\n"
enum { CACHE_FORMAT = 1, CACHE_VERSION_LEN = 24 };

typedef struct CacheHeader {
    char     magic[8];
    uint32_t format, header_bytes;
    char     version[CACHE_VERSION_LEN]; /* SRD_VERSION, NUL-padded */
    uint64_t payload_bytes;
    uint64_t hash[2];
} CacheHeader;
_Static_assert(sizeof(CacheHeader) == 64, "the cache header is 64 bytes with no padding");

/* The largest cache entry read back: far above any kernel object, and it keeps a stray huge
 * file in the cache directory from being read into memory. */
#define CACHE_MAX_ENTRY_BYTES (1024L * 1024 * 1024)

/* FNV-1a over every byte in two lanes of different seeds. Each step is a bijection of the
 * lane's state, so a change of any single byte always changes both lanes. */
static void hash_bytes(const unsigned char *p, size_t n, uint64_t out[2])
{
    uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };
    for (size_t i = 0; i < n; i++) {
        h[0] = (h[0] ^ p[i]) * 0x100000001b3ull;
        h[1] = (h[1] ^ p[i] ^ 0x5a) * 0x100000001b3ull;
    }
    out[0] = h[0];
    out[1] = h[1];
}

static CacheHeader cache_header(const void *payload, size_t n)
{
    CacheHeader h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, CACHE_MAGIC, sizeof h.magic);
    h.format = CACHE_FORMAT;
    h.header_bytes = sizeof h;
    snprintf(h.version, sizeof h.version, "%s", SRD_VERSION);
    h.payload_bytes = n;
    hash_bytes(payload, n, h.hash);
    return h;
}

/* The whole of a regular file of at most CACHE_MAX_ENTRY_BYTES, or NULL (errno says why). */
static unsigned char *slurp(const char *path, size_t *n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return NULL;
    unsigned char *buf = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= CACHE_MAX_ENTRY_BYTES) {
        size_t want = (size_t)st.st_size;
        buf = malloc(want + 1);
        ssize_t got = 1;
        for (*n = 0; buf && *n <= want && got > 0; *n += (size_t)got)
            got = read(fd, buf + *n, want + 1 - *n);
        if (buf && (got < 0 || *n != want)) { /* a read error, or a file that changed */
            free(buf);
            buf = NULL;
            errno = got < 0 ? errno : EIO;
        }
    } else {
        errno = EINVAL;
    }
    close(fd);
    return buf;
}

/* NULL when the entry is sound; otherwise what is wrong with it. */
static const char *entry_fault(const unsigned char *buf, size_t n)
{
    CacheHeader h;
    if (n < sizeof h)
        return n ? "truncated header" : "empty file";
    memcpy(&h, buf, sizeof h);
    if (memcmp(h.magic, CACHE_MAGIC, sizeof h.magic) || h.header_bytes != sizeof h)
        return "not a cache entry";
    if (h.format != CACHE_FORMAT || strncmp(h.version, SRD_VERSION, sizeof h.version))
        return "written by another version";
    if (h.payload_bytes != n - sizeof h)
        return "truncated or extended";
    CacheHeader want = cache_header(buf + sizeof h, n - sizeof h);
    return memcmp(want.hash, h.hash, sizeof h.hash) ? "checksum mismatch" : NULL;
}

/* The object code of a sound entry; a damaged one is described in `warn`, removed (so that
 * it is rebuilt and rewritten), and read as a miss. */
static LLVMMemoryBufferRef read_cached(const char *path, char *warn, size_t warn_n)
{
    size_t n = 0;
    unsigned char *buf = slurp(path, &n);
    if (!buf && errno != ENOENT) { /* a directory, a device, a huge or unreadable file */
        snprintf(warn, warn_n, "kernel cache entry %s cannot be read (%s); discarded and rebuilt", path,
                 strerror(errno));
        unlink(path);
    }
    if (!buf)
        return NULL;
    const char *fault = entry_fault(buf, n);
    LLVMMemoryBufferRef obj = NULL;
    if (fault) {
        snprintf(warn, warn_n, "kernel cache entry %s is damaged (%s); discarded and rebuilt", path, fault);
        unlink(path);
    } else {
        obj = LLVMCreateMemoryBufferWithMemoryRangeCopy((const char *)buf + sizeof(CacheHeader),
                                                        n - sizeof(CacheHeader), path);
    }
    free(buf);
    return obj;
}

/* Writes the entry next to its final name and renames it: concurrent runs never read half
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
    CacheHeader h = cache_header(LLVMGetBufferStart(obj), n);
    bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(LLVMGetBufferStart(obj), 1, n, f) == n;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0)
        unlink(tmp);
}

/* Instructions in M's functions. */
static long module_instructions(LLVMModuleRef M)
{
    long n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(M); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
            for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
                n++;
    return n;
}

bool jit_compile(LLVMModuleRef M, LLVMMemoryBufferRef *out, bool *hit, char *warn, size_t warn_n, char *err,
                 size_t err_n)
{
    bool small = module_instructions(M) <= JIT_SMALL_MODULE;
    const char *pipeline = small ? JIT_SMALL_PIPELINE : JIT_PIPELINE;
    LLVMCodeGenOptLevel level = small ? JIT_SMALL_CODEGEN_LEVEL : JIT_CODEGEN_LEVEL;
    *out = NULL;
    warn[0] = 0;
    if (hit)
        *hit = false;
    LLVMTargetMachineRef tm = jit_target_machine(false, level, err, err_n);
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
        snprintf(salt, sizeof salt, "%s|%d|%s|%s|%u.%u.%u|chunk%d|srd %s entry%d", pipeline, (int)level, cpu, features, major, minor, patch, JIT_CHUNK_OPS, SRD_VERSION,
                 (int)CACHE_FORMAT);
        hash_text(ir, strlen(ir), salt, key);
        snprintf(path, sizeof path, "%s/%s.o", dir, key);
        LLVMDisposeMessage(ir);
        LLVMDisposeMessage(cpu);
        LLVMDisposeMessage(features);
    }
    LLVMMemoryBufferRef obj = path[0] ? read_cached(path, warn, warn_n) : NULL;
    if (obj && hit)
        *hit = true;
    bool ok = true;
    if (!obj) {
        ok = jit_optimize(M, tm, pipeline, err, err_n);
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
