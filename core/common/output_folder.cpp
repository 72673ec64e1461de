#include "core/common/output_folder.h"

#include "core/common/error.h"

namespace attnbench {

namespace fs = std::filesystem;

namespace {

// `p` resolved (links and ".." followed, as far as they exist).
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(fs::absolute(p), ec);
  return ec ? fs::absolute(p).lexically_normal() : r;
}

// Whether `inner` is `outer` or lies inside it.
bool within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

}  // namespace

void check_output_folder(const OutputFolder& out, bool force) {
  const std::string named = out.option + " " + out.path.string();
  std::error_code ec;
  if (!fs::exists(out.path, ec)) return;
  if (!fs::is_directory(out.path, ec)) throw UsageError(named + " exists and is not a folder");
  if (within(resolved(fs::current_path()), resolved(out.path))) {
    throw UsageError(named + " is the working folder or holds it: " + out.command +
                     " does not write into a folder it would have to replace around you");
  }
  if (fs::is_empty(out.path, ec)) return;
  if (!force) {
    throw UsageError(named + " exists and is not empty (remove it, choose another folder, or pass "
                     "--force to replace what " + out.command + " wrote there)");
  }
  for (const fs::directory_entry& e : fs::directory_iterator(out.path)) {
    if (out.owned(e)) continue;
    throw UsageError(named + " holds " + e.path().filename().string() + ", which " + out.command +
                     " does not write (it writes " + out.writes + "): --force replaces only its "
                     "own output; choose another folder or move that away");
  }
}

void clear_output_folder(const OutputFolder& out) {
  std::error_code ec;
  if (!fs::is_directory(out.path, ec)) return;
  for (const fs::directory_entry& e : fs::directory_iterator(out.path)) fs::remove_all(e.path());
}

}  // namespace attnbench
