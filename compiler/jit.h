/* jit.h — turns a kernel module into callable code: the optimisation pipeline for the host
 * (or a portable x86-64-v3 target), ORC LLJIT for `srdc run`, object files for `srdc build`. */
#ifndef SRD_JIT_H
#define SRD_JIT_H
#include <stdbool.h>
#include <stddef.h>
#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

/* Measured on the examples (bench/README.md): the DAG arrives shared and simplified, and
 * kernels evaluate one vector lane per instance, so LLVM's IR passes and its optimising
 * instruction selection buy almost no speed there while costing most of the compile time.
 * The JIT therefore runs no IR passes and CodeGen "none" on chunks of about JIT_CHUNK_OPS
 * operations; object files get O2 and full CodeGen. Without fast-math flags both produce
 * bit-identical results. */
enum { JIT_CHUNK_OPS = 150 };
#define JIT_PIPELINE "default<O0>"
#define JIT_CODEGEN_LEVEL LLVMCodeGenLevelNone
/* Small modules (mass-spring lattices, contact: a few hundred instructions) are the other
 * way round: their kernels are tight loops of gathers, a few operations and scatters, which
 * CodeGen "none" leaves 1.4 to 1.6 times slower (bench/README.md, lattices), and they compile
 * in milliseconds at O2 too. Same bits either way. */
enum { JIT_SMALL_MODULE = 4000 };
#define JIT_SMALL_PIPELINE "default<O2>"
#define JIT_SMALL_CODEGEN_LEVEL LLVMCodeGenLevelDefault
#define AOT_PIPELINE "default<O2>"

/* A target machine for this host (portable = false) or for any x86-64 with AVX2 and FMA. */
LLVMTargetMachineRef jit_target_machine(bool portable, LLVMCodeGenOptLevel level, char *err, size_t err_n);
/* Sets the module's triple and data layout and runs "default<O2>" (or `pipeline`). */
bool jit_optimize(LLVMModuleRef M, LLVMTargetMachineRef tm, const char *pipeline, char *err, size_t err_n);

typedef struct SrdJit SrdJit;
/* Creates a JIT for this host: it takes object code (jit_compile, jit_add_object). */
SrdJit        *jit_create(char *err, size_t err_n);
/* Optimises and emits M's object code, disposing M. With a cache directory (jit_cache_dir)
 * the object code is looked up by a hash of the module's IR, the host CPU and the LLVM
 * version, and stored after a miss: compiling an unchanged model again takes milliseconds;
 * *hit tells whether the cache served it (may be NULL). Safe on several threads for modules
 * of distinct contexts. A damaged cache entry (its header's checksum or version does not match)
 * is deleted and rebuilt, and `warn` says so (otherwise it is ""): the caller reports it, since
 * this may run on a helper thread. Then add the object to the JIT (which takes it). */
bool  jit_compile(LLVMModuleRef M, LLVMMemoryBufferRef *obj, bool *hit, char *warn, size_t warn_n, char *err,
                  size_t err_n);
bool  jit_add_object(SrdJit *j, LLVMMemoryBufferRef obj, char *err, size_t err_n);
/* $SRD_CACHE if set ("" or "off" disables the cache), else $XDG_CACHE_HOME/srd or
 * ~/.cache/srd; NULL when none can be used. */
const char *jit_cache_dir(void);
void *jit_lookup(SrdJit *j, const char *symbol, char *err, size_t err_n);
void  jit_free(SrdJit *j);


#endif
