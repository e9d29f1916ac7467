/* backend_dlopen.c — srdc's backend: libsrdllvm.so, loaded on first use from srdc's own
 * directory (where the build puts both), else from where it was built. */
#include "backend.h"
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t    lock = PTHREAD_MUTEX_INITIALIZER;
static const SrdBackend  *loaded;
static char               failure[600];

/* libsrdllvm.so beside the running executable. */
static void beside_executable(char *path, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = 0;
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = 0;
    snprintf(path, n, "%s/libsrdllvm.so", slash ? exe : ".");
}

static const SrdBackend *load(void)
{
    char path[PATH_MAX + 32];
    beside_executable(path, sizeof path);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen(SRD_BACKEND_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(failure, sizeof failure, "cannot load the LLVM back end (%.200s): %.300s", path, dlerror());
        return NULL;
    }
    const SrdBackend *b = dlsym(lib, "srd_backend_table"); /* never unloaded: kernels live in it */
    if (!b)
        snprintf(failure, sizeof failure, "%.400s has no srd_backend_table", path);
    return b;
}

const SrdBackend *srd_backend(char *err, size_t err_n)
{
    pthread_mutex_lock(&lock);
    if (!loaded && !failure[0])
        loaded = load();
    const SrdBackend *b = loaded;
    pthread_mutex_unlock(&lock);
    if (!b && err)
        snprintf(err, err_n, "%s", failure);
    return b;
}

/* LeakSanitizer's tracking of dynamic TLS crashes at exit on the thread-local storage of the
 * dlopen'ed libLLVM ("Tracer caught signal 11", a known sanitizer runtime bug); srd keeps no
 * allocation reachable only from TLS, so sanitizer builds of srdc turn that tracking off. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SRD_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(SRD_UNDER_ASAN)
const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "intercept_tls_get_addr=0"; }
#endif
