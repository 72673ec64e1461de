#include "core/common/memory.h"

#include <dlfcn.h>
#include <malloc.h>

#include <fstream>
#include <string>

namespace attnbench {

int64_t peak_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // "VmHWM: N kB"
  }
  return -1;
}

bool reset_peak_rss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

void release_free_memory() {
  // gperftools' C entry point, looked up rather than linked: the executables link tcmalloc, the
  // libraries and their tests do not.
  using Release = void (*)();
  if (auto tcmalloc = reinterpret_cast<Release>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"))) {
    tcmalloc();
    return;
  }
  malloc_trim(0);
}

}  // namespace attnbench
