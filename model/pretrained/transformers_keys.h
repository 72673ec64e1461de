// The config.json keys transformers knows (docs/pretrained.md, "Which config.json keys are read"):
// every key some transformers configuration class declares or some modeling file reads, listed by
// scripts/make-hf-key-catalogue from the transformers versions its header names
// (transformers_keys.inc). HFConfig::finish refuses such a key when the architecture does not
// honour it, and accepts a key that no transformers model knows: it cannot change what
// transformers computes, for this model type or any other.
#pragma once
#include <optional>
#include <string>

namespace attnbench::model::pretrained {

// The model types that read `key` ("gemma2, gemma3, ..."; "*" is every model's PreTrainedConfig),
// or nullopt when no transformers model knows it.
std::optional<std::string> transformers_readers(const std::string& key);

}  // namespace attnbench::model::pretrained
