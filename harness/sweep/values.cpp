#include "harness/sweep/values.h"

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

}  // namespace attnbench::sweep
