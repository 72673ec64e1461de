// The checks of command-line values declared in command.h.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "harness/cli/command.h"

namespace attnbench::cli {
namespace {

// ">= 0" or "in [1, 1024]": the int64 maximum left out, as no one types it.
std::string int_range(int64_t lo, int64_t hi) {
  if (hi == std::numeric_limits<int64_t>::max()) return fmt::format(">= {}", lo);
  return fmt::format("in [{}, {}]", lo, hi);
}

}  // namespace

void refuse_empty_values(CLI::App& app) {
  const CLI::Validator non_empty(
      [](std::string& value) {
        return value.empty() ? std::string("empty value: give one, or leave the option out")
                             : std::string();
      },
      "", "NON-EMPTY");
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size() != 0) opt->check(non_empty);  // flags take no value
  }
}

CLI::Validator int_in(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& value) -> std::string {
        errno = 0;
        char* end = nullptr;
        const long long v = std::strtoll(value.c_str(), &end, 10);
        const bool whole = !value.empty() && end && *end == '\0' && errno == 0;
        if (whole && v >= lo && v <= hi) return "";
        return fmt::format("'{}' is not an integer {}", value, int_range(lo, hi));
      },
      "INT " + int_range(lo, hi), "INT");
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& value) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double v = std::strtod(value.c_str(), &end);
        const bool number = !value.empty() && end && *end == '\0' && errno == 0;
        if (number && std::isfinite(v) && v >= lo && v <= hi) return "";
        return fmt::format("'{}' is not a finite number in [{}, {}]", value, lo, hi);
      },
      fmt::format("FLOAT in [{}, {}]", lo, hi), "NUMBER");
}

int cap_to_cores(int threads, const std::string& what) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores <= 0 || threads <= cores) return threads;
  fmt::print(stderr, "warning: {} {} is more than this machine's {} cores; using {}\n", what,
             threads, cores, cores);
  return cores;
}

}  // namespace attnbench::cli
