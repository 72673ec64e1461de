#include "model/pretrained/transformers_keys.h"

#include <algorithm>
#include <iterator>

namespace attnbench::model::pretrained {

namespace {

struct KnownKey {
  const char* key;
  const char* readers;
};

constexpr KnownKey kKnownKeys[] = {
#include "model/pretrained/transformers_keys.inc"
};

}  // namespace

std::optional<std::string> transformers_readers(const std::string& key) {
  const auto less = [](const KnownKey& k, const std::string& name) { return k.key < name; };
  const auto it = std::lower_bound(std::begin(kKnownKeys), std::end(kKnownKeys), key, less);
  if (it == std::end(kKnownKeys) || it->key != key) return std::nullopt;
  return std::string(it->readers);
}

}  // namespace attnbench::model::pretrained
