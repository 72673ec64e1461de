// Process memory (core/common/memory.h): the peak resident set is read and reset, and memory the
// allocator keeps after a large free (tcmalloc holds freed spans) goes back to the system on
// release_free_memory().
#include "core/common/memory.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>

#include "tests/test_skip.h"

namespace {

// The current resident set (VmRSS), in bytes.
int64_t rss_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  long pages = 0, resident = 0;
  const int read = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return read == 2 ? resident * 4096 : -1;
}

constexpr int64_t kMiB = 1 << 20;

// AddressSanitizer keeps freed memory in its quarantine, whatever the allocator is asked.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

}  // namespace

CATCH_TEST_CASE("a freed 512 MiB is handed back by release_free_memory, the peak resets") {
  if (kAsan) {
    attnbench::testing::skip_test("AddressSanitizer's quarantine holds freed memory");
    return;
  }
  if (!attnbench::reset_peak_rss() || rss_bytes() < 0) {
    attnbench::testing::skip_test("this system does not report or reset the resident set");
    return;
  }
  const int64_t before = rss_bytes();
  {
    auto block = std::make_unique<char[]>(512 * kMiB);
    std::memset(block.get(), 1, 512 * kMiB);  // resident
    CATCH_CHECK(rss_bytes() > before + 500 * kMiB);
  }
  CATCH_CHECK(attnbench::peak_rss_bytes() > before + 500 * kMiB);
  attnbench::release_free_memory();
  CATCH_CHECK(rss_bytes() < before + 100 * kMiB);
  CATCH_REQUIRE(attnbench::reset_peak_rss());
  CATCH_CHECK(attnbench::peak_rss_bytes() < before + 100 * kMiB);
}
