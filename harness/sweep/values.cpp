#include "harness/sweep/values.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace attnbench::sweep {

bool same_value(const config::Value& a, const config::Value& b) {
  auto num = [](const config::Value& v, double& out) {
    if (auto i = std::get_if<int64_t>(&v)) return out = static_cast<double>(*i), true;
    if (auto d = std::get_if<double>(&v)) return out = *d, true;
    return false;
  };
  double x, y;
  if (num(a, x) && num(b, y)) return x == y;
  return a == b;
}

std::string label_value(const config::Value& v) {
  if (auto s = std::get_if<std::string>(&v)) return *s;
  return config::to_string(v);
}

namespace {

bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

}  // namespace

void check_sweep_value(const config::Value& v, const SourceLocation& where, const std::string& what) {
  if (auto d = std::get_if<double>(&v); d && !std::isfinite(*d)) {
    throw InputError(where, what + " is " + config::to_string(v) +
                                ": sweep values must be finite numbers");
  }
  if (auto s = std::get_if<std::string>(&v); s && has_control_character(*s)) {
    throw InputError(where, what + " \"" + one_line(*s) +
                                "\" contains a control character (a line break, tab, ...); "
                                "sweep values are written into listings and scripts one per line");
  }
}

bool has_control_character(const std::string& s) {
  return std::any_of(s.begin(), s.end(), is_control);
}

}  // namespace attnbench::sweep
