/* test_alloc.c — running out of memory ends srdc and built simulators with SRD_EXIT_MEMORY and a
 * message, not SIGABRT: an allocation no machine can satisfy, in a child process, must exit 4;
 * and the memory limit honours RLIMIT_AS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "alloc.h"
#include "driver.h"

#include "tap.h"

/* Under AddressSanitizer an impossible allocation must return NULL like glibc's, not stop. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

static Tally tally;

/* The exit status of a child that installs the handler and allocates `bytes` (-1 when killed
 * by a signal). */
static int child_status(size_t n, size_t size, int realloc_instead)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        srd_exit_when_out_of_memory("test_alloc");
        void *volatile p = realloc_instead ? srd_xrealloc(NULL, n * size) : srd_xcalloc(n, size);
        _exit(p ? 0 : 9);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -2;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(void)
{
    size_t huge = SIZE_MAX / 4;
    check(&tally, child_status(huge, 2, 0) == SRD_EXIT_MEMORY, "srd_xcalloc of %zu bytes exits %d",
          huge * 2, SRD_EXIT_MEMORY);
    check(&tally, child_status(huge, 2, 1) == SRD_EXIT_MEMORY, "srd_xrealloc of %zu bytes exits %d",
          huge * 2, SRD_EXIT_MEMORY);
    check(&tally, child_status(1000, 8, 0) == 0, "a small allocation succeeds");
    const char *what;
    double limit = srd_memory_limit(&what);
    check(&tally, limit > 0 && strstr(what, "physical"), "the limit is the physical memory (%.3g GB)", limit / 1e9);
    struct rlimit old, lower;
    if (getrlimit(RLIMIT_AS, &old) == 0) {
        lower = old;
        lower.rlim_cur = (rlim_t)(limit / 2);
        if (old.rlim_cur == RLIM_INFINITY && setrlimit(RLIMIT_AS, &lower) == 0) {
            double capped = srd_memory_limit(&what);
            check(&tally, capped == (double)lower.rlim_cur && strstr(what, "ulimit -v"),
                  "a lower RLIMIT_AS is the limit (%.3g GB, %s)", capped / 1e9, what);
            setrlimit(RLIMIT_AS, &old);
        }
    }
    printf("%d checks, %d failed\n", tally.run, tally.failed);
    return tally.failed != 0;
}
