// This process's memory as Linux reports it, for one process that runs several jobs in turn (a
// sweep's cells): the peak resident set, which can be reset so that each job measures its own, and
// handing freed memory back to the system so that one job's transient peak does not stay resident
// through the next (docs/sweeps.md, "Memory").
#pragma once
#include <cstdint>

namespace attnbench {

// The peak resident set size since the process started or the last reset (VmHWM of
// /proc/self/status), in bytes; -1 where it cannot be read.
int64_t peak_rss_bytes();

// Resets the peak to the current resident set (writes "5" to /proc/self/clear_refs); false where
// the system does not allow it.
bool reset_peak_rss();

// Returns the allocator's free memory to the system: tcmalloc's ReleaseFreeMemory when tcmalloc
// is the allocator (it keeps freed spans of large allocations otherwise), else glibc's malloc_trim.
void release_free_memory();

}  // namespace attnbench
