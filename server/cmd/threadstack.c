/* Worker stack size.
 *
 * Civetweb 1.15 as Debian builds it gives each worker thread a fixed 100 KiB stack: it sets
 * the size explicitly (pthread_attr_setstacksize with its compile-time USE_STACK_SIZE), so
 * neither pthread_setattr_default_np nor RLIMIT_STACK changes it (measured: a handler read
 * 102,400 bytes from pthread_getattr_np either way). This definition interposes libc's for
 * every library the binary loads — the executable's dynamic symbols are searched first — and
 * raises any smaller request to the configured minimum (CAPLEDGER_THREAD_STACK_KB). The
 * server logs the size its workers really got at start. */
#include "cmd/threadstack.h"

#include <dlfcn.h>
#include <pthread.h>

typedef int (*setstacksize_fn)(pthread_attr_t *, size_t);

static size_t min_bytes;
static setstacksize_fn libc_setstacksize;

void threadstack_set_min(size_t bytes)
{
    if (!libc_setstacksize)
        libc_setstacksize = (setstacksize_fn)dlsym(RTLD_NEXT, "pthread_attr_setstacksize");
    min_bytes = bytes;
}

int pthread_attr_setstacksize(pthread_attr_t *attr, size_t size)
{
    if (!libc_setstacksize) /* a thread started before threadstack_set_min: libc's own */
        libc_setstacksize = (setstacksize_fn)dlsym(RTLD_NEXT, "pthread_attr_setstacksize");
    if (size < min_bytes)
        size = min_bytes;
    return libc_setstacksize(attr, size);
}
