/* Fault injection for the shell tests (tests/harness/cli/faults_*.sh): an LD_PRELOAD library that
 * makes writes to chosen files fail the way a full disk does, so a test can check that attnbench
 * reports the failure cleanly and leaves what it had written before intact.
 *
 * Build and use (fault_shim.bash does both):
 *   cc -shared -fPIC -O1 -o fault_shim.so fault_shim.c -ldl
 *   FAULT_SHIM_PATH=checkpoint.tmp FAULT_SHIM_WRITE_BYTES=100000 LD_PRELOAD=./fault_shim.so cmd
 *
 * Environment (read once, at the first intercepted call):
 *   FAULT_SHIM_PATH         only regular files whose path contains this string are affected
 *                           (unset or empty: every regular file; never pipes, terminals, sockets)
 *   FAULT_SHIM_WRITE_BYTES  bytes the affected files may take in total, across the process; the
 *                           write that crosses the limit is cut short there and every later one
 *                           fails (unset: writes are not limited)
 *   FAULT_SHIM_FSYNC        when set to 1, fsync and fdatasync on affected files fail
 *   FAULT_SHIM_ERRNO        the errno of the failures: ENOSPC (default), EDQUOT, EIO or a number
 *
 * Intercepted: write, writev, pwrite, pwrite64, fsync, fdatasync, the calls behind libstdc++'s
 * file streams, LibTorch's archives and SQLite. glibc's stdio (fwrite) writes through internal
 * calls no preload can see.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static int g_ready;
static const char* g_path;
static long long g_budget = -1; /* -1: unlimited */
static int g_fail_fsync;
static int g_errno = ENOSPC;

static void init(void) {
  if (__atomic_load_n(&g_ready, __ATOMIC_ACQUIRE)) return;
  const char* p = getenv("FAULT_SHIM_PATH");
  g_path = p && *p ? p : NULL;
  const char* b = getenv("FAULT_SHIM_WRITE_BYTES");
  if (b && *b) g_budget = atoll(b);
  const char* f = getenv("FAULT_SHIM_FSYNC");
  g_fail_fsync = f && strcmp(f, "1") == 0;
  const char* e = getenv("FAULT_SHIM_ERRNO");
  if (e && *e) {
    if (strcmp(e, "ENOSPC") == 0) g_errno = ENOSPC;
    else if (strcmp(e, "EDQUOT") == 0) g_errno = EDQUOT;
    else if (strcmp(e, "EIO") == 0) g_errno = EIO;
    else g_errno = atoi(e);
  }
  __atomic_store_n(&g_ready, 1, __ATOMIC_RELEASE);
}

/* Whether `fd` is a regular file whose path contains FAULT_SHIM_PATH. */
static int affected(int fd) {
  init();
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  if (!g_path) return 1;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, target, sizeof target - 1);
  if (n < 0) return 0;
  target[n] = '\0';
  return strstr(target, g_path) != NULL;
}

/* How many of `want` bytes an affected file may still take: -1 when none (errno set). */
static ssize_t allowance(size_t want) {
  if (g_budget < 0) return (ssize_t)want;
  long long left = __atomic_load_n(&g_budget, __ATOMIC_RELAXED);
  for (;;) {
    if (left <= 0) {
      errno = g_errno;
      return -1;
    }
    long long take = (long long)want < left ? (long long)want : left;
    if (__atomic_compare_exchange_n(&g_budget, &left, left - take, 0, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      return (ssize_t)take;
  }
}

typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec*, int);
typedef int (*sync_fn)(int);

/* The next definition of `name` (libc's), looked up once. */
static void* real(void** slot, const char* name) {
  void* f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!f) {
    f = dlsym(RTLD_NEXT, name);
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
  }
  return f;
}
static void* g_write;
static void* g_pwrite;
static void* g_pwrite64;
static void* g_writev;
static void* g_fsync;
static void* g_fdatasync;

ssize_t write(int fd, const void* buf, size_t n) {
  write_fn next = (write_fn)real(&g_write, "write");
  if (!affected(fd)) return next(fd, buf, n);
  ssize_t take = allowance(n);
  return take < 0 ? -1 : next(fd, buf, (size_t)take);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  pwrite_fn next = (pwrite_fn)real(&g_pwrite, "pwrite");
  if (!affected(fd)) return next(fd, buf, n, off);
  ssize_t take = allowance(n);
  return take < 0 ? -1 : next(fd, buf, (size_t)take, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  pwrite_fn next = (pwrite_fn)real(&g_pwrite64, "pwrite64");
  if (!affected(fd)) return next(fd, buf, n, off);
  ssize_t take = allowance(n);
  return take < 0 ? -1 : next(fd, buf, (size_t)take, off);
}

/* writev on an affected file: the first non-empty buffer alone, within the allowance (a short
 * write, which every caller must handle anyway). */
ssize_t writev(int fd, const struct iovec* iov, int count) {
  writev_fn next = (writev_fn)real(&g_writev, "writev");
  if (!affected(fd)) return next(fd, iov, count);
  int i = 0;
  while (i < count && iov[i].iov_len == 0) ++i;
  if (i == count) return 0;
  ssize_t take = allowance(iov[i].iov_len);
  if (take < 0) return -1;
  return ((write_fn)real(&g_write, "write"))(fd, iov[i].iov_base, (size_t)take);
}

static int sync_or_fail(int fd, sync_fn next) {
  if (affected(fd) && g_fail_fsync) {
    errno = g_errno;
    return -1;
  }
  return next(fd);
}

int fsync(int fd) { return sync_or_fail(fd, (sync_fn)real(&g_fsync, "fsync")); }
int fdatasync(int fd) { return sync_or_fail(fd, (sync_fn)real(&g_fdatasync, "fdatasync")); }
