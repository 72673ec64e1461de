// PeriodicWorker (core/common/periodic.h): the task runs at once and then every interval, stops
// when it returns false, and the destructor returns promptly however long the interval.
#include "core/common/periodic.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>

using namespace std::chrono_literals;

CATCH_TEST_CASE("a periodic task runs at once, then until it returns false") {
  std::atomic<int> runs{0};
  {
    attnbench::PeriodicWorker worker(1ms, [&] { return ++runs < 3; });
    for (int i = 0; i < 2000 && runs < 3; ++i) std::this_thread::sleep_for(1ms);
    std::this_thread::sleep_for(20ms);  // a fourth run would come within this
  }
  CATCH_CHECK(runs == 3);
}

CATCH_TEST_CASE("a periodic worker stops without waiting out its interval") {
  std::atomic<int> runs{0};
  const auto start = std::chrono::steady_clock::now();
  {
    attnbench::PeriodicWorker worker(1h, [&] {
      ++runs;
      return true;
    });
    for (int i = 0; i < 2000 && runs < 1; ++i) std::this_thread::sleep_for(1ms);
  }
  CATCH_CHECK(runs == 1);
  CATCH_CHECK(std::chrono::steady_clock::now() - start < 10s);
}
