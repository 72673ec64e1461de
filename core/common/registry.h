// The one registry behind every extension point: attention variants and their schemas, fused
// kernels, evaluation tasks, table formats and CLI commands. Each item registers itself from its own
// file at static initialisation (the libraries holding them are linked whole, cmake/Libraries.cmake),
// so adding one is adding one file.
//
// The rules are the same everywhere:
//   - names are listed sorted (names(), and so every --help, error message and `attnbench variants`);
//   - an unknown name is a UsageError that lists the registered names with one did-you-mean;
//   - a name registered twice is a build mistake: it cannot throw at static initialisation (that
//     would abort before main with no context), so it is recorded, and main() refuses to start
//     while registration_errors() is non-empty.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.h"

namespace attnbench {

namespace detail {
// Every registry's duplicate names, as "<kind> '<name>' registered twice".
std::vector<std::string>& registration_error_list();
}  // namespace detail

// The duplicate registrations of every registry in the program; empty when all is well.
inline const std::vector<std::string>& registration_errors() {
  return detail::registration_error_list();
}

template <typename T>
class Registry {
 public:
  // `kind` names an item in messages: "attention variant", "task", "table format".
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // Adds `item` under `name`; a second item under the same name is refused and recorded.
  // Returns the stored item (the first one when `name` was taken).
  const T& add(const std::string& name, T item) {
    auto [it, inserted] = items_.emplace(name, std::move(item));
    if (!inserted) {
      detail::registration_error_list().push_back(kind_ + " '" + name + "' registered twice");
    }
    return it->second;
  }

  // The item registered under `name`, or nullptr.
  const T* find(const std::string& name) const {
    auto it = items_.find(name);
    return it == items_.end() ? nullptr : &it->second;
  }

  // The item registered under `name`; otherwise a UsageError "unknown <kind> '<name>'; registered:
  // a, b, c (did you mean 'b'?)" prefixed by `context` (e.g. "--format: ").
  const T& get(const std::string& name, const std::string& context = "") const {
    if (const T* item = find(name)) return *item;
    throw UsageError(context + unknown(name));
  }

  // "unknown <kind> '<name>'; registered: a, b, c (did you mean 'b'?)".
  std::string unknown(const std::string& name) const {
    const std::vector<std::string> known = names();
    return "unknown " + kind_ + " '" + name + "'; registered: " + join(known) +
           did_you_mean(name, known);
  }

  // The registered names, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : items_) out.push_back(entry.first);
    return out;
  }

  // (name, item) pairs in name order.
  const std::map<std::string, T>& items() const { return items_; }

  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::map<std::string, T> items_;
};

}  // namespace attnbench
