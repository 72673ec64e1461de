#include "core/common/output_path.h"

#include <system_error>

#include "core/common/error.h"

namespace attnbench {

namespace fs = std::filesystem;

namespace {

// The path with its existing part's links resolved and "." / ".." removed; a path whose links
// cannot be resolved (a loop, a component too long) is compared as written, made absolute.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  if (ec) r = fs::absolute(p, ec).lexically_normal();
  return r;
}

// Whether `inner` is `outer` or lies inside it, component by component ("runs/a" is not inside
// "runs/ab").
bool within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty() && std::next(o) == outer.end()) break;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

}  // namespace

void refuse_output_over_inputs(const NamedPath& output, const std::vector<NamedPath>& inputs) {
  const fs::path out = resolved(output.path);
  for (const NamedPath& input : inputs) {
    if (input.path.empty()) continue;
    const fs::path in = resolved(input.path);
    std::string relation;
    if (out == in) {
      relation = "is";
    } else if (within(out, in)) {
      relation = "lies inside";
    } else if (within(in, out)) {
      relation = "holds";
    } else {
      continue;
    }
    throw UsageError(output.role + " " + output.path.string() + " " + relation + " " +
                     input.role + " " + input.path.string() +
                     ", an input of this command: writing there would destroy it; choose "
                     "another path");
  }
}

}  // namespace attnbench
