#include "core/common/registry.h"

namespace attnbench::detail {

std::vector<std::string>& registration_error_list() {
  static std::vector<std::string> errors;  // function-local: safe from static-init order
  return errors;
}

}  // namespace attnbench::detail
